from __future__ import annotations

import json
from pathlib import Path

import pytest

from repro import __version__
from repro.cli import main
from tests.repro_cli import repro

REPO = Path(__file__).resolve().parents[1]


def test_help_lists_every_command_and_version_prints() -> None:
    result = repro("--help")
    assert result.returncode == 0
    for command in ("run", "status", "audit", "release", "doctor", "check-proof", "repair", "reverify"):
        assert command in result.stdout
    assert repro("--version").stdout.strip() == f"repro {__version__}"


def test_doctor_reports_missing_lean_and_endpoints_without_a_traceback(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(
        "models:\n  prove: {backend: openai, model: m, base_url: 'http://127.0.0.1:9/v1', api_key_env: null}\n"
    )
    result = repro("doctor", "--config", str(config))
    assert result.returncode == 1 and "Traceback" not in result.stdout + result.stderr
    assert "python package pydantic: installed" in result.stdout
    assert "MISSING Lean toolchain" in result.stdout or "OK      Lean toolchain" in result.stdout
    assert "MISSING endpoint http://127.0.0.1:9/v1 (m): unreachable" in result.stdout


def test_demo_run_status_audit_and_release(tmp_path: Path) -> None:
    run_dir = tmp_path / "demo"
    result = repro("run", "--config", "configs/demo.yaml", "--run-dir", str(run_dir), "--limit", "6")
    assert result.returncode == 0, result.stderr
    assert "demonstration" in result.stderr
    status = json.loads(repro("status", str(run_dir), "--json").stdout)
    assert status["rates"]["drawn"] == 6 and status["funnel"]["rewrite"]["reached"] >= 6
    audit = json.loads(repro("audit", str(run_dir), "--json").stdout)
    assert all(row["reject_reason"] for row in audit)
    release = repro("release", str(run_dir), "--out", str(tmp_path / "rel"))
    assert release.returncode == 1 and "withheld" in release.stderr and "nothing to release" in release.stderr
    again = repro("run", "--config", "configs/demo.yaml", "--run-dir", str(run_dir))
    assert again.returncode == 2 and "--resume" in again.stderr


def test_check_proof_exit_status_follows_the_verdict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    statement = tmp_path / "s.lean"
    statement.write_text("theorem t (x : ℕ) (h : x = 2) : x + 1 = 3 := by sorry")
    good, bad = tmp_path / "good.lean", tmp_path / "bad.lean"
    good.write_text("theorem t (x : ℕ) (h : x = 2) : x + 1 = 3 := by\n  subst h\n  rfl")
    bad.write_text("theorem t (x : ℕ) (h : x = 2) : x + 1 = 3 := by\n  sorry")
    stand_in = ["--backend", "fake", "--judge-factory", "tests.doubles.judge:stand_in_judge"]
    # a fake backend and a stand-in judge never yield exit status 0: nothing real checked it (4)
    assert main(["check-proof", "--statement", str(statement), "--proof", str(good), *stand_in]) == 4
    out = capsys.readouterr().out
    assert "screen passed (fake Lean backend), judge: passed by stand-in judge" in out and "NOT verified" in out
    assert main(["check-proof", "--statement", str(statement), "--proof", str(bad), *stand_in, "--json"]) == 1
    verdict = json.loads(capsys.readouterr().out)
    assert verdict["reasons"] == ["forbidden_construct"] and verdict["verified"] is False
    assert verdict["judge"] is None  # the screen refused it: the judge was not asked


def test_bad_input_is_reported_without_a_traceback(tmp_path: Path) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"question": "q", "answer": "#### 1"}\n{"question": "q2", "answer": "no number"}\n')
    result = repro("run", "--config", "configs/demo.yaml", "--dataset", str(broken), "--run-dir", str(tmp_path / "r"))
    assert result.returncode == 2 and "broken.jsonl:2" in result.stderr and "Traceback" not in result.stderr
    bad_set = repro("run", "--config", "configs/demo.yaml", "--set", "prove.k=zero")
    assert bad_set.returncode == 2 and "prove.k" in bad_set.stderr


def test_a_run_without_a_working_lean_backend_stops_before_any_model_call(tmp_path: Path) -> None:
    if (REPO / "lean_project" / ".lake").exists():
        pytest.skip("a Lean project is built here, so the repl backend works")
    run_dir = tmp_path / "nolean"
    result = repro("run", "--config", "configs/demo.yaml", "--set", "lean.backend=repl", "--run-dir", str(run_dir))
    assert result.returncode == 3 and "cannot check code" in result.stderr and "Nothing was run" in result.stderr
    assert not run_dir.exists(), "a run that never started leaves no run directory"
