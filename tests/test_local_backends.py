"""In-process backends against the real transformers release the extras resolve, and a vLLM stand-in.

The tokenizers are real ``PreTrainedTokenizerFast`` objects with the chat templates of the Qwen3, Qwen2.5 and
DeepSeek-V3 families (tests/doubles/tiny_models.py), loaded with ``AutoTokenizer`` from a checkpoint directory;
the transformers backend runs a one-layer model of each family's architecture on the CPU. The vLLM stand-in
(tests/doubles/fake_vllm.py) imitates vLLM 0.33.0 or 0.8.5.post1, hands out that real tokenizer as vLLM's
``get_tokenizer()`` does, and refuses what the release refuses.
"""

from __future__ import annotations

import asyncio
import re
import sys
from typing import Any

import pytest

from repro.config import EngineSettings
from repro.llm import ChatMessage, ModelCallError, ModelClient, ModelRequest, TransformersBackend, VLLMBackend
from repro.llm.breaker import EndpointBreaker
from repro.llm.local_backends import finish_reasons_from_tokens, prompt_token_ids, transformers_sampling
from repro.llm.protocol import ModelResponse, PromptTooLong
from tests.doubles import fake_vllm, tiny_models

transformers = pytest.importorskip("transformers")
FAMILIES = sorted(tiny_models.FAMILIES)
GOEDEL_CHAT = [ChatMessage(role="user", content="Complete the following Lean 4 code:\n\ntheorem t : 1 + 1 = 2 := by")]


def _tokenizer(family: str) -> Any:
    return transformers.AutoTokenizer.from_pretrained(tiny_models.checkpoint(family))


def _vllm(monkeypatch: pytest.MonkeyPatch, *, release: str = "0.33.0", family: str = "deepseek") -> Any:
    module = fake_vllm.module(release=release, tokenizer_from=tiny_models.checkpoint(family), step_s=0.01)
    monkeypatch.setitem(sys.modules, "vllm", module)
    monkeypatch.setitem(sys.modules, "vllm.sampling_params", module.sampling_params)
    fake_vllm.LLM.instances = []
    return module


def _prompt_of(text: str) -> str:
    match = re.match(r"answer to \[(.*)\] seed=", text, re.DOTALL)
    assert match, text
    return match.group(1)


# -- the prompt a chat model is given -------------------------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
def test_a_chat_prompt_is_the_models_own_template_tokenised_once(family: str) -> None:
    """transformers >= 5 returns a BatchEncoding from apply_chat_template(tokenize=True); the ids must still be
    exactly the template's text tokenised without extra special tokens (one BOS where the template writes it)."""
    tokenizer = _tokenizer(family)
    messages = [ChatMessage(role="system", content="You are an expert in mathematics and Lean 4."), *GOEDEL_CHAT]
    ids = prompt_token_ids(tokenizer, ModelRequest(messages=messages))
    rendered = tokenizer.apply_chat_template(
        [m.model_dump() for m in messages], tokenize=False, add_generation_prompt=True
    )
    assert ids == tokenizer(rendered, add_special_tokens=False)["input_ids"]
    assert tokenizer.decode(ids, skip_special_tokens=False) == rendered
    if tokenizer.bos_token is not None:
        assert ids.count(tokenizer.bos_token_id) == 1 and ids[0] == tokenizer.bos_token_id
    else:
        assert rendered.startswith("<|im_start|>")


def test_a_raw_completion_prompt_gets_the_tokenizers_bos_once() -> None:
    """DeepSeek-Prover-V1.5's raw prompt: LLM.generate(str) adds BOS (Llama tokenizer), so ours does too."""
    tokenizer = _tokenizer("deepseek")
    ids = prompt_token_ids(tokenizer, ModelRequest(prompt="Complete the following Lean 4 code"))
    assert ids[0] == tokenizer.bos_token_id and ids.count(tokenizer.bos_token_id) == 1


def test_qwen3s_template_drops_earlier_reasoning_from_a_feedback_history() -> None:
    """Why token counts must come from the template: a Goedel-V2 correction round resends the whole first reply,
    but Qwen3's template keeps only its answer (the think block of a turn before the last user turn goes)."""
    tokenizer = _tokenizer("qwen3")
    thinking = "<think>\n" + "plan the proof step by step. " * 400 + "\n</think>\n\n```lean4\nomega\n```"
    history = [
        *GOEDEL_CHAT,
        ChatMessage(role="assistant", content=thinking),
        ChatMessage(role="user", content="The proof (Round 0) is not correct."),
    ]
    ids = prompt_token_ids(tokenizer, ModelRequest(messages=history))
    text = tokenizer.decode(ids, skip_special_tokens=False)
    assert "plan the proof" not in text and "```lean4\nomega\n```" in text
    assert len(ids) < len(thinking.encode()) // 10


# -- transformers: a real model, loaded and sampled ----------------------------------------------------


@pytest.mark.parametrize("family", FAMILIES)
async def test_the_transformers_backend_samples_a_tiny_model_of_each_family(family: str) -> None:
    pytest.importorskip("torch")
    shipped = '{"do_sample": true, "top_k": 20, "temperature": 0.6}'  # what a Qwen3 checkpoint's file sets
    directory = tiny_models.checkpoint(family, with_model=True, generation_config=shipped)
    backend = TransformersBackend(model_id=str(directory), engine=EngineSettings(device="cpu"))
    request = ModelRequest(messages=GOEDEL_CHAT, n=2, temperature=1.0, top_p=0.95, top_k=-1, max_tokens=6, seed=3)
    response = await asyncio.wait_for(backend.generate(request), timeout=120)
    tokenizer = _tokenizer(family)
    assert len(response.texts) == 2 and all(isinstance(text, str) for text in response.texts)
    assert response.tokens_in == len(prompt_token_ids(tokenizer, request))
    assert set(response.finish_reasons) <= {"stop", "length"} and 0 < response.tokens_out <= 12
    again = await asyncio.wait_for(backend.generate(request), timeout=120)
    assert again.texts == response.texts, "a seeded request draws the same samples"


async def test_the_transformers_backend_fits_the_answer_into_the_models_context() -> None:
    pytest.importorskip("torch")
    directory = tiny_models.checkpoint("qwen3", with_model=True)
    backend = TransformersBackend(model_id=str(directory), engine=EngineSettings(device="cpu"), max_model_len=40)
    tokenizer = _tokenizer("qwen3")
    short = ModelRequest(messages=[ChatMessage(role="user", content="hi")], max_tokens=500, temperature=0.0)
    room = 40 - len(prompt_token_ids(tokenizer, short))
    response = await asyncio.wait_for(backend.generate(short), timeout=120)
    assert response.tokens_out <= room and response.finish_reasons == ["length"]
    with pytest.raises(PromptTooLong, match="does not fit max_model_len=40"):
        await backend.generate(ModelRequest(messages=GOEDEL_CHAT * 3, max_tokens=5))


def test_transformers_sampling_sends_every_value_explicitly() -> None:
    """A value left as None would let the checkpoint's generation_config (top_k=20, a repetition penalty) decide."""
    sampled = transformers_sampling(ModelRequest(prompt="x", temperature=1.0, top_p=0.95, max_tokens=9, n=2))
    assert sampled["do_sample"] is True and sampled["top_k"] == 0 and sampled["top_p"] == 0.95
    assert sampled["repetition_penalty"] == 1.0 and sampled["min_p"] is None
    assert sampled["num_return_sequences"] == 2 and sampled["max_new_tokens"] == 9
    assert transformers_sampling(ModelRequest(prompt="x", temperature=1.0, top_k=20))["top_k"] == 20
    assert transformers_sampling(ModelRequest(prompt="x", temperature=1.0, top_k=-1))["top_k"] == 0
    greedy = transformers_sampling(ModelRequest(prompt="x", temperature=0.0))
    assert greedy["do_sample"] is False and greedy["top_k"] is None
    with pytest.raises(ModelCallError, match="presence_penalty"):
        transformers_sampling(ModelRequest(prompt="x", presence_penalty=0.5))


def test_transformers_finish_reason_comes_from_the_eos_token_not_the_padded_length() -> None:
    eos, pad = 2, 2
    # three samples padded to one length: the first stopped early, the second ran out, the third stopped last
    rows = [[5, 6, eos, pad, pad], [5, 6, 7, 8, 9], [5, 6, 7, 8, eos]]
    assert finish_reasons_from_tokens(rows, eos_ids={eos}, max_tokens=5) == [
        ("stop", [5, 6]),
        ("length", [5, 6, 7, 8, 9]),
        ("stop", [5, 6, 7, 8]),
    ]


# -- vLLM, in process, against the stand-in of a named release ------------------------------------------


@pytest.mark.parametrize("release", fake_vllm.RELEASES)
async def test_a_profile_request_is_accepted_by_each_release(monkeypatch: pytest.MonkeyPatch, release: str) -> None:
    """top_k=None must go out as -1: vLLM 0.6 - 0.8.5.post1 (Goedel's pin) refuse 0 on every request."""
    _vllm(monkeypatch, release=release, family="qwen3")
    backend = VLLMBackend(model_id="Goedel-LM/Goedel-Prover-V2-8B")
    request = ModelRequest(messages=GOEDEL_CHAT, n=2, temperature=1.0, top_p=0.95, max_tokens=64, seed=5)
    response = await asyncio.wait_for(backend.generate(request), timeout=10)
    assert len(response.texts) == 2
    params = fake_vllm.LLM.instances[0].llm_engine.params[-1]
    assert (params.top_k, params.min_p, params.repetition_penalty) == (-1, 0.0, 1.0)
    assert (params.presence_penalty, params.frequency_penalty) == (0.0, 0.0)
    assert _prompt_of(response.texts[0]).startswith("<|im_start|>user\nComplete the following Lean 4 code")


async def test_concurrent_requests_in_waves_each_get_their_own_outputs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Requests arriving while the engine runs another batch: no hang, nothing attributed to another prompt."""
    _vllm(monkeypatch, family="qwen2_5")
    backend = VLLMBackend(model_id="Goedel-LM/Goedel-Prover-V2-8B")

    async def ask(index: int, delay: float) -> tuple[int, list[str]]:
        await asyncio.sleep(delay)
        prompt = f"statement {index} " + "x" * index
        response = await backend.generate(ModelRequest(prompt=prompt, n=3, temperature=1.0, max_tokens=500, seed=10))
        return index, response.texts

    waves = [ask(index, delay=0.03 * (index % 8)) for index in range(20)]
    results = await asyncio.wait_for(asyncio.gather(*waves), timeout=30)
    for index, texts in results:
        assert len(texts) == 3
        assert {_prompt_of(text) for text in texts} == {f"statement {index} " + "x" * index}
        assert [text.rsplit("seed=", 1)[1] for text in texts] == ["10", "11", "12"]
    assert len(fake_vllm.LLM.instances) == 1, "one engine for the backend's life"


async def test_engine_settings_reach_the_engine_and_chat_prompts_carry_one_bos(monkeypatch: pytest.MonkeyPatch) -> None:
    _vllm(monkeypatch, family="deepseek")
    engine = EngineSettings(tensor_parallel_size=4, gpu_memory_utilization=0.85, enable_prefix_caching=True, seed=7)
    backend = VLLMBackend(model_id="deepseek-ai/DeepSeek-Prover-V2-7B", engine=engine, max_model_len=4096)
    chat = ModelRequest(messages=[ChatMessage(role="user", content="prove it")], max_tokens=64, seed=1)
    response = await asyncio.wait_for(backend.generate(chat), timeout=10)
    kwargs = fake_vllm.LLM.instances[0].kwargs
    assert kwargs["tensor_parallel_size"] == 4 and kwargs["gpu_memory_utilization"] == 0.85
    assert kwargs["enable_prefix_caching"] is True and kwargs["seed"] == 7 and kwargs["max_model_len"] == 4096
    # the template already starts with BOS; tokenising its text again would add a second one
    assert _prompt_of(response.texts[0]) == "<｜begin▁of▁sentence｜><｜User｜>prove it<｜Assistant｜>"
    assert response.backend_id == "vllm"
    assert response.tokens_in == len(prompt_token_ids(_tokenizer("deepseek"), chat))


async def test_the_answer_is_fitted_to_the_context_counted_with_the_models_template(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _vllm(monkeypatch, family="qwen3")
    backend = VLLMBackend(model_id="Goedel-LM/Goedel-Prover-V2-8B", max_model_len=300)
    request = ModelRequest(messages=GOEDEL_CHAT, max_tokens=40960, temperature=1.0)
    await asyncio.wait_for(backend.generate(request), timeout=10)
    counted = len(prompt_token_ids(_tokenizer("qwen3"), request))
    assert fake_vllm.LLM.instances[0].llm_engine.params[-1].max_tokens == 300 - counted
    with pytest.raises(PromptTooLong):
        await asyncio.wait_for(backend.generate(ModelRequest(messages=GOEDEL_CHAT * 20)), timeout=10)


async def test_local_context_refusals_never_trip_the_endpoint_breaker(monkeypatch: pytest.MonkeyPatch) -> None:
    """25 feedback prompts too long for the context, one after another: a property of those prompts, not an
    endpoint going down; the run goes on, and the next ordinary request is answered."""
    _vllm(monkeypatch, family="qwen3")
    breaker = EndpointBreaker(threshold=20)
    client = ModelClient(VLLMBackend(model_id="m", max_model_len=300), store=None, stage="prove", breaker=breaker)
    for index in range(25):
        with pytest.raises(PromptTooLong):
            await asyncio.wait_for(client.generate(ModelRequest(messages=GOEDEL_CHAT * 20, seed=index)), timeout=10)
    assert breaker.reason() is None
    response: ModelResponse = await asyncio.wait_for(client.generate(ModelRequest(messages=GOEDEL_CHAT)), timeout=10)
    assert len(response.texts) == 1


async def test_an_engine_step_and_abort_that_both_fail_leave_the_engine_serving(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _vllm(monkeypatch, family="qwen3")
    backend = VLLMBackend(model_id="m")
    await asyncio.wait_for(backend.generate(ModelRequest(prompt="warm up")), timeout=10)
    engine = fake_vllm.LLM.instances[0].llm_engine
    real_step, real_abort = engine.step, engine.abort_request
    engine.step = lambda: (_ for _ in ()).throw(RuntimeError("CUDA error: an illegal memory access"))
    engine.abort_request = lambda ids, internal=False: (_ for _ in ()).throw(RuntimeError("engine core died"))
    with pytest.raises(ModelCallError, match="illegal memory access"):
        await asyncio.wait_for(backend.generate(ModelRequest(prompt="p")), timeout=10)
    engine.step, engine.abort_request = real_step, real_abort
    await asyncio.wait_for(backend.generate(ModelRequest(prompt="again")), timeout=10)
    assert len(fake_vllm.LLM.instances) == 1, "the same engine thread serves on; no second engine is loaded"


async def test_an_engine_that_fails_to_load_fails_every_waiting_request(monkeypatch: pytest.MonkeyPatch) -> None:
    module = _vllm(monkeypatch)

    def broken(model: str, **kwargs: Any) -> Any:
        raise RuntimeError("CUDA out of memory")

    module.LLM = broken
    backend = VLLMBackend(model_id="m")
    requests = [backend.generate(ModelRequest(prompt=f"p{i}")) for i in range(3)]
    outcomes = await asyncio.wait_for(asyncio.gather(*requests, return_exceptions=True), timeout=10)
    assert all(isinstance(outcome, ModelCallError) and "CUDA out of memory" in str(outcome) for outcome in outcomes)


async def test_missing_optional_packages_fail_with_the_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "vllm", None)
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(ModelCallError, match=r"pip install 'repro\[vllm\]'"):
        await asyncio.wait_for(VLLMBackend(model_id="m").generate(ModelRequest(prompt="x")), timeout=10)
    with pytest.raises(ModelCallError, match=r"pip install 'repro\[local\]'"):
        await TransformersBackend(model_id="m").generate(ModelRequest(prompt="x"))


def test_stages_naming_one_in_process_model_share_one_engine_and_two_models_are_warned_about() -> None:
    from repro.config import ModelSettings, build_config, config_warnings
    from repro.llm.factory import build_backend

    settings = ModelSettings(backend="vllm", model="Goedel-LM/Goedel-Prover-V2-8B", max_model_len=40960)
    assert build_backend(settings) is build_backend(settings.model_copy()), "one engine, not two on the same GPUs"
    other = settings.model_copy(update={"model": "Goedel-LM/Goedel-Formalizer-V2-8B"})
    assert build_backend(other) is not build_backend(settings)
    prover = settings.model_dump()
    config = build_config({"models": {"formalize": other.model_dump(), "prove": prover}})
    assert any("2 in-process vLLM engines" in warning for warning in config_warnings(config))
    shared = build_config({"models": {"formalize": prover, "prove": prover}})
    assert not any("in-process vLLM engines" in warning for warning in config_warnings(shared))
