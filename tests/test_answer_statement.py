"""The answer stage reads OUR statement only (issue 19 §4): the model never sees the prover's code, an
existential answer is a witness our own Lean command checks, and grounding is on tokens, not substrings."""

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
from repro.stages.answer import grounded_in_statement, recover_answer

EXISTS = "theorem t (x : ℕ) (h₀ : x = 10) : ∃ y : ℕ, y * 2 = x := by sorry"
# a proof whose irrelevant helper would steer a model that read it
PROVER_CODE = (
    "lemma final_answer_value : (8:ℕ) = 8 := rfl\n"
    "theorem t (x : ℕ) (h₀ : x = 10) : ∃ y : ℕ, y * 2 = x := ⟨5, by omega⟩\n"
)


def test_grounding_is_on_tokens_of_our_statement_not_substrings() -> None:
    least = "theorem t (x₄ : ℕ) (h : x₄ = 400000) : IsLeast {n : ℕ | 40 ≤ n ∧ n % 7 = 0} 42 := by sorry"
    assert grounded_in_statement("42", least)
    assert not grounded_in_statement("4", least), "4 is not a token of 40, 400000 or x₄"
    assert not grounded_in_statement("400000", least), "a hypothesis is not the conclusion"
    assert grounded_in_statement("2, 3", "theorem t (x : ℕ) (h : x ^ 2 = 5 * x - 6) : x = 2 ∨ x = 3 := by sorry")


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
