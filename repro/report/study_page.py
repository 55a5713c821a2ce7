"""The coverage-study page of ``repro report STUDY_DIR``, read straight from ``study.sqlite``.

The figures come from :func:`repro.study.report.build_report` (the numbers ``repro study-report``
prints), so the page and the terminal can never disagree; this module adds what only a page can
show: an UpSet view of which statements which provers prove, and every statement opening to each
prover's samples, the gate's reasons and Lean's messages.
"""

from __future__ import annotations

from html import escape
from itertools import combinations
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from repro.config import ModelBackendName
from repro.pass_at import FIRST_SUCCESS
from repro.report.collect import SAMPLE_CAP, TEXT_CAP, cap
from repro.report.page import _cell, _table, unverified_banner
from repro.report.svg import PALETTE, interval_chart, legend, stacked_bars, upset_chart
from repro.study.records import SampleOutcome, StudyStatement
from repro.study.render import FACT_LABELS, SHARED_LEAN_NOTE
from repro.study.report import StudyReport
from repro.study.report import build_report as study_figures
from repro.study.store import STUDY_FILENAME, StudyStore


class ProverRow(BaseModel):
    name: str
    model: str
    backend: str
    toolchains: list[str]


class StudyPage(BaseModel):
    """Everything the study page shows: the study's figures, its provers and one row per statement."""

    name: str
    figures: StudyReport
    provers: list[ProverRow]
    lean_backends: list[tuple[str, bool, int]]  # (backend id, real Lean, judged samples)
    unverified_sources: list[str]
    intersections: list[tuple[list[str], int]]  # exact combination of provers -> statements proved by it
    statements: list[dict[str, Any]]


def is_study(directory: Path) -> bool:
    return (directory / STUDY_FILENAME).is_file()


def _sample_row(sample: SampleOutcome) -> dict[str, Any]:
    text = sample.text
    checked = sample.checked_code
    same = bool(checked and text and checked.strip() in text)
    # verified: the screen and the kernel judge passed it; a judge rejection of a screened sample is a rejection
    status = "verified" if sample.verified else ("rejected" if sample.judged else "unjudged")
    return {
        "index": sample.sample_index,
        "status": status,
        "reasons": sample.reasons,
        "taxonomy": [FACT_LABELS.get(fact, fact) for fact in sample.taxonomy],
        "details": [cap(detail, 400) for detail in sample.details],
        "finish": sample.finish_reason,
        "text": cap(text, SAMPLE_CAP),
        "checked_code": None if same else cap(checked),
        "checked_code_in_output": same,
        "messages": [
            {"severity": m.severity, "line": m.line, "column": m.column, "text": cap(m.text, 800)}
            for m in sample.lean_messages
        ],
        "lean_backend": sample.lean_backend or "",
        "real_lean": sample.real_lean,
        "judge": (
            None
            if sample.judge is None
            else {"status": sample.judge.status.value, "tool": sample.judge.tool, "real": sample.judge.real}
        ),
    }


def _statement_rows(
    statements: list[StudyStatement], samples: list[SampleOutcome], names: list[str]
) -> list[dict[str, Any]]:
    by_pair: dict[tuple[str, str], list[SampleOutcome]] = {}
    for sample in samples:
        by_pair.setdefault((sample.statement_id, sample.prover), []).append(sample)
    rows = []
    for statement in statements:
        per_prover = {}
        proved_by = []
        for name in names:
            own = sorted(by_pair.get((statement.id, name), []), key=lambda s: s.sample_index)
            verified = sum(1 for s in own if s.verified)
            if verified:
                proved_by.append(name)
            per_prover[name] = {
                "drawn": len(own),
                "verified": verified,
                "samples": [_sample_row(s) for s in own],
            }
        rows.append(
            {
                "id": statement.id,
                "level": statement.level or "",
                "type": statement.type or "",
                "question": cap(statement.question, 600),
                "statement": cap(statement.statement, TEXT_CAP),
                "proved_by": proved_by,
                "provers": per_prover,
            }
        )
    return rows


def _intersections(rows: list[dict[str, Any]], names: list[str]) -> list[tuple[list[str], int]]:
    """Statements per exact set of provers that proved them, every combination listed (empty last)."""
    counts: dict[frozenset[str], int] = {}
    for row in rows:
        key = frozenset(row["proved_by"])
        counts[key] = counts.get(key, 0) + 1
    ordered = [frozenset(c) for size in range(1, len(names) + 1) for c in combinations(names, size)]
    ordered.append(frozenset())
    return [([n for n in names if n in combo], counts.get(combo, 0)) for combo in ordered]


def _unverified(
    samples: list[SampleOutcome], provers: list[ProverRow], configured_lean: str
) -> tuple[list[str], list[tuple[str, bool, int]]]:
    judged: dict[tuple[str, bool], int] = {}
    for sample in samples:
        if sample.judged and sample.lean_backend:  # without a backend the gate refused it before Lean
            key = (sample.lean_backend, sample.real_lean)
            judged[key] = judged.get(key, 0) + 1
    backends = [(backend, real, count) for (backend, real), count in sorted(judged.items())]
    reasons = []
    fake = [f"{backend} ({count} samples)" for backend, real, count in backends if not real]
    if fake:
        reasons.append("Lean verdicts from a backend that is not real Lean: " + ", ".join(fake))
    elif not backends and configured_lean == "fake":
        reasons.append("the study's Lean backend is configured as fake (no sample judged yet)")
    scripted = [p.name for p in provers if p.backend == ModelBackendName.scripted.value]
    if scripted:
        reasons.append("scripted (not model) prover outputs: " + ", ".join(scripted))
    stand_ins = sorted({s.judge.tool for s in samples if s.judge is not None and not s.judge.real})
    if stand_ins:
        reasons.append("kernel-judge verdicts from a stand-in, not Lean's kernel: " + ", ".join(stand_ins))
    return reasons, backends


def collect_study(study_dir: Path) -> StudyPage:
    with StudyStore(study_dir, create=False) as store:
        settings = store.settings()
        statements = store.statements()
        samples = store.samples()
        entries = store.provers()
    names = [entry.name for entry in entries]
    figures = study_figures(
        statements,
        samples,
        [(entry.name, entry.settings.model) for entry in entries],
        k=settings.k,
        strategy=settings.strategy,
        study_dir=str(study_dir),
        lean_backend=settings.lean.backend.value,
        feedback_rounds=settings.feedback_rounds,
    )
    provers = [
        ProverRow(
            name=entry.name,
            model=entry.settings.model,
            backend=entry.settings.backend.value,
            toolchains=sorted({s.toolchain for s in samples if s.prover == entry.name and s.toolchain}),
        )
        for entry in entries
    ]
    unverified, backends = _unverified(samples, provers, settings.lean.backend.value)
    rows = _statement_rows(statements, samples, names)
    return StudyPage(
        name=study_dir.name,
        figures=figures,
        provers=provers,
        lean_backends=backends,
        unverified_sources=unverified,
        intersections=_intersections(rows, names),
        statements=rows,
    )


# -- HTML ------------------------------------------------------------------------------------------------
def _colors(page: StudyPage) -> dict[str, str]:
    return {prover.name: PALETTE[i % len(PALETTE)] for i, prover in enumerate(page.provers)}


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def _header(page: StudyPage) -> str:
    figures = page.figures
    by_name = {p.name: p for p in figures.provers}
    provers = _table(
        ["prover", "model", "backend", "toolchain", "samples", "verified samples", "not judged", "incomplete pairs"],
        [
            [
                p.name,
                p.model,
                p.backend,
                ", ".join(p.toolchains) or "—",
                by_name[p.name].samples,
                by_name[p.name].verified_samples,
                by_name[p.name].unjudged_samples,
                by_name[p.name].incomplete_pairs,
            ]
            for p in page.provers
        ],
        "prover-table",
    )
    lean = _table(
        ["Lean backend", "real Lean", "samples checked"],
        [[backend, "yes" if real else "NO", count] for backend, real, count in page.lean_backends]
        or [[f"{figures.lean_backend} (configured; nothing judged yet)", "—", 0]],
    )
    meta = (
        f"{figures.statements} statements · k = {figures.k} samples per statement and prover · strategy"
        f" {figures.strategy} · pass@j estimator: {figures.estimator} · feedback rounds"
        f" {figures.feedback_rounds} (studies run none)"
    )
    return (
        f"<h1>repro report: study {escape(page.name)}</h1><p class=note>{escape(meta)}</p>"
        f'<div class="grid"><div><h3>Provers</h3>{provers}</div><div><h3>Lean</h3>{lean}</div></div>'
    )


def _pass_at(page: StudyPage) -> str:
    colors = _colors(page)
    series = [
        (
            f"{p.name} ({p.covered}/{p.statements} covered)",
            [(float(key.split("@")[1]), e.value, e.low, e.high) for key, e in p.pass_at.items()],
            colors[p.name],
        )
        for p in page.figures.provers
    ]
    figure = interval_chart(
        series,
        title="pass@j per prover (95% bootstrap interval over statements)",
        figure_id="figure-study-pass-at",
        x_label="j (samples per statement)",
        y_label="pass@j",
    )
    k = page.figures.k
    rows = [
        [p.name, f"{p.covered}/{p.statements}", _percent(p.coverage)]
        + [f"{e.value:.3f} [{e.low:.3f}, {e.high:.3f}]" for e in p.pass_at.values()]
        for p in page.figures.provers
    ]
    table = _table(["prover", "covered", "coverage"] + [f"pass@{j}" for j in range(1, k + 1)], rows, "pass-at-table")
    note = (
        "<p class=note>Coverage: statements with at least one verified sample among the k drawn. pass@j: "
        + (
            "unbiased estimator 1 − C(n−c, j)/C(n, j) per statement, averaged over statements."
            if page.figures.estimator != FIRST_SUCCESS
            else "share of statements whose first verified sample came within the first j (sequential strategy)."
        )
        + " Intervals: percentile bootstrap over statements.</p>"
    )
    return f"<h2 id=study-pass-at>Coverage and pass@j</h2>{figure}{table}{note}"


def _groups(page: StudyPage) -> str:
    colors = _colors(page)
    parts = ["<h2 id=study-groups>Coverage per level and type</h2>"]
    if not any(getattr(p, key) for p in page.figures.provers for key in ("by_level", "by_type")):
        # nothing to draw: no empty figure, no legend of provers below it (m17)
        return parts[0] + "<p class=note>The statements carry no level or type (GSM8K's have none).</p>"
    for key, label in (("by_level", "level"), ("by_type", "type")):
        groups = sorted({g for p in page.figures.provers for g in getattr(p, key)})
        if not groups:
            parts.append(f"<p class=note>The statements carry no {label}.</p>")
            continue
        bars = []
        rows = []
        for group in groups:
            for prover in page.figures.provers:
                figure = getattr(prover, key).get(group)
                if figure is None:
                    continue
                bars.append(
                    (
                        f"{group} · {prover.name}",
                        [
                            ("covered", figure.coverage, colors[prover.name]),
                            ("not covered", 1 - figure.coverage, "#e8e8e8"),
                        ],
                        f"{figure.covered}/{figure.statements} = {figure.coverage:.1%}",
                    )
                )
                rows.append(
                    [group, prover.name, f"{figure.covered}/{figure.statements}", _percent(figure.coverage)]
                    + [f"{v:.3f}" for v in figure.pass_at.values()]
                )
        parts.append(
            stacked_bars(
                bars,
                title=f"Coverage per {label} (covered / statements)",
                figure_id=f"figure-study-{label}",
                label_width=230,
                width=820,
            )
        )
        parts.append(
            _table(
                [label, "prover", "covered", "coverage"] + [f"pass@{j}" for j in range(1, page.figures.k + 1)],
                rows,
                f"{label}-table",
            )
        )
    parts.append(legend([(p.name, colors[p.name]) for p in page.provers]))
    return "".join(parts)


def _overlap(page: StudyPage) -> str:
    overlap = page.figures.overlap
    names = [p.name for p in page.provers]
    sizes = {p.name: p.covered for p in page.figures.provers}
    intersections = [(frozenset(members), count) for members, count in page.intersections]
    figure = upset_chart(
        names,
        intersections,
        sizes,
        title="Statements per exact combination of provers (last column: no prover)",
        figure_id="figure-study-overlap",
        colors=_colors(page),
    )
    rows = [[f"only {name}", count] for name, count in overlap.only.items()]
    rows += [
        ["every prover", overlap.all],
        ["no prover", overlap.none],
        ["at least one (ensemble)", f"{overlap.union} ({overlap.union_coverage:.1%})"],
    ]
    table = _table(["statements proved by", "statements"], rows, "overlap-table")
    splits = ""
    if overlap.splits:
        split_rows = [
            [
                f"{s.first} + {s.second}",
                ", ".join(f"{j}: {value:.3f}" for j, value in enumerate(s.curve)),
                f"{s.best_j} + {s.budget - s.best_j} → {s.best_coverage:.3f}",
            ]
            for s in overlap.splits
        ]
        splits = _table(
            [f"{page.figures.k}-sample budget: first + second", "expected coverage, j samples from the first", "best"],
            split_rows,
            "split-table",
        )
    return f"<h2 id=study-overlap>Overlap of provers</h2>{figure}{table}{splits}"


def _taxonomy(page: StudyPage) -> str:
    facts = sorted({fact for p in page.figures.provers for fact in p.taxonomy})
    fact_colors = {fact: PALETTE[i % len(PALETTE)] for i, fact in enumerate(facts)}
    bars = []
    rows = []
    for prover in page.figures.provers:
        segments = [
            (FACT_LABELS.get(fact, fact), prover.taxonomy.get(fact, 0.0) * prover.failed_samples, fact_colors[fact])
            for fact in facts
        ]
        bars.append((prover.name, segments, f"{prover.failed_samples} failed samples"))
        rows.append(
            [
                prover.name,
                prover.failed_samples,
                ", ".join(f"{FACT_LABELS.get(f, f)} {s:.1%}" for f, s in prover.taxonomy.items()) or "—",
                ", ".join(f"{r} {s:.1%}" for r, s in prover.reasons.items()) or "—",
                ", ".join(f"{c} {s:.1%}" for c, s in prover.lean_error_classes.items()) or "—",
            ]
        )
    figure = stacked_bars(
        bars, title="Failure taxonomy per prover (failed samples showing each fact)", figure_id="figure-study-taxonomy"
    )
    table = _table(
        ["prover", "failed samples", "facts (share of failed)", "gate reasons", "Lean error classes"],
        rows,
        "study-taxonomy-table",
    )
    note = "<p class=note>A failed sample can show several facts, so a bar can be longer than its failed samples.</p>"
    keys = legend([(FACT_LABELS.get(f, f), c) for f, c in fact_colors.items()])
    return f"<h2 id=study-taxonomy>Failure taxonomy</h2>{figure}{keys}{note}{table}"


def _cost(page: StudyPage) -> str:
    colors = _colors(page)
    rows = []
    bars = []
    for prover in page.figures.provers:
        cost = prover.cost
        rows.append(
            [
                prover.name,
                prover.covered,
                cost.samples,
                _cell(cost.samples_per_verified),
                _cell(cost.tokens_in_per_verified),
                _cell(cost.tokens_out_per_verified),
                _cell(cost.model_seconds_per_verified),
                _cell(cost.lean_seconds_per_verified),
            ]
        )
        per = cost.samples_per_verified
        bars.append(
            (
                prover.name,
                [("samples", per or 0.0, colors[prover.name])],
                f"{per:.2f} per verified" if per is not None else "none verified",
            )
        )
    figure = stacked_bars(bars, title="Samples drawn per verified statement", figure_id="figure-study-cost")
    table = _table(
        [
            "prover",
            "verified statements",
            "samples",
            "samples / verified",
            "tokens in / verified",
            "tokens out / verified",
            "model s / verified",
            "Lean s / verified",
        ],
        rows,
        "cost-table",
    )
    note = f"<p class=note>{escape(SHARED_LEAN_NOTE)}</p>"  # n18
    return f"<h2 id=study-cost>Cost per verified statement</h2>{figure}{table}{note}"


def _explorer(page: StudyPage) -> str:
    unproved = page.figures.overlap.none
    options = ['<option value="none">proved by no prover</option>', '<option value="">every statement</option>']
    options += ['<option value="any">proved by some prover</option>', '<option value="every">by every prover</option>']
    options += [f'<option value="only:{escape(p.name)}">only by {escape(p.name)}</option>' for p in page.provers]
    return (
        f"<h2 id=study-unproved>Statements no prover proved ({unproved} of {page.figures.statements})</h2>"
        "<p class=note>Each row opens to every prover's samples, the gate's reasons and Lean's messages."
        " The filter also shows the statements only one prover proves, or all.</p>"
        f'<div class="filters"><label>show <select id="filter-proved">{"".join(options)}</select></label>'
        '<input id="filter-statement-text" type="search" placeholder="free text (statement, question, proof)">'
        '<span id="statements-count"></span></div>'
        '<table id="statements"><thead><tr><th>statement</th><th>level</th><th>type</th><th>proved by</th>'
        '<th>verified samples per prover</th><th>statement text</th></tr></thead><tbody id="statements-body"></tbody>'
        '</table><div id="statements-pager"></div>'
    )


def study_sections(page: StudyPage) -> str:
    return (
        unverified_banner(page.unverified_sources)
        + _header(page)
        + _pass_at(page)
        + _groups(page)
        + _overlap(page)
        + _taxonomy(page)
        + _cost(page)
        + _explorer(page)
    )


def study_data(page: StudyPage) -> dict[str, Any]:
    return {"provers": [p.name for p in page.provers], "statements": page.statements}
