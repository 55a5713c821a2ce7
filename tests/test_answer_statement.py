"""The answer stage reads OUR statement only (issue 19 §4, issue 29): the model never sees the prover's code,
an existential answer is a witness our own Lean command checks, and a tuple is released in the order the
question asks for, named by the model as a permutation of our variables (no value is ever read from it)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from repro.config import ModelSettings
from repro.lean.fake_backend import fake_repl_verifier
from repro.llm.client import ModelClient
from repro.llm.protocol import ModelRequest
from repro.llm.scripted import ScriptedBackend
from repro.records import AttemptStatus, ReasonCode
from repro.stages.answer import recheck_answer, recover_answer

EXISTS = "theorem t (x : ℕ) (h₀ : x = 10) : ∃ y : ℕ, y * 2 = x := by sorry"
# a proof whose irrelevant helper would steer a model that read it
PROVER_CODE = (
    "lemma final_answer_value : (8:ℕ) = 8 := rfl\n"
    "theorem t (x : ℕ) (h₀ : x = 10) : ∃ y : ℕ, y * 2 = x := ⟨5, by omega⟩\n"
)


def _clients(answer: str) -> tuple[ModelClient, ModelClient, list[ModelRequest]]:
    seen: list[ModelRequest] = []

    def extract(request: ModelRequest, index: int) -> str:
        seen.append(request)
        return json.dumps({"answer": answer})

    def classify(request: ModelRequest, index: int) -> str:
        return json.dumps({"class": "final", "reason": "asked quantity"})

    return (
        ModelClient(ScriptedBackend(extract), store=None, stage="extract"),
        ModelClient(ScriptedBackend(classify), store=None, stage="classify"),
        seen,
    )


async def _recover(answer: str, **options: Any) -> tuple[Any, list[ModelRequest]]:
    extract, classify, seen = _clients(answer)
    settings = ModelSettings(backend="scripted", model="m", base_url=None, api_key_env=None)
    result = await recover_answer(
        "How many?", EXISTS, PROVER_CODE, extract, settings, classify, settings, attempt=0, header="", **options
    )
    return result, seen


async def test_an_existential_answer_is_a_witness_checked_by_lean_and_the_prover_code_is_never_shown() -> None:
    verifier = fake_repl_verifier(workers=1)
    try:
        accepted, seen = await _recover("5", verifier=verifier)
        wrong, _ = await _recover("8", verifier=verifier)
    finally:
        await verifier.close()
    prompt = seen[0].prompt_text()
    assert "final_answer_value" not in prompt and "⟨5" not in prompt and "∃ y : ℕ, y * 2 = x" in prompt
    assert accepted.status == AttemptStatus.passed and accepted.output["method"] == "witness"
    assert accepted.output["witness_check"]["outcome"] == "proved"
    assert (wrong.status, wrong.reason) == (AttemptStatus.rejected, ReasonCode.answer_not_grounded)


@pytest.mark.parametrize("answer", ["0⟩, by sorry⟩ --", "y", "5 -- trust me"])
async def test_a_witness_that_is_not_numerals_is_refused_before_lean(answer: str) -> None:
    result, _ = await _recover(answer, verifier=None)
    assert (result.status, result.reason) == (AttemptStatus.rejected, ReasonCode.answer_not_grounded)
    assert "numeric literals" in result.output["witness_check"]


async def test_without_lean_a_witness_is_unfinished_never_accepted() -> None:
    result, _ = await _recover("5", verifier=None)
    assert (result.status, result.reason) == (AttemptStatus.error, ReasonCode.lean_unavailable)


PAIR = "theorem p (x y : ℤ) (h₀ : x + y = 4) (h₁ : x - y = 26) : x = 15 ∧ y = -11 := by sorry"


def _ordering(order: object) -> tuple[ModelClient, ModelClient, list[ModelRequest]]:
    seen: list[ModelRequest] = []

    def extract(request: ModelRequest, index: int) -> str:
        seen.append(request)
        return json.dumps({"order": order})

    def classify(request: ModelRequest, index: int) -> str:
        return json.dumps({"class": "final", "reason": "asked quantity"})

    return (
        ModelClient(ScriptedBackend(extract), store=None, stage="extract"),
        ModelClient(ScriptedBackend(classify), store=None, stage="classify"),
        seen,
    )


async def _tuple(question: str, order: object) -> tuple[Any, list[ModelRequest]]:
    extract, classify, seen = _ordering(order)
    settings = ModelSettings(backend="scripted", model="m", base_url=None, api_key_env=None)
    verifier = fake_repl_verifier(workers=1)
    try:
        result = await recover_answer(
            question, PAIR, PROVER_CODE, extract, settings, classify, settings, attempt=0, verifier=verifier, header=""
        )
    finally:
        await verifier.close()
    return result, seen


async def test_a_tuple_is_released_in_the_order_the_question_asks_for() -> None:
    """The statement says x = 15 ∧ y = -11; the question asks for (y, x): the release is ``(-11, 15)``. A question
    that writes the variables out decides the order with no model asked (red2 R2-6); one that does not is asked
    twice, the variables listed in two orders, and the two replies must agree."""
    result, seen = await _tuple("Give the ordered pair (y, x).", ["x", "y"])
    assert result.status == AttemptStatus.passed
    assert (result.output["candidate"], result.output["variables"]) == ("(-11, 15)", ["y", "x"])
    assert result.output["form"] == "tuple" and result.output["lean_types"] == ["ℤ", "ℤ"]
    assert result.output["order_from"] == "question"
    assert not any("name the variables in the order" in request.prompt_text() for request in seen)
    same, _ = await _tuple("Give (x, y).", ["y", "x"])
    assert same.output["candidate"] == "(15, -11)"
    asked, seen = await _tuple("Give the two numbers, the smaller first.", ["y", "x"])
    assert (asked.status, asked.output["candidate"], asked.output["order_from"]) == (
        AttemptStatus.passed,
        "(-11, 15)",
        "model, asked twice",
    )
    orders = [request.prompt_text() for request in seen if "name the variables in the order" in request.prompt_text()]
    assert len(orders) == 2 and "x, y" in orders[0] and "y, x" in orders[1] and "⟨5" not in orders[0]


@pytest.mark.parametrize("order", [["x"], ["x", "x"], ["x", "z"], "15, -11", ["y", "x", "x"]])
async def test_a_tuple_order_that_is_not_a_permutation_of_our_variables_releases_nothing(order: object) -> None:
    result, _ = await _tuple("Give the two numbers, the smaller first.", order)
    assert (result.status, result.reason) == (AttemptStatus.rejected, ReasonCode.answer_not_grounded)


async def test_the_recheck_confirms_a_tuple_in_its_recorded_order_and_nothing_else() -> None:
    verifier = fake_repl_verifier(workers=1)
    try:
        honest = await recheck_answer(PAIR, "(-11, 15)", verifier, header="", variables=["y", "x"])
        swapped = await recheck_answer(PAIR, "(15, -11)", verifier, header="", variables=["y", "x"])
        statement_order = await recheck_answer(PAIR, "(15, -11)", verifier, header="")
    finally:
        await verifier.close()
    assert honest.grounded and statement_order.grounded
    assert not swapped.grounded and "(-11, 15)" in swapped.detail
