"""The evaluation report, computed from the evaluation store alone (deterministic for a seed)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from repro.evaluate.confounds import DEFINITIONS, SOLUTION_METRICS, Solutions, confound_metrics
from repro.evaluate.records import ConfoundRow, EvalReport, GroupStatistics, ModelReport, Variant
from repro.evaluate.statistics import (
    DEFAULT_CONFIDENCE,
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    accuracy_interval,
    mcnemar_exact,
    paired_drop_interval,
    spearman,
)
from repro.evaluate.store import EvalStore
from repro.exit_codes import ReproError
from repro.jsonl import BadRows, iter_json_objects
from repro.records import ReleasedInstance


class ReportInputError(ReproError, ValueError):
    pass


class SolutionRow(BaseModel):
    """One row of ``evaluate-report --solutions``: a model's worked solutions of one instance."""

    model_config = ConfigDict(extra="forbid")
    instance_id: str
    original_solution: str
    rewritten_solution: str


def read_solutions(path: Path) -> dict[str, Solutions]:
    """JSONL rows ``{instance_id, original_solution, rewritten_solution}`` for the solution metrics;
    the error names every bad row, not only the first."""
    if not path.is_file():
        raise ReportInputError(f"{path}: solutions file not found")
    solutions: dict[str, Solutions] = {}
    bad = BadRows(path, ReportInputError)
    for line_number, row in iter_json_objects(path, ReportInputError, bad=bad):
        record = bad.validated(line_number, SolutionRow, row)
        if record is not None and bad.first_use(line_number, record.instance_id):
            solutions[record.instance_id] = Solutions(
                original=record.original_solution, rewritten=record.rewritten_solution
            )
    bad.raise_if_any()
    return solutions


def _group_statistics(
    group: str,
    original: list[list[bool]],
    rewritten: list[list[bool]],
    *,
    confidence: float,
    resamples: int,
    seed: int,
) -> GroupStatistics:
    scores_original = [float(np.mean(samples)) for samples in original]
    scores_rewritten = [float(np.mean(samples)) for samples in rewritten]
    original_only = sum(1 for o, r in zip(original, rewritten, strict=True) if o[0] and not r[0])
    rewritten_only = sum(1 for o, r in zip(original, rewritten, strict=True) if r[0] and not o[0])
    return GroupStatistics(
        group=group,
        instances=len(original),
        accuracy_original=float(np.mean(scores_original)) if original else float("nan"),
        accuracy_original_interval=accuracy_interval(
            scores_original, confidence=confidence, resamples=resamples, seed=seed
        ),
        accuracy_rewritten=float(np.mean(scores_rewritten)) if rewritten else float("nan"),
        accuracy_rewritten_interval=accuracy_interval(
            scores_rewritten, confidence=confidence, resamples=resamples, seed=seed
        ),
        drop=float(np.mean(scores_original) - np.mean(scores_rewritten)) if original else float("nan"),
        drop_interval=paired_drop_interval(
            scores_original, scores_rewritten, confidence=confidence, resamples=resamples, seed=seed
        ),
        discordant_original_only=original_only,
        discordant_rewritten_only=rewritten_only,
        mcnemar_p=mcnemar_exact(original_only, rewritten_only),
    )


def _grouped(
    name: str,
    instances: list[ReleasedInstance],
    key: Callable[[ReleasedInstance], str | None],
    pairs: dict[str, tuple[list[bool], list[bool]]],
    **options: float,
) -> list[GroupStatistics]:
    values = sorted({value for instance in instances if (value := key(instance)) is not None})
    rows = []
    for value in values:
        members = [i.instance_id for i in instances if key(i) == value and i.instance_id in pairs]
        if members:
            rows.append(
                _group_statistics(
                    value,
                    [pairs[m][0] for m in members],
                    [pairs[m][1] for m in members],
                    confidence=options["confidence"],
                    resamples=int(options["resamples"]),
                    seed=int(options["seed"]),
                )
            )
    return rows


def build_report(
    eval_dir: str | Path,
    *,
    solutions: dict[str, Solutions] | None = None,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> EvalReport:
    with EvalStore(eval_dir, create=False) as store:
        models = store.models()
        instances = store.instances()
        correctness = store.correctness()
        samples = int(store.get_meta("samples") or 1)
        fingerprint = store.get_meta("release_fingerprint") or ""
        prompt = store.get_meta("prompt_version") or ""
        methods: dict[str, dict[str, int]] = {}
        for answer in store.answers():
            counts = methods.setdefault(answer.model, {})
            counts[answer.grading_method] = counts.get(answer.grading_method, 0) + 1
    options = {"confidence": confidence, "resamples": resamples, "seed": seed}
    reports = []
    drops: dict[str, list[float]] = {}
    for model in models:
        pairs: dict[str, tuple[list[bool], list[bool]]] = {}
        for instance in instances:
            original = correctness.get((model.name, instance.instance_id, Variant.original))
            rewritten = correctness.get((model.name, instance.instance_id, Variant.rewritten))
            if original and rewritten:
                pairs[instance.instance_id] = (original, rewritten)
                drops.setdefault(instance.instance_id, []).append(float(np.mean(original) - np.mean(rewritten)))
        ordered = [i.instance_id for i in instances if i.instance_id in pairs]
        reports.append(
            ModelReport(
                model=model.name,
                model_id=model.settings.model,
                samples=samples,
                missing_instances=len(instances) - len(pairs),
                overall=_group_statistics(
                    "all",
                    [pairs[i][0] for i in ordered],
                    [pairs[i][1] for i in ordered],
                    confidence=confidence,
                    resamples=resamples,
                    seed=seed,
                ),
                by_level=_grouped("level", instances, lambda i: i.level, pairs, **options),
                by_type=_grouped("type", instances, lambda i: i.type, pairs, **options),
                grading_methods=dict(sorted(methods.get(model.name, {}).items())),
            )
        )
    complete = [i for i in instances if len(drops.get(i.instance_id, [])) == len(models)]
    averaged = [float(np.mean(drops[i.instance_id])) for i in complete]
    per_instance = [
        confound_metrics(i, (solutions or {}).get(i.instance_id)) if solutions is not None else confound_metrics(i)
        for i in complete
    ]
    confounds = []
    for metric, definition in DEFINITIONS.items():
        rows = [(values[metric], drop) for values, drop in zip(per_instance, averaged, strict=True) if metric in values]
        if metric in SOLUTION_METRICS and not rows:
            confounds.append(
                ConfoundRow(
                    metric=metric,
                    definition=definition,
                    instances=0,
                    spearman_rho=None,
                    p_value=None,
                    note="a release carries no natural-language solutions; pass --solutions FILE",
                )
            )
            continue
        rho, p_value, note = spearman([r[0] for r in rows], [r[1] for r in rows])
        confounds.append(
            ConfoundRow(
                metric=metric, definition=definition, instances=len(rows), spearman_rho=rho, p_value=p_value, note=note
            )
        )
    return EvalReport(
        release_fingerprint=fingerprint,
        prompt_version=prompt,
        instances=len(instances),
        unverified_instances=sum(1 for instance in instances if instance.unverified),
        interval_level=confidence,
        bootstrap_resamples=resamples,
        bootstrap_seed=seed,
        models=reports,
        confounds=confounds,
        confound_instances=len(complete),
    )


TABLES_FILENAME = "evaluation_tables.json"


def report_tables(report: EvalReport) -> dict[str, Any]:
    """The report as flat tables (one row per model and group, one per confound), the shape the HTML
    report (``repro report DIR``) renders from ``evaluation*.json`` files."""
    rows = []
    for model in report.models:
        for kind, groups in (("all", [model.overall]), ("level", model.by_level), ("type", model.by_type)):
            for row in groups:
                rows.append(
                    {
                        "model": model.model,
                        "by": kind,
                        "group": row.group,
                        "n": row.instances,
                        "accuracy_original": row.accuracy_original,
                        "original_95ci": [row.accuracy_original_interval.low, row.accuracy_original_interval.high],
                        "accuracy_rewritten": row.accuracy_rewritten,
                        "rewritten_95ci": [row.accuracy_rewritten_interval.low, row.accuracy_rewritten_interval.high],
                        "drop": row.drop,
                        "drop_paired_95ci": [row.drop_interval.low, row.drop_interval.high],
                        "right_only_on_original": row.discordant_original_only,
                        "right_only_on_rewrite": row.discordant_rewritten_only,
                        "mcnemar_exact_p": row.mcnemar_p,
                    }
                )
    return {
        "instances": report.instances,
        "unverified_instances": report.unverified_instances,
        "release_fingerprint": report.release_fingerprint,
        "prompt_version": report.prompt_version,
        "bootstrap": f"{report.bootstrap_resamples} paired resamples, seed {report.bootstrap_seed}",
        "paired_accuracy": rows,
        "confounds_spearman_with_model_averaged_drop": [
            {
                "metric": row.metric,
                "n": row.instances,
                "rho": row.spearman_rho,
                "p": row.p_value,
                "note": row.note,
                "definition": row.definition,
            }
            for row in report.confounds
        ],
    }


def write_report_tables(eval_dir: str | Path, report: EvalReport) -> Path:
    path = Path(eval_dir) / TABLES_FILENAME
    path.write_text(json.dumps(report_tables(report), indent=1, ensure_ascii=False), encoding="utf-8")
    return path
