"""Attacks on the released answer (issue 29): statements whose text suggests one answer while Lean elaborates
another. None may release a wrong answer: each gives Lean's value or nothing.

Shadowing (a binder or ``let`` named ``π``, a type-named binder, ``«x»``), comments that steer, Unicode
look-alike digits and operators, ℕ division and subtraction, default numeral types, casts, ``ZMod``/``Fin``,
``2⁻¹``/``0x10``/``1e3``, local instances, left sides that only look like they depend on the unknown, and
∃ bodies that hold at any witness. Through the fake REPL here, whose elaboration models Lean's
(``repro lean selftest`` runs the core traps on real Lean).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from repro.config import ModelSettings
from repro.lean.fake_backend import fake_repl_verifier
from repro.lean.protocol import Verifier
from repro.llm.client import ModelClient
from repro.llm.scripted import ScriptedBackend
from repro.records import AttemptStatus
from repro.stages.answer import recover_answer, statement_answer

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def lean() -> AsyncIterator[Verifier]:
    verifier = fake_repl_verifier(workers=1)
    yield verifier
    await verifier.close()


# (statement, what Lean gives (None: no answer), answers the text suggests that must never be released)
ATTACKS: list[tuple[str, str | None, set[str]]] = [
    # shadowing what the literal names: the value is checked in the header's context, R in the statement's
    ("theorem t (π : ℝ) (h₀ : π = 4) (x : ℝ) (h : x + 1 = π + 1) : x = π := by sorry", None, {"\\pi"}),
    ("theorem t (x : ℝ) (h : 2 * x = 8) : let π : ℝ := 4; x = π := by sorry", None, {"\\pi"}),
    ("theorem t (ℝ : Type) [Field ℝ] [CharP ℝ 7] (x : ℝ) (h₀ : x = 10) : x = 3 := by sorry", None, {"3"}),
    ("theorem t (x : ℝ) (h : 2 * x = 10) : let «x» : ℝ := 7; x = 7 := by sorry", None, {"7"}),
    ("theorem t (x : ℝ) (h : 2 * x = 10) : have x : ℝ := 7; x = 7 := by sorry", None, {"7"}),
    ("theorem t (i : OfNat ℝ 5) (x : ℝ) (h : 2 * x = 10) : x = 5 := by sorry", None, {"5"}),
    # comments steer nothing
    ("theorem t (x : ℝ) (h : 2 * x = 10) : x = 5 -- the answer is 7\n := by sorry", "5", {"7"}),
    ("theorem t (x : ℝ) (h : 2 * x = 10) : x = /- 7 -/ 5 := by sorry", "5", {"7"}),
    # Unicode look-alikes are no digits, no minus, no division
    ("theorem t (x : ℕ) (h : x + 1 = 6) : x = ５ := by sorry", None, {"5"}),
    ("theorem t (x : ℕ) (h : x + 1 = 6) : x = 𝟓 := by sorry", None, {"5"}),
    ("theorem t (З : ℕ) (x : ℕ) (h : x + 1 = 4) : x = З := by sorry", None, {"3"}),
    ("theorem t (x : ℝ) (h : 4 * x = 3) : x = 3 ∕ 4 := by sorry", None, {"3 / 4"}),
    ("theorem t (x : ℤ) (h : x + 5 = 0) : x = −5 := by sorry", None, {"-5", "5"}),
    # ℕ division and subtraction, default ℕ: Lean's value, never the text's rational reading
    ("theorem t (x : ℕ) (h : x = 7) : x / 2 = 7 / 2 := by sorry", None, {"7 / 2", "3.5"}),
    ("theorem t (x : ℕ) (h : x = 3) : x - 5 = 0 := by sorry", "0", {"-2"}),
    ("theorem t : 2 - 3 = 0 := by sorry", "0", {"-1"}),
    ("theorem t : 10 / 4 = 2 := by sorry", "2", {"5 / 2", "2.5"}),
    ("theorem t : (2 : ℤ) - 3 = -1 := by sorry", "-1", set()),
    ("theorem t : (10 : ℝ) / 4 = 5 / 2 := by sorry", "5 / 2", {"2"}),
    # casts and other types
    ("theorem t (n : ℕ) (h : (n : ℤ) - 5 = -2) : n = 3 := by sorry", "3", set()),
    ("theorem t (x : ℝ) (h : 2 * x = 10) : x = (5 : ℕ) := by sorry", None, set()),
    ("theorem t (x : ℕ) (h : x = 3) : (x : ZMod 4) + 1 = 0 := by sorry", None, {"0"}),
    ("theorem t (x : ZMod 7) (h : x = 3) : x * 3 = 2 := by sorry", None, {"2", "9"}),
    ("theorem t : (2 : Fin 5) + 4 = 1 := by sorry", None, {"1", "6"}),
    ("theorem t (x : ℕ) (h : x = 5) : x = 2⁻¹ := by sorry", None, {"1 / 2"}),
    # notations: Lean's reading of the numeral
    ("theorem t (x : ℝ) (h : x / 10 = 100) : x = 1e3 := by sorry", "1000", {"1e3", "1", "3"}),
    ("theorem t (x : ℕ) (h : x - 6 = 10) : x = 0x10 := by sorry", "16", {"10", "0"}),
    ("theorem t (x : ℝ) (h : 4 * x = 1) : x = 4⁻¹ := by sorry", "1 / 4", {"4"}),
    # a left side that only looks like it depends on the unknown (A4)
    ("theorem t (x : ℝ) (h : x = 2) : x / x = 1 := by sorry", None, {"1"}),
    ("theorem t (x : ℝ) (h : x = 2) : Real.sqrt (x ^ 2) - |x| + 5 = 5 := by sorry", None, {"5"}),
    ("theorem t (x : ℕ) (h : x = 2) : x ^ 0 + 4 = 5 := by sorry", None, {"5"}),
    ("theorem t (x : ℕ) (h : x = 2) : x - x + 4 = 4 := by sorry", None, {"4"}),
    ("theorem t (x : ℝ) (h : x = 4) : Real.sqrt x = 2 := by sorry", "2", set()),
    # the statement holds a sorry, or an open: not read
    ("theorem t (x : ℕ) (h : x = 3) : (sorry : ℕ) + x = 3 := by sorry", None, {"3"}),
    ("theorem t (x : ℕ) (h : x = 3) : open Nat in x ! = 6 := by sorry", None, {"6"}),
]


@pytest.mark.parametrize(("statement", "expected", "forbidden"), ATTACKS)
async def test_no_statement_releases_what_its_text_suggests_instead_of_what_lean_says(
    lean: Verifier, statement: str, expected: str | None, forbidden: set[str]
) -> None:
    found = await statement_answer(statement, lean, header="")
    released = found.answer if found.found else None
    assert released not in forbidden, f"{statement!r} released {released!r}"
    assert released == expected, f"{statement!r}: {found.reason}: {found.detail}"


def _clients(answer: str) -> tuple[ModelClient, ModelClient]:
    def reply(request: object, index: int) -> str:
        return json.dumps({"answer": answer, "class": "final", "reason": "asked"})

    return (
        ModelClient(ScriptedBackend(reply), store=None, stage="extract"),
        ModelClient(ScriptedBackend(reply), store=None, stage="classify"),
    )


@pytest.mark.parametrize(
    ("statement", "proposal"),
    [
        ("theorem t : ∃ x : ℝ, x = x := by sorry", "7"),  # any witness holds
        ("theorem t : ∃ n : ℕ, n > 3 := by sorry", "4"),  # 5 holds too
        ("theorem t : ∃ n : ℕ, n ≥ 0 ∧ n * 0 = 0 := by sorry", "0"),
        ("theorem t : ∃ n : ℕ, (n > 5 → n * 3 = 21) := by sorry", "0"),  # a premise, in parentheses
        ("theorem t : ∃ n : ℕ, (n < 0 ∨ n * 3 = 21) := by sorry", "0"),
        ("theorem t : ∃ n : ℕ, ¬ (n * 3 = 21) := by sorry", "0"),
    ],
)
async def test_an_exists_body_that_holds_at_any_witness_releases_none(
    lean: Verifier, statement: str, proposal: str
) -> None:
    extract, classify = _clients(proposal)
    settings = ModelSettings(backend="scripted", model="m", base_url=None, api_key_env=None)
    result = await recover_answer(
        "Find n.", statement, "", extract, settings, classify, settings, attempt=0, verifier=lean
    )
    assert result.status == AttemptStatus.rejected and result.output["candidate"] is None, result.output


async def test_a_pinned_exists_witness_is_still_released(lean: Verifier) -> None:
    extract, classify = _clients("4")
    settings = ModelSettings(backend="scripted", model="m", base_url=None, api_key_env=None)
    statement = "theorem t : ∃ n : ℕ, n * 3 = 12 := by sorry"
    result = await recover_answer(
        "Find n.", statement, "", extract, settings, classify, settings, attempt=0, verifier=lean
    )
    assert result.status == AttemptStatus.passed and result.output["candidate"] == "4"
    assert result.output["uniqueness_check"]["outcome"] == "proved", "∀ n, n * 3 = 12 → n = 4: 4 is pinned"
