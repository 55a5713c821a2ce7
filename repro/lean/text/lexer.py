"""A Lean 4 lexer: splits source into the tokens Lean's own scanner would see.

Every static rule of the soundness gate and every statement reader works on these tokens, never on
raw text, so a comment, string or quoted identifier can neither hide code from the gate nor make the
gate see code that Lean ignores. It covers what can move the code/comment/string boundary: nested
block comments (``/- -/``, doc ``/-- -/``, module doc ``/-! -/``), line comments, string literals
with escapes and raw newlines, raw strings (``r"..."``, ``r#"..."#``), character literals,
``«»``-quoted identifier parts, interpolated strings and quotations (marked, so the gate can refuse
them). Input Lean would not lex (an unterminated comment, string, char or ``«``), and input whose
tokens depend on Lean's whole token table (a comment opener or a quote glued to a symbol), ends in an
``error`` token: a caller that needs certainty refuses such code.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import NamedTuple

from repro.lean.text.budget import check_time


class Kind(StrEnum):
    whitespace = "whitespace"
    line_comment = "line_comment"
    block_comment = "block_comment"  # includes doc and module-doc comments
    string = "string"
    raw_string = "raw_string"
    interpolated_string = "interpolated_string"  # s!"..", f!"..", m!".." (refused by the gate)
    char = "char"
    identifier = "identifier"
    number = "number"
    hash_command = "hash_command"  # ``#eval``, ``#print``, ``#exit`` ...
    attribute_open = "attribute_open"  # ``@[``
    quotation = "quotation"  # a backquote: name literal or syntax quotation
    symbol = "symbol"
    error = "error"


# A model's special-token string (``<|im_end|>``, DeepSeek's ``<｜end▁of▁sentence｜>``): never Lean, always
# refused by the gate as boundary corruption. It is read as one opaque token, so nothing inside it is read
# as Lean (the ``end`` of ``end▁of▁sentence`` is no ``end`` command); salvage then sees a corrupted
# boundary, not a forbidden construct, and every repair it makes goes through the whole gate again.
SPECIAL_TOKEN = re.compile(r"<\|[A-Za-z_][\w▁.\-]{0,39}\|>|<｜[^｜<>\s]{1,40}｜>")

# Lean's whitespace; any other space-like character (NBSP, U+2003, ...) is a token Lean refuses.
_WHITESPACE = frozenset(" \t\r\n")
TRIVIA = frozenset({Kind.whitespace, Kind.line_comment, Kind.block_comment})


class Token(NamedTuple):
    """One token; a tuple, since a long reply makes hundreds of thousands of them."""

    kind: Kind
    text: str
    start: int
    end: int

    @property
    def is_trivia(self) -> bool:
        return self.kind in TRIVIA

    @property
    def name(self) -> str:
        """An identifier with its ``«»`` quoting removed (``Lean.«ofReduceBool»`` -> ``Lean.ofReduceBool``)."""
        return ".".join(identifier_parts(self.text)) if self.kind == Kind.identifier else self.text


# Multi-character symbols that matter to the readers (``:=`` must never read as ``:`` then ``=``).
_SYMBOLS = sorted(
    [
        ":=",
        "::",
        "=>",
        "->",
        "<-",
        "<->",
        "<;>",
        "<|>",
        "<|",
        "|>.",
        "|>",
        "==",
        "!=",
        "<=",
        ">=",
        "&&",
        "||",
        "..",
        "...",
        "++",
        "^^",
        "⁻¹",
        "⁻¹'",
        "∑'",
        "∏'",
        # core notation, unscoped: ``infixr:35 " ×' " => PProd`` (src/Init/Core.lean), ``macro "Σ'"``
        # and ``" ×' "`` binders (src/Init/NotationExtra.lean); Lean's tokenizer reads the longest token
        # of its table at a token start, so ``×'`` and ``Σ'`` are one token each, never a symbol then a quote
        "×'",
        "Σ'",
        "''",
        # no ``{{``/``}}``: Lean has no such token. A strict-implicit binder's ``{{`` is two ``{`` tokens
        # (leanprover/lean4 src/Lean/Parser/Term.lean: ``strictImplicitLeftBracket := atomic (group
        # (symbol "{" >> "{")) <|> "⦃"``), so ``{x | x ∈ {3}}`` closes two braces, each its own token
    ],
    key=len,
    reverse=True,
)


_RADIX_DIGITS = {
    "0x": frozenset("0123456789abcdefABCDEF"),
    "0X": frozenset("0123456789abcdefABCDEF"),
    "0b": frozenset("01"),
    "0B": frozenset("01"),
    "0o": frozenset("01234567"),
    "0O": frozenset("01234567"),
}


def _is_letter_like(char: str) -> bool:
    """Lean's ``isLetterLike``: Greek (but λ, Π, Σ), Coptic, letter-like symbols (ℕ, ℝ), math alphanumerics."""
    code = ord(char)
    return (
        (0x3B1 <= code <= 0x3C9 and code != 0x3BB)
        or (0x391 <= code <= 0x3A9 and code not in (0x3A0, 0x3A3))
        or 0x3CA <= code <= 0x3FB
        or 0x1F00 <= code <= 0x1FFE
        or 0x2100 <= code <= 0x214F
        or 0x1D49C <= code <= 0x1D59F
    )


# The same two character classes as regular expressions, so a name is read by the regex engine in one
# call (tests check them against the functions for every code point).
_START_CLASS = (
    "a-zA-Z_\u03b1-\u03ba\u03bc-\u03c9\u0391-\u039f\u03a1\u03a2\u03a4-\u03a9\u03ca-\u03fb"
    "\u1f00-\u1ffe\u2100-\u214f\U0001d49c-\U0001d59f"
)
_REST_CLASS = _START_CLASS + "0-9'!?\u2080-\u2089\u2090-\u209c\u1d62-\u1d6a\u2c7c"
IDENTIFIER_START = re.compile(f"[{_START_CLASS}]")
_IDENTIFIER_REST = re.compile(f"[{_REST_CLASS}]*")
_WHITESPACE_RUN = re.compile(r"[ \t\r\n]+")
_DIGITS = re.compile(r"[0-9]*")


def _is_subscript(char: str) -> bool:
    code = ord(char)
    return 0x2080 <= code <= 0x2089 or 0x2090 <= code <= 0x209C or 0x1D62 <= code <= 0x1D6A or char == "ⱼ"


def is_identifier_start(char: str) -> bool:
    return ("a" <= char <= "z") or ("A" <= char <= "Z") or char == "_" or _is_letter_like(char)


def is_identifier_rest(char: str) -> bool:
    return is_identifier_start(char) or char.isascii() and char.isdigit() or char in "'!?" or _is_subscript(char)


def identifier_parts(text: str) -> list[str]:
    """The dot-separated components of an identifier, ``«»`` quoting removed."""
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    for char in text:
        if quoted:
            if char == "»":
                quoted = False
            else:
                current.append(char)
        elif char == "«":
            quoted = True
        elif char == ".":
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


# The next comment opener or closer, and the next quote or escape: comment and string bodies are
# skipped by the regex engine, so an unterminated one costs a search, not a Python loop per character.
_COMMENT_MARK = re.compile(r"/-|-/")
_STRING_STOP = re.compile(r'[\\"]')
# symbols after which a glued ``--`` or ``/-`` is read as a comment by Lean too: no token of Lean's
# table starts with a closing bracket or a comma followed by ``-`` or ``/``
_SAFE_BEFORE_COMMENT = frozenset({")", "]", "}", "⟩", ",", "»"})
_BRACKETS_AND_COMMA = _SAFE_BEFORE_COMMENT | frozenset({"(", "[", "{", "⟨"})
_SYMBOLS_BY_FIRST: dict[str, list[str]] = {}
for _symbol in _SYMBOLS:
    _SYMBOLS_BY_FIRST.setdefault(_symbol[0], []).append(_symbol)  # longest first, as in _SYMBOLS


@dataclass
class Unclosed:
    """What earlier scans of one text learned about comments, strings and names that never close.

    A reply's code blocks are lexed one after another from their opening fences; an unterminated
    comment or string in each would otherwise scan to the end of the reply once per block. Each fact
    holds for any later scan of the same text (see each use), so a later scan ends at once.
    """

    string_from: int | None = None  # a string body scanned from a cursor at or after this never closes
    guillemet_from: int | None = None  # no ``»`` at or after this offset
    raw_from: dict[str, int] = field(default_factory=dict)  # closing ``"#..#`` -> absent at or after offset
    # comment mark offset -> (depth before it, lowest depth from it on) in a scan that never closed
    comment_marks: dict[int, tuple[int, int]] = field(default_factory=dict)


def make_token(kind: Kind, text: str, start: int, end: int) -> Token:
    """``Token(kind, text, start, end)`` without the Python-level ``__new__`` of a named tuple (hot path)."""
    return _new_tuple(Token, (kind, text, start, end))


_new_tuple = tuple.__new__


class _Scanner:
    def __init__(self, code: str, unclosed: Unclosed | None = None, base: int = 0) -> None:
        self.code = code
        self.length = len(code)
        self.base = base  # tokens' offsets count from here (a code block's start: its tokens are its code's own)
        self.tokens: list[Token] = []
        self.unclosed = unclosed or Unclosed()
        # scans that share ``unclosed`` leave an error token's text empty: it runs to the end of the
        # text, and copying it once per code block would make reading a reply quadratic again
        self.error_text = unclosed is None

    def emit(self, kind: Kind, start: int, end: int) -> int:
        text = "" if kind is Kind.error and not self.error_text else self.code[start:end]
        self.tokens.append(make_token(kind, text, start - self.base, end - self.base))
        return end

    def at(self, index: int, text: str) -> bool:
        return self.code.startswith(text, index)

    def run(self) -> list[Token]:
        for _ in self.scan_from(0):
            pass
        return self.tokens

    def scan_from(self, index: int) -> Iterator[Token]:
        """Tokens from ``index`` on, one at a time (every ``step`` emits exactly one); stops after an error."""
        steps = 0
        while index < self.length:
            index = self.step(index)
            token = self.tokens[-1]
            yield token
            if token.kind == Kind.error:
                return
            steps += 1
            if steps % 4096 == 0:
                check_time()

    def step(self, index: int) -> int:
        code, char = self.code, self.code[index]
        if char in _WHITESPACE:
            return self.emit(Kind.whitespace, index, _WHITESPACE_RUN.match(code, index).end())  # type: ignore[union-attr]
        if char == "-" and code.startswith("-", index + 1):
            if self.glued_to_symbol(index):
                return self.emit(Kind.error, index, self.length)
            end = code.find("\n", index)
            return self.emit(Kind.line_comment, index, self.length if end == -1 else end)
        if char == "/" and code.startswith("-", index + 1):
            if self.glued_to_symbol(index):
                return self.emit(Kind.error, index, self.length)
            return self.block_comment(index)
        if char == '"':
            return self.string(index, index + 1, Kind.string)
        if char == "r" and self.raw_string_opening(index) is not None:
            return self.raw_string(index)
        if char == "'" and not self.quote_may_start_token(index):
            return self.emit(Kind.error, index, self.length)
        if char == "'" and code.startswith(
            "'", index + 1
        ):  # Lean: a quote followed by a quote is the token '' (image), never a char
            return self.emit(Kind.symbol, index, index + 2)
        if char == "'":
            char_end = self.char_literal_end(index)
            return self.emit(Kind.error if char_end is None else Kind.char, index, char_end or self.length)
        if char == "«" or IDENTIFIER_START.match(char):
            return self.identifier(index)
        if "0" <= char <= "9":
            return self.number(index)
        if char == "#" and IDENTIFIER_START.match(code, index + 1):
            return self.emit(Kind.hash_command, index, _IDENTIFIER_REST.match(code, index + 1).end())  # type: ignore[union-attr]
        if char == "<" and (special := SPECIAL_TOKEN.match(code, index)) is not None:
            return self.emit(Kind.symbol, index, special.end())
        if self.at(index, "@["):
            return self.emit(Kind.attribute_open, index, index + 2)
        if char == "`":
            return self.emit(Kind.quotation, index, index + 1)
        for symbol in _SYMBOLS_BY_FIRST.get(char, ()):
            if self.at(index, symbol):
                if symbol[-1] == "'" and not self.quote_symbol_may_start(index):
                    return self.emit(Kind.error, index, self.length)
                return self.emit(Kind.symbol, index, index + len(symbol))
        return self.emit(Kind.symbol, index, index + 1)

    def glued_to_symbol(self, index: int) -> bool:
        """Whether a comment opener at ``index`` directly follows a character of a symbol token.

        Lean tests for ``--`` and ``/-`` only where a token may start; a symbol token of its table
        that began earlier can swallow the opener's first character (``//-`` is the token ``//``
        then ``-``; ``\\/-`` is ``\\/`` then ``-``), and the rest is code to Lean but a comment to
        a scanner that does not know that token. Our symbol list is not Lean's whole token table,
        so every opener glued to a symbol character is refused (an error token) rather than guessed.
        The test reads the text, not earlier tokens, so a scan that starts mid-text (a code block,
        a clipped token) decides exactly as the scan of the whole text. After whitespace, an
        identifier or number character, a closing bracket or a comma Lean reads the comment too.
        """
        if index == 0:
            return False
        before = self.code[index - 1]
        return not (before in _WHITESPACE or before in _SAFE_BEFORE_COMMENT or is_identifier_rest(before))

    def quote_may_start_token(self, index: int) -> bool:
        """Whether Lean surely starts a token at the quote at ``index`` (a char literal or ``''``).

        Lean's ``tokenFnAux`` (leanprover/lean4 ``src/Lean/Parser/Basic.lean``) reads a char literal
        (``charLitFnAux``) when a token starts at a quote not followed by a quote; otherwise the longest
        token of its table (``matchPrefix``); ``identFn`` keeps a quote glued after an identifier as part
        of it (``isIdRest``: ``h'``). A token of the table may end in a quote after symbol characters
        (``×'``, ``⁻¹'``, Mathlib's scoped ``∃'``/``∀'`` once ``open FirstOrder``), and then the quote is
        no token start in Lean: what we would read as ``''`` then ``a'sorry`` Lean reads as ``∃'``,
        ``'a'``, ``sorry``. Our symbol list is not Lean's table, so a quote after a symbol character is
        refused (an error token) unless that character cannot begin or extend such a token: whitespace,
        a closing bracket or comma, or the letter or digit that ends a name or number (where Lean's
        scanner ended a token too). The text is read, not earlier tokens, like :meth:`glued_to_symbol`.
        """
        if index == 0:
            return True
        before = self.code[index - 1]
        return (
            before in _WHITESPACE
            or before in _SAFE_BEFORE_COMMENT
            or (is_identifier_rest(before) and before not in "'!?")
        )

    def quote_symbol_may_start(self, index: int) -> bool:
        """Whether a symbol of ours ending in a quote (``×'``, ``Σ'``, ``∑'``, ``⁻¹'``) at ``index`` starts
        where Lean starts a token too: after whitespace, a bracket or comma, or a name's last character
        (a quote included: ``f'⁻¹' s``).
        After another symbol character Lean may have a longer token ending inside ours, leaving our
        quote to start a char literal (see :meth:`quote_may_start_token`): refused, not guessed.
        """
        if index == 0:
            return True
        before = self.code[index - 1]
        return (
            before in _WHITESPACE
            or before in _BRACKETS_AND_COMMA
            or (is_identifier_rest(before) and before not in "!?")  # ``h!`` or the symbol ``!``: unknown
        )

    def block_comment(self, index: int) -> int:
        # Lean reads ``/--`` and ``/-!`` as one token: their body starts after the third character,
        # so ``/--/`` does not close (a scanner that started at the second would close it early)
        # (a leftmost search that prefers ``/-`` is the character-by-character scan Lean does)
        depth, cursor = 1, index + (3 if self.at(index, "/--") or self.at(index, "/-!") else 2)
        known = self.unclosed.comment_marks
        visited: list[tuple[int, int]] = []
        while (mark := _COMMENT_MARK.search(self.code, cursor)) is not None:
            seen = known.get(mark.start())
            if seen is not None and depth - seen[0] + seen[1] > 0:
                # from this mark on, an earlier scan never got back to its depth here; ours cannot reach 0
                self._remember_unclosed(visited, depth - seen[0] + seen[1], depth)
                return self.emit(Kind.error, index, self.length)
            visited.append((mark.start(), depth))
            depth, cursor = depth + (1 if mark.group() == "/-" else -1), mark.end()
            if depth == 0:
                return self.emit(Kind.block_comment, index, cursor)
        self._remember_unclosed(visited, depth, depth)
        return self.emit(Kind.error, index, self.length)

    def _remember_unclosed(self, visited: list[tuple[int, int]], lowest: int, after: int) -> None:
        """Record each mark of a comment scan that never closed, with the lowest depth reached from it on.

        ``after`` is the depth after the last visited mark and ``lowest`` the lowest depth from there
        on. A later scan that meets one of these marks follows the same marks from there (the search
        is deterministic from a mark), its depth shifted by a constant.
        """
        for position, before in reversed(visited):
            lowest = min(lowest, after)
            self.unclosed.comment_marks[position] = (before, lowest)
            after = before

    def string(self, start: int, cursor: int, kind: Kind) -> int:
        """A string body from ``cursor`` (just after the quote); escapes skip one character.

        If a body scanned from an earlier cursor never closed, neither does one from a later cursor:
        every quote after the earlier cursor was escaped in that scan, which then went on from the
        character after it, exactly where the later scan starts.
        """
        first = cursor
        dead = self.unclosed.string_from
        if dead is not None and cursor >= dead:
            return self.emit(Kind.error, start, self.length)
        while cursor < self.length and (stop := _STRING_STOP.search(self.code, cursor)) is not None:
            if stop.group() == '"':
                return self.emit(kind, start, stop.end())
            cursor = stop.start() + 2
        self.unclosed.string_from = first if dead is None else min(dead, first)
        return self.emit(Kind.error, start, self.length)

    def raw_string_opening(self, index: int) -> int | None:
        """Number of ``#`` of a raw string starting at ``index`` (``r"`` or ``r#..#"``), else None.

        Lean starts a raw string at any token start (after ``!``, a digit or a symbol too); the
        scanner only calls this at a token start, since identifiers are read whole.
        """
        cursor = index + 1
        while cursor < self.length and self.code[cursor] == "#":
            cursor += 1
        if cursor < self.length and self.code[cursor] == '"':
            return cursor - index - 1
        return None

    def raw_string(self, index: int) -> int:
        hashes = self.raw_string_opening(index) or 0
        closing = '"' + "#" * hashes
        body = index + 2 + hashes
        absent = self.unclosed.raw_from.get(closing)
        end = -1 if absent is not None and body >= absent else self.code.find(closing, body)
        if end == -1:
            self.unclosed.raw_from[closing] = body if absent is None else min(absent, body)
            return self.emit(Kind.error, index, self.length)
        return self.emit(Kind.raw_string, index, end + len(closing))

    def char_literal_end(self, index: int) -> int | None:
        """End of a character literal at ``index`` (``'a'``, ``'\\n'``, ``'\\x41'``, ``'\\u{3b1}'``)."""
        code = self.code
        cursor = index + 1
        if cursor >= self.length:
            return None
        if code[cursor] == "\\":
            if cursor + 1 >= self.length:
                return None
            escape = code[cursor + 1]
            if escape == "x":
                cursor += 4
            elif escape == "u" and self.at(cursor + 2, "{"):
                close = code.find("}", cursor + 2)
                if close == -1:
                    return None
                cursor = close + 1
            elif escape == "u":
                cursor += 6
            else:
                cursor += 2
        elif code[cursor] in "\n'":
            return None
        else:
            cursor += 1
        return cursor + 1 if cursor < self.length and code[cursor] == "'" else None

    def identifier(self, index: int) -> int:
        code, cursor = self.code, index
        while True:
            if cursor < self.length and code[cursor] == "«":
                absent = self.unclosed.guillemet_from
                close = -1 if absent is not None and cursor + 1 >= absent else code.find("»", cursor + 1)
                if close == -1:
                    self.unclosed.guillemet_from = cursor + 1 if absent is None else min(absent, cursor + 1)
                    return self.emit(Kind.error, index, self.length)
                cursor = close + 1
            elif IDENTIFIER_START.match(code, cursor):
                cursor = _IDENTIFIER_REST.match(code, cursor).end()  # type: ignore[union-attr]
            else:
                break
            if (
                cursor + 1 < self.length
                and code[cursor] == "."
                and (code[cursor + 1] == "«" or IDENTIFIER_START.match(code, cursor + 1))
            ):
                cursor += 1
                continue
            break
        if cursor < self.length and code[cursor] == '"' and code[cursor - 1] == "!":
            return self.string(index, cursor + 1, Kind.interpolated_string)
        return self.emit(Kind.identifier, index, cursor)

    def number(self, index: int) -> int:
        code, cursor = self.code, index
        for prefix, digits in _RADIX_DIGITS.items():
            if self.at(index, prefix):
                # Lean's digit sets exactly: ``0x1sorry`` is the number ``0x1`` then the identifier ``sorry``
                cursor += 2
                while cursor < self.length and code[cursor] in digits:
                    cursor += 1
                return self.emit(Kind.number, index, cursor)
        while cursor < self.length and code[cursor].isascii() and code[cursor].isdigit():
            cursor += 1
        if (
            cursor + 1 < self.length
            and code[cursor] == "."
            and code[cursor + 1].isascii()
            and code[cursor + 1].isdigit()
        ):
            cursor += 1
            while cursor < self.length and code[cursor].isascii() and code[cursor].isdigit():
                cursor += 1
        if cursor < self.length and code[cursor] in "eE":
            exponent = cursor + 1
            if exponent < self.length and code[exponent] in "+-":
                exponent += 1
            if exponent < self.length and code[exponent].isascii() and code[exponent].isdigit():
                cursor = exponent
                while cursor < self.length and code[cursor].isascii() and code[cursor].isdigit():
                    cursor += 1
        return self.emit(Kind.number, index, cursor)


def lex(code: str) -> list[Token]:
    """All tokens of ``code``, trivia included; their texts concatenate back to ``code`` exactly."""
    return _Scanner(code).run()


def lex_from(text: str, start: int, unclosed: Unclosed | None = None, *, base: int = 0) -> Iterator[Token]:
    """The tokens of ``text[start:]`` (offsets into ``text`` less ``base``), lazily: a reader may stop early.

    Lexing from an offset is lexing the slice: no rule of the scanner looks behind a token's start.
    With ``base=start`` the offsets are the slice's own, so a reader that keeps the slice's code
    keeps these tokens as they are (no second, rebased copy of a long reply's tokens).
    Scans of the same ``text`` may share ``unclosed``, so none rescans an unterminated construct;
    their error tokens then carry no text (their offsets say where it is).
    """
    return _Scanner(text, unclosed, base).scan_from(start)


def significant(tokens: list[Token]) -> list[Token]:
    """The tokens Lean's parser sees (whitespace and comments dropped)."""
    return [token for token in tokens if not token.is_trivia]


def lex_error(tokens: list[Token]) -> Token | None:
    return tokens[-1] if tokens and tokens[-1].kind == Kind.error else None


def line_column(code: str, index: int) -> tuple[int, int]:
    """1-based line and 0-based column of ``index`` (Lean's message positions)."""
    line = code.count("\n", 0, index) + 1
    return line, index - (code.rfind("\n", 0, index) + 1)
