"""Everything the HTML report shows about one run, read from its directory (store and config).

Reads through the store's public functions and ``repro.metrics``; the store is opened read-only in
spirit (nothing is written). Long model and Lean texts are capped so that a run of thousands of
candidates still gives a file of a few MB; the cap is visible in the page and the full text stays in
the run store (``repro audit``).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, Field

from repro.config import RunConfig
from repro.exit_codes import ReproError
from repro.metrics import run_metrics
from repro.records import STAGE_ORDER, AttemptStatus, Candidate, CandidateStatus, Stage, StageAttempt
from repro.store import STORE_FILENAME, RunReader

TEXT_CAP = 2400  # characters kept of one model or Lean text in the page
SAMPLE_CAP = 1600  # of one prover sample: there are k of them per statement


class ReportError(ReproError, RuntimeError):
    pass


class LeanSetup(BaseModel):
    backend: str
    toolchain: str | None = None
    mathlib_revision: str | None = None
    real_lean: bool = False
    checks: int = 0


class JudgeSetup(BaseModel):
    """One kernel judge as the run's judge attempts name it, and how many judgements it gave."""

    tool: str
    revision: str | None = None
    toolchain: str | None = None
    real: bool = False
    confinement: str | None = None
    judgements: int = 0


class StageModelRow(BaseModel):
    stage: str
    model: str
    backend: str


class Header(BaseModel):
    run_name: str
    run_dir: str
    demonstration: bool
    config_summary: dict[str, str]
    models: list[StageModelRow]
    lean: list[LeanSetup]
    judges: list[JudgeSetup] = Field(default_factory=list)
    unverified_sources: list[str] = Field(default_factory=list)
    repro_version: str | None = None
    created_at: str | None = None


class RunReport(BaseModel):
    """One run's report data: the header, the figures' numbers and one audit row per candidate."""

    header: Header
    k: int
    funnel: dict[str, Any]
    stage_order: list[str]
    rates: dict[str, Any]
    rate_counts: dict[str, dict[str, list[int]]]
    # statements our Lean checks found vacuous or refuted, in all and per level and type
    statement_checks: dict[str, Any] = {}
    # answers per form and why verified statements gave none (repro.metrics.answer_metrics)
    answers: dict[str, Any] = {}
    # what the kernel judge said over the run (repro.metrics.judge_figures)
    judge: dict[str, Any] = {}
    prover_pass_at: dict[str, float | None]
    prover_pass_at_label: str
    prover_statements: int
    models: dict[str, dict[str, Any]]
    lean_seconds: dict[str, float]
    cost_per_retained: dict[str, float | None]
    taxonomy: list[dict[str, Any]]
    rejected_samples: int
    candidates: list[dict[str, Any]]


def cap(text: str | None, limit: int = TEXT_CAP) -> str | None:
    """Head and tail of a long text with a visible marker; models' texts can run to tens of KB.

    The tail is the larger part: a prover's Lean block and a truncation come at the end."""
    if text is None or len(text) <= limit:
        return text
    head, tail = text[: limit // 3], text[-limit * 2 // 3 :]
    return f"{head}\n[… {len(text) - len(head) - len(tail)} characters omitted; full text: repro audit …]\n{tail}"


def read_config(run_dir: Path) -> dict[str, Any]:
    path = run_dir / "config.yaml"
    if not path.is_file():
        return {}
    loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    return loaded if isinstance(loaded, dict) else {}


def _summary(config: dict[str, Any]) -> dict[str, str]:
    dataset = config.get("dataset") or {}
    prove = config.get("prove") or {}
    retries = config.get("retries") or {}
    lean = config.get("lean") or {}
    summary = {
        "dataset": f"{dataset.get('name', '?')} ({dataset.get('path') or dataset.get('hf_name') or 'default source'})",
        "limit / target": f"{dataset.get('limit') or 'none'} / {config.get('target') or 'none'}",
        "prover samples k": f"{prove.get('k', '?')} ({prove.get('strategy', '?')})",
        "retries": ", ".join(f"{key} {value}" for key, value in retries.items()) or "defaults",
        "alignment asks": str((config.get("align") or {}).get("asks", 3)),
        "Lean backend (config)": f"{lean.get('backend', '?')}, {lean.get('workers', '?')} workers,"
        f" timeout {lean.get('timeout_s', '?')} s",
        "cache": str(config.get("cache", "read_write")),
    }
    return summary


def _judges(judged: list[StageAttempt]) -> list[JudgeSetup]:
    found: Counter[tuple[str, str | None, str | None, bool, str | None]] = Counter()
    for attempt in judged:
        verdict = attempt.output.get("judge") or {}
        key = (
            str(verdict.get("tool") or "?"),
            verdict.get("tool_revision"),
            verdict.get("toolchain"),
            bool(verdict.get("real")),
            verdict.get("confinement"),
        )
        found[key] += 1
    return [
        JudgeSetup(tool=t, revision=r, toolchain=c, real=real, confinement=m, judgements=n)
        for (t, r, c, real, m), n in found.items()
    ]


def _header(
    run_dir: Path,
    store: RunReader,
    config: dict[str, Any],
    verify: list[StageAttempt],
    judged: list[StageAttempt] | None = None,
    not_verified: list[str] | None = None,
) -> Header:
    calls = store.model_calls()
    seen: dict[tuple[str, str, str], None] = {}
    for call in calls:
        seen[(call.stage, call.model_id, call.backend_id)] = None
    configured = config.get("models") or {}
    rows = [StageModelRow(stage=stage, model=model, backend=backend) for stage, model, backend in seen]
    for stage, settings in configured.items():
        if isinstance(settings, dict) and not any(row.stage == stage for row in rows):
            rows.append(
                StageModelRow(stage=stage, model=str(settings.get("model")), backend=str(settings.get("backend")))
            )
    lean: dict[tuple[str, str | None, str | None, bool], int] = Counter()
    for attempt in verify:
        backend = attempt.output.get("lean_backend")
        if backend:
            lean[
                (
                    backend,
                    attempt.output.get("toolchain"),
                    attempt.output.get("mathlib_revision"),
                    bool(attempt.output.get("real_lean")),
                )
            ] += 1
    lean_rows = [
        LeanSetup(backend=b, toolchain=t, mathlib_revision=m, real_lean=r, checks=n) for (b, t, m, r), n in lean.items()
    ]
    if not lean_rows:
        settings = config.get("lean") or {}
        lean_rows = [LeanSetup(backend=str(settings.get("backend", "?")) + " (configured; no proof checked yet)")]
    judges = _judges(judged or [])
    # the banner's reasons are status's (repro.metrics.not_verified_because), plus what the checks themselves
    # say: a sample checked by a fake Lean or judged by a stand-in even where no candidate was retained
    unverified = list(not_verified or [])
    fake_lean = sorted({row.backend for row in lean_rows if not row.real_lean and row.checks})
    if fake_lean and not any(reason.startswith("Lean verdicts") for reason in unverified):
        unverified.append("Lean verdicts from a backend that is not real Lean: " + ", ".join(fake_lean))
    stand_ins = sorted({row.tool for row in judges if not row.real})
    if stand_ins and not any(reason.startswith("kernel-judge") for reason in unverified):
        unverified.append("kernel-judge verdicts from a stand-in, not Lean's kernel: " + ", ".join(stand_ins))
    return Header(
        run_name=str(config.get("name", run_dir.name)),
        run_dir=str(run_dir),
        demonstration=bool(config.get("demonstration")),
        config_summary=_summary(config),
        models=sorted(rows, key=lambda r: (_stage_rank(r.stage), r.model)),
        lean=lean_rows,
        judges=judges,
        unverified_sources=unverified,
        repro_version=store.get_meta("repro_version"),
        created_at=store.get_meta("created_at"),
    )


def _stage_rank(stage: str) -> int:
    order = ["rewrite", "screen", "formalize", "align", "prove", "verify", "judge", "extract", "classify", "answer"]
    return order.index(stage) if stage in order else len(order)


def _messages(attempt: StageAttempt) -> list[dict[str, Any]]:
    return [
        {"severity": m.severity, "line": m.line, "column": m.column, "text": cap(m.text, 800)}
        for m in attempt.lean_messages
    ]


def _candidate_row(
    candidate: Candidate, attempts: list[StageAttempt], problem: dict[str, Any], k: int
) -> dict[str, Any]:
    by_stage: dict[str, list[StageAttempt]] = defaultdict(list)
    for attempt in attempts:
        by_stage[attempt.stage.value].append(attempt)
    verify = {a.attempt_number: a for a in by_stage["verify"]}
    judgements = [_judgement(a) for a in sorted(by_stage["judge"], key=lambda a: a.attempt_number)]
    judged_samples = {j["of_attempt"]: j for j in judgements if j["screened_by"] == "verify"}

    def round_of(attempt: StageAttempt, legacy: int) -> int:
        """The formalization round whose statement the attempt worked on (``inputs``); a store older
        than attempt inputs numbered attempts by round, which ``legacy`` reads back."""
        return attempt.inputs.get(Stage.formalize.value, legacy)

    samples = []
    per_round: dict[int, int] = defaultdict(int)  # samples are numbered within their round (n11), 1..k
    for attempt in sorted(by_stage["prove"], key=lambda a: a.attempt_number):
        sample_round = round_of(attempt, attempt.attempt_number // max(k, 1))
        per_round[sample_round] += 1
        check = verify.get(attempt.attempt_number)
        text = attempt.output.get("text") or attempt.output.get("error")
        checked = check.output.get("checked_code") if check else None
        # the checked code is our signature + the prover's body: usually verbatim in the output already
        same = bool(checked and text and checked.strip() in text)
        samples.append(
            {
                "number": attempt.attempt_number,
                "in_round": per_round[sample_round],
                "round": sample_round,
                "text": cap(text, SAMPLE_CAP),
                "finish": attempt.output.get("finish_reason"),
                "status": check.status.value if check else attempt.status.value,
                "reason": (check.reason.value if check and check.reason else None)
                or (attempt.reason.value if attempt.reason else None),
                "reasons": check.output.get("reasons", []) if check else [],
                "details": [cap(d, 400) for d in (check.output.get("details") or [])] if check else [],
                "taxonomy": check.taxonomy if check else [],
                "checked_code": None if same else cap(checked),
                "checked_code_in_output": same,
                "messages": _messages(check) if check else [],
                "real_lean": bool(check.output.get("real_lean")) if check else False,
                "lean_seconds": round(check.lean_seconds, 3) if check else 0.0,
                # the kernel judge on this sample (None: the screen refused it, or it was not asked)
                "judge": judged_samples.get(attempt.attempt_number),
            }
        )
    formalizations = [
        {
            "round": a.attempt_number,
            "status": a.status.value,
            "reason": a.reason.value if a.reason else None,
            "statement": cap(a.output.get("statement")),
            "reply": None if a.output.get("statement") else cap(a.output.get("reply")),
            "messages": _messages(a),
        }
        for a in by_stage["formalize"]
    ]
    alignment = [
        {
            "round": round_of(a, a.attempt_number),
            "status": a.status.value,
            "verdicts": a.output.get("verdicts", []),
            "analyses": [cap(text, 1200) for text in a.output.get("analyses") or []],
            "error": a.output.get("error"),
        }
        for a in by_stage["align"]
    ]
    checks = [
        {
            "attempt": a.attempt_number,
            "round": round_of(a, a.attempt_number // 2),
            "kind": "refutation" if a.attempt_number % 2 else "vacuity",
            "status": a.status.value,
            "reason": a.reason.value if a.reason else None,
            "outcome": a.output.get("status"),
            "derivation": cap(a.output.get("derivation"), 1200),
        }
        for a in by_stage["check"]
    ]
    salvage = [
        {
            "attempt": a.attempt_number,
            "round": round_of(a, int(a.output.get("of_attempt") or 0) // max(k, 1)),
            "of_sample": a.output.get("of_attempt"),
            "status": a.status.value,
            "reason": a.reason.value if a.reason else None,
            "kinds": a.output.get("salvage_kinds") or [],
            "messages": _messages(a),
        }
        for a in by_stage["salvage"]
    ]
    screen = next(iter(by_stage["screen"]), None)
    answer = next(iter(reversed(by_stage["answer"])), None)
    reasons = sorted({a.reason.value for a in attempts if a.reason} | _final_reason(candidate))
    return {
        "id": candidate.candidate_id,
        "problem": candidate.problem_id,
        "level": problem.get("level") or "",
        "type": problem.get("type") or "",
        "status": candidate.status.value,
        "stage": candidate.reject_stage.value if candidate.reject_stage else candidate.status.value,
        "reason": candidate.reject_reason.value if candidate.reject_reason else "",
        "reasons": reasons,
        "original": cap(problem.get("question")),
        "rewritten": cap(candidate.rewritten_question),
        "statement": cap(candidate.lean_statement),
        "screen": {
            "verdict": screen.output.get("verdict") if screen else None,
            "answer": screen.output.get("answer") if screen else None,
            "analysis": cap(screen.output.get("analysis"), 600) if screen else None,
            "status": screen.status.value if screen else None,
        },
        "formalizations": formalizations,
        "alignment": alignment,
        "checks": checks,
        "salvage": salvage,
        "samples": samples,
        "answer": {
            "candidate": answer.output.get("candidate") if answer else None,
            "method": answer.output.get("method") if answer else None,
            "class": answer.output.get("answer_class") if answer else None,
            "class_reason": answer.output.get("class_reason") if answer else None,
            "status": answer.status.value if answer else None,
            "reason": answer.reason.value if answer and answer.reason else None,
        },
        "new_answer": candidate.new_answer,
        "real_lean": candidate.verifier_is_real_lean,
        "judgements": judgements,
        "judge_tool": candidate.judge_tool,
        "judge_real": candidate.judge_real,
        "verified": candidate.verified,
    }


def _judgement(attempt: StageAttempt) -> dict[str, Any]:
    verdict = attempt.output.get("judge") or {}
    return {
        "screened_by": attempt.output.get("screened_by"),
        "of_attempt": attempt.output.get("of_attempt"),
        "status": verdict.get("status") or attempt.status.value,
        "overrules_screen": bool(attempt.output.get("overrules_screen")),
        "tool": verdict.get("tool"),
        "real": bool(verdict.get("real")),
        "detail": cap(verdict.get("detail"), 800),
        "cause": verdict.get("cause"),
    }


def _final_reason(candidate: Candidate) -> set[str]:
    return {candidate.reject_reason.value} if candidate.reject_reason else set()


def _rate_counts(store: RunReader) -> dict[str, dict[str, list[int]]]:
    """[retained, finished] overall and per level and type (the counts behind the rates)."""
    outcomes = store.problem_outcomes()
    table: dict[str, dict[str, list[int]]] = {"overall": {}, "level": {}, "type": {}}
    for problem in store.problems():
        outcome = outcomes.get(problem.problem_id)
        if outcome is None:
            continue
        hit = int(outcome == "retained")
        for group, key in (("overall", "all"), ("level", problem.level), ("type", problem.type)):
            if key:
                counts = table[group].setdefault(key, [0, 0])
                counts[0] += hit
                counts[1] += 1
    return table


def _taxonomy(verify: list[StageAttempt]) -> tuple[list[dict[str, Any]], int]:
    rejected = [a for a in verify if a.status == AttemptStatus.rejected]
    counts: Counter[str] = Counter()
    example: dict[str, str] = {}
    for attempt in rejected:
        facts = attempt.taxonomy or ([attempt.reason.value] if attempt.reason else ["unclassified"])
        for fact in facts:
            counts[fact] += 1
            example.setdefault(fact, attempt.candidate_id)
    rows = [
        {"fact": fact, "count": count, "share": round(count / len(rejected), 4), "example": example[fact]}
        for fact, count in counts.most_common()
    ]
    return rows, len(rejected)


def _run_config(config: dict[str, Any]) -> RunConfig | None:
    try:
        return RunConfig.model_validate(config) if config else None
    except ValueError:
        return None  # an older config: the banner then reads only what the checks recorded


def collect_run(run_dir: Path) -> RunReport:
    if not (run_dir / STORE_FILENAME).is_file():
        raise ReportError(f"{run_dir}: no run store ({STORE_FILENAME}); is this a run directory?")
    config = read_config(run_dir)
    k = int((config.get("prove") or {}).get("k", 1))
    strategy = str((config.get("prove") or {}).get("strategy", "parallel"))
    store = RunReader(run_dir)
    try:
        metrics = run_metrics(store, k, strategy, config=_run_config(config))
        attempts = store.attempts()
        by_candidate: dict[str, list[StageAttempt]] = defaultdict(list)
        for attempt in attempts:
            by_candidate[attempt.candidate_id].append(attempt)
        verify = [a for a in attempts if a.stage.value == "verify"]
        judged = [a for a in attempts if a.stage.value == "judge"]
        problems = {p.problem_id: p.model_dump() for p in store.problems()}
        candidates = [
            _candidate_row(c, by_candidate[c.candidate_id], problems.get(c.problem_id, {}), k)
            for c in store.candidates()
        ]
        lean_seconds: dict[str, float] = defaultdict(float)
        for attempt in attempts:
            lean_seconds[attempt.stage.value] += attempt.lean_seconds
        pass_at = metrics["rates"]["pass_at"]
        taxonomy, rejected_samples = _taxonomy(verify)
        return RunReport(
            header=_header(run_dir, store, config, verify, judged, metrics["not_verified"]),
            k=k,
            funnel=metrics["funnel"],
            stage_order=[stage.value for stage in STAGE_ORDER],
            rates=metrics["rates"],
            rate_counts=_rate_counts(store),
            statement_checks=metrics["statement_checks"],
            answers=metrics.get("answers") or {},
            judge=metrics["judge"],
            prover_pass_at=pass_at["values"],
            prover_statements=pass_at["statements"],
            prover_pass_at_label=pass_at["label"],
            models=metrics["models"],
            lean_seconds={stage: round(value, 3) for stage, value in lean_seconds.items() if value},
            cost_per_retained=metrics["cost_per_retained"],
            taxonomy=taxonomy,
            rejected_samples=rejected_samples,
            candidates=candidates,
        )
    finally:
        store.close()


def retained_problems(report: RunReport) -> set[str]:
    return {row["problem"] for row in report.candidates if row["status"] == CandidateStatus.retained.value}
