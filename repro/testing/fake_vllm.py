"""A stand-in ``vllm`` module with the offline engine's semantics, for tests on machines without a GPU.

It imitates vllm/entrypoints/llm.py (``LLM.generate`` adds its prompts to the one engine under ids from
the LLM's own counter, then ``_run_engine`` steps the engine while it has unfinished requests and keeps
*every* finished output it sees, whoever added it, sorted by ``int(request_id)``), vllm/v1/engine/
llm_engine.py (``add_request(request_id, prompt, params)``, ``step()`` returning ``RequestOutput``s,
``has_unfinished_requests()``, ``abort_request``) and vllm/v1/engine/parallel_sampling.py (sample ``i`` of
a request with ``n > 1`` and seed ``s`` is drawn with seed ``s + i``). A request takes a few engine steps
(more for longer prompts), so requests finish out of order, as on a GPU.

Each sample's text names its prompt and seed, so a test can tell whose output a caller received.
"""

from __future__ import annotations

import itertools
import threading
import time
import types
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class RequestOutputKind(Enum):
    CUMULATIVE = 0
    DELTA = 1
    FINAL_ONLY = 2


@dataclass
class SamplingParams:
    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    max_tokens: int | None = 16
    stop: list[str] | None = None
    seed: int | None = None
    output_kind: RequestOutputKind = RequestOutputKind.CUMULATIVE


@dataclass
class CompletionOutput:
    index: int
    text: str
    token_ids: list[int]
    finish_reason: str | None


@dataclass
class RequestOutput:
    request_id: str
    prompt: str | None
    prompt_token_ids: list[int]
    outputs: list[CompletionOutput]
    finished: bool


@dataclass
class _Running:
    prompt: str | None
    prompt_token_ids: list[int]
    params: SamplingParams
    steps_left: int
    outputs: list[CompletionOutput] = field(default_factory=list)


class FakeTokenizer:
    """Renders a chat the way a template with a BOS token does; ``encode`` adds BOS like a HF tokenizer."""

    bos_token = "<s>"
    chat_template = "fake"

    def apply_chat_template(self, messages: list[dict[str, str]], *, tokenize: bool = False, **kwargs: Any) -> Any:
        body = "".join(f"<{m['role']}>{m['content']}" for m in messages) + "<assistant>"
        return [0, *self.encode(body, add_special_tokens=False)] if tokenize else self.bos_token + body

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        ids = [ord(character) for character in text]
        return [0, *ids] if add_special_tokens else ids

    def decode(self, ids: list[int]) -> str:
        return "".join("<s>" if i == 0 else chr(i) for i in ids)


class LLMEngine:
    """One engine: whoever steps it advances every running request and receives whatever finishes."""

    def __init__(self, tokenizer: FakeTokenizer, step_s: float) -> None:
        self._tokenizer = tokenizer
        self._step_s = step_s
        self._running: dict[str, _Running] = {}
        self._lock = threading.Lock()
        self.added: list[str] = []

    def add_request(self, request_id: str, prompt: Any, params: SamplingParams, **kwargs: Any) -> None:
        if isinstance(prompt, dict):
            ids = list(prompt["prompt_token_ids"])
            text = None
        else:
            ids = self._tokenizer.encode(str(prompt))
            text = str(prompt)
        with self._lock:
            if request_id in self._running:
                raise ValueError(f"request id {request_id} already running")
            steps = 1 + len(ids) % 4 + (params.max_tokens or 0) // 100  # longer generations take more steps
            self._running[request_id] = _Running(text, ids, params, steps_left=steps)
            self.added.append(request_id)

    def has_unfinished_requests(self) -> bool:
        with self._lock:
            return bool(self._running)

    def abort_request(self, request_ids: list[str]) -> None:
        with self._lock:
            for request_id in request_ids:
                self._running.pop(request_id, None)

    def step(self) -> list[RequestOutput]:
        time.sleep(self._step_s)  # the forward pass: other threads run meanwhile
        outputs = []
        with self._lock:
            for request_id, running in list(self._running.items()):
                running.steps_left -= 1
                finished = running.steps_left <= 0
                if finished:
                    del self._running[request_id]
                    running.outputs = [self._sample(running, index) for index in range(running.params.n)]
                final_only = running.params.output_kind == RequestOutputKind.FINAL_ONLY
                if finished or not final_only:
                    outputs.append(
                        RequestOutput(
                            request_id=request_id,
                            prompt=running.prompt,
                            prompt_token_ids=running.prompt_token_ids,
                            outputs=list(running.outputs),
                            finished=finished,
                        )
                    )
        return outputs

    def _sample(self, running: _Running, index: int) -> CompletionOutput:
        seed = None if running.params.seed is None else running.params.seed + index
        shown = self._tokenizer.decode(running.prompt_token_ids)
        text = f"answer to [{shown}] seed={seed}"
        limit = running.params.max_tokens or 10**9
        token_ids = list(range(min(len(text), limit)))
        return CompletionOutput(
            index=index, text=text, token_ids=token_ids, finish_reason="length" if len(text) >= limit else "stop"
        )


class LLM:
    """``vllm.LLM``: one engine per instance; ``generate`` runs the engine until nothing is unfinished."""

    instances: list[LLM] = []

    def __init__(self, model: str, *, step_s: float = 0.005, **kwargs: Any) -> None:
        self.model = model
        self.kwargs = kwargs
        self._tokenizer = FakeTokenizer()
        self.llm_engine = LLMEngine(self._tokenizer, step_s)
        self.request_counter = itertools.count()
        LLM.instances.append(self)

    def get_tokenizer(self) -> FakeTokenizer:
        return self._tokenizer

    def generate(
        self, prompts: list[Any], sampling_params: Any = None, *, use_tqdm: bool = True
    ) -> list[RequestOutput]:
        params = sampling_params if isinstance(sampling_params, list) else [sampling_params] * len(prompts)
        for prompt, parameters in zip(prompts, params, strict=True):
            parameters.output_kind = RequestOutputKind.FINAL_ONLY
            self.llm_engine.add_request(str(next(self.request_counter)), prompt, parameters)
        return self._run_engine()

    def _run_engine(self) -> list[RequestOutput]:
        outputs = []
        while self.llm_engine.has_unfinished_requests():
            for output in self.llm_engine.step():
                if output.finished:
                    outputs.append(output)
        return sorted(outputs, key=lambda output: int(output.request_id))


def module(step_s: float = 0.005) -> types.ModuleType:
    """A module object to install as ``sys.modules["vllm"]``."""
    fake = types.ModuleType("vllm")

    class _LLM(LLM):
        def __init__(self, model: str, **kwargs: Any) -> None:
            super().__init__(model, step_s=step_s, **kwargs)

    fake.LLM = _LLM  # type: ignore[attr-defined]
    fake.SamplingParams = SamplingParams  # type: ignore[attr-defined]
    fake.RequestOutputKind = RequestOutputKind  # type: ignore[attr-defined]
    sampling = types.ModuleType("vllm.sampling_params")
    sampling.RequestOutputKind = RequestOutputKind  # type: ignore[attr-defined]
    sampling.SamplingParams = SamplingParams  # type: ignore[attr-defined]
    fake.sampling_params = sampling  # type: ignore[attr-defined]
    return fake
