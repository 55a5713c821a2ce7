"""``judge.backend: recorded``: the offline demo's kernel judge. Stored verdicts by text, never real.

The demo compiles nothing, so the verdicts its journeys need were recorded once, with the test suite's
stand-in judge, into the same file as its Lean answers (:mod:`repro.lean.recorded`, ``scripts/record_demo.py``).
Each is keyed as the judge's verdict cache keys a request (:meth:`JudgeRequest.cache_key`: trusted header, our
statement, theorem name, submission, toolchain), with the tool named ``recorded``.

Every verdict is stamped ``real: false`` whatever the file says, so nothing this judge passes is ever verified;
a request the recording does not hold is ``unavailable`` with cause ``not_recorded`` (no verdict, resumable),
never a pass.
"""

from __future__ import annotations

from pathlib import Path

from repro.judge.kernel import toolchain_key
from repro.judge.verdict import JudgeCause, JudgeRequest, JudgeStatus, JudgeVerdict
from repro.lean.recorded import JUDGE, Recording, load_recording

RECORDED_TOOL = "recorded"
RECORDED_JUDGE_NAME = "recorded judge (the offline demo's stored verdicts)"
CONFINEMENT = "none: a recording compiles nothing"


def judge_recording_key(request: JudgeRequest) -> str:
    """The key a recording keeps ``request``'s verdict under."""
    return request.cache_key(RECORDED_TOOL, None, toolchain_key(request.toolchain))


class RecordedJudge:
    """A :class:`~repro.judge.verdict.Judge` that answers from a :class:`~repro.lean.recorded.Recording`."""

    name = RECORDED_JUDGE_NAME
    real = False
    confinement = CONFINEMENT

    def __init__(self, recording: Recording) -> None:
        self.recording = recording
        self.misses: list[str] = []  # keys asked for and not found (the staleness test reads them)

    def revision(self, toolchain: str) -> str | None:
        return None

    async def judge(self, request: JudgeRequest) -> JudgeVerdict:
        key = judge_recording_key(request)
        stored = self.recording.get(JUDGE, key)
        toolchain = toolchain_key(request.toolchain)
        if stored is None:
            self.misses.append(key)
            return JudgeVerdict(
                key=request.key,
                status=JudgeStatus.unavailable,
                tool=RECORDED_TOOL,
                toolchain=toolchain,
                real=False,
                confinement=CONFINEMENT,
                cause=JudgeCause.not_recorded.value,
                detail=f"not recorded: {self.recording.path or 'the recording'} holds no verdict for this"
                " submission (the recorded judge answers only what the offline demo's journeys asked)",
            )
        verdict = JudgeVerdict.model_validate(stored)
        return verdict.model_copy(
            update={
                "key": request.key,
                "tool": RECORDED_TOOL,
                "tool_revision": None,
                "toolchain": toolchain,
                "real": False,
                "confinement": CONFINEMENT,
                "elapsed_s": 0.0,
                "cached": False,
            }
        )


def recorded_judge(recording: str | Path | None = None) -> RecordedJudge:
    return RecordedJudge(load_recording(recording))
