"""One prover output through the screen and then the kernel judge: what ``repro check-proof`` reports.

The screen (:func:`repro.judge.screen.verify_proof`) runs in the same Lean environment as the prover's code,
so its "yes" only makes a candidate for the judge (docs/trust.md); a check-proof that stopped there would
say "verified" on the word of a process the prover's code shared. Here a screen pass goes on to the judge
with the trusted header, our statement and the text the screen's Lean check saw, exactly as the pipeline's
judge stage builds it (:mod:`repro.stages.judge`). Only a real judge's pass after a real screen is
``verified``; a stand-in anywhere makes it a pass that verifies nothing (exit 4), and a judge that gave no
verdict leaves it undecided (exit 3).
"""

from __future__ import annotations

from pydantic import BaseModel

from repro.config import StaticLimits
from repro.exit_codes import ExitCode
from repro.judge.screen import verify_proof
from repro.judge.verdict import Judge, JudgeStatus, JudgeVerdict, Verdict
from repro.lean.protocol import Verifier
from repro.records import ReasonCode

# the screen's reasons that are no verdict about the proof (Lean or the static layer gave no answer)
SCREEN_NO_VERDICT = frozenset({ReasonCode.lean_timeout, ReasonCode.lean_unavailable, ReasonCode.static_timeout})


class ProofCheck(BaseModel):
    """The screen's verdict and, where the screen passed, the judge's. ``judge`` is None when the judge was
    not asked: the screen refused the proof (or gave no verdict), or no judge was given."""

    screen: Verdict
    judge: JudgeVerdict | None = None

    @property
    def screen_real(self) -> bool:
        return self.screen.lean is not None and self.screen.lean.real_lean

    @property
    def passed(self) -> bool:
        """The screen and the judge both passed it, whichever backends they were."""
        return self.screen.verified and self.judge is not None and self.judge.passed

    @property
    def verified(self) -> bool:
        """Only this is "verified": a real screen and a real kernel judge both passed it."""
        return self.passed and self.screen_real and self.judge is not None and self.judge.real

    @property
    def no_verdict(self) -> bool:
        """Nothing was decided (exit 3): the screen gave no answer, or it passed and the judge gave none."""
        if self.screen.reasons and set(self.screen.reasons) <= SCREEN_NO_VERDICT:
            return True
        return self.screen.verified and (self.judge is None or self.judge.status == JudgeStatus.unavailable)

    @property
    def rejected(self) -> bool:
        return not self.passed and not self.no_verdict

    @property
    def reasons(self) -> list[ReasonCode]:
        """The screen's reasons, then the judge's (``judge_rejected`` or ``judge_unavailable``)."""
        if self.judge is None:
            return list(self.screen.reasons) + ([ReasonCode.judge_unavailable] if self.screen.verified else [])
        if self.judge.status == JudgeStatus.rejected:
            return [ReasonCode.judge_rejected]
        if self.judge.status == JudgeStatus.unavailable:
            return [ReasonCode.judge_unavailable]
        return []

    @property
    def exit_code(self) -> ExitCode:
        """repro/exit_codes.py: 0 only with a real screen's and a real judge's pass; 3 no verdict; 4 stand-ins."""
        if ReasonCode.statement_not_single_theorem in self.screen.reasons:
            return ExitCode.usage
        if self.no_verdict:
            return ExitCode.unfinished
        if not self.passed:
            return ExitCode.rejected
        return ExitCode.ok if self.verified else ExitCode.fake_backend

    def judge_line(self) -> str:
        """``judge: ...`` in words: what it said, or why it was not asked."""
        if self.judge is None:
            if not self.screen.verified:
                return "judge: not asked (the screen did not pass it)"
            return "judge: not asked (no judge was given): no verdict"
        verdict = self.judge
        said = {
            JudgeStatus.passed: "passed",
            JudgeStatus.rejected: "rejected" + (f" ({verdict.refusal})" if verdict.refusal else ""),
            JudgeStatus.unavailable: "no verdict" + (f" ({verdict.cause})" if verdict.cause else ""),
        }[verdict.status]
        pin = f" {verdict.tool_revision[:12]}" if verdict.tool_revision else ""
        line = f"judge: {said} by {verdict.tool}{pin}" + (f" on {verdict.toolchain}" if verdict.toolchain else "")
        if not verdict.real:
            line += " (a stand-in, not Lean's kernel: never a real verdict)"
        return line

    def summary_line(self) -> str:
        """The first line check-proof prints: the screen's answer, then the judge's, then the outcome."""
        if self.screen.verified:
            screen = "screen passed" + ("" if self.screen_real else " (fake Lean backend)")
        elif self.no_verdict:
            screen = "screen: no verdict"
        else:
            screen = "screen rejected"
        outcome = (
            "verified"
            if self.verified
            else "NOT verified: passed only with a fake backend or a stand-in judge"
            if self.passed
            else "no verdict"
            if self.no_verdict
            else "NOT verified"
        )
        return f"{screen}, {self.judge_line()}; {outcome}"


async def check_proof_text(
    statement: str,
    text: str,
    verifier: Verifier | None,
    judge: Judge | None,
    *,
    key: str,
    header: str,
    toolchain: str | None,
    allow_native_decide: bool = False,
    finish_reason: str = "stop",
    limits: StaticLimits | None = None,
) -> ProofCheck:
    """``text`` through the screen against ``statement`` under the trusted ``header``; a screen pass then
    goes to ``judge`` (on ``toolchain``), which decides. Never raises for a bad proof or a broken judge."""
    screen = await verify_proof(
        statement,
        text,
        verifier,
        header=header,
        allow_native_decide=allow_native_decide,
        finish_reason=finish_reason,
        limits=limits,
    )
    return await judge_screened_text(screen, judge, key=key, header=header, statement=statement, toolchain=toolchain)


async def judge_screened_text(
    screen: Verdict, judge: Judge | None, *, key: str, header: str, statement: str, toolchain: str | None
) -> ProofCheck:
    """The judge on what the screen passed (the request the pipeline's judge stage builds); the screen's
    refusal or no-verdict as it is, the judge not asked."""
    from repro.stages.judge import ask_judge, judge_request

    if not screen.verified or judge is None:
        return ProofCheck(screen=screen)
    request = judge_request(
        key,
        header=header,
        statement=statement,
        theorem_name=screen.theorem_name or "",
        verdict=screen,
        toolchain=toolchain,
    )
    return ProofCheck(screen=screen, judge=await ask_judge(judge, request))
