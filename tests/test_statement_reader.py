"""The statement reader and the deterministic answer, for every statement style the formalizer writes."""

from __future__ import annotations

import pytest

from repro.lean.text import StatementError, final_proposition, read_statement
from repro.stages.answer import proposed_answer
from repro.stages.formalize import normalize_statement

STYLES = {
    # style: (statement, conclusion, the answer proposed to Lean, which confirms its type and value)
    "hypothesis": (
        "theorem robe (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry",
        "x / 12 = 300",
        "300",
    ),
    "let_chain": (
        "theorem shop : let price : ℝ := 12.5\n  let count : ℕ := 4\n  price * count = 50 := by sorry",
        "let price : ℝ := 12.5\n  let count : ℕ := 4\n  price * count = 50",
        "50",  # ℝ times a cast ℕ: Lean says which type the equation is in, the reader only proposes
    ),
    "let_with_semicolons": (
        "theorem shop2 : let a := (3 : ℚ); let b := a / 4; b = 3 / 4 := by sorry",
        "let a := (3 : ℚ); let b := a / 4; b = 3 / 4",
        None,  # `b` has no written type
    ),
    "have": (
        "theorem halves : have h : (10 : ℕ) % 2 = 0 := by decide\n  (10 : ℕ) / 2 = 5 := by sorry",
        "have h : (10 : ℕ) % 2 = 0 := by decide\n  (10 : ℕ) / 2 = 5",
        "5",
    ),
    "forall_with_hypothesis": (
        "theorem solve : ∀ x : ℝ, 2 * x + 3 = 11 → x = 4 := by sorry",
        "∀ x : ℝ, 2 * x + 3 = 11 → x = 4",
        None,  # read behind a premise: `(∀ n, n < 10) → x = 5` would release 5 (finding 4)
    ),
    "exists": (
        "theorem witness : ∃ n : ℕ, n * 3 = 12 := by sorry",
        "∃ n : ℕ, n * 3 = 12",
        None,
    ),
    "set_builder": (
        "theorem roots : {x : ℝ | x ^ 2 = 4} = {2, -2} := by sorry",
        "{x : ℝ | x ^ 2 = 4} = {2, -2}",
        None,  # not a numeral
    ),
    "finset_sum": (
        "theorem total : ∑ i in Finset.range 10, (i + 1) = 55 := by sorry",
        "∑ i in Finset.range 10, (i + 1) = 55",
        "55",  # a closed computation: Lean elaborates it (in ℕ) and confirms the value
    ),
    "negative_and_typed": (
        "theorem temp (t : ℤ) (h : t + 7 = 2) : t = -5 := by sorry",
        "t = -5",
        "-5",
    ),
    "typed_let_chain": (
        "theorem shop3 : let price : ℝ := 12.5\n  let total : ℝ := price * 4\n  total = 50 := by sorry",
        "let price : ℝ := 12.5\n  let total : ℝ := price * 4\n  total = 50",
        "50",
    ),
    "conjunction_is_an_ordered_tuple": (
        "theorem pair (a b : ℕ) (h : a + b = 5 ∧ a - b = 1) : a = 3 ∧ b = 2 := by sorry",
        "a = 3 ∧ b = 2",
        "(3, 2)",
    ),
    "default_argument_and_comment": (
        "theorem opt (k : ℕ := 3) -- the := here is a default\n    : k * 2 = 6 := by sorry",
        "k * 2 = 6",
        "6",
    ),
}


@pytest.mark.parametrize("style", list(STYLES))
def test_reader_and_proposed_answer(style: str) -> None:
    statement, conclusion, answer = STYLES[style]
    parsed = read_statement(statement)
    assert parsed.conclusion == conclusion
    assert parsed.keyword == "theorem" and parsed.declaration.startswith(f"theorem {parsed.name} ")
    assert proposed_answer(statement) == answer


def test_binders_and_name() -> None:
    parsed = read_statement("theorem robe (x y: ℕ) {n : ℤ} [Fintype α] (h₀ : x = 3600) : x / 12 = 300 := by sorry")
    assert parsed.name == "robe"
    assert parsed.binders == ["(x y: ℕ)", "{n : ℤ}", "[Fintype α]", "(h₀ : x = 3600)"]


def test_final_proposition_marks_existentials() -> None:
    assert final_proposition("∃ n : ℕ, n = 2") == ("∃ n : ℕ, n = 2", True)
    assert final_proposition("let k := 2\n  ∀ m, m = k → m + 1 = 3") == ("m + 1 = 3", False)


@pytest.mark.parametrize(
    "statement",
    [
        "def price : ℕ := 12\ntheorem t : price = 12 := by sorry",
        "theorem a : 1 = 1 := by sorry\ntheorem b : 2 = 2 := by sorry",
        "instance : Inhabited ℕ := ⟨0⟩\ntheorem t : 1 = 1 := by sorry",
        "theorem t : 1 = 1 := by\n  norm_num",
        "theorem t : 1 = 1 := by sorry /- unterminated",
        "example : 1 = 1 := by sorry",
    ],
)
def test_anything_but_one_theorem_is_refused_with_a_reason(statement: str) -> None:
    with pytest.raises(StatementError):
        read_statement(statement)
    assert proposed_answer(statement) is None


def test_formalize_normalises_header_and_name_but_refuses_definitions() -> None:
    code = "import Mathlib\nopen Real\n\ntheorem whatever (x : ℝ) (h : x = 2) : x * 3 = 6 := by sorry"
    assert normalize_statement(code, "q7") == "theorem q7 (x : ℝ) (h : x = 2) : x * 3 = 6 := by sorry"
    with pytest.raises(StatementError, match="exactly one theorem"):
        normalize_statement("import Mathlib\ndef k : ℕ := 2\ntheorem t : k = 2 := by sorry", "q7")


@pytest.mark.parametrize(
    "conclusion",
    [
        "!n = 5",  # `!(n = 5)`: Bool negation binds looser than `=`
        "true || n = 5",  # `(true || n = 5)`-style wrappers below `=`'s precedence
        "Not <| n = 5",
        "Not $ n = 5",
        "id <| n = 5",
        "(True ∨ ·) <| n = 5",
        "n = 5 || true",
        "(fun m => m = 5) n",
        "decide (n = 5) = true",  # a Bool equation: the answer is `true`, not a number
    ],
)
def test_an_equation_wrapped_by_a_looser_operator_has_no_proposed_answer(conclusion: str) -> None:
    """The released answer must be what Lean proved: `!n = 5` proves n ≠ 5, so 5 must never be read."""
    assert proposed_answer(f"theorem foo (n : ℕ) (h : n + 2 = 9) : {conclusion} := by sorry") is None


@pytest.mark.parametrize(
    ("conclusion", "answer"),
    [("n ! = 120", "120"), ("(n)! = 120", "120"), ("|n - 10| = 5", "5"), ("n ^ 2 % 7 = 4", "4")],
)
def test_tight_operators_keep_the_proposed_answer(conclusion: str, answer: str) -> None:
    assert proposed_answer(f"theorem foo (n : ℕ) (h : n = 5) : {conclusion} := by sorry") == answer
