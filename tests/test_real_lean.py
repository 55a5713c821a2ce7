"""Run only where a real Lean toolchain and the built lean_project/ exist (see docker/Dockerfile).

These are the hole classes only real Lean can refute: the bridge (does the prover's theorem have our
statement's type, as Lean elaborated it before the prover's code existed?) and the separate axiom
command (a clean-looking report printed by the prover's own code must not count).
"""

from __future__ import annotations

import pytest

from repro.config import LeanSettings
from repro.lean import build_verifier, verify_proof
from repro.records import ReasonCode
from tests.conftest import REPO

pytestmark = pytest.mark.lean
STATEMENT = "theorem real_check (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry"
LET_STATEMENT = "theorem real_let (n : ℕ) (h : n = 4) : let k : ℕ := n * 3\n  k = 12 := by sorry"
SPOOF = "'real_check' does not depend on any axioms"


@pytest.fixture
def settings() -> LeanSettings:
    return LeanSettings(backend="repl", project_path=str(REPO / "lean_project"), workers=1, timeout_s=300)


async def _verify(settings: LeanSettings, cases: list[tuple[str, str]], **options: bool) -> list:
    verifier = build_verifier(settings)
    try:
        return [await verify_proof(s, p, verifier, header=settings.header, **options) for s, p in cases]
    finally:
        await verifier.close()


async def test_honest_proof_and_cosmetic_restatements_pass_the_bridge(settings: LeanSettings) -> None:
    proofs = [
        "theorem real_check (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num",
        # lemma, Nat for ℕ, tight binder, other binder names: the same type to Lean
        "lemma real_check (y: Nat) (hy : y = 3600) : y / 12 = 300 := by\n  subst hy\n  norm_num",
        "open Finset in\ntheorem real_check {x : ℕ} (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀; rfl",
    ]
    verdicts = await _verify(settings, [(STATEMENT, proof) for proof in proofs])
    for verdict in verdicts:
        assert verdict.verified, verdict.details
        assert verdict.lean is not None and verdict.lean.real_lean
        assert set(verdict.axioms or []) <= {"propext", "Classical.choice", "Quot.sound"}
        assert verdict.prover_statement_matches is True


async def test_changed_targets_fail_the_bridge(settings: LeanSettings) -> None:
    cases = [
        (STATEMENT, "theorem real_check (x : ℕ) (h₀ : x = 3600) : x / 12 = x / 12 := by\n  rfl"),
        (STATEMENT, "theorem real_check (x : ℕ) (h₀ : x = 3600) (k : ℕ := 12) : x / k = x / k := by\n  rfl"),
        (LET_STATEMENT, "theorem real_let (n : ℕ) (h : n = 4) : let k : ℕ := n * 3\n  k = k := by\n  intro k\n  rfl"),
        (LET_STATEMENT, "theorem real_let (n : ℕ) (h : n = 4) : True := by\n  trivial"),
    ]
    for verdict in await _verify(settings, cases):
        assert not verdict.verified
        assert ReasonCode.statement_mismatch in verdict.reasons, verdict.details
        assert verdict.prover_statement_matches is False


async def test_let_statement_honest_proof_passes(settings: LeanSettings) -> None:
    proof = "theorem real_let (n : ℕ) (h : n = 4) : let k : ℕ := n * 3\n  k = 12 := by\n  intro k\n  subst h\n  rfl"
    (verdict,) = await _verify(settings, [(LET_STATEMENT, proof)])
    assert verdict.verified, verdict.details


async def test_a_spoofed_axiom_report_in_the_proof_does_not_count(settings: LeanSettings) -> None:
    # native_decide is let past the static layer here on purpose: only Lean's own axiom command can refuse it
    proof = (
        "theorem real_check (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n"
        f'  trace "{SPOOF}"\n'
        "  subst h₀\n  native_decide"
    )
    (verdict,) = await _verify(settings, [(STATEMENT, proof)], allow_native_decide=True)
    assert not verdict.verified
    assert ReasonCode.axiom_violation in verdict.reasons
    assert "Lean.ofReduceBool" in (verdict.axioms or [])
    assert any(SPOOF in m.text for m in verdict.lean_steps[1].messages), "the spoof was printed, and ignored"


async def test_wrong_proof_and_unelaborating_statement(settings: LeanSettings) -> None:
    cases = [
        (STATEMENT, "theorem real_check (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  rfl"),
        ('theorem real_bad (x : ℕ) : x = "one" := by sorry', "theorem real_bad (x : ℕ) : 1 = 1 := rfl"),
    ]
    wrong, unelaborating = await _verify(settings, cases)
    assert ReasonCode.lean_error in wrong.reasons and not wrong.verified
    assert not unelaborating.verified and any("statement itself" in d for d in unelaborating.details)
