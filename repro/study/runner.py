"""Run every prover of a study on every statement, streaming, resumable, every sample through the gate
and every sample the screen passes through the kernel judge (so coverage and pass@j are judged figures).

Each prover has its own pool of workers (as many as its endpoint's ``max_concurrency``, and no more requests
than its server's KV cache holds whole), so a slow
prover never holds up a fast one; provers on one Lean toolchain share one Lean backend, whose worker pool
bounds the checks. Each statement is first elaborated under each prover's toolchain when it is not the
study's own (``lean.toolchain``, which the statements were written for): one that does not elaborate
there is recorded as ``statement_incompatible_toolchain`` without asking the prover (renamed
lemmas are not the prover's failure). A (prover, statement) pair reads what the store already holds
first: a stored sample is never requested again, and a stored verdict is never recomputed. A sample the
judge gave no verdict on is left unjudged (its pair unfinished) and ``--resume`` judges it.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from repro.judge import Verdict, reserved_name, verify_proof
from repro.judge.verdict import Judge, JudgeStatus, JudgeVerdict
from repro.lean import InfraStatus, Verifier
from repro.lean.text import StatementError, read_statement
from repro.llm.protocol import ModelBackend, ModelCallError
from repro.records import LeanMessageRecord, ReasonCode
from repro.stages.judge import ask_judge, judge_request, submission_of
from repro.stages.prove import profile_of, prover_request, prover_sample
from repro.stages.salvage import salvage_sample
from repro.study.records import ProverEntry, SampleOutcome, StudySettings, StudyStatement
from repro.study.store import StudyStore
from repro.waiting import about, waiting_on

ProgressHook = Callable[[str, str, bool], None]  # (prover, statement id, covered)

# Verdicts that say nothing about the proof: the Lean backend could not judge it. Left unjudged for --resume.
_UNJUDGED = frozenset({ReasonCode.lean_unavailable})
# Kept of each verdict for the report: a looping tactic can make Lean say thousands of lines.
_KEPT_MESSAGES = 20
_MESSAGE_CHARS = 2000

_LEAN_ERROR_CLASSES: tuple[tuple[str, str], ...] = (
    (r"unknown (?:identifier|constant)", "unknown_identifier"),
    (r"type mismatch|application type mismatch", "type_mismatch"),
    (r"unsolved goals", "unsolved_goals"),
    (r"linarith failed|nlinarith failed", "linarith_failed"),
    (r"failed to synthesize", "failed_to_synthesize"),
    (r"unexpected token|expected '|unknown tactic", "parse_error"),
    (r"maximum recursion|heartbeats|deterministic timeout", "resource_limit"),
    (r"omega could not|decide failed|The rfl tactic|simp made no progress|norm_num failed", "tactic_failed"),
)


def lean_error_classes(verdict: Verdict) -> list[str]:
    """Coarse classes of Lean's error messages, so a study can say which kind of Lean error dominates."""
    classes: list[str] = []
    for message in verdict.messages:
        if message.severity != "error":
            continue
        label = next((name for pattern, name in _LEAN_ERROR_CLASSES if re.search(pattern, message.text)), "other_error")
        if label not in classes:
            classes.append(label)
    return classes


@dataclass
class StudySummary:
    pairs: int = 0
    covered: int = 0
    fresh_requests: int = 0
    failed_requests: int = 0
    unjudged_samples: int = 0
    # samples (or salvaged texts) the screen passed and the judge rejected: the judge won
    judge_rejected: int = 0
    # (prover, statement) pairs whose statement does not elaborate under the prover's toolchain
    incompatible_pairs: int = 0
    errors: list[str] = field(default_factory=list)
    # requests in flight per prover (its max_concurrency, bounded by its server's KV cache where it reports one)
    workers: dict[str, int] = field(default_factory=dict)


class StudyRunner:
    def __init__(
        self,
        store: StudyStore,
        provers: list[ProverEntry],
        backends: dict[str, ModelBackend],
        verifier: Verifier,
        judge: Judge,
        settings: StudySettings,
        *,
        on_progress: ProgressHook | None = None,
        verifiers: dict[str, Verifier] | None = None,
        toolchains: dict[str, str] | None = None,
        workers: dict[str, int] | None = None,
    ) -> None:
        self.store = store
        self.provers = provers
        self.backends = backends
        self.verifier = verifier
        # one judge for the study; each request names the toolchain of the prover whose sample it judges
        self.judge = judge
        self.toolchains = toolchains or {}
        # a prover whose toolchain differs from the study's: its own backend (by prover name)
        self.verifiers = verifiers or {}
        self._compatible: dict[tuple[str, str], str | None] = {}
        self.settings = settings
        # the trusted header: a statement's own (data) is never run (open_study replaced it by this one)
        self.header = settings.lean.header
        # per prover: the requests in flight its server's KV cache holds (repro.study.app.served_workers)
        self.workers = workers or {}
        self.on_progress = on_progress or (lambda prover, statement, covered: None)
        self.summary = StudySummary()

    def _verifier_for(self, prover: str) -> Verifier:
        return self.verifiers.get(prover, self.verifier)

    async def _incompatibility(self, prover: str, statement: StudyStatement) -> str | None:
        """Lean's error when the statement does not elaborate under this prover's toolchain, else None.

        Asked once per (toolchain, statement); an infrastructure failure decides nothing (the gate reports it).
        """
        verifier = self._verifier_for(prover)
        key = (verifier.toolchain or "", statement.id)
        if key not in self._compatible:
            try:
                parsed = read_statement(statement.statement)
            except StatementError:
                return None  # the gate names this for every sample
            code = f"theorem {reserved_name(statement.statement)} {parsed.signature} := by sorry"
            result = await verifier.check(code, self.header)
            if result.infra_status != InfraStatus.ok:
                return None
            errors = [m.text for m in result.messages if m.severity == "error"]
            self._compatible[key] = (
                f"the statement does not elaborate under {verifier.toolchain}: {errors[0][:500]}" if errors else None
            )
        return self._compatible[key]

    def _record_incompatible(self, prover: ProverEntry, statement: StudyStatement, detail: str) -> None:
        verifier = self._verifier_for(prover.name)
        samples = [
            SampleOutcome(
                prover=prover.name,
                statement_id=statement.id,
                sample_index=index,
                text="",
                finish_reason="not_asked",
                judged=True,
                reasons=[ReasonCode.statement_incompatible_toolchain.value],
                details=[detail],
                lean_backend=verifier.backend_id,
                toolchain=verifier.toolchain,
                mathlib_revision=verifier.mathlib_revision,
                real_lean=verifier.real_lean,
            )
            for index in range(self.settings.k)
        ]
        self.store.add_samples(samples)
        self.summary.incompatible_pairs += 1

    # -- one sample ------------------------------------------------------------------------------
    async def _ask_judge(self, prover: str, statement: StudyStatement, verdict: Verdict, key: str) -> JudgeVerdict:
        """The kernel judge on a text the screen passed: the statement set's header, our statement, the text
        the screen's Lean check saw, the prover's toolchain."""
        request = judge_request(
            key,
            header=self.header,
            statement=statement.statement,
            theorem_name=statement.theorem_name,
            verdict=verdict,
            toolchain=self.toolchains.get(prover, self.settings.lean.toolchain),
        )
        judged = await ask_judge(self.judge, request)
        if judged.status == JudgeStatus.rejected:
            self.summary.judge_rejected += 1
        return judged

    async def _judge(self, sample: SampleOutcome, statement: StudyStatement) -> SampleOutcome:
        """The screen's verdict on the sample and, where it passed, the judge's; then salvage of a failure."""
        verdict = await verify_proof(
            statement.statement,
            sample.text,
            self._verifier_for(sample.prover),
            header=self.header,
            allow_native_decide=self.settings.allow_native_decide,
            finish_reason=sample.finish_reason,
        )
        lean = verdict.lean
        screened = not (verdict.reasons and set(verdict.reasons) <= _UNJUDGED)
        key = f"{sample.prover}/{sample.statement_id}/{sample.sample_index}"
        judge = await self._ask_judge(sample.prover, statement, verdict, key) if verdict.verified else None
        judged = screened and (judge is None or judge.status != JudgeStatus.unavailable)
        outcome = sample.model_copy(
            update={
                "judged": judged,
                "verified": bool(verdict.verified and judge is not None and judge.passed),
                "screened": verdict.verified,
                "judge": judge,
                "real_lean": bool(lean and lean.real_lean),
                # a screened sample the judge rejected fails for the judge's reason: the judge won
                "reasons": [reason.value for reason in verdict.reasons]
                + (
                    [ReasonCode.judge_rejected.value]
                    if judge is not None and judge.status == JudgeStatus.rejected
                    else []
                ),
                "taxonomy": [fact.value for fact in verdict.taxonomy],
                "lean_error_classes": lean_error_classes(verdict),
                "checked_code": verdict.checked_code,
                "details": verdict.details[:_KEPT_MESSAGES],
                "lean_messages": [
                    LeanMessageRecord(severity=m.severity, line=m.line, column=m.column, text=m.text[:_MESSAGE_CHARS])
                    for m in verdict.messages[:_KEPT_MESSAGES]
                ],
                "lean_backend": lean.backend_id if lean else None,
                "toolchain": lean.toolchain if lean else None,
                "mathlib_revision": lean.mathlib_revision if lean else None,
                "lean_seconds": 0.0 if lean is None or lean.cached else round(lean.elapsed_s, 4),
            }
        )
        if screened and not verdict.verified and self.settings.salvage:
            outcome = await self._salvage(outcome, statement, verdict)
        self.store.save_verdict(outcome)
        if not judged:
            self.summary.unjudged_samples += 1
        return outcome

    async def _salvage(self, outcome: SampleOutcome, statement: StudyStatement, verdict: Verdict) -> SampleOutcome:
        """The sample's repaired texts through the same screen, and each the screen passes through the judge
        until one passes; the raw verdict stays as it was. A judge that gives no verdict leaves the sample
        unjudged, for ``--resume``."""
        checks = await salvage_sample(
            statement.statement,
            outcome.text,
            outcome.finish_reason,
            verdict,
            self._verifier_for(outcome.prover),
            header=self.header,
            allow_native_decide=self.settings.allow_native_decide,
            limit=self.settings.salvage_variants,
        )
        rescued, judged, rejected, pending = None, None, 0, False
        for index, check in enumerate(checks):
            if not check.verdict.verified:
                continue
            key = f"{outcome.prover}/{outcome.statement_id}/{outcome.sample_index}/salvage/{index}"
            judged = await self._ask_judge(outcome.prover, statement, check.verdict, key)
            if judged.passed:
                rescued = check
                break
            if judged.status == JudgeStatus.unavailable:
                pending = True
                break
            rejected += 1
        return outcome.model_copy(
            update={
                "judged": outcome.judged and not pending,
                "salvage_checks": len(checks),
                "salvage_verified": rescued is not None,
                "salvage_kinds": [kind.value for kind in rescued.variant.kinds] if rescued else [],
                "salvage_code": submission_of(rescued.verdict) if rescued else None,
                "salvage_lean_seconds": round(sum(check.result.lean_seconds for check in checks), 4),
                "salvage_judge": judged,
                "salvage_judge_rejected": rejected,
            }
        )

    async def _request(
        self, prover: ProverEntry, statement: StudyStatement, first_index: int, count: int
    ) -> list[SampleOutcome] | None:
        settings = prover.settings
        # the prompt shows the header the prover's harness shows (Kimina's maxHeartbeats 400000, Goedel's 0), not
        # the study's: the proof is still checked under the study's header, which the statements were written for
        profile = profile_of(settings)
        request = prover_request(
            settings,
            statement.statement,
            statement.header if profile.legacy_prompt else profile.lean_header,
            sample_offset=first_index,
            n=count,
            problem=statement.question,
        )
        backend = self.backends[prover.name]
        try:
            with waiting_on(f"request to prover {prover.name} ({backend.backend_id})"):
                response = await backend.generate(request)
        except ModelCallError as error:
            self.summary.failed_requests += 1
            self.summary.errors.append(f"{prover.name} / {statement.id}: {error}")
            return None
        self.summary.fresh_requests += 1
        outputs = [
            prover_sample(settings, statement.statement, first_index + position, text, finish)
            for position, (text, finish) in enumerate(zip(response.texts, response.finish_reasons, strict=True))
        ]
        samples = [
            SampleOutcome(
                prover=prover.name,
                statement_id=statement.id,
                sample_index=output.index,
                text=output.text,
                finish_reason=output.finish_reason,
                tokens_in=response.tokens_in if position == 0 else 0,
                tokens_out=response.tokens_out if position == 0 else 0,
                model_seconds=round(response.latency_s, 4) if position == 0 else 0.0,
            )
            for position, output in enumerate(outputs)
        ]
        self.store.add_samples(samples)
        return samples

    # -- one (prover, statement) pair -------------------------------------------------------------
    async def prove_pair(self, prover: ProverEntry, statement: StudyStatement) -> bool:
        """Whether some sample was verified. Nothing stored is asked or checked again."""
        k = self.settings.k
        stored = {s.sample_index: s for s in self.store.samples(prover=prover.name, statement_id=statement.id)}
        if not stored and prover.name in self.verifiers:  # a toolchain other than the study's own
            incompatible = await self._incompatibility(prover.name, statement)
            if incompatible is not None:
                self._record_incompatible(prover, statement, incompatible)
                return False
        if self.settings.strategy == "sequential":
            for index in range(k):
                sample = stored.get(index)
                if sample is None:
                    fresh = await self._request(prover, statement, index, 1)
                    if fresh is None:
                        return False
                    sample = fresh[0]
                if not sample.judged:
                    sample = await self._judge(sample, statement)
                if sample.verified:
                    return True
            return False
        missing = [index for index in range(k) if index not in stored]
        if missing:
            # one request for the missing samples (all k on a fresh pair), numbered from the first missing
            first, count = missing[0], k - missing[0]
            fresh = await self._request(prover, statement, first, count)
            if fresh is None:
                return False
            for sample in fresh:
                stored.setdefault(sample.sample_index, sample)
        pending = [stored[index] for index in range(k) if index in stored and not stored[index].judged]
        judged = await asyncio.gather(*(self._judge(sample, statement) for sample in pending))
        for sample in judged:
            stored[sample.sample_index] = sample
        return any(sample.verified for sample in stored.values())

    # -- the whole study ---------------------------------------------------------------------------
    async def run(self, statements: list[StudyStatement]) -> StudySummary:
        async def worker(prover: ProverEntry, queue: asyncio.Queue[StudyStatement]) -> None:
            while True:
                try:
                    statement = queue.get_nowait()
                except asyncio.QueueEmpty:
                    return
                try:
                    with about(f"{prover.name} / {statement.id}"):  # the heartbeat names its Lean checks
                        covered = await self.prove_pair(prover, statement)
                except Exception as error:  # one bad pair must not stop the study; resume retries it
                    self.summary.errors.append(f"{prover.name} / {statement.id}: {type(error).__name__}: {error}")
                    covered = False
                self.summary.pairs += 1
                self.summary.covered += int(covered)
                self.on_progress(prover.name, statement.id, covered)

        tasks = []
        for prover in self.provers:
            queue: asyncio.Queue[StudyStatement] = asyncio.Queue()
            for statement in statements:
                queue.put_nowait(statement)
            workers = max(1, self.workers.get(prover.name, prover.settings.max_concurrency))
            self.summary.workers[prover.name] = workers
            tasks += [asyncio.create_task(worker(prover, queue)) for _ in range(min(workers, len(statements)))]
        await asyncio.gather(*tasks)
        return self.summary
