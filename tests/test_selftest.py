"""``repro lean selftest``: the battery, what the fake can and cannot answer, and the stop before a run.

A backend whose assumptions the gate relies on do not hold (a bridge that accepts everything, a server
that moves lines, a Lean that is not the configured one) must stop a real-Lean run before any model call,
naming the case. The "scripted Lean" below is the fake REPL driven by rules that answer like real Lean
for the cases only a real backend can answer; it stands in for a healthy backend.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from repro.config import LeanSettings
from repro.judge.selftest import CASES, SelfTestFailed, ensure_selftest, render_report, run_selftest
from repro.judge.selftest_answers import ANSWER_CASES
from repro.lean import fake_repl_verifier
from repro.lean.repl_pool import ReplPoolVerifier
from tests.doubles.kimina_server import KiminaTestServer

# What real Lean answers to the three real-only cases (REPL reply shapes: see tests/fixtures/repl/)
HEALTHY_LEAN_RULES: list[dict[str, Any]] = [
    {"match": "repro_selftest_spin", "action": "hang"},
    {
        "match": r'#print "repro_sentinel_selftest_0"',
        "messages": [
            {
                "severity": "info",
                "pos": {"line": 3, "column": 0},
                "endPos": {"line": 3, "column": 6},
                "data": "repro_sentinel_selftest_0",
            }
        ],
    },
    {
        "match": r"^#eval Lean\.versionString$",
        "messages": [{"severity": "info", "pos": {"line": 1, "column": 0}, "data": '"4.15.0"'}],
    },
]


def scripted_lean(settings: LeanSettings) -> ReplPoolVerifier:
    verifier = fake_repl_verifier(HEALTHY_LEAN_RULES, workers=1, timeout_s=settings.timeout_s)
    verifier.real_lean = True  # stands in for a healthy real backend in these tests only
    return verifier


async def test_the_fake_backend_passes_and_names_what_only_real_lean_can_answer() -> None:
    report = await run_selftest(LeanSettings(backend="fake", workers=1))
    assert report.passed and not report.real_lean
    unanswered = {outcome.name for outcome in report.unanswered}
    answers = {name for name, _, _ in ANSWER_CASES}  # issue 29: what the fake models is no evidence
    assert unanswered == {"sentinel_position", "timeout_reported", "toolchain_reported"} | answers
    assert len(report.outcomes) == len(CASES)
    lines = render_report(report)
    assert any(line.startswith("only a real Lean backend") and "sentinel_position" in line for line in lines)
    assert lines[-1] == "self-test passed on a backend that is not real Lean (no real verdict; exit 4)"


async def test_a_healthy_backend_passes_every_case_and_the_pass_is_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REPRO_CACHE_DIR", str(tmp_path))
    settings = LeanSettings(backend="repl", project_path=str(tmp_path / "p"), workers=1, timeout_s=3)
    verifier = scripted_lean(settings)
    try:
        report = await ensure_selftest(settings, verifier=verifier, make_verifier=scripted_lean)
    finally:
        await verifier.close()
    assert report is not None and report.passed and not report.unanswered, render_report(report)
    assert list(tmp_path.glob("selftest/*.json")), "a passing report is cached"
    # the second time nothing is asked of the backend: a verifier that cannot answer anything still passes
    broken = fake_repl_verifier([{"match": ".", "action": "crash"}], workers=1)
    broken.real_lean = True
    try:
        again = await ensure_selftest(settings, verifier=broken)
    finally:
        await broken.close()
    assert again is not None and again.passed


async def test_a_backend_whose_bridge_accepts_anything_fails_naming_the_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REPRO_CACHE_DIR", str(tmp_path))
    with KiminaTestServer() as server:  # answers no error to every bridge: a changed target would pass
        settings = LeanSettings(backend="kimina", kimina_url=server.url, timeout_s=5, workers=2)
        with pytest.raises(SelfTestFailed) as failure:
            await ensure_selftest(settings)
    failed = {outcome.name for outcome in failure.value.report.failed}
    assert {"changed_target_hypothesis", "changed_target_let"} <= failed
    assert "honest_proof" not in failed and "sentinel_position" not in failed
    assert "changed_target_hypothesis" in str(failure.value)
    assert not list(tmp_path.glob("selftest/*.json")), "a failed report is never cached"


async def test_a_kimina_server_on_another_lean_fails_the_selftest_before_any_case(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("REPRO_CACHE_DIR", str(tmp_path))
    with KiminaTestServer(lean_version="4.9.0") as server:
        settings = LeanSettings(backend="kimina", kimina_url=server.url, timeout_s=5, toolchain="v4.15.0")
        report = await run_selftest(settings, only=["toolchain_reported"])
    failed = {outcome.name: outcome.detail for outcome in report.failed}
    assert list(failed) == ["backend_accepted"] and "runs Lean v4.9.0" in failed["backend_accepted"]
    assert not report.passed and report.unreachable is None, "refused, not unreachable: no case runs on it"


async def test_a_real_lean_run_stops_at_a_failed_selftest_before_any_model_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from repro.app import RunError, preflight_lean
    from repro.config import RunConfig

    monkeypatch.setenv("REPRO_CACHE_DIR", str(tmp_path))
    with KiminaTestServer() as server:
        config = RunConfig(lean=LeanSettings(backend="kimina", kimina_url=server.url, timeout_s=5))
        from repro.lean import build_verifier

        verifier = build_verifier(config.lean)
        try:
            with pytest.raises(RunError, match="changed_target_hypothesis") as stopped:
                await preflight_lean(verifier, config)
        finally:
            await verifier.close()
    assert "No model was called" in str(stopped.value)


def _cli(*arguments: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "repro.cli", *arguments], cwd=cwd, capture_output=True, text=True)


def test_the_selftest_command_on_the_fake_backend_exits_4_and_lists_the_real_only_cases(tmp_path: Path) -> None:
    result = _cli("lean", "selftest", "--backend", "fake", cwd=tmp_path)
    assert result.returncode == 4, result.stdout + result.stderr
    assert "only a real Lean backend (repl or kimina) can answer: sentinel_position" in result.stdout
    assert "FAIL" not in result.stdout


def test_the_selftest_command_without_lean_says_no_case_ran_and_exits_3(tmp_path: Path) -> None:
    result = _cli("lean", "selftest", "--backend", "repl", cwd=tmp_path)
    assert result.returncode == 3 and "Traceback" not in result.stdout + result.stderr
    assert "no case was run" in result.stdout


def test_lean_setup_prepares_the_project_of_the_named_toolchain(tmp_path: Path) -> None:
    unknown = _cli("lean", "setup", "--toolchain", "v3.0.0", cwd=tmp_path)
    assert unknown.returncode == 2 and "known: v4.9.0, v4.15.0" in unknown.stderr
    listed = _cli("lean", "toolchains", cwd=tmp_path)
    assert "v4.9.0: Lean v4.9.0" in listed.stdout and "Goedel-Prover-V2" in listed.stdout
    # with no lake on PATH setup stops after writing the pinned project: exit 3, nothing half-set
    env_path = {"PATH": str(Path(sys.executable).parent)}
    result = subprocess.run(
        [sys.executable, "-m", "repro.cli", "lean", "setup", "--toolchain", "v4.9.0"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env={**os.environ, **env_path},
    )
    assert result.returncode == 3, result.stdout + result.stderr
    project = tmp_path / "lean_project_v4.9.0"
    assert (project / "lean-toolchain").read_text().strip() == "leanprover/lean4:v4.9.0"
    assert 'rev = "v4.9.0"' in (project / "lakefile.toml").read_text()


def test_doctor_runs_the_selftest_on_the_configured_backend() -> None:
    from repro.app import doctor
    from repro.config import RunConfig

    lines = {line.name: line for line in doctor(RunConfig(lean=LeanSettings(backend="fake", workers=1)))}
    line = lines["Lean self-test (fake, v4.15.0)"]
    assert line.ok and not line.required
    assert "only a real backend can answer sentinel_position, timeout_reported, toolchain_reported" in line.detail


# -- the kernel judge's cases ------------------------------------------------------------------------------
def _stand_in_judge(tmp_path: Path, *extra: str, real: bool) -> object:
    from repro.config import JudgeSettings
    from tests.doubles import judges

    judge = judges.safeverify(JudgeSettings(tools_dir=str(tmp_path / "tools")), *extra)
    judge.real = real  # real=True stands in for a working real judge in these tests only
    return judge


async def test_on_a_stand_in_judge_the_judge_cases_are_listed_as_answerable_only_by_a_real_one(
    tmp_path: Path,
) -> None:
    from repro.judge.selftest import JUDGE_CASES

    report = await run_selftest(LeanSettings(backend="fake", workers=1), judge=_stand_in_judge(tmp_path, real=False))
    judged = {o.name: o for o in report.outcomes if o.name.startswith("judge_")}
    assert (
        set(judged)
        == {case.name for case in JUDGE_CASES}
        == {
            "judge_honest_proof",
            "judge_changed_statement",
            "judge_extra_axiom",
        }
    )
    assert all(o.passed is None and o.detail == "answerable only by a real judge" for o in judged.values())
    lines = render_report(report)
    assert any(line.startswith("only a real kernel judge") and "judge_extra_axiom" in line for line in lines)
    assert any(line.startswith("  judge: SafeVerify 577e95319a2b for v4.15.0 (a stand-in") for line in lines)


async def test_the_judge_cases_pass_on_a_working_judge_and_fail_on_a_broken_one_naming_why(tmp_path: Path) -> None:
    working = await run_selftest(LeanSettings(backend="fake", workers=1), judge=_stand_in_judge(tmp_path, real=True))
    judged = [o for o in working.outcomes if o.name.startswith("judge_")]
    assert len(judged) == 3 and all(o.passed for o in judged), [o.detail for o in judged]
    assert working.passed
    broken = await run_selftest(
        LeanSettings(backend="fake", workers=1),
        judge=_stand_in_judge(tmp_path, "--fail", "safe_verify:killed", real=True),
    )
    failed = {o.name: o.detail for o in broken.failed}
    assert set(failed) == {"judge_honest_proof", "judge_changed_statement", "judge_extra_axiom"}
    assert "unavailable (killed)" in failed["judge_honest_proof"]


def test_the_selftest_command_runs_the_judge_cases_of_the_configured_judge(tmp_path: Path) -> None:
    config = tmp_path / "judge.yaml"
    config.write_text(
        f"judge:\n  backend: factory\n  factory: tests.doubles.judges:safeverify\n  tools_dir: {tmp_path / 'tools'}\n",
        encoding="utf-8",
    )
    from tests.conftest import REPO

    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "repro.cli",
            "lean",
            "selftest",
            "--backend",
            "fake",
            "--config",
            str(config),
            "--judge",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 4, result.stdout + result.stderr
    assert "only a real kernel judge (SafeVerify or comparator) can answer: judge_honest_proof" in result.stdout
