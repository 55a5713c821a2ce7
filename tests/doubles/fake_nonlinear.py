"""What the fake REPL models of ``nlinarith`` and ``positivity`` (the non-linear vacuity checks of issue 29).

One job: decide, for :mod:`tests.doubles.fake_semantics`, whether these tactics derive ``False`` from a
statement's hypotheses, as an under-approximation of Mathlib's (``Mathlib/Tactic/Linarith/Frontend.lean``,
``nlinarith`` preprocessing: the hint terms are added as facts, then the products of every pair of
hypotheses and hints, then Positivstellensatz-style linear arithmetic with each monomial an atom).

- Facts are the hypotheses ``p = q``, ``p ≤ q``, ``p < q`` (and ``≥ >``) whose sides are polynomials over
  the variables (``+ - *``, ``^`` by a numeral, ``/`` by a numeral over ℚ ℝ; ℕ's truncated ``-`` and
  floor ``/`` are not polynomials and leave the fact out), ``0 ≤ x`` for every ℕ variable, and the hints
  ``sq_nonneg t`` (``t ^ 2 ≥ 0``).
- A contradiction is a linear combination, non-negative on inequalities, that is identically a negative
  constant (or zero with a strict fact): found with ``scipy.optimize.linprog``, then checked again in
  exact rationals, so a floating-point artefact never proves anything.
- ``have h : 0 ≤ (L) := by positivity`` holds when L is built from non-negative numerals, ℕ variables,
  even powers, and sums, products and quotients of non-negative terms; ``linarith`` then runs with it.

Everything else is not proved (the fake answers an error): real ``nlinarith`` is stronger (it also
multiplies hypotheses with the goal's negation, and squares atoms), the test worlds stay inside this.
"""

from __future__ import annotations

from fractions import Fraction
from itertools import combinations_with_replacement
from typing import Any

Node = tuple[Any, ...]
Monomial = tuple[str, ...]  # sorted variable names, repeated by degree; () is the constant
Polynomial = dict[Monomial, Fraction]
_MAX_DEGREE = 4
_MAX_FACTS = 40


class NotPolynomial(Exception):
    pass


def polynomial(node: Node, kind: int, env: dict[str, Fraction]) -> Polynomial:
    """``node`` as a polynomial at type ``kind`` (0 ℕ, 1 ℤ, 2 ℚ, 3 ℝ), or NotPolynomial."""
    tag = node[0]
    if tag == "num":
        return {(): Fraction(node[1])}
    if tag == "var":
        name = node[1]
        return {(): env[name]} if name in env else {(name,): Fraction(1)}
    if tag in ("coe",):
        return polynomial(node[1], kind, env)
    if tag == "cast":
        return polynomial(node[2], int(node[1]), env)
    if tag == "neg":
        if kind == 0:
            raise NotPolynomial("negation in ℕ")
        return {m: -c for m, c in polynomial(node[1], kind, env).items()}
    if tag != "bin":
        raise NotPolynomial(tag)
    op, left, right = node[1], polynomial(node[2], kind, env), polynomial(node[3], kind, env)
    if op == "+":
        return _add(left, right, 1)
    if op == "-":
        if kind == 0:
            raise NotPolynomial("truncated subtraction")
        return _add(left, right, -1)
    if op == "*":
        return _multiply(left, right)
    if op == "^":
        if set(right) != {()} or right[()].denominator != 1 or not 0 <= right[()] <= _MAX_DEGREE:
            raise NotPolynomial("exponent")
        result: Polynomial = {(): Fraction(1)}
        for _ in range(int(right[()])):
            result = _multiply(result, left)
        return result
    if op == "/" and kind >= 2 and set(right) == {()} and right[()] != 0:
        return {m: c / right[()] for m, c in left.items()}
    raise NotPolynomial(op)


def _add(left: Polynomial, right: Polynomial, sign: int) -> Polynomial:
    out = dict(left)
    for monomial, coefficient in right.items():
        out[monomial] = out.get(monomial, Fraction(0)) + sign * coefficient
    return {m: c for m, c in out.items() if c != 0}


def _multiply(left: Polynomial, right: Polynomial) -> Polynomial:
    out: Polynomial = {}
    for a, x in left.items():
        for b, y in right.items():
            monomial = tuple(sorted(a + b))
            if len(monomial) > 2 * _MAX_DEGREE:
                raise NotPolynomial("degree")
            out[monomial] = out.get(monomial, Fraction(0)) + x * y
    return {m: c for m, c in out.items() if c != 0}


Fact = tuple[Polynomial, str]  # p ≥ 0, p > 0 or p = 0


def facts_of(node: Node, kind_of: Any, env: dict[str, Fraction]) -> list[Fact]:
    """The polynomial facts a hypothesis gives (``∧`` split); none for anything else."""
    if node[0] == "and":
        return facts_of(node[1], kind_of, env) + facts_of(node[2], kind_of, env)
    if node[0] != "rel" or node[1] == "≠":
        return []
    kind = kind_of(node)
    try:
        difference = _add(polynomial(node[2], kind, env), polynomial(node[3], kind, env), -1)
    except NotPolynomial:
        return []
    op = node[1]
    if op in ("≤", "<"):
        return [({m: -c for m, c in difference.items()}, "≥" if op == "≤" else ">")]
    return [(difference, {"=": "=", "≥": "≥", ">": ">"}[op])]


def contradiction(facts: list[Fact]) -> bool:
    """Whether a non-negative combination of the facts and their pairwise products is a negative constant."""
    facts = facts[:_MAX_FACTS]
    products: list[Fact] = list(facts)
    for (p, r), (q, s) in combinations_with_replacement(facts, 2):
        try:
            product = _multiply(p, q)
        except NotPolynomial:
            continue
        relation = "=" if "=" in (r, s) else ">" if r == s == ">" else "≥"
        products.append((product, relation))
    return _certificate(products, strict=False) or _certificate(products, strict=True)


def _certificate(facts: list[Fact], *, strict: bool) -> bool:
    """Solve for multipliers; True only when the rounded multipliers check out exactly."""
    from scipy.optimize import linprog

    monomials = sorted({m for p, _ in facts for m in p})
    if not facts or not monomials:
        return False
    # Σ λ_i p_i = -1 (not strict) or Σ λ_i p_i = 0 with Σ_strict λ_i = 1 (strict)
    rows = [[float(p.get(m, 0)) for p, _ in facts] for m in monomials]
    target = [(-1.0 if m == () and not strict else 0.0) for m in monomials]
    if strict:
        if not any(r == ">" for _, r in facts):
            return False
        rows.append([1.0 if r == ">" else 0.0 for _, r in facts])
        target.append(1.0)
    bounds = [(None, None) if r == "=" else (0, None) for _, r in facts]
    try:
        solved = linprog([0.0] * len(facts), A_eq=rows, b_eq=target, bounds=bounds, method="highs")
    except ValueError:
        return False
    if solved.status != 0:
        return False
    multipliers = [Fraction(value).limit_denominator(10**6) for value in solved.x]
    if any(m < 0 for m, (_, r) in zip(multipliers, facts, strict=True) if r != "="):
        return False
    total: Polynomial = {}
    for multiplier, (p, _) in zip(multipliers, facts, strict=True):
        total = _add(total, {m: c * multiplier for m, c in p.items()}, 1)
    if strict:
        strict_weight = sum(m for m, (_, r) in zip(multipliers, facts, strict=True) if r == ">")
        return not total and strict_weight > 0
    return set(total) <= {()} and total.get((), Fraction(0)) < 0


def hint_facts(hints: list[Node], kind: int, env: dict[str, Fraction]) -> list[Fact]:
    """``sq_nonneg t``: ``t ^ 2 ≥ 0``."""
    out = []
    for term in hints:
        try:
            base = polynomial(term, kind, env)
        except NotPolynomial:
            continue
        out.append((_multiply(base, base), "≥"))
    return out


def nonnegative(node: Node, types: dict[str, int]) -> bool:
    """What ``positivity`` shows ``0 ≤`` of, as modelled (see the module docstring)."""
    tag = node[0]
    if tag == "num":
        return Fraction(node[1]) >= 0
    if tag == "var":
        return types.get(node[1], 0) == 0
    if tag in ("coe", "cast"):
        return nonnegative(node[-1], types)
    if tag != "bin":
        return False
    op, left, right = node[1], node[2], node[3]
    if op == "^":
        even = right[0] == "num" and Fraction(right[1]).denominator == 1 and int(Fraction(right[1])) % 2 == 0
        return even or nonnegative(left, types)
    if op == "*" and left == right:
        return True
    if op in ("+", "*", "/"):
        return nonnegative(left, types) and nonnegative(right, types)
    return False
