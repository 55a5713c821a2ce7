"""Run only where a real Lean toolchain and the built lean_project/ exist (see docker/Dockerfile).

These are the hole classes only real Lean can refute: the bridge (does the prover's theorem have our
statement's type, as Lean elaborated it before the prover's code existed?) and the separate axiom
command. Most of them are the `repro lean selftest` battery (repro.judge.selftest), run here case by case;
the rest are gate behaviours beyond the battery. None of this has run against real Lean on CI.
"""

from __future__ import annotations

import pytest

from repro.config import LeanSettings
from repro.judge import verify_proof
from repro.judge.screen import _judge_lean, _our_statement, lean_commands, reserved_name
from repro.judge.selftest import CASES, render_report, run_selftest
from repro.judge.verdict import Verdict
from repro.lean import build_verifier
from repro.lean.text import Statement
from repro.records import ReasonCode
from tests.conftest import REPO

pytestmark = pytest.mark.lean
STATEMENT = "theorem real_check (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry"
LET_STATEMENT = "theorem real_let (n : ℕ) (h : n = 4) : let k : ℕ := n * 3\n  k = 12 := by sorry"


@pytest.fixture
def settings() -> LeanSettings:
    return LeanSettings(backend="repl", project_path=str(REPO / "lean_project"), workers=1, timeout_s=300)


async def _verify(settings: LeanSettings, cases: list[tuple[str, str]], **options: bool) -> list:
    verifier = build_verifier(settings)
    try:
        return [await verify_proof(s, p, verifier, header=settings.header, **options) for s, p in cases]
    finally:
        await verifier.close()


@pytest.mark.parametrize("case", [case.name for case in CASES])
async def test_the_selftest_battery_passes_on_real_lean(settings: LeanSettings, case: str) -> None:
    """The battery of `repro lean selftest` (honest proof, changed targets in hypothesis and let styles,
    cosmetic restatement, sorry, custom axiom, native_decide, sentinel positions, timeout, toolchain)."""
    report = await run_selftest(settings, only=[case])
    assert report.real_lean and report.passed and not report.unanswered, render_report(report)


async def test_let_statement_honest_proof_passes(settings: LeanSettings) -> None:
    proof = "theorem real_let (n : ℕ) (h : n = 4) : let k : ℕ := n * 3\n  k = 12 := by\n  intro k\n  subst h\n  rfl"
    (verdict,) = await _verify(settings, [(LET_STATEMENT, proof)])
    assert verdict.verified, verdict.details


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


async def test_the_prover_code_runs_in_our_section_on_real_lean(settings: LeanSettings) -> None:
    """Issue 19 §3: the prover's scopes end before our trusted commands (``repro.judge.scopes``).

    Lean's ``elabEnd`` pops first and then fails on a mismatch: a prover ``end`` that reaches our
    section is an error in its own command; a scope left open that our count did not close makes our
    ``end`` fail. Honest sections, opens, Prop-valued instances and ``Matrix.trace`` pass.
    """
    body = "theorem real_check (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num\n"
    trace_statement = "theorem real_trace (A : Matrix (Fin 2) (Fin 2) ℕ) (h : A = 1) : Matrix.trace A = 2 := by sorry"
    honest = [
        (STATEMENT, "noncomputable section\nopen Finset ProbabilityTheory\n" + body),
        (STATEMENT, "section\nset_option maxHeartbeats 800000\n" + body + "end\n"),
        (STATEMENT, "instance : Fact (Nat.Prime 7) := ⟨by norm_num⟩\n" + body),
        (
            trace_statement,
            "theorem real_trace (A : Matrix (Fin 2) (Fin 2) ℕ) (h : A = 1) : Matrix.trace A = 2 := by\n"
            "  subst h\n  simp [Matrix.trace]",
        ),
    ]
    for verdict in await _verify(settings, honest):
        assert verdict.verified, verdict.details
    (closing_ours,) = await _verify(settings, [(STATEMENT, body + "end\n")])
    assert not closing_ours.verified and ReasonCode.lean_error in closing_ours.reasons
    assert any("invalid 'end'" in m.text for m in closing_ours.lean_steps[1].messages)
    # straight to the backend: a namespace the static layer would refuse, left open, fails our own `end`
    parsed, _ = _our_statement(STATEMENT, settings.header)
    assert isinstance(parsed, Statement)
    commands = lean_commands(parsed, reserved_name(STATEMENT), "namespace Foo\n" + body, prover_closers=[])
    verifier = build_verifier(settings)
    try:
        results = await verifier.check_sequence(commands, settings.header)
    finally:
        await verifier.close()
    verdict = Verdict(verified=False)
    _judge_lean(verdict, results, "real_check")
    assert any("leaves a section or namespace open" in detail for detail in verdict.details), verdict.details
