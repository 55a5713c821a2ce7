"""The released answer is the value Lean confirms from our statement, in its type (issue 29; findings 3, 4, S3).

Each statement here is true in Lean, so a prover proves it; a reader that trusted the text would
release what the text suggests (``16 / 3`` is 5 in ℕ, ``9`` is 2 in ``ZMod 7``, ``5`` behind a false
premise). The answer goes through our own Lean commands (:mod:`repro.lean.answer_checks`), answered here
by the fake REPL as the elaboration it models; the same traps run on real Lean in ``repro lean selftest``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from repro.config import ModelSettings
from repro.lean.protocol import Verifier
from repro.llm.client import ModelClient
from repro.llm.protocol import ModelRequest
from repro.llm.scripted import ScriptedBackend
from repro.records import AnswerForm, AttemptStatus, NoAnswerReason, ReasonCode
from repro.stages.answer import StatementAnswer, is_existential, recover_answer, statement_answer
from tests.doubles.fake_backend import fake_repl_verifier

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def lean() -> AsyncIterator[Verifier]:
    """One fake REPL for the module: every statement is declared under its own hashed name."""
    verifier = fake_repl_verifier(workers=1)
    yield verifier
    await verifier.close()


async def _answer(statement: str, rules: list[dict[str, object]] | None = None) -> StatementAnswer:
    verifier = fake_repl_verifier(rules, workers=1)
    try:
        return await statement_answer(statement, verifier, header="")
    finally:
        await verifier.close()


@pytest.mark.parametrize(
    ("statement", "answer", "form", "lean_type"),
    [
        ("theorem a (x : ℝ) (h : 2 * x = 5) : x = 5 / 2 := by sorry", "5 / 2", "fraction", "ℝ"),
        ("theorem a (x : ℚ) (h : 2 * x = 5) : x = 2.5 := by sorry", "2.5", "decimal", "ℚ"),
        ("theorem a (x : ℤ) (h : x + 7 = 2) : x = -5 := by sorry", "-5", "integer", "ℤ"),
        ("theorem a : (15 : ℚ) / 4 + 1 = 19 / 4 := by sorry", "19 / 4", "fraction", "ℚ"),
        ("theorem a (f : ℕ → ℕ) (h : ∀ n, f n = 2 * n) : f 3 = 6 := by sorry", "6", "integer", "ℕ"),
        ("theorem a (x : ℕ) (h : x = 3600) : (x / 12 : ℕ) = 300 := by sorry", "300", "integer", "ℕ"),
        # a closed computation with no ascription is elaborated in ℕ: Lean says so, not the reader
        ("theorem a : 91 ^ 2 = 8281 := by sorry", "8281", "integer", "ℕ"),
        ("theorem a : (29 * 79 + 31 * 81) % 10 = 2 := by sorry", "2", "integer", "ℕ"),
        ("theorem a : abs ((3491 - 60) * (3491 + 60) - 3491 ^ 2 : ℤ) = 3600 := by sorry", "3600", "integer", "ℤ"),
        ("theorem a : Nat.gcd 180 168 = 12 := by sorry", "12", "integer", "ℕ"),
        ("theorem a : (∑ k in Finset.range 101, k) % 6 = 4 := by sorry", "4", "integer", "ℕ"),
        (
            "theorem a (x : ℝ) (h : x ^ 2 = 18) (hx : 0 < x) : x = 3 * Real.sqrt 2 := by sorry",
            "3 \\cdot \\sqrt{2}",
            "closed_form",
            "ℝ",
        ),
        ("theorem a (r : ℝ) (h : r * 4 = Real.pi) : r = π / 4 := by sorry", "\\frac{\\pi}{4}", "closed_form", "ℝ"),
        ("theorem a : (Complex.I / 2) ^ 2 = -(1 / 4) := by sorry", "-1 / 4", "fraction", "ℂ"),
        (
            "theorem a (s t : ℝ) (h₀ : s = 9 - 2 * t) (h₁ : t = 3 * s + 1) : s = 1 ∧ t = 4 := by sorry",
            "(1, 4)",
            "tuple",
            "ℝ, ℝ",
        ),
        (
            "theorem a (x : ℤ) (y : ℚ) (h₀ : x = 15) (h₁ : y = -11 / 2) : (x = 15) ∧ y = -11 / 2 := by sorry",
            "(15, -11 / 2)",
            "tuple",
            "ℤ, ℚ",
        ),
    ],
)
async def test_every_released_form_is_confirmed_by_lean_with_its_type(
    lean: Verifier, statement: str, answer: str, form: str, lean_type: str
) -> None:
    found = await statement_answer(statement, lean, header="")
    assert (found.answer, found.form, ", ".join(found.lean_types)) == (answer, AnswerForm(form), lean_type), found
    bridges = [check for check in found.checks if check.kind == "answer_bridge" and check.outcome == "proved"]
    assert len(bridges) == 1 and bridges[0].command.startswith("example : type_of% @repro_target_")


@pytest.mark.parametrize(
    ("statement", "answer", "lean_type"),
    [
        # ℕ division and subtraction: the value Lean gives, never the text's rational reading
        ("theorem t : (7 : ℕ) / 2 = 3 := by sorry", "3", "ℕ"),
        ("theorem t : (3 - 5 : ℕ) = 0 := by sorry", "0", "ℕ"),
        ("theorem t (x : ℕ) (h : x = 3) : (x - 5 : ℤ) = -2 := by sorry", "-2", "ℤ"),
        # casts between ℕ, ℤ and ℝ: the equation's type is the one Lean elaborates
        ("theorem t (x : ℕ) (h : x = 5) : (x : ℝ) / 2 = 5 / 2 := by sorry", "5 / 2", "ℝ"),
        ("theorem t (n : ℕ) (h : (n : ℤ) - 9 = -2) : n = 7 := by sorry", "7", "ℕ"),
        ("theorem t (n : ℕ) (h : n = 4) : (↑n - 9 : ℤ) = -5 := by sorry", "-5", "ℤ"),
        # notations: 2⁻¹ is a half in a field, 1e3 is a thousand, 0x10 is sixteen
        ("theorem t (x : ℝ) (h : 2 * x = 1) : x = 2⁻¹ := by sorry", "1 / 2", "ℝ"),
        ("theorem t (x : ℝ) (h : x / 10 = 100) : x = 1e3 := by sorry", "1000", "ℝ"),
        ("theorem t (x : ℕ) (h : x - 6 = 10) : x = 0x10 := by sorry", "16", "ℕ"),
    ],
)
async def test_a_trap_releases_the_value_lean_elaborates(
    lean: Verifier, statement: str, answer: str, lean_type: str
) -> None:
    found = await statement_answer(statement, lean, header="")
    assert (found.answer, found.lean_types) == (answer, [lean_type]), found


@pytest.mark.parametrize(
    ("statement", "reason"),
    [
        # ℕ division: 16 / 3 is 5 there, no literal; proposed as a fraction of ℚ ℝ ℂ, Lean refuses each type
        ("theorem mean_of_three : ((3 + 4 + 8 : ℕ)) / 3 = 16 / 3 := by sorry", NoAnswerReason.lean_refused),
        ("theorem m (x : ℤ) (h : x = 7) : x / 2 = 7 / 2 := by sorry", NoAnswerReason.lean_refused),
        ("theorem t (n : ℕ) (h : n = 11) : (1 / 4) ^ (n + 1) * 2 ^ (2 * n) = 1 / 4 := by sorry", None),
        # ZMod and Fin: 9 = 2 in ZMod 7, 7 = 2 in Fin 5: no type of ours is the equation's
        ("theorem rem_two_pow : (2 : ZMod 7) ^ 10 = 9 := by sorry", NoAnswerReason.lean_refused),
        ("theorem c (x : ℕ) (h : x = 3) : (x : ZMod 4) = 7 := by sorry", NoAnswerReason.not_evaluable),
        ("theorem f (i : Fin 5) (h : i = 3) : i + 4 = 7 := by sorry", NoAnswerReason.signature),
        ("theorem n (x : ℕ) (h : x = 5) : x = 5.0 := by sorry", NoAnswerReason.lean_refused),  # no OfScientific ℕ
        ("theorem r (x : ℝ) (h : x = 5) : ⌊x / 2⌋ = 5 / 2 := by sorry", NoAnswerReason.lean_refused),
        ("theorem e (x : ℝ) (h : x = 5) : x = 2 + 3 := by sorry", NoAnswerReason.unevaluated),
        ("theorem w : y * 2 = 8 := by sorry", NoAnswerReason.signature),  # y is auto-bound: about every y
        # `open ... in` may change what the notation means: such a statement is not read at all
        ("theorem o (x : ℕ) (h : x = 3) : open Nat in x ! = 6 := by sorry", NoAnswerReason.unreadable_statement),
        ("theorem o (x : ℝ) (h : x = 3) : (open Real in x) = 3 := by sorry", NoAnswerReason.unreadable_statement),
        ("theorem s (x : ℕ) (h : x = 3) : (sorry : ℕ) + x = 3 := by sorry", NoAnswerReason.other_shape),
    ],
)
async def test_a_statement_whose_text_suggests_another_value_gives_no_answer(
    lean: Verifier, statement: str, reason: NoAnswerReason | None
) -> None:
    found = await statement_answer(statement, lean, header="")
    assert not found.found, found
    if reason is not None:
        assert found.reason == reason, found


@pytest.mark.parametrize(
    "statement",
    [
        "theorem find_x (x : ℕ) (h₀ : x + 2 = 6) : (∀ n : ℕ, n < 10) → x = 5 := by sorry",
        "theorem p (x : ℕ) (h₀ : x + 2 = 6) : x > 100 → x = 5 := by sorry",
        "theorem d (x : ℕ) (h : x = 3) : x = 3 ∨ x = 7 := by sorry",
        "theorem q (x : ℕ) (h : x = 3) : x = 7 ↔ False := by sorry",
        "theorem a : ∀ x : ℕ, x = 5 := by sorry",
        "theorem g (x : ℕ) (h : x = 3) : ¬ x = 7 := by sorry",
        "theorem b (x : ℕ) (h : x = 3) : x ≤ 7 := by sorry",
        "theorem i (x : ℕ) (h : x = 3) : (if x = 3 then x = 7 else x = 9) := by sorry",
    ],
)
async def test_no_answer_is_read_behind_a_premise_a_disjunction_or_a_binder(lean: Verifier, statement: str) -> None:
    assert (await statement_answer(statement, lean, header="")).answer is None


async def test_lean_decides_the_answer_not_the_reader() -> None:
    """Where Lean refuses our typed statement or the literal's value, nothing is released (fail closed)."""
    statement = "theorem a (x : ℝ) (h : 2 * x = 5) : x = 5 / 2 := by sorry"
    bridge_refused = [{"match": "type_of% @repro_target_\\w+ = type_of%", "messages": [_error("type mismatch")]}]
    value_refused = [{"match": "by norm_num$", "messages": [_error("unsolved goals")]}]
    for rules in (bridge_refused, value_refused):
        found = await _answer(statement, rules)
        assert found.answer is None and found.reason == NoAnswerReason.lean_refused
    crashed = await _answer(statement, [{"match": "type_of% @repro_target_\\w+ = type_of%", "action": "crash"}])
    assert crashed.answer is None and crashed.undecided, "an infrastructure failure is no verdict"


def _error(text: str) -> dict[str, object]:
    return {"severity": "error", "pos": {"line": 1, "column": 0}, "endPos": {"line": 1, "column": 1}, "data": text}


async def test_no_lean_backend_means_no_answer_and_an_unfinished_candidate() -> None:
    found = await statement_answer("theorem a (x : ℤ) (h : x + 7 = 2) : x = -5 := by sorry", None, header="")
    assert found.answer is None and found.undecided


async def test_a_witness_is_only_checked_for_a_body_made_of_relations_at_every_depth() -> None:
    """Issue 29, hole 1: the connectives were judged at depth 0 only; ``(n > 5 → ...)`` hid them."""
    assert is_existential("theorem t : ∃ n : ℕ, n * 3 = 12 := by sorry")
    assert is_existential("theorem t : (∃ n : ℕ, (n * 3 = 12)) := by sorry"), "redundant parentheses are stripped"
    assert is_existential("theorem t : ∃ x y : ℝ, x + y = 5 ∧ (x - y = 1) := by sorry")
    for body in [
        "n > 5 → n = 7",
        "(n > 5 → n * 3 = 21)",
        "(n < 0 ∨ n * 3 = 21)",
        "n > 0 ∧ (n < 0 ∨ n = 7)",
        "¬ (n * 3 = 21)",
        "(¬ n = 7)",
        "(n = 7 ↔ n * 3 = 21)",
        "(if n > 5 then n = 7 else True)",
        "(∃ m : ℕ, m = n + 1)",
        "n = n ∧ (∀ m : ℕ, m = m)",
        "(fun m => m = 7) n",
        "Not (n = 7)",
        "True",
    ]:
        assert not is_existential(f"theorem t : ∃ n : ℕ, {body} := by sorry"), body
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
        ("theorem w : ∃ n : ℕ, (n > 5 → n * 3 = 21) := by sorry", "0"),  # the same, in parentheses
        ("theorem w : ∃ n : ℕ, (n < 0 ∨ n * 3 = 21) := by sorry", "0"),
        ("theorem w : ∃ n : ℕ, ¬ (n * 3 = 21) := by sorry", "0"),
        ("theorem w : ∃ n : ℕ, (∃ m : ℕ, m > n) := by sorry", "0"),
        ("theorem find_x (x : ℕ) (h₀ : x + 2 = 6) : (∀ n : ℕ, n < 10) → x = 5 := by sorry", "5"),
    ],
)
async def test_a_model_answer_lean_cannot_check_is_rejected(lean: Verifier, statement: str, proposal: str) -> None:
    extract, classify, asked = _clients(proposal)
    settings = ModelSettings(backend="scripted", model="m", base_url=None, api_key_env=None)
    result = await recover_answer(
        "Find x.", statement, "", extract, settings, classify, settings, attempt=0, verifier=lean
    )
    assert (result.status, result.reason) == (AttemptStatus.rejected, ReasonCode.answer_not_grounded)
    assert not asked, "no model is asked for an answer nothing could check"
    assert result.output["no_answer"] is not None and result.output["candidate"] is None
