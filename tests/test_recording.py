"""The recorded backends of the offline demo (``lean.backend: recorded``, ``judge.backend: recorded``).

The recording must give the demo exactly what the stand-ins give it (else it is stale: regenerate it with
``python -m tests.doubles.record_demo``), and it must never be more than a recording: every answer says it is
not real Lean, and what it does not hold is an explicit "not recorded", never a pass.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from repro.app import run
from repro.config import JudgeSettings, LeanSettings, RunConfig, load_config
from repro.judge.kernel import build_judge
from repro.judge.recorded import RecordedJudge, judge_recording_key
from repro.judge.verdict import JudgeRequest, JudgeStatus
from repro.lean.cached import lean_cache_key
from repro.lean.factory import build_verifier
from repro.lean.protocol import InfraStatus
from repro.lean.recorded import (
    DEFAULT_RECORDING,
    JUDGE,
    LEAN,
    RecordedVerifier,
    Recording,
    RecordingError,
    load_recording,
    shipped_recording_path,
)
from repro.records import CandidateStatus
from repro.store import RunStore
from tests.conftest import REPO
from tests.doubles.fake_lean import fake_lean_settings

STALE = "the recording is stale: regenerate it with `python -m tests.doubles.record_demo` and commit data/"


def _outcomes(run_dir: Path) -> dict[str, Any]:
    """What a user of the demo sees of a run: every attempt's verdict and every candidate's end."""
    with RunStore(run_dir, create=False) as store:
        attempts = sorted(
            (
                a.candidate_id,
                str(a.stage),
                a.attempt_number,
                str(a.status),
                str(a.reason),
                tuple(a.taxonomy),
                tuple(m.text for m in a.lean_messages),
            )
            for a in store.attempts()
        )
        candidates = sorted(
            (c.candidate_id, str(c.status), str(c.reject_stage), str(c.reject_reason), c.verified_code, c.new_answer)
            for c in store.candidates()
        )
    return {"attempts": attempts, "candidates": candidates}


@pytest.fixture(scope="module")
def demo_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The shipped demo on its recording, and the same demo on the stand-ins the recording was made from."""
    base = tmp_path_factory.mktemp("recording")
    shipped = load_config(REPO / "configs" / "demo.yaml")
    assert shipped.lean.backend == "recorded", "the demo config selects the recorded Lean backend by name"
    run(shipped, base / "recorded")
    fakes = RunConfig.model_validate(
        {
            **shipped.model_dump(mode="json"),
            "lean": fake_lean_settings(workers=shipped.lean.workers, timeout_s=shipped.lean.timeout_s).model_dump(),
            "judge": {"backend": "factory", "factory": "tests.doubles.judges:safeverify", "tools_dir": str(base / "t")},
        }
    )
    run(fakes, base / "fakes")
    return base / "recorded", base / "fakes"


def test_the_demo_on_the_recording_gives_what_the_stand_ins_give(demo_runs: tuple[Path, Path]) -> None:
    recorded, fakes = demo_runs
    with RunStore(recorded, create=False) as store:
        retained = store.candidates(CandidateStatus.retained)
        missed = [a for a in store.attempts() if "not recorded" in json.dumps([a.output, a.model_dump(mode="json")])]
    assert not missed, f"{len(missed)} attempts got no recorded answer ({missed[0].stage}): {STALE}"
    assert _outcomes(recorded) == _outcomes(fakes), STALE
    assert len(retained) >= 15 and all(c.verifier_backend == "recorded" for c in retained)
    assert not any(c.verifier_is_real_lean for c in retained)


def test_the_recording_is_shipped_where_the_wheel_bundles_data() -> None:
    assert shipped_recording_path() == REPO / DEFAULT_RECORDING
    pyproject = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    assert '"data" = "repro/_bundled/data"' in pyproject, "data/ (and the recording in it) goes into the wheel"
    recording = load_recording()
    assert recording.count(LEAN) > 0


def _verifier(tmp_path: Path, entries: dict[tuple[str, str], dict[str, Any]]) -> RecordedVerifier:
    path = tmp_path / "recording.jsonl"
    Recording(entries).save(path)
    return RecordedVerifier(Recording.load(path), toolchain="leanprover/lean4:v4.15.0")


async def test_a_check_the_recording_does_not_hold_is_not_recorded_never_a_pass(tmp_path: Path) -> None:
    verifier = _verifier(tmp_path, {})
    result = await verifier.check("theorem t : 1 + 1 = 2 := by norm_num", "import Mathlib\n")
    assert result.infra_status == InfraStatus.not_recorded and not result.ok and result.real_lean is False
    assert "not recorded" in (result.detail or "") and str(tmp_path) in (result.detail or "")
    sequence = await verifier.check_sequence(["theorem a : True := trivial", "#print axioms a"], "import Mathlib\n")
    assert [r.infra_status for r in sequence] == [InfraStatus.not_recorded] * 2
    ready = await verifier.ready("import Mathlib\n")
    assert ready.infra_status == InfraStatus.not_recorded, "an empty recording cannot answer a run"


async def test_an_edited_recording_cannot_claim_real_lean(tmp_path: Path) -> None:
    code, header = "theorem t : 1 + 1 = 2 := by norm_num", "import Mathlib\n"
    probe = RecordedVerifier(Recording(), toolchain="leanprover/lean4:v4.15.0")
    forged = {
        "infra_status": "ok",
        "backend_id": "lean-interact-repl",
        "real_lean": True,
        "mathlib_revision": "abc",
        "toolchain": "leanprover/lean4:v4.15.0",
    }
    verifier = _verifier(tmp_path, {(LEAN, lean_cache_key(probe, code, header)): forged})
    result = await verifier.check(code, header)
    assert result.ok and result.real_lean is False and result.backend_id == "recorded"
    assert result.mathlib_revision == "recorded"


def test_a_broken_recording_is_named_by_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "recording.jsonl"
    path.write_text('{"kind": "lean", "key": "k", "value": {}}\nnot json\n', encoding="utf-8")
    with pytest.raises(RecordingError, match=rf"{path}:2: not a recording entry"):
        Recording.load(path)
    with pytest.raises(RecordingError, match="cannot read the recording"):
        build_verifier(LeanSettings(backend="recorded", recording=str(tmp_path / "absent.jsonl")))


def test_the_recorded_backend_is_a_stand_in_and_the_factory_cannot_build_real_lean() -> None:
    verifier = build_verifier(LeanSettings(backend="recorded"))
    assert verifier.real_lean is False and verifier.backend_id == "recorded"
    assert (
        LeanSettings(backend="recorded").backend.stand_in
        and LeanSettings(backend="factory", factory="a:b").backend.stand_in
    )
    assert not LeanSettings(backend="repl").backend.stand_in
    with pytest.raises(ValueError, match="claiming real Lean"):
        build_verifier(LeanSettings(backend="factory", factory="tests.test_recording:_claims_real_lean"))
    with pytest.raises(ValueError, match="lean.factory: required"):
        LeanSettings(backend="factory")


class _ClaimsRealLean(RecordedVerifier):
    real_lean = True  # type: ignore[assignment]


def _claims_real_lean(settings: LeanSettings) -> RecordedVerifier:
    return _ClaimsRealLean(Recording(), toolchain=None)


def _request(submission: str = "theorem t : True := trivial") -> JudgeRequest:
    return JudgeRequest(
        key="c1", header="import Mathlib\n", statement="theorem t : True := by sorry", theorem_name="t",
        submission=submission, toolchain="leanprover/lean4:v4.15.0",
    )  # fmt: skip


def test_the_recorded_judge_answers_only_what_it_holds_and_never_for_real(tmp_path: Path) -> None:
    request = _request()
    forged = {"key": "x", "status": "passed", "tool": "SafeVerify", "real": True, "tool_revision": "deadbeef"}
    path = tmp_path / "recording.jsonl"
    Recording({(JUDGE, judge_recording_key(request)): forged}).save(path)
    judge = build_judge(JudgeSettings(backend="recorded", recording=str(path)))
    assert isinstance(judge, RecordedJudge) and judge.real is False
    verdict = asyncio.run(judge.judge(request))
    assert verdict.passed and verdict.real is False and verdict.tool == "recorded" and verdict.key == "c1"
    missing = asyncio.run(judge.judge(_request("theorem t : True := by trivial")))
    assert missing.status == JudgeStatus.unavailable and missing.cause == "not_recorded" and not missing.real
