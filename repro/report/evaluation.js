// The row table of an evaluation report: every evaluated release row, opening to its questions, each
// model's graded answers, and the Lean code and backend behind the row.
// The data block, the paged table and the safe element helpers are in shared.js, which comes first.
function startRows(data) {
  const rows = data.instances;
  const models = data.models;
  const outcome = document.getElementById("filter-outcome");
  const text = document.getElementById("filter-row-text");

  function dropped(row) {
    return models.some((name) => {
      const own = row.models[name];
      return own.original.correct > 0 && own.rewritten.correct === 0 && own.rewritten.samples.length > 0;
    });
  }

  function apply() {
    const needle = text.value.trim().toLowerCase();
    table.show(rows.filter((row) =>
      (outcome.value !== "dropped" || dropped(row)) &&
      (outcome.value !== "unverified" || row.unverified || !row.lean.real_lean) &&
      (!needle || [row.id, row.original_question, row.rewritten_question].join("\n").toLowerCase().includes(needle))));
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

  const table = pagedTable({
    rows,
    body: document.getElementById("rows-body"),
    counter: document.getElementById("rows-count"),
    pager: document.getElementById("rows-pager"),
    noun: "rows",
    columns: 6,
    cells: (row) => {
      const scores = models.map((name) => {
        const own = row.models[name];
        return `${name} ${own.original.correct}/${own.original.samples.length} → ${own.rewritten.correct}/${own.rewritten.samples.length}`;
      }).join(", ");
      const lean = `${row.lean.backend}${row.lean.real_lean && !row.unverified ? "" : " (NOT verified)"}`;
      return [row.id, row.level, row.type, scores, lean];
    },
    excerpt: (row) => row.rewritten_question,
    details,
  });

  outcome.addEventListener("change", apply);
  text.addEventListener("input", apply);
  apply();
  document.body.dataset.rowsReady = "true";
}

startReport(startRows, "rows-count", "evaluation");
