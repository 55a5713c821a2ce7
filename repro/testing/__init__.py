"""Test doubles that speak real protocols: an OpenAI-compatible HTTP server (the fake Kimina server moved to
tests/doubles/kimina_server.py; tests run the real Kimina server where they can)."""

from repro.testing.openai_server import Fault, OpenAITestServer

__all__ = ["Fault", "OpenAITestServer"]
