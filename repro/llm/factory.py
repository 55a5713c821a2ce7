"""Build the backend a stage's settings name."""

from __future__ import annotations

from repro.config import CacheMode, ModelBackendName, ModelSettings
from repro.llm.client import ModelClient, ReplayBackend
from repro.llm.local_backends import TransformersBackend, VLLMBackend
from repro.llm.openai_backend import OpenAIBackend
from repro.llm.protocol import ModelBackend, ModelRequest
from repro.llm.scripted import ScriptedBackend, load_script
from repro.store import RunStore

_scripted_cache: dict[str, ScriptedBackend] = {}
# one in-process engine per (model, engine settings, context): two stages that name the same model share its
# GPUs through one engine instead of each loading it at gpu_memory_utilization 0.9 (the second would not fit)
_vllm_engines: dict[str, VLLMBackend] = {}


def build_backend(settings: ModelSettings) -> ModelBackend:
    if settings.backend == ModelBackendName.openai:
        if not settings.base_url:
            raise ValueError(f"model {settings.model}: the openai backend needs base_url")
        return OpenAIBackend(
            model_id=settings.model,
            base_url=settings.base_url,
            api_key_env=settings.api_key_env,
            max_concurrency=settings.max_concurrency,
            timeout_s=settings.timeout_s,
            max_retries=settings.max_retries,
            prompt_format=settings.prompt_format,
            min_tokens_per_s=settings.min_tokens_per_s,
            max_model_len=settings.max_model_len,
        )
    if settings.backend == ModelBackendName.vllm:
        key = f"{settings.model}|{settings.engine.model_dump_json()}|{settings.max_model_len}"
        if key not in _vllm_engines:
            _vllm_engines[key] = VLLMBackend(
                model_id=settings.model, engine=settings.engine, max_model_len=settings.max_model_len
            )
        return _vllm_engines[key]
    if settings.backend == ModelBackendName.transformers:
        return TransformersBackend(
            model_id=settings.model, engine=settings.engine, max_model_len=settings.max_model_len
        )
    if settings.backend == ModelBackendName.replay:
        return ReplayBackend(settings.model)
    if not settings.script:
        raise ValueError(f"model {settings.model}: the scripted backend needs 'script' (a file or module:function)")
    key = f"{settings.script}|{settings.model}"
    if key not in _scripted_cache:
        _scripted_cache[key] = ScriptedBackend(load_script(settings.script), model_id=settings.model)
    return _scripted_cache[key]


def build_client(
    stage: str,
    settings: ModelSettings,
    store: RunStore | None,
    cache_mode: CacheMode = CacheMode.read_write,
    backend: ModelBackend | None = None,
) -> ModelClient:
    return ModelClient(backend or build_backend(settings), store=store, stage=stage, cache_mode=cache_mode)


def request_from_settings(settings: ModelSettings, **fields: object) -> ModelRequest:
    """A request carrying every sampling parameter of the stage's settings, explicitly."""
    base: dict[str, object] = {
        "temperature": settings.temperature,
        "top_p": settings.top_p,
        "top_k": settings.top_k,
        "min_p": settings.min_p,
        "repetition_penalty": settings.repetition_penalty,
        "presence_penalty": settings.presence_penalty,
        "frequency_penalty": settings.frequency_penalty,
        "max_tokens": settings.max_tokens,
        "seed": settings.seed,
        "json_mode": settings.json_mode,
    }
    base.update(fields)
    return ModelRequest.model_validate(base)
