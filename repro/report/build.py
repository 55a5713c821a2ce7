"""Which kind of directory was given (run, study, evaluation), and the page for it.

Detection is by files present: a run holds ``run.sqlite``; a coverage study holds ``study.sqlite``
(``repro prove-study``), or run directories side by side (one per prover); an evaluation holds
``evaluation.sqlite`` (``repro evaluate``). Studies and evaluations are read from their stores; a
directory holding only ``study*.json`` / ``eval*.json`` summaries gets them rendered as tables. An
evaluation's ``model_cache/`` is a run store of cached responses, never a run of its own.
"""

from __future__ import annotations

import json
import time
from html import escape
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from repro.evaluate.store import EVAL_STORE_FILENAME as EVAL_STORE
from repro.report.collect import ReportError, RunReport, collect_run, retained_problems
from repro.report.evaluation_page import (
    MODEL_CACHE_DIR,
    collect_evaluation,
    evaluation_data,
    evaluation_sections,
    is_evaluation,
)
from repro.report.page import _cell, _table, render_page, run_sections, unverified_banner
from repro.report.study_page import collect_study, is_study, study_data, study_sections
from repro.report.svg import PALETTE, legend, line_chart, rate_bars, stacked_bars
from repro.store import STORE_FILENAME
from repro.study.store import STUDY_FILENAME as STUDY_STORE

STUDY_PATTERNS = ("study*.json",)
EVALUATION_PATTERNS = ("eval*.json", "evaluate*.json", "evaluation*.json")


class ReportResult(BaseModel):
    path: str
    kinds: list[str]
    candidates: int
    contents: str = ""  # what the page's table holds, e.g. "200 statements, 3 provers"
    size_bytes: int
    seconds: float


def detect_kinds(directory: Path) -> list[str]:
    kinds = []
    if (directory / STORE_FILENAME).is_file():
        kinds.append("run")
    if is_study(directory) or _json_files(directory, STUDY_PATTERNS):
        kinds.append("study")
    elif _sub_runs(directory):  # a folder of run directories: runs side by side, not a prover study (n12)
        kinds.append("runs compared")
    if is_evaluation(directory) or _json_files(directory, EVALUATION_PATTERNS):
        kinds.append("evaluation")
    return kinds


def _sub_runs(directory: Path) -> list[Path]:
    return sorted(
        p for p in directory.iterdir() if p.is_dir() and p.name != MODEL_CACHE_DIR and (p / STORE_FILENAME).is_file()
    )


def _json_files(directory: Path, patterns: tuple[str, ...]) -> list[Path]:
    return sorted({f for p in patterns for f in directory.glob(p) if f.is_file()})


def _generic(value: Any, title: str) -> str:
    """A JSON summary as tables: lists of objects become tables, objects of scalars key/value tables."""
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        headers = list(dict.fromkeys(k for row in value for k in row))
        rows = [[_flat(row.get(h)) for h in headers] for row in value]
        return f"<h3>{escape(title)}</h3>{_table(headers, rows)}"
    if isinstance(value, dict):
        scalars = [[k, _flat(v)] for k, v in value.items() if not isinstance(v, dict | list)]
        parts = [f"<h3>{escape(title)}</h3>{_table(['key', 'value'], scalars)}"] if scalars else []
        parts += [_generic(v, f"{title} / {k}") for k, v in value.items() if isinstance(v, dict | list)]
        return "".join(parts)
    return f"<h3>{escape(title)}</h3><pre>{escape(json.dumps(value, ensure_ascii=False, indent=1)[:20000])}</pre>"


def _flat(value: Any) -> str:
    """A cell for a JSON value: lists joined, objects as ``key: value`` pairs, numbers rounded (no raw JSON)."""
    if isinstance(value, list):
        return ", ".join(_flat(v) for v in value) if value else "—"
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_flat(v)}" for k, v in value.items()) if value else "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return _cell(value)


def _json_section(directory: Path, patterns: tuple[str, ...], heading: str, anchor: str) -> str:
    parts = []
    for path in _json_files(directory, patterns):
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as error:
            parts.append(f"<p>{escape(path.name)}: unreadable ({escape(str(error))})</p>")
            continue
        parts.append(_generic(value, path.name))
    return f"<h2 id={anchor}>{escape(heading)}</h2>" + "".join(parts) if parts else ""


def _study_section(directory: Path) -> tuple[str, list[str]]:
    """Runs side by side (one per prover): coverage, pass@j on one figure, overlap, taxonomy per run."""
    runs = [(path.name, collect_run(path)) for path in _sub_runs(directory)]
    if not runs:
        return "", []
    coverage = []
    for name, report in runs:
        hit, total = report.rate_counts.get("overall", {}).get("all", [0, 0])
        coverage.append((name, hit / total if total else None, f"{hit}/{total}"))
    curves = [
        (
            name,
            [(float(k.split("@")[1]), v) for k, v in report.prover_pass_at.items() if v is not None],
            PALETTE[i % len(PALETTE)],
        )
        for i, (name, report) in enumerate(runs)
    ]
    solved = {name: retained_problems(report) for name, report in runs}
    every = set().union(*solved.values())
    overlap = [
        [name, len(s), len(s - set().union(*(o for n, o in solved.items() if n != name)))] for name, s in solved.items()
    ]
    common = set.intersection(*solved.values()) if solved else set()
    taxonomy = [[name, row["fact"], row["count"], f"{row['share']:.1%}"] for name, r in runs for row in r.taxonomy]
    # the same facts as one bar per run, a segment per fact (n19: a 21-row table alone read badly)
    facts = sorted({row["fact"] for _, r in runs for row in r.taxonomy})
    fact_colors = {fact: PALETTE[i % len(PALETTE)] for i, fact in enumerate(facts)}
    taxonomy_bars = [
        (
            name,
            [(row["fact"], float(row["count"]), fact_colors[row["fact"]]) for row in r.taxonomy],
            f"{sum(row['count'] for row in r.taxonomy)} facts",
        )
        for name, r in runs
    ]
    taxonomy_figure = (
        stacked_bars(
            taxonomy_bars,
            title="Failure taxonomy per run (samples showing each fact)",
            figure_id="figure-runs-taxonomy",
        )
        + legend(list(fact_colors.items()))
        if facts
        else ""
    )
    warnings = sorted({w for _, r in runs for w in r.header.unverified_sources})
    body = (
        "<h2 id=study>Study: runs compared</h2>"
        + rate_bars(coverage, title="Coverage (retained / finished) per run", figure_id="figure-study-coverage")
        + line_chart(
            curves, title="Prover pass@j per run", figure_id="figure-study-pass-at", x_label="j", y_label="pass@j"
        )
        + _table(["run", "retained problems", "only this run"], overlap)
        + f"<p class=note>retained by every run: {len(common)}; by at least one (union): {len(every)}</p>"
        + taxonomy_figure
        + _table(["run", "fact", "samples", "share"], taxonomy)
    )
    return body, warnings


def build_report(directory: Path) -> tuple[str, list[str], int]:
    """(HTML, kinds found, candidates in the audit table) for a run, study or evaluation directory."""
    html, kinds, candidates, _ = _build(directory)
    return html, kinds, candidates


def _build(directory: Path) -> tuple[str, list[str], int, str]:
    if not directory.is_dir():
        raise ReportError(f"{directory}: not a directory")
    kinds = detect_kinds(directory)
    if not kinds:
        raise ReportError(
            f"{directory}: nothing to report: expected a run directory ({STORE_FILENAME}), a study directory"
            f" ({STUDY_STORE}, or {', '.join(STUDY_PATTERNS)}), a folder of run directories, or an evaluation"
            f" directory ({EVAL_STORE}, or {', '.join(EVALUATION_PATTERNS)})"
        )
    body, candidates = "", 0
    data: dict[str, Any] = {"candidates": []}
    title = f"repro report: {directory.name}"
    script = "audit.js"
    contents = ""
    run: RunReport | None = None
    if "run" in kinds:
        run = collect_run(directory)
        body += run_sections(run)
        data = {"candidates": run.candidates}
        candidates = len(run.candidates)
        contents = f"{candidates} candidates"
        title = f"repro report: {run.header.run_name}"
    if "study" in kinds and is_study(directory) and run is None:
        study = collect_study(directory)
        body += study_sections(study)
        data, script = study_data(study), "study.js"
        contents = f"{len(study.statements)} statements, {len(study.provers)} provers"
        title = f"repro report: study {study.name}"
    elif "study" in kinds or "runs compared" in kinds:
        section, warnings = _study_section(directory)
        if run is None:
            body += unverified_banner(warnings, "the compared runs")
            compared = len(_sub_runs(directory))
            contents = contents or (f"{compared} run{'s' * (compared != 1)} side by side" if compared else "")
        body += section + _json_section(directory, STUDY_PATTERNS, "Study summary", "study-summary")
    if "evaluation" in kinds and is_evaluation(directory) and script == "audit.js" and run is None:
        evaluation = collect_evaluation(directory)
        body += evaluation_sections(evaluation)
        data, script = evaluation_data(evaluation), "evaluation.js"
        models = len(evaluation.models)
        contents = f"{len(evaluation.instances)} evaluated rows, {models} model{'s' * (models != 1)}"
        title = f"repro report: evaluation {evaluation.name}"
    elif "evaluation" in kinds:
        body += _json_section(directory, EVALUATION_PATTERNS, "Evaluation", "evaluation")
    return render_page(title, body, data, script), kinds, candidates, contents or "summaries only"


def write_report(directory: Path, out: Path | None = None) -> ReportResult:
    started = time.perf_counter()
    html, kinds, candidates, contents = _build(directory)
    target = out or directory / "report.html"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(html, encoding="utf-8")
    return ReportResult(
        path=str(target),
        kinds=kinds,
        candidates=candidates,
        contents=contents,
        size_bytes=target.stat().st_size,
        seconds=round(time.perf_counter() - started, 3),
    )
