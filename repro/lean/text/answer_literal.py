"""The right side of our statement's equation read as a literal value: its form, value, types and LaTeX.

Only a *proposal*: Lean confirms every value we release (:mod:`repro.lean.answer_checks`). The reader
says which of ℕ ℤ ℚ ℝ ℂ the literal can be a value of, what Lean text states that value in normal form
(``16``, ``-5``, ``3 / 4``), and, for a closed form in ℝ (``3 * Real.sqrt 2``, ``π / 4``), a fully
parenthesised Lean text and a LaTeX rendering built from the same tree. Lean then proves
``((R) : α) = (normal) := by norm_num`` in our own context, so a misreading here (``0x10`` read as 10,
``1e3`` as 1, ``2⁻¹`` as 2) gives no answer, never a wrong one.

The grammar follows Lean 4's precedences (``Init/Prelude.lean``, ``Init/Core.lean``): ``+ -`` infixl 65,
``* /`` infixl 70, prefix ``-`` 75 (so ``-x ^ 2`` is ``-(x ^ 2)``), ``^`` infixr 75, ``⁻¹`` postfix max;
numerals are ASCII decimal, ``0x``/``0b``/``0o`` or scientific (``2.5``, ``1e3``, ``1.5e-2``). What each form
may be a value of:

- ``integer``: digits (or ``0x10``, ``1e3``, ``5.0`` whose value is whole); a sign excludes ℕ; a decimal or
  scientific spelling needs ``OfScientific``, so only ℚ ℝ ℂ.
- ``fraction``: ``a / b`` or ``a⁻¹`` with a non-whole value: ℚ ℝ ℂ only (in ℕ and ℤ ``/`` rounds, so
  ``16 / 3`` there is no literal at all, it is a division).
- ``decimal``: ``2.5``: ℚ ℝ ℂ.
- ``closed_form``: ``Real.sqrt``/``√``, ``π``/``Real.pi``, ``+ - * / ^`` over literals, with an irrational
  value: ℝ only; with ``Complex.I`` and a value that is not real: ℂ only. A closed form whose value is
  rational (``5 ^ 2``, ``Real.sqrt 4``, ``2 + 3``) is an unevaluated computation (``evaluated`` False), as
  is an unreduced fraction (``6 / 4``).

A type ascription inside the literal (``(5 : ℝ)``) must name one of the five types, the same one
throughout; it then restricts the literal to that type. Anything else (an identifier, a cast ``↑``, a
second type) is no literal: the reader returns None.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from repro.lean.text.lexer import Kind, Token, lex, significant

FIELD_TYPES = ("ℚ", "ℝ", "ℂ")
ALL_TYPES = ("ℕ", "ℤ", *FIELD_TYPES)
_TYPE_NAMES = {"ℕ": "ℕ", "Nat": "ℕ", "ℤ": "ℤ", "Int": "ℤ", "ℚ": "ℚ", "Rat": "ℚ", "ℝ": "ℝ", "Real": "ℝ"}
_TYPE_NAMES |= {"ℂ": "ℂ", "Complex": "ℂ"}
_DECIMAL = re.compile(r"([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?")
_RADIX = {"0x": 16, "0X": 16, "0b": 2, "0B": 2, "0o": 8, "0O": 8}
_SQRT = frozenset({"Real.sqrt", "√"})
_PI = frozenset({"π", "Real.pi"})
_MAX_EXPONENT = 64
_MAX_DIGITS = 400
_MAX_TOKENS = 200


@dataclass(frozen=True)
class Literal:
    """A literal's reading; every field is a proposal Lean confirms before anything is released."""

    text: str  # the statement's own text, whitespace collapsed
    form: str  # integer | fraction | decimal | closed_form
    types: tuple[str, ...]  # which of ℕ ℤ ℚ ℝ ℂ it may be a value of, as Lean reads it
    normal: str  # Lean text of the value in normal form (closed forms: fully parenthesised)
    release: str  # the released answer: ``16``, ``-1 / 4``, ``2.5``; a closed form's LaTeX
    latex: str
    value: Fraction | None  # None for a closed form
    evaluated: bool  # False: an unevaluated computation (``6 / 4``, ``5 ^ 2``, ``Real.sqrt 4``)
    exact: Any = None  # a closed form's exact value (sympy), which its LaTeX must denote

    @property
    def exact_value(self) -> Any:
        """The value as sympy (a rational's from ``value``): what the released text must denote."""
        if self.exact is not None:
            return self.exact
        import sympy

        assert self.value is not None
        return sympy.Rational(self.value.numerator, self.value.denominator)


class _NotLiteral(Exception):
    pass


@dataclass(frozen=True)
class _Node:
    """A literal's syntax tree: ``num`` (value, scientific), ``neg``, ``inv``, ``sqrt``, ``pi``, binary ops."""

    tag: str
    value: Fraction | None = None
    scientific: bool = False
    children: tuple[_Node, ...] = ()


def number_value(text: str) -> tuple[Fraction, bool] | None:
    """A numeral token's value as Lean reads it, and whether it is scientific (needs ``OfScientific``)."""
    if text[:2] in _RADIX:
        digits = text[2:]
        try:
            return Fraction(int(digits, _RADIX[text[:2]])), False
        except ValueError:
            return None
    found = _DECIMAL.fullmatch(text)
    if found is None or len(text) > _MAX_DIGITS:
        return None
    whole, fraction, exponent = found.groups()
    value = Fraction(int(whole + (fraction or "")), 10 ** len(fraction or ""))
    if exponent is not None:
        if abs(int(exponent)) > _MAX_DIGITS:
            return None
        value *= Fraction(10) ** int(exponent)
    return value, fraction is not None or exponent is not None


class _Parser:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.index = 0
        self.ascribed: set[str] = set()

    def peek(self) -> Token | None:
        return self.tokens[self.index] if self.index < len(self.tokens) else None

    def take(self, text: str | None = None) -> Token:
        token = self.peek()
        if token is None or (text is not None and token.text != text):
            raise _NotLiteral(f"expected {text!r}")
        self.index += 1
        return token

    def expression(self, floor: int = 0) -> _Node:
        left = self.prefix()
        while True:
            token = self.peek()
            if token is None or token.kind != Kind.symbol:
                return left
            power = {"+": 65, "-": 65, "*": 70, "/": 70, "^": 75}.get(token.text)
            if power is None or power < floor:
                return left
            self.take()
            right = self.expression(power if token.text == "^" else power + 1)
            left = _Node(token.text, children=(left, right))

    def prefix(self) -> _Node:
        token = self.peek()
        if token is not None and token.kind == Kind.symbol and token.text == "-":
            self.take()
            return _Node("neg", children=(self.expression(75),))
        return self.postfix()

    def postfix(self) -> _Node:
        node = self.atom()
        while (token := self.peek()) is not None and token.kind == Kind.symbol and token.text == "⁻¹":
            self.take()
            node = _Node("inv", children=(node,))
        return node

    def atom(self) -> _Node:
        token = self.take()
        if token.kind == Kind.number:
            read = number_value(token.text)
            if read is None:
                raise _NotLiteral(f"numeral {token.text!r}")
            return _Node("num", read[0], read[1])
        if token.kind == Kind.identifier and token.name in _PI:
            return _Node("pi")
        if token.kind == Kind.identifier and token.name == "Complex.I":
            return _Node("imag")
        if token.text in _SQRT and token.kind in (Kind.identifier, Kind.symbol):
            return _Node("sqrt", children=(self.postfix(),))  # an argument: ``Real.sqrt 2``, ``√(x)``
        if token.text == "(":
            inner = self.expression()
            following = self.peek()
            if following is not None and following.text == ":":
                self.take(":")
                named = self.take()
                if named.kind != Kind.identifier or named.name not in _TYPE_NAMES:
                    raise _NotLiteral("an ascription to a type that is not ℕ ℤ ℚ ℝ ℂ")
                self.ascribed.add(_TYPE_NAMES[named.name])
            self.take(")")
            return inner
        raise _NotLiteral(f"token {token.text!r}")


def read_literal(text: str) -> Literal | None:
    """``text`` as a literal value, or None when it is anything else (see the module docstring)."""
    tokens = significant(lex(text))
    if not tokens or len(tokens) > _MAX_TOKENS or any(t.kind == Kind.error for t in tokens):
        return None
    parser = _Parser(tokens)
    try:
        tree = parser.expression()
        if parser.peek() is not None or len(parser.ascribed) > 1:
            return None
        return _literal(" ".join(t.text for t in tokens), tree, parser.ascribed)
    except (_NotLiteral, ZeroDivisionError, OverflowError, ValueError):
        return None


def _literal(text: str, tree: _Node, ascribed: set[str]) -> Literal | None:
    closed = _has(tree, {"sqrt", "pi", "imag", "+", "*", "^"}) or _has(tree, {"-"})
    if closed:
        return _closed_form(text, tree, ascribed)
    value = _rational(tree)
    scientific = _has_scientific(tree)
    whole = value.denominator == 1
    types: tuple[str, ...]
    if whole and not _has(tree, {"/", "inv"}):
        form = "integer"
        types = FIELD_TYPES if scientific else ALL_TYPES[1:] if value < 0 or _has(tree, {"neg"}) else ALL_TYPES
        evaluated = True
    elif whole:  # ``6 / 3``, ``1⁻¹``: a whole value written as a division
        form, types, evaluated = "integer", FIELD_TYPES, False
    elif _has(tree, {"/", "inv"}):
        form, types = "fraction", FIELD_TYPES
        evaluated = _reduced_fraction(tree)
    else:
        form, types, evaluated = "decimal", FIELD_TYPES, True
    if ascribed:
        types = tuple(t for t in types if t in ascribed)
    if not types:
        return None
    normal = _normal_text(value)
    release = _decimal_text(value) if form == "decimal" else normal
    return Literal(text, form, types, normal, release, _rational_latex(value, form), value, evaluated)


def _has(node: _Node, tags: set[str]) -> bool:
    return node.tag in tags or any(_has(child, tags) for child in node.children)


def _has_scientific(node: _Node) -> bool:
    return node.scientific or any(_has_scientific(child) for child in node.children)


def _rational(node: _Node) -> Fraction:
    if node.tag == "num":
        assert node.value is not None
        return node.value
    if node.tag == "neg":
        return -_rational(node.children[0])
    if node.tag == "inv":
        inner = _rational(node.children[0])
        if inner == 0:  # Lean's 0⁻¹ = 0 is a convention the text does not denote (red2 R2-3): no literal
            raise _NotLiteral("0⁻¹")
        return 1 / inner
    if node.tag == "/":
        denominator = _rational(node.children[1])
        if denominator == 0:  # Lean's x / 0 = 0: no literal
            raise _NotLiteral("a division by zero")
        return _rational(node.children[0]) / denominator
    raise _NotLiteral(node.tag)


def _reduced_fraction(node: _Node) -> bool:
    """``3 / 4``, ``-3 / 4``, ``-(3 / 4)``, ``2⁻¹``: a reduced fraction as written, not a computation."""
    while node.tag == "neg":
        node = node.children[0]
    if node.tag == "inv":
        inner = node.children[0]
        return inner.tag == "num" and not inner.scientific and inner.value not in (0, 1)
    if node.tag != "/":
        return False
    top, bottom = node.children
    if top.tag == "neg":
        top = top.children[0]
    if top.tag != "num" or bottom.tag != "num" or top.scientific or bottom.scientific:
        return False
    assert top.value is not None and bottom.value is not None
    return bottom.value > 1 and Fraction(top.value, bottom.value).denominator == bottom.value


def _normal_text(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    return f"{value.numerator} / {value.denominator}"


def _decimal_text(value: Fraction) -> str:
    """The exact decimal of a terminating fraction (``5/2`` -> ``2.5``), without an exponent."""
    sign = "-" if value < 0 else ""
    value = abs(value)
    places = 0
    while (value * 10**places).denominator != 1:
        places += 1
        if places > _MAX_DIGITS:
            raise _NotLiteral("not a terminating decimal")
    digits = str((value * 10**places).numerator).rjust(places + 1, "0")
    whole, fraction = digits[: len(digits) - places], digits[len(digits) - places :]
    return sign + whole + ("." + fraction.rstrip("0") if fraction.rstrip("0") else "")


def _rational_latex(value: Fraction, form: str) -> str:
    if form == "decimal":
        return _decimal_text(value)
    if value.denominator == 1:
        return str(value.numerator)
    sign = "-" if value < 0 else ""
    return f"{sign}\\frac{{{abs(value.numerator)}}}{{{value.denominator}}}"


# -- closed forms in ℝ ---------------------------------------------------------------------------------


def _closed_form(text: str, tree: _Node, ascribed: set[str]) -> Literal | None:
    kind = "ℂ" if _has(tree, {"imag"}) else "ℝ"
    if ascribed and ascribed != {kind}:
        return None
    expression = _sympy(tree)
    rational = bool(expression.is_rational)
    types: tuple[str, ...] = (kind,)
    if rational:
        value = Fraction(str(expression))
        evaluated = False
        if not ascribed and not _has(tree, {"sqrt", "pi", "imag", "/", "inv"}) and not _has_scientific(tree):
            # ``2 + 3``, ``5 ^ 2``: any type may hold it; Lean checks its value there (``2 - 3`` is 0 in ℕ)
            whole = value.denominator == 1
            types = ALL_TYPES if whole and value >= 0 else ALL_TYPES[1:] if whole else FIELD_TYPES
    else:
        value = None
        real = expression.is_real is True and expression.is_rational is False
        evaluated = real if kind == "ℝ" else expression.is_real is False  # ℂ: a non-real value
    if not rational and not evaluated:
        return None  # sympy cannot tell: no proposal
    latex = _latex(tree, 0)
    normal = _normal_text(value) if value is not None else _lean_text(tree)
    return Literal(text, "closed_form", types, normal, latex, latex, value, evaluated, expression)


def _sympy(node: _Node) -> Any:
    import sympy

    if node.tag == "num":
        assert node.value is not None
        return sympy.Rational(node.value.numerator, node.value.denominator)
    if node.tag == "pi":
        return sympy.pi
    if node.tag == "imag":
        return sympy.I
    parts = [_sympy(child) for child in node.children]
    if node.tag == "neg":
        return -parts[0]
    # Lean's conventions (0⁻¹ = 0, x / 0 = 0, Real.sqrt of a negative number = 0: Mathlib's inv_zero, div_zero,
    # Real.sqrt_eq_zero') make a text denote something its LaTeX does not (√-2 is i√2, 1/0 complex infinity to
    # math-verify): such a text is no literal (red2 R2-3)
    if node.tag == "inv":
        if parts[0].is_zero is not False:
            raise _NotLiteral("0⁻¹, or an inverse of a value not known to be nonzero")
        return 1 / parts[0]
    if node.tag == "sqrt":
        if parts[0].is_nonnegative is not True:
            raise _NotLiteral("Real.sqrt of a value not known to be non-negative")
        return sympy.sqrt(parts[0])
    left, right = parts
    if node.tag == "+":
        return left + right
    if node.tag == "-":
        return left - right
    if node.tag == "*":
        return left * right
    if node.tag == "/":
        if right.is_zero is not False:
            raise _NotLiteral("a division by zero, or by a value not known to be nonzero")
        return left / right
    if node.tag == "^":
        if not (right.is_integer and right.is_nonnegative and right <= _MAX_EXPONENT):
            raise _NotLiteral("a closed form's exponent must be a small natural literal")
        return left**right
    raise _NotLiteral(node.tag)


def _lean_text(node: _Node) -> str:
    """Fully parenthesised Lean text of the tree (numerals in decimal digits)."""
    if node.tag == "num":
        assert node.value is not None
        return f"({_normal_text(node.value)})" if node.value.denominator != 1 else str(node.value.numerator)
    if node.tag == "pi":
        return "Real.pi"
    if node.tag == "imag":
        return "Complex.I"
    parts = [_lean_text(child) for child in node.children]
    if node.tag == "neg":
        return f"(-{parts[0]})"
    if node.tag == "inv":
        return f"({parts[0]})⁻¹"
    if node.tag == "sqrt":
        return f"(Real.sqrt {parts[0]})"
    return f"({parts[0]} {node.tag} {parts[1]})"


_LATEX_POWER = {"+": 65, "-": 65, "*": 70, "/": 70, "neg": 75, "^": 75}


def _latex(node: _Node, outer: int) -> str:
    if node.tag == "num":
        assert node.value is not None
        return _rational_latex(node.value, "decimal" if node.value.denominator != 1 else "integer")
    if node.tag == "pi":
        return "\\pi"
    if node.tag == "imag":
        return "i"
    if node.tag == "sqrt":
        return f"\\sqrt{{{_latex(node.children[0], 0)}}}"
    if node.tag == "inv":
        return f"\\frac{{1}}{{{_latex(node.children[0], 0)}}}"
    if node.tag == "/":
        return f"\\frac{{{_latex(node.children[0], 0)}}}{{{_latex(node.children[1], 0)}}}"
    power = _LATEX_POWER[node.tag]
    if node.tag == "neg":
        text = f"-{_latex(node.children[0], power)}"
    elif node.tag == "^":
        text = f"{_latex(node.children[0], power + 1)}^{{{_latex(node.children[1], 0)}}}"
    elif node.tag == "*" and node.children[1].tag == "imag":  # MATH's spelling: ``3i``, ``\sqrt{2}i``
        text = f"{_latex(node.children[0], power)}i"
    elif node.tag == "*" and node.children[0].tag == "imag":
        text = f"{_latex(node.children[1], power + 1)}i"
    elif node.tag == "*":
        text = f"{_latex(node.children[0], power)} \\cdot {_latex(node.children[1], power + 1)}"
    else:
        text = f"{_latex(node.children[0], power)} {node.tag} {_latex(node.children[1], power + 1)}"
    return f"\\left({text}\\right)" if power < outer else text
