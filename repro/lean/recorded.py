"""``lean.backend: recorded``: the offline demo's Lean. Stored answers by code hash, never real Lean.

The demo has no Lean toolchain, so its Lean answers were recorded once, by running the shipped offline journeys
(the demo run, the offline study, release, reverify, the check-proof examples of the docs) against the test
suite's stand-in REPL (``scripts/record_demo.py``; a test fails when the recording no longer gives the demo the
outcomes the stand-in gives). A recording is the result cache of :mod:`repro.lean.cached` written to a file:
each entry is keyed exactly as that cache keys a check (toolchain, header, code; a command sequence as a whole)
and holds what the cache would hold. Nothing about Lean is modelled here.

Every answer is stamped ``real_lean: false`` whatever the file says, so an edited recording cannot make a row
verified; a check the recording does not hold is :attr:`InfraStatus.not_recorded`, an infrastructure status
(the problem stays unfinished), never a pass.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

from repro.exit_codes import ReproError
from repro.lean.cached import decode_results, lean_cache_key, lean_sequence_key
from repro.lean.protocol import InfraStatus, LeanResult, infrastructure_failure

RECORDED_BACKEND_ID = "recorded"
RECORDED_MATHLIB = "recorded"  # the recording names no Mathlib: no Mathlib was ever loaded
DEFAULT_RECORDING = "data/demo_recording.jsonl"
LEAN = "lean"
JUDGE = "judge"


class RecordingError(ReproError, ValueError):
    """A recording file that cannot be read: its path and line said (exit status 2)."""


class Recording:
    """The entries of one recording file: JSON lines ``{"kind": "lean"|"judge", "key": ..., "value": ...}``,
    sorted by kind and key so a regenerated recording differs from the last one only where an answer did."""

    def __init__(self, entries: dict[tuple[str, str], dict[str, Any]] | None = None, path: Path | None = None) -> None:
        self.entries = entries or {}
        self.path = path

    @classmethod
    def load(cls, path: str | Path) -> Recording:
        path = Path(path)
        entries: dict[tuple[str, str], dict[str, Any]] = {}
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as error:
            raise RecordingError(f"{path}: cannot read the recording: {error.strerror or error}") from None
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                kind, key, value = item["kind"], item["key"], item["value"]
            except (ValueError, KeyError, TypeError) as error:
                raise RecordingError(f"{path}:{number}: not a recording entry ({error})") from None
            if kind not in (LEAN, JUDGE) or not isinstance(key, str) or not isinstance(value, dict):
                raise RecordingError(f"{path}:{number}: not a recording entry (kind {kind!r})")
            entries[(kind, key)] = value
        return cls(entries, path)

    def get(self, kind: str, key: str) -> dict[str, Any] | None:
        return self.entries.get((kind, key))

    def put(self, kind: str, key: str, value: dict[str, Any]) -> None:
        self.entries[(kind, key)] = value

    def count(self, kind: str) -> int:
        return sum(1 for entry_kind, _ in self.entries if entry_kind == kind)

    def lines(self) -> Iterable[str]:
        for (kind, key), value in sorted(self.entries.items()):
            yield json.dumps({"kind": kind, "key": key, "value": value}, sort_keys=True, ensure_ascii=False)

    def save(self, path: str | Path) -> None:
        Path(path).write_text("".join(line + "\n" for line in self.lines()), encoding="utf-8")


def shipped_recording_path() -> Path:
    from repro.prompts import bundled_path

    return bundled_path(DEFAULT_RECORDING)


@cache
def _load_cached(path: str, mtime_ns: int) -> Recording:
    return Recording.load(path)


def load_recording(path: str | Path | None = None) -> Recording:
    """The recording at ``path`` (default: the shipped one), read once per process and file version."""
    resolved = Path(path).expanduser().resolve() if path else shipped_recording_path()
    try:
        mtime = resolved.stat().st_mtime_ns
    except OSError as error:
        raise RecordingError(f"{resolved}: cannot read the recording: {error.strerror or error}") from None
    return _load_cached(str(resolved), mtime)


def stamp(result: LeanResult, verifier: RecordedVerifier) -> LeanResult:
    """A stored answer as this backend gives it: never real Lean, whatever the file holds."""
    return result.model_copy(
        update={
            "backend_id": verifier.backend_id,
            "real_lean": False,
            "toolchain": verifier.toolchain,
            "mathlib_revision": verifier.mathlib_revision,
            "elapsed_s": 0.0,
            "cached": False,
        }
    )


class RecordedVerifier:
    """A :class:`~repro.lean.protocol.Verifier` that answers from a :class:`Recording`.

    Its identity (backend ``recorded``, ``real_lean`` false, the configured toolchain, Mathlib ``recorded``) is
    what the keys are computed from, by the result cache's own key functions, so a recording made through a
    verifier with this identity answers this one.
    """

    real_lean = False

    def __init__(self, recording: Recording, *, toolchain: str | None) -> None:
        self.recording = recording
        self.backend_id = RECORDED_BACKEND_ID
        self.toolchain = toolchain
        self.mathlib_revision = RECORDED_MATHLIB
        self.misses: list[str] = []  # keys asked for and not found (the staleness test reads them)

    def _missing(self, key: str) -> LeanResult:
        self.misses.append(key)
        where = self.recording.path or "the recording"
        return infrastructure_failure(
            self,
            InfraStatus.not_recorded,
            f"not recorded: {where} holds no answer for this code (the recorded backend answers only what the"
            " offline demo's journeys asked; anything else needs a real Lean backend: lean.backend repl or kimina)",
        )

    async def check(self, code: str, header: str) -> LeanResult:
        key = lean_cache_key(self, code, header)
        stored = self.recording.get(LEAN, key)
        decoded = decode_results(stored, single=True) if stored is not None else None
        return stamp(decoded[0], self) if decoded else self._missing(key)

    async def check_sequence(self, commands: list[str], header: str) -> list[LeanResult]:
        key = lean_sequence_key(self, commands, header)
        stored = self.recording.get(LEAN, key)
        decoded = decode_results(stored, single=False) if stored is not None else None
        if decoded is None or len(decoded) != len(commands):
            missing = self._missing(key)
            return [missing] * len(commands)
        return [stamp(result, self) for result in decoded]

    async def ready(self, header: str) -> LeanResult:
        """The preflight of a run, a study or reverify (:func:`repro.lean.protocol.preflight_check`): the
        recording holds Lean answers. No trivial check is asked: a fresh theorem name is never recorded."""
        if self.recording.count(LEAN):
            return LeanResult(
                infra_status=InfraStatus.ok,
                backend_id=self.backend_id,
                real_lean=False,
                toolchain=self.toolchain,
                mathlib_revision=self.mathlib_revision,
                detail=f"recorded answers: {self.recording.count(LEAN)} (never real Lean)",
            )
        return infrastructure_failure(
            self, InfraStatus.not_recorded, f"not recorded: {self.recording.path or 'the recording'} holds no answers"
        )

    async def close(self) -> None:
        return None


def recorded_verifier(recording: str | Path | None = None, *, toolchain: str | None) -> RecordedVerifier:
    return RecordedVerifier(load_recording(recording), toolchain=toolchain)
