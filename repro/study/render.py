"""Rich tables for ``repro study-report``: one per figure family, so a terminal shows the whole study."""

from __future__ import annotations

from rich.table import Table

from repro.study.report import StudyReport

# the taxonomy's fact names, in the words of the paper's failure analysis (App. J)
FACT_LABELS = {
    "boundary_corruption": "boundary corruption",
    "target_corruption": "restated target",
    "repetitive_tactics": "repetition",
    "truncation": "truncation",
    "natural_language_intrusion": "natural-language intrusion",
    "forbidden_construct": "forbidden construct",
    "compile_error": "Lean error",
    "timeout": "timeout",
    "sorry": "sorry",
    "axiom_violation": "axiom violation",
}


def _number(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


SHARED_LEAN_NOTE = (
    "Lean s: identical code is checked once across provers, and that check's seconds are charged to the"
    " prover whose sample asked first (a prover whose proofs another already sent shows less)"
)


def report_tables(report: StudyReport) -> list[Table | str]:
    items: list[Table | str] = [
        f"study {report.study_dir}: {report.statements} statements, k={report.k}, strategy {report.strategy},"
        f" Lean backend {report.lean_backend}; pass@j estimator: {report.estimator};"
        f" feedback rounds {report.feedback_rounds} (studies run none)"
    ]
    if any(not prover.verified_by_real_lean for prover in report.provers if prover.verified_samples):
        items.append("NOTE: some verdicts come from a fake Lean backend; they verify nothing.")
    if any(not prover.verified_by_real_judge for prover in report.provers if prover.verified_samples):
        items.append("NOTE: some successes were judged by a stand-in judge, not Lean's kernel; they verify nothing.")
    for prover in report.provers:
        if prover.screened_samples:
            items.append(
                f"judge, {prover.name}: {prover.screened_samples} samples passed the screen,"
                f" {prover.verified_samples} of them the kernel judge; it rejected {prover.judge_rejected_samples}"
                " that the screen passed (where they disagree, the judge wins)"
            )
    coverage = Table(title="coverage and pass@j (95% bootstrap interval over statements)")
    coverage.add_column("prover")
    coverage.add_column("covered")
    for j in range(1, report.k + 1):
        coverage.add_column(f"pass@{j}")
    coverage.add_column("incomplete")
    for prover in report.provers:
        cells = [f"{figure.value:.3f} [{figure.low:.3f}, {figure.high:.3f}]" for figure in prover.pass_at.values()]
        coverage.add_row(
            f"{prover.name} ({prover.model})",
            f"{prover.covered}/{prover.statements} ({prover.coverage:.3f})",
            *cells,
            str(prover.incomplete_pairs),
        )
    items.append(coverage)
    groups = Table(title="coverage per level and type")
    groups.add_column("prover")
    groups.add_column("group")
    groups.add_column("covered")
    for j in range(1, report.k + 1):
        groups.add_column(f"pass@{j}")
    for prover in report.provers:
        for label, figures_by_group in (("level", prover.by_level), ("type", prover.by_type)):
            for group, figure in figures_by_group.items():
                groups.add_row(
                    prover.name,
                    f"{label} {group}",
                    f"{figure.covered}/{figure.statements}",
                    *(_number(value) for value in figure.pass_at.values()),
                )
    if groups.row_count:
        items.append(groups)
    salvage = Table(title="coverage without and with salvage (repaired texts, each through the gate)")
    for column in ("prover", "group", "raw samples", "with salvage"):
        salvage.add_column(column)
    for prover in report.provers:
        if prover.salvage is None:
            continue
        rescued = prover.salvage
        salvage.add_row(prover.name, "overall", f"{prover.coverage:.3f}", f"{rescued.coverage:.3f}")
        for label, raw_groups, salvaged in (
            ("level", prover.by_level, rescued.by_level),
            ("type", prover.by_type, rescued.by_type),
        ):
            for group, value in salvaged.items():
                raw = raw_groups[group].covered / raw_groups[group].statements if group in raw_groups else None
                salvage.add_row(prover.name, f"{label} {group}", _number(raw), f"{value:.3f}")
        salvage.add_row(
            prover.name,
            "cost",
            f"{rescued.checks} Lean checks, {rescued.lean_seconds} s",
            f"{rescued.salvaged_samples} samples rescued: "
            + (", ".join(f"{kind} {count}" for kind, count in rescued.kinds.items()) or "none"),
        )
    if salvage.row_count:
        items.append(salvage)
    checks = report.statement_checks or {}
    if checks.get("vacuous") or checks.get("refuted"):
        flagged = Table(title="statements the run's Lean checks found vacuous (a proof proves nothing) or refuted")
        for column in ("group", "vacuous", "refuted"):
            flagged.add_column(column)
        flagged.add_row("all", str(checks.get("vacuous", 0)), str(checks.get("refuted", 0)))
        for label in ("level", "type"):
            for group, counts in (checks.get(f"by_{label}") or {}).items():
                flagged.add_row(f"{label} {group}", str(counts["vacuous"]), str(counts["refuted"]))
        items.append(flagged)
    overlap = report.overlap
    table = Table(title="overlap")
    table.add_column("measure")
    table.add_column("statements")
    for name, count in overlap.only.items():
        table.add_row(f"only {name}", str(count))
    table.add_row("all provers", str(overlap.all))
    table.add_row("no prover", str(overlap.none))
    table.add_row("union (ensemble)", f"{overlap.union} ({overlap.union_coverage:.3f})")
    items.append(table)
    if overlap.splits:
        splits = Table(title=f"best split of a {report.k}-sample budget between two provers (expected coverage)")
        splits.add_column("first + second")
        splits.add_column("coverage with j from first")
        splits.add_column("best")
        for split in overlap.splits:
            curve = ", ".join(f"j={j}: {value:.3f}" for j, value in enumerate(split.curve))
            splits.add_row(
                f"{split.first} + {split.second}",
                curve,
                f"{split.best_j} + {split.budget - split.best_j} -> {split.best_coverage:.3f}",
            )
        items.append(splits)
    taxonomy = Table(title="failure taxonomy (share of failed samples; several facts can hold at once)")
    taxonomy.add_column("prover")
    taxonomy.add_column("failed")
    taxonomy.add_column("facts")
    taxonomy.add_column("Lean error classes")
    for prover in report.provers:
        taxonomy.add_row(
            prover.name,
            str(prover.failed_samples),
            ", ".join(f"{FACT_LABELS.get(name, name)} {share:.1%}" for name, share in prover.taxonomy.items()),
            ", ".join(f"{name} {share:.1%}" for name, share in prover.lean_error_classes.items()),
        )
    items.append(taxonomy)
    cost = Table(title="cost per verified statement", caption=SHARED_LEAN_NOTE)  # n18
    for column in ("prover", "samples", "tokens in", "tokens out", "model s", "Lean s"):
        cost.add_column(column)
    for prover in report.provers:
        figures = prover.cost
        cost.add_row(
            prover.name,
            _number(figures.samples_per_verified, 2),
            _number(figures.tokens_in_per_verified, 1),
            _number(figures.tokens_out_per_verified, 1),
            _number(figures.model_seconds_per_verified, 3),
            _number(figures.lean_seconds_per_verified, 3),
        )
    items.append(cost)
    return items
