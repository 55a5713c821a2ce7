"""What the fake REPL knows about mathematics: enough to refuse a proof real Lean would refuse.

The fake REPL (:mod:`repro.lean.fake_repl`) used to accept any proof body without ``sorry``. That made
every test of a *re-spliced* statement meaningless: a prover body that proves another target would
have been "verified" against ours. This module gives the fake the few facts real Lean enforces that
such tests need, on word-problem statements (variables pinned by ``h : x = v`` hypotheses or ``let``
bindings, an arithmetic conclusion over ℕ, ℤ, ℚ or ℝ):

1. A false statement has no proof: if every hypothesis holds for the pinned values and the
   conclusion evaluates false, Lean reports unsolved goals.
2. A hypothesis name the body uses must exist: one bound neither by the signature nor by the body
   (``intro``, ``have``, ``obtain``, ...) is an unknown identifier.
3. Closing tactics see hypotheses only when told: a conclusion over hypothesis-pinned variables is
   not closed by ``norm_num``/``simp``/``rfl``/``decide`` unless the body names a hypothesis or uses a
   tactic that reads the context (``omega``, ``linarith``, ``simp_all``, ``subst_vars``, ``aesop``...).
4. ``Or.inl``/``Or.inr`` and the term ``trivial`` prove only a disjunction and ``True``.
5. A tactic block with no tactic that can close a goal (only ``subst``, ``intro``, ``unfold``...)
   leaves the goal unsolved.

Anything outside that shape (quantifiers, functions, sums, real analysis) gets no objection: the fake
is a protocol stand-in, never a checker, and nothing it says is a real verdict.
"""

from __future__ import annotations

import re
from fractions import Fraction

from repro.lean.text import Kind, StatementError, Token, depths, lex, read_statement, significant

_TYPES = {"ℕ": "nat", "Nat": "nat", "ℤ": "int", "Int": "int", "ℚ": "rat", "Rat": "rat", "ℝ": "real", "Real": "real"}
_COMPARISONS = {"=", "≠", "!=", "<", "≤", "<=", ">", "≥", ">="}
# names provers give hypotheses: h, h₀, h1, h_1, h_sold, hx, hab' (not words such as ``have``)
_HYPOTHESIS_NAME = re.compile(r"^h(?:[0-9₀-₉'_][\w₀-₉']*|[a-zA-Z]{1,3}[0-9₀-₉']*)?$")
_NOT_HYPOTHESES = frozenset({"have", "haveI", "hint"})
_BINDING_TACTICS = frozenset(
    {"intro", "intros", "rintro", "obtain", "rcases", "have", "haveI", "set", "with", "fun", "λ", "cases'", "case"}
    | {"by_contra", "by_contra!", "induction", "generalize", "choose", "let", "next", "rename_i", "by_cases"}
)
_CONTEXT_TACTICS = frozenset(
    {
        "omega",
        "linarith",
        "nlinarith",
        "simp_all",
        "subst_vars",
        "aesop",
        "assumption",
        "tauto",
        "positivity",
        "polyrith",
        "norm_num!",
        "field_simp",
        "*",
    }
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
_BINDING_STOPS = frozenset({":", ":=", "=>", "[", "at", "using", ";", "<;>", "←", "("})
_CLOSERS_NEEDING_HYPOTHESES = "unsolved goals (fake REPL: the goal needs a hypothesis the proof never uses)"


class _Unknown(Exception):
    """The fake cannot evaluate this: it raises no objection."""


Value = tuple[Fraction, str | None]  # a value and its number type (None: a literal, not yet typed)


def proof_objection(declaration: str) -> str | None:
    """Why real Lean would refuse this ``theorem NAME SIG := BODY`` command, or None (no objection known)."""
    tokens = significant(lex(declaration))
    level = depths(tokens)
    assign = _assign_index(tokens, level)
    if assign is None:
        return None
    header, body = declaration[: tokens[assign].start], declaration[tokens[assign].end :]
    try:
        statement = read_statement(header + " := by sorry")
    except StatementError:
        return None
    body_tokens = significant(lex(body))
    body_names = [t.text for t in body_tokens if t.kind == Kind.identifier]
    variables, hypotheses = _binders(statement.binders)
    bound = set(hypotheses) | _bound_in_body(body, body_tokens)
    unknown = [
        n
        for n in body_names
        if _HYPOTHESIS_NAME.match(n) and n not in _NOT_HYPOTHESES and n not in bound and n not in variables
    ]
    if unknown:
        return f"unknown identifier '{unknown[0]}'"
    conclusion, lets = _strip_lets(statement.conclusion)
    if conclusion is None:
        return None
    if body_tokens[:1] and body_tokens[0].text == "by" and not any(t.text in _CLOSERS for t in body_tokens):
        return "unsolved goals (fake REPL: no tactic of the proof closes the goal)"
    mismatch = _term_head_mismatch(body_tokens, conclusion)
    if mismatch:
        return mismatch
    try:
        env = _pin(variables, hypotheses, lets)
        if any(not _holds(text, env) for text in hypotheses.values()):
            return None  # contradictory hypotheses: anything follows (vacuity is another check's business)
        truth = _holds(conclusion, env)
    except _Unknown:
        return None
    if not truth:
        return "unsolved goals (fake REPL: the statement is false for the values its hypotheses pin)"
    pinned_by_hypothesis = [v for v in variables if v in env and v not in lets]
    uses_context = any(name in hypotheses or name in _CONTEXT_TACTICS for name in body_names) or any(
        t.text in _CONTEXT_TACTICS for t in body_tokens
    )
    mentioned = {t.text for t in significant(lex(conclusion)) if t.kind == Kind.identifier}
    if pinned_by_hypothesis and not uses_context and mentioned & set(pinned_by_hypothesis):
        return _CLOSERS_NEEDING_HYPOTHESES
    return None


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


def _binders(binders: list[str]) -> tuple[dict[str, str | None], dict[str, str]]:
    """(variables with their number type, hypotheses with their proposition) of the signature."""
    variables: dict[str, str | None] = {}
    hypotheses: dict[str, str] = {}
    for group in binders:
        inner = group[1:-1] if group[:1] in "({[⦃" else group
        if ":" not in inner:
            continue
        names, _, kind = inner.partition(":")
        kind = kind.strip()
        for name in names.split():
            if kind in _TYPES:
                variables[name] = _TYPES[kind]
            elif any(op in kind for op in _COMPARISONS):
                hypotheses[name] = kind
    return variables, hypotheses


def _bound_in_body(body: str, tokens: list[Token]) -> set[str]:
    """Names the body introduces: those after a binding tactic on its line, up to ``:``/``:=``/``=>``.

    An over-approximation (``cases' h with a b`` also marks ``h``): the fake then objects less, never more.
    """
    bound: set[str] = set()
    for index, token in enumerate(tokens):
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


def _strip_lets(conclusion: str) -> tuple[str | None, dict[str, tuple[str | None, str]]]:
    """The conclusion after its leading ``let`` bindings, and the bindings (type, value text)."""
    lets: dict[str, tuple[str | None, str]] = {}
    text = conclusion.strip()
    pattern = re.compile(r"^let\s+(\S+)\s*(?::\s*([^:=]+?))?\s*:=\s*([^\n;]+)[\n;]\s*", re.DOTALL)
    while (match := pattern.match(text)) is not None:
        name, kind, value = match.group(1), match.group(2), match.group(3).strip()
        lets[name] = (_TYPES.get(kind.strip()) if kind else None, value)
        text = text[match.end() :].strip()
    if text.startswith(("∀", "∃", "let", "have", "fun")) or "→" in text or "->" in text:
        return None, lets
    return text, lets


def _term_head_mismatch(body: list[Token], conclusion: str) -> str | None:
    heads = [t.text for t in body[:6]]
    top = {t.text for t, d in zip(*_with_depths(conclusion), strict=True) if d == 0}
    if any(head in ("Or.inl", "Or.inr") for head in heads) and "∨" not in top:
        return "type mismatch (fake REPL: Or.inl/Or.inr proves a disjunction)"
    if heads in (["trivial"], ["by", "exact", "trivial"]) and conclusion.strip() != "True":
        return "type mismatch (fake REPL: the term trivial proves True)"
    return None


def _with_depths(text: str) -> tuple[list[Token], list[int]]:
    tokens = significant(lex(text))
    return tokens, depths(tokens)


def _pin(
    variables: dict[str, str | None], hypotheses: dict[str, str], lets: dict[str, tuple[str | None, str]]
) -> dict[str, Value]:
    """Values of the variables: ``let`` values and ``h : x = e`` hypotheses, repeated until nothing changes."""
    env: dict[str, Value] = {}
    for name, (kind, value) in lets.items():
        number, value_kind = _evaluate(value, env)
        env[name] = (_cast(number, kind or value_kind or "nat"), kind or value_kind or "nat")
    for _ in range(len(hypotheses) + 1):
        changed = False
        for proposition in hypotheses.values():
            left, symbol, right = _split_comparison(proposition)
            if symbol != "=" or left not in variables or left in env:
                continue
            try:
                number, _ = _evaluate(right, env)
            except _Unknown:
                continue
            env[left] = (_cast(number, variables[left]), variables[left])
            changed = True
        if not changed:
            break
    return env


def _split_comparison(text: str) -> tuple[str, str, str]:
    tokens, level = _with_depths(text)
    found = [t for t, d in zip(tokens, level, strict=True) if d == 0 and t.text in _COMPARISONS]
    if len(found) != 1:
        raise _Unknown(text)
    return text[: found[0].start].strip(), found[0].text, text[found[0].end :].strip()


def _holds(proposition: str, env: dict[str, Value]) -> bool:
    tokens, level = _with_depths(proposition)
    for connective, combine in (("∨", any), ("∧", all)):
        parts = [t for t, d in zip(tokens, level, strict=True) if d == 0 and t.text == connective]
        if parts:
            pieces, cursor = [], 0
            for token in parts:
                pieces.append(proposition[cursor : token.start])
                cursor = token.end
            pieces.append(proposition[cursor:])
            return combine(_holds(piece, env) for piece in pieces)
    if proposition.strip() == "True":
        return True
    if len(tokens) > 1 and tokens[0].text == "(" and tokens[-1].text == ")" and all(d > 0 for d in level[1:-1]):
        return _holds(proposition[tokens[0].end : tokens[-1].start], env)
    left, symbol, right = _split_comparison(proposition)
    (a, kind_a), (b, kind_b) = _evaluate(left, env), _evaluate(right, env)
    kind = kind_a or kind_b or "nat"
    a, b = _cast(a, kind), _cast(b, kind)
    return {
        "=": a == b,
        "≠": a != b,
        "!=": a != b,
        "<": a < b,
        "≤": a <= b,
        "<=": a <= b,
        ">": a > b,
        "≥": a >= b,
        ">=": a >= b,
    }[symbol]


def _cast(number: Fraction, kind: str | None) -> Fraction:
    if kind in ("nat", "int") and number.denominator != 1:
        raise _Unknown("a fraction in an integer type")
    if kind == "nat" and number < 0:
        raise _Unknown("a negative natural number")
    return number


def _evaluate(text: str, env: dict[str, Value]) -> Value:
    tokens = significant(lex(text))
    parser = _Parser(tokens, env)
    value = parser.expression(0)
    if parser.position != len(tokens):
        raise _Unknown(text)
    return value


_BINARY = {"+": 1, "-": 1, "*": 2, "/": 2, "%": 2, "^": 3}


class _Parser:
    """Precedence climbing over the lexer's tokens; anything unexpected is :class:`_Unknown`."""

    def __init__(self, tokens: list[Token], env: dict[str, Value]) -> None:
        self.tokens, self.env, self.position = tokens, env, 0

    def _peek(self) -> str | None:
        return self.tokens[self.position].text if self.position < len(self.tokens) else None

    def expression(self, minimum: int) -> Value:
        left = self._atom()
        while (symbol := self._peek()) in _BINARY and _BINARY[symbol] >= minimum:
            self.position += 1
            right = self.expression(_BINARY[symbol] + (0 if symbol == "^" else 1))
            left = _apply(symbol, left, right)
        return left

    def _atom(self) -> Value:
        if self.position >= len(self.tokens):
            raise _Unknown("end of expression")
        token = self.tokens[self.position]
        self.position += 1
        if token.kind == Kind.number:
            try:
                return Fraction(token.text), None
            except ValueError as error:
                raise _Unknown(token.text) from error
        if token.text == "-":
            value, kind = self.expression(_BINARY["*"])
            return -value, kind
        if token.kind == Kind.identifier and token.text in self.env:
            return self.env[token.text]
        if token.text == "(":
            inner, kind = self.expression(0)
            if self._peek() == ":":
                self.position += 1
                named = self._peek()
                if named not in _TYPES:
                    raise _Unknown(str(named))
                kind = _TYPES[named]
                self.position += 1
            if self._peek() != ")":
                raise _Unknown("unclosed parenthesis")
            self.position += 1
            return _cast(inner, kind), kind
        raise _Unknown(token.text)


def _apply(symbol: str, left: Value, right: Value) -> Value:
    (a, kind_a), (b, kind_b) = left, right
    kind = kind_a or kind_b
    effective = kind or "nat"
    if symbol == "+":
        result = a + b
    elif symbol == "*":
        result = a * b
    elif symbol == "-":
        result = max(a - b, Fraction(0)) if effective == "nat" else a - b
    elif symbol in ("/", "%"):
        if effective in ("nat", "int"):
            if b < 0 or a < 0:
                raise _Unknown("integer division of a negative number")
            result = Fraction(0) if b == 0 else Fraction(a // b if symbol == "/" else a % b)
        elif symbol == "/":
            result = Fraction(0) if b == 0 else a / b
        else:
            raise _Unknown("% on a field")
    else:
        if b.denominator != 1 or b < 0 or b > 64:
            raise _Unknown("a power the fake does not evaluate")
        result = a ** int(b)
    return result, kind
