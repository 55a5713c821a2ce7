"""An answer is about the problem's unknown, in its type (adversary round 4, findings A4 and A5).

The attack statements are the red team's (``/work/adv/15-answer-constant-conclusion/``,
``/work/adv/17-witness-nat-division/``). Each is true in Lean, so a prover proves it; before the fix the
answer stage released a literal the statement does not give for the problem (``5`` for an x that is 3,
``3`` in characteristic 7, ``7/2`` for an ℕ witness that Lean reads as 3).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from repro.config import ModelSettings
from repro.lean.protocol import Verifier
from repro.lean.statement_checks import check_witness
from repro.llm.client import ModelClient
from repro.llm.scripted import ScriptedBackend
from repro.records import AttemptStatus, ReasonCode
from repro.stages.answer import is_existential, recheck_answer, recover_answer, statement_answer, witness_parts
from tests.doubles.fake_backend import fake_repl_verifier

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def lean() -> AsyncIterator[Verifier]:
    verifier = fake_repl_verifier(workers=1)
    yield verifier
    await verifier.close()


# /work/adv/15-answer-constant-conclusion/statement_{let_shadow,constant,type_shadow}.lean
LET_SHADOW = "theorem mathd_demo (x : ℝ) (h₀ : 3 * x + 2 = 11) : let x : ℝ := 5; x = 5 := by sorry"
CONSTANT = "theorem mathd_demo (x : ℕ) (h₀ : x + 2 = 6) : (7 : ℕ) = 7 := by sorry"
TYPE_SHADOW = "theorem mathd_demo (ℝ : Type) [Field ℝ] [CharP ℝ 7] (x : ℝ) (h₀ : x = 10) : x = 3 := by sorry"
# /work/adv/17-witness-nat-division/statement.lean
NAT_MEAN = "theorem mean_demo : ∃ m : ℕ, m = (3 + 4) / 2 := by sorry"


@pytest.mark.parametrize(
    "statement",
    [
        LET_SHADOW,
        CONSTANT,
        TYPE_SHADOW,
        # the same shadowing through a quoted name, a `have`, and a binder spelled `Real`
        "theorem t (x : ℝ) (h₀ : 3 * x + 2 = 11) : let «x» : ℝ := 5; x = 5 := by sorry",
        "theorem t (x : ℝ) (h₀ : 3 * x + 2 = 11) : have x : ℝ := 5; x = 5 := by sorry",
        "theorem t (Real : Type) [Field Real] [CharP Real 7] (x : Real) (h₀ : x = 10) : x = 3 := by sorry",
        # a local instance changes what numerals mean, whatever its brackets or premises (A3's shape)
        "theorem t [Field ℝ] [CharP ℝ 7] (x : ℝ) (h₀ : x = 10) : x = 3 := by sorry",
        "theorem t (i : True → OfNat ℕ 4) (x : ℕ) (h₀ : x = 3) : x = 4 := by sorry",
        "theorem t (x : ℕ) (h₀ : x = 3) : letI : OfNat ℕ 4 := ⟨3⟩; x = 4 := by sorry",
        "theorem t (x : ℕ) (h₀ : x = 3) : let i := (⟨3⟩ : OfNat ℕ 4); x = 4 := by sorry",
        # the left side mentions the unknown but does not depend on it
        "theorem t (x : ℕ) (h₀ : x + 2 = 6) : x * 0 + 7 = 7 := by sorry",
        "theorem t (x : ℕ) (h₀ : x + 2 = 6) : x - x + 7 = 7 := by sorry",
        "theorem t (x : ℤ) (h₀ : x + 2 = 6) : x ^ 0 = 1 := by sorry",
        "theorem t (x : ℕ) (h₀ : x + 2 = 6) : let y : ℕ := 0 * x; y + 7 = 7 := by sorry",
        # the conclusion ignores the statement's unknown, or is a bare numeral however it is dressed
        "theorem t (x : ℕ) (h₀ : x + 2 = 6) : (2 + 2 : ℕ) = 4 := by sorry",
        "theorem t : (7 : ℕ) = 7 := by sorry",
        "theorem t : (15 : ℚ) / 4 = (15 : ℚ) / 4 := by sorry",
        "theorem t : let x : ℚ := 5 / 2; x = 5 / 2 := by sorry",
        # a hypothesis given back: a number of the problem, not its unknown
        "theorem t (x y : ℕ) (h₀ : x + 2 = 6) (h₁ : y = 9) : y = 9 := by sorry",
        # a `have` that may be an instance, or a proof that shadows the variable
        "theorem t (x : ℕ) (h₀ : x = 3) : have i : OfNat ℕ 4 := ⟨3⟩; x + 1 = 4 := by sorry",
        "theorem t (x : ℕ) (h₀ : x = 3) : have x : x = 3 := h₀; x = 3 := by sorry",
        "theorem t : (2.5 : ℝ) = 5 / 2 := by sorry",
        # `!=` is `bne` (a Bool): its Prop is a coercion, a shape the reader does not know
        "theorem t (x : ℤ) (h₀ : x ^ 2 = 9) (h₁ : x != 3) : x = -3 := by sorry",
    ],
)
async def test_no_answer_is_read_from_an_equation_that_is_not_about_the_unknown(lean: Verifier, statement: str) -> None:
    assert (await statement_answer(statement, lean, header="")).answer is None


@pytest.mark.parametrize(
    ("statement", "answer"),
    [
        ("theorem t (x : ℝ) (h₀ : 3 * x + 2 = 11) : x = 3 := by sorry", "3"),
        ("theorem t (x : ℝ) (h₀ : 3 * x + 2 = 11) : let y : ℝ := 2 * x; y = 6 := by sorry", "6"),
        # the demo's let chain (data/demo_script.yaml): no variables, but a computation
        (
            "theorem t :\n    let red : ℕ := 6\n    let green : ℕ := red / 3\n    let total : ℕ := red + green\n"
            "    total = 8 := by sorry",
            "8",
        ),
        ("theorem t : (3 + 4 + 8 : ℚ) / 3 = 5 := by sorry", "5"),
        ("theorem t (x : ℕ) (h₀ : x = 1005) : x - 1000 = 5 := by sorry", "5"),  # truncation is not constancy
        ("theorem t (p : ℕ) (hp : Nat.Prime p) (h₀ : p + 2 = 7) : p = 5 := by sorry", "5"),
        ("theorem t (n : ℕ) (h₀ : 2 ^ n = 1024) : n = 10 := by sorry", "10"),
        ("theorem t (n : ℕ) (h₀ : n = 5) : n ! = 120 := by sorry", "120"),
        ("theorem t (x : ℤ) (h₀ : |x| = 3) (h₁ : x < 0) : x = -3 := by sorry", "-3"),
        ("theorem t (f : ℕ → ℕ) (h : ∀ n, f n = 2 * n) : f 3 = 6 := by sorry", "6"),
        ("theorem t (a b : ℕ) (h₀ : a = 3) (h₁ : b = a * 4) : b - a = 9 := by sorry", "9"),
        # a proof in the conclusion is no value; a default argument is still a variable
        ("theorem t (x : ℕ) (h₀ : x = 3) : have hx : x + 1 = 4 := by omega\n  x * 2 = 6 := by sorry", "6"),
        ("theorem t (k : ℕ := 3) : k * 2 = 6 := by sorry", "6"),
        ("theorem t : (10 : ℕ) / 2 = 5 := by sorry", "5"),  # ℕ division is a computation
        ("theorem t : (6 : ℚ) / 4 = 3 / 2 := by sorry", "3 / 2"),  # so is reducing a fraction
        # hypotheses in ASCII notation: `>=` and `<=` are `≥` and `≤`
        ("theorem t (x : ℤ) (h₀ : x ^ 2 = 9) (h₁ : x >= 0) : x = 3 := by sorry", "3"),
        ("theorem t (x : ℤ) (h₀ : x ^ 2 = 9) (h₁ : x <= 0) : x = -3 := by sorry", "-3"),
    ],
)
async def test_honest_equations_about_the_unknown_keep_their_answer(
    lean: Verifier, statement: str, answer: str
) -> None:
    assert (await statement_answer(statement, lean, header="")).answer == answer


async def test_a_witness_is_a_literal_of_the_exists_variable_type_in_normal_form() -> None:
    assert is_existential(NAT_MEAN)
    assert witness_parts("7/2", NAT_MEAN) is None, "7/2 is 3 in ℕ: no fraction for an ℕ variable"
    assert witness_parts("(7 : ℕ) / 2", NAT_MEAN) is None
    assert witness_parts("-3", NAT_MEAN) is None
    assert witness_parts("3", NAT_MEAN) == ["3"]
    integer = "theorem t : ∃ m : ℤ, 2 * m = -6 := by sorry"
    assert witness_parts("-3", integer) == ["-3"] and witness_parts("-3/1", integer) is None
    real = "theorem t : ∃ (x : ℝ) (n : ℕ), 2 * x = 3 ∧ n = 2 := by sorry"
    assert witness_parts("6/4, 2", real) == ["3 / 2", "2"]
    assert witness_parts("1.5, 2", real) == ["3 / 2", "2"]
    assert witness_parts("1.5, 2.0", real) is None
    assert witness_parts("3/2", real) is None, "one literal per ∃ variable"


@pytest.mark.parametrize(
    "statement",
    [
        "theorem t : ∃ m, m = (3 + 4) / 2 := by sorry",  # the type is not written in our statement
        "theorem t : ∃ m > 0, m = 3 := by sorry",  # a binder predicate
        "theorem t : ∃ m : Fin 5, m = 3 := by sorry",
        "theorem t (ℕ : Type) [OfNat ℕ 3] : ∃ m : ℕ, m = 3 := by sorry",
        "theorem t (i : True → OfNat ℕ 4) : ∃ m : ℕ, m = 4 := by sorry",  # a local instance: 4 may be 3
    ],
)
async def test_a_witness_whose_type_cannot_be_read_is_never_asked_for(statement: str) -> None:
    assert not is_existential(statement)
    assert witness_parts("3", statement) is None


def _clients(answer: str) -> tuple[ModelClient, ModelClient]:
    def reply(request: object, index: int) -> str:
        return json.dumps({"answer": answer, "class": "final", "reason": "asked quantity"})

    return (
        ModelClient(ScriptedBackend(reply), store=None, stage="extract"),
        ModelClient(ScriptedBackend(reply), store=None, stage="classify"),
    )


async def _recover(statement: str, proposal: str) -> tuple[AttemptStatus, ReasonCode | None, dict[str, object]]:
    extract, classify = _clients(proposal)
    settings = ModelSettings(backend="scripted", model="m", base_url=None, api_key_env=None)
    verifier = fake_repl_verifier(workers=1)
    try:
        result = await recover_answer(
            "What is the mean?", statement, "", extract, settings, classify, settings, attempt=0, verifier=verifier
        )
    finally:
        await verifier.close()
    return result.status, result.reason, result.output


async def test_a_fraction_proposed_for_a_natural_witness_is_refused_and_the_integer_is_released() -> None:
    status, reason, output = await _recover(NAT_MEAN, "7/2")
    assert (status, reason) == (AttemptStatus.rejected, ReasonCode.answer_not_grounded)
    assert "types" in str(output["witness_check"])
    status, _, output = await _recover(NAT_MEAN, "3")
    assert status == AttemptStatus.passed and output["candidate"] == "3"


async def test_the_released_witness_is_its_normal_form_not_the_model_text() -> None:
    status, _, output = await _recover("theorem t : ∃ x : ℝ, 2 * x = 3 := by sorry", "1.50")
    assert status == AttemptStatus.passed
    assert (output["candidate"], output["proposed"]) == ("3 / 2", "1.50")


async def test_our_witness_command_and_the_recheck_refuse_a_fraction_for_a_natural() -> None:
    verifier = fake_repl_verifier(workers=1)
    try:
        with pytest.raises(ValueError, match="types"):
            await check_witness(NAT_MEAN, ["7/2"], verifier, header="")
        recheck = await recheck_answer(NAT_MEAN, "7/2", verifier, header="")
        honest = await recheck_answer(NAT_MEAN, "3", verifier, header="")
    finally:
        await verifier.close()
    assert not recheck.grounded and honest.grounded
