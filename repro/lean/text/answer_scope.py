"""What our statement's answer can be about: its variables, its ``let`` chain, its ``∃`` variables.

Read only to decide whether an answer may be *proposed* from the statement (adversary round 4, A4
and A5); Lean still proves every statement and every witness. Every reader here fails closed: a
shape it does not recognise gives None, and the caller then releases no answer.

Why the signature must be this narrow (A4: ``(ℝ : Type) [Field ℝ] [CharP ℝ 7] (x : ℝ) (h : x = 10) :
x = 3`` is true and non-vacuous, and reading ``3`` as a real number is wrong):

- A variable is of a numeric type, a function between numeric types, or ``Finset T`` of one.
- A binder named like a numeric type (``ℕ ℤ ℚ ℝ ℂ Nat Int Rat Real Complex``) makes that name mean
  the binder in the rest of the statement, so ``x : ℝ`` no longer says x is a real number.
- Lean 4 makes *every* local whose type is (after its ``∀``/``→`` binders) an application of a class a
  local instance, whatever its brackets (``[Field ℝ]``, ``(i : Field ℝ)``, ``(i : True → OfNat ℕ 4)``,
  adversary A3). A local ``Field ℝ`` or ``OfNat ℕ 4`` instance changes what ``3`` or ``+`` mean. So a
  binder is accepted only as a variable of a numeric type (or a function between numeric types), or
  as a hypothesis whose final proposition is headed by a relation or connective (``=``, ``<``, ``∣``,
  ``∈``, ``∧``, ``¬``, ``∃``...; their heads ``Eq``, ``LT.lt``, ``Dvd.dvd``, ``Membership.mem``, ``And``,
  ``Not``, ``Exists`` are not classes) or by a predicate of :data:`PROP_PREDICATES` (definitions, not
  classes). Anything else (``Finset ℕ``, ``Type``, ``Fact p``, an instance binder) means no answer.
- The conclusion's leading bindings must be ``let NAME : T := v`` / ``have NAME : T := v`` with T a
  numeric type: an untyped ``let`` or a ``haveI``/``letI`` may bind a class instance (Lean 4 adds a
  class-typed ``let`` variable to the local instances too), and a function ``let`` is not a value.
"""

from __future__ import annotations

from dataclasses import dataclass

from repro.lean.text.lexer import Kind, Token, lex, significant
from repro.lean.text.statement import _binding_end, depths, final_proposition

NUMERIC_TYPE_NAMES = frozenset({"ℕ", "ℤ", "ℚ", "ℝ", "ℂ", "Nat", "Int", "Rat", "Real", "Complex"})
CANONICAL_TYPE = {"Nat": "ℕ", "Int": "ℤ", "Rat": "ℚ", "Real": "ℝ", "Complex": "ℂ"} | {
    t: t for t in ("ℕ", "ℤ", "ℚ", "ℝ", "ℂ")
}
# Predicates that are definitions returning Prop (never classes): a hypothesis headed by one is a fact.
PROP_PREDICATES = frozenset(
    {"Nat.Prime", "Prime", "Even", "Odd", "Nat.Coprime", "IsSquare", "Squarefree", "Irrational", "True", "False"}
)
# Tokens whose result is a Prop that is not a class application, when they head the proposition.
# ``>=``/``<=`` are the ASCII spellings of the same notations (``GE.ge``, ``LE.le``); ``!=`` is not here:
# it is ``bne``, a Bool, so its Prop is the coercion ``(a != b) = true``, a shape not read
_RELATIONS = frozenset(
    {"=", "≠", "<", "≤", ">", "≥", ">=", "<=", "∣", "∈", "∉", "⊆", "⊂", "∧", "∨", "↔", "<->", "/\\", "\\/", "≡"}
)
# Tokens that can make something other than the relation the head (``C <| a = b`` is ``C (a = b)``).
_LOOSE = frozenset(
    {"<|", "$", "|>", "fun", "λ", "let", "have", "haveI", "letI", "if", "match", "show", "by", ":=", "=>", ";"}
)
_BINDING_WORDS = frozenset({"let", "have", "haveI", "letI"})
_MAX_EXPANDED_TOKENS = 4_000


@dataclass(frozen=True)
class Binding:
    """``let NAME : TYPE := VALUE`` of the conclusion (TYPE canonical: ℕ ℤ ℚ ℝ ℂ)."""

    name: str
    type_name: str
    value: list[Token]


@dataclass(frozen=True)
class AnswerScope:
    """Our statement as far as an answer may be read from it."""

    variables: dict[str, str]  # signature variable name -> type text (``ℕ``, ``ℕ → ℝ``), canonical names
    lets: list[Binding]
    proposition: str  # the conclusion after its bindings


def _canonical_type(tokens: list[Token]) -> str | None:
    """``ℕ``, ``Real``, ``ℕ → ℝ`` as canonical text; None for any other type."""
    parts: list[str] = []
    for index, token in enumerate(tokens):
        if index % 2 == 0:
            if token.kind != Kind.identifier or token.name not in CANONICAL_TYPE:
                return None
            parts.append(CANONICAL_TYPE[token.name])
        elif token.text not in ("→", "->"):
            return None
    return " → ".join(parts) if parts and len(tokens) % 2 == 1 else None


def is_proposition(type_text: str) -> bool:
    """Whether a hypothesis' type is a Prop that cannot be a class instance (see the module docstring)."""
    tokens = significant(lex(type_text))
    if any(t.text in (":=", "type_of", "‹") for t in tokens):
        return False
    final, existential = final_proposition(type_text)
    if existential:
        return True
    tokens = significant(lex(final))
    if not tokens:
        return False
    if tokens[0].text in ("¬", "∃", "∃!"):
        return True
    level = depths(tokens)
    for token, depth in zip(tokens, level, strict=True):
        if depth != 0:
            continue
        if token.text in _LOOSE:
            return False  # met before any relation: it may make something else the head
        if token.kind == Kind.symbol and token.text in _RELATIONS:
            return True
    return tokens[0].kind == Kind.identifier and tokens[0].name in PROP_PREDICATES


def _finset_type(tokens: list[Token]) -> str | None:
    """``Finset ℤ``: a finite set of numbers is a variable too (``Finset`` is a structure, never a class)."""
    if len(tokens) != 2 or tokens[0].kind != Kind.identifier or tokens[0].name != "Finset":
        return None
    element = _canonical_type(tokens[1:])
    return f"Finset {element}" if element is not None and "→" not in element else None


def signature_variables(binders: list[str]) -> dict[str, str] | None:
    """The signature's numeric variables (name -> canonical type), or None when a binder is not safe."""
    variables: dict[str, str] = {}
    for group in binders:
        tokens = significant(lex(group))
        if len(tokens) < 4 or tokens[0].text not in ("(", "{", "⦃") or tokens[-1].text not in (")", "}", "⦄"):
            return None  # a bare (auto-bound) name, an instance binder ``[...]``, a strict-implicit ``{{``
        level = depths(tokens)
        colon = next((i for i, t in enumerate(tokens) if level[i] == 1 and t.text == ":"), None)
        if colon is None or colon < 2:
            return None
        names = tokens[1:colon]
        if any(t.kind != Kind.identifier or t.name in NUMERIC_TYPE_NAMES for t in names):
            return None
        body = tokens[colon + 1 : -1]
        default = next((i for i, t in enumerate(body) if level[colon + 1 + i] == 1 and t.text == ":="), None)
        # ``(k : ℕ := 3)`` is a variable of type ``optParam ℕ 3``, reducibly ℕ: still every k
        typed = body if default is None else body[:default]
        kind = _canonical_type(typed) or _finset_type(typed)
        if kind is not None:
            variables.update({t.name: kind for t in names})
        elif default is not None or not is_proposition(group[tokens[colon].end : tokens[-1].start]):
            return None
    return variables


def let_chain(conclusion: str) -> tuple[list[Binding], str] | None:
    """The conclusion's leading ``let``/``have NAME : T := v`` bindings and what follows; None otherwise.

    A ``have``/``let`` of a proposition (``have h : (10 : ℕ) % 2 = 0 := by decide``) is a proof, not a
    value: it is passed over when :func:`is_proposition` says its type cannot be a class, and its name
    is not one of the statement's variables or bindings (it would shadow them).
    """
    text = unwrapped(conclusion)
    lets: list[Binding] = []
    for _ in range(200):
        tokens = significant(lex(text))
        if not tokens or tokens[0].text not in _BINDING_WORDS:
            return lets, text
        if tokens[0].text in ("haveI", "letI") or len(tokens) < 4:
            return None
        cut = _binding_end(text, tokens, depths(tokens))
        if cut is None:
            return None
        fact = _proof_binding(text, tokens, cut)
        if fact is not None:
            if fact in {b.name for b in lets}:
                return None
            if fact:
                lets.append(Binding(fact, "Prop", []))
            text = unwrapped(text[cut:])
            continue
        if len(tokens) < 6:
            return None
        name, colon, type_token, assign = tokens[1:5]
        if (
            name.kind != Kind.identifier
            or name.name in NUMERIC_TYPE_NAMES
            or colon.text != ":"
            or type_token.kind != Kind.identifier
            or type_token.name not in CANONICAL_TYPE
            or assign.text != ":="
        ):
            return None
        value = [t for t in tokens if assign.end <= t.start and t.end <= cut and not (t.text == ";" and t.end == cut)]
        lets.append(Binding(name.name, CANONICAL_TYPE[type_token.name], value))
        text = unwrapped(text[cut:])
    return None


def _proof_binding(text: str, tokens: list[Token], cut: int) -> str | None:
    """The name ("" if anonymous) of a leading ``have``/``let`` of a proposition, else None."""
    level = depths(tokens)
    colon = 1 if tokens[1].text == ":" else 2 if tokens[2].text == ":" else None
    if colon is None or (colon == 2 and tokens[1].kind != Kind.identifier):
        return None
    assign = next((i for i, t in enumerate(tokens) if level[i] == 0 and t.text == ":=" and t.end <= cut), None)
    if assign is None or assign <= colon + 1:
        return None
    proposition = text[tokens[colon].end : tokens[assign].start]
    if _canonical_type(tokens[colon + 1 : assign]) is not None or not is_proposition(proposition):
        return None
    return tokens[1].name if colon == 2 else ""


def answer_scope(binders: list[str], conclusion: str) -> AnswerScope | None:
    variables = signature_variables(binders)
    chain = let_chain(conclusion)
    if variables is None or chain is None:
        return None
    lets, proposition = chain
    if any(b.type_name == "Prop" and b.name in variables for b in lets):
        return None  # a proof named like a variable: the equation's x would be the proof
    return AnswerScope(variables, [b for b in lets if b.type_name != "Prop"], proposition)


def expand_lets(tokens: list[Token], lets: list[Binding]) -> list[tuple[Token, str | None]] | None:
    """``tokens`` with each ``let`` name replaced by its value in parentheses, innermost binding first.

    The parentheses put in are marked (offsets -1) and carry the ``let``'s type, under which its value
    is evaluated; every other token carries None. Names
    are compared as Lean resolves them (``«x»`` is ``x``), so a ``let «x»`` cannot hide that it shadows
    the signature's ``x``. None when the text grows past a bound (chains that double per binding).
    """
    expanded: list[tuple[Token, str | None]] = [(t, None) for t in tokens]
    for binding in reversed(lets):
        result: list[tuple[Token, str | None]] = []
        for token, under in expanded:
            if token.kind == Kind.identifier and token.name == binding.name:
                result.append((Token(Kind.symbol, "(", -1, -1), binding.type_name))
                result += [(t, None) for t in binding.value]
                result.append((Token(Kind.symbol, ")", -1, -1), None))
            else:
                result.append((token, under))
        if len(result) > _MAX_EXPANDED_TOKENS:
            return None
        expanded = result
    return expanded


def unwrapped(text: str) -> str:
    """``text`` without parentheses around the whole of it."""
    text = text.strip()
    for _ in range(100):
        tokens = significant(lex(text))
        if len(tokens) < 2 or tokens[0].text != "(" or tokens[-1].text != ")":
            return text
        level = depths(tokens)
        if level[-1] != 0 or not all(d > 0 for d in level[1:-1]):
            return text
        text = text[tokens[0].end : tokens[-1].start].strip()
    return text


def existential_variables(proposition: str) -> list[tuple[str, str]] | None:
    """The ``∃`` variables of ``∃ x y : T, body`` / ``∃ (x : T) (y : U), body`` with their canonical types.

    None for anything else: an untyped ``∃ x,`` (its type is not written in our statement), a binder
    predicate ``∃ x > 0,`` or ``∃ x ∈ S,``, a type that is not ℕ ℤ ℚ ℝ, a name that is a type name.
    """
    tokens = significant(lex(proposition))
    if not tokens or tokens[0].text != "∃":
        return None
    level = depths(tokens)
    comma = next((i for i, t in enumerate(tokens) if level[i] == 0 and t.text == ","), None)
    if comma is None:
        return None
    binder = tokens[1:comma]
    if binder and binder[0].text == "(":
        groups: list[list[Token]] = []
        binder_level = level[1:comma]
        for token, depth in zip(binder, binder_level, strict=True):
            if depth == 0 and token.text == "(":
                groups.append([])
            elif depth == 0 and token.text == ")":
                continue
            elif depth == 0 or not groups:
                return None
            else:
                groups[-1].append(token)
    else:
        groups = [binder]
    variables: list[tuple[str, str]] = []
    for group in groups:
        colon = next((i for i, t in enumerate(group) if t.text == ":"), None)
        if colon is None or colon == 0 or len(group) != colon + 2:
            return None
        type_token = group[colon + 1]
        kind = CANONICAL_TYPE.get(type_token.name) if type_token.kind == Kind.identifier else None
        names = group[:colon]
        if kind is None or kind == "ℂ":
            return None
        if any(t.kind != Kind.identifier or t.name in NUMERIC_TYPE_NAMES for t in names):
            return None
        variables += [(t.name, kind) for t in names]
    return variables
