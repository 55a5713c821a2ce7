"""In-process backends: vLLM for offline batch generation, transformers for small local runs.

Both import their heavy dependency lazily, so the core install never needs torch or vllm.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import queue
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from repro.config import EngineSettings
from repro.llm.budget import ContextTooSmallError, fit_to_prompt
from repro.llm.protocol import FinishReason, ModelCallError, ModelRequest, ModelResponse, PromptTooLong


def _missing(extra: str, package: str) -> ModelCallError:
    return ModelCallError(
        f"{package} backend", f"{package} is not installed; install it with: pip install 'repro[{extra}]'"
    )


def _token_list(value: Any, what: str) -> list[int]:
    """Token ids from whatever a tokenizer returned: a list, a ``BatchEncoding`` (transformers >= 5 returns one
    from ``apply_chat_template(tokenize=True)`` unless ``return_dict=False``), a tensor, a batch of one."""
    if isinstance(value, Mapping) and "input_ids" in value:
        value = value["input_ids"]
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, list | tuple) and len(value) == 1 and isinstance(value[0], list | tuple):
        value = value[0]
    if not isinstance(value, list | tuple) or not all(isinstance(token, int) for token in value):
        raise ModelCallError("tokenizer", f"{what} did not return token ids (got {type(value).__name__})")
    return [int(token) for token in value]


def prompt_token_ids(tokenizer: Any, request: ModelRequest) -> list[int]:
    """The prompt as token ids, with exactly one BOS.

    A chat template's text already starts with the BOS token (DeepSeek's and Llama's do); handing that
    text to a tokenizer that adds special tokens puts a second BOS in front, which the model never saw
    in training. So a chat is tokenised by the template itself (which encodes the rendered text with
    ``add_special_tokens=False``), and only a raw prompt gets the tokenizer's special tokens.

    ``return_dict=False`` is explicit: transformers 5.0 made ``True`` the default, which returns a
    ``BatchEncoding`` (transformers 5.24.0 tokenization_utils_base.py, ``apply_chat_template``); 4.x accepts
    the keyword with ``False`` as its default. vLLM's ``get_tokenizer()`` hands back the same HF class
    (vllm 0.33.0 vllm/tokenizers/hf.py), so both in-process backends go through here.
    """
    if request.prompt is not None:
        return _token_list(tokenizer.encode(request.prompt, add_special_tokens=True), "encode")
    ids = tokenizer.apply_chat_template(
        [message.model_dump() for message in request.messages or []],
        tokenize=True,
        add_generation_prompt=True,
        return_dict=False,
    )
    return _token_list(ids, "apply_chat_template")


def fit_tokens(request: ModelRequest, prompt_ids: list[int], max_model_len: int | None, where: str) -> ModelRequest:
    """``request`` with ``max_tokens`` lowered to the room the counted prompt leaves in the context, or
    :class:`PromptTooLong` (never an endpoint failure) when it leaves none."""
    try:
        return fit_to_prompt(request, len(prompt_ids), max_model_len)
    except ContextTooSmallError as error:
        raise PromptTooLong(where, str(error)) from error


@dataclass
class _Job:
    request_id: str
    request: ModelRequest
    future: asyncio.Future[ModelResponse]
    loop: asyncio.AbstractEventLoop
    started: float


class VLLMBackend:
    """One vLLM engine, driven by one thread, with every output routed back by its request id.

    vLLM's offline ``LLM.generate`` runs the engine until *no* request is unfinished and returns every
    finished output it saw (vllm/entrypoints/llm.py, ``_run_engine``): two overlapping calls on one
    engine receive each other's outputs. So only the engine thread here ever touches the engine. It
    adds each request under our own id (``LLMEngine.add_request``), steps the engine while anything
    runs, and hands each finished output to the caller whose id it carries; new requests join the
    running batch between steps (continuous batching). Sampling ``n`` samples per request shares one
    prompt prefill; with a seed, sample ``i`` is drawn with seed+i (vllm/v1/engine/parallel_sampling.py).
    """

    scripted = False

    def __init__(
        self,
        *,
        model_id: str,
        engine: EngineSettings | None = None,
        max_model_len: int | None = None,
        **engine_arguments: Any,
    ) -> None:
        self.model_id = model_id
        self.backend_id = "vllm"
        self.engine_settings = engine or EngineSettings()
        self.max_model_len = max_model_len
        self._extra_arguments = engine_arguments
        self._inbox: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._thread_lock = threading.Lock()
        self._ids = itertools.count()
        # an engine that failed to load stays failed for this backend: loading 60 GB again per request would not help
        self._load_error: ModelCallError | None = None

    def engine_arguments(self) -> dict[str, Any]:
        """``vllm.LLM`` keyword arguments (names as in vllm/entrypoints/llm.py and EngineArgs)."""
        settings = self.engine_settings
        arguments: dict[str, Any] = {
            "tensor_parallel_size": settings.tensor_parallel_size,
            "gpu_memory_utilization": settings.gpu_memory_utilization,
            "enable_prefix_caching": settings.enable_prefix_caching,
            "seed": settings.seed,
            "dtype": settings.dtype,
            "trust_remote_code": settings.trust_remote_code,
        }
        if self.max_model_len is not None:
            arguments["max_model_len"] = self.max_model_len
        arguments.update(self._extra_arguments)
        return arguments

    async def generate(self, request: ModelRequest) -> ModelResponse:
        loop = asyncio.get_running_loop()
        job = _Job(f"repro-{next(self._ids)}", request, loop.create_future(), loop, time.perf_counter())
        with self._thread_lock:  # a job is either queued for a live engine thread or refused, never lost
            if self._load_error is not None:
                raise self._load_error
            self._inbox.put(job)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._serve, name=f"vllm:{self.model_id}", daemon=True)
                self._thread.start()
        return await job.future

    def close(self) -> None:
        """Stop the engine thread once it has nothing running (requests already sent are finished)."""
        self._inbox.put(None)

    # -- the engine thread ---------------------------------------------------------------------------
    @staticmethod
    def _resolve(job: _Job, outcome: ModelResponse | BaseException) -> None:
        def settle() -> None:
            if job.future.done():
                return
            if isinstance(outcome, BaseException):
                job.future.set_exception(outcome)
            else:
                job.future.set_result(outcome)

        with contextlib.suppress(RuntimeError):  # the caller's event loop is gone; nobody is waiting
            job.loop.call_soon_threadsafe(settle)

    def _fail(self, jobs: Iterable[_Job], error: BaseException) -> None:
        failure = (
            error
            if isinstance(error, ModelCallError)
            else ModelCallError(f"vllm model {self.model_id}", f"{type(error).__name__}: {error}")
        )
        for job in jobs:
            self._resolve(job, failure)

    def _load(self) -> Any:
        try:
            import vllm
        except ImportError as error:
            raise _missing("vllm", "vllm") from error
        return vllm, vllm.LLM(model=self.model_id, **self.engine_arguments())

    def _serve(self) -> None:
        try:
            vllm, llm = self._load()
        except BaseException as error:  # a failed load fails every waiting request, explicitly
            failure = (
                error
                if isinstance(error, ModelCallError)
                else ModelCallError(f"vllm model {self.model_id}", f"the engine did not load: {error}")
            )
            with self._thread_lock:
                self._load_error = failure
                self._fail([job for job in self._drain(block=False) if job is not None], failure)
            return
        engine = llm.llm_engine
        tokenizer = llm.get_tokenizer()
        context = self.max_model_len or _engine_max_model_len(engine)
        running: dict[str, _Job] = {}
        stopping = False
        while running or not stopping:
            for job in self._drain(block=not running):
                if job is None:
                    stopping = True
                    continue
                try:
                    prompt = self._prompt(tokenizer, job, context)
                    engine.add_request(job.request_id, prompt, self._params(vllm, job))
                except Exception as error:  # a prompt the engine refuses fails that request only
                    self._fail([job], error)
                    continue
                running[job.request_id] = job
            if not running:
                continue
            try:
                outputs = engine.step()
            except Exception as error:  # the engine broke: every running request fails, none hangs
                self._fail(running.values(), error)
                with contextlib.suppress(Exception):  # an abort that fails too must not kill this thread
                    engine.abort_request(list(running))
                running.clear()
                continue
            for output in outputs:
                job_for = running.get(str(output.request_id))
                if job_for is None or not output.finished:
                    continue  # another caller's request, or not done yet: never attributed here
                del running[job_for.request_id]
                self._resolve(job_for, self._response(job_for, output))

    def _drain(self, *, block: bool) -> list[Any]:
        jobs: list[Any] = []
        if block:
            jobs.append(self._inbox.get())
        while True:
            try:
                jobs.append(self._inbox.get_nowait())
            except queue.Empty:
                return jobs

    def _prompt(self, tokenizer: Any, job: _Job, context: int | None) -> Any:
        """The engine's prompt for ``job``, whose ``max_tokens`` is fitted to the counted prompt first.

        The count is the model's own (its tokenizer and chat template), so a feedback round's history is
        measured as the model sees it, not by a byte bound."""
        ids = prompt_token_ids(tokenizer, job.request)
        job.request = fit_tokens(job.request, ids, context, f"vllm model {self.model_id}")
        if job.request.prompt is not None:
            return job.request.prompt
        return {"prompt_token_ids": ids}

    @staticmethod
    def _params(vllm: Any, job: _Job) -> Any:
        """``SamplingParams`` with every sampling value explicit.

        "No top-k" is ``-1``: vLLM 0.6.0 - 0.8.5.post1 refuse ``0`` on every request ("top_k must be -1
        (disable), or at least 1", vllm 0.8.5.post1 sampling_params.py ``_verify_args``), 0.9 onward take both
        (0.33.0 sampling_params.py: "quietly accept -1 as disabled"). The offline engine never reads the
        checkpoint's generation_config for these (0.33.0 sampling_params.py ``update_from_generation_config``
        takes only EOS ids), so the neutral values here are what the harnesses' explicit SamplingParams use.
        """
        request = job.request
        parameters = vllm.SamplingParams(
            n=request.n,
            temperature=request.temperature,
            top_p=request.top_p,
            top_k=request.top_k if request.top_k is not None and request.top_k > 0 else -1,
            min_p=request.min_p if request.min_p is not None else 0.0,
            repetition_penalty=request.repetition_penalty if request.repetition_penalty is not None else 1.0,
            presence_penalty=request.presence_penalty if request.presence_penalty is not None else 0.0,
            frequency_penalty=request.frequency_penalty if request.frequency_penalty is not None else 0.0,
            max_tokens=request.max_tokens,
            stop=request.stop,
            seed=request.seed,
        )
        kind = getattr(vllm, "RequestOutputKind", None) or getattr(
            getattr(vllm, "sampling_params", None), "RequestOutputKind", None
        )
        if kind is not None:
            parameters.output_kind = kind.FINAL_ONLY  # as LLM.generate does: one output per finished request
        return parameters

    def _response(self, job: _Job, output: Any) -> ModelResponse | ModelCallError:
        samples = sorted(output.outputs, key=lambda sample: int(getattr(sample, "index", 0)))
        if len(samples) != job.request.n:
            return ModelCallError(
                f"vllm model {self.model_id}", f"expected {job.request.n} samples, the engine returned {len(samples)}"
            )
        if any(sample.finish_reason == "abort" for sample in samples):
            return ModelCallError(f"vllm model {self.model_id}", "the engine aborted the request")
        finish: list[FinishReason] = ["length" if sample.finish_reason == "length" else "stop" for sample in samples]
        return ModelResponse(
            texts=[sample.text for sample in samples],
            finish_reasons=finish,
            tokens_in=len(output.prompt_token_ids or []),
            tokens_out=sum(len(sample.token_ids) for sample in samples),
            latency_s=time.perf_counter() - job.started,
            backend_id=self.backend_id,
            model_id=self.model_id,
        )


def _engine_max_model_len(engine: Any) -> int | None:
    """The context the engine was started with (vLLM ``LLMEngine.model_config.max_model_len``), if it says."""
    value = getattr(getattr(engine, "model_config", None), "max_model_len", None)
    return value if isinstance(value, int) and value > 0 else None


def transformers_sampling(request: ModelRequest) -> dict[str, Any]:
    """``generate`` keyword arguments with every sampling value explicit.

    A value left as None falls back to the model's generation_config (Qwen's ships top_k=20,
    transformers' default is 50; some ship a repetition_penalty): ``top_k=0`` is how transformers says
    "no top-k" (transformers 5.24.0 generation/utils.py), ``repetition_penalty=1.0`` "no penalty", and
    ``min_p=None`` "no min-p". transformers has no presence/frequency penalty; a request that sets one
    is refused rather than sampled differently from what it asked.
    """
    if request.presence_penalty or request.frequency_penalty:
        raise ModelCallError(
            "transformers backend", "presence_penalty and frequency_penalty are not supported by transformers"
        )
    sampling = request.temperature > 0
    return {
        "max_new_tokens": request.max_tokens,
        "do_sample": sampling,
        "num_return_sequences": request.n,
        "temperature": request.temperature if sampling else None,
        "top_p": request.top_p if sampling else None,
        "top_k": (request.top_k if request.top_k and request.top_k > 0 else 0) if sampling else None,
        "min_p": request.min_p if sampling and request.min_p else None,
        "repetition_penalty": request.repetition_penalty if request.repetition_penalty is not None else 1.0,
    }


def finish_reasons_from_tokens(
    rows: list[list[int]], *, eos_ids: set[int], max_tokens: int
) -> list[tuple[FinishReason, list[int]]]:
    """Per generated row: ``stop`` with the tokens before the first EOS, else ``length``.

    ``generate`` pads every returned sequence to the longest one (with the pad token, often the EOS
    token), so the row's length says nothing about why one sample ended.
    """
    results: list[tuple[FinishReason, list[int]]] = []
    for row in rows:
        cut = next((position for position, token in enumerate(row) if token in eos_ids), None)
        if cut is not None:
            results.append(("stop", row[:cut]))
        else:
            results.append(("length" if len(row) >= max_tokens else "stop", row))
    return results


def _torch_dtype(torch: Any, dtype: str, on_gpu: bool) -> Any:
    if dtype == "auto":
        if not on_gpu:
            return torch.float32
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
    return getattr(torch, dtype)


class TransformersBackend:
    """A local Hugging Face model for small CPU/GPU runs; requests run one at a time in a thread."""

    scripted = False

    def __init__(
        self,
        *,
        model_id: str,
        device: str | None = None,
        engine: EngineSettings | None = None,
        max_model_len: int | None = None,
    ) -> None:
        self.model_id = model_id
        self.max_model_len = max_model_len
        self.backend_id = "transformers"
        self.engine_settings = engine or EngineSettings()
        self.device = device or self.engine_settings.device
        self._loaded: tuple[Any, Any, Any] | None = None
        self._lock = asyncio.Lock()

    def _load(self) -> tuple[Any, Any, Any]:
        if self._loaded is None:
            try:
                import torch
                import transformers
            except ImportError as error:
                raise _missing("local", "transformers") from error
            device = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
            dtype = _torch_dtype(torch, self.engine_settings.dtype, device.startswith("cuda"))
            remote = self.engine_settings.trust_remote_code
            tokenizer = transformers.AutoTokenizer.from_pretrained(self.model_id, trust_remote_code=remote)
            # `torch_dtype` is the keyword both 4.51 and 5.x take (5.x also names it `dtype`)
            model: Any = transformers.AutoModelForCausalLM.from_pretrained(
                self.model_id, torch_dtype=dtype, trust_remote_code=remote
            )
            model = model.to(device)
            model.eval()
            torch.manual_seed(self.engine_settings.seed)
            self._loaded = (torch, tokenizer, model)
        return self._loaded

    def _eos_ids(self, tokenizer: Any, model: Any) -> set[int]:
        configured = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
        ids = set(configured if isinstance(configured, list) else [configured] if configured is not None else [])
        if tokenizer.eos_token_id is not None:
            ids.add(int(tokenizer.eos_token_id))
        return ids

    def _context(self, model: Any) -> int | None:
        """The configured context, else the model's own (``config.max_position_embeddings``)."""
        if self.max_model_len is not None:
            return self.max_model_len
        value = getattr(getattr(model, "config", None), "max_position_embeddings", None)
        return value if isinstance(value, int) and value > 0 else None

    def _generate_sync(self, request: ModelRequest) -> ModelResponse:
        torch, tokenizer, model = self._load()
        started = time.perf_counter()
        ids = prompt_token_ids(tokenizer, request)
        request = fit_tokens(request, ids, self._context(model), f"transformers model {self.model_id}")
        inputs = torch.tensor([ids], device=model.device)
        if request.seed is not None:
            torch.manual_seed(request.seed)
        with torch.no_grad():
            outputs = model.generate(
                input_ids=inputs,
                attention_mask=torch.ones_like(inputs),
                pad_token_id=tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id,
                **transformers_sampling(request),
            )
        rows = [sequence[len(ids) :].tolist() for sequence in outputs]
        ended = finish_reasons_from_tokens(rows, eos_ids=self._eos_ids(tokenizer, model), max_tokens=request.max_tokens)
        texts: list[str] = []
        finish: list[FinishReason] = []
        generated = 0
        for reason, tokens in ended:
            generated += len(tokens)
            decoded = tokenizer.decode(tokens, skip_special_tokens=True)
            for stop in request.stop or []:
                if stop in decoded:
                    decoded, reason = decoded.split(stop, 1)[0], "stop"
            texts.append(decoded)
            finish.append(reason)
        return ModelResponse(
            texts=texts,
            finish_reasons=finish,
            tokens_in=len(ids),
            tokens_out=generated,
            latency_s=time.perf_counter() - started,
            backend_id=self.backend_id,
            model_id=self.model_id,
        )

    async def generate(self, request: ModelRequest) -> ModelResponse:
        async with self._lock:
            try:
                return await asyncio.to_thread(self._generate_sync, request)
            except ModelCallError:
                raise
            except Exception as error:  # out of memory, a tokenizer or model that fails: this call failed, named
                raise ModelCallError(
                    f"transformers model {self.model_id}", f"{type(error).__name__}: {error}"
                ) from error
