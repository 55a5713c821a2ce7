// The row table of an evaluation report: every evaluated release row, opening to its questions, each
// model's graded answers, and the Lean code and backend behind the row.
// Data comes from the block #report-data (JSON, gzipped, base64); every model text is put into the
// page with textContent, never as HTML, so a text holding <script> or onerror= stays text.
"use strict";
async function loadReportData() {
  const encoded = document.getElementById("report-data").textContent.trim();
  const bytes = Uint8Array.from(atob(encoded), (char) => char.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

function block(parent, title, text, className) {
  if (text === null || text === undefined || text === "") return;
  parent.appendChild(el("h4", title));
  parent.appendChild(el("pre", text, className || "text"));
}

function startRows(data) {
  const PAGE = 50;
  const rows = data.instances;
  const models = data.models;
  const table = document.getElementById("rows-body");
  const counter = document.getElementById("rows-count");
  const pager = document.getElementById("rows-pager");
  const outcome = document.getElementById("filter-outcome");
  const text = document.getElementById("filter-row-text");
  let visible = rows;
  let page = 0;

  function dropped(row) {
    return models.some((name) => {
      const own = row.models[name];
      return own.original.correct > 0 && own.rewritten.correct === 0 && own.rewritten.samples.length > 0;
    });
  }

  function apply() {
    const needle = text.value.trim().toLowerCase();
    visible = rows.filter((row) =>
      (outcome.value !== "dropped" || dropped(row)) &&
      (outcome.value !== "unverified" || row.unverified || !row.lean.real_lean) &&
      (!needle || [row.id, row.original_question, row.rewritten_question].join("\n").toLowerCase().includes(needle)));
    page = 0;
    render();
  }

  function details(row) {
    const box = el("div", null, "details");
    block(box, `Original question (answer ${row.original_answer})`, row.original_question);
    block(box, `Rewritten question (answer ${row.new_answer})`, row.rewritten_question);
    const lean = row.lean;
    box.appendChild(el("p", `Verified by ${lean.backend} (${lean.real_lean ? "real Lean" : "NOT real Lean"}), toolchain ${lean.toolchain}, Mathlib ${lean.mathlib}` +
      (row.unverified ? "; the release marks this row unverified" : ""), lean.real_lean && !row.unverified ? "lean-provenance" : "lean-provenance severity-error"));
    block(box, "Verified Lean code", row.verified_code, "code");
    for (const name of models) {
      for (const variant of ["original", "rewritten"]) {
        for (const answer of row.models[name][variant].samples) {
          const section = el("div", null, `sample sample-${answer.correct ? "passed" : "rejected"}`);
          section.appendChild(el("h4", `${name}, ${variant} question, sample ${answer.sample}: ${answer.correct ? "right" : "wrong"}` +
            ` (extracted ${answer.extracted ?? "nothing"}, reference ${answer.reference}, graded by ${answer.grading})`));
          block(section, "Response", answer.response);
          box.appendChild(section);
        }
      }
    }
    return box;
  }

  function toggle(row, tr) {
    const next = tr.nextElementSibling;
    if (next && next.classList.contains("detail-row")) {
      next.remove();
      tr.setAttribute("aria-expanded", "false");
      return;
    }
    const detail = el("tr", null, "detail-row");
    const cell = el("td");
    cell.colSpan = 6;
    cell.appendChild(details(row));
    detail.appendChild(cell);
    tr.after(detail);
    tr.setAttribute("aria-expanded", "true");
  }

  function render() {
    table.replaceChildren();
    const start = page * PAGE;
    for (const row of visible.slice(start, start + PAGE)) {
      const tr = el("tr", null, "row");
      tr.dataset.id = row.id;
      tr.tabIndex = 0;
      tr.setAttribute("aria-expanded", "false");
      const scores = models.map((name) => {
        const own = row.models[name];
        return `${name} ${own.original.correct}/${own.original.samples.length} → ${own.rewritten.correct}/${own.rewritten.samples.length}`;
      }).join(", ");
      const lean = `${row.lean.backend}${row.lean.real_lean && !row.unverified ? "" : " (NOT verified)"}`;
      for (const value of [row.id, row.level, row.type, scores, lean]) tr.appendChild(el("td", value));
      tr.appendChild(el("td", (row.rewritten_question || "").slice(0, 140), "question"));
      tr.addEventListener("click", () => toggle(row, tr));
      tr.addEventListener("keydown", (event) => { if (event.key === "Enter") toggle(row, tr); });
      table.appendChild(tr);
    }
    const pages = Math.max(1, Math.ceil(visible.length / PAGE));
    counter.textContent = `${visible.length} of ${rows.length} rows`;
    pager.replaceChildren();
    const previous = el("button", "previous");
    previous.disabled = page === 0;
    previous.addEventListener("click", () => { page -= 1; render(); });
    const next = el("button", "next");
    next.disabled = page >= pages - 1;
    next.addEventListener("click", () => { page += 1; render(); });
    pager.append(previous, el("span", ` page ${page + 1} of ${pages} `), next);
  }

  outcome.addEventListener("change", apply);
  text.addEventListener("input", apply);
  apply();
  document.body.dataset.rowsReady = "true";
}

loadReportData().then(startRows, (error) => {
  document.getElementById("rows-count").textContent = "the evaluation data could not be read: " + error;
  throw error;
});
