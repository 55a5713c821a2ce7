"""Any OpenAI-compatible endpoint (``vllm serve``, hosted APIs) through the official async client.

The client's own retries are off: tenacity retries here, so that every retry is counted, waits
honour ``Retry-After``, and 400/401/403/404 fail at once with the endpoint and the cause named.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any

import openai
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt, wait_random_exponential

from repro.llm.protocol import FinishReason, ModelCallError, ModelRequest, ModelResponse

_semaphores: dict[tuple[str, int], asyncio.Semaphore] = {}


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
    if isinstance(error, openai.APIStatusError):
        return error.status_code == 429 or error.status_code >= 500
    return isinstance(error, openai.APIConnectionError | openai.APITimeoutError | _Malformed)


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
        return "request timed out"
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
    ) -> None:
        self.model_id = model_id
        self.base_url = base_url
        self.backend_id = f"openai:{base_url}"
        self.max_concurrency = max_concurrency
        self.max_retries = max_retries
        self.retry_base_s = retry_base_s
        self.retry_max_wait_s = retry_max_wait_s
        self.prompt_format = prompt_format
        api_key = os.environ.get(api_key_env, "") if api_key_env else ""
        self._client = openai.AsyncOpenAI(
            base_url=base_url, api_key=api_key or "EMPTY", max_retries=0, timeout=timeout_s
        )

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
        extra_body: dict[str, Any] = {}
        if request.top_k is not None:
            extra_body["top_k"] = request.top_k
        if request.json_mode and request.messages is not None:
            if request.json_schema is not None:
                parameters["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "answer", "schema": request.json_schema},
                }
            else:
                parameters["response_format"] = {"type": "json_object"}
        if extra_body:
            parameters["extra_body"] = extra_body
        return parameters

    async def _call_once(self, request: ModelRequest) -> tuple[list[str], list[FinishReason], int, int]:
        try:
            return await self._call_once_unchecked(request)
        except (json.JSONDecodeError, openai.APIResponseValidationError, AttributeError, TypeError) as error:
            raise _Malformed(f"{type(error).__name__}: {str(error)[:120]}") from error

    async def _call_once_unchecked(self, request: ModelRequest) -> tuple[list[str], list[FinishReason], int, int]:
        parameters = self._wire_parameters(request)
        if request.messages is not None and self.prompt_format == "chat":
            completion = await self._client.chat.completions.create(
                messages=[m.model_dump() for m in request.messages],  # type: ignore[misc]
                **parameters,
            )
            choices = getattr(completion, "choices", None)
            if not isinstance(choices, list) or len(choices) != request.n:
                raise _Malformed(f"expected {request.n} choices, got {type(completion).__name__}")
            ordered = sorted(choices, key=lambda choice: choice.index)
            texts = [choice.message.content or "" for choice in ordered]
        else:
            completion_text = await self._client.completions.create(prompt=request.prompt_text(), **parameters)
            choices = getattr(completion_text, "choices", None)
            if not isinstance(choices, list) or len(choices) != request.n:
                raise _Malformed(f"expected {request.n} choices, got {type(completion_text).__name__}")
            ordered = sorted(choices, key=lambda choice: choice.index)
            texts = [choice.text or "" for choice in ordered]
            completion = completion_text
        finish: list[FinishReason] = ["length" if c.finish_reason == "length" else "stop" for c in ordered]
        usage = getattr(completion, "usage", None)
        tokens_in = int(getattr(usage, "prompt_tokens", 0) or 0)
        tokens_out = int(getattr(usage, "completion_tokens", 0) or 0)
        return texts, finish, tokens_in, tokens_out

    async def generate(self, request: ModelRequest) -> ModelResponse:
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
            if _is_retryable(error):
                cause = f"{cause} (gave up after {attempts} attempts)"
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
