"""Prompt templates live as files in ``prompts/``; each is versioned by the hash of its content."""

from __future__ import annotations

import hashlib
import string
from functools import cache
from pathlib import Path

from repro.lean.text.blocks import SPECIAL_TOKEN

_PACKAGE_DIR = Path(__file__).resolve().parent


def prompts_dir() -> Path:
    bundled = _PACKAGE_DIR / "_bundled" / "prompts"
    return bundled if bundled.is_dir() else _PACKAGE_DIR.parent / "prompts"


def bundled_path(relative: str) -> Path:
    """A file shipped with repro (configs, data, lean_project), in a wheel or a source checkout."""
    bundled = _PACKAGE_DIR / "_bundled" / relative
    return bundled if bundled.exists() else _PACKAGE_DIR.parent / relative


def user_or_bundled(path: str | Path) -> Path:
    """``path`` as given when it exists, else the shipped file of that relative name (``configs/demo.yaml``
    from any directory, as ``repro --help`` shows it), else ``path`` (whose absence the caller reports)."""
    given = Path(path)
    if given.exists() or given.is_absolute():
        return given
    shipped = bundled_path(str(given))
    return shipped if shipped.exists() else given


@cache
def prompt_template(name: str) -> str:
    path = prompts_dir() / f"{name}.md"
    if not path.is_file():
        raise FileNotFoundError(f"prompt template {path} is missing")
    return path.read_text(encoding="utf-8")


def prompt_version(name: str) -> str:
    return hashlib.sha256(prompt_template(name).encode("utf-8")).hexdigest()[:12]


def neutralise_control_tokens(text: str) -> str:
    """``text`` with every chat control string broken so that no tokenizer reads it as a control token.

    Model-written text (a rewritten question, a formal statement, a prover's reply, Lean's messages that echo
    it) is pasted into other models' prompts. Neither a chat template nor vLLM escapes a ``<|im_end|>``,
    ``<|im_start|>``, ``<｜end▁of▁sentence｜>`` or ``<｜Assistant｜>`` inside a message: the tokenizer matches
    its special tokens as exact strings anywhere in the rendered prompt, so such a string in a question ends
    the user's turn and opens a forged one (a system turn telling the alignment check to answer
    "Consistent"). Each string of the screen's own definition (:data:`repro.lean.text.blocks.SPECIAL_TOKEN`:
    ``<|name|>`` and the full-width ``<｜name｜>``) gets a space inside each bracket, ``< |im_end| >``: still
    legible to the model, matched by no tokenizer, and by the pattern no more (so a second pass changes
    nothing). Text without such a string is returned as it is, byte for byte: the harnesses' prompts are
    unchanged. ``<think>``/``</think>`` are left alone: they open no turn, and Qwen3's template reads them in
    an assistant turn to drop earlier reasoning, as the Goedel harness's history relies on.
    """
    if "<|" not in text and "<｜" not in text:
        return text
    return SPECIAL_TOKEN.sub(lambda match: f"{match.group(0)[0]} {match.group(0)[1:-1]} {match.group(0)[-1]}", text)


def render_prompt(name: str, **values: object) -> str:
    """``$name`` placeholders (string.Template), so Lean and JSON braces need no escaping. Every value is
    model-written or data (:func:`neutralise_control_tokens` breaks the chat control strings in it); the
    template's own text is ours."""
    return string.Template(prompt_template(name)).substitute(
        {k: neutralise_control_tokens(str(v)) for k, v in values.items()}
    )
