"""In-process backends: vLLM for offline batch generation, transformers for small local runs.

Both import their heavy dependency lazily, so the core install never needs torch or vllm.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from repro.llm.protocol import FinishReason, ModelCallError, ModelRequest, ModelResponse


def _missing(extra: str, package: str) -> ModelCallError:
    return ModelCallError(
        f"{package} backend", f"{package} is not installed; install it with: pip install 'repro[{extra}]'"
    )


class VLLMBackend:
    """Batches requests that arrive within a short window into one ``LLM.generate`` call.

    Each request uses ``SamplingParams(n=k)`` so k proof samples share one prompt prefill.
    """

    scripted = False

    def __init__(self, *, model_id: str, batch_window_s: float = 0.05, **engine_arguments: Any) -> None:
        self.model_id = model_id
        self.backend_id = "vllm"
        self.batch_window_s = batch_window_s
        self._engine_arguments = engine_arguments
        self._engine: Any = None
        self._queue: list[tuple[ModelRequest, asyncio.Future[ModelResponse]]] = []
        self._flush_task: asyncio.Task[None] | None = None

    def _load(self) -> Any:
        if self._engine is None:
            try:
                import vllm
            except ImportError as error:
                raise _missing("vllm", "vllm") from error
            self._engine = vllm.LLM(model=self.model_id, **self._engine_arguments)
        return self._engine

    def _run_batch(self, batch: list[ModelRequest]) -> list[ModelResponse]:
        engine = self._load()
        import vllm

        started = time.perf_counter()
        outputs = []
        for request in batch:
            parameters = vllm.SamplingParams(
                n=request.n,
                temperature=request.temperature,
                top_p=request.top_p,
                top_k=request.top_k if request.top_k is not None else -1,
                max_tokens=request.max_tokens,
                stop=request.stop,
                seed=request.seed,
            )
            outputs.append((request, parameters))
        prompts = [self._render(engine, request) for request, _ in outputs]
        results = engine.generate(prompts, [parameters for _, parameters in outputs], use_tqdm=False)
        latency = time.perf_counter() - started
        responses = []
        for result in results:
            finish: list[FinishReason] = [
                "length" if sample.finish_reason == "length" else "stop" for sample in result.outputs
            ]
            responses.append(
                ModelResponse(
                    texts=[sample.text for sample in result.outputs],
                    finish_reasons=finish,
                    tokens_in=len(result.prompt_token_ids or []),
                    tokens_out=sum(len(sample.token_ids) for sample in result.outputs),
                    latency_s=latency,
                    backend_id=self.backend_id,
                    model_id=self.model_id,
                )
            )
        return responses

    @staticmethod
    def _render(engine: Any, request: ModelRequest) -> str:
        if request.prompt is not None:
            return request.prompt
        tokenizer = engine.get_tokenizer()
        rendered: str = tokenizer.apply_chat_template(
            [m.model_dump() for m in request.messages or []], tokenize=False, add_generation_prompt=True
        )
        return rendered

    async def _flush_later(self) -> None:
        await asyncio.sleep(self.batch_window_s)
        batch, self._queue = self._queue, []
        self._flush_task = None
        try:
            responses = await asyncio.to_thread(self._run_batch, [request for request, _ in batch])
        except Exception as error:  # one engine failure fails the whole batch, explicitly
            failure = (
                error
                if isinstance(error, ModelCallError)
                else ModelCallError("vllm", f"{type(error).__name__}: {error}")
            )
            for _, future in batch:
                if not future.done():
                    future.set_exception(failure)
            return
        for (_, future), response in zip(batch, responses, strict=True):
            if not future.done():
                future.set_result(response)

    async def generate(self, request: ModelRequest) -> ModelResponse:
        future: asyncio.Future[ModelResponse] = asyncio.get_running_loop().create_future()
        self._queue.append((request, future))
        if self._flush_task is None:
            self._flush_task = asyncio.create_task(self._flush_later())
        return await future


class TransformersBackend:
    """A local Hugging Face model for small CPU/GPU runs; requests run one at a time in a thread."""

    scripted = False

    def __init__(self, *, model_id: str, device: str | None = None) -> None:
        self.model_id = model_id
        self.backend_id = "transformers"
        self.device = device
        self._loaded: tuple[Any, Any] | None = None
        self._lock = asyncio.Lock()

    def _load(self) -> tuple[Any, Any]:
        if self._loaded is None:
            try:
                import transformers
            except ImportError as error:
                raise _missing("local", "transformers") from error
            tokenizer = transformers.AutoTokenizer.from_pretrained(self.model_id)
            model = transformers.AutoModelForCausalLM.from_pretrained(self.model_id)
            if self.device:
                model = model.to(self.device)
            self._loaded = (tokenizer, model)
        return self._loaded

    def _generate_sync(self, request: ModelRequest) -> ModelResponse:
        tokenizer, model = self._load()
        started = time.perf_counter()
        if request.prompt is not None:
            text = request.prompt
        else:
            text = tokenizer.apply_chat_template(
                [m.model_dump() for m in request.messages or []], tokenize=False, add_generation_prompt=True
            )
        inputs = tokenizer(text, return_tensors="pt").to(model.device)
        sampling = request.temperature > 0
        outputs = model.generate(
            **inputs,
            max_new_tokens=request.max_tokens,
            do_sample=sampling,
            num_return_sequences=request.n,
            temperature=request.temperature if sampling else None,
            top_p=request.top_p if sampling else None,
            top_k=request.top_k if sampling and request.top_k else None,
        )
        prompt_length = inputs["input_ids"].shape[1]
        texts, finish, generated = [], [], 0
        for sequence in outputs:
            new_tokens = sequence[prompt_length:]
            generated += int(new_tokens.shape[0])
            decoded = tokenizer.decode(new_tokens, skip_special_tokens=True)
            for stop in request.stop or []:
                if stop in decoded:
                    decoded = decoded.split(stop, 1)[0]
            texts.append(decoded)
            finish.append("length" if new_tokens.shape[0] >= request.max_tokens else "stop")
        return ModelResponse(
            texts=texts,
            finish_reasons=finish,
            tokens_in=int(prompt_length),
            tokens_out=generated,
            latency_s=time.perf_counter() - started,
            backend_id=self.backend_id,
            model_id=self.model_id,
        )

    async def generate(self, request: ModelRequest) -> ModelResponse:
        async with self._lock:
            return await asyncio.to_thread(self._generate_sync, request)
