"""Gold-standard replay (issue 19 §5): SafeVerify per toolchain, through its command lines.

Without Lean, the real orchestration (files, ``lake -d … env lean -o``, ``lake -d … env safe_verify``,
exit codes, output, timeouts, the sandbox) runs against the fake ``lake`` of
:mod:`repro.lean.fake_safe_verify`; the ``lean``-marked test runs the real SafeVerify where it is built.
"""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest

from repro.judge.kernel import (
    SAFEVERIFY_PINS,
    ReplayRequest,
    ReplaySettings,
    ReplayStatus,
    SafeVerifyReplay,
    build_replayer,
    replay_all,
)

HEADER = "import Mathlib\nimport Aesop\nset_option maxHeartbeats 400000\nopen BigOperators Real Nat Topology Rat"
STATEMENT = "theorem t (x : ℕ) (h₀ : x = 3) : x + 1 = 4 := by sorry"
HONEST = "theorem t (x : ℕ) (h₀ : x = 3) : x + 1 = 4 := by\n  subst h₀\n  norm_num"


def _request(
    proof: str, toolchain: str | None = "leanprover/lean4:v4.15.0", statement: str = STATEMENT
) -> ReplayRequest:
    return ReplayRequest(key="row-1", header=HEADER, statement=statement, proof_code=proof, toolchain=toolchain)


@pytest.fixture
def fake(tmp_path: Path) -> SafeVerifyReplay:
    return build_replayer(ReplaySettings(backend="fake", tools_dir=tmp_path / "tools", timeout_s=60))


def test_an_honest_proof_is_replayed_and_marked_not_real(fake: SafeVerifyReplay) -> None:
    verdict = asyncio.run(fake.replay(_request(HONEST)))
    assert verdict.status == ReplayStatus.replayed, verdict.detail
    assert verdict.passed and not verdict.real
    assert verdict.toolchain == "v4.15.0" and verdict.tool_revision == SAFEVERIFY_PINS["v4.15.0"].commit
    assert verdict.sandbox  # the status of the sandbox is recorded with every verdict


@pytest.mark.parametrize(
    ("proof", "said"),
    [
        ("theorem t (x : ℕ) (h₀ : x = 3) : x + 1 = 5 := by\n  omega", "does not have the same type as the requirement"),
        ("theorem t (x : ℕ) (h₀ : x = 3) : x + 1 = 4 := by\n  sorry", "sorryAx is not in the allowed set"),
        ("axiom cheat : False\ntheorem t (x : ℕ) (h₀ : x = 3) : x + 1 = 4 := by\n  exact cheat.elim", "cheat is not"),
        ("theorem u (x : ℕ) (h₀ : x = 3) : x + 1 = 4 := by\n  omega", "t not found in submission"),
        ("def t (x : ℕ) (h₀ : x = 3) : x + 1 = 4 := by\n  omega", "def t is not the same kind"),
        ("theorem t (x : ℕ) (h₀ : x = 3) : x + 1 = 4 := by\n  native_decide", "Lean.ofReduceBool is not"),
        ("partial def f : ℕ → ℕ := f\n" + HONEST, "unsafe/partial function f detected"),
    ],
)
def test_what_safeverify_refuses_is_rejected_in_its_words(fake: SafeVerifyReplay, proof: str, said: str) -> None:
    verdict = asyncio.run(fake.replay(_request(proof)))
    assert verdict.status == ReplayStatus.rejected and said in verdict.detail


def test_a_toolchain_without_a_pinned_tool_is_unavailable_not_passed(fake: SafeVerifyReplay) -> None:
    verdict = asyncio.run(fake.replay(_request(HONEST, toolchain="leanprover/lean4:v4.21.0")))
    assert verdict.status == ReplayStatus.unavailable and "no pinned SafeVerify for toolchain v4.21.0" in verdict.detail
    assert asyncio.run(fake.replay(_request(HONEST, toolchain=None))).toolchain == "v4.15.0"  # the default


def test_an_unbuilt_tool_is_unavailable(tmp_path: Path) -> None:
    replayer = SafeVerifyReplay(ReplaySettings(tools_dir=tmp_path / "none"))
    verdict = asyncio.run(replayer.replay(_request(HONEST)))
    assert verdict.status == ReplayStatus.unavailable and "not set up" in verdict.detail and verdict.real


def test_a_hung_tool_is_a_timeout_and_a_mute_one_an_error(tmp_path: Path) -> None:
    settings = ReplaySettings(tools_dir=tmp_path / "tools", timeout_s=1)
    build_replayer(settings.model_copy(update={"backend": "fake"}))  # lays out the per-toolchain checkouts
    hung = SafeVerifyReplay(settings, lake=[sys.executable, "-c", "import time; time.sleep(30)"], real=False)
    assert asyncio.run(hung.replay(_request(HONEST))).status == ReplayStatus.timeout
    writes_oleans = "import sys, pathlib; a = sys.argv[1:]; a[3] == 'lean' and pathlib.Path(a[5]).write_text('x')"
    mute = SafeVerifyReplay(
        settings.model_copy(update={"timeout_s": 60}), lake=[sys.executable, "-c", writes_oleans], real=False
    )
    verdict = asyncio.run(mute.replay(_request(HONEST)))
    assert verdict.status == ReplayStatus.error  # exit 0 without "Finished with no errors." is no acceptance


def test_rows_are_replayed_concurrently_in_order(fake: SafeVerifyReplay) -> None:
    requests = [_request(HONEST), _request(HONEST.replace("= 4", "= 5"))]
    statuses = [v.status for v in asyncio.run(replay_all(fake, requests))]
    assert statuses == [ReplayStatus.replayed, ReplayStatus.rejected]


@pytest.mark.lean
def test_real_safeverify_replays_honest_and_refuses_changed_and_sorry() -> None:
    settings = ReplaySettings()
    replayer = build_replayer(settings)
    if shutil.which("lake") is None or not (settings.tools_dir / "v4.15.0" / "lakefile.toml").is_file():
        pytest.skip(f"no lake or no SafeVerify at {settings.tools_dir}/v4.15.0 (docker/Dockerfile builds both)")
    honest = asyncio.run(replayer.replay(_request(HONEST)))
    assert honest.status == ReplayStatus.replayed and honest.real, honest.detail
    changed = asyncio.run(
        replayer.replay(_request("theorem t (x : ℕ) (h₀ : x = 3) : x + 1 = 4 ∨ False := by\n  omega"))
    )
    assert changed.status == ReplayStatus.rejected, changed.detail
    cheat = asyncio.run(replayer.replay(_request("theorem t (x : ℕ) (h₀ : x = 3) : x + 1 = 4 := by\n  sorry")))
    assert cheat.status == ReplayStatus.rejected and "sorryAx" in cheat.detail


# -- release --replay and reverify --replay ---------------------------------------------------------------
def test_release_replay_withholds_the_row_safeverify_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import subprocess

    from repro.cli import main
    from repro.records import CandidateStatus
    from repro.release import read_release
    from repro.store import RunStore
    from tests.conftest import REPO
    from tests.test_release import synthetic_run

    synthetic_run(tmp_path / "run", real_lean=True)
    with RunStore(tmp_path / "run") as store:  # a gate miss, as if: the verified code leans on its own axiom
        candidate = next(c for c in store.candidates(CandidateStatus.retained) if c.problem_id == "math:7")
        candidate.verified_code = "axiom cheat : False\n" + (candidate.verified_code or "")
        store.save_candidate(candidate)
    tools = ["--replay-backend", "fake", "--replay-tools", str(tmp_path / "tools")]
    command = [sys.executable, "-m", "repro.cli", "release", str(tmp_path / "run"), "--out", str(tmp_path / "out")]
    done = subprocess.run([*command, "--replay", *tools], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "replay: 1 of 2 rows replayed by SafeVerify; 1 withheld" in done.stdout
    assert "withheld (not replayed): math:7#r0: rejected: cheat is not in the allowed set" in done.stderr
    assert "the CI fake" in done.stderr
    assert [row.instance_id for row in read_release(tmp_path / "out")] == ["gsm8k:1#r0"]

    capsys.readouterr()
    main(["reverify", str(tmp_path / "out"), "--backend", "fake", "--replay", *tools])
    printed = capsys.readouterr().out
    assert "1 of 1 instances replayed by SafeVerify" in printed and "sandbox:" in printed


def test_replay_exit_codes() -> None:
    from repro.exit_codes import ExitCode
    from repro.judge.kernel import ReplayVerdict
    from repro.judge.release import replay_exit_code

    def verdict(status: ReplayStatus, real: bool = True) -> ReplayVerdict:
        return ReplayVerdict(key="k", status=status, tool="SafeVerify", real=real)

    assert replay_exit_code([verdict(ReplayStatus.replayed)]) == ExitCode.ok
    assert replay_exit_code([verdict(ReplayStatus.replayed, real=False)]) == ExitCode.fake_backend
    assert replay_exit_code([verdict(ReplayStatus.replayed), verdict(ReplayStatus.timeout)]) == ExitCode.unfinished
    assert replay_exit_code([verdict(ReplayStatus.unavailable), verdict(ReplayStatus.rejected)]) == ExitCode.rejected


def test_the_docker_image_builds_the_pinned_safeverify_of_each_toolchain() -> None:
    import re

    from tests.conftest import REPO

    dockerfile = (REPO / "docker" / "Dockerfile").read_text(encoding="utf-8")
    built = dict(re.findall(r'"(v\d+\.\d+\.\d+) ([0-9a-f]{40})"', dockerfile))
    assert built == {toolchain: pin.commit for toolchain, pin in SAFEVERIFY_PINS.items()}
    assert "bubblewrap" in dockerfile and "lake build safe_verify" in dockerfile
