"""Record what the stand-ins answer, for ``lean.backend: recorded`` and ``judge.backend: recorded``.

A :class:`RecordingVerifier` wears the recorded backend's identity (:class:`repro.lean.recorded.RecordedVerifier`:
backend ``recorded``, not real Lean, Mathlib ``recorded``) in front of the fake REPL, so every check is keyed as
the recorded backend will key it when it plays the answer back; a :class:`RecordingJudge` does the same for the
stand-in judge. Each answer with a verdict (Lean answered; the judge passed or rejected) is appended as one line
to the file ``$REPRO_RECORD_TO`` names, at once, so the journeys of :mod:`tests.doubles.record_demo` may run in several
processes; that script merges the lines into the shipped recording.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from repro.config import JudgeSettings, LeanSettings
from repro.judge.cached import CACHED_STATUSES
from repro.judge.recorded import judge_recording_key
from repro.judge.verdict import Judge, JudgeRequest, JudgeVerdict
from repro.lean.cached import encode_results, lean_cache_key, lean_sequence_key
from repro.lean.protocol import InfraStatus, LeanResult, Verifier, preflight_check
from repro.lean.recorded import JUDGE, LEAN, RECORDED_BACKEND_ID, RECORDED_MATHLIB
from repro.lean.toolchains import get_toolchain


def _append(path: str | Path, kind: str, key: str, value: dict[str, Any]) -> None:
    line = json.dumps({"kind": kind, "key": key, "value": value}, sort_keys=True, ensure_ascii=False)
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(line + "\n")


class RecordingVerifier:
    """The fake REPL (or any stand-in) behind the recorded backend's identity, writing down what it says."""

    real_lean = False

    def __init__(self, inner: Verifier, path: str | Path, *, toolchain: str | None) -> None:
        self.inner = inner
        self.path = path
        self.backend_id = RECORDED_BACKEND_ID
        self.toolchain = toolchain
        self.mathlib_revision = RECORDED_MATHLIB

    def _as_recorded(self, result: LeanResult) -> LeanResult:
        return result.model_copy(
            update={
                "backend_id": self.backend_id,
                "real_lean": False,
                "toolchain": self.toolchain,
                "mathlib_revision": self.mathlib_revision,
                "elapsed_s": 0.0,
                "cached": False,
            }
        )

    async def check(self, code: str, header: str) -> LeanResult:
        result = self._as_recorded(await self.inner.check(code, header))
        if result.infra_status == InfraStatus.ok:
            _append(self.path, LEAN, lean_cache_key(self, code, header), encode_results([result], True))
        return result

    async def check_sequence(self, commands: list[str], header: str) -> list[LeanResult]:
        results = [self._as_recorded(result) for result in await self.inner.check_sequence(commands, header)]
        if len(results) == len(commands) and all(result.infra_status == InfraStatus.ok for result in results):
            _append(self.path, LEAN, lean_sequence_key(self, commands, header), encode_results(results, False))
        return results

    async def ready(self, header: str) -> LeanResult:
        """The preflight (:func:`repro.lean.protocol.preflight_check`) asks the stand-in itself and records
        nothing: its fresh theorem name would make every recording differ, and the recorded backend answers
        the preflight from the recording's size (:meth:`RecordedVerifier.ready`)."""
        return await preflight_check(self.inner, header)

    async def close(self) -> None:
        await self.inner.close()


class RecordingJudge:
    """A stand-in judge whose verdicts are written down under the recorded judge's keys."""

    def __init__(self, inner: Judge, path: str | Path) -> None:
        self.inner = inner
        self.path = path

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def real(self) -> bool:
        return False

    def revision(self, toolchain: str) -> str | None:
        return self.inner.revision(toolchain)

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self.inner, attribute)

    async def judge(self, request: JudgeRequest) -> JudgeVerdict:
        verdict = await self.inner.judge(request)
        if verdict.status in CACHED_STATUSES:  # what varies between runs (time, which request) is left out
            kept = verdict.model_copy(update={"key": "recorded", "elapsed_s": 0.0, "cached": False})
            _append(self.path, JUDGE, judge_recording_key(request), kept.model_dump(mode="json"))
        return verdict


RECORD_TO = "REPRO_RECORD_TO"


def recording_lean(settings: LeanSettings, *, rules: str | None = None) -> RecordingVerifier:
    """``lean.factory`` of the recording journeys: the fake REPL, recorded into ``$REPRO_RECORD_TO``."""
    from repro.lean.fake_backend import fake_repl_verifier

    toolchain = get_toolchain(settings.toolchain)
    inner = fake_repl_verifier(rules, workers=settings.workers, timeout_s=settings.timeout_s, toolchain=toolchain)
    return RecordingVerifier(inner, os.environ[RECORD_TO], toolchain=toolchain.elan_toolchain)


def recording_judge(settings: JudgeSettings) -> RecordingJudge:
    """``judge.factory`` of the recording journeys: the product's SafeVerify judge driving the stand-in
    SafeVerify (:func:`tests.doubles.judges.safeverify`), recorded into ``$REPRO_RECORD_TO``."""
    from tests.doubles.judges import safeverify

    return RecordingJudge(safeverify(settings), os.environ[RECORD_TO])
