"""Prover and formalizer output hygiene: find the Lean block, spot special tokens, spot truncation."""

from __future__ import annotations

import re

from pydantic import BaseModel

# ASCII `<|...|>` and the full-width `<｜...｜>` forms that DeepSeek-style tokenizers leak. A special
# token is one word (`<|im_end|>`, `<|Assistant|>`, `<｜end▁of▁sentence｜>`); Lean's pipes
# `f <| g x |> h` have spaces inside and are code, not tokens.
SPECIAL_TOKEN = re.compile(r"<\|[A-Za-z_][\w▁.\-]{0,39}\|>|<｜[^｜<>\s]{1,40}｜>")
_OPENING_FENCE = re.compile(r"```(lean4|lean)?([^\n`]*)\n")
_CLOSING_FENCE = re.compile(r"^[ \t]*```", re.MULTILINE)
_THINK_END = "</think>"


def find_special_tokens(text: str) -> list[str]:
    return SPECIAL_TOKEN.findall(text)


class LeanExtraction(BaseModel):
    code: str | None
    # None on success; "no_lean_block" or "generation_truncated" otherwise
    failure: str | None = None
    special_tokens: list[str] = []
    closed: bool = True


def _fenced_blocks(body: str) -> list[tuple[str, str, bool]]:
    """(language, code, closed) of each ```lean4, ```lean and untagged ``` block.

    A block closes at the first ``` that starts a line outside a Lean comment or string (a doc
    comment may show a fenced example); an untagged fence counts only when its line says nothing else.
    """
    from repro.lean.lexer import Kind, lex  # the lexer is a leaf module; imported here to keep llm light

    blocks: list[tuple[str, str, bool]] = []
    cursor = 0
    while (opening := _OPENING_FENCE.search(body, cursor)) is not None:
        language, rest = opening.group(1) or "", opening.group(2)
        start = opening.end()
        inside = [
            (token.start + start, token.end + start)
            for token in lex(body[start:])
            if token.kind in (Kind.block_comment, Kind.string, Kind.raw_string, Kind.interpolated_string)
        ]
        closing = next(
            (m for m in _CLOSING_FENCE.finditer(body, start) if not any(a < m.start() < b for a, b in inside)),
            None,
        )
        end = closing.start() if closing else len(body)
        if language or not rest.strip():
            blocks.append((language, body[start:end], closing is not None))
        if closing is None:
            break
        cursor = body.find("```", closing.start()) + 3
    return blocks


def extract_lean_block(text: str, finish_reason: str = "stop") -> LeanExtraction:
    """The last ```lean4 block (else the last ```lean, else the last untagged ``` block) after any ``</think>``.

    A reply that hit the token limit with its last block unclosed is a failed extraction with its
    own reason, never a silently shortened proof.
    """
    tokens = find_special_tokens(text)
    body = text.rsplit(_THINK_END, 1)[1] if _THINK_END in text else text
    blocks = _fenced_blocks(body)
    if not blocks:
        failure = "generation_truncated" if finish_reason == "length" else "no_lean_block"
        return LeanExtraction(code=None, failure=failure, special_tokens=tokens)
    lean4 = [block for block in blocks if block[0] == "lean4"]
    lean = [block for block in blocks if block[0] == "lean"]
    _, code, closed = (lean4 or lean or blocks)[-1]
    if not closed and finish_reason == "length":
        return LeanExtraction(code=code, failure="generation_truncated", special_tokens=tokens, closed=False)
    return LeanExtraction(code=code.strip("\n"), special_tokens=tokens, closed=closed)
