"""The evaluation page of ``repro report EVAL_DIR``, read straight from ``evaluation.sqlite``.

The statistics are :func:`repro.evaluate.report.build_report`'s (the numbers ``repro evaluate-report``
prints). An evaluation measures models on released rows; the page says NOT VERIFIED when any of those
rows was not backed by real Lean (``unverified``, or checked by a fake backend, or made by scripted
stages) or when an evaluated model is a scripted one.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from repro.config import ModelBackendName
from repro.evaluate.records import EvalAnswer, EvalReport, GroupStatistics, Variant
from repro.evaluate.report import build_report as evaluation_figures
from repro.evaluate.store import EVAL_STORE_FILENAME, EvalStore
from repro.records import ReleasedInstance
from repro.report.collect import SAMPLE_CAP, TEXT_CAP, cap
from repro.report.page import _cell, _table, unverified_banner
from repro.report.svg import PALETTE, forest_chart, legend

# the evaluation keeps each model's response cache here; it is a run store, but not a run
MODEL_CACHE_DIR = "model_cache"


class EvaluationPage(BaseModel):
    name: str
    figures: EvalReport
    models: list[tuple[str, str, str]]  # (name, model id, backend)
    unverified_sources: list[str]
    instances: list[dict[str, Any]]


def is_evaluation(directory: Path) -> bool:
    return (directory / EVAL_STORE_FILENAME).is_file()


def _unverified(instances: list[ReleasedInstance], models: list[tuple[str, str, str]]) -> list[str]:
    reasons = []
    flagged = [i for i in instances if i.unverified]
    if flagged:
        reasons.append(f"{len(flagged)} of {len(instances)} evaluated rows are marked unverified in the release")
    fake = [i for i in instances if not i.provenance.verified_by_real_lean]
    if fake:
        backends = sorted({i.provenance.verifier_backend or "unknown" for i in fake})
        reasons.append(
            f"{len(fake)} of {len(instances)} evaluated rows were not checked by real Lean ({', '.join(backends)})"
        )
    scripted_stages = sorted(
        {m.stage for i in instances for m in i.provenance.models if "scripted" in m.backend or "fake" in m.backend}
    )
    if scripted_stages:
        reasons.append("the evaluated rows were made with scripted (not model) stages: " + ", ".join(scripted_stages))
    scripted = [name for name, _, backend in models if backend == ModelBackendName.scripted.value]
    if scripted:
        reasons.append("answers from scripted (not real) models: " + ", ".join(scripted))
    return reasons


def _instance_row(instance: ReleasedInstance, answers: list[EvalAnswer], names: list[str]) -> dict[str, Any]:
    per_model: dict[str, Any] = {}
    for name in names:
        own = [a for a in answers if a.model == name]
        per_model[name] = {
            variant.value: {
                "correct": sum(1 for a in own if a.variant == variant and a.correct),
                "samples": [
                    {
                        "sample": a.sample,
                        "correct": a.correct,
                        "extracted": a.extracted,
                        "reference": a.reference,
                        "grading": a.grading_method,
                        "finish": a.finish_reason,
                        "response": cap(a.response, SAMPLE_CAP),
                    }
                    for a in own
                    if a.variant == variant
                ],
            }
            for variant in Variant
        }
    provenance = instance.provenance
    return {
        "id": instance.instance_id,
        "level": instance.level or "",
        "type": instance.type or "",
        "original_question": cap(instance.original_question),
        "original_answer": instance.original_answer,
        "rewritten_question": cap(instance.rewritten_question),
        "new_answer": instance.new_answer,
        "verified_code": cap(instance.verified_code, TEXT_CAP),
        "unverified": instance.unverified,
        "lean": {
            "backend": provenance.verifier_backend or "unknown",
            "toolchain": provenance.lean_toolchain or "unknown",
            "mathlib": provenance.mathlib_revision or "unknown",
            "real_lean": provenance.verified_by_real_lean,
        },
        "models": per_model,
    }


def collect_evaluation(eval_dir: Path) -> EvaluationPage:
    figures = evaluation_figures(eval_dir)
    with EvalStore(eval_dir, create=False) as store:
        entries = store.models()
        instances = store.instances()
        answers = store.answers()
    models = [(m.name, m.settings.model, m.settings.backend.value) for m in entries]
    by_instance: dict[str, list[EvalAnswer]] = {}
    for answer in answers:
        by_instance.setdefault(answer.instance_id, []).append(answer)
    names = [name for name, _, _ in models]
    return EvaluationPage(
        name=eval_dir.name,
        figures=figures,
        models=models,
        unverified_sources=_unverified(instances, models),
        instances=[_instance_row(i, by_instance.get(i.instance_id, []), names) for i in instances],
    )


# -- HTML ------------------------------------------------------------------------------------------------
def _interval(low: float, high: float) -> str:
    return "—" if low != low or high != high else f"[{low:.3f}, {high:.3f}]"


def _rate(value: float | None, *, signed: bool = False) -> str:
    """An accuracy or a drop as `repro evaluate-report` prints it (1.000, +0.500), never 1 or 0.5 (n10)."""
    if value is None or value != value:
        return "—"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _group_rows(model: str, kind: str, groups: list[GroupStatistics]) -> list[list[Any]]:
    return [
        [
            model,
            kind if kind == "all" else f"{kind} {g.group}",
            g.instances,
            _rate(g.accuracy_original),
            _interval(g.accuracy_original_interval.low, g.accuracy_original_interval.high),
            _rate(g.accuracy_rewritten),
            _interval(g.accuracy_rewritten_interval.low, g.accuracy_rewritten_interval.high),
            _rate(g.drop, signed=True),
            _interval(g.drop_interval.low, g.drop_interval.high),
            f"{g.discordant_original_only} / {g.discordant_rewritten_only}",
            _cell(g.mcnemar_p),
        ]
        for g in groups
    ]


def evaluation_sections(page: EvaluationPage) -> str:
    figures = page.figures
    colors = {name: PALETTE[i % len(PALETTE)] for i, (name, _, _) in enumerate(page.models)}
    meta = (
        f"{figures.instances} instances · release {figures.release_fingerprint[:16] or '?'} · prompt"
        f" {figures.prompt_version[:16] or '?'} · {figures.bootstrap_resamples} paired bootstrap resamples,"
        f" seed {figures.bootstrap_seed}, {figures.interval_level:.0%} intervals"
    )
    models = _table(
        ["model", "model id", "backend", "samples", "missing instances", "grading methods"],
        [
            [
                m.model,
                m.model_id,
                next((b for n, _, b in page.models if n == m.model), "?"),
                m.samples,
                m.missing_instances,
                ", ".join(f"{method} {count}" for method, count in m.grading_methods.items()) or "—",
            ]
            for m in figures.models
        ],
        "model-table",
    )
    accuracy = []
    drops = []
    for m in figures.models:
        overall = m.overall
        accuracy.append(
            (
                f"{m.model} · original",
                overall.accuracy_original,
                *_pair(overall.accuracy_original_interval),
                colors[m.model],
            )
        )
        accuracy.append(
            (
                f"{m.model} · rewritten",
                overall.accuracy_rewritten,
                *_pair(overall.accuracy_rewritten_interval),
                colors[m.model],
            )
        )
        for kind, groups in _kinds(m):
            for g in groups:
                label = f"{m.model} · {'all' if kind == 'all' else g.group}"
                drops.append((label, g.drop, *_pair(g.drop_interval), colors[m.model]))
    rows = [row for m in figures.models for kind, groups in _kinds(m) for row in _group_rows(m.model, kind, groups)]
    paired = _table(
        [
            "model",
            "group",
            "n",
            "accuracy original",
            "interval",
            "accuracy rewritten",
            "interval",
            "drop",
            "paired interval",
            "right only on original / rewrite",
            "McNemar exact p",
        ],
        rows,
        "paired-table",
    )
    confounds = _table(
        ["metric", "instances", "Spearman ρ with the model-averaged drop", "p", "note", "definition"],
        [
            [c.metric, c.instances, _cell(c.spearman_rho), _cell(c.p_value), c.note or "", c.definition]
            for c in figures.confounds
        ],
        "confound-table",
    )
    return (
        unverified_banner(page.unverified_sources, "the evaluated rows or answers")
        + f"<h1>repro report: evaluation {escape(page.name)}</h1><p class=note>{escape(meta)}</p>"
        + f"<h2 id=evaluation-models>Models</h2>{models}"
        + "<h2 id=evaluation-accuracy>Accuracy on original and rewritten questions</h2>"
        + forest_chart(accuracy, title="Accuracy (with interval)", figure_id="figure-eval-accuracy")
        + forest_chart(
            drops,
            title="Drop from original to rewritten, overall and per level and type (paired interval)",
            figure_id="figure-eval-drop",
        )
        + legend([(name, colors[name]) for name, _, _ in page.models])
        + paired
        + f"<h2 id=evaluation-confounds>Confounds ({figures.confound_instances} instances)</h2>{confounds}"
        + _explorer()
    )


def _pair(interval: Any) -> tuple[float, float]:
    return float(interval.low), float(interval.high)


def _kinds(model: Any) -> list[tuple[str, list[GroupStatistics]]]:
    return [("all", [model.overall]), ("level", model.by_level), ("type", model.by_type)]


def _explorer() -> str:
    return (
        "<h2 id=evaluation-rows>Every evaluated row</h2><p class=note>Each row opens to its questions, every"
        " model's answers and how each was graded, and the Lean code and backend that verified the row.</p>"
        '<div class="filters"><label>show <select id="filter-outcome"><option value="">every row</option>'
        '<option value="dropped">some model right on the original, wrong on the rewrite</option>'
        '<option value="unverified">not verified by real Lean</option></select></label>'
        '<input id="filter-row-text" type="search" placeholder="free text"><span id="rows-count"></span></div>'
        '<table id="rows"><thead><tr><th>instance</th><th>level</th><th>type</th><th>correct samples'
        " (original → rewritten)</th><th>verified by</th><th>rewritten question</th></tr></thead>"
        '<tbody id="rows-body"></tbody></table><div id="rows-pager"></div>'
    )


def evaluation_data(page: EvaluationPage) -> dict[str, Any]:
    return {"models": [name for name, _, _ in page.models], "instances": page.instances}
