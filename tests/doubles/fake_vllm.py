"""A stand-in ``vllm`` module for machines without a GPU: the offline engine of a named vLLM release.

vLLM does not install on a CPU machine (every PyPI wheel needs a CUDA build of torch: vllm 0.33.0 pins
``torch==2.14.0``, 0.8.5.post1 ``torch==2.6.0``), so the in-process backend is tested against this. It imitates
one of two releases, chosen with ``module(release=...)``:

* ``0.33.0``, what ``pip install 'repro[vllm]'`` resolved when this was written;
* ``0.8.5.post1``, Goedel-Prover-V2's own pin (``goedelv2.yml``), the environment for "as the harness runs".

Every name, parameter and default the backend touches is the release's own, as transcribed from its wheel in
``tests/fixtures/vllm_signatures.json`` (``tests/test_model_libraries.py`` checks this module against that file):
``LLM(model, **engine_args)`` (vllm/entrypoints/llm.py), ``LLM.get_tokenizer()``, ``LLM.llm_engine`` with
``add_request(request_id, prompt, params, ...)``, ``step()``, ``abort_request(request_ids)``,
``has_unfinished_requests()`` and ``model_config.max_model_len`` (vllm/v1/engine/llm_engine.py), and
``SamplingParams`` with the release's defaults. Its failures too:

* ``SamplingParams(top_k=0)`` raises on 0.8.5.post1 ("top_k must be -1 (disable), or at least 1, got 0.",
  sampling_params.py ``_verify_args``); 0.33.0 takes 0 and -1 as "off";
* ``get_tokenizer()`` returns the real Hugging Face tokenizer of the checkpoint, loaded with
  ``transformers.AutoTokenizer`` as vLLM does (0.33.0 vllm/tokenizers/hf.py): under transformers >= 5 its
  ``apply_chat_template(tokenize=True)`` returns a ``BatchEncoding`` unless ``return_dict=False``;
* a prompt of ``max_model_len`` tokens or more is refused at ``add_request`` (vLLM's input processor raises
  "The decoder prompt ... is longer than the maximum model length"); an unknown engine argument is a
  ``TypeError`` (``EngineArgs(**kwargs)``);
* the offline loop semantics of ``LLM.generate`` (``_run_engine`` keeps *every* finished output it sees,
  whoever added it) and sample ``i`` of a seeded ``n``-sample request drawn with seed ``s + i``
  (vllm/v1/engine/parallel_sampling.py). A request takes a few engine steps (more for longer prompts), so
  requests finish out of order, as on a GPU.

Each sample's text names its prompt (decoded with the real tokenizer) and seed, so a test can tell whose
output a caller received and what exactly the engine was given.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
import types
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

RELEASES = ("0.33.0", "0.8.5.post1")
SIGNATURES = Path(__file__).resolve().parents[1] / "fixtures" / "vllm_signatures.json"


def transcribed(release: str) -> dict[str, Any]:
    """What the release's wheel says (tests/fixtures/vllm_signatures.json)."""
    releases: dict[str, Any] = json.loads(SIGNATURES.read_text(encoding="utf-8"))["releases"]
    return dict(releases[release])


class RequestOutputKind(Enum):
    CUMULATIVE = 0
    DELTA = 1
    FINAL_ONLY = 2


@dataclass
class _SamplingParams:
    """The fields repro passes, with vLLM 0.33.0's defaults; the 0.8.5.post1 class below differs in ``top_k``."""

    n: int = 1
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    repetition_penalty: float = 1.0
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    min_p: float = 0.0
    seed: int | None = None
    stop: str | list[str] | None = None
    max_tokens: int | None = 16
    output_kind: RequestOutputKind = RequestOutputKind.CUMULATIVE

    release = "0.33.0"

    def __post_init__(self) -> None:
        self._verify_args()
        if self.temperature < 1e-5:  # greedy: vLLM resets the other knobs
            self.top_p, self.top_k, self.min_p = 1.0, (0 if self.release == "0.33.0" else -1), 0.0

    def _verify_args(self) -> None:
        if not isinstance(self.top_k, int):
            raise TypeError(f"top_k must be an integer, got {type(self.top_k).__name__}")
        if self.release == "0.8.5.post1":
            if self.top_k < -1 or self.top_k == 0:
                raise ValueError(f"top_k must be -1 (disable), or at least 1, got {self.top_k}.")
        elif self.top_k < -1:
            raise ValueError(f"top_k must be 0 (disable), or at least 1, got {self.top_k}.")
        if not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}.")
        if not 0.0 <= self.min_p <= 1.0:
            raise ValueError(f"min_p must be in [0, 1], got {self.min_p}.")
        if self.repetition_penalty <= 0.0:
            raise ValueError(f"repetition_penalty must be greater than zero, got {self.repetition_penalty}.")


@dataclass
class _SamplingParams085(_SamplingParams):
    top_k: int = -1
    release = "0.8.5.post1"


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
    params: _SamplingParams
    steps_left: int
    outputs: list[CompletionOutput] = field(default_factory=list)


@dataclass
class ModelConfig:
    max_model_len: int


class LLMEngine:
    """One engine: whoever steps it advances every running request and receives whatever finishes."""

    def __init__(self, tokenizer: Any, step_s: float, max_model_len: int, release: str) -> None:
        self._tokenizer = tokenizer
        self._step_s = step_s
        self._running: dict[str, _Running] = {}
        self._lock = threading.Lock()
        self.model_config = ModelConfig(max_model_len)
        self.release = release
        self.added: list[str] = []
        self.params: list[_SamplingParams] = []

    def add_request(
        self,
        request_id: str,
        prompt: Any,
        params: _SamplingParams,
        arrival_time: float | None = None,
        lora_request: Any = None,
        tokenization_kwargs: dict[str, Any] | None = None,
        trace_headers: Any = None,
        priority: int = 0,
        session_id: Any = None,
        prompt_text: str | None = None,
        kv_hints: Any = None,
    ) -> None:
        if isinstance(prompt, dict):
            ids = list(prompt["prompt_token_ids"])
            text = None
        else:
            ids = list(self._tokenizer.encode(str(prompt), add_special_tokens=True))
            text = str(prompt)
        if not all(isinstance(token, int) for token in ids):
            raise TypeError(f"prompt_token_ids must be ints, got {ids[:3]!r}")
        if len(ids) >= self.model_config.max_model_len:
            raise ValueError(
                f"The decoder prompt (length {len(ids)}) is longer than the maximum model length of"
                f" {self.model_config.max_model_len}."
            )
        with self._lock:
            if request_id in self._running:
                raise ValueError(f"request id {request_id} already running")
            steps = 1 + len(ids) % 4 + (params.max_tokens or 0) // 100  # longer generations take more steps
            self._running[request_id] = _Running(text, ids, params, steps_left=steps)
            self.added.append(request_id)
            self.params.append(params)

    def has_unfinished_requests(self) -> bool:
        with self._lock:
            return bool(self._running)

    def abort_request(self, request_ids: list[str], internal: bool = False) -> None:
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
        shown = self._tokenizer.decode(running.prompt_token_ids, skip_special_tokens=False)
        text = f"answer to [{shown}] seed={seed}"
        limit = running.params.max_tokens or 10**9
        room = self.model_config.max_model_len - len(running.prompt_token_ids)
        produced = min(len(text), limit, room)
        token_ids = list(range(produced))
        return CompletionOutput(
            index=index, text=text, token_ids=token_ids, finish_reason="length" if produced < len(text) else "stop"
        )


class LLM:
    """``vllm.LLM``: one engine per instance; ``generate`` runs the engine until nothing is unfinished."""

    instances: list[LLM] = []
    release = "0.33.0"
    tokenizer_source: str | None = None
    step_s = 0.005
    default_max_model_len = 2048

    def __init__(self, model: str, **kwargs: Any) -> None:
        signature = transcribed(self.release)
        accepted = set(signature["LLM.__init__"]["positional"]) | set(signature["LLM.__init__"]["keyword_only"])
        unknown = sorted(set(kwargs) - accepted - set(signature["EngineArgs"]))
        if unknown:
            raise TypeError(f"EngineArgs.__init__() got an unexpected keyword argument {unknown[0]!r}")
        import transformers

        self.model = model
        self.kwargs = kwargs
        self._tokenizer = transformers.AutoTokenizer.from_pretrained(self.tokenizer_source or model)
        context = int(kwargs.get("max_model_len") or self.default_max_model_len)
        self.llm_engine = LLMEngine(self._tokenizer, self.step_s, context, self.release)
        self.request_counter = itertools.count()
        LLM.instances.append(self)

    def get_tokenizer(self) -> Any:
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


def module(
    *, release: str = "0.33.0", tokenizer_from: str | Path | None = None, step_s: float = 0.005
) -> types.ModuleType:
    """A module object to install as ``sys.modules["vllm"]``, imitating ``release``.

    ``tokenizer_from``: the checkpoint directory whose tokenizer every engine loads (a tiny one from
    tests/doubles/tiny_models.py), whatever model id the backend names; None loads from the model id itself.
    """
    if release not in RELEASES:
        raise ValueError(f"release {release!r}: this stand-in imitates {', '.join(RELEASES)}")
    fake = types.ModuleType("vllm")
    fake.__version__ = release  # type: ignore[attr-defined]

    class _LLM(LLM):
        pass

    _LLM.release = release
    _LLM.step_s = step_s
    _LLM.tokenizer_source = str(tokenizer_from) if tokenizer_from is not None else None
    sampling_class = _SamplingParams085 if release == "0.8.5.post1" else _SamplingParams
    fake.LLM = _LLM  # type: ignore[attr-defined]
    fake.SamplingParams = sampling_class  # type: ignore[attr-defined]
    # neither release exports RequestOutputKind at the top level (vllm/__init__.py): it lives in sampling_params
    sampling = types.ModuleType("vllm.sampling_params")
    sampling.RequestOutputKind = RequestOutputKind  # type: ignore[attr-defined]
    sampling.SamplingParams = sampling_class  # type: ignore[attr-defined]
    fake.sampling_params = sampling  # type: ignore[attr-defined]
    return fake
