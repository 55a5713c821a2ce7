"""The one protocol every model backend speaks, so a stage never knows which backend serves it."""

from __future__ import annotations

import re
from typing import Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

# a lone UTF-16 surrogate: what ``json.loads`` makes of the valid JSON string "\\ud800" a server may send; no
# UTF-8 encoder (SQLite's, pydantic's JSON, a file's) accepts it (a real pair arrives as one code point)
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def clean_model_text(text: str) -> str:
    """Model text as every later reader can store and encode it: each lone surrogate becomes U+FFFD.

    Applied where every backend's answer becomes a :class:`ModelResponse`, so no stage, store or cache ever
    holds text that cannot be written (red team red1, R7: one such reply failed the store's write queue)."""
    return _LONE_SURROGATE.sub("\ufffd", text)


class ChatMessage(BaseModel):
    model_config = ConfigDict(extra="forbid")
    role: Literal["system", "user", "assistant"]
    content: str


class ModelRequest(BaseModel):
    """A request for ``n`` samples. All sampling parameters are explicit and sent on the wire.

    ``sample_offset`` numbers the samples (``offset .. offset+n-1``) for the response cache, so that
    three separate asks at temperature 0 are three distinct cached calls.
    """

    model_config = ConfigDict(extra="forbid")
    messages: list[ChatMessage] | None = None
    prompt: str | None = None
    n: int = Field(1, ge=1)
    temperature: float = 0.0
    top_p: float = 1.0
    # None: not sent, so the server's default applies (vLLM >= 0.8: the checkpoint's generation_config.json);
    # a prover profile fixes every one of these to its harness's value, neutral values included
    top_k: int | None = None
    min_p: float | None = None
    repetition_penalty: float | None = None
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    max_tokens: int = 2048
    stop: list[str] | None = None
    seed: int | None = None
    json_schema: dict[str, Any] | None = None
    json_mode: bool = False
    sample_offset: int = 0

    @model_validator(mode="after")
    def _one_input(self) -> ModelRequest:
        if (self.messages is None) == (self.prompt is None):
            raise ValueError("a request carries either chat messages or a raw prompt, not both or neither")
        return self

    def prompt_text(self) -> str:
        """The text a scripted backend or a log shows: the prompt, or the chat rendered plainly."""
        if self.prompt is not None:
            return self.prompt
        return "\n\n".join(f"[{m.role}]\n{m.content}" for m in self.messages or [])


FinishReason = Literal["stop", "length", "error"]


class ModelResponse(BaseModel):
    texts: list[str]
    finish_reasons: list[FinishReason]
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    backend_id: str
    model_id: str
    scripted: bool = False
    cache_hits: int = 0
    retries: int = 0

    @field_validator("texts")
    @classmethod
    def _encodable(cls, texts: list[str]) -> list[str]:
        """Every backend's reply passes here: the client boundary (:func:`clean_model_text`)."""
        return [clean_model_text(text) for text in texts]


class ModelCallError(RuntimeError):
    """A request that failed for good (not retryable, or retries exhausted)."""

    # whether the failure says something about the endpoint (counted by the breaker) or only about this request
    endpoint_fault = True

    def __init__(self, endpoint: str, cause: str, *, retryable: bool = False, attempts: int = 1) -> None:
        super().__init__(f"{endpoint}: {cause}")
        self.endpoint = endpoint
        self.cause = cause
        self.retryable = retryable
        self.attempts = attempts


class PromptTooLong(ModelCallError):
    """This request's prompt leaves no room in the model's context: a property of the request, not of the
    endpoint. It never counts towards the endpoint breaker (a burst of long feedback prompts between two slow
    successes is not an endpoint going down)."""

    endpoint_fault = False


@runtime_checkable
class ModelBackend(Protocol):
    """``generate`` returns exactly ``request.n`` texts, or raises :class:`ModelCallError`."""

    backend_id: str
    model_id: str
    scripted: bool

    async def generate(self, request: ModelRequest) -> ModelResponse: ...
