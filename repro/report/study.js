// The statement table of a coverage-study report: filters by which provers proved a statement, pages
// of rows, rows that open to each prover's samples, the gate's reasons and Lean's messages.
// Data comes from the block #report-data (JSON, gzipped, base64); every model or Lean text is put
// into the page with textContent, never as HTML, so a text holding <script> or onerror= stays text.
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

function leanMessages(parent, list) {
  if (!list || !list.length) return;
  const box = el("ul", null, "lean-messages");
  for (const message of list) {
    const where = message.line !== null && message.line !== undefined ? ` line ${message.line}:${message.column}` : "";
    box.appendChild(el("li", `${message.severity}${where}: ${message.text}`, `severity-${message.severity}`));
  }
  parent.appendChild(el("h4", "Lean messages"));
  parent.appendChild(box);
}

function startStudy(data) {
  const PAGE = 50;
  const rows = data.statements;
  const provers = data.provers;
  const table = document.getElementById("statements-body");
  const counter = document.getElementById("statements-count");
  const pager = document.getElementById("statements-pager");
  const proved = document.getElementById("filter-proved");
  const text = document.getElementById("filter-statement-text");
  let visible = rows;
  let page = 0;

  function haystack(row) {
    const parts = [row.id, row.question, row.statement];
    for (const name of provers) for (const sample of row.provers[name].samples) parts.push(sample.text);
    return parts.filter(Boolean).join("\n").toLowerCase();
  }

  function keep(row) {
    const choice = proved.value;
    if (choice === "none") return row.proved_by.length === 0;
    if (choice === "any") return row.proved_by.length > 0;
    if (choice === "every") return row.proved_by.length === provers.length;
    if (choice.startsWith("only:")) return row.proved_by.length === 1 && row.proved_by[0] === choice.slice(5);
    return true;
  }

  function apply() {
    const needle = text.value.trim().toLowerCase();
    visible = rows.filter((row) => keep(row) && (!needle || haystack(row).includes(needle)));
    page = 0;
    render();
  }

  function details(row) {
    const box = el("div", null, "details");
    block(box, "Question", row.question);
    block(box, "Formal statement", row.statement, "code");
    for (const name of provers) {
      const own = row.provers[name];
      box.appendChild(el("h3", `${name}: ${own.verified} of ${own.drawn} samples verified`, "prover-heading"));
      if (!own.samples.length) box.appendChild(el("p", "no sample drawn yet", "note"));
      for (const sample of own.samples) {
        const section = el("div", null, `sample sample-${sample.status === "verified" ? "passed" : "rejected"}`);
        section.dataset.prover = name;
        const why = sample.reasons.length ? ` — ${sample.reasons.join(", ")}` : "";
        const finish = sample.finish && sample.finish !== "stop" ? ` — finish ${sample.finish}` : "";
        const lean = sample.lean_backend ? ` — Lean: ${sample.lean_backend}${sample.real_lean ? "" : " (not real Lean)"}` : "";
        section.appendChild(el("h4", `Sample ${sample.index}: ${sample.status}${why}${finish}${lean}`));
        if (sample.taxonomy.length) section.appendChild(el("p", "taxonomy: " + sample.taxonomy.join(", "), "taxonomy"));
        if (sample.details.length) section.appendChild(el("p", sample.details.join(" | "), "gate-details"));
        block(section, "Prover output", sample.text);
        if (sample.checked_code_in_output) section.appendChild(el("p", "Checked code: our statement with the prover's proof, verbatim in the output above.", "checked-note"));
        else block(section, "Checked code", sample.checked_code, "code");
        leanMessages(section, sample.messages);
        box.appendChild(section);
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
      const counts = provers.map((name) => `${name} ${row.provers[name].verified}/${row.provers[name].drawn}`).join(", ");
      for (const value of [row.id, row.level, row.type, row.proved_by.join(", ") || "none", counts]) tr.appendChild(el("td", value));
      tr.appendChild(el("td", (row.statement || "").slice(0, 140), "question"));
      tr.addEventListener("click", () => toggle(row, tr));
      tr.addEventListener("keydown", (event) => { if (event.key === "Enter") toggle(row, tr); });
      table.appendChild(tr);
    }
    const pages = Math.max(1, Math.ceil(visible.length / PAGE));
    counter.textContent = `${visible.length} of ${rows.length} statements`;
    pager.replaceChildren();
    const previous = el("button", "previous");
    previous.disabled = page === 0;
    previous.addEventListener("click", () => { page -= 1; render(); });
    const next = el("button", "next");
    next.disabled = page >= pages - 1;
    next.addEventListener("click", () => { page += 1; render(); });
    pager.append(previous, el("span", ` page ${page + 1} of ${pages} `), next);
  }

  function openFromHash() {
    const match = /^#statement=(.+)$/.exec(decodeURIComponent(location.hash));
    if (!match) return;
    proved.value = "";
    text.value = "";
    visible = rows;
    const index = rows.findIndex((row) => row.id === match[1]);
    if (index < 0) return;
    page = Math.floor(index / PAGE);
    render();
    const tr = Array.from(table.querySelectorAll("tr.row")).find((node) => node.dataset.id === match[1]);
    if (tr) {
      if (tr.getAttribute("aria-expanded") !== "true") toggle(rows[index], tr);
      tr.scrollIntoView({ block: "start" });
    }
  }

  proved.addEventListener("change", apply);
  text.addEventListener("input", apply);
  window.addEventListener("hashchange", openFromHash);
  apply();
  openFromHash();
  document.body.dataset.studyReady = "true";
}

loadReportData().then(startStudy, (error) => {
  document.getElementById("statements-count").textContent = "the study data could not be read: " + error;
  throw error;
});
