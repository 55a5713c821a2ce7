"""A Kimina-Lean-Server-like HTTP server on 127.0.0.1 for tests: the faults the real one cannot be made to show.

The real server (kimina-ast-server 2.1.3 from PyPI) runs in tests/test_kimina_real_server.py against a
line-wise REPL stand-in; this fake stays for what that release cannot show: the current upstream's line
behaviour (header offset added back since e2cdc1f) and HTTP 429, a stalled server, fractional timeouts.
It imitates project-numina/kimina-lean-server at HEAD (fb2393d), read, not copied:

- ``POST /api/check`` with ``{"snippets": [{"id", "code"}], "timeout": int, ...}`` answers
  ``{"results": [{"id", "time", "response" | "error"}]}`` (``server/routers/check.py``); ``timeout`` is an
  ``int`` field (``client/kimina_client/models.py``, ``BaseRequest``): a fractional value is a 422.
- The code is split into imports and body (``server/split.py``); positions in the REPL's reply are then
  shifted back by the header's line count, except on servers from 2025-07-24 to 2025-10-24
  (``line_behaviour="old"``), which left them relative to the body.
- A request waits up to ``max_wait_s`` for one of ``max_repls`` REPLs, then gets HTTP 429
  (``server/manager.py`` ``get_repl`` raising ``NoAvailableReplError``); a body that runs past the
  request's ``timeout`` answers ``"Lean REPL command timed out in T seconds"``.

"Lean" here is a small rule set over the code's lines (enough for the gate's commands and the client's
probes): ``#print "s"`` prints ``s`` at its line, ``#eval Lean.versionString`` the configured version, the
Mathlib probe the configured commit, ``#print axioms X`` a clean report, ``sorry`` a warning, a line holding
``  bad`` an error, ``SLOW`` takes ``slow_s`` seconds; ``stall_s`` delays every answer (a stuck server).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from tests.doubles.line_lean import lean_line


def _split_header(code: str) -> int:
    """How many leading lines the server takes as its header: imports and blank lines."""
    lines = code.splitlines()
    count = 0
    while count < len(lines) and (not lines[count].strip() or lines[count].strip().startswith("import ")):
        count += 1
    return count


class _Server(ThreadingHTTPServer):
    request_queue_size = 256
    daemon_threads = True


class KiminaTestServer:
    def __init__(
        self,
        *,
        lean_version: str = "4.15.0",
        mathlib_commit: str | None = "a" * 40,
        line_behaviour: Literal["current", "old"] = "current",
        max_repls: int = 4,
        max_wait_s: float = 60.0,
        busy_first: int = 0,
        slow_s: float = 0.0,
        stall_s: float = 0.0,
        cold_header_s: float = 0.0,
    ) -> None:
        self.lean_version = lean_version
        self.mathlib_commit = mathlib_commit
        self.line_behaviour = line_behaviour
        self.max_wait_s = max_wait_s
        self.busy_first = busy_first
        self.slow_s = slow_s
        # a server that answers nothing for this long (overloaded, stuck): the client must not call it Lean's
        self.stall_s = stall_s
        # every request gets a fresh REPL whose header (the imports) takes this long, under the request's own
        # timeout (server/routers/check.py runs manager.prep with it): "header command timed out" past it
        self.cold_header_s = cold_header_s
        self.bodies: list[dict[str, Any]] = []
        self.statuses: list[int] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._repls = threading.BoundedSemaphore(max_repls)
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                status, payload = server._answer(body)
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    return

        self.server = _Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> KiminaTestServer:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- the server ----------------------------------------------------------------------------------
    def _answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.bodies.append(body)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            busy = len(self.bodies) <= self.busy_first
        try:
            time.sleep(self.stall_s)
            timeout = body.get("timeout", 30)
            if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout != int(timeout):
                return self._status(
                    422, {"detail": [{"loc": ["body", "timeout"], "msg": "Input should be a valid integer"}]}
                )
            if busy or not self._repls.acquire(timeout=self.max_wait_s):
                return self._status(429, {"detail": "No available REPLs"})
            try:
                results = [self._run(snippet, int(timeout)) for snippet in body["snippets"]]
            finally:
                self._repls.release()
            return self._status(200, {"results": results})
        finally:
            with self._lock:
                self.in_flight -= 1

    def _status(self, status: int, payload: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        with self._lock:
            self.statuses.append(status)
        return status, payload

    def _run(self, snippet: dict[str, Any], timeout: int) -> dict[str, Any]:
        code = snippet["code"]
        started = time.monotonic()
        if "SLOW" in code:
            time.sleep(min(self.slow_s, timeout))
            if self.slow_s >= timeout:
                return {
                    "id": snippet["id"],
                    "error": f"Lean REPL command timed out in {timeout} seconds",
                    "time": timeout,
                }
        header_lines = _split_header(code)
        has_imports = any(line.strip().startswith("import ") for line in code.splitlines()[:header_lines])
        if self.cold_header_s and has_imports and self.cold_header_s >= timeout:
            return {
                "id": snippet["id"],
                "error": f"Lean REPL header command timed out in {timeout} seconds",
                "time": timeout,
            }
        if "partial def" in code and "#eval" in code:  # a spin: Lean evaluates it forever
            return {"id": snippet["id"], "error": f"Lean REPL command timed out in {timeout} seconds", "time": timeout}
        shift = header_lines if self.line_behaviour == "old" else 0
        messages = []
        for number, line in enumerate(code.split("\n"), start=1):
            for severity, data in self._lean(line, code):
                messages.append({"severity": severity, "pos": {"line": number - shift, "column": 0}, "data": data})
            if line.rstrip().endswith("UNFINISHED"):
                # Lean's parse error for an unfinished declaration, at the next token: our following sentinel
                at = {"line": number + 2 - shift, "column": 0}
                messages.append(
                    {"severity": "error", "pos": at, "endPos": at, "data": "unexpected token '#print'; expected term"}
                )
        return {
            "id": snippet["id"],
            "time": round(time.monotonic() - started, 3),
            "response": {"messages": messages, "env": 0},
        }

    def _lean(self, line: str, code: str) -> list[tuple[str, str]]:
        return lean_line(line, lean_version=self.lean_version, mathlib_commit=self.mathlib_commit)
