"""Test doubles that speak real protocols: an OpenAI-compatible HTTP server and a Kimina-like server."""

from repro.testing.kimina_server import KiminaTestServer
from repro.testing.openai_server import Fault, OpenAITestServer

__all__ = ["Fault", "KiminaTestServer", "OpenAITestServer"]
