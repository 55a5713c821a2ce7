"""A model's reply read once: special tokens, its fenced code blocks, and the code they hold, lexed.

The reply is scanned left to right a single time. Each block is lexed from its opening fence up to
the first closing fence outside a Lean comment or string (a doc comment may show a fenced example);
the tokens lexed while looking for that fence are the block's tokens, so the code the gate checks
is never lexed again. The next opening fence is searched only after the previous block's closing
fence, so no character is lexed on behalf of two blocks; an unterminated comment or string runs to
the end of the reply, and what that scan learned (:class:`~repro.lean.text.lexer.Unclosed`) ends
the same scan in a later block at once.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

from pydantic import BaseModel

from repro.lean.text.budget import check_time
from repro.lean.text.code import LeanCode
from repro.lean.text.lexer import Kind, Token, Unclosed, lex_from, make_token

# ASCII `<|...|>` and the full-width `<｜...｜>` forms that DeepSeek-style tokenizers leak. A special
# token is one word (`<|im_end|>`, `<|Assistant|>`, `<｜end▁of▁sentence｜>`); Lean's pipes
# `f <| g x |> h` have spaces inside and are code, not tokens.
SPECIAL_TOKEN = re.compile(r"<\|[A-Za-z_][\w▁.\-]{0,39}\|>|<｜[^｜<>\s]{1,40}｜>")
_OPENING_FENCE = re.compile(r"```(lean4|lean)?([^\n`]*)\n")
_CLOSING_FENCE = re.compile(r"^[ \t]*```", re.MULTILINE)
_THINK_END = "</think>"
# Tokens a closing fence can stand inside without closing the block.
_HIDING = frozenset({Kind.block_comment, Kind.string, Kind.raw_string, Kind.interpolated_string})


def find_special_tokens(text: str) -> list[str]:
    return SPECIAL_TOKEN.findall(text)


@dataclass(frozen=True)
class CodeBlock:
    """One fenced block: ``language`` is ``lean4``, ``lean`` or ``""`` (untagged)."""

    language: str
    start: int  # offsets into the reply's body (after any ``</think>``)
    end: int
    closed: bool
    tokens: list[Token]  # lexed from ``start``; may run past ``end`` (see :func:`_clip`)


def _closing_fence(body: str, start: int, tokens: list[Token], unclosed: Unclosed) -> re.Match[str] | None:
    """The first closing fence after ``start`` that no comment or string lexed from ``start`` hides."""
    lexer: Iterator[Token] = lex_from(body, start, unclosed)
    current: Token | None = None
    for fence in _CLOSING_FENCE.finditer(body, start):
        position = fence.start()
        while current is None or current.end <= position:
            current = next(lexer, None)
            if current is None:
                return fence
            tokens.append(current)
        if not (current.kind in _HIDING and current.start < position):
            return fence
    for token in lexer:  # no closing fence: the block runs to the end of the reply
        tokens.append(token)
    return None


def fenced_blocks(body: str) -> list[CodeBlock]:
    """Each ```lean4, ```lean and untagged ``` block; an untagged fence counts only when its line says nothing else."""
    blocks: list[CodeBlock] = []
    unclosed = Unclosed()
    cursor = 0
    while (opening := _OPENING_FENCE.search(body, cursor)) is not None:
        language, rest = opening.group(1) or "", opening.group(2)
        start = opening.end()
        check_time()
        tokens: list[Token] = []
        closing = _closing_fence(body, start, tokens, unclosed)
        end = closing.start() if closing else len(body)
        if language or not rest.strip():
            blocks.append(CodeBlock(language, start, end, closing is not None, tokens))
        if closing is None:
            break
        cursor = body.find("```", closing.start()) + 3
    return blocks


def _clip(body: str, tokens: list[Token], start: int, end: int) -> list[Token]:
    """The tokens of ``body[start:end]``, rebased to offset 0: what lexing that slice alone gives.

    ``start`` only skips leading newlines, so no token crosses it but whitespace. A token crossing
    ``end`` (the closing fence's line) is whitespace, an error token, or a ``«»`` name that ran over
    the fence; all but whitespace are lexed again from their start within the slice, so the result
    is exactly the slice's own tokens. An error token (lexed without its text) gets its text here.
    """
    clipped: list[Token] = []
    for token in tokens:
        if token.end <= start:
            continue
        if token.start >= end:
            break
        if start <= token.start and token.end <= end and token.kind != Kind.error:
            clipped.append(make_token(token.kind, token.text, token.start - start, token.end - start))
            continue
        low = max(token.start, start)
        if token.end > end and token.kind != Kind.whitespace:
            clipped.extend(
                make_token(t.kind, t.text, t.start - start, t.end - start) for t in lex_from(body[:end], low)
            )
            break
        high = min(token.end, end)
        if high > low:  # a whitespace run that only touches the slice adds no (empty) token
            clipped.append(make_token(token.kind, body[low:high], low - start, high - start))
    return clipped


class LeanExtraction(BaseModel):
    code: str | None
    # None on success; "no_lean_block" or "generation_truncated" otherwise
    failure: str | None = None
    special_tokens: list[str] = []
    closed: bool = True


@dataclass(frozen=True, eq=False)
class ProverOutput:
    """A reply as the gate reads it: special tokens, the chosen block and its code, lexed once.

    The chosen block is the last ```lean4 block (else the last ```lean, else the last untagged ```
    block) after any ``</think>``. A reply that hit the token limit with that block unclosed is a
    failed extraction with its own reason, never a silently shortened proof.
    """

    text: str
    finish_reason: str
    special_tokens: list[str]
    blocks: list[CodeBlock]
    block: CodeBlock | None
    failure: str | None
    extracted: LeanCode | None  # the chosen block's code (None when there is none)

    @property
    def fenced(self) -> bool:
        return "```" in self.text

    @property
    def closed(self) -> bool:
        return self.block is None or self.block.closed

    @property
    def truncated(self) -> bool:
        """Cut by the token limit before the code was closed (the gate's reading)."""
        if not self.fenced:
            return self.finish_reason == "length"
        return self.finish_reason == "length" and not self.closed or self.failure == "generation_truncated"

    @cached_property
    def code(self) -> LeanCode:
        """What the gate checks: the chosen block; a reply without any fence is all code."""
        if not self.fenced:
            return LeanCode.of(self.text)
        return self.extracted or LeanCode("", [])

    def extraction(self) -> LeanExtraction:
        return LeanExtraction(
            code=self.extracted.text if self.extracted is not None else None,
            failure=self.failure,
            special_tokens=self.special_tokens,
            closed=self.closed,
        )


def read_output(text: str, finish_reason: str = "stop") -> ProverOutput:
    """Read a model's reply once (see :class:`ProverOutput`)."""
    special = find_special_tokens(text)
    offset = text.rfind(_THINK_END) + len(_THINK_END) if _THINK_END in text else 0
    body = text[offset:]
    blocks = fenced_blocks(body)
    if not blocks:
        missing = "generation_truncated" if finish_reason == "length" else "no_lean_block"
        return ProverOutput(text, finish_reason, special, blocks, None, missing, None)
    lean4 = [block for block in blocks if block.language == "lean4"]
    lean = [block for block in blocks if block.language == "lean"]
    chosen = (lean4 or lean or blocks)[-1]
    start, end = chosen.start, chosen.end
    failure: str | None = None
    if not chosen.closed and finish_reason == "length":
        failure = "generation_truncated"  # the cut code is kept as it stands, for the audit
    else:
        while start < end and body[start] == "\n":
            start += 1
        while end > start and body[end - 1] == "\n":
            end -= 1
    code = LeanCode(body[start:end], _clip(body, chosen.tokens, start, end))
    return ProverOutput(text, finish_reason, special, blocks, chosen, failure, code)


def extract_lean_block(text: str, finish_reason: str = "stop") -> LeanExtraction:
    """The chosen block of a reply (see :class:`ProverOutput`), as a record."""
    return read_output(text, finish_reason).extraction()
