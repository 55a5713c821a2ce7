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


async def test_lean_runs_code_inside_a_plain_string_literal(settings: LeanSettings) -> None:
    """Why every string literal is refused: ``throwError`` reads ``{}`` in a plain literal as code."""
    vehicle = 'def vehicle : Lean.MetaM Unit := throwError "{(rfl : 1 = 2)}"'
    verifier = build_verifier(settings)
    try:
        result = await verifier.check(vehicle, settings.header)
        statically = await verify_proof(
            STATEMENT,
            vehicle + "\ntheorem real_check (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num",
            verifier,
            header=settings.header,
        )
    finally:
        await verifier.close()
    # Lean elaborated the interpolant: a type error about `rfl`, not a string
    assert result.has_error and any("1 = 2" in m.text or "mismatch" in m.text for m in result.messages)
    assert not statically.verified and statically.lean_steps == []
    assert any("string literal" in detail for detail in statically.details)


async def test_the_kimina_sentinel_prints_its_own_text_at_its_line(settings: LeanSettings) -> None:
    """The Kimina backend's sentinels assume `#print "s"` answers exactly `s`, positioned at its own line."""
    verifier = build_verifier(settings)
    try:
        result = await verifier.check(
            'theorem sentinel_probe : True := trivial\n\n#print "repro_sentinel_ab_0"', settings.header
        )
    finally:
        await verifier.close()
    (message,) = [m for m in result.messages if "repro_sentinel_ab_0" in m.text]
    assert message.text.strip() == "repro_sentinel_ab_0" and message.severity == "info" and message.line == 3


async def test_honest_forms_the_gate_now_allows_pass_real_lean(settings: LeanSettings) -> None:
    dotted = "theorem Nat.real_dotted (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry"
    cases = [
        (
            STATEMENT,
            "lemma tokens_helper (s : Set ℕ) : (∑' _n : ℕ, (0 : ℝ)) = 0 ∧ id ⁻¹' s = s ∧ id '' s = s :=\n"
            "  ⟨tsum_zero, Set.preimage_id, Set.image_id s⟩\n\n"
            "theorem real_check (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num",
        ),
        (
            STATEMENT,
            "universe u\n\n@[simp] lemma div_helper : (3600 : ℕ) / 12 = 300 := by norm_num\n\n"
            "theorem real_check (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  simp",
        ),
        (dotted, "theorem Nat.real_dotted (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num"),
        (
            STATEMENT,
            "Proof:\n```\ntheorem real_check (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num\n```",
        ),
    ]
    for verdict in await _verify(settings, cases):
        assert verdict.verified, verdict.details
