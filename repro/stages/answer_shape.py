"""Where our statement's answer would be: an equation ``L = R`` or a tuple ``x = a ∧ y = b``, or why none.

A proposal only (Lean confirms every released value: :mod:`repro.lean.answer_checks`). The reader fails
closed, and every refusal has a reason (:class:`repro.records.NoAnswerReason`) that the status, the
report and the card count:

- the signature and the conclusion's bindings must leave numerals their meaning
  (:func:`repro.lean.text.answer_scope.answer_scope`), and the conclusion must not give back a hypothesis;
- after its ``let``/``have`` bindings and redundant parentheses, the proposition is one equation whose
  right side is a literal (:mod:`repro.lean.text.answer_literal`), or a conjunction of equations
  ``v = literal``, one per distinct variable of the signature (an ordered tuple);
- an inequality is a bound, ``∨`` several answers, ``→ ∀ ¬ ↔ if`` a premise or a binder, ``IsLeast``/``∈``
  a set: none of them is a value the statement entails.

:meth:`AnswerShape.typed_statement` writes the statement Lean compares with ours: the same text with
the proposition replaced by ``@Eq α (L) (R)`` (each conjunct likewise), so the equation's type is the
one we name and both sides are elaborated against it.
"""

from __future__ import annotations

from dataclasses import dataclass

from repro.lean.statement_checks import restated_hypothesis
from repro.lean.text.answer_literal import Literal, read_literal
from repro.lean.text.answer_scope import AnswerScope, answer_scope, unwrapped
from repro.lean.text.lexer import Kind, lex, significant
from repro.lean.text.statement import (
    Statement,
    StatementError,
    depths,
    read_statement,
    strip_comments,
    top_level_equation,
)
from repro.records import NoAnswerReason

_PREMISES = frozenset({"→", "->", "∀", "Π", "¬", "↔", "<->", "if", "fun", "λ", "∃!", "match", "Not"})
_DISJUNCTIONS = frozenset({"∨", "\\/", "∈", "∉", "⊆", "⊂", "∪", "∩"})
_BOUNDS = frozenset({"≤", "<", "≥", ">", "<=", ">=", "≠", "!="})
_CONJUNCTIONS = frozenset({"∧", "/\\"})
_VALUE_TYPES = frozenset({"ℕ", "ℤ", "ℚ", "ℝ", "ℂ"})
_SETS = frozenset({"IsLeast", "IsGreatest", "IsLUB", "IsGLB", "Set", "Finset", "setOf", "sSup", "sInf"})


@dataclass(frozen=True)
class Part:
    """One equation of the answer: its left side, its right side as a literal, the variable for a tuple."""

    left: str
    right: str
    literal: Literal
    variable: str | None = None


@dataclass(frozen=True)
class AnswerShape:
    kind: str  # equation | tuple
    parts: tuple[Part, ...]
    scope: AnswerScope
    statement: Statement
    prefix: str  # the signature up to the proposition
    suffix: str  # what follows the proposition in the signature (closing parentheses)

    def typed_statement(self, name: str, types: tuple[str, ...]) -> str:
        """Our statement under ``name``, each equation's type named: ``@Eq α (L) (R)``."""
        equations = [f"@Eq {kind} ({part.left}) ({part.right})" for part, kind in zip(self.parts, types, strict=True)]
        proposition = " ∧ ".join(equations)
        return f"theorem {name} {self.prefix}{proposition}{self.suffix}\n    := by sorry"


@dataclass(frozen=True)
class NoShape:
    reason: NoAnswerReason
    detail: str


def answer_shape(statement: str) -> AnswerShape | NoShape:
    """The equation or tuple an answer would be read from, or why there is none."""
    try:
        parsed = read_statement(statement)
    except StatementError as error:
        return NoShape(NoAnswerReason.unreadable_statement, str(error))
    scope = answer_scope(parsed.binders, parsed.conclusion)
    if scope is None:
        return NoShape(
            NoAnswerReason.signature,
            "a binder or binding may change what numerals mean (an instance, a type-named binder, an untyped let)",
        )

    if restated_hypothesis(parsed) is not None:
        return NoShape(NoAnswerReason.restated_hypothesis, "the conclusion gives back a hypothesis")
    if any(t.kind == Kind.identifier and t.name in ("sorry", "admit") for t in significant(lex(parsed.signature))):
        return NoShape(NoAnswerReason.other_shape, "our statement holds a sorry")
    unbound = _unbound_names(scope)
    if unbound:
        return NoShape(
            NoAnswerReason.signature,
            f"{sorted(unbound)[0]!r} is no variable of the signature: Lean may bind it as an implicit argument",
        )
    proposition = unwrapped(scope.proposition)
    cut = _proposition_span(parsed.signature, proposition)
    if cut is None:
        return NoShape(NoAnswerReason.other_shape, "the proposition could not be located in the signature")
    tokens = significant(lex(proposition))
    if not tokens:
        return NoShape(NoAnswerReason.other_shape, "an empty proposition")
    level = depths(tokens)
    top = [t for t, d in zip(tokens, level, strict=True) if d == 0]
    texts = {t.text for t in top}
    if tokens[0].text == "∃":
        return NoShape(NoAnswerReason.existential, "an ∃ statement: its answer is a witness")
    if texts & _PREMISES:
        return NoShape(NoAnswerReason.premise, f"a premise, negation or binder ({sorted(texts & _PREMISES)[0]})")
    if texts & _DISJUNCTIONS:
        return NoShape(NoAnswerReason.disjunction, "a disjunction or a membership: several values, or a set")
    if any(t.kind == Kind.identifier and t.name in _SETS for t in tokens[:1]):
        return NoShape(NoAnswerReason.set_or_interval, f"{tokens[0].text}: a set or an extremum, not a value")
    if texts & _CONJUNCTIONS:
        parts = _tuple_parts(proposition, scope, parsed)
        if isinstance(parts, NoShape):
            return parts
        return AnswerShape("tuple", parts, scope, parsed, *cut)
    if texts & _BOUNDS and "=" not in texts:
        return NoShape(NoAnswerReason.inequality, "an inequality: a bound, not a value")
    equation = top_level_equation(proposition)
    if equation is None:
        return NoShape(NoAnswerReason.other_shape, "not one equation")
    left, right = (strip_comments(side).strip() for side in equation)
    literal = read_literal(right)
    if literal is None:
        return NoShape(*_why_not_literal(right, scope))
    captured = _captured(right, parsed, scope)
    if captured:
        return NoShape(NoAnswerReason.signature, f"{captured!r} in the right side is bound by the statement itself")
    return AnswerShape("equation", (Part(left, right, literal),), scope, parsed, *cut)


def _captured(right: str, parsed: Statement, scope: AnswerScope) -> str | None:
    """A name of the literal (``π``, ``Real.sqrt``) that a binder or ``let`` of ours rebinds, if any.

    The literal's value is checked in the header's context, the statement's ``R`` in the statement's: a
    binder ``(π : ℝ)`` (possible where the header does not open ``Real``) would make them differ.
    """
    bound = set(scope.variables) | {binding.name for binding in scope.lets} | _binder_names(parsed)
    for token in significant(lex(right)):
        if token.kind == Kind.identifier and (token.name in bound or token.name.split(".")[0] in bound):
            return token.name
    return None


def _binder_names(parsed: Statement) -> set[str]:
    names: set[str] = set()
    for group in parsed.binders:
        tokens = significant(lex(group))
        level = depths(tokens)
        colon = next((i for i, t in enumerate(tokens) if level[i] == 1 and t.text == ":"), len(tokens))
        names |= {t.name for t in tokens[1:colon] if t.kind == Kind.identifier}
    return names


# undotted names Lean resolves to library constants under our header (``open ... Real Nat``), not auto-bound
_GLOBAL_NAMES = frozenset(
    {"abs", "max", "min", "π", "sqrt", "log", "exp", "gcd", "lcm", "choose", "factorial", "floor", "ceil", "in"}
    | {"card", "range", "Icc", "Ico", "Ioc", "Ioo", "divisors", "digits", "filter", "ℕ", "ℤ", "ℚ", "ℝ", "ℂ"}
    | {"Nat", "Int", "Rat", "Real", "Complex", "Finset", "Set", "True", "False", "fun", "λ", "let", "have", "by"}
    | {"ZMod", "Fin", "NNReal", "ENNReal", "EReal", "PNat", "Polynomial", "Matrix", "List", "Multiset", "Prop"}
)
_BINDERS = frozenset({"∑", "∏", "fun", "λ", "∀", "∃", "∃!", "⋃", "⋂", "⨆", "⨅"})
_BINDER_ENDS = frozenset({",", "=>", "in", "∈", ":", "↦"})


def _unbound_names(scope: AnswerScope) -> set[str]:
    """Undotted names of the proposition and the ``let`` values that nothing binds: with ``autoImplicit``
    Lean binds them itself, so ``theorem t : y * 2 = 8`` is about every ``y``."""
    known = set(scope.variables) | {binding.name for binding in scope.lets} | _GLOBAL_NAMES
    tokens = [token for binding in scope.lets for token in binding.value] + significant(lex(scope.proposition))
    unbound: set[str] = set()
    binding = False
    for index, token in enumerate(tokens):
        if token.text in _BINDERS:
            binding = True
            continue
        if binding and token.text in _BINDER_ENDS:
            binding = False
        if token.kind != Kind.identifier or "." in token.name:
            continue
        if binding or (index and tokens[index - 1].text in ("let", "have")):
            known.add(token.name)
        elif token.name not in known:
            unbound.add(token.name)
    return unbound


def _proposition_span(signature: str, proposition: str) -> tuple[str, str] | None:
    """(prefix, suffix) around the proposition, its last occurrence, followed only by closing parentheses."""
    start = signature.rfind(proposition)
    if start < 0:
        return None
    after = signature[start + len(proposition) :]
    if any(t.text != ")" for t in significant(lex(after))):
        return None
    return signature[:start], after


def _tuple_parts(proposition: str, scope: AnswerScope, scope_statement: Statement) -> tuple[Part, ...] | NoShape:
    """``x = 15 ∧ y = -11``: each conjunct a distinct signature variable equal to a literal."""
    tokens = significant(lex(proposition))
    level = depths(tokens)
    cuts = [t for t, d in zip(tokens, level, strict=True) if d == 0 and t.text in _CONJUNCTIONS]
    starts = [0, *(t.end for t in cuts)]
    ends = [*(t.start for t in cuts), len(proposition)]
    parts: list[Part] = []
    lets = {binding.name for binding in scope.lets}
    for start, end in zip(starts, ends, strict=True):
        conjunct = unwrapped(proposition[start:end])
        equation = top_level_equation(conjunct)
        if equation is None:
            return NoShape(NoAnswerReason.other_shape, f"a conjunct that is not an equation: {conjunct[:80]!r}")
        left, right = (strip_comments(side).strip() for side in equation)
        variable = significant(lex(unwrapped(left)))
        if len(variable) != 1 or variable[0].kind != Kind.identifier:
            return NoShape(NoAnswerReason.other_shape, f"a conjunct whose left side is not a variable: {left[:80]!r}")
        name = variable[0].name
        if name not in scope.variables or name in lets or scope.variables[name] not in _VALUE_TYPES:
            return NoShape(NoAnswerReason.other_shape, f"{name!r} is not a numeric variable of the signature")
        if any(part.variable == name for part in parts):
            return NoShape(NoAnswerReason.other_shape, f"{name!r} is given twice")
        literal = read_literal(right)
        if literal is None:
            reason, detail = _why_not_literal(right, scope)
            return NoShape(reason, f"{name}: {detail}")
        if _captured(right, scope_statement, scope):
            return NoShape(NoAnswerReason.signature, f"{name}: the right side names something the statement binds")
        parts.append(Part(unwrapped(left), right, literal, name))
    return tuple(parts)


def _why_not_literal(right: str, scope: AnswerScope) -> tuple[NoAnswerReason, str]:
    names = {t.name for t in significant(lex(right)) if t.kind == Kind.identifier}
    known = set(scope.variables) | {binding.name for binding in scope.lets}
    if names & known:
        return NoAnswerReason.symbolic, f"the right side {right[:80]!r} mentions the statement's variables"
    return NoAnswerReason.not_a_value, f"the right side {right[:80]!r} is not a literal of a released form"
