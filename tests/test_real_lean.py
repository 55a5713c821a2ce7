"""Run only where a real Lean toolchain and the built lean_project/ exist (see docker/Dockerfile)."""

from __future__ import annotations

import pytest

from repro.config import LeanSettings
from repro.lean import build_verifier, verify_proof
from repro.records import ReasonCode
from tests.conftest import REPO

pytestmark = pytest.mark.lean
STATEMENT = "theorem real_check (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry"


@pytest.fixture
def settings() -> LeanSettings:
    return LeanSettings(backend="repl", project_path=str(REPO / "lean_project"), workers=1, timeout_s=300)


async def test_real_lean_verifies_an_honest_proof_and_lists_standard_axioms(settings: LeanSettings) -> None:
    verifier = build_verifier(settings)
    try:
        verdict = await verify_proof(
            STATEMENT,
            "theorem real_check (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num",
            verifier,
            header=settings.header,
        )
    finally:
        await verifier.close()
    assert verdict.verified and verdict.lean is not None and verdict.lean.real_lean
    assert set(verdict.axioms or []) <= {"propext", "Classical.choice", "Quot.sound"}


async def test_real_lean_rejects_a_wrong_proof_and_a_native_decide(settings: LeanSettings) -> None:
    verifier = build_verifier(settings.model_copy(update={"allow_native_decide": True}))
    try:
        wrong = await verify_proof(
            STATEMENT,
            "theorem real_check (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  rfl",
            verifier,
            header=settings.header,
        )
        native = await verify_proof(
            STATEMENT,
            "theorem real_check (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  native_decide",
            verifier,
            header=settings.header,
            allow_native_decide=True,
        )
    finally:
        await verifier.close()
    assert ReasonCode.lean_error in wrong.reasons
    assert ReasonCode.axiom_violation in native.reasons and "Lean.ofReduceBool" in (native.axioms or [])
