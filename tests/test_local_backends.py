"""In-process backends against stand-ins with the real libraries' semantics (no GPU, no weights here).

The vLLM stand-in (repro.testing.fake_vllm) has one engine whose offline loop collects every finished
request, whoever added it, as vllm/entrypoints/llm.py ``_run_engine`` does.
"""

from __future__ import annotations

import asyncio
import re
import sys
from typing import Any

import pytest

from repro.config import EngineSettings
from repro.llm import ChatMessage, ModelCallError, ModelRequest, TransformersBackend, VLLMBackend
from repro.llm.local_backends import finish_reasons_from_tokens, prompt_token_ids, transformers_sampling
from repro.testing import fake_vllm


@pytest.fixture
def vllm_module(monkeypatch: pytest.MonkeyPatch) -> Any:
    module = fake_vllm.module(step_s=0.01)
    monkeypatch.setitem(sys.modules, "vllm", module)
    monkeypatch.setitem(sys.modules, "vllm.sampling_params", module.sampling_params)
    fake_vllm.LLM.instances = []
    return module


def _prompt_of(text: str) -> str:
    match = re.match(r"answer to \[(.*)\] seed=", text, re.DOTALL)
    assert match, text
    return match.group(1)


async def test_concurrent_requests_in_waves_each_get_their_own_outputs(vllm_module: Any) -> None:
    """Requests arriving while the engine runs another batch: no hang, nothing attributed to another prompt."""
    backend = VLLMBackend(model_id="Goedel-LM/Goedel-Prover-V2-8B")

    async def ask(index: int, delay: float) -> tuple[int, list[str]]:
        await asyncio.sleep(delay)
        prompt = f"statement {index} " + "x" * index
        response = await backend.generate(ModelRequest(prompt=prompt, n=3, temperature=1.0, max_tokens=500, seed=10))
        return index, response.texts

    waves = [ask(index, delay=0.03 * (index % 8)) for index in range(20)]
    results = await asyncio.wait_for(asyncio.gather(*waves), timeout=20)
    for index, texts in results:
        assert len(texts) == 3
        assert {_prompt_of(text) for text in texts} == {f"<s>statement {index} " + "x" * index}
        assert [text.rsplit("seed=", 1)[1] for text in texts] == ["10", "11", "12"]
    assert len(fake_vllm.LLM.instances) == 1, "one engine for the backend's life"


async def test_engine_settings_reach_the_engine_and_chat_prompts_carry_one_bos(vllm_module: Any) -> None:
    engine = EngineSettings(tensor_parallel_size=4, gpu_memory_utilization=0.85, enable_prefix_caching=True, seed=7)
    backend = VLLMBackend(model_id="Goedel-LM/Goedel-Prover-V2-32B", engine=engine, max_model_len=40960)
    chat = ModelRequest(messages=[ChatMessage(role="user", content="prove it")], max_tokens=64, seed=1)
    response = await asyncio.wait_for(backend.generate(chat), timeout=10)
    kwargs = fake_vllm.LLM.instances[0].kwargs
    assert kwargs["tensor_parallel_size"] == 4 and kwargs["gpu_memory_utilization"] == 0.85
    assert kwargs["enable_prefix_caching"] is True and kwargs["seed"] == 7 and kwargs["max_model_len"] == 40960
    # the template already starts with BOS; tokenising its text again would add a second one
    assert _prompt_of(response.texts[0]) == "<s><user>prove it<assistant>"
    assert response.backend_id == "vllm" and response.tokens_in == len("<s><user>prove it<assistant>") - 2


async def test_an_engine_that_fails_to_load_fails_every_waiting_request(monkeypatch: pytest.MonkeyPatch) -> None:
    module = fake_vllm.module()

    def broken(model: str, **kwargs: Any) -> Any:
        raise RuntimeError("CUDA out of memory")

    module.LLM = broken
    monkeypatch.setitem(sys.modules, "vllm", module)
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


# -- transformers: the parts that decide what the model is asked and what its answer means ---------------


def test_transformers_sampling_sends_top_k_explicitly() -> None:
    """``top_k=None`` would let the model's generation_config (often top_k=20 or 50) decide silently."""
    sampled = transformers_sampling(ModelRequest(prompt="x", temperature=1.0, top_p=0.95, max_tokens=9, n=2))
    assert sampled["do_sample"] is True and sampled["top_k"] == 0 and sampled["top_p"] == 0.95
    assert sampled["num_return_sequences"] == 2 and sampled["max_new_tokens"] == 9
    assert transformers_sampling(ModelRequest(prompt="x", temperature=1.0, top_k=20))["top_k"] == 20
    greedy = transformers_sampling(ModelRequest(prompt="x", temperature=0.0))
    assert greedy["do_sample"] is False and greedy["top_k"] is None


def test_transformers_finish_reason_comes_from_the_eos_token_not_the_padded_length() -> None:
    eos, pad = 2, 2
    # three samples padded to one length: the first stopped early, the second ran out, the third stopped last
    rows = [[5, 6, eos, pad, pad], [5, 6, 7, 8, 9], [5, 6, 7, 8, eos]]
    assert finish_reasons_from_tokens(rows, eos_ids={eos}, max_tokens=5) == [
        ("stop", [5, 6]),
        ("length", [5, 6, 7, 8, 9]),
        ("stop", [5, 6, 7, 8]),
    ]


def test_transformers_chat_prompt_has_one_bos() -> None:
    tokenizer = fake_vllm.FakeTokenizer()
    chat = ModelRequest(messages=[ChatMessage(role="user", content="hi")])
    ids = prompt_token_ids(tokenizer, chat)
    assert ids.count(0) == 1 and tokenizer.decode(ids) == "<s><user>hi<assistant>"
    raw = prompt_token_ids(tokenizer, ModelRequest(prompt="Complete: "))
    assert raw[0] == 0 and raw.count(0) == 1
