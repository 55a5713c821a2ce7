"""Whether the left side of our statement's equation depends on the statement's variables (adversary A4).

``(x : ℕ) (h₀ : x + 2 = 6) : x * 0 + 7 = 7`` mentions x but says nothing about it: it holds for every
x, so ``7`` is not the problem's answer. We evaluate the left side (``let`` values substituted) at a
few pseudo-random values of the variables, with Lean's semantics for the equation's type (ℕ: truncated
``-``, floor ``/``, ``x / 0 = 0``; ℤ: Euclidean ``/`` and ``%``; ℚ ℝ ℂ: exact, ``x / 0 = 0``), functions
as arbitrary fixed tables. Two different values prove the dependence; otherwise the equation is taken
as constant (fail closed). A left side outside this small term language (a library function, a
binder, a cast, a decimal in ℕ) cannot be evaluated, and then no answer is read either.

This decides only whether an answer is *proposed*: Lean still proves the statement.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from fractions import Fraction

from repro.lean.text.answer_scope import CANONICAL_TYPE
from repro.lean.text.lexer import Kind, Token

_PROBES = 12
_MAX_EXPONENT = 256
_MAX_FACTORIAL = 200
_MAX_BITS = 4_096


class _Unsupported(Exception):
    """The left side is outside the evaluated language: its dependence is unknown."""


class _Skip(Exception):
    """This probe's values make the term too large to evaluate (``2 ^ n`` at a large n)."""


def depends_on_variables(tokens: list[tuple[Token, str | None]], kind: str, variables: dict[str, str]) -> bool:
    """Whether the term takes two different values at some probe values of ``variables``.

    ``tokens`` come from :func:`repro.lean.text.answer_scope.expand_lets` (each with the ``let`` type it is
    evaluated under); ``kind`` is the equation's type, ``variables`` name -> canonical type text.
    """
    seen: set[Fraction] = set()
    for probe in range(_PROBES):
        rng = random.Random(f"answer-probe-{probe}")
        values = {name: _probe_value(rng, type_text) for name, type_text in variables.items() if "→" not in type_text}
        try:
            value = _Parser(tokens, kind, values, variables, probe).whole()
        except _Skip:
            continue
        except (_Unsupported, ZeroDivisionError, OverflowError, ValueError):
            return False
        seen.add(value)
        if len(seen) > 1:
            return True
    return False


def _probe_value(rng: random.Random, type_text: str) -> Fraction:
    magnitude = rng.randint(0, 40) if rng.random() < 0.6 else rng.randint(41, 10**6)
    if type_text == "ℕ" or rng.random() < 0.5:
        return Fraction(magnitude)
    return Fraction(-magnitude)


def _table_value(probe: int, name: str, arguments: list[Fraction], result_type: str) -> Fraction:
    """An arbitrary but fixed value of an uninterpreted function (a variable ``f : ℕ → ℕ``)."""
    digest = hashlib.sha256(f"{probe}|{name}|{arguments}".encode()).digest()
    magnitude = int.from_bytes(digest[:4], "big") % 1000
    return Fraction(magnitude if result_type == "ℕ" or digest[4] % 2 else -magnitude)


def _lean_div(a: Fraction, b: Fraction, kind: str) -> Fraction:
    if b == 0:
        return Fraction(0)
    if kind == "ℕ":
        return Fraction(int(a) // int(b))
    if kind == "ℤ":  # Euclidean: the remainder is never negative
        q = int(a) // int(b) if b > 0 else -(int(a) // -int(b))
        return Fraction(q)
    return a / b


def _lean_mod(a: Fraction, b: Fraction, kind: str) -> Fraction:
    if kind not in ("ℕ", "ℤ"):
        raise _Unsupported("% outside ℕ/ℤ")
    return a if b == 0 else a - b * _lean_div(a, b, kind)


def _factorial(value: Fraction) -> Fraction:
    if value.denominator != 1 or value < 0:
        raise _Unsupported("factorial of a non-natural")
    if value > _MAX_FACTORIAL:
        raise _Skip
    result = 1
    for factor in range(2, int(value) + 1):
        result *= factor
    return Fraction(result)


def _power(base: Fraction, exponent: Fraction) -> Fraction:
    if exponent.denominator != 1:
        raise _Unsupported("non-integer exponent")
    if abs(exponent) > _MAX_EXPONENT:
        raise _Skip
    if exponent < 0:
        return Fraction(0) if base == 0 else base ** int(exponent)
    return base ** int(exponent)


_BINARY: dict[str, tuple[int, bool]] = {"+": (65, False), "-": (65, False), "*": (70, False), "/": (70, False)}
_BINARY |= {"%": (70, False), "^": (75, True)}


class _Parser:
    """A precedence-climbing evaluator of the term language ``_equation_type`` lets through."""

    def __init__(
        self,
        tokens: list[tuple[Token, str | None]],
        kind: str,
        values: dict[str, Fraction],
        variables: dict[str, str],
        probe: int,
    ) -> None:
        self.tokens, self.kind, self.values, self.variables, self.probe = tokens, kind, values, variables, probe
        self.index = 0

    def whole(self) -> Fraction:
        value = self.expression(0, self.kind)
        if self.index != len(self.tokens):
            raise _Unsupported(f"trailing {self.peek()!r}")
        return value

    def peek(self) -> str:
        return self.tokens[self.index][0].text if self.index < len(self.tokens) else ""

    def take(self, expected: str | None = None) -> Token:
        if self.index >= len(self.tokens):
            raise _Unsupported("unexpected end")
        token = self.tokens[self.index][0]
        if expected is not None and token.text != expected:
            raise _Unsupported(f"expected {expected!r}")
        self.index += 1
        return token

    def expression(self, floor: int, kind: str) -> Fraction:
        left = self.prefix(kind)
        while True:
            operator = self.peek()
            if self.index < len(self.tokens) and self.tokens[self.index][0].kind == Kind.symbol and operator == "!":
                self.take()
                if kind != "ℕ":
                    raise _Unsupported("factorial outside ℕ")
                left = _factorial(left)
                continue
            if operator not in _BINARY:
                return left
            precedence, right_assoc = _BINARY[operator]
            if precedence < floor:
                return left
            self.take()
            right = self.expression(precedence if right_assoc else precedence + 1, kind)
            left = self.apply(operator, left, right, kind)
            if abs(left.numerator).bit_length() + left.denominator.bit_length() > _MAX_BITS:
                raise _Skip

    def apply(self, operator: str, left: Fraction, right: Fraction, kind: str) -> Fraction:
        operations: dict[str, Callable[[], Fraction]] = {
            "+": lambda: left + right,
            "-": lambda: max(left - right, Fraction(0)) if kind == "ℕ" else left - right,
            "*": lambda: left * right,
            "/": lambda: _lean_div(left, right, kind),
            "%": lambda: _lean_mod(left, right, kind),
            "^": lambda: _power(left, right),
        }
        return operations[operator]()

    def prefix(self, kind: str) -> Fraction:
        if self.peek() == "-":
            self.take()
            value = self.expression(75, kind)
            if kind == "ℕ":
                raise _Unsupported("negation in ℕ")
            return -value
        return self.atom(kind)

    def atom(self, kind: str) -> Fraction:
        if self.index >= len(self.tokens):
            raise _Unsupported("unexpected end")
        token, let_type = self.tokens[self.index]
        if token.kind == Kind.number:
            self.take()
            return self.number(token.text, kind)
        if token.kind == Kind.identifier:
            return self.variable()
        if token.text == "(":
            inner, ascribed = self._group_type(kind)
            self.take()
            value = self.expression(0, let_type or inner)
            if ascribed:
                self.take(":")
                self.take()
            self.take(")")
            return value
        if token.text == "|":
            self.take()
            value = self.expression(0, kind)
            self.take("|")
            return abs(value)
        raise _Unsupported(f"token {token.text!r}")

    def _group_type(self, kind: str) -> tuple[str, bool]:
        """The type the bracket group opening here is read at: its ascription ``(e : T)``, else ``kind``."""
        depth = 0
        for index in range(self.index, len(self.tokens)):
            text = self.tokens[index][0].text
            if text == "(":
                depth += 1
            elif text == ")":
                depth -= 1
                if depth == 0:
                    return kind, False
            elif text == ":" and depth == 1:
                following = self.tokens[index + 1][0] if index + 1 < len(self.tokens) else None
                closing = self.tokens[index + 2][0].text if index + 2 < len(self.tokens) else ""
                if following is None or following.kind != Kind.identifier or closing != ")":
                    raise _Unsupported("ascription to a type that is not one name")
                target = CANONICAL_TYPE.get(following.name)
                if target is None:
                    raise _Unsupported("ascription to a non-numeric type")
                return target, True
        raise _Unsupported("unbalanced parentheses")

    def number(self, text: str, kind: str) -> Fraction:
        if text.isdigit():
            return Fraction(int(text))
        if kind in ("ℚ", "ℝ", "ℂ") and text.replace(".", "", 1).isdigit() and "." in text:
            return Fraction(text)
        raise _Unsupported(f"numeral {text!r} in {kind}")

    def variable(self) -> Fraction:
        token = self.take()
        name = token.name
        if name in self.values:
            return self.values[name]
        type_text = self.variables.get(name)
        if type_text is None:
            raise _Unsupported(f"identifier {name!r}")
        *argument_types, result_type = type_text.split(" → ")
        arguments = [self.argument(argument_type) for argument_type in argument_types]
        return _table_value(self.probe, name, arguments, result_type)

    def argument(self, kind: str) -> Fraction:
        """One argument of an application: a numeral, a variable, or a bracketed term."""
        token = self.tokens[self.index][0] if self.index < len(self.tokens) else None
        if token is None:
            raise _Unsupported("missing argument")
        if token.kind == Kind.identifier and token.name in self.values:
            self.take()
            return self.values[token.name]
        if token.kind == Kind.number or token.text in ("(", "|"):
            return self.atom(kind)
        raise _Unsupported(f"argument {token.text!r}")
