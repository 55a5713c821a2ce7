"""A stand-in kernel judge for tests of the wiring (pipeline, studies, release): it speaks the
:class:`repro.judge.verdict.Judge` protocol of this repository, not a tool's command line, and is
never real (``real: False``), so nothing it passes may ever be reported verified.

It passes what names our theorem; it rejects what carries a marker (the world's stand-in for a
proof the screen accepts and the kernel does not, e.g. a definitional restatement the bridge allows)
or what does not name our theorem; and while the file named by ``REPRO_TEST_JUDGE_DOWN`` exists it
gives no verdict at all, as a judge whose tool was never built does (``unavailable``, cause
``missing``). Every request it answers is appended to the file ``REPRO_TEST_JUDGE_LOG`` names (one JSON
line: key and cache key), so a test across processes can count what was judged.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from repro.config import JudgeSettings
from repro.judge.verdict import Judge, JudgeRequest, JudgeStatus, JudgeVerdict

REJECT_MARKER = "judge_rejects_this"
DOWN_FLAG = "REPRO_TEST_JUDGE_DOWN"
LOG = "REPRO_TEST_JUDGE_LOG"
NAME = "stand-in judge"
REVISION = "stand-in-1"


class StandInJudge:
    name = NAME
    real = False

    def __init__(self, *, markers: tuple[str, ...] = (REJECT_MARKER,), down_flag: Path | None = None) -> None:
        self.markers = markers
        self.down_flag = down_flag
        self.requests: list[JudgeRequest] = []

    def revision(self, toolchain: str) -> str | None:
        return REVISION

    def _down(self) -> bool:
        flag = self.down_flag or (Path(os.environ[DOWN_FLAG]) if os.environ.get(DOWN_FLAG) else None)
        return flag is not None and flag.exists()

    async def judge(self, request: JudgeRequest) -> JudgeVerdict:
        toolchain = request.toolchain or "v4.15.0"
        base = {
            "key": request.key,
            "tool": self.name,
            "tool_revision": REVISION,
            "toolchain": toolchain,
            "real": False,
            "confinement": "none (a stand-in compiles nothing)",
        }
        if self._down():
            return JudgeVerdict(
                **base, status=JudgeStatus.unavailable, cause="missing", detail="the judge's tool was never built"
            )
        self.requests.append(request)
        log = os.environ.get(LOG)
        if log:
            with open(log, "a", encoding="utf-8") as handle:
                key = request.cache_key(self.name, REVISION, toolchain)
                handle.write(json.dumps({"key": request.key, "cache_key": key}) + "\n")
        if f"theorem {request.theorem_name}" not in request.submission:
            return JudgeVerdict(
                **base, status=JudgeStatus.rejected, detail=f"uncaught exception: {request.theorem_name} not found"
            )
        if any(marker in request.submission for marker in self.markers):
            return JudgeVerdict(
                **base,
                status=JudgeStatus.rejected,
                detail=f"uncaught exception: {request.theorem_name} does not have the same type as in the target",
            )
        return JudgeVerdict(**base, status=JudgeStatus.passed, detail="Finished with no errors.")


def stand_in_judge(*_: object, **__: object) -> StandInJudge:
    """For a config's ``judge.factory``: whatever the settings, the stand-in."""
    return StandInJudge()


def norm_num_rejecting_judge(*_: object, **__: object) -> StandInJudge:
    """A stand-in that rejects every submission using ``norm_num``: a judge that disagrees with another one
    (a study's) about the same proofs."""
    return StandInJudge(markers=(REJECT_MARKER, "norm_num"))


# ``judge:`` of a test config, and the settings, that select the stand-in
STAND_IN_CONFIG = {"backend": "factory", "factory": "tests.doubles.judge:stand_in_judge"}
STAND_IN_SETTINGS = JudgeSettings.model_validate(STAND_IN_CONFIG)


def installed_safeverify(settings: JudgeSettings) -> Judge:
    """The product's SafeVerifyJudge over the SafeVerify stand-in (tests/doubles/fake_safe_verify.py), with the
    tools as they are installed in ``judge.tools_dir``: until :func:`tests.doubles.judges.lay_out_safeverify`
    builds them there, every judgement is ``unavailable`` (cause ``missing``), as on a node where SafeVerify
    was never built; afterwards the same run judges (``--resume``). Never real."""
    import sys

    from repro.judge.kernel import SafeVerifyJudge
    from tests.doubles.judges import FAKE_SAFEVERIFY

    return SafeVerifyJudge(settings, lake=[sys.executable, str(FAKE_SAFEVERIFY)], real=False)
