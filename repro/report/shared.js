// What the three report pages (run audit, coverage study, evaluation) share: reading the data block,
// making elements, and a table that shows its rows a page at a time and opens a row to its details.
// repro.report.page puts this file in front of the page's own script, as one <script> whose hash the
// Content-Security-Policy allows. Data comes from the block #report-data (JSON, gzipped, base64);
// every model or Lean text is put into the page with textContent, never as HTML, so a text holding
// <script> or onerror= stays text.
"use strict";
async function loadReportData() {
  const encoded = document.getElementById("report-data").textContent.trim();
  const bytes = Uint8Array.from(atob(encoded), (char) => char.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

// Start the page once its data is read; if it cannot be read, say so where the row count would be.
function startReport(start, counterId, what) {
  loadReportData().then(start, (error) => {
    document.getElementById(counterId).textContent = `the ${what} data could not be read: ` + error;
    throw error;
  });
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

// A table of `rows`, 50 a page: `cells(row)` gives a row's columns, `excerpt(row)` the text of its last
// (shortened) column, `details(row)` what a click or Enter opens under it. `show(visible)` lists a
// filtered selection from its first page; `open(id)` lists every row, pages to that one and opens it.
// At most `limit` characters, cut at a word and marked with an ellipsis (a row's full text opens below it).
function shorten(text, limit) {
  if (text.length <= limit) return text;
  const cut = text.slice(0, limit - 1);
  const space = cut.lastIndexOf(" ");
  return (space > limit / 2 ? cut.slice(0, space) : cut) + "…";
}

function pagedTable({ rows, body, counter, pager, noun, columns, rowClass, cells, excerpt, details }) {
  const PAGE = 50;
  let visible = rows;
  let page = 0;

  function toggle(row, tr) {
    const next = tr.nextElementSibling;
    if (next && next.classList.contains("detail-row")) {
      next.remove();
      tr.setAttribute("aria-expanded", "false");
      return;
    }
    const detail = el("tr", null, "detail-row");
    const cell = el("td");
    cell.colSpan = columns;
    cell.appendChild(details(row));
    detail.appendChild(cell);
    tr.after(detail);
    tr.setAttribute("aria-expanded", "true");
  }

  function render() {
    body.replaceChildren();
    const start = page * PAGE;
    for (const row of visible.slice(start, start + PAGE)) {
      const tr = el("tr", null, rowClass ? rowClass(row) : "row");
      tr.dataset.id = row.id;
      tr.tabIndex = 0;
      tr.setAttribute("aria-expanded", "false");
      for (const value of cells(row)) tr.appendChild(el("td", value));
      tr.appendChild(el("td", shorten(excerpt(row) || "", 140), "question"));
      tr.addEventListener("click", () => toggle(row, tr));
      tr.addEventListener("keydown", (event) => { if (event.key === "Enter") toggle(row, tr); });
      body.appendChild(tr);
    }
    const pages = Math.max(1, Math.ceil(visible.length / PAGE));
    counter.textContent = `${visible.length} of ${rows.length} ${noun}`;
    pager.replaceChildren();
    const previous = el("button", "previous");
    previous.disabled = page === 0;
    previous.addEventListener("click", () => { page -= 1; render(); });
    const next = el("button", "next");
    next.disabled = page >= pages - 1;
    next.addEventListener("click", () => { page += 1; render(); });
    pager.append(previous, el("span", ` page ${page + 1} of ${pages} `), next);
  }

  function show(selection) {
    visible = selection;
    page = 0;
    render();
  }

  function open(id) {
    visible = rows;
    const index = rows.findIndex((row) => row.id === id);
    if (index < 0) return;
    page = Math.floor(index / PAGE);
    render();
    const tr = Array.from(body.querySelectorAll("tr.row")).find((node) => node.dataset.id === id);
    if (tr) {
      if (tr.getAttribute("aria-expanded") !== "true") toggle(rows[index], tr);
      // the sticky unverified-sources banner stays on top: scroll the row to just below it, not under it
      const banner = document.getElementById("unverified-banner");
      tr.style.scrollMarginTop = `${banner ? banner.offsetHeight + 8 : 0}px`;
      tr.scrollIntoView({ block: "start" });
    }
  }

  return { show, open };
}

// Open the row a link such as #candidate=ID names, now and whenever the address changes;
// `clearFilters` first empties the filters, so the row is listed whatever they held.
function followHash(key, table, clearFilters) {
  const pattern = new RegExp(`^#${key}=(.+)$`);
  function follow() {
    const match = pattern.exec(decodeURIComponent(location.hash));
    if (!match) return;
    clearFilters();
    table.open(match[1]);
  }
  window.addEventListener("hashchange", follow);
  follow();
}
