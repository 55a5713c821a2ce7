"""What the fake REPL knows of Lean's semantics: whether real Lean would accept a command, where it can tell.

One job: :mod:`repro.lean.fake_repl` asks it about every command that is neither ``sorry`` nor one of
the protocol's own (bridge, ``#print axioms``), and it answers accepted, refused (with the error real
Lean gives) or cannot judge. The fake REPL answers "cannot judge" as the real REPL answers a proof it
refuses, an error message, so nothing outside the model is ever reported as a success: the fake
claims a success only where it has followed the proof. It reads two kinds of command:

- **Our trusted statement checks** (:mod:`repro.lean.statement_checks`: vacuity, satisfiability,
  refutation, witness), decided per tactic on the statement's arithmetic (:func:`judge_check`).
- **A prover's theorem** (:func:`judge_theorem`): accepted only when the fake has established its
  statement true: the conclusion evaluates to true at the values the hypotheses and ``let``s pin while
  every hypothesis holds there, or the modelled ``omega``/``linarith`` derive it from the hypotheses.
  Refused where real Lean refuses: a statement false at its pinned values (whatever the proof), a proof
  that starts from ``False`` (``exact absurd h (by decide +kernel)``, ``exfalso``) while the hypotheses
  hold together at the pinned values (no proof of ``False`` exists then), an unknown hypothesis name,
  a tactic block with no closing tactic, ``Or.inl``/``trivial`` against another goal, pinned values the
  proof never reads. Everything else cannot be judged. The fake does not check proof terms: a true
  statement with a proof of a plausible shape is accepted (the limit of a fake, documented here).

The fragment: variables of type ℕ/ℤ/ℚ/ℝ (ℝ computed exactly, as ℚ), hypotheses that are ``∧``/``∨``/``¬``
of ``= ≠ < ≤ > ≥`` (and ``∈`` a set literal ``({a, b} : Set T)``) between terms built from numerals,
variables, ``+ - * / % ^``, ``↑x`` and ascriptions ``(e : T)``; a conclusion with leading ``let`` (its
value elaborated at its declared type), ``∀`` binders, ``→`` premises and an optional ``∃`` (a prover's
theorem: ``let`` and ``have`` only). Terms take the largest type among their leaves (Lean's ``binop%``),
with Lean's ℕ semantics (truncated ``-``, floor ``/``, ``x / 0 = 0``) and Euclidean ``/`` on ℤ.

Tactic semantics (documented as modelled, an under-approximation of real Lean):

- ``omega``: hypotheses over ℕ/ℤ only, linear (a product needs a numeral side; ``/``, ``%`` and
  truncated ``-`` only between numerals); ℚ/ℝ facts are ignored and a ℚ/ℝ goal fails, like real omega.
  Decided by Gaussian elimination on equations (unit coefficients), integer bounds per variable.
- ``linarith``: linear facts of every type, rational relaxation (no integer rounding), goals
  ``= < ≤ > ≥`` or ``False`` only (never ``≠``, ``∧``, ``¬``).
- ``norm_num``: evaluates a goal with no free variable (every type); ``norm_num at *`` closes ``False``
  when some hypothesis with no free variable evaluates to false. Never uses other hypotheses.
- ``simp``/``simp_all``: ℕ/ℤ numerals only; ``simp_all`` first rewrites with hypotheses ``x = closed``.
- ``decide``: a goal with no free variable over ℕ/ℤ; never a hypothesis, never ℚ/ℝ.
- ``nlinarith [sq_nonneg ...]`` and ``positivity`` (``False`` only): :mod:`repro.lean.fake_nonlinear`.
- Variables bound by ``let`` are opaque after ``intros`` (no ``zetaDelta``); ``let`` inside a term
  (the refutation's instantiated conclusion) is unfolded.

Not modelled (the fake answers an error, so nothing is wrongly "proved"): functions, sets beyond a
literal's membership, ``Finset`` sums, ``IsLeast``, ``∣``, reals beyond exact arithmetic, instance and
implicit binders in pinned applications, and proof terms. Real omega/linarith are stronger than this
(Fourier-Motzkin over several variables); the test worlds stay inside what is modelled. It is a fake:
nothing it says is a verdict.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from fractions import Fraction
from typing import Any

from repro.lean.text.lexer import Kind, Token, lex, significant
from repro.lean.text.statement import StatementError, depths, read_statement

Node = tuple[Any, ...]
_TYPES = {"ℕ": 0, "Nat": 0, "ℤ": 1, "Int": 1, "ℚ": 2, "Rat": 2, "ℝ": 3, "Real": 3}
_RELATIONS = {"=", "≠", "<", "≤", ">", "≥"}
_FLIP = {"<": ">", "≤": "≥", ">": "<", "≥": "≤", "=": "=", "≠": "≠"}
_NEGATE = {"<": "≥", "≤": ">", ">": "≤", "≥": "<", "=": "≠", "≠": "="}

_VACUITY = re.compile(r"^example : type_of% @(\S+) := by\n(?:  intro [^\n]+\n)?  intros\n  exfalso\n  (.+)$", re.DOTALL)
_POSITIVITY = re.compile(r"^have hrepro_pos : 0 ≤ \((.+)\) := by positivity\n  linarith$", re.DOTALL)
_SATISFIABILITY = re.compile(r"^example := @(\S+)(?: (.*))?$", re.DOTALL)
_REFUTE_DIRECT = re.compile(r"^example : ¬ type_of% @(\S+) := by\n  (.+)$", re.DOTALL)
_REFUTE_PINNED = re.compile(r"^example : ¬ type_of% @(\S+) := fun h => absurd \(h (.*)\) \(by (.+)\)$", re.DOTALL)
_UNIQUE = re.compile(r"^example((?: .*?)?) :\n    (∀ .*) := by\n  intros\n  (\S+)$", re.DOTALL)
_WITNESS = re.compile(r"^example : type_of% @(\S+) := by\n  intros\n  exact ⟨(.*), by (.+)⟩$", re.DOTALL)
_DISCHARGE = "first | (norm_num <;> done) | decide"


class Unmodelled(Exception):
    """The command is outside the fragment: the fake answers an error (never a success)."""


# -- parsing --------------------------------------------------------------------------------------------


class _Parser:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.index = 0

    def peek(self) -> str | None:
        return self.tokens[self.index].text if self.index < len(self.tokens) else None

    def take(self, expected: str | None = None) -> Token:
        if self.index >= len(self.tokens):
            raise Unmodelled("unexpected end")
        token = self.tokens[self.index]
        if expected is not None and token.text != expected:
            raise Unmodelled(f"expected {expected!r}, found {token.text!r}")
        self.index += 1
        return token

    def done(self) -> bool:
        return self.index >= len(self.tokens)

    def proposition(self, level: int = 0) -> Node:
        left = self.prop_atom()
        while True:
            op = self.peek()
            if op == "∨" and level <= 30:
                self.take()
                left = ("or", left, self.proposition(30))
            elif op == "∧" and level <= 35:
                self.take()
                left = ("and", left, self.proposition(35))
            else:
                return left

    def prop_atom(self) -> Node:
        text = self.peek()
        if text == "¬":
            self.take()
            return ("not", self.prop_atom())
        if text in ("True", "False"):
            self.take()
            return ("const", text == "True")
        if text == "(":
            saved = self.index
            try:
                self.take("(")
                inner = self.proposition()
                self.take(")")
                if self.peek() not in _RELATIONS and self.peek() not in ("+", "-", "*", "/", "%", "^"):
                    return inner
            except Unmodelled:
                pass
            self.index = saved
        left = self.term()
        op = self.take().text
        if op == "∈":
            return self.membership(left)
        if op not in _RELATIONS:
            raise Unmodelled(f"not a relation: {op!r}")
        return ("rel", op, left, self.term())

    def membership(self, element: Node) -> Node:
        """``e ∈ ({a, b} : Set T)`` (or ``{a, b}``): Mathlib's ``Set.mem_insert_iff``, a disjunction of equations."""
        wrapped = self.peek() == "("
        if wrapped:
            self.take("(")
        self.take("{")
        members = [self.term()]
        while self.peek() == ",":
            self.take()
            members.append(self.term())
        self.take("}")
        kind: int | None = None
        if wrapped:
            if self.peek() == ":":
                self.take()
                self.take("Set")
                named = self.take().text
                if named not in _TYPES:
                    raise Unmodelled(f"Set {named}")
                kind = _TYPES[named]
            self.take(")")
        node: Node | None = None
        for member in members:
            equation = ("rel", "=", element, member if kind is None else ("cast", kind, member))
            node = equation if node is None else ("or", node, equation)
        assert node is not None
        return node

    def term(self, level: int = 0) -> Node:
        left = self.unary()
        while True:
            op = self.peek()
            power = {"+": 65, "-": 65, "*": 70, "/": 70, "%": 70, "^": 75}.get(op or "")
            if power is None or power < level:
                return left
            self.take()
            right = self.term(power if op == "^" else power + 1)
            left = ("bin", op, left, right)

    def unary(self) -> Node:
        text = self.peek()
        if text == "-":
            self.take()
            return ("neg", self.term(75))
        if text == "↑":
            self.take()
            return ("coe", self.unary())
        token = self.take()
        if token.kind == Kind.number:
            return ("num", Fraction(token.text), "." in token.text)
        if token.kind == Kind.identifier and token.text not in _TYPES:
            return ("var", token.text)
        if token.text == "(":
            inner = self.term()
            if self.peek() == ":":
                self.take()
                kind = self.take().text
                if kind not in _TYPES:
                    raise Unmodelled(f"type {kind!r}")
                self.take(")")
                return ("cast", _TYPES[kind], inner)
            self.take(")")
            return inner
        raise Unmodelled(f"term {token.text!r}")


def parse_proposition(text: str) -> Node:
    parser = _Parser(significant(lex(text)))
    node = parser.proposition()
    if not parser.done():
        raise Unmodelled(f"trailing {parser.peek()!r}")
    return node


def parse_term(text: str) -> Node:
    parser = _Parser(significant(lex(text)))
    node = parser.term()
    if not parser.done():
        raise Unmodelled(f"trailing {parser.peek()!r}")
    return node


# -- the statement as Lean elaborates it (in the fragment) ----------------------------------------------


@dataclass
class World:
    types: dict[str, int] = field(default_factory=dict)  # variable -> 0 ℕ, 1 ℤ, 2 ℚ, 3 ℝ
    arguments: list[tuple[str, str]] = field(default_factory=list)  # ("variable"|"hypothesis", name) in order
    hypotheses: dict[str, Node] = field(default_factory=dict)
    haves: dict[str, Node] = field(default_factory=dict)  # the conclusion's leading ``have`` facts (proved there)
    lets: dict[str, Node] = field(default_factory=dict)
    premises: list[Node] = field(default_factory=list)  # the conclusion's own → premises
    bound: list[str] = field(default_factory=list)  # the conclusion's ∀ variables
    exists: list[str] = field(default_factory=list)  # the final ∃ variables
    final: Node = ("const", True)


def read_world(statement: str) -> World:
    try:
        parsed = read_statement(statement)
    except StatementError as error:
        raise Unmodelled(str(error)) from error
    world = World()
    for group in parsed.binders:
        tokens = significant(lex(group))
        if tokens[0].text != "(" or ":" not in [t.text for t in tokens]:
            raise Unmodelled(f"binder {group}")
        colon = [t.text for t in tokens].index(":")
        names = [t.text for t in tokens[1:colon]]
        type_text = group[tokens[colon].end : tokens[-1].start].strip()
        if type_text in _TYPES:
            for name in names:
                world.types[name] = _TYPES[type_text]
                world.arguments.append(("variable", name))
        else:
            proposition = parse_proposition(type_text)
            for name in names:
                world.hypotheses[name] = proposition
                world.arguments.append(("hypothesis", name))
    _read_conclusion(world, parsed.conclusion, significant(lex(parsed.conclusion)))
    return world


def _read_conclusion(world: World, text: str, tokens: list[Token]) -> None:
    parser = _Parser(tokens)
    while parser.peek() in ("let", "have"):
        if parser.take().text == "have":
            _read_have(world, text, parser)
            continue
        name = parser.take().text
        if parser.peek() == ":":
            parser.take()
            declared = parser.take().text
            if declared not in _TYPES:
                raise Unmodelled(f"let of type {declared}")
            world.types[name] = _TYPES[declared]  # Lean elaborates the value at the declared type
        parser.take(":=")
        world.lets[name] = parser.term()
        if parser.peek() == ";":
            parser.take()
    while parser.peek() == "∀":
        parser.take()
        names = []
        while parser.peek() not in (":", ",", None):
            names.append(parser.take().text)
        parser.take(":")
        kind = parser.take().text
        if kind not in _TYPES:
            raise Unmodelled(f"∀ over {kind}")
        parser.take(",")
        for name in names:
            world.types[name] = _TYPES[kind]
            world.bound.append(name)
    rest = parser.tokens[parser.index :]
    segments: list[list[Token]] = [[]]
    depth = 0
    for token in rest:
        depth += token.text in ("(", "[", "{")
        depth -= token.text in (")", "]", "}")
        if depth == 0 and token.text in ("→", "->"):
            segments.append([])
        else:
            segments[-1].append(token)
    for segment in segments[:-1]:
        world.premises.append(_parse_tokens(segment))
    last = _Parser(segments[-1])
    if last.peek() == "∃":
        last.take()
        while last.peek() not in (":", ",", None):
            world.exists.append(last.take().text)
        exists_type = 0
        if last.peek() == ":":
            last.take()
            exists_type = _TYPES.get(last.take().text, -1)
            if exists_type < 0:
                raise Unmodelled("∃ type")
        last.take(",")
        for name in world.exists:
            world.types[name] = exists_type
    world.final = last.proposition()
    if not last.done():
        raise Unmodelled(f"trailing {last.peek()!r}")


def _read_have(world: World, text: str, parser: _Parser) -> None:
    """``have NAME : PROP := PROOF`` ending its line (or at ``;``): PROP is a fact from there on.

    The proof term is not read: the fake records the fact and lets Lean's own check of the term stand
    for it (a statement whose ``have`` proof fails does not elaborate, for the fake as for Lean).
    """
    name = parser.take().text
    parser.take(":")
    world.haves[name] = parser.proposition()
    parser.take(":=")
    while not parser.done():
        token = parser.take()
        following = parser.tokens[parser.index] if not parser.done() else None
        if token.text == ";" or (following is not None and "\n" in text[token.end : following.start]):
            break


def _parse_tokens(tokens: list[Token]) -> Node:
    parser = _Parser(tokens)
    node = parser.proposition()
    if not parser.done():
        raise Unmodelled(f"trailing {parser.peek()!r}")
    return node


# -- evaluation -----------------------------------------------------------------------------------------


def _leaf_type(node: Node, types: dict[str, int]) -> int:
    kind = node[0]
    if kind == "var":
        return types.get(node[1], 0)
    if kind == "cast":
        return int(node[1])
    if kind == "num":
        return 2 if node[2] else 0
    if kind == "bin":
        return max(_leaf_type(node[2], types), _leaf_type(node[3], types))
    if kind in ("neg",):
        return _leaf_type(node[1], types)
    return 0  # coercions adapt to the context


def _value(node: Node, kind: int, env: dict[str, Fraction]) -> Fraction | None:
    """The value of a term at type ``kind`` with Lean's semantics; None when a free variable remains."""
    tag = node[0]
    if tag == "num":
        if node[2] and kind < 2:
            raise Unmodelled("decimal literal at ℕ/ℤ")
        return Fraction(node[1])
    if tag == "var":
        return env.get(node[1])
    if tag == "coe":
        return _value(node[1], kind, env)
    if tag == "cast":
        inner = _value(node[2], int(node[1]), env)
        return inner
    if tag == "neg":
        value = _value(node[1], kind, env)
        if value is None:
            return None
        if kind == 0:
            return Fraction(0)
        return -value
    left, right = _value(node[2], kind, env), _value(node[3], kind, env)
    if left is None or right is None:
        return None
    op = node[1]
    if op == "+":
        return left + right
    if op == "*":
        return left * right
    if op == "-":
        return max(left - right, Fraction(0)) if kind == 0 else left - right
    if op == "^":
        if right.denominator != 1 or right < 0:
            raise Unmodelled("exponent")
        return left ** int(right)
    if op == "/":
        if right == 0:
            return Fraction(0)
        if kind >= 2:
            return left / right
        return Fraction(_ediv(int(left), int(right)))
    if op == "%":
        if kind >= 2:
            raise Unmodelled("% on a field")
        if right == 0:
            return left
        return Fraction(int(left) - int(right) * _ediv(int(left), int(right)))
    raise Unmodelled(op)


def _ediv(a: int, b: int) -> int:
    quotient = a // abs(b)
    return quotient if b > 0 else -quotient


def _compare(op: str, left: Fraction, right: Fraction) -> bool:
    return {
        "=": left == right,
        "≠": left != right,
        "<": left < right,
        "≤": left <= right,
        ">": left > right,
        "≥": left >= right,
    }[op]


def truth(node: Node, types: dict[str, int], env: dict[str, Fraction], *, fields: bool = True) -> bool | None:
    """The truth of a proposition with no free variable (None if one remains, or a field when not ``fields``)."""
    tag = node[0]
    if tag == "const":
        return bool(node[1])
    if tag == "not":
        inner = truth(node[1], types, env, fields=fields)
        return None if inner is None else not inner
    if tag in ("and", "or"):
        first, second = truth(node[1], types, env, fields=fields), truth(node[2], types, env, fields=fields)
        if first is None or second is None:
            return None
        return (first and second) if tag == "and" else (first or second)
    kind = max(_leaf_type(node[2], types), _leaf_type(node[3], types))
    if kind >= 2 and not fields:
        return None
    left, right = _value(node[2], kind, env), _value(node[3], kind, env)
    if left is None or right is None:
        return None
    return _compare(node[1], left, right)


# -- linear reasoning -----------------------------------------------------------------------------------

Linear = dict[str, Fraction]  # variable -> coefficient; "" -> constant


def _linear(node: Node, kind: int, env: dict[str, Fraction], *, integer: bool) -> Linear | None:
    closed = _value(node, kind, env) if _free(node, env) == set() else None
    if closed is not None:
        return {"": closed}
    tag = node[0]
    if tag == "var":
        return {node[1]: Fraction(1)}
    if tag in ("coe",):
        return _linear(node[1], kind, env, integer=integer)
    if tag == "cast":
        return _linear(node[2], int(node[1]), env, integer=integer)
    if tag == "neg":
        inner = _linear(node[1], kind, env, integer=integer)
        return None if inner is None or kind == 0 else {k: -v for k, v in inner.items()}
    if tag != "bin":
        return None
    op = node[1]
    left, right = _linear(node[2], kind, env, integer=integer), _linear(node[3], kind, env, integer=integer)
    if left is None or right is None:
        return None
    if op == "+":
        return _add(left, right, 1)
    if op == "-" and kind > 0:
        return _add(left, right, -1)
    if op == "*":
        if set(left) == {""}:
            return {k: v * left[""] for k, v in right.items()}
        if set(right) == {""}:
            return {k: v * right[""] for k, v in left.items()}
    if op == "/" and kind >= 2 and set(right) == {""} and right[""] != 0:
        return {k: v / right[""] for k, v in left.items()}
    return None  # nonlinear, or ℕ/ℤ division/truncated subtraction of a variable


def _free(node: Node, env: dict[str, Fraction]) -> set[str]:
    if node[0] == "var":
        return set() if node[1] in env else {node[1]}
    return set().union(*(_free(part, env) for part in node[1:] if isinstance(part, tuple)))


def _add(left: Linear, right: Linear, sign: int) -> Linear:
    out = dict(left)
    for key, value in right.items():
        out[key] = out.get(key, Fraction(0)) + sign * value
    return {k: v for k, v in out.items() if v != 0 or k == ""}


Constraint = tuple[Linear, str]  # linear form, relation to 0


def _constraints(node: Node, types: dict[str, int], env: dict[str, Fraction], *, integer: bool) -> list[Constraint]:
    """Linear constraints a fact yields (``∧`` split, ``¬`` of a relation flipped); others yield none."""
    tag = node[0]
    if tag == "and":
        return _constraints(node[1], types, env, integer=integer) + _constraints(node[2], types, env, integer=integer)
    if tag == "not" and node[1][0] == "rel":
        return _constraints(("rel", _NEGATE[node[1][1]], node[1][2], node[1][3]), types, env, integer=integer)
    if tag == "const" and node[1] is False:
        return [({"": Fraction(1)}, "=")]
    if tag != "rel":
        return []
    kind = max(_leaf_type(node[2], types), _leaf_type(node[3], types))
    if integer and kind >= 2:
        return []  # omega ignores facts over ℚ/ℝ
    left, right = _linear(node[2], kind, env, integer=integer), _linear(node[3], kind, env, integer=integer)
    if left is None or right is None:
        return []
    form = _add(left, right, -1)
    op = node[1]
    if op in (">", "≥"):
        form, op = {k: -v for k, v in form.items()}, _FLIP[op]
    return [(form, op)]


def unsatisfiable(constraints: list[Constraint], naturals: set[str], *, integer: bool) -> bool:
    """Whether the constraints have no solution (False also when this procedure cannot tell)."""
    work = [(dict(form), op) for form, op in constraints]
    work += [({name: Fraction(-1), "": Fraction(0)}, "≤") for name in naturals]
    for _ in range(50):
        equation = next(
            (
                (form, name)
                for form, op in work
                if op == "="
                for name, coefficient in form.items()
                if name and (not integer or abs(coefficient) == 1 or len([k for k in form if k]) == 1)
            ),
            None,
        )
        if equation is None:
            break
        form, name = equation
        coefficient = form[name]
        solution = {k: -v / coefficient for k, v in form.items() if k != name}
        if integer and len(solution) == 1 and solution.get("", Fraction(0)).denominator != 1:
            return True
        work = [(_substitute(f, name, solution), op) for f, op in work if f is not form]
    lows: dict[str, tuple[Fraction, bool]] = {}  # variable -> (bound, strict)
    highs: dict[str, tuple[Fraction, bool]] = {}
    excluded: dict[str, set[Fraction]] = {}
    for form, op in work:
        names = [k for k in form if k and form[k] != 0]
        constant = form.get("", Fraction(0))
        if not names:
            if not _compare(op, constant, Fraction(0)):
                return True
            continue
        if len(names) != 1:
            continue
        name = names[0]
        point = -constant / form[name]
        if op == "≠":
            excluded.setdefault(name, set()).add(point)
            continue
        if op == "=":
            lows[name] = max(lows.get(name, (point, False)), (point, False))
            highs[name] = min(highs.get(name, (point, False)), (point, False))
            continue
        strict = op == "<"
        if integer:  # x < p is x <= ceil(p) - 1; x > p is x >= floor(p) + 1
            if form[name] > 0:
                point, strict = (Fraction(-((-point) // 1)) - 1 if strict else Fraction(point // 1)), False
            else:
                point, strict = (Fraction(point // 1) + 1 if strict else Fraction(-((-point) // 1))), False
        if form[name] > 0:
            current = highs.get(name)
            if current is None or point < current[0] or (point == current[0] and strict):
                highs[name] = (point, strict)
        else:
            current = lows.get(name)
            if current is None or point > current[0] or (point == current[0] and strict):
                lows[name] = (point, strict)
    for name in set(lows) & set(highs):
        (low, low_strict), (high, high_strict) = lows[name], highs[name]
        if low > high or (low == high and (low_strict or high_strict or low in excluded.get(name, set()))):
            return True
    return False


def _substitute(form: Linear, name: str, solution: Linear) -> Linear:
    if name not in form:
        return form
    coefficient = form[name]
    rest = {k: v for k, v in form.items() if k != name}
    return _add(rest, {k: v * coefficient for k, v in solution.items()}, 1)


# -- tactics --------------------------------------------------------------------------------------------


def proves(tactic: str, goal: Node | None, facts: list[Node], types: dict[str, int], env: dict[str, Fraction]) -> bool:
    """Whether ``tactic`` closes ``goal`` (None: ``False``) from ``facts``, as modelled (see the module doc)."""
    tactic = tactic.strip()
    if tactic == "nlinarith" or tactic.startswith("nlinarith ["):
        return goal is None and _nlinarith(tactic, facts, types, env)
    positivity = _POSITIVITY.match(tactic)
    if positivity is not None:
        from repro.lean.fake_nonlinear import nonnegative

        term = parse_term(positivity.group(1))
        if goal is not None or not nonnegative(term, types):
            return False
        return proves("linarith", None, [*facts, ("rel", "≥", term, ("num", Fraction(0), False))], types, env)
    if tactic == _DISCHARGE:
        return proves("norm_num", goal, facts, types, env) or proves("decide", goal, facts, types, env)
    if tactic == "decide":
        return goal is not None and truth(goal, types, env, fields=False) is True
    if tactic in ("norm_num", "norm_num at *"):
        if goal is not None and truth(goal, types, env) is True:
            return True
        return tactic == "norm_num at *" and any(truth(fact, types, env) is False for fact in facts)
    if tactic in ("simp", "simp_all"):
        env = dict(env)
        if tactic == "simp_all":
            for _ in range(len(facts) + 1):
                for fact in facts:
                    if fact[0] == "rel" and fact[1] == "=" and fact[2][0] == "var" and fact[2][1] not in env:
                        kind = types.get(fact[2][1], 0)
                        value = _value(fact[3], kind, env) if kind < 2 and not _free(fact[3], env) else None
                        if value is not None:
                            env[fact[2][1]] = value
            if any(truth(fact, types, env, fields=False) is False for fact in facts):
                return True
        return goal is not None and truth(goal, types, env, fields=False) is True
    if tactic in ("omega", "linarith"):
        return _arithmetic(tactic, goal, facts, types, env)
    return False


def _nlinarith(tactic: str, facts: list[Node], types: dict[str, int], env: dict[str, Fraction]) -> bool:
    """``nlinarith [hints]`` deriving False (:mod:`repro.lean.fake_nonlinear`)."""
    from repro.lean.fake_nonlinear import contradiction, facts_of, hint_facts

    def kind_of(node: Node) -> int:
        return max(_leaf_type(node[2], types), _leaf_type(node[3], types))

    hints: list[Node] = []
    if tactic.startswith("nlinarith ["):
        for part in _hint_terms(tactic[len("nlinarith [") : -1]):
            if not part.startswith("sq_nonneg "):
                raise Unmodelled(f"hint {part!r}")
            hints.append(parse_term(part[len("sq_nonneg ") :]))
    known: list[tuple[dict[tuple[str, ...], Fraction], str]] = []
    for fact in facts:
        known += facts_of(fact, kind_of, env)
    known += [({(name,): Fraction(1)}, "≥") for name, kind in types.items() if kind == 0 and name not in env]
    kind = max((types.get(name, 0) for name in types), default=0)
    known += hint_facts(hints, kind, env)
    return contradiction(known)


def _hint_terms(text: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        depth += char in "([{"
        depth -= char in ")]}"
        if char == "," and depth == 0:
            parts.append(text[start:index].strip())
            start = index + 1
    parts.append(text[start:].strip())
    return [part for part in parts if part]


def _arithmetic(
    tactic: str, goal: Node | None, facts: list[Node], types: dict[str, int], env: dict[str, Fraction]
) -> bool:
    integer = tactic == "omega"
    naturals = {name for name, kind in types.items() if kind == 0 and name not in env}
    base = [c for fact in facts for c in _constraints(fact, types, env, integer=integer)]
    if goal is None:
        return unsatisfiable(base, naturals, integer=integer)
    if goal[0] == "and" and integer:
        return all(_arithmetic(tactic, part, facts, types, env) for part in goal[1:])
    if goal[0] == "not" and integer:
        return unsatisfiable(base + _constraints(goal[1], types, env, integer=True), naturals, integer=True)
    if goal[0] != "rel":
        return False
    kind = max(_leaf_type(goal[2], types), _leaf_type(goal[3], types))
    if integer and kind >= 2:
        return False
    if not integer and goal[1] == "≠":
        return False
    if not integer and goal[1] == "=":
        return all(_arithmetic(tactic, ("rel", op, goal[2], goal[3]), facts, types, env) for op in ("≤", "≥"))
    negated = _constraints(("rel", _NEGATE[goal[1]], goal[2], goal[3]), types, env, integer=integer)
    if not negated:
        return False
    if len(negated) == 1 and negated[0][1] == "≠":
        form = negated[0][0]  # a ≠ b: a < b or a > b, both must be refuted
        return all(
            unsatisfiable([*base, (f, "<")], naturals, integer=integer)
            for f in (form, {k: -v for k, v in form.items()})
        )
    return unsatisfiable(base + negated, naturals, integer=integer)


# -- the commands -------------------------------------------------------------------------------------


def _arguments(text: str) -> list[str]:
    """Top-level parenthesised arguments, without their outer parentheses."""
    tokens = significant(lex(text))
    out, depth, start = [], 0, 0
    for token in tokens:
        if token.text == "(":
            if depth == 0:
                start = token.end
            depth += 1
        elif token.text == ")":
            depth -= 1
            if depth == 0:
                out.append(text[start : token.start].strip())
        elif depth == 0:
            raise Unmodelled(f"argument {token.text!r}")
    return out


def _instantiate(world: World, arguments: list[str]) -> tuple[dict[str, Fraction], list[str]] | None:
    """Values of the variables given, or None when a hypothesis argument is not discharged; errors raise."""
    if len(arguments) > len(world.arguments):
        raise Unmodelled("function expected: too many arguments")
    env: dict[str, Fraction] = {}
    for (kind, name), argument in zip(world.arguments, arguments, strict=False):
        if kind == "variable":
            if argument.startswith("by "):
                raise Unmodelled("a tactic block where a number is expected")
            value = _value(parse_term(argument), world.types[name], env)
            if value is None:
                raise Unmodelled(f"unknown identifier in {argument!r}")
            env[name] = value
        else:
            if not argument.startswith("by "):
                raise Unmodelled("a number where a proof is expected")
            instance = world.hypotheses[name]
            if not proves(argument[3:], instance, [], world.types, env):
                return None
    return env, [name for (_, name) in world.arguments[len(arguments) :]]


def _with_lets(world: World, env: dict[str, Fraction]) -> dict[str, Fraction]:
    env = dict(env)
    for name, term in world.lets.items():
        kind = world.types.get(name, _leaf_type(term, world.types))  # declared, else the value's own type
        value = _value(term, kind, env)
        if value is not None:
            env[name] = value
            world.types.setdefault(name, kind)
    return env


def judge_check(code: str, declarations: dict[str, str]) -> Judgement | None:
    """The judgement of one of our statement checks; None when ``code`` is not one of them."""
    unique = _UNIQUE.match(code)
    if unique is not None:
        return _judge_unique(*unique.groups())
    for pattern, handler in (
        (_VACUITY, _judge_vacuity),
        (_REFUTE_PINNED, _judge_refute_pinned),
        (_REFUTE_DIRECT, _judge_refute_direct),
        (_WITNESS, _judge_witness),
        (_SATISFIABILITY, _judge_satisfiability),
    ):
        match = pattern.match(code)
        if match is None:
            continue
        statement = declarations.get(match.group(1))
        if statement is None:
            return Judgement(Outcome.refused, f"unknown identifier '{match.group(1)}'")
        try:
            world = read_world(statement)
            if world.haves:
                raise Unmodelled("a conclusion with have")
            accepted, why = handler(world, *match.groups()[1:])
        except Unmodelled as error:
            return Judgement(
                Outcome.cannot_judge, f"fake REPL cannot judge this check (outside the modelled fragment: {error})"
            )
        return _ACCEPTED if accepted else Judgement(Outcome.refused, why)
    return None


def _judge_unique(binders: str, conclusion: str, tactic: str) -> Judgement:
    """Our uniqueness command (:func:`repro.lean.statement_checks.unique_commands`):
    ``∀ x : T, (P₁) → (P₂) → x = (w)`` under the statement's binders, closed by ``intros`` and one tactic.

    Real Lean's ``intros`` puts every binder, hypothesis and the body in the context and the goal is
    ``x = w`` (Lean 4 core ``Lean.Elab.Tactic.evalIntros``); ``omega``/``linarith`` then decide it from that
    context (Mathlib ``Mathlib/Tactic/Linarith/Frontend.lean``: a goal ``a = b`` is two ``≤`` goals; core
    ``omega`` over ℕ ℤ). The fake accepts only where its own modelled ``omega``/``linarith`` derive the goal
    from the facts (:func:`proves`), which are sound: a body that does not pin ``x`` (``n % 7 = 3 ∧ n > 20``,
    ``x ^ 2 = 4``) is refused or cannot be judged, never accepted.
    """
    try:
        world = read_world(f"theorem _unique{binders} : {conclusion} := by sorry")
        if world.haves or world.exists or not world.premises or not world.bound:
            raise Unmodelled("a uniqueness command of another shape")
        final = world.final
        if final[0] != "rel" or final[1] != "=" or final[2][0] != "var" or final[2][1] not in world.bound:
            raise Unmodelled("a uniqueness goal that is not `x = w`")
        facts = [*world.hypotheses.values(), *world.premises]
        accepted = proves(tactic, final, facts, world.types, _with_lets(world, {}))
    except Unmodelled as error:
        return Judgement(
            Outcome.cannot_judge, f"fake REPL cannot judge this check (outside the modelled fragment: {error})"
        )
    return _ACCEPTED if accepted else Judgement(Outcome.refused, f"{tactic} failed to prove the goal")


def _context(world: World) -> list[Node]:
    return [*world.hypotheses.values(), *world.premises]


def _judge_vacuity(world: World, tactic: str) -> tuple[bool, str]:
    types = {k: v for k, v in world.types.items() if k not in world.exists}
    if proves(tactic, None, _context(world), types, {}):
        return True, ""
    return False, f"{tactic.split()[0]} failed to prove False from the hypotheses"


def _judge_satisfiability(world: World, arguments: str | None) -> tuple[bool, str]:
    instantiated = _instantiate(world, _arguments(arguments or ""))
    if instantiated is None:
        return False, "unsolved goals (a hypothesis does not hold at these values)"
    return True, ""


def _judge_refute_direct(world: World, tactic: str) -> tuple[bool, str]:
    if world.arguments or world.bound or world.premises or world.exists:
        return False, f"{tactic} failed (the negated statement has quantifiers)"
    env = _with_lets(world, {})
    if proves(tactic, ("not", world.final), [], world.types, env):
        return True, ""
    return False, f"{tactic} failed"


def _judge_refute_pinned(world: World, arguments: str, tactic: str) -> tuple[bool, str]:
    instantiated = _instantiate(world, _arguments(arguments))
    if instantiated is None:
        return False, "unsolved goals (a hypothesis does not hold at these values)"
    env, missing = instantiated
    if missing or world.bound or world.premises or world.exists:
        return False, f"{tactic} failed (the goal still has quantifiers)"
    if proves(tactic, ("not", world.final), [], world.types, _with_lets(world, env)):
        return True, ""
    return False, f"{tactic} failed"


def _components(text: str) -> list[str]:
    """The comma-separated parts of an anonymous constructor ``⟨(3), (4), by tac⟩`` before its proof.

    Lean flattens ``⟨a, b, h⟩`` against ``∃ x y, P`` to ``⟨a, ⟨b, h⟩⟩`` (Lean 4 core
    ``src/Lean/Elab/BuiltinNotation.lean``, ``elabAnonymousConstructor``: with more arguments than the
    structure has fields, the rest form the last field), so a witness for ``n`` ∃ variables is ``n`` parts,
    in the binder order. Each part is one parenthesised numeral term, as our command writes it.
    """
    tokens = significant(lex(text))
    parts, depth, start = [], 0, 0
    for token in tokens:
        if token.text in ("(", "⟨"):
            depth += 1
        elif token.text in (")", "⟩"):
            depth -= 1
        elif token.text == "," and depth == 0:
            parts.append(text[start : token.start].strip())
            start = token.end
    parts.append(text[start:].strip())
    out = []
    for part in parts:
        inner = _arguments(part)
        if len(inner) != 1:
            raise Unmodelled(f"witness part {part!r}")
        out.append(inner[0])
    return out


def _judge_witness(world: World, witness: str, tactic: str) -> tuple[bool, str]:
    values = _components(witness)
    if len(values) != len(world.exists):
        return False, "invalid constructor ⟨...⟩: wrong number of components"
    env: dict[str, Fraction] = {}
    for name, text in zip(world.exists, values, strict=True):
        value = _value(parse_term(text), world.types[name], {})
        if value is None:
            raise Unmodelled("witness")
        env[name] = value
    if proves(tactic, world.final, _context(world), world.types, env):
        return True, ""
    return False, f"{tactic} failed to prove the goal at the witness"


# -- prover theorems ------------------------------------------------------------------------------------

# names provers give hypotheses: h, h₀, h1, h_1, h_sold, hx, hab' (not words such as ``have``)
_HYPOTHESIS_NAME = re.compile(r"^h(?:[0-9₀-₉'_][\w₀-₉']*|[a-zA-Z]{1,3}[0-9₀-₉']*)?$")
_NOT_HYPOTHESES = frozenset({"have", "haveI", "hint"})
_BINDING_TACTICS = frozenset(
    {"intro", "intros", "rintro", "obtain", "rcases", "have", "haveI", "set", "with", "fun", "λ", "cases'", "case"}
    | {"by_contra", "by_contra!", "induction", "generalize", "choose", "let", "next", "rename_i", "by_cases", "|"}
    | {"interval_cases", "split_ifs", "cases", "match", "rcases", "refine", "exists", "use", "set!"}
)
_BINDING_STOPS = frozenset({":", ":=", "=>", "[", "at", "using", ";", "<;>", "←", "("})
# tactics that read the local context (a goal over hypothesis-pinned variables needs one of them, or a
# hypothesis named)
_CONTEXT_TACTICS = frozenset(
    {"omega", "linarith", "nlinarith", "simp_all", "subst_vars", "aesop", "assumption", "tauto", "positivity"}
    | {"polyrith", "norm_num!", "field_simp", "*"}
)
# tactics that can close a goal (a block with none of them leaves its goal open)
_CLOSERS = frozenset(
    {"norm_num", "simp", "simp_all", "simpa", "rfl", "decide", "omega", "linarith", "nlinarith", "exact"}
    | {"exact_mod_cast", "ring", "ring_nf", "trivial", "positivity", "aesop", "tauto", "assumption", "rw"}
    | {"rwa", "contradiction", "field_simp", "polyrith", "linear_combination", "norm_cast", "apply", "refine"}
    | {"use", "exists", "constructor", "calc", "gcongr", "bound", "native_decide", "infer_instance", "exfalso"}
    | {"nlinarith!", "norm_num1", "simp_arith", "exact?", "apply?", "sorry", "admit", "first", "repeat", "all_goals"}
    | {"any_goals", "induction", "cases", "rcases", "obtain", "interval_cases", "split", "by_cases", "by_contra"}
)
# Ways to close a goal by proving ``False`` first. Where the hypotheses hold together (at the pinned
# values) no proof of ``False`` exists, so a proof that starts this way is refused: real Lean is sound.
# ``exact absurd h (by decide +kernel)`` is the cheat of the last review (the fake once accepted it).
_FROM_FALSE = frozenset({"absurd", "False.elim", "exfalso", "contradiction", "nomatch", "False.rec", "Empty.elim"})
_TERM_TACTICS = frozenset({"exact", "apply", "refine", "refine'", "("})
_CANNOT_JUDGE = "fake REPL cannot judge this proof ({why}); real Lean might accept or refuse it"


class Outcome(StrEnum):
    accepted = "accepted"
    refused = "refused"  # real Lean refuses it: ``message`` is the error it would give
    cannot_judge = "cannot_judge"  # outside what the fake models: answered as an error, never a success


@dataclass(frozen=True)
class Judgement:
    outcome: Outcome
    message: str = ""

    @classmethod
    def cannot(cls, why: str) -> Judgement:
        return cls(Outcome.cannot_judge, _CANNOT_JUDGE.format(why=why))


_ACCEPTED = Judgement(Outcome.accepted)


def judge_theorem(declaration: str) -> Judgement:
    """Whether real Lean accepts this ``theorem NAME SIG := BODY`` command, as far as the fake can tell.

    Accepted only when the statement is in the modelled fragment, its conclusion evaluates to true at
    the values its hypotheses and ``let``s pin (or one modelled tactic closes it, see :func:`proves`),
    and every step of the body is one whose effect the fake models. Refused where real Lean refuses:
    a false pinned statement, an unknown hypothesis name, a tactic block with no closing tactic,
    ``Or.inl``/``trivial`` against another goal, pinned values the proof never reads. Anything else
    cannot be judged.
    """
    tokens = significant(lex(declaration))
    assign = _assign_index(tokens, depths(tokens))
    if assign is None:
        return Judgement.cannot("no ':=' after the signature")
    header, body = declaration[: tokens[assign].start], declaration[tokens[assign].end :]
    try:
        world = read_world(header + " := by sorry")
    except Unmodelled as error:
        return Judgement.cannot(f"a statement outside the modelled fragment: {error}")
    if world.bound or world.premises or world.exists:
        return Judgement.cannot("a conclusion with ∀, → or ∃")
    body_tokens = significant(lex(body))
    refusal = _refusal_by_shape(world, body, body_tokens)
    if refusal is not None:
        return Judgement(Outcome.refused, refusal)
    return _judge_by_values(world, body, body_tokens)


def _refusal_by_shape(world: World, body: str, tokens: list[Token]) -> str | None:
    """What real Lean says about the body whatever the values: unknown names, nothing closing the goal."""
    bound = set(world.hypotheses) | set(world.types) | set(world.lets) | set(world.haves) | _bound_in_body(body, tokens)
    for token in tokens:
        name = token.text
        if token.kind == Kind.identifier and _HYPOTHESIS_NAME.match(name) and name not in _NOT_HYPOTHESES | bound:
            return f"unknown identifier '{name}'"
    if tokens[:1] and tokens[0].text == "by" and not any(t.text in _CLOSERS for t in tokens):
        return "unsolved goals (fake REPL: no tactic of the proof closes the goal)"
    heads = [t.text for t in tokens[:6]]
    final = world.final
    if any(head in ("Or.inl", "Or.inr") for head in heads) and final[0] != "or":
        return "type mismatch (fake REPL: Or.inl/Or.inr proves a disjunction)"
    if heads in (["trivial"], ["by", "exact", "trivial"]) and final != ("const", True):
        return "type mismatch (fake REPL: the term trivial proves True)"
    return None


def _judge_by_values(world: World, text: str, body: list[Token]) -> Judgement:
    """Establish the statement true or false, then refuse the bodies that cannot prove a true one.

    True: the conclusion evaluates to true where every variable it mentions is pinned and every
    hypothesis holds at the pinned values, or the modelled ``omega``/``linarith`` derive it from the
    hypotheses. False: the conclusion evaluates to false while every hypothesis holds (then nothing
    proves it). Anything else cannot be judged. The fake does not check proof terms: a true statement
    with a body of the right shape is accepted (the documented limit of a fake).
    """
    try:
        env = _pinned(world)
        facts = [truth(fact, world.types, env) for fact in [*world.hypotheses.values(), *world.haves.values()]]
        conclusion = truth(world.final, world.types, env)
    except Unmodelled as error:
        return Judgement.cannot(f"a term outside the modelled fragment: {error}")
    consistent = all(fact is True for fact in facts)  # the pinned values satisfy every hypothesis
    if conclusion is False and consistent:
        return Judgement(
            Outcome.refused, "unsolved goals (fake REPL: the statement is false for the values its hypotheses pin)"
        )
    derived = not (conclusion is True and consistent) and _entailed(world)
    if not (conclusion is True and consistent) and not derived:
        return Judgement.cannot("the fake can neither evaluate the statement nor derive it from its hypotheses")
    if _head(body) in _FROM_FALSE:
        if derived:
            return Judgement.cannot("a proof from False, against hypotheses the fake cannot show consistent")
        return Judgement(
            Outcome.refused,
            "unsolved goals (fake REPL: the proof starts from False, but the hypotheses hold together at the "
            "pinned values, so no proof of False exists)",
        )
    if derived:
        return _ACCEPTED
    names = {t.text for t in body if t.kind == Kind.identifier}
    pinned = {name for name in world.types if name in env} - set(world.lets)
    reads_context = bool(names & set(world.hypotheses)) or any(t.text in _CONTEXT_TACTICS for t in body)
    if pinned & _free(world.final, {}) and not reads_context:
        return Judgement(
            Outcome.refused, "unsolved goals (fake REPL: the goal needs a hypothesis the proof never uses)"
        )
    return _ACCEPTED


def _entailed(world: World) -> bool:
    """Whether the modelled ``omega`` or ``linarith`` derives the conclusion from the hypotheses and ``have`` facts."""
    facts = [*world.hypotheses.values(), *world.haves.values()]
    env = _with_lets(world, {})
    return any(proves(tactic, world.final, facts, world.types, env) for tactic in ("omega", "linarith"))


def _head(body: list[Token]) -> str | None:
    """The head of the proof: a term proof's function, or the first tactic (``exact``'s term's function)."""
    words = [t.text for t in (body[1:] if body[:1] and body[0].text == "by" else body)]
    while words and words[0] in _TERM_TACTICS:
        words = words[1:]
    return words[0] if words else None


def _pinned(world: World) -> dict[str, Fraction]:
    """Values of ``let``s and of variables pinned by ``h : x = e`` hypotheses, repeated until nothing changes."""
    env = _with_lets(world, {})
    for _ in range(len(world.hypotheses) + 1):
        changed = False
        for fact in world.hypotheses.values():
            if fact[0] != "rel" or fact[1] != "=" or fact[2][0] != "var":
                continue
            name = fact[2][1]
            if name in env or name not in world.types or _free(fact[3], env):
                continue
            value = _value(fact[3], world.types[name], env)
            if value is not None:
                env[name], changed = value, True
        if not changed:
            break
    return env


def _assign_index(tokens: list[Token], level: list[int]) -> int | None:
    """The ``:=`` that ends the signature (not one that a ``let``/``have`` in the signature owns)."""
    owner: str | None = None
    for index, token in enumerate(tokens[2:], start=2):
        if level[index] != 0:
            continue
        if token.text in ("let", "have"):
            owner = token.text
        elif token.text == ":=":
            if owner is None:
                return index
            owner = None
    return None


def _bound_in_body(body: str, tokens: list[Token]) -> set[str]:
    """Names the body introduces: those after a binding tactic on its line, up to ``:``/``:=``/``=>``.

    An over-approximation (``cases' h with a b`` also marks ``h``): the fake then refuses less, never more.
    """
    bound: set[str] = set()
    for index, token in enumerate(tokens):
        if index + 1 < len(tokens) and token.kind == Kind.identifier and tokens[index + 1].text == ":":
            bound.add(token.text)  # ``interval_cases h : e``, ``cases h : e``, ``have h :``: a name given its type
        if token.text not in _BINDING_TACTICS:
            continue
        line_end = body.find("\n", token.end)
        line_end = len(body) if line_end == -1 else line_end
        for later in tokens[index + 1 :]:
            if later.start >= line_end or later.text in _BINDING_STOPS:
                break
            if later.kind == Kind.identifier:
                bound.add(later.text)
    return bound
