"""What the fake REPL knows of how Lean elaborates an equation: it answers our answer checks.

One job: the two commands of :mod:`repro.lean.answer_checks` that decide a released answer,

- ``example : type_of% @A = type_of% @B := rfl``: accepted only when A's and B's signatures are the same
  text and each conjunct of their propositions elaborates, as modelled here, to the same equation type
  and the same terms (syntactic equality, which real Lean's ``rfl`` accepts; real Lean accepts more,
  since it compares up to definitional unfolding, so the fake under-approximates it);
- ``example : ((R) : α) = (N) := by norm_num``: accepted only when R and N elaborate at α and evaluate to
  the same value with Lean's semantics (a closed form: when both elaborate to the same term).

The elaboration follows Lean 4's ``binop%``/``binrel%`` elaborator (``src/Lean/Elab/Extra.lean``: leaves
are elaborated without expected type, the maximal type of the known leaf types is computed, the
expected type of ``binop%`` counts as a leaf type and ``binrel%``'s does not, coercions ``↑`` are inserted
at leaves, a tree with no known leaf type is elaborated as is and its numerals default to ℕ,
``rightact%`` (``^``) keeps its exponent out of the analysis and defaults it to ℕ). Modelled: numerals
(decimal, ``0x``/``0b``/``0o``, scientific needing ``OfScientific``: ℚ ℝ ℂ only), variables of the
signature (ℕ ℤ ℚ ℝ ℂ, ``ZMod n``, ``Fin n``, functions between the five), ``let NAME : T := v`` and
untyped ``let`` bindings, ascriptions, ``↑``, ``+ - * / % ^``, prefix ``-`` (no ``Neg ℕ``), postfix
``⁻¹`` (fields only), ``|x|``, ``n !``, ``√``/``Real.sqrt``, ``π``, and a few library functions with their
result types, ``Finset`` variables, ``s.card``, and ``∑``/``∏`` over a ``Finset`` variable, ``Finset.range``,
``Finset.Icc`` or a ``Finset.filter (fun ...)`` of one (a ``fun`` is compared as text). Coercions:
ℕ → ℤ → ℚ → ℝ → ℂ, and ℕ, ℤ into ``ZMod n`` and ``Fin n``.

Everything else (a binder or ``let`` the fake cannot type, instance binders, big operators, unknown
functions) cannot be judged: answered as an error, never a success. It is a fake: nothing it says
is a verdict.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from repro.lean.text.lexer import Kind, Token, lex, significant
from repro.lean.text.statement import StatementError, depths, read_statement

_BRIDGE = re.compile(r"^example : type_of% @(\S+) = type_of% @(\S+) := rfl$")
_LITERAL = re.compile(r"^example : \(\((?P<right>.*)\) : (?P<kind>\S+)\) = \((?P<normal>.*)\) := by norm_num$", re.S)
_TOWER = ("ℕ", "ℤ", "ℚ", "ℝ", "ℂ")
_NAMES = {"Nat": "ℕ", "Int": "ℤ", "Rat": "ℚ", "Real": "ℝ", "Complex": "ℂ"} | {t: t for t in _TOWER}
_FIELDS = frozenset({"ℚ", "ℝ", "ℂ"})
# library functions: (argument types, result type); None for "the argument's type"
_FUNCTIONS: dict[str, tuple[tuple[str | None, ...], str | None]] = {
    "Real.sqrt": (("ℝ",), "ℝ"),
    "Real.log": (("ℝ",), "ℝ"),
    "Real.exp": (("ℝ",), "ℝ"),
    "Real.logb": (("ℝ", "ℝ"), "ℝ"),
    "Nat.gcd": (("ℕ", "ℕ"), "ℕ"),
    "Nat.lcm": (("ℕ", "ℕ"), "ℕ"),
    "Nat.factorial": (("ℕ",), "ℕ"),
    "Nat.choose": (("ℕ", "ℕ"), "ℕ"),
    "Int.floor": (("ℝ",), "ℤ"),
    "Int.ceil": (("ℝ",), "ℤ"),
    "Int.natAbs": (("ℤ",), "ℕ"),
    "Int.toNat": (("ℤ",), "ℕ"),
    "abs": ((None,), None),
}
_CONSTANTS = {"π": ("ℝ", "Real.pi"), "Real.pi": ("ℝ", "Real.pi"), "Complex.I": ("ℂ", "Complex.I")}
_BINARY = {"+": 65, "-": 65, "*": 70, "/": 70, "%": 70, "^": 75}

Expr = tuple[Any, ...]


class CannotJudge(Exception):
    """Outside the modelled fragment."""


class Refused(Exception):
    """Real Lean refuses this (the message is the error it would give)."""


@dataclass(frozen=True)
class Syntax:
    """A parsed term: ``tag`` is num, dec, var, app, asc, coe, inv, neg, bin, pow, paren, const, fact."""

    tag: str
    text: str = ""
    children: tuple[Syntax, ...] = ()


# -- parsing ------------------------------------------------------------------------------------------


class _Parser:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.index = 0

    def peek(self) -> str | None:
        return self.tokens[self.index].text if self.index < len(self.tokens) else None

    def take(self, expected: str | None = None) -> Token:
        if self.index >= len(self.tokens):
            raise CannotJudge("unexpected end")
        token = self.tokens[self.index]
        if expected is not None and token.text != expected:
            raise CannotJudge(f"expected {expected!r}, found {token.text!r}")
        self.index += 1
        return token

    def term(self, floor: int = 0) -> Syntax:
        left = self.prefix()
        while True:
            op = self.peek()
            power = _BINARY.get(op or "")
            if op == "!":
                self.take()
                left = Syntax("fact", children=(left,))
                continue
            if power is None or power < floor:
                return left
            self.take()
            right = self.term(power if op == "^" else power + 1)
            left = Syntax("pow" if op == "^" else "bin", op or "", (left, right))

    def prefix(self) -> Syntax:
        if self.peek() in ("∑", "∏"):
            operator = self.take().text
            bound = self.take()
            if bound.kind != Kind.identifier or self.take().text not in ("in", "∈"):
                raise CannotJudge("a big operator over anything but `x in s`")
            finite = self.application()
            self.take(",")
            return Syntax("big", operator + " " + bound.name, (finite, self.term(67)))
        if self.peek() == "-":
            self.take()
            return Syntax("neg", children=(self.term(75),))
        if self.peek() == "↑":
            self.take()
            return Syntax("coe", children=(self.postfix(),))
        if self.peek() == "√":
            self.take()
            return Syntax("app", "Real.sqrt", (self.term(100),))
        return self.application()

    def application(self) -> Syntax:
        head = self.postfix()
        if head.tag == "var" and (head.text in _FUNCTIONS or head.text[:1].isalpha()):
            arguments = []
            while self._starts_argument():
                arguments.append(self.postfix())
            if arguments:
                return Syntax("app", head.text, tuple(arguments))
        return head

    def _starts_argument(self) -> bool:
        if self.index >= len(self.tokens):
            return False
        token = self.tokens[self.index]
        return token.kind in (Kind.number, Kind.identifier) and token.text not in ("in",) or token.text == "("

    def postfix(self) -> Syntax:
        node = self.atom()
        while self.peek() == "⁻¹":
            self.take()
            node = Syntax("inv", children=(node,))
        return node

    def atom(self) -> Syntax:
        token = self.take()
        if token.kind == Kind.number:
            return Syntax("num", token.text)
        if token.kind == Kind.identifier:
            if token.name in _CONSTANTS:
                return Syntax("const", token.name)
            if token.name in _NAMES or token.text in ("fun", "λ", "let", "have", "if", "by"):
                raise CannotJudge(f"term {token.text!r}")
            return Syntax("var", token.name)
        if token.text == "|":
            inner = self.term()
            self.take("|")
            return Syntax("app", "abs", (inner,))
        if token.text == "(" and self.peek() in ("fun", "λ"):
            depth, start = 1, self.index
            while depth:
                depth += {"(": 1, ")": -1}.get(self.take().text, 0)
            return Syntax("opaque", " ".join(t.text for t in self.tokens[start : self.index - 1]))
        if token.text == "(":
            inner = self.term()
            if self.peek() == ":":
                self.take()
                kind = _type_text(self._type_tokens())
                self.take(")")
                return Syntax("asc", kind, (inner,))
            self.take(")")
            return Syntax("paren", children=(inner,))
        raise CannotJudge(f"term {token.text!r}")

    def _type_tokens(self) -> list[Token]:
        out = []
        while self.peek() not in (")", None):
            out.append(self.take())
        return out


def _type_text(tokens: list[Token]) -> str:
    """``ℕ``, ``ZMod 7``, ``Fin 5``, ``ℕ → ℝ``: canonical text; anything else cannot be judged."""
    texts = [_NAMES.get(t.name, t.text) if t.kind == Kind.identifier else t.text for t in tokens]
    if len(texts) == 1 and texts[0] in _TOWER:
        return texts[0]
    if len(texts) == 2 and texts[0] in ("ZMod", "Fin") and tokens[1].kind == Kind.number:
        return f"{texts[0]} {int(texts[1], 0)}"
    if len(texts) == 2 and texts[0] == "Finset" and texts[1] in _TOWER:
        return f"Finset {texts[1]}"
    if len(texts) >= 3 and all(t in _TOWER for t in texts[::2]) and all(t in ("→", "->") for t in texts[1::2]):
        return " → ".join(texts[::2])
    raise CannotJudge(f"type {' '.join(texts)!r}")


def parse(text: str) -> Syntax:
    parser = _Parser(significant(lex(text)))
    node = parser.term()
    if parser.index != len(parser.tokens):
        raise CannotJudge(f"trailing {parser.peek()!r}")
    return node


# -- elaboration (binop% / binrel%) --------------------------------------------------------------------


def _coerces(source: str, target: str) -> bool:
    if source == target:
        return True
    if source in _TOWER and target in _TOWER:
        return _TOWER.index(source) < _TOWER.index(target)
    return source in ("ℕ", "ℤ") and target.split()[0] in ("ZMod", "Fin")


@dataclass
class _Leaf:
    syntax: Syntax
    kind: str | None  # None: not known yet (a numeral, ``↑e``, ``e⁻¹`` of a numeral)
    expr: Expr | None = None


class Elaborator:
    def __init__(self, types: dict[str, str]) -> None:
        self.types = types

    # a tree: bin/pow/neg/paren nodes down to leaves
    def leaves(self, node: Syntax) -> list[_Leaf]:
        if node.tag == "paren":
            return self.leaves(node.children[0])
        if node.tag == "bin":
            return self.leaves(node.children[0]) + self.leaves(node.children[1])
        if node.tag in ("pow", "neg"):
            return self.leaves(node.children[0])  # rightact%: the exponent does not take part
        return [self.leaf(node)]

    def leaf(self, node: Syntax) -> _Leaf:
        if node.tag in ("num", "coe"):
            return _Leaf(node, None)
        if node.tag == "inv":
            inner = self.leaves(node.children[0])
            known = {leaf.kind for leaf in inner} - {None}
            return _Leaf(node, known.pop() if len(known) == 1 else None)
        if node.tag == "big":  # the body's type when its leaves know it, else still open (numerals)
            _, element = self.finite_set(node.children[0])
            body = Elaborator(self.types | {node.text.split()[1]: element})
            kinds = [leaf.kind for leaf in body.leaves(node.children[1])]
            return _Leaf(node, body.maximum(kinds, None))
        expr = self.elaborate(node, None)
        return _Leaf(node, expr[-1], expr)

    def maximum(self, kinds: list[str | None], start: str | None) -> str | None:
        best = start
        for kind in kinds:
            if kind is None:
                continue
            if best is None or _coerces(kind, best):
                best = best or kind
            elif _coerces(best, kind):
                best = kind
            else:
                raise CannotJudge(f"uncomparable types {best} and {kind}")
        return best

    def tree(self, node: Syntax, expected: str | None) -> Expr:
        """A ``binop%`` tree elaborated against ``expected`` (``binrel%`` sides: :meth:`equation`)."""
        kinds = [leaf.kind for leaf in self.leaves(node)]
        best = self.maximum(kinds, expected)
        target = best or "ℕ"  # no known leaf and no expected type: numerals default to ℕ
        return self.ensure(self.build(node, target), expected)

    def build(self, node: Syntax, kind: str) -> Expr:
        if node.tag == "paren":
            return self.build(node.children[0], kind)
        if node.tag == "bin":
            op = node.text
            if op == "%" and kind in _FIELDS:
                raise CannotJudge("% on a field")
            return ("bin", op, self.build(node.children[0], kind), self.build(node.children[1], kind), kind)
        if node.tag == "pow":
            exponent = self.tree(node.children[1], None)
            return ("pow", self.build(node.children[0], kind), exponent, kind)
        if node.tag == "neg":
            if kind == "ℕ" or kind.startswith("Fin"):
                raise Refused(f"failed to synthesize\n  Neg {kind}")
            return ("neg", self.build(node.children[0], kind), kind)
        return self.ensure(self.elaborate(node, kind), kind)

    def ensure(self, expr: Expr, expected: str | None) -> Expr:
        kind = expr[-1]
        if expected is None or kind == expected:
            return expr
        if _coerces(kind, expected):
            return ("cast", expr, expected)
        raise Refused(f"type mismatch: {kind} is not {expected}")

    def elaborate(self, node: Syntax, expected: str | None) -> Expr:
        """A leaf (or any term) against ``expected``; its own type when ``expected`` is None."""
        tag = node.tag
        if tag in ("bin", "pow", "neg", "paren"):
            return self.tree(node, expected)
        if tag == "num":
            kind: str = expected or "ℕ"
            if "." in node.text or ("e" in node.text.lower() and node.text[:2].lower() != "0x"):
                if kind not in _FIELDS:
                    raise Refused(f"failed to synthesize\n  OfScientific {kind}")
                return ("sci", _scientific(node.text), kind)
            return ("num", int(node.text, 0) if node.text[:2].lower() in ("0x", "0b", "0o") else int(node.text), kind)
        if tag == "var":
            head, _, field = node.text.rpartition(".")
            if field == "card" and self.types.get(head, "").startswith("Finset "):
                return ("card", ("var", head, self.types[head]), "ℕ")
            variable = self.types.get(node.text)
            if variable is None or "→" in variable or variable.startswith("Finset "):
                raise CannotJudge(f"identifier {node.text!r}")
            return ("var", node.text, variable)
        if tag == "const":
            constant, name = _CONSTANTS[node.text]
            return ("const", name, constant)
        if tag == "asc":
            return self.ensure(self.elaborate(node.children[0], node.text), node.text)
        if tag == "coe":
            inner = self.elaborate(node.children[0], None)
            if expected is None or inner[-1] == expected:
                return inner
            if not _coerces(inner[-1], expected):
                raise Refused(f"type mismatch: no coercion from {inner[-1]} to {expected}")
            return ("cast", inner, expected)
        if tag == "inv":
            inverted = expected or self.leaf(node).kind
            if inverted is None:
                raise CannotJudge("⁻¹ of a term of unknown type")
            if inverted not in _FIELDS:
                raise Refused(f"failed to synthesize\n  Inv {inverted}")
            return ("inv", self.elaborate(node.children[0], inverted), inverted)
        if tag == "fact":
            return ("app", "Nat.factorial", (self.elaborate(node.children[0], "ℕ"),), "ℕ")
        if tag == "app":
            return self.application(node)
        if tag == "big":
            finite, element = self.finite_set(node.children[0])
            scoped = Elaborator(self.types | {node.text.split()[1]: element})
            body = scoped.tree(node.children[1], expected)
            return ("big", node.text, finite, body, body[-1])
        raise CannotJudge(f"term {tag}")

    def finite_set(self, node: Syntax) -> tuple[Expr, str]:
        """A ``Finset`` term and its element type: a variable, ``Finset.range``, ``Finset.Icc``, a filter."""
        if node.tag == "paren":
            return self.finite_set(node.children[0])
        if node.tag == "var":
            kind = self.types.get(node.text, "")
            if not kind.startswith("Finset "):
                raise CannotJudge(f"finite set {node.text!r}")
            return ("var", node.text, kind), kind.split()[1]
        if node.tag == "app" and node.text == "Finset.range" and len(node.children) == 1:
            return ("app", node.text, (self.elaborate(node.children[0], "ℕ"),), "Finset ℕ"), "ℕ"
        if node.tag == "app" and node.text in ("Finset.Icc", "Finset.Ico") and len(node.children) == 2:
            element = self.maximum([leaf.kind for child in node.children for leaf in self.leaves(child)], None) or "ℕ"
            bounds = tuple(self.tree(child, element) for child in node.children)
            return ("app", node.text, bounds, f"Finset {element}"), element
        if node.tag == "app" and node.text == "Finset.filter" and len(node.children) == 2:
            predicate, finite = node.children
            if predicate.tag != "opaque":
                raise CannotJudge("a filter by anything but `fun`")
            inner, element = self.finite_set(finite)
            return ("app", node.text, (("opaque", predicate.text), inner), f"Finset {element}"), element
        if node.tag == "app" and node.text == "Nat.divisors" and len(node.children) == 1:
            return ("app", node.text, (self.elaborate(node.children[0], "ℕ"),), "Finset ℕ"), "ℕ"
        raise CannotJudge("a finite set the fake cannot read")

    def application(self, node: Syntax) -> Expr:
        name = node.text
        if name == "Finset.card" and len(node.children) == 1:
            return ("card", self.finite_set(node.children[0])[0], "ℕ")
        function = self.types.get(name)
        if function is not None and "→" in function:
            *argument_types, result = function.split(" → ")
            if len(argument_types) != len(node.children):
                raise CannotJudge("partial application")
            arguments = tuple(self.elaborate(a, t) for a, t in zip(node.children, argument_types, strict=True))
            return ("app", name, arguments, result)
        if name not in _FUNCTIONS:
            raise CannotJudge(f"function {name!r}")
        parameters, result_type = _FUNCTIONS[name]
        if len(parameters) != len(node.children):
            raise CannotJudge("partial application")
        arguments = tuple(self.elaborate(a, t) for a, t in zip(node.children, parameters, strict=True))
        return ("app", name, arguments, result_type or arguments[0][-1])

    def equation(self, left: Syntax, right: Syntax) -> tuple[str, Expr, Expr]:
        """``L = R`` as ``binrel%`` elaborates it: both sides' leaves together, no expected type."""
        kinds = [leaf.kind for leaf in self.leaves(left) + self.leaves(right)]
        best = self.maximum(kinds, None)
        target = best or "ℕ"
        return target, self.build(left, target), self.build(right, target)


def _scientific(text: str) -> tuple[int, bool, int]:
    """Lean's ``OfScientific.ofScientific m s e`` arguments for a scientific literal."""
    found = re.fullmatch(r"([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?", text)
    if found is None:
        raise CannotJudge(f"numeral {text!r}")
    whole, fraction, exponent = found.group(1), found.group(2) or "", int(found.group(3) or 0)
    shift = len(fraction) - exponent
    mantissa = int(whole + fraction)
    return (mantissa, True, shift) if shift > 0 else (mantissa * 10 ** (-shift), False, 0)


# -- values (the norm_num check) -----------------------------------------------------------------------


def value(expr: Expr) -> Fraction:
    tag, kind = expr[0], expr[-1]
    if tag == "num":
        return Fraction(expr[1])
    if tag == "sci":
        mantissa, negative, shift = expr[1]
        return Fraction(mantissa, 10**shift) if negative else Fraction(mantissa)
    if tag == "cast":
        return value(expr[1])
    if tag == "neg":
        return -value(expr[1])
    if tag == "inv":
        inner = value(expr[1])
        return Fraction(0) if inner == 0 else 1 / inner
    if tag == "pow":
        exponent = value(expr[2])
        if exponent.denominator != 1 or exponent < 0 or exponent > 256:
            raise CannotJudge("exponent")
        return value(expr[1]) ** int(exponent)
    if tag == "bin":
        a, b, op = value(expr[2]), value(expr[3]), expr[1]
        if op == "+":
            return a + b
        if op == "*":
            return a * b
        if op == "-":
            return max(a - b, Fraction(0)) if kind == "ℕ" else a - b
        if op in ("/", "%"):
            if b == 0:
                return Fraction(0) if op == "/" else a
            if kind in _FIELDS:
                if op == "%":
                    raise CannotJudge("% on a field")
                return a / b
            quotient = int(a) // int(b) if b > 0 else -(int(a) // -int(b))  # ℕ floor, ℤ Euclidean
            return Fraction(quotient) if op == "/" else a - b * quotient
    raise CannotJudge(f"no value for {tag}")


# -- the statements --------------------------------------------------------------------------------


def _context(statement: str) -> tuple[list[str], dict[str, str], list[str], str]:
    """(binder texts, variable types, the conclusion's leading binding texts, the proposition)."""
    try:
        parsed = read_statement(statement)
    except StatementError as error:
        raise CannotJudge(str(error)) from error
    types: dict[str, str] = {}
    for group in parsed.binders:
        tokens = significant(lex(group))
        if tokens[0].text not in ("(", "{") or ":" not in [t.text for t in tokens]:
            raise CannotJudge(f"binder {group}")
        colon = [t.text for t in tokens].index(":")
        typed = tokens[colon + 1 : -1]
        default = next((i for i, t in enumerate(typed) if t.text == ":="), None)  # optParam T v: reducibly T
        try:
            kind = _type_text(typed if default is None else typed[:default])
        except CannotJudge:
            continue  # a hypothesis: no type for a variable
        types.update({t.name: kind for t in tokens[1:colon]})
    bindings, proposition = _bindings(parsed.conclusion, types)
    return [" ".join(t.text for t in significant(lex(b))) for b in parsed.binders], types, bindings, proposition


def _bindings(conclusion: str, types: dict[str, str]) -> tuple[list[str], str]:
    text = conclusion.strip()
    found: list[str] = []
    while True:
        text = _unwrap(text)
        tokens = significant(lex(text))
        if not tokens or tokens[0].text not in ("let", "have"):
            return found, text
        level = depths(tokens)
        assign = next((i for i, t in enumerate(tokens) if level[i] == 0 and t.text == ":="), None)
        if assign is None or assign < 2:
            raise CannotJudge("a binding without :=")
        end = next(
            (i for i in range(assign + 1, len(tokens)) if level[i] == 0 and _ends_binding(text, tokens, i)), None
        )
        if end is None:
            raise CannotJudge("a binding without its end")
        value_end = tokens[end].start if tokens[end].text == ";" else tokens[end].end
        name = tokens[1].name
        if tokens[0].text == "let":
            if tokens[2].text == ":":
                types[name] = _type_text(tokens[3:assign])
            else:
                types[name] = Elaborator(types).elaborate(parse(text[tokens[assign].end : value_end]), None)[-1]
        else:
            types.pop(name, None)  # a proof: no numeric variable of that name any more
        found.append(" ".join(t.text for t in tokens[: end + 1]))
        text = text[tokens[end].end :]


def _ends_binding(text: str, tokens: list[Token], index: int) -> bool:
    """A binding's value ends at ``;`` or at the end of its line."""
    if tokens[index].text == ";":
        return True
    return index + 1 < len(tokens) and "\n" in text[tokens[index].end : tokens[index + 1].start]


def _unwrap(text: str) -> str:
    text = text.strip()
    while True:
        tokens = significant(lex(text))
        if len(tokens) < 2 or tokens[0].text != "(" or tokens[-1].text != ")":
            return text
        level = depths(tokens)
        if not all(d > 0 for d in level[1:-1]):
            return text
        text = text[tokens[0].end : tokens[-1].start].strip()


def _equations(proposition: str, types: dict[str, str]) -> list[tuple[str, Expr, Expr]]:
    tokens = significant(lex(proposition))
    level = depths(tokens)
    cuts = [t for t, d in zip(tokens, level, strict=True) if d == 0 and t.text in ("∧", "/\\")]
    starts, ends = [0, *(t.end for t in cuts)], [*(t.start for t in cuts), len(proposition)]
    elaborator = Elaborator(types)
    out = []
    for start, end in zip(starts, ends, strict=True):
        conjunct = _unwrap(proposition[start:end])
        parts = significant(lex(conjunct))
        if len(parts) > 2 and parts[0].text == "@" and parts[1].text == "Eq":
            kind = _type_text(parts[2:3])
            parser = _Parser(parts[3:])
            left, right = parser.postfix(), parser.postfix()
            if parser.index != len(parser.tokens):
                raise CannotJudge("@Eq with more than two arguments")
            out.append((kind, elaborator.tree(left, kind), elaborator.tree(right, kind)))
            continue
        inner = depths(parts)
        equals = [i for i, t in enumerate(parts) if inner[i] == 0 and t.text == "="]
        if len(equals) != 1 or any(inner[i] == 0 and t.text in _RELATIONS for i, t in enumerate(parts)):
            raise CannotJudge("not an equation")
        cut = parts[equals[0]]
        out.append(elaborator.equation(parse(conjunct[: cut.start]), parse(conjunct[cut.end :])))
    return out


_RELATIONS = frozenset({"<", ">", "≤", "≥", "≠", "∨", "→", "↔", "¬", "∃", "∀"})


def judge_answer_check(code: str, declarations: dict[str, str]) -> tuple[bool, str] | None:
    """(accepted, Lean's error) for one of our answer checks; None when ``code`` is not one of them."""
    bridge = _BRIDGE.match(code)
    literal = _LITERAL.match(code)
    if bridge is None and literal is None:
        return None
    try:
        if bridge is not None:
            return _judge_bridge(declarations, bridge.group(1), bridge.group(2))
        assert literal is not None
        return _judge_literal(literal.group("right"), literal.group("kind"), literal.group("normal"))
    except Refused as error:
        return False, str(error)
    except CannotJudge as error:
        return False, f"fake REPL cannot judge this answer check (outside the modelled fragment: {error})"


def _judge_bridge(declarations: dict[str, str], first: str, second: str) -> tuple[bool, str]:
    texts = [declarations.get(first), declarations.get(second)]
    if texts[0] is None or texts[1] is None:
        return False, f"unknown identifier '{first if texts[0] is None else second}'"
    binders_a, types_a, bindings_a, proposition_a = _context(texts[0])
    binders_b, types_b, bindings_b, proposition_b = _context(texts[1])
    if binders_a != binders_b or bindings_a != bindings_b:
        raise CannotJudge("signatures that differ beyond their propositions")
    ours, theirs = _equations(proposition_a, types_a), _equations(proposition_b, types_b)
    if ours == theirs:
        return True, ""
    return False, "type mismatch\n  rfl\n(fake REPL: the two propositions elaborate differently)"


def _judge_literal(right: str, kind_text: str, normal: str) -> tuple[bool, str]:
    kind = _type_text(significant(lex(kind_text)))
    elaborator = Elaborator({})
    ours = elaborator.tree(parse(right), kind)
    theirs = elaborator.tree(parse(normal), kind)
    if ours == theirs:
        return True, ""  # the same term: closed by rfl, whatever it is
    if value(ours) == value(theirs):  # CannotJudge for a closed form that is not the same term
        return True, ""
    return False, "unsolved goals (fake REPL: the two values differ)"
