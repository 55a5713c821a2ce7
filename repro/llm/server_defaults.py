"""Which sampling values a served model would apply to a request that leaves them out, as far as can be known.

A vLLM server fills every sampling field a request omits with its own default, and since vLLM 0.8 that
default is the checkpoint's ``generation_config.json`` (``--generation-config auto``; vllm 0.8.5.post1
engine/arg_utils.py ``generation_config = "auto"``, 0.33.0 config/model.py ``get_diff_sampling_param`` over
repetition_penalty, presence_penalty, frequency_penalty, temperature, top_k, top_p, min_p, max_new_tokens;
``ChatCompletionRequest.to_sampling_params`` takes the request's value, else that default, else the OpenAI
API's). Qwen3's file sets ``top_k: 20``: a prover sampled through it is not sampled as its harness samples it.

What can be known from here, and what cannot:

* which fields a stage sends: all of them for a prover profile (neutral values included), only those the
  config sets otherwise (temperature and top_p always);
* the server's release, from vLLM's ``GET /version`` (a server without it is not vLLM, or older than 0.4);
* the checkpoint's ``generation_config.json``, only where its files are on this machine: the served model
  is a local path, or the Hugging Face cache holds it (read offline, nothing is downloaded);
* never from the server: whether it was started with ``--generation-config vllm`` (then nothing is filled
  from the checkpoint) or ``--override-generation-config``. No route reports its sampling defaults; its
  startup log says "Default vLLM sampling parameters have been overridden by the model's
  generation_config.json" when they were.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel

from repro.config import ModelSettings

# the fields vLLM fills from generation_config.json when a request leaves them out (max_tokens is always sent)
SERVER_FILLED = (
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "repetition_penalty",
    "presence_penalty",
    "frequency_penalty",
)


class SamplingExposure(BaseModel):
    """One stage's sampling against one served model: what it sends and what the server would fill in."""

    stage: str
    model: str
    base_url: str
    sent: dict[str, float | int]
    omitted: list[str]
    server_version: str | None = None
    checkpoint_values: dict[str, Any] | None = None  # from generation_config.json, where it could be read
    checkpoint_file: str | None = None

    @property
    def exposed(self) -> dict[str, Any]:
        """The omitted fields the checkpoint's file is known to set (what the server applies under ``auto``)."""
        values = self.checkpoint_values or {}
        return {name: values[name] for name in self.omitted if values.get(name) is not None}

    def describe(self) -> str:
        sent = ", ".join(f"{name}={value}" for name, value in self.sent.items())
        if not self.omitted:
            return f"sends {sent}: no sampling value is left to the server's defaults"
        left = ", ".join(self.omitted)
        where = (
            f"vLLM {self.server_version}" if self.server_version else "the server (no /version: not vLLM, or unknown)"
        )
        text = f"sends {sent}; leaves {left} to {where}"
        if self.checkpoint_values is None:
            return (
                text + ". From vLLM 0.8 a server started without --generation-config vllm fills them from the"
                " checkpoint's generation_config.json, which is not on this machine, so what it applies is"
                " unknown here (its startup log says 'Default vLLM sampling parameters have been overridden');"
                " set them in the config or name a prover profile to send them"
            )
        exposed = self.exposed
        if not exposed:
            return (
                text + f"; the checkpoint's {self.checkpoint_file} sets none of them, so vLLM's neutral defaults apply"
            )
        shown = ", ".join(f"{name}={value}" for name, value in exposed.items())
        return (
            text + f"; unless started with --generation-config vllm it applies {shown} from the checkpoint's"
            f" {self.checkpoint_file}: set them in the config (a prover profile sends the harness's values)"
        )


def sent_and_omitted(settings: ModelSettings) -> tuple[dict[str, float | int], list[str]]:
    sent: dict[str, float | int] = {}
    omitted: list[str] = []
    for name in SERVER_FILLED:
        value = getattr(settings, name)
        if value is None:
            omitted.append(name)
        else:
            sent[name] = value
    return sent, omitted


def local_generation_config(model: str) -> tuple[dict[str, Any], str] | None:
    """The checkpoint's ``generation_config.json`` and where it was read, when its files are on this machine."""
    candidates: list[Path] = []
    path = Path(model).expanduser()
    if path.is_dir():
        candidates.append(path / "generation_config.json")
    else:
        try:
            from huggingface_hub import try_to_load_from_cache

            cached = try_to_load_from_cache(model, "generation_config.json")
        except Exception:  # not a repo id, no hub client: nothing is known
            cached = None
        if isinstance(cached, str):
            candidates.append(Path(cached))
    for candidate in candidates:
        try:
            values = json.loads(candidate.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(values, dict):
            return values, str(candidate)
    return None


async def server_version(client: httpx.AsyncClient, base_url: str) -> str | None:
    """vLLM's release from ``GET /version`` at the server root (vllm 0.33.0 entrypoints/serve/instrumentator/
    basic.py; 0.8.5.post1 entrypoints/openai/api_server.py), or None."""
    from repro.llm.openai_backend import server_root

    try:
        response = await client.get(server_root(base_url) + "/version")
        version = response.json().get("version") if response.status_code == 200 else None
    except (httpx.HTTPError, ValueError, AttributeError):
        return None
    return version if isinstance(version, str) else None


async def sampling_exposures(
    used: list[tuple[str, ModelSettings]], *, timeout_s: float = 5.0
) -> list[SamplingExposure]:
    """For each (stage, settings) on an OpenAI-compatible endpoint: what it sends and what the server fills."""
    from repro.config import ModelBackendName

    remote = [(stage, settings) for stage, settings in used if settings.backend == ModelBackendName.openai]
    versions: dict[str, str | None] = {}
    async with httpx.AsyncClient(timeout=httpx.Timeout(timeout_s)) as client:
        for _, settings in remote:
            if settings.base_url and settings.base_url not in versions:
                versions[settings.base_url] = await server_version(client, settings.base_url)
    exposures = []
    for stage, settings in remote:
        sent, omitted = sent_and_omitted(settings)
        found = local_generation_config(settings.model) if omitted else None
        exposures.append(
            SamplingExposure(
                stage=stage,
                model=settings.model,
                base_url=settings.base_url or "",
                sent=sent,
                omitted=omitted,
                server_version=versions.get(settings.base_url or ""),
                checkpoint_values=found[0] if found else None,
                checkpoint_file=found[1] if found else None,
            )
        )
    return exposures


_CACHE_INFO = re.compile(r"^vllm:cache_config_info\{(?P<labels>[^}]*)\}", re.MULTILINE)
_LABEL = re.compile(r'(\w+)="([^"]*)"')


async def kv_cache_tokens(client: httpx.AsyncClient, base_url: str) -> int | None:
    """How many tokens the server's KV cache holds, from vLLM's ``GET /metrics`` gauge
    ``vllm:cache_config_info{block_size=..., num_gpu_blocks=...}`` (vllm 0.33.0 v1/metrics/loggers.py;
    0.8.5.post1 v1/metrics/loggers.py), or None where the server does not say."""
    from repro.llm.openai_backend import server_root

    try:
        response = await client.get(server_root(base_url) + "/metrics")
    except httpx.HTTPError:
        return None
    if response.status_code != 200:
        return None
    found = _CACHE_INFO.search(response.text)
    if found is None:
        return None
    labels = dict(_LABEL.findall(found.group("labels")))
    try:
        blocks, size = int(labels["num_gpu_blocks"]), int(labels["block_size"])
    except (KeyError, ValueError):
        return None
    return blocks * size if blocks > 0 and size > 0 else None


def requests_that_fit(kv_tokens: int, samples_per_request: int, tokens_per_sequence: int) -> int:
    """Requests of ``samples_per_request`` sequences, each up to ``tokens_per_sequence`` long, that the KV cache
    holds at once: with no more in flight, none waits in vLLM's queue and none is preempted, so a request's
    timeout (sized for its own decoding) is never spent waiting behind others."""
    return max(1, kv_tokens // max(1, samples_per_request * tokens_per_sequence))
