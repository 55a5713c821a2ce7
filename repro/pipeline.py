"""Orchestration: streams problems through the seven stages with bounded concurrency.

Each problem runs as its own task; a candidate moves to its next stage as soon as the current one
finishes, so model calls and Lean checks of different problems overlap (each behind its own bounded
pool). Everything is stored as it happens. Resuming re-enters unfinished problems: every model
answer and Lean result already stored is read back instead of recomputed, and attempts are keyed by
(candidate, stage, attempt number), so nothing is lost, repeated or duplicated.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from repro.config import RunConfig
from repro.lean.protocol import Verifier
from repro.llm.client import ModelClient
from repro.records import (
    Candidate,
    CandidateStatus,
    ReasonCode,
    SourceProblem,
    Stage,
    StageAttempt,
)
from repro.stages import (
    check_alignment,
    formalize,
    literal_text,
    recover_answer,
    rewrite_problem,
    sample_proofs,
    screen_problem,
    screener_disagrees,
    verify_sample,
)
from repro.stages.common import StageResult
from repro.store import RunStore

# Rejections that say nothing about the candidate: the endpoint or the Lean backend failed.
INFRASTRUCTURE_REASONS = frozenset({ReasonCode.model_call_failed, ReasonCode.lean_unavailable})

EventHook = Callable[[str, str, str | None], None]  # (event, stage, reason)


@dataclass
class RunSummary:
    drawn: int = 0
    retained: int = 0
    rejected: int = 0
    # left unfinished by an infrastructure failure or an unexpected error; `--resume` retries them
    incomplete: int = 0
    reasons: Counter[str] = field(default_factory=Counter)


def theorem_name_for(candidate_id: str) -> str:
    return "repro_" + hashlib.sha1(candidate_id.encode()).hexdigest()[:10]


class Pipeline:
    def __init__(
        self,
        config: RunConfig,
        store: RunStore,
        clients: dict[str, ModelClient],
        verifier: Verifier,
        *,
        on_event: EventHook | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.clients = clients
        self.verifier = verifier
        self.on_event = on_event or (lambda event, stage, reason: None)
        self.header = config.lean.header

    # -- bookkeeping ---------------------------------------------------------------------------------
    def _record(self, candidate: Candidate, stage: Stage, number: int, result: StageResult) -> None:
        attempt = StageAttempt(
            candidate_id=candidate.candidate_id,
            problem_id=candidate.problem_id,
            stage=stage,
            attempt_number=number,
            **dict(result),
        )
        if result.model_id:
            candidate.models[stage.value] = result.model_id
            candidate.backends[stage.value] = result.backend_id or "unknown"
        self.store.record_attempt(attempt, candidate)
        self.on_event("attempt", stage.value, result.reason.value if result.reason else None)

    def _reject(self, candidate: Candidate, stage: Stage, reason: ReasonCode) -> None:
        # an infrastructure failure is no verdict: the candidate is unfinished, not rejected
        unfinished = reason in INFRASTRUCTURE_REASONS
        candidate.status = CandidateStatus.unfinished if unfinished else CandidateStatus.rejected
        candidate.reject_stage, candidate.reject_reason = stage, reason
        self.store.save_candidate(candidate)
        self.on_event("unfinished" if unfinished else "rejected", stage.value, reason.value)

    # -- one problem ------------------------------------------------------------------------------
    async def process_problem(self, problem: SourceProblem) -> bool | None:
        """True if retained, False if rejected, None if infrastructure failures left it unfinished."""
        try:
            outcome = await self._process_problem(problem)
        except Exception as error:  # a bug must not take the other problems down with it
            self.store.set_meta(f"error:{problem.problem_id}", f"{type(error).__name__}: {error}"[:2000])
            outcome = None
        self.on_event("problem_done", Stage.answer.value, None)
        return outcome

    async def _process_problem(self, problem: SourceProblem) -> bool | None:
        previous_rewrite: str | None = None
        infrastructure_failed = False
        for rewrite_index in range(self.config.retries.rewrites_per_problem):
            candidate = Candidate(
                candidate_id=f"{problem.problem_id}#r{rewrite_index}",
                problem_id=problem.problem_id,
                rewrite_index=rewrite_index,
            )
            candidate.theorem_name = theorem_name_for(candidate.candidate_id)
            self.store.save_candidate(candidate)
            retained = await self._process_candidate(problem, candidate, previous_rewrite)
            if retained:
                self.store.set_problem_outcome(problem.problem_id, "retained")
                return True
            previous_rewrite = candidate.rewritten_question or previous_rewrite
            infrastructure_failed |= candidate.reject_reason in INFRASTRUCTURE_REASONS
            if infrastructure_failed:
                break  # another rewrite would meet the same failing endpoint; --resume continues here
        if infrastructure_failed:
            return None  # not a verdict about the problem: leave it for --resume
        self.store.set_problem_outcome(problem.problem_id, "rejected")
        return False

    async def _process_candidate(self, problem: SourceProblem, candidate: Candidate, previous: str | None) -> bool:
        config = self.config
        result = await rewrite_problem(
            problem, previous, self.clients["rewrite"], config.model_for("rewrite"), attempt=candidate.rewrite_index
        )
        candidate.rewritten_question = result.output.get("rewritten_question")
        self._record(candidate, Stage.rewrite, 0, result)
        if not result.passed:
            self._reject(candidate, Stage.rewrite, result.reason or ReasonCode.rewrite_empty)
            return False
        question = candidate.rewritten_question or ""

        result = await screen_problem(
            question, self.clients["screen"], config.model_for("screen"), attempt=candidate.rewrite_index
        )
        candidate.screener_answer = result.output.get("answer") or None
        self._record(candidate, Stage.screen, 0, result)
        if not result.passed:
            self._reject(candidate, Stage.screen, result.reason or ReasonCode.infeasible)
            return False

        last_stage, last_reason = Stage.formalize, ReasonCode.no_lean_block
        k = config.prove.k
        for round_index in range(config.retries.formalizations_per_rewrite):
            offset = candidate.rewrite_index * config.retries.formalizations_per_rewrite + round_index
            result = await formalize(
                question,
                candidate.theorem_name or "",
                self.clients["formalize"],
                config.model_for("formalize"),
                self.verifier,
                header=self.header,
                attempt=offset,
            )
            self._record(candidate, Stage.formalize, round_index, result)
            if not result.passed:
                last_stage, last_reason = Stage.formalize, result.reason or ReasonCode.no_lean_block
                continue
            statement = result.output["statement"]
            candidate.lean_statement = statement

            result = await check_alignment(
                question,
                statement,
                self.clients["align"],
                config.model_for("align"),
                asks=config.align.asks,
                attempt=offset,
            )
            self._record(candidate, Stage.align, round_index, result)
            if not result.passed:
                last_stage, last_reason = Stage.align, result.reason or ReasonCode.semantic_mismatch
                continue

            verified = await self._prove(candidate, statement, round_index, offset * k)
            if isinstance(verified, ReasonCode):
                last_stage, last_reason = Stage.prove, verified
                if config.retries.regenerate_formalization_after_proof_failure:
                    continue
                break

            result = await recover_answer(
                question,
                statement,
                candidate.verified_code or "",
                self.clients["extract"],
                config.model_for("extract"),
                self.clients["classify"],
                config.model_for("classify"),
                attempt=offset,
            )
            self._record(candidate, Stage.answer, round_index, result)
            if not result.passed:
                self._reject(candidate, Stage.answer, result.reason or ReasonCode.answer_not_final)
                return False
            candidate.new_answer = literal_text(str(result.output["candidate"]))
            candidate.answer_class = result.output.get("answer_class")
            candidate.answer_disagrees_with_screener = screener_disagrees(
                candidate.screener_answer, candidate.new_answer
            )
            candidate.status = CandidateStatus.retained
            self.store.save_candidate(candidate)
            self.on_event("retained", Stage.answer.value, None)
            return True
        self._reject(candidate, last_stage, last_reason)
        return False

    async def _prove(
        self, candidate: Candidate, statement: str, round_index: int, first_index: int
    ) -> str | ReasonCode:
        """Up to k samples, each stored with its text, finish reason and verdict.

        Returns the verified code, or why there is none: ``proof_not_found``, or an infrastructure
        reason when no sample could be judged at all.
        """
        infrastructure_only = True
        config = self.config
        k = config.prove.k
        settings = config.model_for("prove")
        client = self.clients["prove"]
        batches = [(0, k)] if config.prove.strategy == "parallel" else [(j, 1) for j in range(k)]
        for start, count in batches:
            samples, result = await sample_proofs(
                statement, self.header, client, settings, count=count, first_index=first_index + start
            )
            if not samples:
                self._record(candidate, Stage.prove, round_index * k + start, result)
                return result.reason or ReasonCode.model_call_failed
            verdicts = await asyncio.gather(
                *(
                    verify_sample(
                        statement,
                        sample,
                        self.verifier,
                        header=self.header,
                        allow_native_decide=config.lean.allow_native_decide,
                    )
                    for sample in samples
                )
            )
            found: str | None = None
            for position, (sample, (verdict, verify_result)) in enumerate(zip(samples, verdicts, strict=True)):
                number = round_index * k + start + position
                prove_result = result.model_copy(
                    update={
                        "output": {
                            "text": sample.text,
                            "finish_reason": sample.finish_reason,
                            "sample_index": sample.index,
                        },
                        "tokens_in": result.tokens_in if position == 0 else 0,
                        "tokens_out": result.tokens_out if position == 0 else 0,
                        "model_calls": result.model_calls if position == 0 else 0,
                    }
                )
                self._record(candidate, Stage.prove, number, prove_result)
                self._record(candidate, Stage.verify, number, verify_result)
                infrastructure_only &= verify_result.reason == ReasonCode.lean_unavailable
                if verdict.verified and found is None:
                    found = verdict.checked_code
                    candidate.lean_proof = sample.text
                    candidate.verified_code = verdict.checked_code
                    candidate.proof_attempt_number = start + position
                    lean = verdict.lean
                    candidate.verifier_backend = lean.backend_id if lean else None
                    candidate.verifier_is_real_lean = bool(lean and lean.real_lean)
                    candidate.lean_toolchain = lean.toolchain if lean else None
                    candidate.mathlib_revision = lean.mathlib_revision if lean else None
            if found is not None:
                self.store.save_candidate(candidate)
                return found
        return ReasonCode.lean_unavailable if infrastructure_only else ReasonCode.proof_not_found

    # -- many problems ---------------------------------------------------------------------------
    async def run(self, problems: Iterable[SourceProblem], *, target: int | None = None) -> RunSummary:
        """Process ``problems`` in order; with ``target``, stop drawing once that many are retained."""
        summary = RunSummary()
        outcomes = self.store.problem_outcomes()
        summary.retained = sum(1 for value in outcomes.values() if value == "retained")
        semaphore = asyncio.Semaphore(self.config.problems_in_flight)
        tasks: list[asyncio.Task[None]] = []
        enough = asyncio.Event()
        if target is not None and summary.retained >= target:
            enough.set()

        async def run_one(problem: SourceProblem) -> None:
            try:
                retained = await self.process_problem(problem)
            finally:
                semaphore.release()
            if retained is None:
                summary.incomplete += 1
            elif retained:
                summary.retained += 1
                if target is not None and summary.retained >= target:
                    enough.set()
            else:
                summary.rejected += 1

        for problem in problems:
            if outcomes.get(problem.problem_id) is not None:
                continue
            await semaphore.acquire()
            if enough.is_set():
                semaphore.release()
                break
            self.store.add_problems([problem])
            summary.drawn += 1
            tasks.append(asyncio.create_task(run_one(problem)))
        if tasks:
            await asyncio.gather(*tasks)
        return summary
