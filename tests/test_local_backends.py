"""The vLLM backend's batching, against a stand-in `vllm` module with the real call signatures."""

from __future__ import annotations

import asyncio
import sys
import types
from dataclasses import dataclass, field
from typing import Any

import pytest

from repro.llm import ChatMessage, ModelCallError, ModelRequest, TransformersBackend, VLLMBackend


@dataclass
class SamplingParams:
    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1
    max_tokens: int = 16
    stop: list[str] | None = None
    seed: int | None = None


@dataclass
class _Sample:
    text: str
    token_ids: list[int]
    finish_reason: str


@dataclass
class _Output:
    prompt_token_ids: list[int]
    outputs: list[_Sample] = field(default_factory=list)


class LLM:
    calls: list[tuple[list[str], list[SamplingParams]]] = []

    def __init__(self, model: str, **kwargs: Any) -> None:
        self.model = model

    def get_tokenizer(self) -> Any:
        class Tokenizer:
            def apply_chat_template(self, messages: list[dict[str, str]], **kwargs: Any) -> str:
                return "".join(f"<{m['role']}>{m['content']}" for m in messages) + "<assistant>"

        return Tokenizer()

    def generate(self, prompts: list[str], params: list[SamplingParams], use_tqdm: bool = False) -> list[_Output]:
        LLM.calls.append((prompts, params))
        return [
            _Output(
                prompt_token_ids=[1, 2, 3],
                outputs=[
                    _Sample(text=f"{prompt}#{i}", token_ids=[0] * p.max_tokens, finish_reason="length" if i else "stop")
                    for i in range(p.n)
                ],
            )
            for prompt, p in zip(prompts, params, strict=True)
        ]


@pytest.fixture
def fake_vllm(monkeypatch: pytest.MonkeyPatch) -> type[LLM]:
    module = types.ModuleType("vllm")
    module.LLM = LLM  # type: ignore[attr-defined]
    module.SamplingParams = SamplingParams  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "vllm", module)
    LLM.calls = []
    return LLM


async def test_concurrent_requests_go_to_the_engine_as_one_batch_with_n_samples(fake_vllm: type[LLM]) -> None:
    backend = VLLMBackend(model_id="Goedel-LM/Goedel-Prover-V2-8B", batch_window_s=0.02)
    requests = [ModelRequest(prompt=f"p{i}", n=4, temperature=1.0, top_p=0.95, max_tokens=8, seed=i) for i in range(5)]
    chat = ModelRequest(messages=[ChatMessage(role="user", content="hi")], n=1, max_tokens=8)
    responses = await asyncio.gather(*(backend.generate(r) for r in [*requests, chat]))
    assert len(fake_vllm.calls) == 1, "six concurrent requests, one engine call"
    prompts, params = fake_vllm.calls[0]
    assert prompts[:5] == [f"p{i}" for i in range(5)] and prompts[5] == "<user>hi<assistant>"
    assert [p.n for p in params] == [4] * 5 + [1] and params[0].top_p == 0.95 and params[0].max_tokens == 8
    assert responses[2].texts == ["p2#0", "p2#1", "p2#2", "p2#3"]
    assert responses[2].finish_reasons == ["stop", "length", "length", "length"]
    assert responses[2].tokens_out == 32 and responses[2].backend_id == "vllm"


async def test_missing_optional_packages_fail_with_the_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "vllm", None)
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(ModelCallError, match=r"pip install 'repro\[vllm\]'"):
        await VLLMBackend(model_id="m", batch_window_s=0.0).generate(ModelRequest(prompt="x"))
    with pytest.raises(ModelCallError, match=r"pip install 'repro\[local\]'"):
        await TransformersBackend(model_id="m").generate(ModelRequest(prompt="x"))
