// The audit table of the repro report: filters, pages of rows, rows that open to show every attempt.
// Data comes from the block #report-data (JSON, gzipped, base64); every model or Lean text is put
// into the page with textContent, never as HTML, so a text holding <script> or onerror= stays text.
"use strict";
async function loadReportData() {
  const encoded = document.getElementById("report-data").textContent.trim();
  const bytes = Uint8Array.from(atob(encoded), (char) => char.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

function startAudit(data) {
  const PAGE = 50;
  if (!document.getElementById("audit-body")) return;
  const rows = data.candidates;
  const table = document.getElementById("audit-body");
  const counter = document.getElementById("audit-count");
  const pager = document.getElementById("audit-pager");
  const filters = {
    stage: document.getElementById("filter-stage"),
    reason: document.getElementById("filter-reason"),
    level: document.getElementById("filter-level"),
    type: document.getElementById("filter-type"),
    text: document.getElementById("filter-text"),
  };
  let visible = rows;
  let page = 0;
  const haystacks = new Map();

  function el(tag, text, className) {
    const node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (className) node.className = className;
    return node;
  }

  function fillSelect(select, values) {
    for (const value of values) select.appendChild(el("option", value)).value = value;
  }

  function distinct(pick) {
    const seen = new Set();
    for (const row of rows) for (const value of [].concat(pick(row))) if (value) seen.add(value);
    return Array.from(seen).sort();
  }

  function haystack(row) {
    if (!haystacks.has(row.id)) {
      const parts = [row.id, row.problem, row.original, row.rewritten, row.statement, row.new_answer];
      for (const sample of row.samples) parts.push(sample.text, sample.checked_code);
      haystacks.set(row.id, parts.filter(Boolean).join("\n").toLowerCase());
    }
    return haystacks.get(row.id);
  }

  function apply() {
    const stage = filters.stage.value, reason = filters.reason.value;
    const level = filters.level.value, type = filters.type.value;
    const text = filters.text.value.trim().toLowerCase();
    visible = rows.filter((row) =>
      (!stage || row.stage === stage) &&
      (!reason || row.reasons.includes(reason)) &&
      (!level || row.level === level) &&
      (!type || row.type === type) &&
      (!text || haystack(row).includes(text)));
    page = 0;
    render();
  }

  function block(parent, title, text, className) {
    if (text === null || text === undefined || text === "") return;
    parent.appendChild(el("h4", title));
    parent.appendChild(el("pre", text, className || "text"));
  }

  function messages(parent, list) {
    if (!list || !list.length) return;
    const box = el("ul", null, "lean-messages");
    for (const message of list) {
      const where = message.line !== null && message.line !== undefined ? ` line ${message.line}:${message.column}` : "";
      box.appendChild(el("li", `${message.severity}${where}: ${message.text}`, `severity-${message.severity}`));
    }
    parent.appendChild(el("h4", "Lean messages"));
    parent.appendChild(box);
  }

  function details(row) {
    const box = el("div", null, "details");
    block(box, "Original question", row.original);
    block(box, "Rewritten question", row.rewritten);
    if (row.screen && row.screen.status) {
      block(box, "Feasibility screen", `${row.screen.status}: verdict ${row.screen.verdict ?? "?"}, solver's answer ${row.screen.answer || "none"}\n${row.screen.analysis || ""}`);
    }
    for (const formal of row.formalizations) {
      block(box, `Formalization round ${formal.round}: ${formal.status}${formal.reason ? " (" + formal.reason + ")" : ""}`,
        formal.statement || formal.reply || "(no statement)", "code");
      messages(box, formal.messages);
    }
    block(box, "Formal statement", row.statement, "code");
    for (const align of row.alignment) {
      block(box, `Alignment round ${align.round}: ${align.status}`,
        align.verdicts.map((verdict, index) => `ask ${index + 1}: ${verdict}`).join("\n") + (align.error ? `\n${align.error}` : ""));
    }
    for (const sample of row.samples) {
      const section = el("div", null, `sample sample-${sample.status}`);
      section.appendChild(el("h4", `Prover sample ${sample.number} (round ${sample.round}): ${sample.status}` +
        (sample.reason ? ` — ${sample.reason}` : "") + (sample.finish && sample.finish !== "stop" ? ` — finish ${sample.finish}` : "")));
      if (sample.taxonomy.length) section.appendChild(el("p", "taxonomy: " + sample.taxonomy.join(", "), "taxonomy"));
      if (sample.details.length) section.appendChild(el("p", sample.details.join(" | "), "gate-details"));
      block(section, "Prover output", sample.text);
      if (sample.checked_code_in_output) section.appendChild(el("p", "Checked code: our statement with the prover's proof, verbatim in the output above.", "checked-note"));
      else block(section, "Checked code", sample.checked_code, "code");
      messages(section, sample.messages);
      box.appendChild(section);
    }
    if (row.answer && row.answer.status) {
      block(box, "Extracted answer", `${row.answer.candidate ?? "(none)"} via ${row.answer.method ?? "?"}; class ${row.answer.class ?? "?"}` +
        `${row.answer.class_reason ? " (" + row.answer.class_reason + ")" : ""}; ${row.answer.status}${row.answer.reason ? " " + row.answer.reason : ""}`);
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
    cell.colSpan = 8;
    cell.appendChild(details(row));
    detail.appendChild(cell);
    tr.after(detail);
    tr.setAttribute("aria-expanded", "true");
  }

  function render() {
    table.replaceChildren();
    const start = page * PAGE;
    for (const row of visible.slice(start, start + PAGE)) {
      const tr = el("tr", null, `row status-${row.status}`);
      tr.dataset.id = row.id;
      tr.tabIndex = 0;
      tr.setAttribute("aria-expanded", "false");
      for (const value of [row.id, row.level, row.type, row.status, row.stage, row.reason, row.reasons.join(", ")]) {
        tr.appendChild(el("td", value));
      }
      tr.appendChild(el("td", (row.rewritten || "").slice(0, 140), "question"));
      tr.addEventListener("click", () => toggle(row, tr));
      tr.addEventListener("keydown", (event) => { if (event.key === "Enter") toggle(row, tr); });
      table.appendChild(tr);
    }
    const pages = Math.max(1, Math.ceil(visible.length / PAGE));
    counter.textContent = `${visible.length} of ${rows.length} candidates`;
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
    const match = /^#candidate=(.+)$/.exec(decodeURIComponent(location.hash));
    if (!match) return;
    for (const select of [filters.stage, filters.reason, filters.level, filters.type]) select.value = "";
    filters.text.value = "";
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

  fillSelect(filters.stage, distinct((row) => row.stage));
  fillSelect(filters.reason, distinct((row) => row.reasons));
  fillSelect(filters.level, distinct((row) => row.level));
  fillSelect(filters.type, distinct((row) => row.type));
  for (const control of Object.values(filters)) control.addEventListener(control.tagName === "INPUT" ? "input" : "change", apply);
  window.addEventListener("hashchange", openFromHash);
  render();
  openFromHash();
  document.body.dataset.auditReady = "true";
}

loadReportData().then(startAudit, (error) => {
  document.getElementById("audit-count").textContent = "the audit data could not be read: " + error;
  throw error;
});
