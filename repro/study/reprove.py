"""Feed a run from a study: reuse a study's verified proof for a candidate whose prover failed.

Only a candidate rejected at the prove, verify or judge stage qualifies (everything before it passed: rewrite,
screen, formalization, alignment), and only a proof the study verified for the very same statement
text under the very same header, and only a proof the study's kernel judge passed. A proof passed by a
stand-in judge or checked by a stand-in Lean backend is never taken by a run on real Lean; a run on a stand-in Lean
(tests, demos) may take it, and the candidate then carries ``judge_real = False`` so it can never be
released as verified. The run re-checks the proof through the screen with its own verifier and then
through its own judge (identical code is answered from their caches), exactly as the pipeline would, and
a judge that gives no verdict leaves the candidate as it was for the next ``--reprove-with``. Then it
continues to answer extraction exactly as the pipeline would. The candidate records which study prover
produced its proof, which the release's provenance shows.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from repro.config import RunConfig
from repro.judge import verify_proof
from repro.judge.verdict import Judge, JudgeStatus
from repro.lean import Verifier
from repro.llm.client import ModelClient
from repro.records import (
    AttemptOutcome,
    AttemptStatus,
    Candidate,
    CandidateStatus,
    LeanMessageRecord,
    ReasonCode,
    Stage,
    StageAttempt,
)
from repro.stages import apply_answer, recover_answer, screener_disagrees
from repro.stages.common import input_hash
from repro.stages.judge import judge_attempt_number, judge_request, judge_screened, submission_of, take_judge_provenance
from repro.store import RunStore
from repro.study.records import ProverEntry, SampleOutcome
from repro.study.store import StudyStore

# a rejection for these reasons says nothing about the candidate; `--resume` retries it instead
# a candidate rejected here failed only at proving: its statement passed everything before
_PROOF_STAGES = (Stage.prove, Stage.verify, Stage.judge)
_INFRASTRUCTURE = frozenset({ReasonCode.model_call_failed, ReasonCode.lean_unavailable, ReasonCode.judge_unavailable})


class StudyProof(BaseModel):
    prover: str
    model: str
    statement_id: str
    sample: SampleOutcome


class ReproveSummary(BaseModel):
    considered: int = 0
    without_study_proof: int = 0
    gate_rejected: int = 0
    # the run's screen passed a study proof and the run's judge rejected it (the judge wins), or gave no verdict
    judge_rejected: int = 0
    judge_unavailable: int = 0
    retained: int = 0
    rejected_at_answer: int = 0
    reused: list[str] = Field(default_factory=list)  # candidate ids that took a study proof


def reusable(sample: SampleOutcome, *, run_uses_real_lean: bool) -> bool:
    """A study sample may feed a run only if the study's judge passed it (``verified`` means no less), on
    real Lean and a real judge, unless the run's Lean is a stand-in too."""
    judged = sample.judge_status == JudgeStatus.passed.value
    real = sample.real_lean and sample.judge_real
    return sample.verified and judged and (real or not run_uses_real_lean)


def study_proofs(study_dir: str | Path) -> dict[tuple[str, str], list[StudyProof]]:
    """Verified study samples keyed by the exact (statement text, header) they were verified for."""
    with StudyStore(study_dir, create=False) as store:
        statements = {s.id: s for s in store.statements()}
        provers: dict[str, ProverEntry] = {p.name: p for p in store.provers()}
        order = {name: position for position, name in enumerate(provers)}
        found: dict[tuple[str, str], list[StudyProof]] = {}
        for sample in store.verified_samples():
            statement = statements[sample.statement_id]
            found.setdefault((statement.statement, statement.header), []).append(
                StudyProof(
                    prover=sample.prover,
                    model=provers[sample.prover].settings.model,
                    statement_id=statement.id,
                    sample=sample,
                )
            )
    for proofs in found.values():
        proofs.sort(key=lambda proof: (order.get(proof.prover, 0), proof.sample.sample_index))
    return found


def _next_number(store: RunStore, candidate_id: str, stage: Stage) -> int:
    numbers = [a.attempt_number for a in store.attempts(candidate_id=candidate_id, stage=stage.value)]
    return max(numbers, default=-1) + 1


def _record(store: RunStore, candidate: Candidate, stage: Stage, number: int, result: AttemptOutcome) -> None:
    attempt = StageAttempt(
        candidate_id=candidate.candidate_id,
        problem_id=candidate.problem_id,
        stage=stage,
        attempt_number=number,
        **dict(result),
    )
    store.record_attempt(attempt, candidate)


async def _try_proof(
    config: RunConfig,
    store: RunStore,
    verifier: Verifier,
    judge: Judge,
    candidate: Candidate,
    proof: StudyProof,
    study_dir: str,
    number: int,
) -> JudgeStatus | None:
    """Screen the study proof with the run's verifier and judge what passed with the run's judge, recording
    prove, verify and judge attempts at ``number``; the judge's status, or None when the screen refused it.
    The candidate takes the proof only on the judge's pass."""
    statement = candidate.lean_statement or ""
    sample = proof.sample
    prove_result = AttemptOutcome(
        status=AttemptStatus.passed,
        input_hash=input_hash("prove-from-study", statement, sample.text),
        output={
            "text": sample.text,
            "finish_reason": sample.finish_reason,
            "sample_index": sample.sample_index,
            "reused_from_study": study_dir,
            "study_prover": proof.prover,
            "study_statement_id": proof.statement_id,
        },
        model_id=proof.model,
        backend_id=f"study:{proof.prover}",
    )
    _record(store, candidate, Stage.prove, number, prove_result)
    verdict = await verify_proof(
        statement,
        sample.text,
        verifier,
        header=config.lean.header,
        allow_native_decide=config.lean.allow_native_decide,
        finish_reason=sample.finish_reason,
        limits=config.lean.static_limits,
    )
    lean = verdict.lean
    verify_result = AttemptOutcome(
        status=AttemptStatus.passed if verdict.verified else AttemptStatus.rejected,
        reason=None if verdict.verified else (verdict.reasons[0] if verdict.reasons else ReasonCode.lean_error),
        input_hash=input_hash("verify", statement, sample.text),
        output={
            "reasons": [reason.value for reason in verdict.reasons],
            "details": verdict.details,
            "checked_code": verdict.checked_code,
            "axioms": verdict.axioms,
            "lean_backend": lean.backend_id if lean else None,
            "real_lean": bool(lean and lean.real_lean),
            "reused_from_study": study_dir,
        },
        lean_messages=[
            LeanMessageRecord(severity=m.severity, line=m.line, column=m.column, text=m.text) for m in verdict.messages
        ],
        taxonomy=[fact.value for fact in verdict.taxonomy],
        lean_seconds=0.0 if lean is None or lean.cached else lean.elapsed_s,
    )
    _record(store, candidate, Stage.verify, number, verify_result)
    if not verdict.verified or lean is None:
        return None
    request = judge_request(
        f"{candidate.candidate_id}/study/{number}",
        header=config.lean.header,
        statement=statement,
        theorem_name=candidate.theorem_name or "",
        verdict=verdict,
        toolchain=config.lean.toolchain,
    )
    judged, judge_result = await judge_screened(judge, request, screened_by=Stage.verify, of_attempt=number)
    judge_result.output["reused_from_study"] = study_dir
    if judged.passed:
        candidate.lean_proof = sample.text
        candidate.verified_code = submission_of(verdict)
        candidate.proof_attempt_number = None  # not one of the run's own prover samples: pass@j ignores it
        candidate.proof_lever = "study"  # released rows say so: not this run's prover's own sample
        candidate.verifier_backend = lean.backend_id
        candidate.verifier_is_real_lean = lean.real_lean
        candidate.lean_toolchain = lean.toolchain
        candidate.mathlib_revision = lean.mathlib_revision
        take_judge_provenance(candidate, judged)
        candidate.models[Stage.prove.value] = proof.model
        candidate.backends[Stage.prove.value] = f"study:{proof.prover}"
    _record(store, candidate, Stage.judge, judge_attempt_number(Stage.verify, number), judge_result)
    return judged.status


async def reprove_with_study(
    config: RunConfig,
    store: RunStore,
    clients: dict[str, ModelClient],
    verifier: Verifier,
    judge: Judge,
    study_dir: str | Path,
) -> ReproveSummary:
    """Retain what a study's verified proofs can rescue; no rewrite/screen/formalize/align call is made."""
    summary = ReproveSummary()
    proofs = study_proofs(study_dir)
    outcomes = store.problem_outcomes()
    header = config.lean.header
    for candidate in store.candidates(CandidateStatus.rejected):
        if candidate.reject_stage not in _PROOF_STAGES or candidate.reject_reason in _INFRASTRUCTURE:
            continue
        if outcomes.get(candidate.problem_id) != "rejected" or not candidate.lean_statement:
            continue
        summary.considered += 1
        options = [
            proof
            for proof in proofs.get((candidate.lean_statement, header), [])
            if reusable(proof.sample, run_uses_real_lean=verifier.real_lean or judge.real)
        ]
        if not options:
            summary.without_study_proof += 1
            continue
        taken = None
        # numbered here, not re-read per try: a try's attempts may still sit in the store's write queue
        number = max(_next_number(store, candidate.candidate_id, Stage.prove), 0)
        statuses: list[JudgeStatus | None] = []
        for proof in options:
            status = await _try_proof(config, store, verifier, judge, candidate, proof, str(study_dir), number)
            number += 1
            statuses.append(status)
            if status == JudgeStatus.passed:
                taken = proof
                break
            if status == JudgeStatus.unavailable:
                break  # no verdict: the candidate stays as it was; the next --reprove-with judges it again
        if taken is None:
            if JudgeStatus.unavailable in statuses:
                summary.judge_unavailable += 1
            elif JudgeStatus.rejected in statuses:
                summary.judge_rejected += 1
            else:
                summary.gate_rejected += 1
            continue
        summary.reused.append(candidate.candidate_id)
        rounds = len(store.attempts(candidate_id=candidate.candidate_id, stage=Stage.formalize.value))
        offset = candidate.rewrite_index * config.retries.formalizations_per_rewrite + max(rounds - 1, 0)
        result = await recover_answer(
            candidate.rewritten_question or "",
            candidate.lean_statement,
            candidate.verified_code or "",
            clients["extract"],
            config.model_for("extract"),
            clients["classify"],
            config.model_for("classify"),
            attempt=offset,
            verifier=verifier,
            header=config.lean.header,
        )
        number = _next_number(store, candidate.candidate_id, Stage.answer)
        if not result.passed:
            candidate.reject_stage = Stage.answer
            candidate.reject_reason = result.reason or ReasonCode.answer_not_final
            _record(store, candidate, Stage.answer, number, result)
            summary.rejected_at_answer += 1
            continue
        apply_answer(candidate, result.output)
        candidate.answer_disagrees_with_screener = screener_disagrees(candidate.screener_answer, candidate.new_answer)
        candidate.status = CandidateStatus.retained
        candidate.reject_stage = candidate.reject_reason = None
        _record(store, candidate, Stage.answer, number, result)
        store.set_problem_outcome(candidate.problem_id, "retained")
        outcomes[candidate.problem_id] = "retained"
        summary.retained += 1
    return summary
