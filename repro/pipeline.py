"""Orchestration: streams problems through the seven stages with bounded concurrency.

Each problem runs as its own task; a candidate moves to its next stage as soon as the current one
finishes, so model calls and Lean checks of different problems overlap (each behind its own bounded
pool). Everything is stored as it happens. Resuming re-enters unfinished problems: every model
answer and Lean result already stored is read back instead of recomputed, and attempts are keyed by
(candidate, stage, attempt number), so nothing is lost, repeated or duplicated.

The problems arrive as any iterable and are drawn one at a time as capacity frees up, so a run of
a million problems never holds the dataset, its tasks or its outcomes in memory: per-problem work
and memory stay constant however long the run is.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from repro.config import MAX_FEEDBACK_ROUNDS, MAX_SALVAGE_VARIANTS, RunConfig
from repro.judge.verdict import Judge, JudgeStatus, JudgeVerdict, Verdict
from repro.lean.protocol import Verifier
from repro.lean.statement_checks import check_statement, refute_statement
from repro.llm.client import ModelClient
from repro.llm.protocol import ChatMessage
from repro.records import (
    AttemptStatus,
    Candidate,
    CandidateStatus,
    ReasonCode,
    SourceProblem,
    Stage,
    StageAttempt,
)
from repro.stages import (
    ProofSample,
    apply_answer,
    check_alignment,
    formalize,
    literal_text,
    proposed_answer,
    recover_answer,
    rewrite_problem,
    sample_proofs,
    screen_problem,
    screener_disagrees,
    verify_sample,
)
from repro.stages.common import StageResult, Stopwatch, input_hash
from repro.stages.feedback import FeedbackThread, ask_again, feedback_style, lean_errors, wants_feedback
from repro.stages.judge import (
    judge_attempt_number,
    judge_request,
    judge_screened,
    submission_of,
    take_judge_provenance,
)
from repro.stages.salvage import salvage_sample
from repro.store import RunStore
from repro.waiting import about

# Rejections that say nothing about the candidate: the endpoint, the Lean backend or the judge failed.
INFRASTRUCTURE_REASONS = frozenset(
    {ReasonCode.model_call_failed, ReasonCode.lean_unavailable, ReasonCode.judge_unavailable}
)

EventHook = Callable[[str, str, str | None], None]  # (event, stage, reason)


@dataclass
class _ProofSearch:
    """What the judge said over one candidate's proof search (raw samples, salvage, feedback rounds)."""

    judge_rejected: bool = False  # the screen passed a text the judge rejected: the judge won
    judge_unavailable: bool = False  # the judge gave no verdict: the search stops, the problem stays unfinished


@dataclass
class RunSummary:
    drawn: int = 0
    retained: int = 0
    rejected: int = 0
    # left unfinished by an infrastructure failure or an unexpected error; `--resume` retries them
    incomplete: int = 0
    reasons: Counter[str] = field(default_factory=Counter)
    # already finished in an earlier (interrupted) run of the same directory
    already_finished: int = 0
    # ``--reprove-with``: candidates whose study proof the run's judge gave no verdict on (left as they were)
    reprove_unjudged: int = 0


def _thread(text: str, verdict: Verdict, number: int, messages: list[ChatMessage] | None = None) -> FeedbackThread:
    return FeedbackThread(
        messages=messages or [],
        text=text,
        # the prover's own code, shown back to it: Lean's positions in what it checked are the same
        checked_code=verdict.prover_code or verdict.checked_code or "",
        errors=lean_errors(verdict),
        parent_attempt=number,
    )


def theorem_name_for(candidate_id: str) -> str:
    return "repro_" + hashlib.sha1(candidate_id.encode()).hexdigest()[:10]


class Pipeline:
    def __init__(
        self,
        config: RunConfig,
        store: RunStore,
        clients: dict[str, ModelClient],
        verifier: Verifier,
        judge: Judge,
        *,
        on_event: EventHook | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.clients = clients
        self.verifier = verifier
        # the kernel judge (built from RunConfig.judge by the caller): only its pass retains a candidate
        self.judge = judge
        self.on_event = on_event or (lambda event, stage, reason: None)
        self.header = config.lean.header
        # problem id -> the reason code that left it unfinished, until its progress event is sent
        self._unfinished_codes: dict[str, str] = {}
        # candidate id -> the last infrastructure failure seen for it: why its problem is unfinished
        self._infrastructure_causes: dict[str, str] = {}
        # candidate id -> {stage: attempt number} whose products its next attempts work on (StageAttempt.inputs)
        self._inputs: dict[str, dict[str, int]] = {}
        # candidate id -> the first attempt an infrastructure failure left without a verdict (stage, reason):
        # until a later success makes it moot, no rejection of the candidate is final
        self._no_verdict: dict[str, tuple[Stage, ReasonCode]] = {}

    def _uses(self, candidate: Candidate, stage: Stage, number: int | None) -> None:
        """From now on the candidate's attempts work on the product of ``stage`` attempt ``number``
        (``None``: no longer); every attempt stored records these pointers as its ``inputs``."""
        inputs = self._inputs.setdefault(candidate.candidate_id, {})
        if number is None:
            inputs.pop(stage.value, None)
        else:
            inputs[stage.value] = number

    # -- bookkeeping ---------------------------------------------------------------------------------
    def _record(
        self,
        candidate: Candidate,
        stage: Stage,
        number: int,
        result: StageResult,
        *,
        candidate_changed: bool = True,
        also_uses: dict[str, int] | None = None,
    ) -> None:
        """Store one attempt; the candidate row goes with it only when the candidate changed since its
        last write (a stage transition), not once per prover sample. Its ``inputs`` are the pointers of
        :meth:`_uses`, plus ``also_uses`` (what only this attempt worked on)."""
        attempt = StageAttempt(
            candidate_id=candidate.candidate_id,
            problem_id=candidate.problem_id,
            stage=stage,
            attempt_number=number,
            inputs=self._inputs.get(candidate.candidate_id, {}) | (also_uses or {}),
            **dict(result),
        )
        if result.model_id:
            candidate.models[stage.value] = result.model_id
            candidate.backends[stage.value] = result.backend_id or "unknown"
        self.store.record_attempt(attempt, candidate if candidate_changed else None)
        if result.reason in INFRASTRUCTURE_REASONS:
            self._no_verdict.setdefault(candidate.candidate_id, (stage, result.reason))
            detail = result.output.get("error") or result.output.get("lean_detail") or result.output.get("details")
            self._infrastructure_causes[candidate.candidate_id] = f"{stage.value}: {result.reason.value}" + (
                f": {str(detail)[:500]}" if detail else ""
            )
        self.on_event("attempt", stage.value, result.reason.value if result.reason else None)

    def _stopped(self, candidate: Candidate) -> bool:
        """True, and the candidate left unfinished, when some attempt of it went without a verdict:
        another round would spend model calls on an outage and a rejection would not be final."""
        if candidate.candidate_id not in self._no_verdict:
            return False
        stage, reason = self._no_verdict[candidate.candidate_id]
        self._reject(candidate, stage, reason)
        return True

    def _reject(self, candidate: Candidate, stage: Stage, reason: ReasonCode) -> None:
        # an infrastructure failure is no verdict: the candidate is unfinished, not rejected, and so is a
        # rejection reached after any stage or lever went without a verdict (an endpoint or Lean failed)
        stage, reason = self._no_verdict.get(candidate.candidate_id, (stage, reason))
        unfinished = reason in INFRASTRUCTURE_REASONS
        candidate.status = CandidateStatus.unfinished if unfinished else CandidateStatus.rejected
        candidate.reject_stage, candidate.reject_reason = stage, reason
        self.store.save_candidate(candidate)
        self.on_event("unfinished" if unfinished else "rejected", stage.value, reason.value)

    # -- one problem ------------------------------------------------------------------------------
    async def process_problem(self, problem: SourceProblem) -> bool | None:
        """True if retained, False if rejected, None if infrastructure failures left it unfinished.

        Emits ``problem_finished`` (reason ``retained`` or ``rejected``) or ``problem_unfinished`` (reason:
        the infrastructure reason code, or ``crashed`` for an unexpected error), then ``problem_done``.
        """
        try:
            outcome = await self._process_problem(problem)
        except Exception as error:  # a bug must not take the other problems down with it
            described = f"{type(error).__name__}: {error}"[:2000]
            self.store.set_meta(f"error:{problem.problem_id}", described)
            self.store.mark_unfinished(problem.problem_id, f"unexpected error: {described}")
            self._unfinished_codes[problem.problem_id] = "crashed"
            outcome = None
        if outcome is None:
            cause = self._unfinished_codes.pop(problem.problem_id, "crashed")
            self.on_event("problem_unfinished", Stage.answer.value, cause)
        else:
            self.on_event("problem_finished", Stage.answer.value, "retained" if outcome else "rejected")
        self.on_event("problem_done", Stage.answer.value, None)
        return outcome

    async def _process_problem(self, problem: SourceProblem) -> bool | None:
        previous_rewrite: str | None = None
        infrastructure_cause: str | None = None
        for rewrite_index in range(self.config.retries.rewrites_per_problem):
            candidate = Candidate(
                candidate_id=f"{problem.problem_id}#r{rewrite_index}",
                problem_id=problem.problem_id,
                rewrite_index=rewrite_index,
            )
            candidate.theorem_name = theorem_name_for(candidate.candidate_id)
            self.store.save_candidate(candidate)
            try:
                with about(candidate.candidate_id):  # the heartbeat names this candidate's Lean checks
                    retained = await self._process_candidate(problem, candidate, previous_rewrite)
            finally:
                cause = self._infrastructure_causes.pop(candidate.candidate_id, None)
                self._inputs.pop(candidate.candidate_id, None)
                self._no_verdict.pop(candidate.candidate_id, None)
            if retained:
                self.store.set_problem_outcome(problem.problem_id, "retained")
                return True
            previous_rewrite = candidate.rewritten_question or previous_rewrite
            if candidate.reject_reason in INFRASTRUCTURE_REASONS:
                infrastructure_cause = cause or f"{candidate.reject_stage}: {candidate.reject_reason}"
                break  # another rewrite would meet the same failing endpoint; --resume continues here
        if infrastructure_cause is not None:
            # not a verdict about the problem: leave it for --resume, saying why
            self.store.mark_unfinished(problem.problem_id, infrastructure_cause)
            reason = candidate.reject_reason
            self._unfinished_codes[problem.problem_id] = reason.value if reason is not None else "crashed"
            return None
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
        self._uses(candidate, Stage.rewrite, 0)

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
        feedback = ""
        refutation_attempt: int | None = None  # the check attempt whose refutation ``feedback`` tells
        for round_index in range(config.retries.formalizations_per_rewrite):
            offset = candidate.rewrite_index * config.retries.formalizations_per_rewrite + round_index
            self._uses(candidate, Stage.formalize, None)  # this round's statement is not written yet
            result = await formalize(
                question,
                candidate.theorem_name or "",
                self.clients["formalize"],
                config.model_for("formalize"),
                self.verifier,
                header=self.header,
                attempt=offset,
                feedback=feedback,
            )
            told = {Stage.check.value: refutation_attempt} if refutation_attempt is not None else {}
            self._record(candidate, Stage.formalize, round_index, result, also_uses=told)
            if not result.passed:
                if self._stopped(candidate):
                    return False
                last_stage, last_reason = Stage.formalize, result.reason or ReasonCode.no_lean_block
                continue
            statement = result.output["statement"]
            candidate.lean_statement = statement
            self._uses(candidate, Stage.formalize, round_index)

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
                if self._stopped(candidate):
                    return False
                last_stage, last_reason = Stage.align, result.reason or ReasonCode.semantic_mismatch
                continue

            vacuous = config.statement_checks.vacuity and await self._vacuous(candidate, statement, round_index)
            if self._stopped(candidate):  # a check Lean could not answer: undecided is no verdict to go on
                return False
            if vacuous:
                last_stage, last_reason = Stage.check, ReasonCode.statement_vacuous
                continue

            verified = await self._prove(candidate, statement, round_index, offset * k)
            if isinstance(verified, ReasonCode):
                if self._stopped(candidate):  # a sample, salvage check, feedback call or judgement without a verdict
                    return False
                last_stage = Stage.judge if verified == ReasonCode.judge_rejected else Stage.prove
                last_reason = verified
                if (
                    verified in (ReasonCode.proof_not_found, ReasonCode.judge_rejected)
                    and config.statement_checks.refutation
                ):
                    refutation = await self._refuted(candidate, statement, round_index)
                    if self._stopped(candidate):
                        return False
                    if refutation is not None:
                        last_stage, last_reason = Stage.check, ReasonCode.statement_refuted
                        feedback, refutation_attempt = refutation, 2 * round_index + 1
                        continue  # a false statement is a formalization error: formalize again, told why
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
                verifier=self.verifier,
                header=self.header,
            )
            self._record(candidate, Stage.answer, round_index, result)
            if not result.passed:
                self._reject(candidate, Stage.answer, result.reason or ReasonCode.answer_not_final)
                return False
            apply_answer(candidate, result.output)
            candidate.answer_disagrees_with_screener = screener_disagrees(
                candidate.screener_answer, candidate.new_answer
            )
            candidate.status = CandidateStatus.retained
            self.store.save_candidate(candidate)
            self.on_event("retained", Stage.answer.value, None)
            return True
        self._reject(candidate, last_stage, last_reason)
        return False

    async def _vacuous(self, candidate: Candidate, statement: str, round_index: int) -> bool:
        """Our trusted vacuity (and, where pinned, satisfiability) checks; True if the statement is vacuous.

        Stored as check attempt ``2 * round``; the outcome other than vacuous goes to the candidate's
        provenance (``statement_check``): satisfiable, flagged for audit, or undecided.
        """
        clock = Stopwatch()
        facts = await check_statement(statement, self.verifier, header=self.header)
        vacuous = facts.vacuous
        result = StageResult(
            status=AttemptStatus.rejected if vacuous else AttemptStatus.passed,
            reason=ReasonCode.statement_vacuous if vacuous else None,
            input_hash=input_hash("check", statement),
            output=facts.model_dump(mode="json"),
            elapsed_s=clock.elapsed(),
        )
        if not vacuous and facts.infrastructure_failure:
            result.status, result.reason = AttemptStatus.error, ReasonCode.lean_unavailable
        candidate.statement_check = facts.status
        self._record(candidate, Stage.check, 2 * round_index, result)
        return vacuous

    async def _refuted(self, candidate: Candidate, statement: str, round_index: int) -> str | None:
        """After every sample failed: our refutation; the formalizer's feedback if Lean proved the negation."""
        clock = Stopwatch()
        facts = await refute_statement(statement, self.verifier, header=self.header)
        claimed = proposed_answer(statement)  # feedback text only: never released
        disagrees = screener_disagrees(candidate.screener_answer, literal_text(claimed) if claimed else None)
        output = facts.model_dump(mode="json") | {"statement_answer": claimed, "screen_disagrees": disagrees}
        result = StageResult(
            status=AttemptStatus.rejected if facts.refuted else AttemptStatus.passed,
            reason=ReasonCode.statement_refuted if facts.refuted else None,
            input_hash=input_hash("refute", statement),
            output=output,
            elapsed_s=clock.elapsed(),
        )
        if not facts.refuted and facts.infrastructure_failure:
            result.status, result.reason = AttemptStatus.error, ReasonCode.lean_unavailable
        self._record(candidate, Stage.check, 2 * round_index + 1, result)
        if not facts.refuted:
            return None
        lines = [
            "An earlier formalization of this problem was false: Lean proved its negation.",
            f"The false statement:\n```lean4\n{statement}\n```",
            f"Lean's refutation:\n```lean4\n{facts.derivation}\n```",
        ]
        if disagrees:
            lines.append(
                f"It claimed the answer {claimed}; an independent solver found {candidate.screener_answer}."
                " Check the quantities and the question asked."
            )
        return "\n".join(lines)

    async def _prove(
        self, candidate: Candidate, statement: str, round_index: int, first_index: int
    ) -> str | ReasonCode:
        """Up to k samples, each stored with its text, finish reason and verdict; then the levers.

        Every sample the screen passes goes to the judge (all of a parallel batch, so the run's pass@j counts
        judged samples); the first the judge passes is the proof. A failed sample is salvaged (its text
        repaired, each repair through the screen and the judge) unless ``prove.salvage`` is off; when all k
        fail, ``prove.feedback_rounds`` rounds ask the prover again with Lean's messages. Returns the verified
        code, or why there is none: ``proof_not_found``, ``judge_rejected`` (the screen passed some text, the
        judge none), or an infrastructure reason: no sample could be screened at all, or the judge gave no
        verdict (the search stops there; ``--resume`` judges it).
        """
        config = self.config
        k = config.prove.k
        settings = config.model_for("prove")
        client = self.clients["prove"]
        batches = [(0, k)] if config.prove.strategy == "parallel" else [(j, 1) for j in range(k)]
        threads: list[FeedbackThread] = []
        search = _ProofSearch()
        for start, count in batches:
            samples, result = await sample_proofs(
                statement,
                self.header,
                client,
                settings,
                count=count,
                first_index=first_index + start,
                problem=candidate.rewritten_question,
            )
            if not samples:
                self._record(candidate, Stage.prove, round_index * k + start, result)
                return result.reason or ReasonCode.model_call_failed
            verdicts = await asyncio.gather(*(self._verify(statement, sample) for sample in samples))
            screened: list[tuple[int, ProofSample, Verdict, int]] = []
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
                self._record(candidate, Stage.prove, number, prove_result, candidate_changed=position == 0)
                self._record(candidate, Stage.verify, number, verify_result, candidate_changed=False)
                if verdict.verified:
                    screened.append((start + position, sample, verdict, number))
                elif wants_feedback(verdict):
                    threads.append(_thread(sample.text, verdict, number))
            judgements = await asyncio.gather(
                *(
                    self._judge(candidate, statement, verdict, search, screened_by=Stage.verify, of_attempt=number)
                    for _, _, verdict, number in screened
                )
            )
            found: str | None = None
            for (position, sample, verdict, _), judged in zip(screened, judgements, strict=True):
                if judged.passed:
                    found = submission_of(verdict)
                    self._take_proof(candidate, sample.text, verdict, judged, position, lever=None)
                    break
            if found is None and search.judge_unavailable:
                return ReasonCode.judge_unavailable
            if found is None and config.prove.salvage:
                for position, (sample, (verdict, _)) in enumerate(zip(samples, verdicts, strict=True)):
                    found = await self._salvage(
                        candidate, statement, sample, verdict, round_index * k + start + position, search
                    )
                    if found is not None:
                        candidate.proof_attempt_number = start + position
                        break
                    if search.judge_unavailable:
                        return ReasonCode.judge_unavailable
            if found is not None:
                self._no_verdict.pop(candidate.candidate_id, None)  # a proof: samples without a verdict are moot
                self.store.save_candidate(candidate)
                return found
        found = await self._feedback_rounds(candidate, statement, round_index, first_index, threads, search)
        if found is not None:
            self._no_verdict.pop(candidate.candidate_id, None)
            self.store.save_candidate(candidate)
            return found
        if search.judge_rejected and candidate.candidate_id not in self._no_verdict:
            return ReasonCode.judge_rejected  # the screen passed some text, the judge none: the judge won
        # a sample, salvage check, feedback call or judgement without a verdict left a no-verdict mark (_record)
        return self._no_verdict.get(candidate.candidate_id, (Stage.prove, ReasonCode.proof_not_found))[1]

    async def _judge(
        self,
        candidate: Candidate,
        statement: str,
        verdict: Verdict,
        search: _ProofSearch,
        *,
        screened_by: Stage,
        of_attempt: int,
    ) -> JudgeVerdict:
        """The judge on a text the screen passed (attempt ``of_attempt`` of ``screened_by``), stored as a judge
        attempt: the run's trusted header and toolchain, our statement, the text the screen's Lean check saw."""
        request = judge_request(
            f"{candidate.candidate_id}/{screened_by.value}/{of_attempt}",
            header=self.header,
            statement=statement,
            theorem_name=candidate.theorem_name or "",
            verdict=verdict,
            toolchain=self.config.lean.toolchain,
        )
        judged, result = await judge_screened(self.judge, request, screened_by=screened_by, of_attempt=of_attempt)
        number = judge_attempt_number(screened_by, of_attempt)
        self._record(
            candidate, Stage.judge, number, result, candidate_changed=False, also_uses={screened_by.value: of_attempt}
        )
        search.judge_rejected |= judged.status == JudgeStatus.rejected
        search.judge_unavailable |= judged.status == JudgeStatus.unavailable
        return judged

    def _take_proof(
        self,
        candidate: Candidate,
        text: str,
        verdict: Verdict,
        judged: JudgeVerdict,
        position: int | None,
        *,
        lever: str | None,
    ) -> None:
        """The proof a candidate keeps: a text the screen passed and the judge passed, with both provenances."""
        candidate.lean_proof = text
        candidate.verified_code = submission_of(verdict)
        candidate.proof_attempt_number = position
        candidate.proof_lever = lever
        lean = verdict.lean
        candidate.verifier_backend = lean.backend_id if lean else None
        candidate.verifier_is_real_lean = bool(lean and lean.real_lean)
        candidate.lean_toolchain = lean.toolchain if lean else None
        candidate.mathlib_revision = lean.mathlib_revision if lean else None
        take_judge_provenance(candidate, judged)

    async def _verify(self, statement: str, sample: ProofSample) -> tuple[Verdict, StageResult]:
        """One prover sample through the gate, with the run's header and Lean settings (prove and feedback)."""
        lean = self.config.lean
        return await verify_sample(
            statement,
            sample,
            self.verifier,
            header=self.header,
            allow_native_decide=lean.allow_native_decide,
            limits=lean.static_limits,
        )

    async def _salvage(
        self,
        candidate: Candidate,
        statement: str,
        sample: ProofSample,
        verdict: Verdict,
        number: int,
        search: _ProofSearch,
    ) -> str | None:
        """Repaired texts of one failed sample, each stored as a salvage attempt and, when the screen passes it,
        judged; the code of the first the judge passed, if any (None also when the judge gave no verdict)."""
        config = self.config
        checks = await salvage_sample(
            statement,
            sample.text,
            sample.finish_reason,
            verdict,
            self.verifier,
            header=self.header,
            allow_native_decide=config.lean.allow_native_decide,
            limit=config.prove.salvage_variants,
            limits=config.lean.static_limits,
        )
        for variant_index, check in enumerate(checks):
            check.result.output.update({"of_attempt": number, "sample_index": sample.index})
            salvage_number = number * MAX_SALVAGE_VARIANTS + variant_index
            self._record(candidate, Stage.salvage, salvage_number, check.result, candidate_changed=False)
            if not check.verdict.verified:
                continue
            judged = await self._judge(
                candidate, statement, check.verdict, search, screened_by=Stage.salvage, of_attempt=salvage_number
            )
            if judged.passed:
                self._take_proof(candidate, check.variant.text, check.verdict, judged, None, lever="salvage")
                return submission_of(check.verdict)
            if search.judge_unavailable:
                return None
        return None

    async def _feedback_rounds(
        self,
        candidate: Candidate,
        statement: str,
        round_index: int,
        first_index: int,
        threads: list[FeedbackThread],
        search: _ProofSearch,
    ) -> str | None:
        """``prove.feedback_rounds`` rounds over the samples Lean rejected with errors; the code the judge passed,
        if any (None also when the judge gave no verdict: the rounds stop there)."""
        config = self.config
        k = config.prove.k
        settings = config.model_for("prove")
        style = feedback_style(settings)
        for round_number in range(1, config.prove.feedback_rounds + 1):
            if not threads:
                return None
            asked = await asyncio.gather(
                *(
                    ask_again(
                        statement,
                        self.header,
                        self.clients["prove"],
                        settings,
                        thread,
                        style=style,
                        round_number=round_number,
                        sample_offset=first_index + k * round_number + position,
                        problem=candidate.rewritten_question,
                    )
                    for position, thread in enumerate(threads)
                )
            )
            following: list[FeedbackThread] = []
            for position, (sample, messages, result) in enumerate(asked):
                number = (round_index * MAX_FEEDBACK_ROUNDS + round_number - 1) * k + position
                if sample is None:
                    self._record(candidate, Stage.feedback, number, result, candidate_changed=False)
                    continue
                verdict, verify_result = await self._verify(statement, sample)
                record = verify_result.model_copy(
                    update={
                        "output": {
                            **result.output,
                            "text": sample.text,
                            "finish_reason": sample.finish_reason,
                            **verify_result.output,
                        },
                        "tokens_in": result.tokens_in,
                        "tokens_out": result.tokens_out,
                        "model_calls": result.model_calls,
                        "model_id": result.model_id,
                        "backend_id": result.backend_id,
                    }
                )
                self._record(candidate, Stage.feedback, number, record, candidate_changed=False)
                if verdict.verified:
                    judged = await self._judge(
                        candidate, statement, verdict, search, screened_by=Stage.feedback, of_attempt=number
                    )
                    if judged.passed:
                        self._take_proof(candidate, sample.text, verdict, judged, None, lever="feedback")
                        return submission_of(verdict)
                    if search.judge_unavailable:
                        return None
                elif wants_feedback(verdict):
                    following.append(_thread(sample.text, verdict, number, messages))
            threads = following
        return None

    # -- many problems ---------------------------------------------------------------------------
    async def run(self, problems: Iterable[SourceProblem], *, target: int | None = None) -> RunSummary:
        """Process ``problems`` in order, drawing lazily; with ``target``, stop once that many are retained.

        Problems already finished in this run directory (a resumed run) are skipped with one indexed
        lookup each; only the problems in flight are held in memory.
        """
        summary = RunSummary()
        summary.retained = self.store.outcome_counts().get("retained", 0)
        semaphore = asyncio.Semaphore(self.config.problems_in_flight)
        running: set[asyncio.Task[None]] = set()
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

        failures: list[BaseException] = []

        def finished(task: asyncio.Task[None]) -> None:
            running.discard(task)
            if not task.cancelled() and task.exception() is not None:
                failures.append(task.exception())  # type: ignore[arg-type]

        try:
            for problem in problems:
                if self.store.problem_outcome(problem.problem_id) is not None:
                    summary.already_finished += 1
                    continue
                await semaphore.acquire()
                if enough.is_set():
                    semaphore.release()
                    break
                self.store.register_problem(problem)
                summary.drawn += 1
                task = asyncio.create_task(run_one(problem))
                running.add(task)
                task.add_done_callback(finished)
                if failures:
                    break
            if running:
                await asyncio.gather(*running)
            if failures:
                raise failures[0]
        finally:
            # everything this run wrote is committed before anyone reads the store for a summary
            await asyncio.to_thread(self.store.flush)
        return summary
