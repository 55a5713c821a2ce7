"""Any OpenAI-compatible endpoint (``vllm serve``, hosted APIs) through the official async client.

The client's own retries are off: tenacity retries here, so that every retry is counted, waits
honour ``Retry-After``, and 400/401/403/404 fail at once with the endpoint and the cause named.

Client CPU per request decides how many requests one process can drive (a vLLM server answers
hundreds per second). So every backend talking to one endpoint shares one client (one connection
pool) per event loop, and requests go through the client's plain ``post`` with a JSON body built
here and read back as JSON: the SDK's per-request walk of its request types and construction of
response models cost more CPU than the HTTP exchange itself. Status errors, timeouts and
connection failures are still the SDK's own exceptions.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import weakref
from typing import Any, cast

import httpx
import openai
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt, wait_random_exponential

from repro.llm.budget import ContextTooSmallError, fit_to_prompt, generation_timeout_s, prompt_token_bound
from repro.llm.protocol import FinishReason, ModelCallError, ModelRequest, ModelResponse, PromptTooLong
from repro.llm.templates import render_chat_template

_semaphores: dict[tuple[str, int], asyncio.Semaphore] = {}
# server roots that answered /tokenize with "no such route": asked once per process, then the byte bound is used
_no_tokenize: set[str] = set()
# the sampling fields vLLM takes beyond the OpenAI API's (vllm 0.33.0 entrypoints/openai/chat_completion/
# protocol.py ChatCompletionRequest "extra sampling params"); sent only when set, since other servers refuse them
_VLLM_SAMPLING = ("top_k", "min_p", "repetition_penalty")
_OPENAI_SAMPLING = ("presence_penalty", "frequency_penalty")


def server_root(base_url: str) -> str:
    """Where vLLM's own routes live (``/tokenize``, ``/version``, ``/metrics``): the base URL without ``/v1``."""
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, str, float], openai.AsyncOpenAI]] = (
    weakref.WeakKeyDictionary()
)


def shared_client(base_url: str, api_key: str, timeout_s: float) -> openai.AsyncOpenAI:
    """One client (one connection pool) per endpoint, key and timeout within the running event loop."""
    per_loop = _clients.setdefault(asyncio.get_running_loop(), {})
    key = (base_url, api_key, timeout_s)
    if key not in per_loop:
        per_loop[key] = openai.AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0, timeout=timeout_s)
    return per_loop[key]


def endpoint_semaphore(base_url: str, limit: int) -> asyncio.Semaphore:
    """One bound per endpoint, shared by every stage that talks to it (within one event loop)."""
    loop = asyncio.get_running_loop()
    key = (f"{base_url}", id(loop))
    if key not in _semaphores:
        _semaphores[key] = asyncio.Semaphore(limit)
    return _semaphores[key]


class _Malformed(Exception):
    """The server answered 2xx with a body that is not a completion."""


def _is_retryable(error: BaseException) -> bool:
    """Whether sending the same request again can help, at a cost we accept.

    A timed-out generation is not re-sent: the server may still be generating it (vLLM keeps decoding a
    request whose client went away until it notices the disconnect), and the same request under the same
    limit would time out again after paying the whole generation once more.
    """
    if isinstance(error, openai.APITimeoutError):
        return False
    if isinstance(error, openai.APIStatusError):
        return error.status_code == 429 or error.status_code >= 500
    return isinstance(error, openai.APIConnectionError | _Malformed)


def _context_refusal(error: BaseException) -> bool:
    """vLLM's 400 for a prompt plus ``max_tokens`` past ``max_model_len`` ("This model's maximum context length
    is N tokens. However, you requested M tokens ..."; vllm 0.10.1.1 entrypoints/openai/serving_engine.py)."""
    return (
        isinstance(error, openai.APIStatusError)
        and error.status_code == 400
        and "maximum context length" in _describe(error)
    )


def _retry_after_seconds(error: BaseException | None) -> float | None:
    if isinstance(error, openai.APIStatusError):
        value = error.response.headers.get("retry-after")
        if value:
            try:
                return max(0.0, float(value))
            except ValueError:
                return None
    return None


def _describe(error: BaseException) -> str:
    if isinstance(error, openai.APIStatusError):
        message = error.message
        body = error.body
        if isinstance(body, dict):
            detail = (
                body.get("message") or (body.get("error") or {}).get("message")
                if isinstance(body.get("error"), dict)
                else body.get("message")
            )
            message = str(detail or message)
        return f"HTTP {error.status_code}: {message}"
    if isinstance(error, openai.APITimeoutError):
        return "request timed out"  # the caller adds the limit it ran under
    if isinstance(error, openai.APIConnectionError):
        return f"connection failed ({error.__cause__ or error})"
    if isinstance(error, _Malformed):
        return f"malformed response body ({error})"
    return f"{type(error).__name__}: {error}"


class OpenAIBackend:
    """Async OpenAI-compatible backend. ``top_k`` and other non-standard parameters go in ``extra_body``."""

    scripted = False

    def __init__(
        self,
        *,
        model_id: str,
        base_url: str,
        api_key_env: str | None = None,
        max_concurrency: int = 8,
        timeout_s: float = 300.0,
        max_retries: int = 5,
        retry_base_s: float = 0.5,
        retry_max_wait_s: float = 30.0,
        prompt_format: str = "chat",
        min_tokens_per_s: float = 8.0,
        max_model_len: int | None = None,
    ) -> None:
        self.model_id = model_id
        self.base_url = base_url
        self.backend_id = f"openai:{base_url}"
        self.max_concurrency = max_concurrency
        self.max_retries = max_retries
        self.retry_base_s = retry_base_s
        self.retry_max_wait_s = retry_max_wait_s
        self.prompt_format = prompt_format
        self._api_key = (os.environ.get(api_key_env, "") if api_key_env else "") or "EMPTY"
        self.timeout_s = timeout_s
        self.min_tokens_per_s = min_tokens_per_s
        self.max_model_len = max_model_len

    def request_timeout_s(self, request: ModelRequest) -> float:
        return generation_timeout_s(request, floor_s=self.timeout_s, min_tokens_per_s=self.min_tokens_per_s)

    def _wait(self, state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        retry_after = _retry_after_seconds(error)
        if retry_after is not None:
            return min(retry_after, self.retry_max_wait_s)
        exponential = wait_random_exponential(multiplier=self.retry_base_s, max=self.retry_max_wait_s)
        return float(exponential(state))

    def _wire_parameters(self, request: ModelRequest) -> dict[str, Any]:
        parameters: dict[str, Any] = {
            "model": self.model_id,
            "n": request.n,
            "temperature": request.temperature,
            "top_p": request.top_p,
            "max_tokens": request.max_tokens,
        }
        if request.stop:
            parameters["stop"] = request.stop
        if request.seed is not None:
            parameters["seed"] = request.seed
        # A field left out takes the server's default, which vLLM >= 0.8 reads from the checkpoint's
        # generation_config.json (``generation_config="auto"``; 0.33.0 config/model.py get_diff_sampling_param,
        # chat_completion/protocol.py to_sampling_params: user value, else server default, else OpenAI default).
        # A prover profile therefore sets every one of them, neutral values included, and all are sent.
        extra_body: dict[str, Any] = {}
        for name in _OPENAI_SAMPLING + _VLLM_SAMPLING:
            value = getattr(request, name)
            if value is not None:
                extra_body[name] = value
        if request.json_mode and request.messages is not None:
            if request.json_schema is not None:
                parameters["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "answer", "schema": request.json_schema},
                }
            else:
                parameters["response_format"] = {"type": "json_object"}
        parameters.update(extra_body)  # non-standard parameters travel at the top level of the body
        return parameters

    async def _call_once(self, request: ModelRequest) -> tuple[list[str], list[FinishReason], int, int]:
        try:
            return await self._call_once_unchecked(request)
        except (
            json.JSONDecodeError,
            openai.APIResponseValidationError,
            AttributeError,
            TypeError,
            KeyError,
            ValueError,
        ) as error:
            raise _Malformed(f"{type(error).__name__}: {str(error)[:120]}") from error

    async def _call_once_unchecked(self, request: ModelRequest) -> tuple[list[str], list[FinishReason], int, int]:
        body = self._wire_parameters(request)
        chat = request.messages is not None and self.prompt_format == "chat"
        if chat:
            assert request.messages is not None
            body["messages"] = [message.model_dump() for message in request.messages]
        elif request.prompt is not None:
            body["prompt"] = request.prompt
        else:
            body["prompt"] = await asyncio.to_thread(render_chat_template, self.model_id, request)
            # the template wrote the BOS; vLLM's completions route would add another (add_special_tokens=True
            # by default there, False on chat: vllm 0.33.0 entrypoints/openai/completion/protocol.py)
            body["add_special_tokens"] = False
        client = shared_client(self.base_url, self._api_key, self.timeout_s)
        limit = self.request_timeout_s(request)
        completion: object = await client.post(
            "/chat/completions" if chat else "/completions",
            body=body,
            cast_to=object,
            # per request: a 40k-token proof and a 200-token judgement do not share one limit
            options=cast(Any, {"timeout": httpx.Timeout(limit, connect=min(limit, 30.0))}),
        )
        if not isinstance(completion, dict):
            raise _Malformed(f"expected a JSON object, got {type(completion).__name__}")
        choices = completion.get("choices")
        if not isinstance(choices, list) or len(choices) != request.n:
            raise _Malformed(f"expected {request.n} choices, got {type(completion).__name__}")
        ordered = sorted(choices, key=lambda choice: int(choice.get("index", 0)))
        texts = [(choice["message"].get("content") if chat else choice.get("text")) or "" for choice in ordered]
        if not all(isinstance(text, str) for text in texts):
            raise _Malformed("a choice's text is not a string")
        finish: list[FinishReason] = ["length" if c.get("finish_reason") == "length" else "stop" for c in ordered]
        usage = completion.get("usage") or {}
        tokens_in = int(usage.get("prompt_tokens") or 0)
        tokens_out = int(usage.get("completion_tokens") or 0)
        return texts, finish, tokens_in, tokens_out

    async def count_prompt_tokens(self, request: ModelRequest) -> int | None:
        """The prompt's tokens as the served model counts them (vLLM's ``POST /tokenize`` with the same messages,
        chat template and generation prompt the completion will use), or None where the server has no such route.

        vllm 0.33.0 entrypoints/serve/tokenize/protocol.py (``TokenizeChatRequest``: ``add_generation_prompt``
        True, ``add_special_tokens`` False by default, as chat completions; ``TokenizeResponse.count``); the
        same fields in 0.8.5.post1 entrypoints/openai/protocol.py. A chat history measured this way is what
        the model sees: Qwen3's template drops the reasoning of earlier assistant turns, a byte bound cannot.
        """
        root = server_root(self.base_url)
        if root in _no_tokenize:
            return None
        body: dict[str, Any] = {"model": self.model_id}
        if request.messages is not None and self.prompt_format == "chat":
            body["messages"] = [message.model_dump() for message in request.messages]
        elif request.prompt is not None:
            body["prompt"] = request.prompt
        else:
            return None  # a rendered template: its length is not what /tokenize of the messages would count
        client = shared_client(self.base_url, self._api_key, self.timeout_s)
        try:
            answer: object = await client.post(
                f"{root}/tokenize", body=body, cast_to=object, options=cast(Any, {"timeout": 30.0})
            )
        except openai.APIStatusError as error:
            if error.status_code in (404, 405, 501):
                _no_tokenize.add(root)
            return None
        except (openai.OpenAIError, ValueError):
            return None
        count = answer.get("count") if isinstance(answer, dict) else None
        return count if isinstance(count, int) and count > 0 else None

    async def fit(self, request: ModelRequest) -> ModelRequest:
        """``request`` with ``max_tokens`` fitted to the served context.

        When the byte bound already fits, nothing is asked; otherwise the server counts the prompt, and only a
        server without ``/tokenize`` falls back to the bound (which over-counts by the bytes per token).
        A prompt that leaves no room is :class:`PromptTooLong`, which never counts towards the breaker.
        """
        if self.max_model_len is None:
            return request
        bound = prompt_token_bound(request)
        if bound + request.max_tokens <= self.max_model_len:
            return request
        counted = await self.count_prompt_tokens(request)
        try:
            return fit_to_prompt(request, bound if counted is None else counted, self.max_model_len)
        except ContextTooSmallError as error:
            raise PromptTooLong(f"{self.base_url} model {self.model_id}", str(error)) from error

    async def generate(self, request: ModelRequest) -> ModelResponse:
        request = await self.fit(request)
        semaphore = endpoint_semaphore(self.base_url, self.max_concurrency)
        attempts = 0
        started = time.perf_counter()
        try:
            async for attempt in AsyncRetrying(
                retry=retry_if_exception(_is_retryable),
                stop=stop_after_attempt(self.max_retries + 1),
                wait=self._wait,
                reraise=True,
            ):
                with attempt:
                    attempts += 1
                    async with semaphore:
                        texts, finish, tokens_in, tokens_out = await self._call_once(request)
        except (openai.OpenAIError, _Malformed) as error:
            cause = _describe(error)
            if isinstance(error, openai.APITimeoutError):
                cause = (
                    f"no answer within {self.request_timeout_s(request):.0f} s (sized for max_tokens="
                    f"{request.max_tokens}, n={request.n} at {self.min_tokens_per_s} tokens/s per sequence);"
                    " not re-sent, since the server may still be generating it. Raise timeout_s, lower"
                    " min_tokens_per_s, or lower max_concurrency"
                )
            elif _is_retryable(error):
                cause = f"{cause} (gave up after {attempts} attempts)"
            elif _context_refusal(error):
                # the server counted this prompt past its context (vLLM <= 0.10 answers 400, serving_engine.py
                # _validate_input): this request's problem, not the endpoint's
                raise PromptTooLong(f"{self.base_url} model {self.model_id}", cause, attempts=attempts) from error
            raise ModelCallError(
                f"{self.base_url} model {self.model_id}", cause, retryable=_is_retryable(error), attempts=attempts
            ) from error
        return ModelResponse(
            texts=texts,
            finish_reasons=finish,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            latency_s=time.perf_counter() - started,
            backend_id=self.backend_id,
            model_id=self.model_id,
            retries=attempts - 1,
        )
