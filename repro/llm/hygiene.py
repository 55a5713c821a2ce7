"""Prover and formalizer output hygiene: find the Lean block, spot special tokens, spot truncation."""

from __future__ import annotations

import re

from pydantic import BaseModel

# ASCII `<|...|>` and the full-width `<｜...｜>` forms that DeepSeek-style tokenizers leak. A special
# token is one word (`<|im_end|>`, `<|Assistant|>`, `<｜end▁of▁sentence｜>`); Lean's pipes
# `f <| g x |> h` have spaces inside and are code, not tokens.
SPECIAL_TOKEN = re.compile(r"<\|[A-Za-z_][\w▁.\-]{0,39}\|>|<｜[^｜<>\s]{1,40}｜>")
_FENCE = re.compile(r"```(lean4|lean)[^\n]*\n(.*?)(```|\Z)", re.DOTALL)
_THINK_END = "</think>"


def find_special_tokens(text: str) -> list[str]:
    return SPECIAL_TOKEN.findall(text)


class LeanExtraction(BaseModel):
    code: str | None
    # None on success; "no_lean_block" or "generation_truncated" otherwise
    failure: str | None = None
    special_tokens: list[str] = []
    closed: bool = True


def extract_lean_block(text: str, finish_reason: str = "stop") -> LeanExtraction:
    """The last ```lean4 block (else last ```lean block) after any ``</think>`` section.

    A reply that hit the token limit with its last block unclosed is a failed extraction with its
    own reason, never a silently shortened proof.
    """
    tokens = find_special_tokens(text)
    body = text.rsplit(_THINK_END, 1)[1] if _THINK_END in text else text
    blocks = [(m.group(1), m.group(2), m.group(3) == "```") for m in _FENCE.finditer(body)]
    if not blocks:
        failure = "generation_truncated" if finish_reason == "length" else "no_lean_block"
        return LeanExtraction(code=None, failure=failure, special_tokens=tokens)
    lean4 = [block for block in blocks if block[0] == "lean4"]
    _, code, closed = (lean4 or blocks)[-1]
    if not closed and finish_reason == "length":
        return LeanExtraction(code=code, failure="generation_truncated", special_tokens=tokens, closed=False)
    return LeanExtraction(code=code.strip("\n"), special_tokens=tokens, closed=closed)
