"""The judge stage: what the screen passed goes to the kernel judge, and only the judge's pass counts.

The screen (the static layer and the REPL check, :mod:`repro.judge.screen`) runs in the same Lean
environment as the prover's code; its "yes" only makes a candidate for the judge. The judge
(:class:`repro.judge.verdict.Judge`, injected like the Verifier: this module opens no process) compiles
our trusted target and the submission apart and replays the submission in Lean's kernel. Where the two
disagree, the judge wins, and the stored attempt says so (``overrules_screen``).

Used by the pipeline (raw samples, salvage, feedback rounds, a study's proof taken by ``--reprove-with``)
and by studies (:mod:`repro.study.runner`), so every path builds its request the same way: the trusted
header of the run or study, never the prover's; our statement; the text the screen's Lean check saw.
"""

from __future__ import annotations

from repro.judge.verdict import Judge, JudgeRequest, JudgeStatus, JudgeVerdict, Verdict
from repro.records import AttemptStatus, Candidate, ReasonCode, Stage, judge_attempt_number
from repro.stages.common import StageResult, Stopwatch, input_hash

__all__ = [
    "ask_judge",
    "judge_attempt_number",
    "judge_request",
    "judge_result",
    "judge_screened",
    "submission_of",
    "take_judge_provenance",
]


def submission_of(verdict: Verdict) -> str:
    """The text the screen's Lean check compiled (prover imports removed, ``#`` commands blanked): what the
    judge compiles after the trusted header, and what a candidate stores as its verified code."""
    return verdict.checked_code or ""


def judge_request(
    key: str, *, header: str, statement: str, theorem_name: str, verdict: Verdict, toolchain: str | None
) -> JudgeRequest:
    return JudgeRequest(
        key=key,
        header=header,
        statement=statement,
        theorem_name=theorem_name,
        submission=submission_of(verdict),
        toolchain=toolchain,
    )


async def ask_judge(judge: Judge, request: JudgeRequest) -> JudgeVerdict:
    """The judge's verdict; a judge that raises despite its protocol gave no verdict (``unavailable``), and a
    verdict claims to be real only when the judge itself is real (a stand-in cannot lend itself that)."""
    try:
        verdict = await judge.judge(request)
    except Exception as error:  # the protocol forbids it; a bug in a judge must not pass or reject anything
        return JudgeVerdict(
            key=request.key,
            status=JudgeStatus.unavailable,
            tool=getattr(judge, "name", type(judge).__name__),
            real=False,
            cause="crashed",
            detail=f"the judge raised {type(error).__name__}: {error}"[:2000],
        )
    if verdict.real and not judge.real:
        verdict = verdict.model_copy(update={"real": False})
    return verdict


def judge_result(request: JudgeRequest, verdict: JudgeVerdict, *, screened_by: Stage, of_attempt: int) -> StageResult:
    """The stored attempt of one judgement: the verdict whole, and whether it overruled the screen."""
    if verdict.status == JudgeStatus.passed:
        status, reason = AttemptStatus.passed, None
    elif verdict.status == JudgeStatus.rejected:
        status, reason = AttemptStatus.rejected, ReasonCode.judge_rejected
    else:  # no verdict: infrastructure, the problem stays unfinished
        status, reason = AttemptStatus.error, ReasonCode.judge_unavailable
    output: dict[str, object] = {
        # the verdict as a fact about the text; whether it was computed now or answered from the cache, and how long
        # it took, are the attempt's own timing (elapsed_s, lean_seconds): a resumed run stores what a clean one does
        "judge": verdict.model_dump(mode="json", exclude={"cached", "elapsed_s"}),
        "screened_by": screened_by.value,
        "of_attempt": of_attempt,
        # the screen passed everything the judge sees: a rejection is a disagreement, and the judge won
        "overrules_screen": verdict.status == JudgeStatus.rejected,
        "submission": request.submission,
        "toolchain": request.toolchain,
    }
    if verdict.status == JudgeStatus.unavailable:
        output["error"] = f"{verdict.cause or 'no verdict'}: {verdict.detail}".strip()
    return StageResult(
        status=status,
        reason=reason,
        input_hash=input_hash("judge", request.header, request.statement, request.submission, request.toolchain),
        output=output,
        elapsed_s=round(verdict.elapsed_s, 4),
        # the judge's compiles and replay are Lean time too: they count in the run's Lean seconds
        lean_seconds=0.0 if verdict.cached else round(verdict.elapsed_s, 4),
        backend_id=verdict.tool,
    )


async def judge_screened(
    judge: Judge, request: JudgeRequest, *, screened_by: Stage, of_attempt: int
) -> tuple[JudgeVerdict, StageResult]:
    """Judge one text the screen passed; the verdict and the attempt to store (timed here)."""
    clock = Stopwatch()
    verdict = await ask_judge(judge, request)
    result = judge_result(request, verdict, screened_by=screened_by, of_attempt=of_attempt)
    result.elapsed_s = clock.elapsed()
    return verdict, result


def take_judge_provenance(candidate: Candidate, judged: JudgeVerdict) -> None:
    """The judge that passed a candidate's proof, on the candidate (and from there on its released row)."""
    candidate.judge_tool = judged.tool
    candidate.judge_revision = judged.tool_revision
    candidate.judge_toolchain = judged.toolchain
    candidate.judge_real = judged.real
    candidate.judge_confinement = judged.confinement
    candidate.judge_checks = judged.checks
