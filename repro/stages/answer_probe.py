"""Whether the left side of our statement's equation depends on the statement's variables (adversary A4).

``(x : ℕ) (h₀ : x + 2 = 6) : x * 0 + 7 = 7`` mentions x but says nothing about it: it holds for every
x, so ``7`` is not the problem's answer. We evaluate the left side (``let`` values substituted) at a
few pseudo-random values of the variables, with Lean's semantics for the equation's type (ℕ: truncated
``-``, floor ``/``; ℤ: Euclidean ``/`` and ``%``; ℚ ℝ ℂ: exact), functions as arbitrary fixed tables.
A probe that divides by zero, or takes the root or logarithm of a number where Mathlib's value is only
a convention (``x / 0 = 0``, ``Real.sqrt (-1) = 0``), is skipped: ``x / x = 1`` must read as constant.
Two different values prove the dependence; otherwise the equation is taken as constant (fail closed).
A left side outside this small term language (a library function, a binder, a decimal in ℕ) cannot be
evaluated, and then no answer is read either. Casts ``↑e`` keep the
value of ``e`` read at its own type; a few library functions are evaluated (``Int.floor``, ``abs``,
``Nat.gcd``, ``Real.sqrt``, ``Real.log``, real powers...). An irrational value is an exact sympy number,
never a float (red2 R2-4: ``(√2 · √2 − 2) · x · 10⁹`` is 0, and a float probe read it as depending on x):
two probes differ, or agree, only where sympy decides it exactly; where it cannot, nothing is read.

This decides only whether an answer is *proposed*: Lean still proves the statement.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import sympy

from repro.lean.text.answer_literal import number_value
from repro.lean.text.answer_scope import CANONICAL_TYPE
from repro.lean.text.lexer import Kind, Token

Number = Fraction | Any  # Any: an exact irrational sympy number (never a float)
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
    return dependence(tokens, kind, variables) is True


def dependence(tokens: list[tuple[Token, str | None]], kind: str, variables: dict[str, str]) -> bool | None:
    """True: two probes gave different values; False: every probe gave one value; None: not evaluable."""
    first: Number | None = None
    for probe in range(_PROBES):
        rng = random.Random(f"answer-probe-{probe}")
        values = {name: _probe_value(rng, type_text) for name, type_text in variables.items() if "→" not in type_text}
        try:
            value = _Parser(tokens, kind, values, variables, probe).whole()
        except _Skip:
            continue
        except (_Unsupported, ZeroDivisionError, OverflowError, ValueError, TypeError):
            return None
        if not isinstance(value, Fraction) and value.is_finite is not True:
            return None
        if first is None:
            first = value
            continue
        differ = _differ(value, first)
        if differ is None:
            return None
        if differ:
            return True
    return False


def _differ(first: Number, second: Number) -> bool | None:
    """Whether two exact values differ; None when sympy cannot decide it (then nothing is read)."""
    if isinstance(first, Fraction) and isinstance(second, Fraction):
        return first != second
    difference = sympy.simplify(_exact_sympy(first) - _exact_sympy(second))
    zero = difference.is_zero
    return None if zero is None else not zero


def _exact_sympy(value: Number) -> Any:
    if isinstance(value, Fraction):
        return sympy.Rational(value.numerator, value.denominator)
    if isinstance(value, float):
        raise _Unsupported("a floating-point value")
    return value


def _rational(value: Any) -> Number:
    """A sympy result as a Fraction where it is rational (``√4 = 2``), else the exact sympy number."""
    if isinstance(value, Fraction):
        return value
    if value.is_Rational:
        return Fraction(int(value.p), int(value.q))
    return value


def _sign(value: Number) -> int | None:
    """-1, 0 or 1 for an exact value; None when sympy cannot decide it."""
    if isinstance(value, Fraction):
        return (value > 0) - (value < 0)
    if value.is_zero:
        return 0
    if value.is_positive:
        return 1
    if value.is_negative:
        return -1
    return None


def _probe_value(rng: random.Random, type_text: str) -> Fraction | tuple[Fraction, ...]:
    if type_text.startswith("Finset "):
        element = type_text.split()[1]
        size = rng.randint(0, 5)
        return tuple(sorted({_number(rng, element) for _ in range(size)}))
    return _number(rng, type_text)


def _number(rng: random.Random, type_text: str) -> Fraction:
    # 0 is not probed: an expression that varies is not constant away from 0 (``x / x``)
    magnitude = rng.randint(1, 40) if rng.random() < 0.6 else rng.randint(41, 10**6)
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
        raise _Skip  # Lean's x / 0 = 0 would make ``x / x`` look dependent: such a probe says nothing
    if kind == "ℕ":
        return Fraction(int(a) // int(b))
    if kind == "ℤ":  # Euclidean: the remainder is never negative
        q = int(a) // int(b) if b > 0 else -(int(a) // -int(b))
        return Fraction(q)
    return a / b


def _lean_mod(a: Fraction, b: Fraction, kind: str) -> Fraction:
    if kind not in ("ℕ", "ℤ"):
        raise _Unsupported("% outside ℕ/ℤ")
    if b == 0:
        raise _Skip
    return a - b * _lean_div(a, b, kind)


def _factorial(value: Fraction) -> Fraction:
    if value.denominator != 1 or value < 0:
        raise _Unsupported("factorial of a non-natural")
    if value > _MAX_FACTORIAL:
        raise _Skip
    result = 1
    for factor in range(2, int(value) + 1):
        result *= factor
    return Fraction(result)


def _power(base: Number, exponent: Number, kind: str) -> Number:
    if not isinstance(exponent, Fraction) or exponent.denominator != 1:
        return _real_power(base, exponent, kind)
    if abs(exponent) > _MAX_EXPONENT:
        raise _Skip
    if not isinstance(base, Fraction):
        sign = _sign(base)
        if sign is None:
            raise _Unsupported("a base sympy cannot decide is zero or not")
        return Fraction(0) if sign == 0 and exponent < 0 else _rational(base ** int(exponent))
    if exponent < 0:
        return Fraction(0) if base == 0 else base ** int(exponent)
    return base ** int(exponent)


def _real_power(base: Number, exponent: Number, kind: str) -> Number:
    """Mathlib's ``Real.rpow`` for a base > 0 (exactly); ``0 ^ y`` and a negative base follow conventions
    (``0 ^ y = 0``, ``x ^ y = exp (log |x| * y) * cos (y * π)``): such a probe is skipped."""
    if kind != "ℝ":
        raise _Unsupported("a real exponent outside ℝ")
    sign = _sign(base)
    if sign is None:
        raise _Unsupported("a base sympy cannot decide the sign of")
    if sign <= 0:
        raise _Skip
    return _rational(sympy.Pow(_exact_sympy(base), _exact_sympy(exponent)))


def _exact_root(value: Fraction) -> Fraction | None:
    if value < 0:
        return Fraction(0)
    top, bottom = math.isqrt(value.numerator), math.isqrt(value.denominator)
    return Fraction(top, bottom) if top * top == value.numerator and bottom * bottom == value.denominator else None


def _sqrt(value: Number) -> Number:
    sign = _sign(value)
    if sign is None:
        raise _Unsupported("a root of a value sympy cannot decide the sign of")
    if sign < 0:
        raise _Skip  # Real.sqrt of a negative number is 0 by convention: no evidence of dependence
    if isinstance(value, Fraction):
        root = _exact_root(value)
        if root is not None:
            return root
    return _rational(sympy.sqrt(_exact_sympy(value)))


def _log(value: Number) -> Number:
    sign = _sign(value)
    if sign is None:
        raise _Unsupported("a logarithm of a value sympy cannot decide the sign of")
    if sign <= 0:
        raise _Skip  # Real.log 0 = 0 and Real.log x = Real.log |x|: conventions, not the function's shape
    return _rational(sympy.log(_exact_sympy(value)))


def _exp(value: Number) -> Number:
    return _rational(sympy.exp(_exact_sympy(value)))


def _whole(value: Number) -> int:
    if not isinstance(value, Fraction):
        floor = sympy.floor(value)
        if not floor.is_Integer:
            raise _Unsupported("a floor sympy cannot decide")
        return int(floor)
    return math.floor(value)


# name -> (argument types, None: the equation's own type; result type, None: the argument's type; function)
_LIBRARY: dict[str, tuple[tuple[str | None, ...], str | None, Callable[..., Number]]] = {
    "abs": ((None,), None, lambda x: abs(x)),
    "Int.floor": (("ℝ",), "ℤ", lambda x: Fraction(_whole(x))),
    "Int.ceil": (("ℝ",), "ℤ", lambda x: Fraction(-_whole(-x))),
    "Nat.floor": (("ℝ",), "ℕ", lambda x: Fraction(max(_whole(x), 0))),
    "Int.natAbs": (("ℤ",), "ℕ", lambda x: abs(x)),
    "Int.toNat": (("ℤ",), "ℕ", lambda x: max(x, Fraction(0))),
    "Nat.gcd": (("ℕ", "ℕ"), "ℕ", lambda a, b: Fraction(math.gcd(int(a), int(b)))),
    "Nat.lcm": (("ℕ", "ℕ"), "ℕ", lambda a, b: Fraction(math.lcm(int(a), int(b)))),
    "Nat.factorial": (("ℕ",), "ℕ", lambda x: _factorial(Fraction(x))),
    "Real.sqrt": (("ℝ",), "ℝ", _sqrt),
    "Real.log": (("ℝ",), "ℝ", _log),
    "Real.exp": (("ℝ",), "ℝ", _exp),
}
_LIBRARY["√"] = _LIBRARY["Real.sqrt"]
_BRACKETS = {"⌊": ("⌋", "Int.floor"), "⌈": ("⌉", "Int.ceil")}
_TOWER = ("ℕ", "ℤ", "ℚ", "ℝ", "ℂ")


_BINARY: dict[str, tuple[int, bool]] = {"+": (65, False), "-": (65, False), "*": (70, False), "/": (70, False)}
_BINARY |= {"%": (70, False), "^": (75, True)}


class _Parser:
    """A precedence-climbing evaluator of the left sides the answer shape lets through."""

    def __init__(
        self,
        tokens: list[tuple[Token, str | None]],
        kind: str,
        values: dict[str, Fraction | tuple[Fraction, ...]],
        variables: dict[str, str],
        probe: int,
    ) -> None:
        self.tokens, self.kind, self.values, self.variables, self.probe = tokens, kind, values, variables, probe
        self.index = 0

    def whole(self) -> Number:
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

    def expression(self, floor: int, kind: str) -> Number:
        left = self.prefix(kind)
        while True:
            operator = self.peek()
            if self.index < len(self.tokens) and self.tokens[self.index][0].kind == Kind.symbol and operator == "!":
                self.take()
                if kind != "ℕ":
                    raise _Unsupported("factorial outside ℕ")
                left = _factorial(_exact(left))
                continue
            if operator not in _BINARY:
                return left
            precedence, right_assoc = _BINARY[operator]
            if precedence < floor:
                return left
            self.take()
            # rightact%: an exponent is read at its own type (ℕ unless ascribed), not the equation's
            exponent = self._natural_type() if operator == "^" else kind
            right = self.expression(precedence if right_assoc else precedence + 1, exponent)
            left = self.apply(operator, left, right, kind)
            if isinstance(left, Fraction) and left.numerator.bit_length() + left.denominator.bit_length() > _MAX_BITS:
                raise _Skip

    def apply(self, operator: str, left: Number, right: Number, kind: str) -> Number:
        if operator == "^":
            return _power(left, right, kind)
        if not isinstance(left, Fraction) or not isinstance(right, Fraction):
            if kind not in ("ℝ", "ℂ") or operator == "%":
                raise _Unsupported("an irrational value outside ℝ")
            a, b = _exact_sympy(left), _exact_sympy(right)
            if operator == "/":
                sign = _sign(right)
                if sign is None:
                    raise _Unsupported("a divisor sympy cannot decide is zero or not")
                if sign == 0:
                    raise _Skip
            exact = {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: a / b}
            return _rational(exact[operator]())
        operations: dict[str, Callable[[], Fraction]] = {
            "+": lambda: left + right,
            "-": lambda: max(left - right, Fraction(0)) if kind == "ℕ" else left - right,
            "*": lambda: left * right,
            "/": lambda: _lean_div(left, right, kind),
            "%": lambda: _lean_mod(left, right, kind),
        }
        return operations[operator]()

    def prefix(self, kind: str) -> Number:
        if self.peek() == "-":
            self.take()
            value = self.expression(75, kind)
            if kind == "ℕ":
                raise _Unsupported("negation in ℕ")
            return -value
        if self.peek() == "↑":
            self.take()
            return self.atom(self._natural_type())  # the cast keeps the value read at the operand's own type
        if self.peek() == "√":
            self.take()
            return _sqrt(self.expression(100, "ℝ"))
        return self.atom(kind)

    def atom(self, kind: str) -> Number:
        if self.index >= len(self.tokens):
            raise _Unsupported("unexpected end")
        token, let_type = self.tokens[self.index]
        if token.kind == Kind.number:
            self.take()
            return self.number(token.text, kind)
        if token.kind == Kind.identifier:
            if token.name in _LIBRARY:
                return self.library(kind)
            if token.name == "Finset.card":
                self.take()
                return Fraction(len(self.finite_set()))
            head, _, field = token.name.rpartition(".")
            if field == "card" and self.variables.get(head, "").startswith("Finset "):
                self.take()
                return Fraction(len(self._set_value(head)))
            return self.variable()
        if token.text in ("∑", "∏"):
            return self.big_operator(kind)
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
            inside = self.expression(0, kind)
            self.take("|")
            sign = _sign(inside)
            if sign is None:
                raise _Unsupported("an absolute value sympy cannot decide the sign of")
            return -inside if sign < 0 else inside
        if token.text in _BRACKETS:
            closing, name = _BRACKETS[token.text]
            self.take()
            value = self.expression(0, "ℝ")
            self.take(closing)
            return _LIBRARY[name][2](value)
        raise _Unsupported(f"token {token.text!r}")

    def big_operator(self, kind: str) -> Number:
        """``∑ x in s, body`` / ``∏``: the body (Mathlib's ``term:67``) over the elements of a finite set."""
        operator = self.take().text
        bound = self.take()
        if bound.kind != Kind.identifier or self.take().text not in ("in", "∈"):
            raise _Unsupported("a big operator over anything but `x in s`")
        elements = self.finite_set()
        self.take(",")
        start, saved = self.index, self.values.get(bound.name)
        total: Number = Fraction(0 if operator == "∑" else 1)
        end = None
        for element in elements or (Fraction(0),):
            self.index = start
            self.values[bound.name] = element
            term = self.expression(67, kind)
            end = self.index
            if elements:
                total = self.apply("+" if operator == "∑" else "*", total, term, kind)
        if saved is None:
            self.values.pop(bound.name, None)
        else:
            self.values[bound.name] = saved
        assert end is not None
        self.index = end
        return total

    def finite_set(self) -> tuple[Fraction, ...]:
        """A ``Finset`` variable, ``Finset.range n`` or ``Finset.Icc a b`` (bounds evaluated, at most 10⁴ elements)."""
        token = self.take()
        if token.kind == Kind.identifier and self.variables.get(token.name, "").startswith("Finset "):
            return self._set_value(token.name)
        if token.kind == Kind.identifier and token.name in ("Finset.range", "Finset.Icc"):
            bounds = [_exact(self.atom("ℕ")) for _ in range(1 if token.name == "Finset.range" else 2)]
            low, high = (Fraction(0), bounds[0] - 1) if token.name == "Finset.range" else (bounds[0], bounds[1])
            if high - low > 10_000:
                raise _Skip
            return tuple(Fraction(n) for n in range(int(low), int(high) + 1))
        if token.text == "(":
            inner = self.finite_set()
            self.take(")")
            return inner
        raise _Unsupported(f"a finite set {token.text!r}")

    def _set_value(self, name: str) -> tuple[Fraction, ...]:
        value = self.values.get(name)
        if not isinstance(value, tuple):
            raise _Unsupported(f"{name!r} is not a finite set")
        return value

    def library(self, kind: str) -> Number:
        """A library function applied to its arguments (each an atom), read at the function's types."""
        parameters, _, function = _LIBRARY[self.take().name]
        arguments = [self.atom(parameter or kind) for parameter in parameters]
        return function(*arguments)

    def _natural_type(self) -> str:
        """The type the operand of ``↑`` has on its own: its variables' largest type, ℕ for numerals."""
        token = self.tokens[self.index][0] if self.index < len(self.tokens) else None
        if token is None:
            raise _Unsupported("↑ at the end")
        if token.kind == Kind.identifier:
            type_text = self.variables.get(token.name)
            if type_text is None:
                raise _Unsupported(f"↑ of {token.text!r}")
            return type_text.split(" → ")[-1]
        if token.text != "(":
            return "ℕ"
        depth, found = 0, []
        for index in range(self.index, len(self.tokens)):
            text = self.tokens[index][0]
            depth += text.text == "("
            depth -= text.text == ")"
            if text.kind == Kind.identifier:
                named = self.variables.get(text.name) or CANONICAL_TYPE.get(text.name)
                if named is None:
                    raise _Unsupported(f"↑ of a term with {text.text!r}")
                found.append(named.split(" → ")[-1])
            if depth == 0:
                break
        return max(found, key=_TOWER.index, default="ℕ")

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
        read = number_value(text)
        if read is None:
            raise _Unsupported(f"numeral {text!r}")
        value, scientific = read
        if scientific and kind not in ("ℚ", "ℝ", "ℂ"):
            raise _Unsupported(f"numeral {text!r} in {kind}")
        return value

    def variable(self) -> Number:
        token = self.take()
        name = token.name
        if name in self.values:
            value = self.values[name]
            if isinstance(value, tuple):
                raise _Unsupported(f"the finite set {name!r} as a number")
            return value
        type_text = self.variables.get(name)
        if type_text is None or type_text.startswith("Finset "):
            raise _Unsupported(f"identifier {name!r}")
        *argument_types, result_type = type_text.split(" → ")
        arguments = [_exact(self.argument(argument_type)) for argument_type in argument_types]
        return _table_value(self.probe, name, arguments, result_type)

    def argument(self, kind: str) -> Number:
        """One argument of an application: a numeral, a variable, or a bracketed term."""
        token = self.tokens[self.index][0] if self.index < len(self.tokens) else None
        if token is None:
            raise _Unsupported("missing argument")
        value = self.values.get(token.name) if token.kind == Kind.identifier else None
        if isinstance(value, Fraction):
            self.take()
            return value
        if token.kind == Kind.number or token.text in ("(", "|"):
            return self.atom(kind)
        raise _Unsupported(f"argument {token.text!r}")


def _exact(value: Number) -> Fraction:
    if not isinstance(value, Fraction):
        raise _Unsupported("an irrational value where an exact one is needed")
    return value
