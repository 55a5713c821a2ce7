"""`repro check-proof` asks the kernel judge after a screen pass, and only a real judge's pass is verified.

The screen runs in the prover's Lean environment (docs/trust.md): its "yes" only makes a candidate for the
judge. These tests put the product's REPL pool, started on the protocol fake REPL and reporting real Lean
(as red team red1 did for finding R1), in front of check-proof, so the screen passes "on real Lean"; what
check-proof then says depends only on the judge it asks.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import repro.app as app
from repro.cli import main
from repro.exit_codes import ExitCode
from repro.judge.verdict import JudgeRequest, JudgeStatus, JudgeVerdict
from repro.lean.cached import CachedVerifier
from repro.lean.fake_backend import make_fake_repl_home
from repro.lean.repl_pool import ReplPoolVerifier

STATEMENT = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry"
HONEST = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num"
THIS = "tests.test_check_proof_judge"


def real_claiming_pool(tmp_path: Path) -> ReplPoolVerifier:
    """The product's REPL pool on the protocol fake, reporting real Lean: a screen pass "on real Lean"."""
    from lean_interact import LeanREPLConfig

    home = make_fake_repl_home(None, tmp_path / "repl-home")
    config = LeanREPLConfig(
        local_repl_path=home,
        build_repl=False,
        lake_path=home / "lake",
        enable_incremental_optimization=False,
        enable_parallel_elaboration=False,
    )
    return ReplPoolVerifier(
        workers=1,
        timeout_s=20,
        repl_config=config,
        toolchain="leanprover/lean4:v4.15.0",
        mathlib_revision="v4.15.0",
        real_lean=True,
        backend_id="lean-interact-repl",
        start_timeout_s=30.0,
    )


class ClaimingJudge:
    """A judge that says it is real and answers ``status`` for everything (what a real judge would say of
    this proof cannot be had here); it lets the exit codes of a real pass and a real refusal be checked."""

    name = "claims-real"
    real = True

    def __init__(self, status: JudgeStatus) -> None:
        self.status = status
        self.requests: list[JudgeRequest] = []

    def revision(self, toolchain: str) -> str | None:
        return "r1"

    async def judge(self, request: JudgeRequest) -> JudgeVerdict:
        self.requests.append(request)
        return JudgeVerdict(
            key=request.key,
            status=self.status,
            tool=self.name,
            tool_revision="r1",
            toolchain=request.toolchain,
            real=True,
            confinement="bwrap (claimed)",
            detail="uncaught exception: robe_total does not have the same type"
            if self.status == JudgeStatus.rejected
            else "",
            refusal="type_mismatch" if self.status == JudgeStatus.rejected else None,
        )


def passing_judge(settings: Any = None) -> ClaimingJudge:
    return ClaimingJudge(JudgeStatus.passed)


def rejecting_judge(settings: Any = None) -> ClaimingJudge:
    return ClaimingJudge(JudgeStatus.rejected)


@pytest.fixture
def real_screen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(app, "build_verifier", lambda lean, store=None: CachedVerifier(real_claiming_pool(tmp_path)))


def _files(tmp_path: Path) -> list[str]:
    (tmp_path / "s.lean").write_text(STATEMENT, encoding="utf-8")
    (tmp_path / "p.lean").write_text(HONEST, encoding="utf-8")
    return ["check-proof", "--statement", str(tmp_path / "s.lean"), "--proof", str(tmp_path / "p.lean")]


def _tools(tmp_path: Path) -> list[str]:
    """An empty judge tools directory: the pinned judge is not set up here, whatever ~/.cache holds."""
    (tmp_path / "no-tools").mkdir(exist_ok=True)
    return ["--judge-tools", str(tmp_path / "no-tools")]


# red team red1, finding R1: check-proof said "verified" (exit 0) from the screen alone
def test_a_real_screen_pass_without_a_judge_is_no_verdict_never_verified(
    tmp_path: Path, real_screen: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main([*_files(tmp_path), *_tools(tmp_path)])
    out = capsys.readouterr().out
    assert code == ExitCode.unfinished, out
    assert out.startswith("screen passed, judge: no verdict (missing) by ") and "no verdict" in out.splitlines()[0]
    assert "verified" not in out.splitlines()[0].split(";")[-1]


def test_only_a_real_judges_pass_after_a_real_screen_exits_0(
    tmp_path: Path, real_screen: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main([*_files(tmp_path), "--judge-factory", f"{THIS}:passing_judge", "--json"])
    payload = json.loads(capsys.readouterr().out)
    assert code == ExitCode.verified == 0
    assert payload["verified"] is True and payload["real_lean"] is True and payload["judge"]["real"] is True
    assert payload["judge"]["toolchain"] == "v4.15.0"  # the configured toolchain, as the pipeline asks


def test_a_judges_refusal_after_a_screen_pass_is_a_rejection(
    tmp_path: Path, real_screen: None, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main([*_files(tmp_path), "--judge-factory", f"{THIS}:rejecting_judge"])
    out = capsys.readouterr().out
    assert code == ExitCode.rejected
    first = out.splitlines()[0]
    assert first == "screen passed, judge: rejected (type_mismatch) by claims-real r1 on v4.15.0; NOT verified", out
    assert "judge said: uncaught exception: robe_total does not have the same type" in out


def test_the_judge_gets_the_trusted_header_and_the_text_the_screen_checked(tmp_path: Path, real_screen: None) -> None:
    """The request the pipeline's judge stage builds: the configured header, our statement (a statement file's
    own header lines dropped), the text the screen's Lean check saw (the prover's imports blanked)."""
    import asyncio

    from repro.config import LeanSettings

    judge = ClaimingJudge(JudgeStatus.passed)
    lean = LeanSettings(header="import Mathlib\nopen Real\n")
    proof = "import Mathlib\n" + HONEST
    checked = asyncio.run(app.check_proof("import Mathlib\n\n" + STATEMENT, proof, lean, judge))
    assert checked.verified and len(judge.requests) == 1
    request = judge.requests[0]
    assert request.header == lean.header and request.statement == STATEMENT and request.theorem_name == "robe_total"
    assert request.submission == checked.screen.checked_code and "import" not in request.submission
    assert request.submission.strip() == HONEST.strip()


def test_a_batch_on_a_real_screen_without_a_judge_verifies_nothing(
    tmp_path: Path, real_screen: None, capsys: pytest.CaptureFixture[str]
) -> None:
    batch = tmp_path / "in.jsonl"
    batch.write_text(json.dumps({"id": "a", "statement": STATEMENT, "output": HONEST}) + "\n", encoding="utf-8")
    out = tmp_path / "out.jsonl"
    code = main(["check-proof", "--batch", str(batch), "--out", str(out), *_tools(tmp_path), "--json"])
    summary = json.loads(capsys.readouterr().out)
    row = json.loads(out.read_text(encoding="utf-8"))
    assert code == ExitCode.unfinished
    assert summary["verified"] == 0 and summary["screen_passed"] == 1 and summary["infrastructure_failures"] == 1
    assert row["screen_passed"] and not row["verified"] and row["reasons"] == ["judge_unavailable"]
    # a judge that gives its verdict on resume decides the row (a row with no verdict is checked again)
    code = main(["check-proof", "--batch", str(batch), "--out", str(out), "--judge-factory", f"{THIS}:passing_judge"])
    assert code == ExitCode.verified and "1 verified" in capsys.readouterr().out


def test_the_python_front_door_verifies_nothing_without_a_real_judge(tmp_path: Path, real_screen: None) -> None:
    import repro
    from repro.config import JudgeSettings

    (tmp_path / "no-tools").mkdir()
    checked = repro.check_proof(STATEMENT, HONEST, judge=JudgeSettings(tools_dir=str(tmp_path / "no-tools")))
    assert checked.screen.verified and checked.screen_real
    assert not checked.verified and checked.exit_code == ExitCode.unfinished
