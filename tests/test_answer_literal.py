"""The right side of our equation read as a literal: which types it can be a value of, its normal form, its LaTeX.

Only a proposal (Lean confirms every value, tests/test_answer_confirmed.py), but a proposal must never
invite a wrong answer: ``16 / 3`` is no literal of ℕ or ℤ (it is a division there), ``0x10`` is 16, ``1e3``
is 1000 and needs ``OfScientific`` (no ℕ), ``2⁻¹`` is a half and needs a field, a Unicode digit is no digit.
"""

from __future__ import annotations

import pytest
from math_verify import parse, verify

from repro.lean.text.answer_literal import read_literal


@pytest.mark.parametrize(
    ("text", "form", "types", "normal", "release"),
    [
        ("42", "integer", ("ℕ", "ℤ", "ℚ", "ℝ", "ℂ"), "42", "42"),
        ("-5", "integer", ("ℤ", "ℚ", "ℝ", "ℂ"), "-5", "-5"),
        ("0x10", "integer", ("ℕ", "ℤ", "ℚ", "ℝ", "ℂ"), "16", "16"),
        ("0b101", "integer", ("ℕ", "ℤ", "ℚ", "ℝ", "ℂ"), "5", "5"),
        ("1e3", "integer", ("ℚ", "ℝ", "ℂ"), "1000", "1000"),
        ("5.0", "integer", ("ℚ", "ℝ", "ℂ"), "5", "5"),
        ("3 / 4", "fraction", ("ℚ", "ℝ", "ℂ"), "3 / 4", "3 / 4"),
        ("-3 / 4", "fraction", ("ℚ", "ℝ", "ℂ"), "-3 / 4", "-3 / 4"),
        ("-(1 / 4)", "fraction", ("ℚ", "ℝ", "ℂ"), "-1 / 4", "-1 / 4"),
        ("2⁻¹", "fraction", ("ℚ", "ℝ", "ℂ"), "1 / 2", "1 / 2"),
        ("2.5", "decimal", ("ℚ", "ℝ", "ℂ"), "5 / 2", "2.5"),
        ("1.5e-2", "decimal", ("ℚ", "ℝ", "ℂ"), "3 / 200", "0.015"),
        ("(5 : ℝ)", "integer", ("ℝ",), "5", "5"),
        ("((3 : ℚ) / 4)", "fraction", ("ℚ",), "3 / 4", "3 / 4"),
    ],
)
def test_a_literal_is_read_with_the_types_it_can_be_a_value_of(
    text: str, form: str, types: tuple[str, ...], normal: str, release: str
) -> None:
    literal = read_literal(text)
    assert literal is not None
    assert (literal.form, literal.types, literal.normal, literal.release) == (form, types, normal, release)
    assert literal.evaluated


@pytest.mark.parametrize(
    "text",
    [
        "x",  # a variable: symbolic
        "2 * x",
        "Nat.succ 4",  # a function
        "↑5",  # a cast
        "((7 : ℕ) / 2 : ℝ)",  # two types: ℕ division inside, then a cast
        "((3 : ℕ) : ℝ)",
        "(5 : ZMod 7)",  # no released type
        "５",  # a fullwidth digit is no numeral to Lean
        "𝟑",
        "3²",
        "2 ∨ 3",
        "{2, 3}",
        "Real.sqrt -2",  # not Lean syntax for an argument
        "1_000",
    ],
)
def test_anything_but_a_literal_is_no_literal(text: str) -> None:
    assert read_literal(text) is None


@pytest.mark.parametrize("text", ["16 / 3", "7 / 2", "2⁻¹", "-1 / 4"])
def test_a_fraction_is_never_a_literal_of_n_or_z(text: str) -> None:
    """In ℕ and ℤ ``/`` rounds: ``16 / 3`` there is 5, a division, never the value 16/3."""
    literal = read_literal(text)
    assert literal is not None and not set(literal.types) & {"ℕ", "ℤ"}


@pytest.mark.parametrize(
    "text",
    [
        "6 / 4",
        "6 / 3",
        "4 / 1",
        "5 ^ 2",
        "2 + 3",
        "Real.sqrt 4",
        "Real.sqrt 2 * Real.sqrt 2",
        "(1 / 2) / 2",
    ],
)
def test_an_unevaluated_computation_is_read_as_such(text: str) -> None:
    literal = read_literal(text)
    assert literal is not None and not literal.evaluated, text


@pytest.mark.parametrize(
    "text",
    ["Real.sqrt (-2)", "1 / 0", "0⁻¹", "π + 1 / 0", "Real.sqrt (1 - 2) + π", "(2 - 2)⁻¹ + π", "√(-1) * Complex.I"],
)
def test_a_text_whose_value_rests_on_a_lean_convention_is_no_literal(text: str) -> None:
    """red2 R2-3: Mathlib's ``Real.sqrt (-2) = 0``, ``x / 0 = 0``, ``0⁻¹ = 0`` make such a text's value differ
    from what its LaTeX says (``\\sqrt{-2}`` is i√2, ``\\frac{1}{0}`` complex infinity to math-verify)."""
    assert read_literal(text) is None, text


@pytest.mark.parametrize(
    ("text", "latex", "normal"),
    [
        ("3 * Real.sqrt 2", "3 \\cdot \\sqrt{2}", "(3 * (Real.sqrt 2))"),
        ("√2 / 2", "\\frac{\\sqrt{2}}{2}", "((Real.sqrt 2) / 2)"),
        ("π / 4", "\\frac{\\pi}{4}", "(Real.pi / 4)"),
        ("2 * Real.pi", "2 \\cdot \\pi", "(2 * Real.pi)"),
        ("1 + Real.sqrt 3", "1 + \\sqrt{3}", "(1 + (Real.sqrt 3))"),
        ("-Real.sqrt 2 ^ 3", "-\\sqrt{2}^{3}", "(-((Real.sqrt 2) ^ 3))"),
        ("Real.sqrt 10", "\\sqrt{10}", "(Real.sqrt 10)"),
        ("1 / 5 + 3 / 5 * Complex.I", "\\frac{1}{5} + \\frac{3}{5}i", "((1 / 5) + ((3 / 5) * Complex.I))"),
    ],
)
def test_a_closed_form_keeps_lean_precedence_in_its_latex_and_its_lean_text(text: str, latex: str, normal: str) -> None:
    literal = read_literal(text)
    assert literal is not None and literal.form == "closed_form" and literal.evaluated
    assert (literal.latex, literal.normal, literal.release) == (latex, normal, latex)
    assert literal.types == (("ℂ",) if "Complex.I" in text else ("ℝ",))


def test_math_verify_reads_the_released_latex_as_the_value_of_the_closed_form() -> None:
    """The released LaTeX is graded by math-verify: it must be the same number as the statement's text."""
    cases = {"3 * Real.sqrt 2": "\\sqrt{18}", "√2 / 2": "\\frac{1}{\\sqrt{2}}", "π / 4": "0.25\\pi"}
    for text, equivalent in cases.items():
        literal = read_literal(text)
        assert literal is not None
        assert verify(parse(f"${literal.latex}$"), parse(f"${equivalent}$")), text
    square = read_literal("-Real.sqrt 3 ^ 2 + Real.sqrt 2")  # -(√3²) + √2, not (-√3)² + √2
    assert square is not None
    assert verify(parse(f"${square.latex}$"), parse("$-3 + \\sqrt{2}$")), "prefix minus binds looser than ^ in Lean"
