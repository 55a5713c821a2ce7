"""Issue 29, hole 2: hypotheses that contradict each other non-linearly, and values read from our hypotheses.

``l * w = 40`` with ``l + w = 10`` has no real solution ((l - w)² = 100 - 160 < 0), yet omega, norm_num,
linarith and simp_all find nothing, so the statement was ``flagged`` and its rows released with the answer
5. Now the vacuity battery has nlinarith with square hints over the signature's variables (and positivity
against a hypothesis that puts a non-negative term below zero), and a statement no check decides is
withheld from the release unless ``--include-flagged`` (tests/test_release_bulk.py). Satisfiability is
shown at values solved from our own hypotheses: a linear system, or a small polynomial one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from repro.lean.repl_pool import ReplPoolVerifier
from repro.lean.statement_checks import (
    StatementFacts,
    check_statement,
    pinned_candidates,
    solve_linear,
    vacuity_commands,
)
from repro.lean.text.lexer import lex, significant
from repro.lean.text.statement import read_statement
from tests.doubles.fake_backend import fake_repl_verifier

NO_RECTANGLE = "theorem t (l w : ℝ) (h₀ : l * w = 40) (h₁ : l + w = 10) : l = 5 := by sorry"


@pytest.fixture(scope="module")
def verifier() -> Iterator[ReplPoolVerifier]:
    pool = fake_repl_verifier(workers=1)
    yield pool
    asyncio.run(pool.close())


def _check(statement: str, verifier: ReplPoolVerifier) -> StatementFacts:
    return asyncio.run(check_statement(statement, verifier, header=""))


def test_a_non_linear_contradiction_is_found_vacuous_by_nlinarith_with_square_hints(verifier: ReplPoolVerifier) -> None:
    facts = _check(NO_RECTANGLE, verifier)
    assert facts.status == "vacuous", facts
    assert "nlinarith [sq_nonneg l, sq_nonneg w, sq_nonneg (l - w), sq_nonneg (l + w)]" in (facts.derivation or "")
    assert "intro l w h₀ h₁" in (facts.derivation or ""), "the hints name the binders it introduced"
    outcomes = {c.tactic: c.outcome for c in facts.checks}
    assert all(outcomes[t] == "failed" for t in ("omega", "norm_num at *", "linarith", "simp_all", "nlinarith"))


@pytest.mark.parametrize(
    "statement",
    [
        "theorem t (x : ℝ) (h₀ : x ^ 2 + 1 = -3) : x = 5 := by sorry",
        "theorem t (a b : ℝ) (h₀ : a ^ 2 + b ^ 2 = 2 * a * b - 1) : a = b := by sorry",  # (a - b)² = -1
        "theorem t (x y : ℝ) (h₀ : x + y = 2) (h₁ : x * y = 5) : x = 1 := by sorry",  # (x - y)² = -16
    ],
)
def test_other_statements_no_real_numbers_satisfy_are_vacuous(verifier: ReplPoolVerifier, statement: str) -> None:
    assert _check(statement, verifier).status == "vacuous"


def test_a_satisfiable_non_linear_system_is_shown_satisfiable_at_values_from_its_own_hypotheses(
    verifier: ReplPoolVerifier,
) -> None:
    rectangle = "theorem t (l w : ℝ) (h₀ : l * w = 21) (h₁ : l + w = 10) (h₂ : l > w) : l = 7 := by sorry"
    facts = _check(rectangle, verifier)
    assert facts.status == "satisfiable" and facts.witness == {"l": "7", "w": "3"}, facts
    tried = [c for c in facts.checks if c.kind == "satisfiability"]
    assert [c.outcome for c in tried] == ["failed", "proved"], "(3, 7) breaks l > w; Lean checks each pinning"
    root = _check("theorem t (x : ℝ) (h₀ : x ^ 2 = 4) (h₁ : 0 < x) : x = 2 := by sorry", verifier)
    assert root.status == "satisfiable" and root.witness == {"x": "2"}


def test_a_linear_system_of_hypotheses_pins_its_variables(verifier: ReplPoolVerifier) -> None:
    system = "theorem t (a b : ℝ) (h₀ : 3 * a + 2 * b = 5) (h₁ : a + b = 2) : a = 1 ∧ b = 1 := by sorry"
    facts = _check(system, verifier)
    assert facts.status == "satisfiable" and facts.witness == {"a": "1", "b": "1"}


def test_the_linear_reader_refuses_what_is_not_linear_and_types_that_cannot_hold_the_solution() -> None:
    def relations(*texts: str) -> list[tuple[list[object], list[object]]]:
        out = []
        for text in texts:
            left, right = text.split("=")
            out.append((significant(lex(left)), significant(lex(right))))
        return out

    assert solve_linear(relations("x + y = 3", "x - y = 1"), {"x": "ℤ", "y": "ℤ"}) == {"x": "2", "y": "1"}  # type: ignore[arg-type]
    assert solve_linear(relations("2 * x = 3"), {"x": "ℤ"}) is None  # type: ignore[arg-type]
    assert solve_linear(relations("x + 5 = 2"), {"x": "ℕ"}) is None  # type: ignore[arg-type]
    assert solve_linear(relations("x * y = 3", "x = 1"), {"x": "ℚ", "y": "ℚ"}) is None  # type: ignore[arg-type]
    assert solve_linear(relations("x + y = 3"), {"x": "ℚ", "y": "ℚ"}) is None, "a free variable pins nothing"  # type: ignore[arg-type]
    assert solve_linear(relations("(x : ℝ) / 4 = 3 / 2"), {"x": "ℝ"}) == {"x": "6"}  # type: ignore[arg-type]


def test_pinnings_are_only_proposals_and_at_most_four() -> None:
    many = "theorem t (x y : ℝ) (h₀ : x ^ 2 = 1) (h₁ : y ^ 2 = 4) : x = 1 := by sorry"
    assert len(pinned_candidates(read_statement(many))) == 4
    assert pinned_candidates(read_statement("theorem t (x : ℝ) (h₀ : x ^ 2 = 2) : x = 1 := by sorry")) == []


def test_the_positivity_check_names_the_term_a_hypothesis_puts_below_zero() -> None:
    parsed = read_statement("theorem t (x : ℝ) (h₀ : x ^ 4 + 2 = -1) (h₁ : x < 5) : x = 1 := by sorry")
    commands = [command for _, tactic, command in vacuity_commands(parsed, "T") if "positivity" in tactic]
    assert commands == [
        "example : type_of% @T := by\n  intro x h₀ h₁\n  intros\n  exfalso\n"
        "  have hrepro_pos : 0 ≤ (x ^ 4 + 2) := by positivity\n  linarith"
    ]
