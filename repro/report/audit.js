// The audit table of the repro report: filters, pages of rows, rows that open to show every attempt.
// The data block, the paged table and the safe element helpers are in shared.js, which comes first.
function startAudit(data) {
  if (!document.getElementById("audit-body")) return;
  const rows = data.candidates;
  const filters = {
    stage: document.getElementById("filter-stage"),
    reason: document.getElementById("filter-reason"),
    level: document.getElementById("filter-level"),
    type: document.getElementById("filter-type"),
    text: document.getElementById("filter-text"),
  };
  const haystacks = new Map();

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
    table.show(rows.filter((row) =>
      (!stage || row.stage === stage) &&
      (!reason || row.reasons.includes(reason)) &&
      (!level || row.level === level) &&
      (!type || row.type === type) &&
      (!text || haystack(row).includes(text))));
  }

  function judgeLine(judged) {
    const who = `${judged.tool}${judged.real ? "" : " (stand-in)"}`;
    const won = judged.overrules_screen ? " — the screen had passed it: the judge wins" : "";
    const why = judged.cause ? ` (no verdict: ${judged.cause})` : "";
    return `Kernel judge ${who}: ${judged.status}${why}${won}${judged.detail ? "\n" + judged.detail : ""}`;
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
      leanMessages(box, formal.messages);
    }
    block(box, row.status === "retained" ? "Formal statement (released)" : "Last formal statement", row.statement, "code");
    for (const align of row.alignment) {
      block(box, `Alignment of formalization round ${align.round}: ${align.status}`,
        align.verdicts.map((verdict, index) => `ask ${index + 1}: ${verdict}` +
          (align.analyses && align.analyses[index] ? `\n  ${align.analyses[index]}` : "")).join("\n") +
          (align.error ? `\n${align.error}` : ""));
    }
    for (const check of row.checks || []) {
      block(box, `Statement check #${check.attempt} (${check.kind}) of formalization round ${check.round}: ${check.status}` +
        (check.reason ? ` (${check.reason})` : ""), `${check.outcome || ""}${check.derivation ? "\n" + check.derivation : ""}`, "code");
    }
    for (const sample of row.samples) {
      const section = el("div", null, `sample sample-${sample.status}`);
      section.appendChild(el("h4", `Prover sample ${sample.in_round} on the statement of formalization round ${sample.round} (attempt #${sample.number}): ${sample.status}` +
        (sample.reason ? ` — ${sample.reason}` : "") + (sample.finish && sample.finish !== "stop" ? ` — finish ${sample.finish}` : "")));
      if (sample.taxonomy.length) section.appendChild(el("p", "taxonomy: " + sample.taxonomy.join(", "), "taxonomy"));
      if (sample.details.length) section.appendChild(el("p", sample.details.join(" | "), "gate-details"));
      block(section, "Prover output", sample.text);
      if (sample.checked_code_in_output) section.appendChild(el("p", "Checked code: our statement with the prover's proof, verbatim in the output above.", "checked-note"));
      else block(section, "Checked code", sample.checked_code, "code");
      leanMessages(section, sample.messages);
      if (sample.judge) section.appendChild(el("p", judgeLine(sample.judge), sample.judge.status === "passed" ? "judge-note" : "judge-note severity-error"));
      box.appendChild(section);
    }
    for (const repair of row.salvage || []) {
      block(box, `Salvage #${repair.attempt} of sample ${repair.of_sample} (formalization round ${repair.round}): ${repair.status}` +
        (repair.reason ? ` (${repair.reason})` : ""), repair.kinds.join(", ") || "(no repair kind)");
      leanMessages(box, repair.messages);
    }
    for (const judged of row.judgements.filter((j) => j.screened_by !== "verify")) {
      block(box, `Kernel judge on a ${judged.screened_by} text (#${judged.of_attempt})`, judgeLine(judged));
    }
    if (row.status === "retained") {
      box.appendChild(el("p", row.verified ? `Verified: a real kernel judge (${row.judge_tool}) passed the proof.` :
        `NOT verified: the proof was passed by ${row.judge_tool || "no judge"}${row.judge_real ? "" : " (a stand-in, not Lean's kernel)"}.`,
        row.verified ? "judge-note" : "judge-note severity-error"));
    }
    if (row.answer && row.answer.status) {
      block(box, "Extracted answer", `${row.answer.candidate ?? "(none)"} via ${row.answer.method ?? "?"}; class ${row.answer.class ?? "?"}` +
        `${row.answer.class_reason ? " (" + row.answer.class_reason + ")" : ""}; ${row.answer.status}${row.answer.reason ? " " + row.answer.reason : ""}`);
    }
    return box;
  }

  const table = pagedTable({
    rows,
    body: document.getElementById("audit-body"),
    counter: document.getElementById("audit-count"),
    pager: document.getElementById("audit-pager"),
    noun: "candidates",
    columns: 8,
    rowClass: (row) => `row status-${row.status}`,
    cells: (row) => [row.id, row.level, row.type, row.status, row.stage, row.reason, row.reasons.join(", ")],
    excerpt: (row) => row.rewritten,
    details,
  });

  // stages in the pipeline's order (then the candidates' final states), not alphabetically
  const order = ["rewrite", "screen", "formalize", "align", "check", "prove", "verify", "salvage", "feedback", "judge", "answer"];
  const rank = (stage) => (order.indexOf(stage) < 0 ? order.length : order.indexOf(stage));
  fillSelect(filters.stage, distinct((row) => row.stage).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b)));
  fillSelect(filters.reason, distinct((row) => row.reasons));
  fillSelect(filters.level, distinct((row) => row.level));
  fillSelect(filters.type, distinct((row) => row.type));
  for (const control of Object.values(filters)) control.addEventListener(control.tagName === "INPUT" ? "input" : "change", apply);
  table.show(rows);
  followHash("candidate", table, () => {
    for (const select of [filters.stage, filters.reason, filters.level, filters.type]) select.value = "";
    filters.text.value = "";
  });
  document.body.dataset.auditReady = "true";
}

startReport(startAudit, "audit-count", "audit");
