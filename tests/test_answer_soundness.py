"""A deterministic answer is the value the statement entails, in its type (adversary findings 3, 4, S3).

The attack statements are the red team's (``/work/adv/04-*``, ``05-*``, ``08-*``, ``11-*``): each is true
in Lean, so a prover proves it, and before the fix the literal the reader released was not what the
statement says (``16 / 3`` is 5 in ℕ; ``9 = 2`` in ``ZMod 7``; ``5`` behind a false premise).
"""

from __future__ import annotations

import json

import pytest

from repro.config import ModelSettings
from repro.lean.fake_backend import fake_repl_verifier
from repro.llm.client import ModelClient
from repro.llm.protocol import ModelRequest
from repro.llm.scripted import ScriptedBackend
from repro.records import AttemptStatus, ReasonCode
from repro.stages.answer import deterministic_answer, is_existential, recover_answer


@pytest.mark.parametrize(
    "statement",
    [
        "theorem mean_of_three : ((3 + 4 + 8 : ℕ)) / 3 = 16 / 3 := by sorry",  # ℕ division: 16 / 3 = 5
        "theorem m (x : ℤ) (h : x = 7) : x / 2 = 7 / 2 := by sorry",  # ℤ division
        "theorem rem_two_pow : (2 : ZMod 7) ^ 10 = 9 := by sorry",  # 9 = 2 in ZMod 7
        "theorem f (i : Fin 5) (h : i = 3) : i + 4 = 7 := by sorry",  # 7 = 2 in Fin 5
        "theorem c (x : ℕ) (h : x = 3) : (x : ZMod 4) = 7 := by sorry",
        "theorem u (x : ℕ) (h : x = 3) : Nat.succ x = 4 := by sorry",  # library function: type unknown
        "theorem w : y * 2 = 8 := by sorry",  # auto-bound `y`: type unknown
        "theorem r (x : ℝ) (h : x = 5) : ⌊x / 2⌋ = 5 / 2 := by sorry",  # floor is ℤ-valued
        "theorem k (x : ℕ) (h : x = 5) : (x : ℝ) / 2 = 5 / 2 := by sorry",  # a cast
        "theorem e (x : ℝ) (h : x = 5) : x = 2 + 3 := by sorry",  # an operator on the answer side
        "theorem n (x : ℕ) (h : x = 5) : x = 5.0 := by sorry",  # a decimal is no ℕ numeral
    ],
)
def test_a_literal_that_is_not_a_numeral_of_a_known_numeric_type_is_not_released(statement: str) -> None:
    assert deterministic_answer(statement) is None


@pytest.mark.parametrize(
    "statement",
    [
        "theorem find_x (x : ℕ) (h₀ : x + 2 = 6) : (∀ n : ℕ, n < 10) → x = 5 := by sorry",
        "theorem p (x : ℕ) (h₀ : x + 2 = 6) : x > 100 → x = 5 := by sorry",
        "theorem d (x : ℕ) (h : x = 3) : x = 3 ∨ x = 7 := by sorry",
        "theorem q (x : ℕ) (h : x = 3) : x = 7 ↔ False := by sorry",
        "theorem a : ∀ x : ℕ, x = 5 := by sorry",
        "theorem g (x : ℕ) (h : x = 3) : ¬ x = 7 := by sorry",
    ],
)
def test_no_answer_is_read_behind_a_premise_a_disjunction_or_a_binder(statement: str) -> None:
    assert deterministic_answer(statement) is None


@pytest.mark.parametrize(
    ("statement", "answer"),
    [
        ("theorem a (x : ℝ) (h : 2 * x = 5) : x = 5 / 2 := by sorry", "5 / 2"),
        ("theorem a (x : ℚ) (h : 2 * x = 5) : x = 2.5 := by sorry", "2.5"),
        ("theorem a (x : ℤ) (h : x + 7 = 2) : x = -5 := by sorry", "-5"),
        ("theorem a : (15 : ℚ) / 4 + 1 = 19 / 4 := by sorry", "19 / 4"),  # a closed computation
        ("theorem a (f : ℕ → ℕ) (h : ∀ n, f n = 2 * n) : f 3 = 6 := by sorry", "6"),
        ("theorem a (x : ℕ) (h : x = 3600) : (x / 12 : ℕ) = 300 := by sorry", "300"),
    ],
)
def test_numerals_of_a_known_type_are_still_read(statement: str, answer: str) -> None:
    assert deterministic_answer(statement) == answer


def test_a_witness_is_only_checked_for_a_body_without_premise_or_disjunction() -> None:
    assert is_existential("theorem t : ∃ n : ℕ, n * 3 = 12 := by sorry")
    assert not is_existential("theorem t : ∃ n : ℕ, n > 5 → n = 7 := by sorry")  # `0` would pass
    assert not is_existential("theorem t : ∃ n : ℕ, n = 3 ∨ n = 7 := by sorry")
    assert not is_existential("theorem t (x : ℕ) : x > 3 → ∃ n : ℕ, n = x := by sorry")


def _clients(answer: str) -> tuple[ModelClient, ModelClient, list[ModelRequest]]:
    asked: list[ModelRequest] = []

    def reply(request: ModelRequest, index: int) -> str:
        asked.append(request)
        return json.dumps({"answer": answer, "class": "final", "reason": "asked quantity"})

    return (
        ModelClient(ScriptedBackend(reply), store=None, stage="extract"),
        ModelClient(ScriptedBackend(reply), store=None, stage="classify"),
        asked,
    )


@pytest.mark.parametrize(
    ("statement", "proposal"),
    [
        ("theorem d (x : ℕ) (h : x = 3) : x = 3 ∨ x = 7 := by sorry", "7"),  # grounded, not entailed
        ("theorem w : ∃ n : ℕ, n > 5 → n = 7 := by sorry", "0"),  # `0 > 5 → 0 = 7` holds
        ("theorem find_x (x : ℕ) (h₀ : x + 2 = 6) : (∀ n : ℕ, n < 10) → x = 5 := by sorry", "5"),
    ],
)
async def test_a_model_answer_lean_cannot_check_is_rejected(statement: str, proposal: str) -> None:
    extract, classify, asked = _clients(proposal)
    settings = ModelSettings(backend="scripted", model="m", base_url=None, api_key_env=None)
    verifier = fake_repl_verifier(workers=1)
    try:
        result = await recover_answer(
            "Find x.", statement, "", extract, settings, classify, settings, attempt=0, verifier=verifier
        )
    finally:
        await verifier.close()
    assert (result.status, result.reason) == (AttemptStatus.rejected, ReasonCode.answer_not_grounded)
    assert not asked, "no model is asked for an answer nothing could check"
