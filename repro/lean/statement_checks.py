"""Lean checks of our own formal statement, with trusted commands only: vacuity, satisfiability, refutation.

A statement whose hypotheses contradict each other is provable whatever its answer says; a statement
that is false cannot have a verified answer at all. Both are facts Lean can establish cheaply about
*our* statement, with commands we build; the prover's text never enters them.

Every command runs after our statement has been elaborated exactly as the gate elaborates it
(``theorem repro_target_<hash> <signature> := by sorry``, :func:`repro.judge.screen.lean_commands`), and
refers to it only through ``type_of% @repro_target_<hash>``: what the tactics see is the type Lean
built, never a second reading of our text, so binders, ``let``, implicit and instance binders,
auto-bound implicits and coercions mean the same thing in the check as in the gate.

- **Vacuity.** ``example : type_of% @T := by intros; exfalso; TAC``. ``intros`` introduces exactly the
  syntactic premises Lean shows (the signature's binders, the conclusion's leading ``∀``/``→``/``let``;
  never through ``¬``, ``↔`` or a definition), ``exfalso`` discards the conclusion, so a success means
  the premises alone prove ``False``: the statement holds for every conclusion. TAC runs through
  omega, norm_num, linarith, simp_all, nlinarith, then (the binders introduced under their own names
  first) ``nlinarith [sq_nonneg a, sq_nonneg (a - b), ...]`` over the signature's variables (four at most) and
  ``positivity`` against a hypothesis that puts a non-negative term below zero (issue 29).
- **Satisfiability.** Where every variable of the signature is pinned by an equation hypothesis
  (``x = 3600``), or the hypotheses' linear equations have one solution (:func:`solve_linear`), the
  statement is re-declared with ``autoImplicit false`` (so its explicit arguments
  are exactly the binders we count) and applied to the pinned values, each hypothesis discharged by
  ``norm_num`` or ``decide``: ``example := @T' (3600) (by ...) ...``. Lean accepts it only if those
  values satisfy every hypothesis of the signature. A conclusion with premises of its own (leading
  ``∀`` or ``→``) is not attempted: its premises would not be covered.
- **Refutation.** ``example : ¬ type_of% @T := by TAC`` for a closed statement, and, with pinned
  values, ``example : ¬ type_of% @T := fun h => absurd (h (v) (by ...) ...) (by TAC)``. Whatever Lean
  accepts here is a proof that our statement is false.
- **Witness** (the answer stage): ``example : type_of% @T := by intros; exact ⟨(w), by TAC⟩`` proves the
  statement with the proposed witness; the witness must be a numeric literal (it is model text).

A command succeeds only when Lean answered, reported no error, no sorry and no ``sorry`` warning, and
our statement itself elaborated without error; a command that fails to elaborate is ``failed``, an
infrastructure failure is ``undecided``: neither is ever read as success.
"""

from __future__ import annotations

import hashlib
import re
from enum import StrEnum
from fractions import Fraction
from typing import Any

from pydantic import BaseModel, Field

from repro.lean.protocol import InfraStatus, LeanResult, Verifier
from repro.lean.text.answer_scope import answer_scope, existential_variables, unwrapped
from repro.lean.text.lexer import Kind, Token, lex, significant
from repro.lean.text.statement import Statement, StatementError, _binding_end, depths, final_proposition, read_statement

STATEMENT_PREFIX = "repro_target"
# ``norm_num at *`` for the False derivation: the contradiction sits in the hypotheses, not the goal.
# ``decide`` is not among them: it decides a closed goal and ignores hypotheses, so on ``False`` it
# always fails; it is used where the goal is closed (refutation, witness, pinned hypotheses).
VACUITY_TACTICS = ("omega", "norm_num at *", "linarith", "simp_all", "nlinarith")
# non-linear contradictions (issue 29: ``l * w = 40`` and ``l + w = 10`` over ℝ have no solution): nlinarith
# with squares of the signature's variables, their differences and sums as hints, and positivity for a
# hypothesis that sets a non-negative term below zero; at most this many variables give hints
# nlinarith multiplies every pair of hypotheses and hints: the hints stay few (4 variables: 4 squares and
# 6 differences; sums of pairs only with 2 variables)
MAX_HINT_VARIABLES = 4
MAX_POSITIVITY_CHECKS = 3
REFUTATION_TACTICS = ("decide", "norm_num", "simp", "omega", "linarith")
WITNESS_TACTICS = ("decide", "norm_num", "simp_all", "omega", "linarith")
# how a pinned hypothesis is discharged once the values are in: closed arithmetic, nothing else
PIN_DISCHARGE = "by first | (norm_num <;> done) | decide"
_NUMERIC = re.compile(r"^\(?\s*-?\s*\d+(?:\.\d+)?\s*(?::\s*[ℕℤℚℝ])?\s*\)?(?:\s*/\s*\(?\s*\d+(?:\.\d+)?\s*\)?)?$")
_VARIABLE_TYPES = frozenset({"ℕ", "ℤ", "ℚ", "ℝ", "Nat", "Int", "Rat", "Real"})
_SPELLINGS = {"Nat": "ℕ", "Int": "ℤ", "Rat": "ℚ", "Real": "ℝ", "->": "→", "<->": "↔", "λ": "fun"}


class CheckOutcome(StrEnum):
    proved = "proved"  # Lean accepted our command: the claim holds
    failed = "failed"  # Lean answered and refused it (the tactic did not close the goal, or it did not elaborate)
    undecided = "undecided"  # no judgement: infrastructure failure, or our statement did not elaborate


class StatementCheck(BaseModel):
    """One trusted command and what Lean said about it (kept in the audit)."""

    kind: str  # vacuity | satisfiability | refutation | witness
    tactic: str
    command: str
    outcome: CheckOutcome
    messages: list[str] = Field(default_factory=list)
    # the backend failed (unavailable, crash, out of memory, the REPL refused, no result): no verdict
    # about the statement, and the run leaves the problem unfinished; a timeout is only undecided
    infrastructure: str | None = None


class StatementFacts(BaseModel):
    """What the checks established about one statement, with every command run."""

    status: str  # vacuous | satisfiable | flagged | undecided (before proving); refuted | not_refuted (after)
    restated_hypothesis: str | None = None  # the binder whose type is the conclusion, syntactically
    derivation: str | None = None  # the command that derived False, or refuted the statement
    witness: dict[str, str] = Field(default_factory=dict)  # pinned values shown satisfiable
    checks: list[StatementCheck] = Field(default_factory=list)
    backend_id: str | None = None
    real_lean: bool = False

    @property
    def vacuous(self) -> bool:
        return self.status == "vacuous"

    @property
    def refuted(self) -> bool:
        return self.status == "refuted"

    @property
    def infrastructure_failure(self) -> str | None:
        """Why the backend gave no verdict on some check (None: every check was answered or timed out)."""
        return next((check.infrastructure for check in self.checks if check.infrastructure), None)


def statement_name(statement: str) -> str:
    """The name the gate elaborates our statement under (:func:`repro.judge.screen.reserved_name`)."""
    return f"{STATEMENT_PREFIX}_{hashlib.sha256(statement.encode('utf-8')).hexdigest()[:16]}"


# -- reading our statement (only to *propose* values; Lean decides every claim) ------------------------


class _Binder(BaseModel):
    names: list[str]
    type_text: str
    bracket: str


def _binder_groups(parsed: Statement) -> list[_Binder] | None:
    """Each binder group as names and type; None when a group is not ``(names : type)``/``{names : type}``."""
    groups = []
    for text in parsed.binders:
        tokens = significant(lex(text))
        if len(tokens) < 4 or tokens[0].text not in ("(", "{") or tokens[-1].text not in (")", "}"):
            return None
        level = depths(tokens)
        colon = next((i for i, t in enumerate(tokens) if level[i] == 1 and t.text == ":"), None)
        if colon is None or colon < 2:
            return None
        names = [t.text for t in tokens[1:colon]]
        if not all(t.kind == Kind.identifier for t in tokens[1:colon]) or "_" in names:
            return None
        type_text = text[tokens[colon].end : tokens[-1].start].strip()
        groups.append(_Binder(names=names, type_text=type_text, bracket=tokens[0].text))
    return groups


def _normal(text: str) -> list[str]:
    tokens = [_SPELLINGS.get(t.text, t.text) for t in significant(lex(text))]
    while len(tokens) >= 2 and tokens[0] == "(" and tokens[-1] == ")" and _wrapped(tokens):
        tokens = tokens[1:-1]
    return tokens


def _wrapped(tokens: list[str]) -> bool:
    depth = 0
    for index, text in enumerate(tokens):
        depth += text in ("(", "[", "{", "⟨")
        depth -= text in (")", "]", "}", "⟩")
        if depth == 0 and index < len(tokens) - 1:
            return False
    return True


def _without_lets(conclusion: str) -> str | None:
    """The conclusion after its leading ``let``/``have`` bindings (None when one cannot be delimited)."""
    text = conclusion.strip()
    for _ in range(100):
        tokens = significant(lex(text))
        if not tokens or tokens[0].text not in ("let", "have", "haveI", "letI"):
            return text
        cut = _binding_end(text, tokens, depths(tokens))
        if cut is None:
            return None
        text = text[cut:].strip()
    return None


_LOOSE = frozenset({"↔", "<->", "fun", "λ", "$", "<|", "|>", "let", "have", ":=", ";", "=>"})


def _conclusion_premises(conclusion: str) -> list[str] | None:
    """The conclusion's own premises (depth-0 ``→`` segments after its leading lets), as Lean groups them.

    None when Lean may group them otherwise than by ``→`` (``↔`` binds looser, ``fun``, ``$``) or when the
    conclusion starts with ``∀``: the caller then claims nothing about them.
    """
    body = _without_lets(conclusion)
    if body is None:
        return None
    tokens = significant(lex(body))
    if not tokens:
        return None
    if tokens[0].text == "(" and tokens[-1].text == ")" and _wrapped([t.text for t in tokens]):
        # `(A → B)` is the same pi type as `A → B`: its premises are the conclusion's own
        return _conclusion_premises(body[tokens[0].end : tokens[-1].start])
    if tokens[0].text in ("∃", "∃!"):
        return []  # everything after the binder's comma is the existential's body
    if tokens[0].text in ("∀", "Π"):
        return None
    level = depths(tokens)
    if any(d == 0 and t.text in _LOOSE for t, d in zip(tokens, level, strict=True)):
        return None
    arrows = [t for t, d in zip(tokens, level, strict=True) if d == 0 and t.text in ("→", "->")]
    starts = [0, *(a.end for a in arrows)]
    return [body[starts[i] : arrows[i].start].strip() for i in range(len(arrows))]


_BINDING = frozenset({"∀", "∃", "∃!", "Π", "Σ", "fun", "λ", "let", "have", "∑", "∏", "⋃", "⋂", "|"})


def restated_hypothesis(parsed: Statement) -> str | None:
    """The hypothesis whose type *is* the final proposition, token for token (None if there is none).

    Syntactic on purpose: Lean's ``assumption`` would also close ``total = 12`` from ``total = 3 * 4``
    (numerals reduce by defeq), which is an honest word problem, not a restated answer. Not judged when
    the conclusion binds names (``∀ x,``, ``let``, ``fun``): its ``x`` may then be another variable than
    the hypothesis' ``x``, and equal text would not be the same proposition.
    """
    if any(t.text in _BINDING for t in significant(lex(parsed.conclusion))):
        return None
    final, _ = final_proposition(parsed.conclusion)
    target = _normal(final)
    if not target:
        return None
    for text in parsed.binders:
        tokens = significant(lex(text))
        colon = next((i for i, t in enumerate(tokens) if t.text == ":"), None)
        if colon is not None and len(tokens) > 2 and _normal(text[tokens[colon].end : tokens[-1].start]) == target:
            return tokens[1].text
    for premise in _conclusion_premises(parsed.conclusion) or []:
        if _normal(premise) == target:
            return premise
    return None


Pins = tuple[list[tuple[str, str]], dict[str, str]]

# A value is written out with the earlier values substituted into it, so a chain ``x₁ = x₀ + x₀``,
# ``x₂ = x₁ + x₁``, ... doubles per variable (a 664-character statement made an 8.4 MB command). Past
# this size nothing is pinned: the statement is not checked for satisfiability (flagged, never refused).
MAX_PINNED_VALUE_CHARS = 2_000


def pinned_values(parsed: Statement) -> Pins | None:
    """The first of :func:`pinned_candidates` (what a refutation instantiates), or None."""
    candidates = pinned_candidates(parsed)
    return candidates[0] if candidates else None


def pinned_candidates(parsed: Statement) -> list[Pins]:
    """The signature's explicit arguments in order, as (kind, name), and values for every variable.

    Empty when some binder is not ``(names : ℕ/ℤ/ℚ/ℝ)`` or an explicit hypothesis, or the conclusion has
    premises of its own. The values come from our own hypotheses: each variable's equation ``x = value``
    (earlier pinned variables substituted), else the one solution of their linear equations
    (:func:`solve_linear`), else up to :data:`MAX_PINNINGS` rational solutions of their polynomial
    equations (:func:`solve_polynomial`: ``l * w = 21`` and ``l + w = 10`` give 3, 7 and 7, 3). These values
    are only proposals: Lean checks every hypothesis at them.
    """
    groups = _binder_groups(parsed)
    if groups is None or _conclusion_premises(parsed.conclusion) != []:
        return []
    arguments: list[tuple[str, str]] = []
    variables: list[str] = []
    kinds: dict[str, str] = {}
    equations: list[tuple[str, list[Token]]] = []
    relations: list[tuple[list[Token], list[Token]]] = []
    for group in groups:
        if group.bracket != "(":
            return []
        kind_tokens = significant(lex(group.type_text))
        if len(kind_tokens) == 1 and kind_tokens[0].text in _VARIABLE_TYPES:
            arguments += [("variable", name) for name in group.names]
            variables += group.names
            kinds.update(dict.fromkeys(group.names, _SPELLINGS.get(kind_tokens[0].text, kind_tokens[0].text)))
            continue
        arguments += [("hypothesis", name) for name in group.names]
        level = depths(kind_tokens)
        equals = [i for i, t in enumerate(kind_tokens) if level[i] == 0 and t.text == "="]
        if len(equals) == 1:
            left, right = kind_tokens[: equals[0]], kind_tokens[equals[0] + 1 :]
            relations.append((left, right))
            if len(left) == 1 and left[0].kind == Kind.identifier:
                equations.append((left[0].text, right))
            elif len(right) == 1 and right[0].kind == Kind.identifier:
                equations.append((right[0].text, left))
    values: dict[str, str] = {}
    for _ in range(len(variables) + 1):
        for name, value_tokens in equations:
            if name not in variables or name in values or not value_tokens:
                continue
            mentioned = {t.text for t in value_tokens if t.kind == Kind.identifier} & set(variables)
            if mentioned <= set(values):
                values[name] = " ".join(f"({values[t.text]})" if t.text in mentioned else t.text for t in value_tokens)
                if len(values[name]) > MAX_PINNED_VALUE_CHARS:
                    return []  # values substituted into values can double per variable: pin nothing
    if set(values) == set(variables):  # a statement with no variables (a let-chain) is applied as it is
        return [(arguments, values)]
    solved = solve_linear(relations, kinds)  # the linear system our own hypotheses state, if it pins all
    if solved is not None and set(solved) == set(variables):
        return [(arguments, solved)]
    return [(arguments, found) for found in solve_polynomial(relations, kinds) if set(found) == set(variables)]


MAX_PINNINGS = 4
_MAX_POLYNOMIAL_VARIABLES = 3
_MAX_POLYNOMIAL_EQUATIONS = 4


def solve_polynomial(relations: list[tuple[list[Token], list[Token]]], kinds: dict[str, str]) -> list[dict[str, str]]:
    """Rational solutions of the hypotheses' polynomial equations (sympy, exact), at most :data:`MAX_PINNINGS`.

    Small systems only (three variables, four equations, degree two): a proposal, which Lean checks.
    """
    if not kinds or len(kinds) > _MAX_POLYNOMIAL_VARIABLES:
        return []
    import sympy

    symbols = {name: sympy.Symbol(f"v{index}") for index, name in enumerate(sorted(kinds))}
    equations = []
    for left, right in relations:
        sides = _polynomial(left, symbols), _polynomial(right, symbols)
        if sides[0] is not None and sides[1] is not None:
            equation = sympy.expand(sides[0] - sides[1])
            if equation != 0 and sympy.Poly(equation, *symbols.values()).total_degree() <= 2:
                equations.append(equation)
    if not equations or len(equations) > _MAX_POLYNOMIAL_EQUATIONS:
        return []
    try:
        solutions = sympy.solve(equations, list(symbols.values()), dict=True)
    except (NotImplementedError, ValueError, TypeError):
        return []
    found: list[dict[str, str]] = []
    for solution in solutions:
        values: dict[str, str] = {}
        for name, symbol in symbols.items():
            value = solution.get(symbol)
            if value is None or not value.is_rational:
                break
            number = Fraction(int(value.p), int(value.q))
            if kinds[name] in ("ℕ", "ℤ") and number.denominator != 1 or (kinds[name] == "ℕ" and number < 0):
                break
            values[name] = _fraction_text(number)
        else:
            found.append(values)
    return sorted(found, key=lambda values: [values[name] for name in sorted(values)])[:MAX_PINNINGS]


def _fraction_text(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator} / {value.denominator}"


def _polynomial(tokens: list[Token], symbols: dict[str, Any]) -> Any:
    """``l * w``, ``x ^ 2 + 3 * x`` as a sympy expression (numerals exact), or None for anything else."""
    import sympy

    text: list[str] = []
    for token in tokens:
        if token.kind == Kind.number and _DECIMAL_LITERAL.fullmatch(token.text):
            text.append(f"Rational('{token.text}')")
        elif token.kind == Kind.identifier and token.text in symbols:
            text.append(str(symbols[token.text]))
        elif token.text in ("+", "-", "*", "/", "(", ")"):
            text.append(token.text)
        elif token.text == "^":
            text.append("**")
        else:
            return None
    try:
        return sympy.sympify(
            " ".join(text), locals={"Rational": sympy.Rational, **{str(s): s for s in symbols.values()}}
        )
    except (sympy.SympifyError, SyntaxError, TypeError, ZeroDivisionError):
        return None


def solve_linear(relations: list[tuple[list[Token], list[Token]]], kinds: dict[str, str]) -> dict[str, str] | None:
    """The one solution of the hypotheses' linear equations in the variables (exact rationals), or None.

    ``3 * a + 2 * b = 5`` and ``a + b = 2`` pin ``a = 1, b = 1``. Equations that are not linear are left out;
    the solution must be unique, and whole (and not negative for ℕ) where the variable is ℕ or ℤ. Only a
    proposal: Lean then checks every hypothesis at these values (ℕ's truncated ``-`` included).
    """
    rows: list[dict[str, Fraction]] = []
    for left, right in relations:
        forms = _linear_form(left, kinds), _linear_form(right, kinds)
        if forms[0] is not None and forms[1] is not None:
            row = dict(forms[0])
            for name, coefficient in forms[1].items():
                row[name] = row.get(name, Fraction(0)) - coefficient
            rows.append(row)
    names = sorted(kinds)
    solution = _gauss(rows, names)
    if solution is None:
        return None
    values: dict[str, str] = {}
    for name, value in solution.items():
        if kinds[name] in ("ℕ", "ℤ") and value.denominator != 1 or (kinds[name] == "ℕ" and value < 0):
            return None
        values[name] = _fraction_text(value)
    return values


def _gauss(rows: list[dict[str, Fraction]], names: list[str]) -> dict[str, Fraction] | None:
    """Gaussian elimination over the rationals (``""`` is the constant term): the unique solution, or None."""
    matrix = [[row.get(name, Fraction(0)) for name in names] + [-row.get("", Fraction(0))] for row in rows]
    pivots: list[int] = []
    for column in range(len(names)):
        rank = len(pivots)
        pivot = next((r for r in range(rank, len(matrix)) if matrix[r][column] != 0), None)
        if pivot is None:
            return None  # a variable the equations leave free
        matrix[rank], matrix[pivot] = matrix[pivot], matrix[rank]
        lead = matrix[rank][column]
        matrix[rank] = [entry / lead for entry in matrix[rank]]
        for other in range(len(matrix)):
            if other != rank and matrix[other][column] != 0:
                factor = matrix[other][column]
                matrix[other] = [a - factor * b for a, b in zip(matrix[other], matrix[rank], strict=True)]
        pivots.append(column)
    if any(all(entry == 0 for entry in row[:-1]) and row[-1] != 0 for row in matrix):
        return None  # inconsistent: no solution (vacuity is for the other checks to find)
    return {names[column]: matrix[index][-1] for index, column in enumerate(pivots)}


def _linear_form(tokens: list[Token], kinds: dict[str, str]) -> dict[str, Fraction] | None:
    """``3 * a + b / 2 - 7`` as coefficients per variable (``""``: the constant); None when not linear."""
    position = 0

    def peek() -> str:
        return tokens[position].text if position < len(tokens) else ""

    def expression() -> dict[str, Fraction]:
        nonlocal position
        total = term()
        while peek() in ("+", "-"):
            sign = 1 if tokens[position].text == "+" else -1
            position += 1
            total = _combine(total, term(), sign)
        return total

    def term() -> dict[str, Fraction]:
        nonlocal position
        total = factor()
        while peek() in ("*", "/"):
            operator = tokens[position].text
            position += 1
            other = factor()
            if operator == "*" and set(total) <= {""}:
                total = {k: v * total.get("", Fraction(0)) for k, v in other.items()}
            elif set(other) <= {""} and other.get("", Fraction(0)) != 0:
                scale = other[""] if operator == "*" else 1 / other[""]
                total = {k: v * scale for k, v in total.items()}
            else:
                raise ValueError("not linear")
        return total

    def factor() -> dict[str, Fraction]:
        nonlocal position
        if position >= len(tokens):
            raise ValueError("end")
        token = tokens[position]
        position += 1
        if token.text == "-":
            return {k: -v for k, v in factor().items()}
        if token.text == "↑":
            return factor()
        if token.kind == Kind.number and _DECIMAL_LITERAL.fullmatch(token.text):
            return {"": Fraction(token.text)}
        if token.kind == Kind.identifier and token.text in kinds:
            return {token.text: Fraction(1)}
        if token.text == "(":
            inner = expression()
            if peek() == ":":  # an ascription to one of the numeric types
                position += 1
                if peek() not in _VARIABLE_TYPES:
                    raise ValueError("ascription")
                position += 1
            if peek() != ")":
                raise ValueError("bracket")
            position += 1
            return inner
        raise ValueError(f"token {token.text!r}")

    try:
        form = expression()
    except (ValueError, ZeroDivisionError):
        return None
    return form if position == len(tokens) else None


_DECIMAL_LITERAL = re.compile(r"[0-9]+(?:\.[0-9]+)?")


def _combine(first: dict[str, Fraction], second: dict[str, Fraction], sign: int) -> dict[str, Fraction]:
    out = dict(first)
    for name, value in second.items():
        out[name] = out.get(name, Fraction(0)) + sign * value
    return out


def _pinned_arguments(arguments: list[tuple[str, str]], values: dict[str, str]) -> str:
    return " ".join(f"({values[name]})" if kind == "variable" else f"({PIN_DISCHARGE})" for kind, name in arguments)


# -- commands -----------------------------------------------------------------------------------------


def declaration_command(parsed: Statement, name: str, *, auto_implicit: bool = True) -> str:
    """Our statement under ``name`` (as the gate's step 0; ``autoImplicit false`` for the pinned copy)."""
    prefix = "" if auto_implicit else "set_option autoImplicit false in\n"
    # `:=` on its own line: a signature may end in a line comment (`x = 5 -- the answer`)
    return f"{prefix}theorem {name} {parsed.signature}\n    := by sorry"


def vacuity_command(name: str, tactic: str, names: list[str] | None = None) -> str:
    """``intros; exfalso; TAC``; with ``names``, the signature's binders are introduced under their own names
    first (so a hint can name a variable), then the conclusion's own premises."""
    named = f"  intro {' '.join(names)}\n" if names else ""
    return f"example : type_of% @{name} := by\n{named}  intros\n  exfalso\n  {tactic}"


def vacuity_commands(parsed: Statement, name: str) -> list[tuple[str, str, str]]:
    """The vacuity battery: linear and simplifying tactics, then nlinarith with square hints over the
    signature's variables, then positivity against a hypothesis that puts a non-negative term below 0."""
    commands = [("vacuity", tactic, vacuity_command(name, tactic)) for tactic in VACUITY_TACTICS]
    introduced = _intro_names(parsed)
    if introduced is None:
        return commands
    names, variables = introduced
    if variables:
        chosen = variables[:MAX_HINT_VARIABLES]
        hints = [f"sq_nonneg {v}" for v in chosen]
        operators = "-+" if len(chosen) <= 2 else "-"
        hints += [
            f"sq_nonneg ({a} {op} {b})" for i, a in enumerate(chosen) for b in chosen[i + 1 :] for op in operators
        ]
        tactic = f"nlinarith [{', '.join(hints)}]"
        commands.append(("vacuity", tactic, vacuity_command(name, tactic, names)))
    for term in _below_zero_terms(parsed)[:MAX_POSITIVITY_CHECKS]:
        tactic = f"have hrepro_pos : 0 ≤ ({term}) := by positivity\n  linarith"
        commands.append(("vacuity", tactic, vacuity_command(name, tactic, names)))
    return commands


def _intro_names(parsed: Statement) -> tuple[list[str], list[str]] | None:
    """The signature's binder names in order (``_`` for an anonymous instance), and its numeric variables."""
    names: list[str] = []
    variables: list[str] = []
    for text in parsed.binders:
        tokens = significant(lex(text))
        if len(tokens) < 3 or tokens[0].text not in ("(", "{", "[", "⦃", "{{"):
            return None
        level = depths(tokens)
        colon = next((i for i, t in enumerate(tokens) if level[i] == 1 and t.text == ":"), None)
        if colon is None:
            if tokens[0].text != "[":
                return None
            names.append("_")
            continue
        group = tokens[1:colon]
        if not group or any(t.kind != Kind.identifier for t in group):
            return None
        names += [t.text for t in group]
        type_tokens = [t.text for t in tokens[colon + 1 : -1]]
        if type_tokens[:1] and type_tokens[0] in _VARIABLE_TYPES and (len(type_tokens) == 1 or type_tokens[1] == ":="):
            variables += [t.text for t in group]
    return names, variables


def _below_zero_terms(parsed: Statement) -> list[str]:
    """Left sides of hypotheses ``L = c``, ``L < c``, ``L ≤ c`` with c a negative literal (or ``L < 0``)."""
    found = []
    for text in parsed.binders:
        tokens = significant(lex(text))
        level = depths(tokens)
        colon = next((i for i, t in enumerate(tokens) if level[i] == 1 and t.text == ":"), None)
        if colon is None or tokens[0].text != "(":
            continue
        body = tokens[colon + 1 : -1]
        inner = depths(body)
        relations = [i for i, t in enumerate(body) if inner[i] == 0 and t.text in ("=", "<", "≤", "<=")]
        if len(relations) != 1:
            continue
        cut = relations[0]
        right = "".join(t.text for t in body[cut + 1 :])
        negative = re.fullmatch(r"-[0-9]+(?:\.[0-9]+)?", right) is not None
        if negative or (right == "0" and body[cut].text == "<"):
            found.append(text[body[0].start : body[cut].start].strip())
    return found


def satisfiability_command(pinned_name: str, arguments: list[tuple[str, str]], values: dict[str, str]) -> str:
    return f"example := @{pinned_name} {_pinned_arguments(arguments, values)}".rstrip()


def refutation_command(name: str, tactic: str, pinned: Pins | None) -> str:
    if pinned is None:
        return f"example : ¬ type_of% @{name} := by\n  {tactic}"
    arguments, values = pinned
    return f"example : ¬ type_of% @{name} := fun h => absurd (h {_pinned_arguments(arguments, values)}) (by {tactic})"


def witness_command(name: str, witness: list[str], tactic: str) -> str:
    parts = ", ".join(f"({w.strip()})" for w in witness)
    return f"example : type_of% @{name} := by\n  intros\n  exact ⟨{parts}, by {tactic}⟩"


def is_numeric_literal(text: str) -> bool:
    """Only such text from a model ever enters a trusted command (no identifier, no bracket to escape)."""
    return "\n" not in text and bool(_NUMERIC.match(text.strip()))


# What an ∃ body may be made of, at every depth (a conjunction of relations between terms): no premise,
# disjunction, negation, binder or branch can then make it hold at a witness that is no answer
# (``∃ n, (n > 5 → n * 3 = 21)`` holds at 0; so do ``(n < 0 ∨ ...)``, ``¬ (...)``, ``if``, a nested ``∃``).
_BODY_SYMBOLS = frozenset(
    {"(", ")", "+", "-", "*", "/", "%", "^", "=", "<", "≤", ">", "≥", "≠", "<=", ">=", "∧", "/\\", "↑", "|"}
    | {"!", "⁻¹", "√", "∣", "⌊", "⌋", "⌈", "⌉", "⌊₊", "⌋₊", "⌈₊", "⌉₊", "·"}
)
_BODY_WORDS = frozenset(
    {"Not", "Or", "Iff", "Xor'", "xor", "ite", "dite", "if", "then", "else", "fun", "λ", "match", "with", "let"}
    | {"have", "show", "from", "by", "decide", "True", "False", "true", "false", "Exists", "ExistsUnique"}
    | {"Classical.choice", "Classical.choose", "choose", "sorry", "admit", "Function.const", "id", "cast"}
)
_WITNESS_FORMS = {
    "ℕ": re.compile(r"^\d+$"),
    "ℤ": re.compile(r"^[-+]?\d+$"),
    **dict.fromkeys(("ℚ", "ℝ"), re.compile(r"^-?\d+(?:\.\d+|/[1-9]\d*)?$")),
}


def witness_variables(statement: str) -> list[tuple[str, str]] | None:
    """The ``∃`` variables (name, ℕ/ℤ/ℚ/ℝ) of a conclusion a numeric witness can be checked against.

    None (no witness is asked for, none is checked) unless: the conclusion, after ``let NAME : T := v``
    bindings and redundant parentheses, is itself ``∃ x y : T, body`` / ``∃ (x : T) (y : U), body`` with
    each type written in our statement as ℕ, ℤ, ℚ or ℝ; the whole body, at every depth, is a conjunction
    of relations between terms (no ``→``, ``∨``, ``↔``, ``¬``, ``if``, binder or nested ``∃`` anywhere in it,
    adversary S3: ``∃ n, n > 5 → n = 7`` holds at ``0``, and so does ``∃ n, (n > 5 → n = 7)``); and the
    signature leaves numerals their meaning (no binder
    named like a type, no local that may be a class instance:
    :func:`repro.lean.text.answer_scope.answer_scope`). Round 4, A5: the witness's type decides which
    literals it may be (``7/2`` is 3 in ℕ), so a witness whose type we cannot read is never checked.
    """
    try:
        parsed = read_statement(statement)
    except StatementError:
        return None
    scope = answer_scope(parsed.binders, parsed.conclusion)
    if scope is None:
        return None
    proposition = unwrapped(scope.proposition)
    tokens = significant(lex(proposition))
    level = depths(tokens)
    comma = next((i for i, t in enumerate(tokens) if level[i] == 0 and t.text == ","), None)
    if comma is None or not _relations_only(tokens[comma + 1 :]):
        return None
    return existential_variables(proposition)


def _relations_only(body: list[Token]) -> bool:
    """Whether an ∃ body is, at every depth, made of terms, relations and ``∧`` only (``_BODY_SYMBOLS``)."""
    if not body or not any(t.text in ("=", "<", "≤", ">", "≥", "≠", "<=", ">=", "∣") for t in body):
        return False
    for token in body:
        if token.kind == Kind.number:
            continue
        if token.kind == Kind.identifier:
            if token.name in _BODY_WORDS:
                return False
            continue
        if token.kind != Kind.symbol or token.text not in _BODY_SYMBOLS:
            return False
    return True


# how our command proves that the ∃ body pins each witness component (red2 R2-5): linear arithmetic over
# ℕ ℤ (omega) or ordered fields (linarith), then nlinarith; a body these cannot show pins its value gives none
UNIQUE_TACTICS = ("omega", "linarith", "nlinarith")


def unique_commands(statement: str, witness: list[str]) -> list[tuple[str, str, str]] | None:
    """Our commands proving that every value satisfying the ∃ body is the witness, one component at a time:
    ``example BINDERS : ∀ x : T, ∀ y : U, (P₁) → (P₂) → x = (w₁) := by intros; TAC`` (and ``y = (w₂)``), the
    body's conjuncts ``P₁ ∧ P₂`` each a premise.

    Red2 R2-5: the body of ``∃ n : ℕ, n % 7 = 3 ∧ n > 20`` holds at 24, 31, 38, ...: a witness Lean accepts is
    *a* value, not *the* answer, unless Lean also proves that it is the only one. None (no command, so no
    answer) when the statement is not a witness statement, binds ``let``s before its ∃ (the body's names would
    need them), or a part is not a literal of its type.
    """
    variables = witness_variables(statement)
    if variables is None or len(witness) != len(variables):
        return None
    normal = [normal_witness(w, kind) for w, (_, kind) in zip(witness, variables, strict=True)]
    if any(n is None for n in normal):
        return None
    try:
        parsed = read_statement(statement)
    except StatementError:
        return None
    scope = answer_scope(parsed.binders, parsed.conclusion)
    if scope is None or scope.lets:
        return None
    proposition = unwrapped(scope.proposition)
    tokens = significant(lex(proposition))
    level = depths(tokens)
    comma = next((i for i, t in enumerate(tokens) if level[i] == 0 and t.text == ","), None)
    if comma is None:
        return None
    # the body's conjuncts as premises of their own (``P₁ → P₂ → x = w``): ``intros`` then gives linarith each
    # conjunct as a hypothesis (linarith reads comparisons among the hypotheses, and splits no ∧; Mathlib
    # ``Mathlib/Tactic/Linarith/Frontend.lean``)
    conjuncts, start = [], comma + 1
    for index in range(comma + 1, len(tokens) + 1):
        if index == len(tokens) or (level[index] == 0 and tokens[index].text in ("∧", "/\\")):
            if index == start:
                return None
            conjuncts.append(proposition[tokens[start].start : tokens[index - 1].end].strip())
            start = index + 1
    premises = "".join(f"({conjunct}) → " for conjunct in conjuncts)
    binders = "".join(f" {binder}" for binder in parsed.binders)
    quantified = "".join(f"∀ {name} : {kind}, " for name, kind in variables)
    commands = []
    for (name, _), value in zip(variables, normal, strict=True):
        for tactic in UNIQUE_TACTICS:
            command = f"example{binders} :\n    {quantified}{premises}{name} = ({value}) := by\n  intros\n  {tactic}"
            commands.append(("uniqueness", tactic, command))
    return commands


async def check_unique(statement: str, witness: list[str], verifier: Verifier, *, header: str) -> StatementCheck:
    """Whether Lean proves the witness is the only value of the ∃ body (every component, some tactic each):
    ``proved`` only then; ``undecided`` when Lean gave no verdict on a component none proved."""
    commands = unique_commands(statement, witness)
    if commands is None:
        return StatementCheck(
            kind="uniqueness",
            tactic="",
            command="",
            outcome=CheckOutcome.failed,
            messages=["no uniqueness command for this statement (a let before the ∃, or no witness statement)"],
        )
    parsed = read_statement(statement)
    checks, _ = await _run(verifier, header, commands, [declaration_command(parsed, statement_name(statement))])
    per_component = len(UNIQUE_TACTICS)
    proved: list[StatementCheck] = []
    undecided = False
    for start in range(0, len(checks), per_component):
        group = checks[start : start + per_component]
        found = next((c for c in group if c.outcome == CheckOutcome.proved), None)
        if found is None:
            undecided = undecided or any(c.outcome == CheckOutcome.undecided for c in group)
            return StatementCheck(
                kind="uniqueness",
                tactic=",".join(UNIQUE_TACTICS),
                command=group[0].command if group else "",
                outcome=CheckOutcome.undecided if undecided else CheckOutcome.failed,
                messages=[m for c in group for m in c.messages][:5],
            )
        proved.append(found)
    return StatementCheck(
        kind="uniqueness",
        tactic=",".join(c.tactic for c in proved),
        command="\n\n".join(c.command for c in proved),
        outcome=CheckOutcome.proved if proved else CheckOutcome.failed,
    )


def normal_witness(text: str, type_name: str) -> str | None:
    """The witness in normal form for its type, or None when it is not a literal of that type.

    ℕ: digits; ℤ: digits with a sign; ℚ/ℝ: also a fraction ``a/b`` or a decimal, released reduced
    (``6/4`` and ``1.5`` are ``3 / 2``). The normal form, not the model's text, goes into our Lean
    command and into the release, so what Lean proved is what is released.
    """
    compact = "".join(text.split())
    if "\n" in text or not _WITNESS_FORMS[type_name].match(compact):
        return None
    value = Fraction(compact)
    if value.denominator == 1:
        return str(value.numerator)
    return f"{value.numerator} / {value.denominator}"


# -- running ------------------------------------------------------------------------------------------


def check_outcome(result: LeanResult, statement_ok: bool) -> CheckOutcome:
    if not statement_ok or result.infra_status != InfraStatus.ok:
        return CheckOutcome.undecided
    sorry_warning = any(
        "declaration uses 'sorry'" in m.text or "declaration uses `sorry`" in m.text for m in result.messages
    )
    if result.has_error or result.sorries or sorry_warning:
        return CheckOutcome.failed
    return CheckOutcome.proved


def elaborated_ok(result: LeanResult) -> bool:
    return result.infra_status == InfraStatus.ok and not result.has_error


async def _run(
    verifier: Verifier, header: str, commands: list[tuple[str, str, str]], declarations: list[str]
) -> tuple[list[StatementCheck], bool]:
    """Our declarations, then each (kind, tactic, command) in their environment; also whether ours elaborated.

    A check counts only if the declaration it names elaborated without error: with an error Lean may
    still add the declaration, with ``sorry`` in its type, and anything would follow from that.
    """
    results = await verifier.check_sequence([*declarations, *(c for _, _, c in commands)], header)
    statement_ok = bool(results) and elaborated_ok(results[0])
    pinned_ok = len(declarations) < 2 or (len(results) > 1 and elaborated_ok(results[1]))
    # our own declarations got no answer: no check in their environment has a verdict either
    declared = results[: len(declarations)]
    unanswered = len(declared) < len(declarations) or any(
        result.infra_status not in (InfraStatus.ok, InfraStatus.timeout) for result in declared
    )
    checks = []
    for index, (kind, tactic, command) in enumerate(commands):
        position = len(declarations) + index
        if position >= len(results):
            checks.append(
                StatementCheck(
                    kind=kind,
                    tactic=tactic,
                    command=command,
                    outcome=CheckOutcome.undecided,
                    messages=["no result: the Lean sequence ended early"],
                    infrastructure=InfraStatus.unavailable.value,
                )
            )
            continue
        result = results[position]
        elaborated = statement_ok and (pinned_ok or kind != "satisfiability")
        messages = [m.text.splitlines()[0] if m.text else "" for m in result.messages][:3]
        if result.infra_status != InfraStatus.ok:
            messages.append(f"{result.infra_status}: {result.detail or ''}")
        failed = unanswered or result.infra_status not in (InfraStatus.ok, InfraStatus.timeout)
        checks.append(
            StatementCheck(
                kind=kind,
                tactic=tactic,
                command=command,
                outcome=check_outcome(result, elaborated),
                messages=messages,
                infrastructure=(result.infra_status.value if result.infra_status != InfraStatus.ok else "unavailable")
                if failed
                else None,
            )
        )
    return checks, statement_ok


def _facts(status: str, verifier: Verifier | None = None, **values: object) -> StatementFacts:
    backend = {"backend_id": verifier.backend_id, "real_lean": verifier.real_lean} if verifier else {}
    return StatementFacts.model_validate({"status": status, **backend, **values})


async def check_statement(statement: str, verifier: Verifier, *, header: str) -> StatementFacts:
    """Before proving: restated conclusion, vacuity, and (where every variable is pinned) satisfiability."""
    try:
        parsed = read_statement(statement)
    except StatementError as error:
        return _facts("undecided", derivation=f"unusable statement: {error}")
    restated = restated_hypothesis(parsed)
    if restated is not None:
        return _facts(
            "vacuous",
            verifier,
            restated_hypothesis=restated,
            derivation=f"the conclusion is, token for token, the hypothesis {restated}",
        )
    name = statement_name(statement)
    commands = vacuity_commands(parsed, name)
    declarations = [declaration_command(parsed, name)]
    pinnings = pinned_candidates(parsed)
    if pinnings:
        declarations.append(declaration_command(parsed, name + "_pinned", auto_implicit=False))
    for pinned in pinnings:
        commands.append(("satisfiability", PIN_DISCHARGE, satisfiability_command(name + "_pinned", *pinned)))
    checks, statement_ok = await _run(verifier, header, commands, declarations)
    derived = next((c for c in checks if c.kind == "vacuity" and c.outcome == CheckOutcome.proved), None)
    satisfying = [c for c in checks if c.kind == "satisfiability"]
    satisfied = next((p for p, c in zip(pinnings, satisfying, strict=True) if c.outcome == CheckOutcome.proved), None)
    if derived is not None:
        return _facts("vacuous", verifier, derivation=derived.command, checks=checks)
    if satisfied is not None:
        return _facts("satisfiable", verifier, witness=satisfied[1], checks=checks)
    decided = statement_ok and all(c.outcome != CheckOutcome.undecided for c in checks)
    return _facts("flagged" if decided else "undecided", verifier, checks=checks)


async def refute_statement(statement: str, verifier: Verifier, *, header: str) -> StatementFacts:
    """After every sample failed: try to prove the negation of our statement (no model call)."""
    try:
        parsed = read_statement(statement)
    except StatementError as error:
        return _facts("undecided", derivation=f"unusable statement: {error}")
    name = statement_name(statement)
    pinned = pinned_values(parsed)
    commands = [("refutation", tactic, refutation_command(name, tactic, None)) for tactic in REFUTATION_TACTICS]
    if pinned is not None:
        commands += [("refutation", tactic, refutation_command(name, tactic, pinned)) for tactic in REFUTATION_TACTICS]
    checks, statement_ok = await _run(verifier, header, commands, [declaration_command(parsed, name)])
    refuting = next((c for c in checks if c.outcome == CheckOutcome.proved), None)
    if refuting is not None:
        return _facts("refuted", verifier, derivation=refuting.command, checks=checks)
    decided = statement_ok and all(c.outcome != CheckOutcome.undecided for c in checks)
    return _facts("not_refuted" if decided else "undecided", verifier, checks=checks)


async def check_witness(statement: str, witness: list[str], verifier: Verifier, *, header: str) -> StatementCheck:
    """Prove our statement with the proposed witness: the check that proved it, else a failed/undecided one.

    Raises ValueError when the statement has no ∃ whose variables' types we read
    (:func:`witness_variables`) or a witness part is not a literal of its variable's type
    (:func:`normal_witness`): such text never reaches Lean. The command uses the normal forms.
    """
    variables = witness_variables(statement)
    if variables is None:
        raise ValueError("the statement has no ∃ with numeric variable types to check a witness against")
    if len(witness) != len(variables):
        raise ValueError(f"a witness needs {len(variables)} numeric literals, got {len(witness)}: {witness!r}")
    normal = [normal_witness(w, kind) for w, (_, kind) in zip(witness, variables, strict=True)]
    if any(n is None for n in normal):
        raise ValueError(f"a witness must be numeric literals of the ∃ variables' types {variables!r}: {witness!r}")
    witness = [n for n in normal if n is not None]
    parsed = read_statement(statement)
    name = statement_name(statement)
    commands = [("witness", tactic, witness_command(name, witness, tactic)) for tactic in WITNESS_TACTICS]
    checks, _ = await _run(verifier, header, commands, [declaration_command(parsed, name)])
    proved = next((c for c in checks if c.outcome == CheckOutcome.proved), None)
    if proved is not None:
        return proved
    undecided = any(c.outcome == CheckOutcome.undecided for c in checks)
    return StatementCheck(
        kind="witness",
        tactic=",".join(WITNESS_TACTICS),
        command=checks[0].command if checks else "",
        outcome=CheckOutcome.undecided if undecided else CheckOutcome.failed,
        messages=[m for c in checks for m in c.messages][:5],
    )
