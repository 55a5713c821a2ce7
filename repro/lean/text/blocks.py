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
from repro.lean.text.lexer import SPECIAL_TOKEN, Kind, Token, Unclosed, lex_from, make_token

# ASCII `<|...|>` and the full-width `<｜...｜>` forms that DeepSeek-style tokenizers leak. A special
# token is one word (`<|im_end|>`, `<|Assistant|>`, `<｜end▁of▁sentence｜>`); Lean's pipes
# `f <| g x |> h` have spaces inside and are code, not tokens.

_OPENING_FENCE = re.compile(r"```(lean4|lean)?([^\n`]*)\n")
# A closing fence starts a line, or ends one glued to the code (``  nlinarith [sq_nonneg a]```): Goedel-Prover-V2's
# extractor (src/utils.py:329, ``r'```lean4\n(.*?)```'``) takes such a block. Three backticks then the end of
# the line are no Lean (a backtick starts a name literal or a quotation, which needs a name or ``(`` after it).
_CLOSING_FENCE = re.compile(r"^[ \t]*```|(?P<glued>```)(?=[ \t]*$)", re.MULTILINE)
_THINK_END = "</think>"
# Tokens a closing fence can stand inside without closing the block.
_HIDING = frozenset({Kind.block_comment, Kind.string, Kind.raw_string, Kind.interpolated_string})
# A fence glued to the end of a line may also stand at the end of a line comment (``-- as in ```lean``).
_HIDING_GLUED = _HIDING | {Kind.line_comment}


def find_special_tokens(text: str) -> list[str]:
    return SPECIAL_TOKEN.findall(text)


@dataclass(frozen=True, slots=True)
class CodeBlock:
    """One fenced block: ``language`` is ``lean4``, ``lean`` or ``""`` (untagged)."""

    language: str
    start: int  # offsets into the text read: after the last ``</think>``, or the whole reply when no block follows it
    end: int
    closed: bool


@dataclass(frozen=True, slots=True)
class _LexedBlock:
    """A block with the tokens lexed while finding its end, offsets counted from ``code_start``.

    ``code_start`` is the block's start past its leading newlines: where its code starts when
    the reply is read normally, so those tokens become the code's tokens as they are. The tokens
    may run past ``block.end`` (see :func:`_clip`).
    """

    block: CodeBlock
    code_start: int
    tokens: list[Token]


def _closing_fence(body: str, code_start: int, tokens: list[Token], unclosed: Unclosed) -> re.Match[str] | None:
    """The first closing fence from ``code_start`` on that no comment or string lexed from there hides.

    Only newlines lie between the opening fence and ``code_start``, so no fence starts before it.
    """
    lexer: Iterator[Token] = lex_from(body, code_start, unclosed, base=code_start)
    current: Token | None = None
    for fence in _CLOSING_FENCE.finditer(body, code_start):
        position = fence.start() - code_start
        while current is None or current.end <= position:
            current = next(lexer, None)
            if current is None:
                return fence
            tokens.append(current)
        hiding = _HIDING_GLUED if fence.group("glued") else _HIDING
        if not (current.kind in hiding and current.start < position):
            return fence
    for token in lexer:  # no closing fence: the block runs to the end of the reply
        tokens.append(token)
    return None


def _lexed_blocks(body: str) -> Iterator[_LexedBlock]:
    """Each block in order, with its tokens; a reader keeps the tokens of the blocks it may choose only."""
    unclosed = Unclosed()
    cursor = 0
    while (opening := _OPENING_FENCE.search(body, cursor)) is not None:
        language, rest = opening.group(1) or "", opening.group(2)
        start = code_start = opening.end()
        while code_start < len(body) and body[code_start] == "\n":
            code_start += 1
        check_time()
        tokens: list[Token] = []
        closing = _closing_fence(body, code_start, tokens, unclosed)
        end = closing.start() if closing else len(body)
        if language or not rest.strip():
            yield _LexedBlock(CodeBlock(language, start, end, closing is not None), code_start, tokens)
        if closing is None:
            break
        cursor = body.find("```", closing.start()) + 3


def fenced_blocks(body: str) -> list[CodeBlock]:
    """Each ```lean4, ```lean and untagged ``` block; an untagged fence counts only when its line says nothing else."""
    return [lexed.block for lexed in _lexed_blocks(body)]


def _clip(body: str, lexed: _LexedBlock, start: int, end: int) -> list[Token]:
    """The tokens of ``body[start:end]``, offsets from ``start``: what lexing that slice alone gives.

    ``start`` is ``lexed.code_start`` (the tokens are kept as they are) or, for a cut reply's code
    kept as it stands, the block's start: its leading newlines join the first whitespace token.
    A token crossing ``end`` (the closing fence's line) is whitespace, an error token, or a ``«»``
    name that ran over the fence; all but whitespace are lexed again from their start within the
    slice, so the result is exactly the slice's own tokens. An error token (lexed without its text)
    gets its text here.
    """
    base, shift = lexed.code_start, lexed.code_start - start
    limit = end - base  # the slice's end, in the tokens' offsets
    clipped: list[Token] = []
    for token in lexed.tokens:
        if token.start >= limit:
            break
        if token.end <= limit and token.kind != Kind.error:
            clipped.append(
                token if not shift else make_token(token.kind, token.text, token.start + shift, token.end + shift)
            )
            continue
        if token.end > limit and token.kind != Kind.whitespace:
            relexed = lex_from(body[:end], base + token.start)
            clipped.extend(make_token(t.kind, t.text, t.start - start, t.end - start) for t in relexed)
            break
        high = min(token.end, limit)
        if high > token.start:  # a whitespace run that only touches the slice adds no (empty) token
            text = body[base + token.start : base + high]
            clipped.append(make_token(token.kind, text, token.start + shift, high + shift))
    if shift:
        newlines = body[start:base]
        if clipped and clipped[0].kind == Kind.whitespace:
            clipped[0] = make_token(Kind.whitespace, newlines + clipped[0].text, 0, clipped[0].end)
        else:
            clipped.insert(0, make_token(Kind.whitespace, newlines, 0, shift))
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
    block) after any ``</think>``; where no block follows it, the last of the whole reply, as the
    harnesses read it. A reply that hit the token limit with that block unclosed gives the last closed
    block before it (the harnesses' extractors need a closing fence); with none, it is a failed
    extraction with its own reason, never a silently shortened proof.
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
    blocks, last, closed = _read_blocks(body)
    if not blocks and offset:
        # no block after the reasoning: the harnesses read the whole reply (Goedel-Prover-V2 src/utils.py:323-337,
        # Kimina-Prover-Preview kimina_prover_demo/utils.py:208), so the last block inside <think> is the proof.
        # Nothing after </think> was lexed (no fence opened there): each character is still lexed at most once.
        body = text
        blocks, last, closed = _read_blocks(body)
    if not blocks:
        missing = "generation_truncated" if finish_reason == "length" else "no_lean_block"
        return ProverOutput(text, finish_reason, special, blocks, None, missing, None)
    chosen = _choice(last)
    if not chosen.block.closed and finish_reason == "length" and closed:
        # cut by the token cap inside its last block: the harnesses' extractors need a closing fence, so they take
        # the last closed block before it (Goedel-Prover-V2 src/utils.py:325-336; Kimina's utils.py:208)
        chosen = _choice(closed)
    start, end = chosen.block.start, chosen.block.end
    failure: str | None = None
    if not chosen.block.closed and finish_reason == "length":
        failure = "generation_truncated"  # the cut code is kept as it stands, for the audit
    else:
        start = min(chosen.code_start, end)  # past the leading newlines
        while end > start and body[end - 1] == "\n":
            end -= 1
    code = LeanCode(body[start:end], _clip(body, chosen, start, end))
    return ProverOutput(text, finish_reason, special, blocks, chosen.block, failure, code)


def _read_blocks(body: str) -> tuple[list[CodeBlock], dict[str, _LexedBlock], dict[str, _LexedBlock]]:
    """Every block of ``body``; the last per language, and the last closed one per language (only these can be
    chosen, so only their tokens are kept)."""
    blocks: list[CodeBlock] = []
    last: dict[str, _LexedBlock] = {}
    closed: dict[str, _LexedBlock] = {}
    for lexed in _lexed_blocks(body):
        blocks.append(lexed.block)
        last[lexed.block.language] = lexed
        if lexed.block.closed:
            closed[lexed.block.language] = lexed
    return blocks, last, closed


def _choice(blocks: dict[str, _LexedBlock]) -> _LexedBlock:
    """The last ```lean4 block, else the last ```lean one, else the last untagged one."""
    return blocks.get("lean4") or blocks.get("lean") or blocks[""]


def cut_after_block_holding(text: str, words: tuple[str, ...], finish_reason: str = "stop") -> int | None:
    """Where to cut ``text`` so that the block read is its last closed ```lean4 block holding every one of
    ``words`` (plain substrings): the end of that block's closing fence. None when the block :func:`read_output`
    chooses already holds them all, or when no closed ```lean4 block does.

    Kimina-Prover-Preview's own extractor (kimina_prover_demo/utils.py:199-216, ``extract_proof_from_text``) takes
    the last ```` ```lean4 ```` block of the whole reply that contains ``theorem``, ``by``, ``:=`` and ``import``,
    skipping a later block without them (an example, a usage line). Cutting the reply there lets every later reader
    (the screen, salvage, ``reverify`` of a released row) read the same block with the one rule of this module.
    """
    output = read_output(text, finish_reason)
    if output.extracted is not None and all(word in output.extracted.text for word in words):
        return None
    for block in reversed(fenced_blocks(text)):
        if block.language == "lean4" and block.closed and all(word in text[block.start : block.end] for word in words):
            return text.find("```", block.end) + 3
    return None


def extract_lean_block(text: str, finish_reason: str = "stop") -> LeanExtraction:
    """The chosen block of a reply (see :class:`ProverOutput`), as a record."""
    return read_output(text, finish_reason).extraction()
