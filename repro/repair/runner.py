"""``repro repair``: diagnose every cached trace, repair only risky ones, keep the original by default."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from repro.data.answers import parse_gsm8k_answer
from repro.exit_codes import ReproError
from repro.jsonl import BadRows, iter_json_objects
from repro.llm.client import ModelClient
from repro.repair.answers import answers_equivalent, extract_answer
from repro.repair.candidates import STYLE_ORDER, AttemptStyle, GeneratedCandidate, generate_candidate
from repro.repair.diagnosis import Diagnosis, TriggerSettings, diagnose
from repro.repair.guards import GuardSettings, PolicyMode, judge_candidate
from repro.repair.meta import MetaError
from repro.repair.report import CandidateOutcome, ExampleResult, build_report


class Baseline(StrEnum):
    guarded = "guarded"
    resolve_all = "resolve_all"
    resolve_triggered = "resolve_triggered"
    best_of_n = "best_of_n"


class RepairSettings(BaseModel):
    candidates: int = Field(3, ge=1)
    mode: str = "auto"  # auto | strict | strong | weak (relaxed = weak)
    strong_reasoner_min_consistency: float = 0.65
    baseline: Baseline = Baseline.guarded
    trigger: TriggerSettings = Field(default_factory=TriggerSettings)
    guards: GuardSettings = Field(default_factory=GuardSettings)
    concurrency: int = Field(8, ge=1)
    max_tokens: int = 512


class TraceRecord(BaseModel):
    """One cached reasoning trace, as GuardedRepair's published files hold them. An unknown (misspelt)
    field is refused, never read as an empty trace."""

    model_config = ConfigDict(extra="forbid")
    id: str  # the trace's id (a candidates file names it); the line number minus one when absent
    problem: str = Field(min_length=1)  # the problem text (GSM8K's `question` is read as it)
    gold_answer: str = Field(min_length=1)  # the reference answer (`answer` too; a GSM8K `#### N` gives N)
    initial_reasoning: str  # the model's reasoning to repair; may be absent only when generation_failed
    generation_failed: bool = False  # the model produced no trace: repaired from the problem alone
    model: str | None = None  # the model that wrote the trace, as the published files record it


class CandidateRow(BaseModel):
    """One row of an offline candidates file: repair texts for the trace ``id``."""

    model_config = ConfigDict(extra="forbid")
    id: str
    candidates: list[str]


class RepairInputError(ReproError, ValueError):
    pass


def _gold_answer(value: object, field: str, bad: BadRows, line_number: int) -> object:
    """The gold answer; a GSM8K solution (``... #### 18``) gives the number after ``####``, or is refused."""
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        return value  # missing or not text: the record's validation names it
    text = str(value).strip()
    if "####" not in text:
        return text
    try:
        return parse_gsm8k_answer(text)
    except ValueError as error:
        bad.add(line_number, f"a GSM8K answer must end in '#### <number>': {error}", field=field)
        return None


_NOT_A_TRACE = (
    "this row is a benchmark problem, not a model's trace (a trace's initial_reasoning is the reasoning"
    " to repair; see docs/repair.md)"
)


def read_traces(path: Path) -> list[TraceRecord]:
    """Every trace of the file, each field checked; the error names every bad row (line, field, reason).

    GSM8K's own spelling is read too (``question`` for ``problem``, ``answer`` for ``gold_answer``,
    whose ``#### N`` gives the number), but a benchmark problem without ``initial_reasoning`` is not a
    trace: it is refused, never repaired as an empty generation.
    """
    records = []
    bad = BadRows(path, RepairInputError)
    for line_number, row in iter_json_objects(path, RepairInputError, bad=bad):
        row = {**row, "id": str(row.get("id", line_number - 1))}
        benchmark_row = "initial_reasoning" not in row and ("answer" in row or "solution" in row)
        if "question" in row and "problem" not in row:
            row["problem"] = row.pop("question")
        field = "gold_answer"
        if "answer" in row and "gold_answer" not in row:
            field, row["gold_answer"] = "answer", row.pop("answer")
        if "gold_answer" in row:
            row["gold_answer"] = _gold_answer(row["gold_answer"], field, bad, line_number)
            if line_number in bad:
                continue
        if row.get("generation_failed") is True:
            row.setdefault("initial_reasoning", "")  # a failed generation has no text to repair
        why = _NOT_A_TRACE if benchmark_row else None
        record = bad.validated(line_number, TraceRecord, row, missing={"initial_reasoning": why} if why else None)
        if record is not None and bad.first_use(line_number, record.id) and line_number not in bad:
            records.append(record)
    bad.raise_if_any()
    if not records:
        raise RepairInputError(f"{path}: no traces")
    return records


def read_candidates_file(path: Path, traces: list[TraceRecord] | None = None) -> dict[str, list[str]]:
    """``{"id": ..., "candidates": [...]}`` rows; the error names every bad row, not only the first,
    and (given the traces) every row whose id is no trace's."""
    mapping: dict[str, list[str]] = {}
    known = {trace.id for trace in traces} if traces is not None else None
    bad = BadRows(path, RepairInputError)
    for line_number, row in iter_json_objects(path, RepairInputError, bad=bad):
        if "id" in row and row["id"] is not None:
            row = {**row, "id": str(row["id"])}
        record = bad.validated(line_number, CandidateRow, row)
        if record is None or not bad.first_use(line_number, record.id):
            continue
        if known is not None and record.id not in known:
            bad.add(line_number, f"{record.id!r} is the id of no trace in the --traces file", field="id")
            continue
        mapping[record.id] = record.candidates
    bad.raise_if_any()
    return mapping


def choose_mode(settings: RepairSettings, diagnoses: list[Diagnosis]) -> PolicyMode:
    """``auto`` describes the initial reasoner, not our trigger: ``strong`` when the median
    meta-consistency of the initial traces is at least ``strong_reasoner_min_consistency`` (0.65, the
    low-score trigger threshold: a strong model's typical trace writes its steps as checked
    computations and does not trigger; GSM8K/deepseek-v4-flash 0.80, ASDiv/qwen2.5-1.5B 0.50), else
    ``weak``."""
    if settings.mode != "auto":
        return PolicyMode(settings.mode)
    scores = sorted(d.meta.consistency for d in diagnoses)
    median = scores[len(scores) // 2] if scores else 0.0
    return PolicyMode.strong if median >= settings.strong_reasoner_min_consistency else PolicyMode.weak


async def _repair_one(
    trace: TraceRecord,
    diagnosis: Diagnosis,
    *,
    settings: RepairSettings,
    mode: PolicyMode,
    client: ModelClient | None,
    offline: dict[str, list[str]] | None,
) -> ExampleResult:
    original_answer = diagnosis.meta.answer
    initial_correct = answers_equivalent(original_answer, trace.gold_answer)
    result = ExampleResult(
        id=trace.id,
        problem=trace.problem,
        gold_answer=trace.gold_answer,
        original_answer=original_answer,
        initial_correct=initial_correct,
        triggered=diagnosis.triggered,
        trigger_reasons=diagnosis.trigger_reasons,
        meta_error=diagnosis.meta.error_type.value,
        meta_score=diagnosis.meta.score,
        semantic_score=diagnosis.semantics.score,
        semantic_risks=[r.value for r in diagnosis.semantics.risks],
        final_answer=original_answer,
        final_correct=initial_correct,
    )
    baseline = settings.baseline
    if baseline != Baseline.resolve_all and not diagnosis.triggered:
        return result
    count = 1 if baseline in (Baseline.resolve_all, Baseline.resolve_triggered) else settings.candidates
    without_original = baseline != Baseline.guarded
    for index in range(count):
        style = AttemptStyle.fresh if without_original else STYLE_ORDER[index % len(STYLE_ORDER)]
        if offline is not None:
            texts = offline.get(trace.id, [])
            if index >= len(texts):
                break
            generated = GeneratedCandidate(style=style, text=texts[index], calls=0)
        elif client is not None:
            generated = await generate_candidate(
                client,
                style,
                trace.problem,
                None
                if without_original or diagnosis.meta.error_type == MetaError.generation_failure
                else original_answer,
                diagnosis.hint(),
                max_tokens=settings.max_tokens,
                sample_offset=index,
                with_original=not without_original,
            )
        else:
            break
        result.model_calls += generated.calls
        result.failed_calls += generated.call_failed
        if baseline in (Baseline.resolve_all, Baseline.resolve_triggered):
            answer = extract_answer(generated.text, trace.problem) if generated.text else None
            outcome = CandidateOutcome(
                style=style.value,
                text=generated.text,
                answer=answer,
                correct=answers_equivalent(answer, trace.gold_answer),
                error=generated.error,
            )
            result.candidates.append(outcome)
            if answer is not None and not answers_equivalent(answer, original_answer):
                result.decision, result.final_answer, result.final_correct = "replaced", answer, outcome.correct
                result.acceptance_path = "unconditional"
            break
        verdict = judge_candidate(
            trace.problem,
            diagnosis,
            original_answer,
            generated.text,
            mode=mode if baseline == Baseline.guarded else PolicyMode.weak,
            settings=settings.guards,
            trigger=settings.trigger,
        )
        if baseline == Baseline.best_of_n and verdict.failures == ["policy:no_path"]:
            verdict.failures, verdict.path = [], None
        outcome = CandidateOutcome(
            style=style.value,
            text=generated.text,
            answer=verdict.answer,
            correct=answers_equivalent(verdict.answer, trace.gold_answer),
            failures=verdict.failures,
            path=verdict.path.value if verdict.path else None,
            error=generated.error,
        )
        result.candidates.append(outcome)
        if not verdict.failures:
            result.decision = "replaced"
            result.acceptance_path = verdict.path.value if verdict.path else "gated_best_of_n"
            result.final_answer = verdict.answer
            result.final_correct = outcome.correct
            break
    if (
        result.decision == "kept"
        and result.candidates
        and all(c.error and c.error.startswith("model call failed") for c in result.candidates)
    ):
        result.decision = "undecided"  # every attempt failed at the endpoint: nothing was judged
    return result


async def run_repair(
    traces: list[TraceRecord],
    settings: RepairSettings,
    *,
    client: ModelClient | None = None,
    offline_candidates: dict[str, list[str]] | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[list[ExampleResult], dict[str, Any]]:
    diagnoses = [
        diagnose(t.problem, t.initial_reasoning, generation_failed=t.generation_failed, settings=settings.trigger)
        for t in traces
    ]
    mode = choose_mode(settings, diagnoses)
    semaphore = asyncio.Semaphore(settings.concurrency)

    async def one(trace: TraceRecord, diagnosis: Diagnosis) -> ExampleResult:
        async with semaphore:
            result = await _repair_one(
                trace, diagnosis, settings=settings, mode=mode, client=client, offline=offline_candidates
            )
        if progress:
            progress(1)
        return result

    results = list(await asyncio.gather(*(one(t, d) for t, d in zip(traces, diagnoses, strict=True))))
    report = build_report(
        results,
        settings={
            **settings.model_dump(mode="json"),
            "resolved_mode": mode.value,
            "offline_candidates": offline_candidates is not None,
        },
    )
    return results, report


def write_outputs(out_dir: Path, results: list[ExampleResult], report: dict[str, Any]) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "report.json").write_text(json.dumps(report, indent=2), encoding="utf-8")
    with (out_dir / "examples.jsonl").open("w", encoding="utf-8") as handle:
        for result in results:
            handle.write(result.model_dump_json() + "\n")
