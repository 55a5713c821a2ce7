"""Test doubles that speak real protocols: an OpenAI-compatible HTTP server (the fake Kimina server moved to
tests/doubles/kimina_server.py; tests run the real Kimina server where they can).

The names load on first use, so ``python -m repro.testing.openai_server`` runs the module once, as its
``__main__``, without the warning that it was imported already (n3)."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from repro.testing.openai_server import Fault, OpenAITestServer

__all__ = ["Fault", "OpenAITestServer"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'repro.testing' has no attribute {name!r}")
    return getattr(import_module("repro.testing.openai_server"), name)
