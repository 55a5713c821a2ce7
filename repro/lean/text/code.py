"""Lean text lexed once: the one object every reader of a prover's code works on.

The gate's policy, the failure taxonomy, the statement reader and the answer stage all need the
tokens, positions and comment-free forms of the same code. Computing them once (tokens at
construction, everything else on first use) keeps one sample's path through the gate linear in
the size of the code: a line number is a binary search over line starts computed in one pass,
never a count from the start of the text for every token.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from functools import cached_property

from repro.lean.text.lexer import Kind, Token, lex, lex_error, significant

_COMMENTS = frozenset({Kind.line_comment, Kind.block_comment})
# Text that is the prover's say-so, not Lean's: comments and every kind of literal.
_PROSE = _COMMENTS | {Kind.string, Kind.raw_string, Kind.interpolated_string, Kind.char}


def _blank_keeping_lines(text: str) -> str:
    """Spaces for every character but ``\\n``: positions and line numbers stay where Lean sees them."""
    return "\n".join(" " * len(line) for line in text.split("\n"))


@dataclass(frozen=True, eq=False)
class LeanCode:
    """``text`` and its tokens (trivia included; their texts concatenate back to ``text``)."""

    text: str
    tokens: list[Token]

    @classmethod
    def of(cls, text: str) -> LeanCode:
        return cls(text, lex(text))

    @cached_property
    def significant(self) -> list[Token]:
        """The tokens Lean's parser sees (whitespace and comments dropped)."""
        return significant(self.tokens)

    @cached_property
    def error(self) -> Token | None:
        """The ``error`` token that ends the tokens when Lean would not lex the text, else None."""
        return lex_error(self.tokens)

    @cached_property
    def line_starts(self) -> list[int]:
        """Offset of the first character of every line (found in one pass)."""
        starts = [0]
        text, cursor = self.text, self.text.find("\n")
        while cursor != -1:
            starts.append(cursor + 1)
            cursor = text.find("\n", cursor + 1)
        return starts

    def line_column(self, offset: int) -> tuple[int, int]:
        """1-based line and 0-based column of ``offset`` (Lean's message positions)."""
        line = bisect_right(self.line_starts, offset)
        return line, offset - self.line_starts[line - 1]

    def where(self, token: Token) -> str:
        line, column = self.line_column(token.start)
        return f"line {line}:{column}"

    def at_column_zero(self, token: Token) -> bool:
        return token.start == 0 or self.text[token.start - 1] == "\n"

    @cached_property
    def without_comments(self) -> str:
        """The text with every comment replaced by spaces (newlines kept)."""
        return "".join(_blank_keeping_lines(t.text) if t.kind in _COMMENTS else t.text for t in self.tokens)

    @cached_property
    def comment_free(self) -> str:
        """The text with every comment dropped (layout not kept)."""
        return "".join(t.text for t in self.tokens if t.kind not in _COMMENTS)

    @cached_property
    def without_prose(self) -> str:
        """Comments and literals blanked: text there is the prover's say-so, not Lean's.

        A ``-- the answer is 42`` comment must neither ground an answer nor steer an extraction model.
        """
        return "".join(" " * len(t.text) if t.kind in _PROSE else t.text for t in self.tokens)


def lean_code(code: str | LeanCode) -> LeanCode:
    """``code`` as a :class:`LeanCode`, lexing it only when it is plain text."""
    return code if isinstance(code, LeanCode) else LeanCode.of(code)
