from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest
from pydantic import BaseModel

from repro.config import CacheMode
from repro.llm import (
    ChatMessage,
    ModelCallError,
    ModelClient,
    ModelRequest,
    OpenAIBackend,
    ReplayBackend,
    ask_json,
)
from repro.store import RunStore
from tests.doubles.openai_server import Fault, OpenAITestServer


def backend(server: OpenAITestServer, **kwargs: object) -> OpenAIBackend:
    options: dict[str, object] = {"retry_base_s": 0.01, "retry_max_wait_s": 2.0, "max_retries": 4}
    options.update(kwargs)
    return OpenAIBackend(model_id="test-model", base_url=server.base_url, **options)  # type: ignore[arg-type]


def chat(text: str = "hello", **kwargs: object) -> ModelRequest:
    return ModelRequest(messages=[ChatMessage(role="user", content=text)], **kwargs)


async def test_n_samples_and_every_sampling_parameter_on_the_wire(openai_server: OpenAITestServer) -> None:
    response = await backend(openai_server).generate(
        chat(n=3, temperature=0.7, top_p=0.9, top_k=20, max_tokens=64, seed=5, stop=["###"])
    )
    assert len(response.texts) == 3 and response.texts[2].startswith("echo 2")
    assert response.finish_reasons == ["stop"] * 3 and response.tokens_in == 10
    body = openai_server.requests[-1]
    assert (body["n"], body["temperature"], body["top_p"], body["max_tokens"], body["seed"]) == (3, 0.7, 0.9, 64, 5)
    assert body["top_k"] == 20 and body["stop"] == ["###"]


async def test_completions_api_for_raw_prompts(openai_server: OpenAITestServer) -> None:
    response = await backend(openai_server).generate(ModelRequest(prompt="Complete: 1 + 1 =", n=2))
    assert response.texts == ["echo 0: Complete: 1 + 1 =", "echo 1: Complete: 1 + 1 ="]
    assert "prompt" in openai_server.requests[-1]


async def test_429_with_retry_after_is_waited_out_then_succeeds(openai_server: OpenAITestServer) -> None:
    openai_server.faults = [Fault(status=429, headers={"Retry-After": "1"})]
    started = time.monotonic()
    response = await backend(openai_server).generate(chat())
    assert response.retries == 1 and len(openai_server.requests) == 2
    assert time.monotonic() - started >= 0.9, "Retry-After: 1 must be honoured, not the 10 ms backoff"


async def test_a_run_of_500s_then_success(openai_server: OpenAITestServer) -> None:
    openai_server.faults = [Fault(status=500), Fault(status=502), Fault(status=503)]
    response = await backend(openai_server).generate(chat())
    assert response.retries == 3 and response.texts[0].startswith("echo 0")


async def test_500s_past_the_retry_budget_fail_with_endpoint_and_cause(openai_server: OpenAITestServer) -> None:
    openai_server.faults = [Fault(status=500)] * 3
    with pytest.raises(ModelCallError) as error:
        await backend(openai_server, max_retries=2).generate(chat())
    assert openai_server.base_url in str(error.value) and "HTTP 500" in str(error.value)
    assert "gave up after 3 attempts" in str(error.value)


async def test_a_timed_out_generation_is_reported_and_never_re_sent(openai_server: OpenAITestServer) -> None:
    # 0.3 s + 100 tokens at 1000 tokens/s: 0.4 s for an answer that takes 1.5 s
    openai_server.faults = [Fault(delay_s=1.5), Fault(delay_s=1.5)]
    with pytest.raises(ModelCallError, match="not re-sent") as error:
        await backend(openai_server, timeout_s=0.3, min_tokens_per_s=1000.0, max_retries=3).generate(
            chat(max_tokens=100)
        )
    assert len(openai_server.requests) == 1, "the server may still be generating it: sending it again doubles the work"
    assert not error.value.retryable and "max_tokens=100" in str(error.value)


async def test_a_long_generation_gets_time_for_its_tokens(openai_server: OpenAITestServer) -> None:
    # the same 0.3 s floor, but 2000 tokens at 1000 tokens/s: the 1.5 s answers arrive in time
    openai_server.faults = [Fault(delay_s=1.5), Fault(delay_s=1.5)]
    response = await backend(openai_server, timeout_s=0.3, min_tokens_per_s=1000.0, max_retries=1).generate(
        chat(max_tokens=2000, n=3)
    )
    assert len(response.texts) == 3 and response.retries == 0 and len(openai_server.requests) == 1


async def test_max_tokens_is_lowered_to_fit_the_served_context(openai_server: OpenAITestServer) -> None:
    """A harness asking for max_tokens = max_model_len (Goedel-Prover-V2) must not get a 400 over HTTP."""
    await backend(openai_server, max_model_len=4096).generate(chat("x" * 500, max_tokens=4096))
    sent = openai_server.requests[-1]["max_tokens"]
    assert 4096 - 600 < sent < 4096 - 500
    await backend(openai_server, max_model_len=4096).generate(chat("short", max_tokens=1000))
    assert openai_server.requests[-1]["max_tokens"] == 1000
    with pytest.raises(ModelCallError, match="does not fit max_model_len"):
        await backend(openai_server, max_model_len=100).generate(chat("x" * 500))


async def test_400_is_not_retried_and_names_the_cause(openai_server: OpenAITestServer) -> None:
    message = "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens"
    openai_server.faults = [Fault(status=400, body=json.dumps({"error": {"message": message, "code": 400}}))]
    with pytest.raises(ModelCallError) as error:
        await backend(openai_server).generate(chat())
    assert len(openai_server.requests) == 1
    assert "HTTP 400" in str(error.value) and "maximum context length" in str(error.value)
    assert openai_server.base_url in str(error.value) and not error.value.retryable


async def test_malformed_body_is_retried_then_fails_clearly(openai_server: OpenAITestServer) -> None:
    openai_server.faults = [Fault(body="{not json"), Fault(body='{"object": "nonsense"}')]
    response = await backend(openai_server).generate(chat())
    assert response.retries == 2
    openai_server.faults = [Fault(body="{not json")] * 5
    with pytest.raises(ModelCallError, match="malformed"):
        await backend(openai_server, max_retries=1).generate(chat())


class Verdict(BaseModel):
    verdict: str


async def test_json_answer_needing_the_format_retry(tmp_path: Path) -> None:
    replies = iter(["Sure! verdict: yes, definitely", '```json\n{"verdict": "yes"}\n```'])
    with OpenAITestServer(lambda body, index: next(replies)) as server, RunStore(tmp_path) as store:
        client = ModelClient(backend(server), store=store, stage="screen")
        answer = await ask_json(client, chat("judge this"), Verdict)
        assert answer.value == Verdict(verdict="yes")
        assert len(answer.texts) == 2 and len(server.requests) == 2
        assert "Rewrite ONLY that output" in server.requests[1]["messages"][0]["content"]
        assert len(store.model_calls()) == 2, "both attempts are recorded"


async def test_concurrency_bound_is_observed_at_the_server() -> None:
    with OpenAITestServer(latency_s=0.05) as server:
        model = backend(server, max_concurrency=3)
        await asyncio.gather(*(model.generate(chat(f"q{i}")) for i in range(20)))
        assert server.max_in_flight == 3 and len(server.requests) == 20


async def test_second_identical_batch_hits_the_cache_and_sends_nothing(tmp_path: Path) -> None:
    with OpenAITestServer() as server, RunStore(tmp_path) as store:
        client = ModelClient(backend(server), store=store, stage="prove")
        batch = [chat(f"q{i}", n=2) for i in range(5)]
        first = await asyncio.gather(*(client.generate(r) for r in batch))
        sent = len(server.requests)
        second = await asyncio.gather(*(client.generate(r) for r in batch))
        assert sent == 5 and len(server.requests) == 5
        assert [r.texts for r in first] == [r.texts for r in second]
        assert all(r.cache_hits == 2 for r in second)
        # a different sample offset is a different call
        await client.generate(chat("q0", n=1, sample_offset=2))
        assert len(server.requests) == 6


async def test_cache_off_and_read_only_modes(tmp_path: Path) -> None:
    with OpenAITestServer() as server, RunStore(tmp_path) as store:
        off = ModelClient(backend(server), store=store, stage="x", cache_mode=CacheMode.off)
        await off.generate(chat())
        await off.generate(chat())
        assert len(server.requests) == 2
        read_only = ModelClient(backend(server), store=store, stage="x", cache_mode=CacheMode.read_only)
        await read_only.generate(chat())
        await read_only.generate(chat())
        assert len(server.requests) == 4 and store.cached_response("anything") is None


async def test_replay_answers_from_the_cache_and_fails_loudly_on_a_miss(tmp_path: Path) -> None:
    with OpenAITestServer() as server, RunStore(tmp_path) as store:
        live = ModelClient(backend(server), store=store, stage="x")
        recorded = await live.generate(chat("stored"))
        replay = ModelClient(ReplayBackend("test-model"), store=store, stage="x")
        assert (await replay.generate(chat("stored"))).texts == recorded.texts
        with pytest.raises(ModelCallError, match="not in the cache"):
            await replay.generate(chat("never asked"))


async def test_a_partial_re_ask_draws_each_missing_sample_with_its_own_seed(tmp_path: Path) -> None:
    """vLLM draws sample i of a seeded n-sample request with seed+i; a re-ask must not repeat sample 0's seed."""
    with OpenAITestServer() as server, RunStore(tmp_path) as store:
        client = ModelClient(backend(server), store=store, stage="prove")
        await client.generate(chat("prove", n=2, seed=100, temperature=1.0))  # samples 0 and 1, seeds 100 and 101
        response = await client.generate(chat("prove", n=4, seed=100, temperature=1.0))  # k raised to 4
        assert (server.requests[-1]["n"], server.requests[-1]["seed"]) == (2, 102), (
            "samples 2 and 3 must be drawn with seeds 102 and 103; seed 100 would repeat samples 0 and 1"
        )
        assert response.cache_hits == 2 and len(response.texts) == 4 and len(server.requests) == 2


async def test_completion_format_renders_chat_messages_with_the_models_template(
    openai_server: OpenAITestServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`prompt_format: completion` must send what the chat template makes, never a plain `[user]` rendering,
    and tell vLLM not to add a second BOS in front of the template's own (its completions route adds special
    tokens by default: vllm 0.33.0 entrypoints/openai/completion/protocol.py ``add_special_tokens=True``)."""
    import sys

    pytest.importorskip("transformers")
    from repro.llm import templates
    from tests.doubles import tiny_models

    checkpoint = str(tiny_models.checkpoint("deepseek"))  # a real tokenizer with the DeepSeek-V3 chat template
    templates._tokenizer.cache_clear()
    model = OpenAIBackend(model_id=checkpoint, base_url=openai_server.base_url, prompt_format="completion")
    await model.generate(chat("prove it"))
    sent = openai_server.requests[-1]
    assert sent["prompt"] == "<｜begin▁of▁sentence｜><｜User｜>prove it<｜Assistant｜>"
    assert sent["add_special_tokens"] is False
    await model.generate(ModelRequest(prompt="Complete the following Lean 4 code"))
    assert "add_special_tokens" not in openai_server.requests[-1], "a raw prompt gets the server's BOS (V1.5)"
    monkeypatch.setitem(sys.modules, "transformers", None)
    templates._tokenizer.cache_clear()
    with pytest.raises(ModelCallError, match=r"chat template, which comes with transformers"):
        await backend(openai_server, prompt_format="completion").generate(chat("prove it"))
    templates._tokenizer.cache_clear()


async def test_the_served_model_counts_a_long_prompt_and_max_tokens_fills_exactly_the_rest() -> None:
    """Goedel-V2 asks for max_tokens = max_model_len: the room left is counted by the server's own tokenizer and
    template (vLLM POST /tokenize), not bounded by bytes, so a feedback round's think-free history is not starved."""
    counted: list[dict[str, object]] = []

    def tokenize(body: dict[str, object]) -> int:
        counted.append(body)
        return 1200  # what Qwen3's template makes of the history: earlier reasoning dropped

    history = [
        ChatMessage(role="user", content="Complete the following Lean 4 code"),
        ChatMessage(role="assistant", content="<think>" + "reasoning " * 3000 + "</think>```lean4\nomega\n```"),
        ChatMessage(role="user", content="The proof (Round 0) is not correct."),
    ]
    with OpenAITestServer(tokenize=tokenize, max_model_len=40960) as server:
        await backend(server, max_model_len=40960).generate(ModelRequest(messages=history, max_tokens=40960))
        assert server.requests[-1]["max_tokens"] == 40960 - 1200
        assert counted[-1]["messages"] == [m.model_dump() for m in history] and counted[-1]["model"] == "test-model"
        await backend(server, max_model_len=40960).generate(chat("short", max_tokens=1000))
        assert len(server.tokenize_requests) == 1, "a prompt the byte bound already fits is not counted"


async def test_without_a_tokenize_route_the_byte_bound_is_used(openai_server: OpenAITestServer) -> None:
    history = [ChatMessage(role="user", content="x" * 30000)]
    await backend(openai_server, max_model_len=40960).generate(ModelRequest(messages=history, max_tokens=40960))
    assert 40960 - 30100 < openai_server.requests[-1]["max_tokens"] <= 40960 - 30000


async def test_a_prompt_past_the_context_is_refused_locally_and_never_trips_the_breaker(
    openai_server: OpenAITestServer,
) -> None:
    from repro.llm.breaker import EndpointBreaker
    from repro.llm.protocol import PromptTooLong

    breaker = EndpointBreaker(threshold=3)
    client = ModelClient(backend(openai_server, max_model_len=100), store=None, stage="prove", breaker=breaker)
    for index in range(5):
        with pytest.raises(PromptTooLong):
            await client.generate(chat("x" * 500, seed=index))
    message = "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens"
    openai_server.faults = [Fault(status=400, body=json.dumps({"error": {"message": message}}))] * 5
    for index in range(5):
        with pytest.raises(PromptTooLong):
            await ModelClient(backend(openai_server), store=None, stage="prove", breaker=breaker).generate(
                chat(f"q{index}")
            )
    assert breaker.reason() is None and not openai_server.faults
    await client.generate(chat("fits"))
