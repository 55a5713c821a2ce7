"""A small OpenAI-compatible HTTP server on 127.0.0.1 for tests and benchmarks.

It serves ``/v1/chat/completions``, ``/v1/completions`` and ``/v1/models`` in the API's real JSON
shapes (as vLLM 0.33.0's OpenAI server answers them), and, when asked to, vLLM's own root routes
``POST /tokenize``, ``GET /version`` and ``GET /metrics`` (their 0.33.0 shapes; 0.8.5.post1 has the same).
It answers with a responder function, and can inject faults (status codes with headers, slow replies,
malformed bodies) in order. It records every request body and the highest number of
requests it ever had in flight, so tests can check what the client actually sent.
"""

from __future__ import annotations

import contextlib
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
    def __init__(
        self,
        responder: Responder = echo_responder,
        *,
        latency_s: float = 0.0,
        host: str = "127.0.0.1",
        port: int = 0,
        api_key: str | None = None,
        fail_status: int | None = None,
        served_models: list[str] | None = None,
        max_model_len: int | None = None,
        models_status: int = 200,
        tokenize: Callable[[dict[str, Any]], int] | None = None,
        version: str | None = None,
        kv_cache: tuple[int, int] | None = None,
    ) -> None:
        self.responder = responder
        self.latency_s = latency_s
        # `/v1/models` as vLLM answers it (vllm/entrypoints/openai/protocol.py ModelCard: id, max_model_len);
        # with no served models the route answers 404, as on a server that does not list models
        self.served_models = served_models
        self.max_model_len = max_model_len
        self.models_status = models_status
        # vLLM's own routes at the server root: `POST /tokenize` answers {"count", "max_model_len", "tokens"} with
        # the count this function gives for the body (vllm 0.33.0 entrypoints/serve/tokenize/protocol.py);
        # `GET /version` {"version"}; `GET /metrics` with vllm:cache_config_info{block_size, num_gpu_blocks}
        # (kv_cache = (num_gpu_blocks, block_size); vllm 0.33.0 v1/metrics/loggers.py). None: the route is 404.
        self.tokenize = tokenize
        self.version = version
        self.kv_cache = kv_cache
        self.tokenize_requests: list[dict[str, Any]] = []
        # with api_key set, a request without ``Authorization: Bearer <api_key>`` gets 401
        self.api_key = api_key
        # with fail_status set, every request (GET included) is answered with that HTTP status
        self.fail_status = fail_status
        self.faults: list[Fault] = []
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        self._server = _Server((host, port), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

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

            def _refused(self) -> bool:
                """Answer 401 (wrong key) or the configured failure status; True when answered."""
                if server.api_key is not None and self.headers.get("Authorization") != f"Bearer {server.api_key}":
                    message = {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}
                    self._send(401, json.dumps(message))
                    return True
                if server.fail_status is not None:
                    message = {"error": {"message": f"injected {server.fail_status}", "type": "test"}}
                    self._send(server.fail_status, json.dumps(message))
                    return True
                return False

            def _not_found(self) -> None:
                self._send(404, json.dumps({"detail": "Not Found"}))

            def do_GET(self) -> None:  # noqa: N802 - stdlib name
                if self._refused():
                    return
                if self.path == "/version":
                    if server.version is None:
                        return self._not_found()
                    return self._send(200, json.dumps({"version": server.version}))
                if self.path == "/metrics":
                    if server.kv_cache is None:
                        return self._not_found()
                    blocks, size = server.kv_cache
                    text = (
                        "# HELP vllm:cache_config_info Information of the LLMEngine CacheConfig\n"
                        "# TYPE vllm:cache_config_info gauge\n"
                        f'vllm:cache_config_info{{block_size="{size}",cache_dtype="auto",'
                        f'gpu_memory_utilization="0.9",num_gpu_blocks="{blocks}"}} 1.0\n'
                    )
                    data = text.encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "text/plain; version=0.0.4")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                if server.served_models is None or server.models_status != 200:
                    status = 404 if server.served_models is None else server.models_status
                    self._send(status, json.dumps({"error": {"message": "Not Found", "code": status}}))
                    return
                cards = [
                    {
                        "id": name,
                        "object": "model",
                        "owned_by": "vllm",
                        "root": name,
                        "max_model_len": server.max_model_len,
                    }
                    for name in server.served_models
                ]
                self._send(200, json.dumps({"object": "list", "data": cards}))

            def do_POST(self) -> None:  # noqa: N802 - stdlib name
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                if len(raw) < length:  # the client died mid-request (killed): like a real server, nothing to answer
                    self.close_connection = True
                    return
                body = json.loads(raw or b"{}")
                if self._refused():
                    return
                if self.path == "/tokenize":
                    if server.tokenize is None:
                        return self._not_found()
                    with server._lock:
                        server.tokenize_requests.append(body)
                    count = server.tokenize(body)
                    answer = {"count": count, "max_model_len": server.max_model_len or 0, "tokens": list(range(count))}
                    return self._send(200, json.dumps(answer))
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
                    try:
                        completion = server._completion(self.path, body)
                    except Exception as error:  # noqa: BLE001 - a broken script is the server's error, said in a 500
                        # what vLLM's OpenAI server does for an internal error: a JSON body, not a dropped socket
                        message = f"the script failed: {type(error).__name__}: {error}"
                        self._send(500, json.dumps({"error": {"message": message, "type": "InternalServerError"}}))
                        return
                    self._send(200, json.dumps(completion))
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


def script_responder(spec: str) -> Responder:
    """Answer with the scripted backend's rules (a rules file, or ``module:function``)."""
    from repro.llm.protocol import ChatMessage, ModelRequest
    from repro.llm.scripted import load_script

    script = load_script(spec)

    def respond(body: dict[str, Any], index: int) -> str:
        if "messages" in body:
            messages = [ChatMessage(role=m["role"], content=str(m["content"])) for m in body["messages"]]
            request = ModelRequest(messages=messages)
        else:
            request = ModelRequest(prompt=str(body.get("prompt", "")))
        reply = script(request, index)
        return reply[0] if isinstance(reply, tuple) else reply

    return respond


def main(argv: list[str] | None = None) -> int:
    """``python -m tests.doubles.openai_server``: dry-run a config against a local scripted endpoint."""
    import argparse
    import signal

    parser = argparse.ArgumentParser(
        prog="python -m tests.doubles.openai_server",
        description="An OpenAI-compatible server on this machine that answers from a script, for dry runs.",
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    parser.add_argument("--script", help="rules file (YAML list of {when, reply}) or module:function; default: echo")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to every reply")
    parser.add_argument("--api-key", help="require this bearer key (401 otherwise)")
    parser.add_argument("--fail-status", type=int, help="answer every request with this HTTP status")
    arguments = parser.parse_args(argv)
    responder = script_responder(arguments.script) if arguments.script else echo_responder
    server = OpenAITestServer(
        responder,
        latency_s=arguments.latency,
        host=arguments.host,
        port=arguments.port,
        api_key=arguments.api_key,
        fail_status=arguments.fail_status,
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with server:
        print(f"serving an OpenAI-compatible API at {server.base_url} (Ctrl-C stops)", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            stop.wait()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
