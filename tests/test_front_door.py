"""The Python front door: what a notebook imports from ``repro`` itself, used as a notebook would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import repro
from repro.config import LeanSettings
from tests.conftest import REPO


def test_every_exported_name_resolves_and_import_repro_stays_light() -> None:
    assert set(repro.__all__) == {"__version__", *repro._EXPORTS}
    for name in repro.__all__:
        assert getattr(repro, name) is not None, name
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, repro; print(sorted(m for m in sys.modules if m.startswith('repro')))"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=True,
    ).stdout
    assert loaded.strip() == "['repro']", "import repro loads nothing else until a name is used"
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = repro.nope  # type: ignore[attr-defined]


def test_a_notebook_runs_reads_releases_and_reverifies_the_demo(tmp_path: Path) -> None:
    outcome = repro.run(run_dir=tmp_path / "demo", overrides=["dataset.limit=3"])
    assert outcome.summary.drawn == 3 and outcome.unfinished == 0

    view = repro.load_run(tmp_path / "demo")
    assert view.config.demonstration and view.config.dataset.limit == 3
    status = view.status()
    assert status["rates"]["drawn"] == 3 and status["rates"]["retained"] == outcome.summary.retained
    retained = view.candidates("retained")
    assert retained and all(isinstance(c, repro.Candidate) for c in retained)
    attempts = view.attempts(candidate_id=retained[0].candidate_id, stage="formalize")
    assert attempts and all(isinstance(a, repro.StageAttempt) for a in attempts)
    assert [row["candidate_id"] for row in view.audit(limit=2)] == [row["candidate_id"] for row in view.audit()[:2]]

    from repro import release

    assert release is repro.release and repro.release.write_release, "the entry point is the package, callable"
    summary = release(tmp_path / "demo", tmp_path / "release", allow_unverified=True)
    assert isinstance(summary, repro.ReleaseSummary) and summary.written == len(retained)
    assert summary.unverified == summary.written, "the demonstration never releases a verified row"
    results = repro.reverify(tmp_path / "release", lean=LeanSettings(backend="fake"))
    assert results and all(isinstance(r, repro.ReverifyResult) and not r.real_lean for r in results)


def test_check_proof_and_its_errors_from_python(tmp_path: Path) -> None:
    statement = "theorem t (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry"
    proof = "```lean4\ntheorem t (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num\n```"
    stand_in = repro.JudgeSettings(backend="factory", factory="tests.doubles.judge:stand_in_judge")
    checked = repro.check_proof(statement, proof, lean=LeanSettings(backend="fake"), judge=stand_in)
    assert isinstance(checked, repro.ProofCheck) and isinstance(checked.screen, repro.Verdict)
    assert checked.passed and not checked.verified and checked.exit_code == repro.ExitCode.fake_backend
    assert checked.judge is not None and not checked.judge.real and not checked.screen_real
    refused = repro.check_proof(
        statement, "```lean4\ntheorem t : False := by\n  sorry\n```", lean=LeanSettings(backend="fake"), judge=stand_in
    )
    assert not refused.verified and not refused.passed and refused.judge is None
    with pytest.raises(repro.ReproError) as caught:
        repro.load_run(tmp_path / "nothing")
    assert caught.value.exit_code == repro.ExitCode.usage and "no run store" in str(caught.value)
