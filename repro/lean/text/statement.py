"""Reading Lean 4 source on the lexer's tokens: formal statements, declarations, comment stripping.

A formal statement is exactly one ``theorem``/``lemma`` ending in ``:= by sorry`` (or ``:= sorry``).
Its signature ends at that known tail, never at "the first ``:=``", so ``let x : T := v`` and
``have`` inside the statement are read as Lean reads them.
"""

from __future__ import annotations

from dataclasses import dataclass

from repro.lean.tables import COMMAND_KEYWORDS
from repro.lean.text.code import LeanCode, lean_code
from repro.lean.text.lexer import Kind, Token, lex, significant

THEOREM_KEYWORDS = frozenset({"theorem", "lemma"})
# a strict-implicit ``{{ ... }}`` is two braces (the lexer has no ``{{`` token, nor has Lean)
_OPEN_BRACKETS = {"(": ")", "[": "]", "{": "}", "⟨": "⟩", "⦃": "⦄"}
_CLOSE_BRACKETS = frozenset(_OPEN_BRACKETS.values())


class StatementError(ValueError):
    """The text is not one theorem ending in ``:= by sorry``; the message says what is wrong."""


@dataclass(frozen=True)
class Statement:
    keyword: str
    name: str
    signature: str  # binders and type, between the name and the final ``:=``
    binders: list[str]
    conclusion: str  # the type after the binders' colon
    text: str

    @property
    def declaration(self) -> str:
        """``theorem NAME SIGNATURE``: what Lean elaborates, without the ``:= by sorry`` tail."""
        return f"{self.keyword} {self.name} {self.signature}"


def depths(tokens: list[Token]) -> list[int]:
    """Bracket depth before each significant token (closing brackets count at their outer depth)."""
    result, depth = [], 0
    for token in tokens:
        if token.kind == Kind.symbol and token.text in _CLOSE_BRACKETS:
            depth = max(depth - 1, 0)
            result.append(depth)
            continue
        result.append(depth)
        if token.kind == Kind.symbol and token.text in _OPEN_BRACKETS:
            depth += 1
    return result


_HEADER_COMMANDS = ("import", "open", "set_option")


def without_header(code: str | LeanCode) -> str:
    """``code`` without its leading header lines (``import``, ``open``, ``set_option``, each to its line end).

    A statement file or a formalizer's block often repeats the header; what follows must then be the
    one theorem (the header used for checking is always the configured one).
    """
    source = lean_code(code)
    code, tokens = source.text, source.significant
    start, index = 0, 0
    while index < len(tokens) and tokens[index].kind == Kind.identifier and tokens[index].text in _HEADER_COMMANDS:
        line_end = code.find("\n", tokens[index].start)
        line_end = len(code) if line_end == -1 else line_end
        index += 1
        while index < len(tokens) and tokens[index].start < line_end:
            index += 1
        start = line_end
    return code[start:].strip()


def read_statement(statement: str | LeanCode) -> Statement:
    """Parse a formal statement; raises :class:`StatementError` naming the problem."""
    source = lean_code(statement)
    statement = source.text
    if source.error is not None:
        raise StatementError(f"unterminated comment, string or quoted name at offset {source.error.start}")
    code = source.significant
    if not code or code[0].kind != Kind.identifier or code[0].text not in THEOREM_KEYWORDS:
        first = code[0].text if code else "nothing"
        raise StatementError(f"a formal statement must be exactly one theorem; it starts with {first!r}")
    if len(code) < 2 or code[1].kind != Kind.identifier or code[1].text in COMMAND_KEYWORDS:
        raise StatementError("the theorem has no name")
    others = [t.text for t in code[2:] if t.kind == Kind.identifier and t.text in COMMAND_KEYWORDS]
    others += [t.text for t in code if t.kind in (Kind.hash_command, Kind.attribute_open)]
    if others:
        raise StatementError(f"a formal statement must be exactly one theorem; it also has {others[:3]}")
    tail = [t.text for t in code[-3:]]
    if tail == [":=", "by", "sorry"]:
        assign = code[-3]
    elif tail[-2:] == [":=", "sorry"]:
        assign = code[-2]
    else:
        raise StatementError("the statement does not end in `:= by sorry`")
    name = code[1]
    signature_tokens = code[2 : code.index(assign)]
    signature = statement[name.end : assign.start].strip()
    binders, conclusion_start = _binders(statement, signature_tokens)
    if conclusion_start is None:
        raise StatementError("the theorem has no `:` before its type")
    conclusion = statement[conclusion_start : assign.start].strip()
    return Statement(code[0].text, name.text, signature, binders, conclusion, statement)


def _binders(text: str, tokens: list[Token]) -> tuple[list[str], int | None]:
    """Binder groups before the signature's colon, and where the conclusion starts."""
    binders: list[str] = []
    group_start: Token | None = None
    for token, depth in zip(tokens, depths(tokens), strict=True):
        if depth == 0 and token.kind == Kind.symbol and token.text == ":":
            return binders, token.end
        if depth == 0 and token.kind == Kind.symbol and token.text in _OPEN_BRACKETS:
            group_start = token
        elif depth == 0 and token.kind == Kind.symbol and token.text in _CLOSE_BRACKETS and group_start:
            binders.append(text[group_start.start : token.end])
            group_start = None
        elif depth == 0 and token.kind == Kind.identifier:
            binders.append(token.text)
    return binders, None


def final_proposition(conclusion: str) -> tuple[str, bool]:
    """The conclusion with leading ``let``/``have`` bindings, ``∀`` binders and hypotheses removed.

    Returns (proposition, existential): ``existential`` is True when what remains is ``∃ ...``,
    whose answer is a witness, not the right side of an equation.
    """
    text = conclusion.strip()
    for _ in range(200):
        tokens = significant(lex(text))
        if not tokens:
            return text, False
        level = depths(tokens)
        head = tokens[0].text
        if head in ("let", "have", "haveI", "letI"):
            cut = _binding_end(text, tokens, level)
            if cut is None:
                return text, False
            text = text[cut:].strip()
            continue
        if head in ("∀", "∃", "∃!"):
            comma = next((t for t, d in zip(tokens, level, strict=True) if d == 0 and t.text == ","), None)
            if comma is None:
                return text, head != "∀"
            if head != "∀":
                return text, True
            text = text[comma.end :].strip()
            continue
        arrows = [t for t, d in zip(tokens, level, strict=True) if d == 0 and t.text in ("→", "->")]
        if arrows:
            text = text[arrows[-1].end :].strip()
            continue
        if head == "(" and level[-1] == 0 and tokens[-1].text == ")" and _wraps(tokens, level):
            text = text[tokens[0].end : tokens[-1].start].strip()
            continue
        return text, False
    return text, False


def _wraps(tokens: list[Token], level: list[int]) -> bool:
    """Whether the first ``(`` closes at the last token (the whole text is parenthesised)."""
    return all(d > 0 for d in level[1:-1])


def _binding_end(text: str, tokens: list[Token], level: list[int]) -> int | None:
    """Offset just after a leading ``let``/``have`` binding (its value ends at ``;`` or a line end)."""
    assign = next((i for i, t in enumerate(tokens) if level[i] == 0 and t.text == ":="), None)
    if assign is None:
        return None
    for index in range(assign + 1, len(tokens)):
        token = tokens[index]
        if level[index] == 0 and token.text == ";":
            return token.end
        if index + 1 < len(tokens) and level[index + 1] == 0 and "\n" in text[token.end : tokens[index + 1].start]:
            return token.end
    return None


def top_level_equation(proposition: str) -> tuple[str, str] | None:
    """(left, right) of the proposition's single top-level ``=``; None for anything else."""
    tokens = significant(lex(proposition))
    level = depths(tokens)
    # a big operator's binder comma (``∑ i in s, f i = 55``) is not a connective; ``∀``/``∃``/``fun`` are
    connectives = {"∧", "∨", "↔", "¬", "≠", "→", "->", "<->", "/\\", "\\/", "∃", "∀", "fun", "λ", "=>", "if"}
    if any(d == 0 and t.text in connectives for t, d in zip(tokens, level, strict=True)):
        return None
    equals = [t for t, d in zip(tokens, level, strict=True) if d == 0 and t.kind == Kind.symbol and t.text == "="]
    if len(equals) != 1:
        return None
    previous: Token | None = None
    for token, depth in zip(tokens, level, strict=True):
        if depth == 0 and token is not equals[0] and not _binds_tighter_than_equals(token, previous):
            return None  # e.g. ``!n = 5`` is ``!(n = 5)`` and ``true || n = 5`` is ``(true || n) = 5``
        previous = token if depth == 0 else None
    return proposition[: equals[0].start].strip(), proposition[equals[0].end :].strip()


# Depth-0 tokens that cannot make Lean read ``a = b`` as anything but an equation of a and b: terms,
# application, arithmetic and big operators (whose bodies stop before ``=``). Everything else (``!``,
# ``¬``, ``<|``, ``$``, ``||``, ``&&``, ``|>``, ``fun``, ``if``, custom notation) may bind more loosely than
# ``=`` and wrap the equation, so the statement then has no deterministic answer: an allowlist, not a
# list of known-bad operators.
_TERM_SYMBOLS = frozenset(
    {"+", "-", "*", "/", "%", "^", "·", "•", "↑", "∑", "∏", ",", "∈", "(", ")", "[", "]", "{", "}", "⟨", "⟩"}
    | {"|", ".", "⌊", "⌋", "⌈", "⌉", "⌊₊", "⌋₊", "⌈₊", "⌉₊", "√", "⁻¹"}
)
_NON_TERM_WORDS = frozenset(
    {"fun", "λ", "if", "then", "else", "let", "have", "show", "from", "by", "match", "with", "do", "at", "Not"}
)


def _binds_tighter_than_equals(token: Token, previous: Token | None) -> bool:
    if token.kind == Kind.number:
        return True
    if token.kind == Kind.identifier:
        return token.name not in _NON_TERM_WORDS and token.name not in COMMAND_KEYWORDS
    if token.kind != Kind.symbol:
        return False
    if token.text == "!":  # factorial is postfix (``n !``, ``(n)!``); prefix ``!`` is Bool negation
        return previous is not None and (previous.kind in (Kind.identifier, Kind.number) or previous.text == ")")
    return token.text in _TERM_SYMBOLS


def strip_comments(code: str | LeanCode, *, keep_layout: bool = True) -> str:
    """``code`` with every comment removed (with ``keep_layout``, replaced by spaces, newlines kept)."""
    source = lean_code(code)
    return source.without_comments if keep_layout else source.comment_free


def normalize(code: str | LeanCode) -> str:
    """Comments removed and whitespace collapsed: the form in which two texts are compared."""
    return " ".join(token.text for token in lean_code(code).significant)


def ends_in_sorry(statement: str | LeanCode) -> bool:
    tail = [t.text for t in lean_code(statement).significant[-3:]]
    return tail == [":=", "by", "sorry"] or tail[-2:] == [":=", "sorry"]
