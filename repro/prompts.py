"""Prompt templates live as files in ``prompts/``; each is versioned by the hash of its content."""

from __future__ import annotations

import hashlib
import string
from functools import cache
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent


def prompts_dir() -> Path:
    bundled = _PACKAGE_DIR / "_bundled" / "prompts"
    return bundled if bundled.is_dir() else _PACKAGE_DIR.parent / "prompts"


def bundled_path(relative: str) -> Path:
    """A file shipped with repro (configs, data, lean_project), in a wheel or a source checkout."""
    bundled = _PACKAGE_DIR / "_bundled" / relative
    return bundled if bundled.exists() else _PACKAGE_DIR.parent / relative


@cache
def prompt_template(name: str) -> str:
    path = prompts_dir() / f"{name}.md"
    if not path.is_file():
        raise FileNotFoundError(f"prompt template {path} is missing")
    return path.read_text(encoding="utf-8")


def prompt_version(name: str) -> str:
    return hashlib.sha256(prompt_template(name).encode("utf-8")).hexdigest()[:12]


def render_prompt(name: str, **values: object) -> str:
    """``$name`` placeholders (string.Template), so Lean and JSON braces need no escaping."""
    return string.Template(prompt_template(name)).substitute({k: str(v) for k, v in values.items()})
