"""Entry-by-entry pins of the named-argument rule's word tables (issue 19 §6).

The config guard lets a term's named argument ``f (x := e)`` hold any term, and judges every other
``(x := e)`` as a tactic configuration (literals only: Lean runs it in its interpreter). Which is which is
decided by small hand-kept tables in ``repro/judge/policy.py``. A fresh mutation sample (seed 21) showed
that deleting one entry of them changed no test: each table is pinned here from an independent literal
copy, so a deleted or added entry fails a case of its own.
"""

from __future__ import annotations

import pytest

from tests._gate_helpers import THEOREM, refusals

HELPER = "def spin (n : ℕ) : ℕ := n\n"


def with_tactic(line: str) -> str:
    return HELPER + THEOREM.replace("  subst h₀\n", f"  subst h₀\n  {line}\n")


def configuration_refused(found: list[str]) -> bool:
    return any("configuration (n := ...)" in label or "configuration (maxSteps := ...)" in label for label in found)


# tactics whose ``[...]`` list holds terms (core Init/Tactics.lean; Mathlib Linarith, NormNum, Positivity,
# FieldSimp, Use, SolveByElim, NormCast); ``only`` as in ``simp only [...]``. polyrith is refused anyway.
TERM_LIST_TACTICS = [
    "apply_rules", "dsimp", "erw", "exists", "field_simp", "linarith", "nlinarith", "norm_cast", "norm_num",
    "nth_rewrite", "nth_rw", "only", "positivity", "push_cast", "rewrite", "rw", "rw_mod_cast", "rwa", "simp",
    "simp_all", "simp_arith", "simp_rw", "simpa", "solve_by_elim", "use",
]  # fmt: skip


@pytest.mark.parametrize("tactic", TERM_LIST_TACTICS)
def test_a_named_argument_in_the_list_of_a_term_list_tactic_is_a_term(tactic: str) -> None:
    assert refusals(with_tactic(f"{tactic} [foo (n := spin 1)]")) == []


@pytest.mark.parametrize("tactic", ["map_tacs", "first", "any_goals", "frobnicate"])
def test_a_named_argument_in_the_list_of_another_word_is_a_configuration(tactic: str) -> None:
    assert configuration_refused(refusals(with_tactic(f"{tactic} [simp_all_arith (maxSteps := spin 1)]")))


# symbols after which Lean reads a term, each with a line that puts one right before the head
TERM_BEFORE_SYMBOLS = {
    "$": "exact id $ foo (n := spin 1)",
    "/": "have h₁ : x / foo (n := spin 1) = x := by omega",
    ":": "have h₁ : foo (n := spin 1) = x := by omega",
    "<": "have h₁ : x < foo (n := spin 1) := by omega",
    "<-": "rw [<- foo (n := spin 1)]",
    "<|": "exact id <| foo (n := spin 1)",
    "=": "have h₁ : x = foo (n := spin 1) := by omega",
    ">": "have h₁ : x > foo (n := spin 1) := by omega",
    "^": "have h₁ : x ^ foo (n := spin 1) = x := by omega",
    "←": "rw [← foo (n := spin 1)]",
    "→": "have h₁ : x = 1 → foo (n := spin 1) := by omega",
    "↔": "have h₁ : x = 1 ↔ foo (n := spin 1) := by omega",
    "↦": "exact fun y ↦ foo (n := spin 1)",
    "∣": "have h₁ : x ∣ foo (n := spin 1) := by omega",
    "∧": "have h₁ : x = 1 ∧ foo (n := spin 1) := by omega",
    "∨": "have h₁ : x = 1 ∨ foo (n := spin 1) := by omega",
    "≠": "have h₁ : x ≠ foo (n := spin 1) := by omega",
    "≤": "have h₁ : x ≤ foo (n := spin 1) := by omega",
    "≥": "have h₁ : x ≥ foo (n := spin 1) := by omega",
    "⟨": "exact ⟨foo (n := spin 1), rfl⟩",
}


@pytest.mark.parametrize("symbol", sorted(TERM_BEFORE_SYMBOLS))
def test_a_named_argument_after_a_term_symbol_is_a_term(symbol: str) -> None:
    assert refusals(with_tactic(TERM_BEFORE_SYMBOLS[symbol])) == []


# words the backward walk must never cross as if they were arguments: past one of them a term word
# (``exact``) further left would make a tactic's configuration look like a named argument
WORDS_NOT_HEADS = [
    "at", "casesm", "clean_wf", "decreasing_by", "decreasing_trivial", "decreasing_trivial_pre_omega",
    "decreasing_with", "do", "else", "forall", "if", "in", "only", "says", "simp_arith", "simp_wf",
    "termination_by", "then", "where", "with", "Π", "λ", "∀", "∃",
]  # fmt: skip
# (``from`` and ``using`` are walls too, but a term follows each: the head after them is in term position)


@pytest.mark.parametrize("word", WORDS_NOT_HEADS)
def test_the_walk_never_crosses_a_structure_word(word: str) -> None:
    found = refusals(with_tactic(f"exact c {word} simp_all_arith (maxSteps := spin 1)"))
    assert configuration_refused(found), found
