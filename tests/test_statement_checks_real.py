"""The statement checks against real Lean (run where lake and the built lean_project/ exist):

    pytest -m lean tests/test_statement_checks_real.py

Each case is one where a success must mean exactly what we record, including the attacks: a
conclusion ``x = 4 → False`` (its premise is introduced, so the statement is vacuous as stated), a
``¬`` conclusion (never introduced), an ``↔`` whose arrows Lean groups otherwise, a binder named
``False``, and an untyped binder whose type only the conclusion fixes.
"""

from __future__ import annotations

import pytest

from repro.config import LeanSettings
from repro.lean import build_verifier
from repro.lean.statement_checks import CheckOutcome, check_statement, check_witness, refute_statement
from tests.conftest import REPO

pytestmark = pytest.mark.lean


@pytest.fixture
def settings() -> LeanSettings:
    return LeanSettings(backend="repl", project_path=str(REPO / "lean_project"), workers=1, timeout_s=300)


async def _statuses(settings: LeanSettings, statements: list[str], refute: bool = False) -> list[str]:
    verifier = build_verifier(settings)
    try:
        check = refute_statement if refute else check_statement
        return [(await check(s, verifier, header=settings.header)).status for s in statements]
    finally:
        await verifier.close()


async def test_vacuity_and_satisfiability_as_recorded(settings: LeanSettings) -> None:
    statements = [
        "theorem v1 (x : ℕ) (h₀ : x = 3600) (h₁ : x / 12 = 299) : x = 7 := by sorry",  # omega/simp_all
        "theorem v2 (x : ℚ) (h₀ : 2 * x = 1) (h₁ : x > 1) : x = 7 := by sorry",  # linarith only
        "theorem v3 (x y : ℕ) (h₀ : x = 3600) (h₁ : y = x / 12) : let z := y * 2\n  z = 600 := by sorry",
        "theorem v4 (x : ℕ) (h : x = 3) : ¬ x = 4 := by sorry",  # ¬ is not introduced: not vacuous
        "theorem v5 (False : Prop) (h : False) (x : ℕ) (hx : x = 2) : x = 5 := by sorry",  # a local False
        # an untyped binder: whatever type Lean gives x (ℕ by default instance, or ℚ from the conclusion),
        # the check reads the elaborated type: vacuous exactly when 2 * x = 1 has no solution there
        "theorem v6 (x) (h : 2 * x = 1) : x + (0 : ℚ) = 1 / 2 := by sorry",
    ]
    statuses = await _statuses(settings, statements)
    assert statuses[:5] == ["vacuous", "vacuous", "satisfiable", "satisfiable", "flagged"]
    assert statuses[5] in ("vacuous", "flagged")


async def test_refutation_as_recorded(settings: LeanSettings) -> None:
    statements = [
        "theorem r1 (x y : ℕ) (h₀ : x = 3600) (h₁ : y = x / 12) : let z := y * 2\n  z = 601 := by sorry",
        "theorem r2 : (2 : ℕ) + 2 = 5 := by sorry",
        "theorem r3 (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry",
    ]
    assert await _statuses(settings, statements, refute=True) == ["refuted", "refuted", "not_refuted"]


async def test_a_witness_proves_our_statement_or_nothing(settings: LeanSettings) -> None:
    verifier = build_verifier(settings)
    statement = "theorem w (x : ℕ) (h₀ : x = 10) : ∃ y : ℕ, y * 2 = x := by sorry"
    try:
        good = await check_witness(statement, ["5"], verifier, header=settings.header)
        bad = await check_witness(statement, ["4"], verifier, header=settings.header)
    finally:
        await verifier.close()
    assert good.outcome == CheckOutcome.proved and bad.outcome == CheckOutcome.failed
