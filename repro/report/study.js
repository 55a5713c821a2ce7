// The statement table of a coverage-study report: filters by which provers proved a statement, pages
// of rows, rows that open to each prover's samples, the gate's reasons and Lean's messages.
// The data block, the paged table and the safe element helpers are in shared.js, which comes first.
function startStudy(data) {
  const rows = data.statements;
  const provers = data.provers;
  const proved = document.getElementById("filter-proved");
  const text = document.getElementById("filter-statement-text");

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
    table.show(rows.filter((row) => keep(row) && (!needle || haystack(row).includes(needle))));
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
        const lean = (sample.lean_backend ? ` — Lean: ${sample.lean_backend}${sample.real_lean ? "" : " (not real Lean)"}` : "") +
          (sample.judge ? ` — kernel judge ${sample.judge.tool}${sample.judge.real ? "" : " (stand-in)"}: ${sample.judge.status}` : "");
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

  const table = pagedTable({
    rows,
    body: document.getElementById("statements-body"),
    counter: document.getElementById("statements-count"),
    pager: document.getElementById("statements-pager"),
    noun: "statements",
    columns: 6,
    cells: (row) => {
      const counts = provers.map((name) => `${name} ${row.provers[name].verified}/${row.provers[name].drawn}`).join(", ");
      return [row.id, row.level, row.type, row.proved_by.join(", ") || "none", counts];
    },
    excerpt: (row) => row.statement,
    details,
  });

  proved.addEventListener("change", apply);
  text.addEventListener("input", apply);
  apply();
  followHash("statement", table, () => {
    proved.value = "";
    text.value = "";
  });
  document.body.dataset.studyReady = "true";
}

startReport(startStudy, "statements-count", "study");
