"""A small OpenAI-compatible HTTP server on 127.0.0.1 for tests and benchmarks.

It serves ``/v1/chat/completions``, ``/v1/completions`` and ``/v1/models`` in the API's real JSON
shapes, answers with a responder function, and can inject faults (status codes with headers, slow
replies, malformed bodies) in order. It records every request body and the highest number of
requests it ever had in flight, so tests can check what the client actually sent.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Responder = Callable[[dict[str, Any], int], str]  # (request body, sample index) -> text


@dataclass
class Fault:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None
    delay_s: float = 0.0


def echo_responder(body: dict[str, Any], index: int) -> str:
    if "messages" in body:
        return f"echo {index}: {body['messages'][-1]['content'][:40]}"
    return f"echo {index}: {str(body.get('prompt'))[:40]}"


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # the default backlog of 5 drops connections under load
    daemon_threads = True


class OpenAITestServer:
    def __init__(self, responder: Responder = echo_responder, *, latency_s: float = 0.0) -> None:
        self.responder = responder
        self.latency_s = latency_s
        self.faults: list[Fault] = []
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}/v1"

    def __enter__(self) -> OpenAITestServer:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # headers and body go out in separate writes: without TCP_NODELAY, Nagle's algorithm and
            # the client's delayed ACK add ~40 ms to every keep-alive response
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
                return

            def _send(self, status: int, payload: str, headers: dict[str, str] | None = None) -> None:
                data = payload.encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802 - stdlib name
                self._send(200, json.dumps({"object": "list", "data": [{"id": "test-model", "object": "model"}]}))

            def do_POST(self) -> None:  # noqa: N802 - stdlib name
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                with server._lock:
                    server.requests.append(body)
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                    fault = server.faults.pop(0) if server.faults else None
                try:
                    if fault and fault.delay_s:
                        time.sleep(fault.delay_s)
                    if fault and (fault.status != 200 or fault.body is not None):
                        payload = (
                            fault.body
                            if fault.body is not None
                            else json.dumps(
                                {"error": {"message": f"injected {fault.status}", "type": "test", "code": fault.status}}
                            )
                        )
                        self._send(fault.status, payload, fault.headers)
                        return
                    if server.latency_s:
                        time.sleep(server.latency_s)
                    self._send(200, json.dumps(server._completion(self.path, body)))
                finally:
                    with server._lock:
                        server.in_flight -= 1

        return Handler

    def _completion(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        n = int(body.get("n", 1))
        texts = [self.responder(body, index) for index in range(n)]
        max_tokens = int(body.get("max_tokens") or 16)
        finish = ["length" if len(text.split()) > max_tokens else "stop" for text in texts]
        usage = {
            "prompt_tokens": 10,
            "completion_tokens": sum(len(t.split()) for t in texts),
            "total_tokens": 10 + sum(len(t.split()) for t in texts),
        }
        if path.endswith("/chat/completions"):
            choices = [
                {
                    "index": i,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": finish[i],
                    "logprobs": None,
                }
                for i, text in enumerate(texts)
            ]
            return {
                "id": "chatcmpl-test",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model"),
                "choices": choices,
                "usage": usage,
            }
        choices = [
            {"index": i, "text": text, "finish_reason": finish[i], "logprobs": None} for i, text in enumerate(texts)
        ]
        return {
            "id": "cmpl-test",
            "object": "text_completion",
            "created": int(time.time()),
            "model": body.get("model"),
            "choices": choices,
            "usage": usage,
        }
