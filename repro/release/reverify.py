"""``repro reverify``: every released proof re-checked from the release's own files, by the kernel judge.

The rows checked are the Parquet rows users load, after the files matched their manifest and each
other; the header is the trusted settings', never the release's. Each row's ``verified_code`` (the text
Lean checked) is screened again (:func:`repro.judge.release.stored_request`: what an older repro released
as the prover's raw block is judged as the text Lean checks, and what the screen refuses is never judged)
and goes to the kernel judge again, against our statement after the trusted header, on the trusted
toolchain (``lean.toolchain``; a row released as judged on another one fails, as a row with another header
does: release data never chooses the judge): a row passes only when the judge passes it again (a stand-in
judge's pass re-verifies nothing). A row that a judge other than today's passed (another pin, older checks:
:mod:`repro.judge.currency`) is named (``older_judge``); today's judge decides it. The screen re-checks
the proof too, the answer is re-read from our statement alone, and the statement check is run again.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repro.config import JudgeSettings, LeanSettings
from repro.judge.release import StoredSubmission
from repro.judge.verdict import Judge, JudgeStatus, JudgeVerdict
from repro.records import ReleasedInstance
from repro.release.errors import LeanUnavailableError, ReleaseError
from repro.release.files import check_release_files, read_parquet_release
from repro.waiting import about


@dataclass
class ReverifyResult:
    instance_id: str
    passed_gate: bool
    real_lean: bool
    reasons: list[str]
    answer_grounded: bool = True
    # Lean gave no verdict (timeout, unavailable): neither a pass nor a rejection
    infrastructure: bool = False
    # ``provenance.statement_check`` as released, and what our trusted Lean check says now
    statement_check: str | None = None
    statement_recheck: str | None = None
    statement_check_agrees: bool = True
    # the kernel judge, run again on the released verified_code (None: not asked, the screen refused the text)
    judge: JudgeVerdict | None = None
    # the row's verified_code was in an older repro's form (the prover's block, its imports in it): it was
    # screened again and judged as the text Lean checks (repro.judge.release.stored_request)
    old_form: bool = False
    # why the judge the release says passed the row is not today's (another pin or checks version), or None
    older_judge: str | None = None

    @property
    def passed_judge(self) -> bool:
        return self.judge is not None and self.judge.passed

    @property
    def real_judge(self) -> bool:
        """A real kernel judge passed the row again: only then is it re-verified."""
        return self.passed_judge and self.judge is not None and self.judge.real

    @property
    def passed(self) -> bool:
        return self.passed_gate and self.passed_judge and self.answer_grounded and self.statement_check_agrees


async def reverify_release(
    out_dir: str | Path, lean: LeanSettings, judge: Judge | None = None, *, judge_settings: JudgeSettings | None = None
) -> list[ReverifyResult]:
    """Re-check every released proof from the release's own files: the kernel judge, then the same screen.

    An instance passes only if the judge passes its ``verified_code`` again, the screen verifies it again
    and the code Lean checked is byte-for-byte the ``verified_code`` that was released, as the screen reads it
    (for a current release the text itself; for an older one, its prover imports blanked). ``judge`` (else the
    one ``judge_settings`` name, else the default: the tool pinned per toolchain) judges afresh, with no
    cache: nothing of the run is read. The rows checked are the Parquet rows users load; first the files
    must match their manifest and each other (else :class:`ReleaseError`).
    """
    from repro.judge import verify_proof
    from repro.judge.batch import INFRA_REASONS
    from repro.judge.currency import judge_outdated
    from repro.judge.kernel import toolchain_key
    from repro.lean import build_verifier
    from repro.stages.answer import order_in_question, recheck_answer

    problems = check_release_files(out_dir)
    if problems:
        raise ReleaseError(f"{out_dir}: the release's files are not what was released:\n  " + "\n  ".join(problems))
    instances = read_parquet_release(out_dir)
    if judge is None:
        from repro.judge.kernel import build_judge

        judge = build_judge(judge_settings or JudgeSettings(), sandbox=lean.sandbox)
    verifier = build_verifier(lean)
    results = []
    try:
        await _preflight(verifier, lean)
        stored = await _submissions(instances, lean)
        judged = await _judge_rows(stored, judge)
        for instance in instances:
            submission = stored[instance.instance_id]
            # the header comes from the trusted settings, never from the release: a rewritten row's
            # header could declare an axiom or a macro that spoofs ``#print axioms``
            with about(instance.instance_id):  # the heartbeat names the row whose check is in flight
                verdict = await verify_proof(
                    instance.lean_statement,
                    instance.lean_proof,
                    verifier,
                    header=lean.header,
                    allow_native_decide=lean.allow_native_decide,
                    limits=lean.static_limits,
                )
            reasons = [reason.value for reason in verdict.reasons]
            same_header = " ".join(instance.lean_header.split()) == " ".join(lean.header.split())
            if not same_header:
                reasons.append("the released lean_header differs from the trusted header (--config lean.header)")
            released_toolchain = instance.provenance.judge_toolchain or instance.provenance.lean_toolchain
            same_toolchain = released_toolchain is None or toolchain_key(released_toolchain) == toolchain_key(
                lean.toolchain
            )
            if not same_toolchain:
                reasons.append(
                    f"the row was released as judged on {released_toolchain}; the trusted toolchain is"
                    f" {toolchain_key(lean.toolchain)} (--config lean.toolchain), and only it judges"
                )
            older = judge_outdated(
                instance.provenance.judge_tool,
                instance.provenance.judge_revision,
                instance.provenance.judge_toolchain,
                instance.provenance.judge_checks,
            )
            # the text the screen checks now from the released reply, and the released verified_code as the
            # screen reads it again: the same text (for what an older repro released, its imports blanked)
            same = submission.request is not None and verdict.checked_code == submission.request.submission
            if submission.refused:
                reasons.append(f"the screen refuses the released verified_code: {submission.refusal()}")
            elif not same:
                reasons.append("checked code differs from the released verified_code")
            # from our statement alone (issue 19 §4): never from the released proof text
            order = [name.strip() for name in (instance.answer_variables or "").split(",") if name.strip()]
            answer = await recheck_answer(
                instance.lean_statement, instance.new_answer, verifier, header=lean.header, variables=order or None
            )
            answer_grounded = answer.grounded
            if not answer_grounded:
                reasons.append(
                    f"new_answer {instance.new_answer!r} is not the answer read from the verified statement"
                    f" ({answer.method}: {answer.detail})"
                )
            # a tuple's order is the row's own answer_variables: where the question writes the order out, the
            # release must have it, or an edited row that swaps both the values and the names reverifies
            written = order_in_question(instance.rewritten_question, order) if len(order) > 1 else None
            if written is not None and written != order:
                answer_grounded = False
                reasons.append(
                    f"answer_variables {', '.join(order)!r} is not the order the question writes ({', '.join(written)})"
                )
            recheck, agrees, no_verdict = await _recheck_statement(instance, verifier, lean.header)
            if not agrees or no_verdict:
                reasons.append(
                    f"statement_check released as {instance.provenance.statement_check!r};"
                    f" our Lean check of the statement now says {recheck!r}"
                )
            verdict_of_judge = judged.get(instance.instance_id)
            if verdict_of_judge is not None and not verdict_of_judge.passed:
                why = verdict_of_judge.detail or verdict_of_judge.cause or ""
                said = f"kernel judge {verdict_of_judge.tool}: {verdict_of_judge.status.value}"
                reasons.insert(0, said + (f": {why}" if why else ""))
            results.append(
                ReverifyResult(
                    instance_id=instance.instance_id,
                    passed_gate=verdict.verified and same and same_header and same_toolchain,
                    real_lean=bool(verdict.lean and verdict.lean.real_lean),
                    reasons=reasons,
                    answer_grounded=answer_grounded,
                    infrastructure=(bool(verdict.reasons) and set(verdict.reasons) <= INFRA_REASONS)
                    or no_verdict
                    or answer.no_verdict
                    or (verdict_of_judge is not None and verdict_of_judge.status == JudgeStatus.unavailable),
                    statement_check=instance.provenance.statement_check,
                    statement_recheck=recheck,
                    statement_check_agrees=agrees,
                    judge=verdict_of_judge,
                    old_form=submission.old_form,
                    older_judge=older,
                )
            )
    finally:
        await verifier.close()
    return results


async def _submissions(instances: list[ReleasedInstance], lean: LeanSettings) -> dict[str, StoredSubmission]:
    """Every row's verified_code screened again (off the event loop) into what the judge may see: our statement
    after the trusted header (never the row's own), on the trusted toolchain (never the row's own: a tampered row
    could name a toolchain whose pinned judge is weaker)."""
    import asyncio

    from repro.judge.release import stored_request

    def screened(instance: ReleasedInstance) -> StoredSubmission:
        return stored_request(
            instance.instance_id,
            lean.header,
            instance.lean_statement,
            instance.verified_code,
            lean.toolchain,
            theorem_name=instance.theorem_name,
            allow_native_decide=lean.allow_native_decide,
            limits=lean.static_limits,
        )

    with about("the screen over the release's verified_code"):
        found = [await asyncio.to_thread(screened, instance) for instance in instances]
    return {instance.instance_id: submission for instance, submission in zip(instances, found, strict=True)}


async def _judge_rows(stored: dict[str, StoredSubmission], judge: Judge) -> dict[str, JudgeVerdict]:
    """The kernel judge on every row the screen passed again; concurrency is the judge's own. A row the screen
    refuses is not judged (no verdict of the judge: the row fails on the screen's refusal)."""
    import asyncio

    from repro.stages.judge import ask_judge

    requests = [submission.request for submission in stored.values() if submission.request is not None]
    with about("the kernel judge over the release"):
        verdicts = await asyncio.gather(*(ask_judge(judge, request) for request in requests))
    return {request.key: verdict for request, verdict in zip(requests, verdicts, strict=True)}


async def _recheck_statement(instance: ReleasedInstance, verifier: Any, header: str) -> tuple[str | None, bool, bool]:
    """Re-run the pipeline's statement check (:func:`repro.lean.statement_checks.check_statement`).

    Returns (outcome now, agrees, no verdict). A vacuous statement never agrees (it is never retained);
    a row released as satisfiable must be satisfiable again; a row released as flagged or undecided
    (or before the checks existed) only records what Lean says now. No verdict now is neither.
    """
    from repro.lean.statement_checks import check_statement

    released = instance.provenance.statement_check
    facts = await check_statement(instance.lean_statement, verifier, header=header)
    now = facts.status
    if now == "vacuous":
        return now, False, False
    if now == "undecided":
        return now, True, released in ("satisfiable", "flagged")
    if released == "satisfiable":
        return now, now == "satisfiable", False
    return now, True, False


async def _preflight(verifier: Any, lean: LeanSettings) -> None:
    """Trivial code first: without a working backend every row would read as a failed proof."""
    from repro.lean import InfraStatus
    from repro.lean.protocol import preflight_check

    result = await preflight_check(verifier, lean.header)
    if result.infra_status != InfraStatus.ok or result.has_error:
        detail = result.detail or "; ".join(message.text for message in result.messages[:2])
        raise LeanUnavailableError(
            f"the Lean backend ({lean.backend}) cannot check code: {result.infra_status}: {detail[:400]};"
            " nothing was re-verified. See `repro doctor`; `repro lean setup` installs Mathlib and the REPL"
        )
