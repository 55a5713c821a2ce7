"""Stand-in for the ``prisma`` database client the real Kimina server imports at start (server/prisma_client.py).

prisma-client-py (0.15.0) must be *generated* before import, which downloads Prisma's query-engine binaries:
impossible offline. The server only touches the client after ``db.connect()`` succeeds, which it attempts only
when ``LEAN_SERVER_DATABASE_URL`` is set (server/main.py ``lifespan``); the tests never set it. So this stub
refuses to connect, like a database that is not there, and everything else the server runs is its own code.
Put on the server's PYTHONPATH only (tests/test_kimina_real_server.py).
"""

from __future__ import annotations

from typing import Any


class Prisma:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.repl: Any = None
        self.proof: Any = None

    async def connect(self) -> None:
        raise ConnectionError("no database in the tests (prisma stand-in)")

    async def disconnect(self) -> None:
        return None
