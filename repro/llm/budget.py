"""How long a request may take and how many tokens it may ask for, from the request itself.

A non-streaming completion sends nothing until the last token: the HTTP read timeout is the whole
generation time. vLLM's OpenAI server answers a request only after every one of its ``n`` samples has
finished, and under load each sequence decodes at a fraction of the GPU's single-stream speed. So the
timeout is the configured ``timeout_s`` (prefill, queueing, transfer) plus ``max_tokens`` at the slowest
per-sequence rate we allow for. (openai-python passes a float timeout to httpx as connect, read, write and pool
limits alike, openai/_base_client.py; vLLM's server writes the body only at the end,
vllm/entrypoints/openai/serving_chat.py, ``chat_completion_full_generator``.)

The context window: vLLM refuses a request whose prompt plus ``max_tokens`` exceeds ``max_model_len``
(HTTP 400). A harness that asks for ``max_tokens = max_model_len`` in vLLM's offline engine simply
stops at the end of the context (Goedel-Prover-V2 src/inference.py); over HTTP the same intent needs
``max_tokens`` lowered by the prompt's length. Without the tokenizer we bound the prompt's tokens from
above by its UTF-8 bytes (a byte-level BPE token covers at least one byte) plus the chat template's
role tokens, so the lowered request always fits and gives up only a few hundred tokens.
"""

from __future__ import annotations

from repro.llm.protocol import ModelRequest

# the chat template's role markers, BOS and generation prompt, per message, in tokens (generous)
_TEMPLATE_TOKENS_PER_MESSAGE = 16
_TEMPLATE_TOKENS_FIXED = 16


def prompt_token_bound(request: ModelRequest) -> int:
    """An upper bound on the prompt's tokens for any byte-level BPE tokenizer (Qwen, DeepSeek, Llama 3)."""
    if request.prompt is not None:
        return len(request.prompt.encode("utf-8")) + _TEMPLATE_TOKENS_FIXED
    messages = request.messages or []
    return (
        sum(len(message.content.encode("utf-8")) + _TEMPLATE_TOKENS_PER_MESSAGE for message in messages)
        + _TEMPLATE_TOKENS_FIXED
    )


class ContextTooSmallError(ValueError):
    """The prompt alone does not leave room for a single generated token."""


def fit_to_prompt(request: ModelRequest, prompt_tokens: int, max_model_len: int | None) -> ModelRequest:
    """``request`` with ``max_tokens`` lowered so that ``prompt_tokens`` + max_tokens fits ``max_model_len``.

    ``prompt_tokens`` is either the exact count (the model's own tokenizer and chat template: the in-process
    engines, or the server's ``/tokenize``) or :func:`prompt_token_bound`."""
    if max_model_len is None:
        return request
    room = max_model_len - prompt_tokens
    if room < 1:
        raise ContextTooSmallError(
            f"the prompt ({prompt_tokens} tokens) does not fit max_model_len={max_model_len} with room for an answer"
        )
    if request.max_tokens <= room:
        return request
    return request.model_copy(update={"max_tokens": room})


def fit_to_context(request: ModelRequest, max_model_len: int | None) -> ModelRequest:
    """:func:`fit_to_prompt` with the byte bound, for when no tokenizer can count the prompt."""
    if max_model_len is None:
        return request
    return fit_to_prompt(request, prompt_token_bound(request), max_model_len)


def generation_timeout_s(request: ModelRequest, *, floor_s: float, min_tokens_per_s: float) -> float:
    """Seconds a non-streaming request may take: ``floor_s`` (prefill, queueing, transfer) plus every
    token of the longest sample at the slowest allowed rate (the ``n`` samples decode side by side)."""
    return floor_s + request.max_tokens / min_tokens_per_s
