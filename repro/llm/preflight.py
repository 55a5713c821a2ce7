"""Check every model endpoint a run needs before the first problem is drawn.

Without this, a run whose endpoint is down or whose key is unset tries every problem, fails every
call and ends with "retained 0". One request per distinct endpoint (``GET {base_url}/models``,
with the key the stages will send) tells the user the cause in seconds, before anything is written.

The same answer says what the server serves. ``vllm serve /models/goedel-32b`` serves the model under
its path (unless ``--served-model-name``), so a config naming the Hugging Face id gets a 404 on every
call; and vLLM refuses (400) every request whose prompt plus ``max_tokens`` exceeds the
``max_model_len`` it lists per model (vllm/entrypoints/openai/protocol.py, ``ModelCard``). Both are
checked here, with the fix named. A server that answers completions but has no ``/models`` route
(404, 405, 501) is reachable: the name and context are then not checked, and the report says so.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable

import httpx
from pydantic import BaseModel

from repro.config import ConfigError, ModelBackendName, ModelSettings, RunConfig
from repro.exit_codes import ExitCode, ReproError

PIPELINE_STAGES = ("rewrite", "screen", "formalize", "align", "prove", "extract", "classify")


# the least prompt a stage sends, in tokens: a stage whose max_tokens leaves less room than this fails on
# every call (the prompts in prompts/ are longer than this even before the problem is filled in)
MIN_PROMPT_TOKENS = 256
# routes a compatible server may lack: it answered, it just does not list models
_NO_LISTING = (404, 405, 501)


class EndpointCheck(BaseModel):
    """The verdict on one endpoint, shared by every stage that reaches it."""

    base_url: str
    api_key_env: str | None
    stages: list[str]
    models: list[str]
    ok: bool
    detail: str
    # what the endpoint said it serves: model id -> its max_model_len (None when not reported)
    served: dict[str, int | None] = {}
    max_tokens: list[int] = []
    max_model_lens: list[int | None] = []

    def describe(self) -> str:
        used = ", ".join(f"{stage} ({model})" for stage, model in zip(self.stages, self.models, strict=True))
        return f"{self.base_url} [{used}]: {self.detail}"


class EndpointPreflightError(ReproError, RuntimeError):
    """At least one endpoint the run needs cannot answer; the message lists each with its cause."""

    exit_code = ExitCode.unfinished

    def __init__(self, failures: list[EndpointCheck], *, run: bool = False) -> None:
        lines = "\n  ".join(check.describe() for check in failures)
        # a run checks its Lean backend and kernel judge only after this: say so, or a user who fixes the
        # endpoints meets the next missing piece only then (trial n17)
        then = (
            " The Lean backend and the kernel judge are checked only after the endpoints answer: `repro doctor"
            " --config FILE` checks all of them at once."
            if run
            else " (`repro doctor --config FILE`)."
        )
        super().__init__(
            f"model endpoint check failed; nothing was run:\n  {lines}\n"
            f"Start the server or fix base_url / api_key_env in the config{'.' if run else ''}{then}"
        )
        self.failures = failures


def endpoints_of(config: RunConfig, stages: Iterable[str] = PIPELINE_STAGES) -> list[EndpointCheck]:
    """The distinct (base_url, key variable) pairs that the OpenAI-compatible stages use."""
    used: list[tuple[str, ModelSettings]] = []
    for stage in stages:
        try:
            used.append((stage, config.model_for(stage)))
        except ConfigError:
            continue
    return endpoints_for(used)


def endpoints_for(used: Iterable[tuple[str, ModelSettings]]) -> list[EndpointCheck]:
    """The distinct endpoints of (label, settings) pairs: a run's stages or a study's provers."""
    grouped: dict[tuple[str, str | None], EndpointCheck] = {}
    for stage, settings in used:
        if settings.backend != ModelBackendName.openai or not settings.base_url:
            continue
        key = (settings.base_url, settings.api_key_env)
        entry = grouped.setdefault(
            key,
            EndpointCheck(
                base_url=settings.base_url, api_key_env=settings.api_key_env, stages=[], models=[], ok=False, detail=""
            ),
        )
        entry.stages.append(stage)
        entry.models.append(settings.model)
        entry.max_tokens.append(settings.max_tokens)
        entry.max_model_lens.append(settings.max_model_len)
    return list(grouped.values())


def _suggest(model: str, served: list[str]) -> str:
    tail = model.rstrip("/").rsplit("/", 1)[-1].lower()
    ranked = sorted(served, key=lambda name: (tail not in name.lower(), name))
    return ranked[0]


def _served_models(body: object) -> dict[str, int | None] | None:
    """``{id: max_model_len}`` from a ``/models`` body, or None when the body is not a model list."""
    if not isinstance(body, dict) or not isinstance(body.get("data"), list):
        return None
    served: dict[str, int | None] = {}
    for card in body["data"]:
        if isinstance(card, dict) and isinstance(card.get("id"), str):
            length = card.get("max_model_len")
            served[card["id"]] = length if isinstance(length, int) and length > 0 else None
    return served


def _model_problems(endpoint: EndpointCheck, served: dict[str, int | None]) -> list[str]:
    """Each stage whose model the endpoint does not serve, or whose request cannot fit its context."""
    problems: list[str] = []
    names = list(served)
    for stage, model, max_tokens, configured_len in zip(
        endpoint.stages, endpoint.models, endpoint.max_tokens, endpoint.max_model_lens, strict=True
    ):
        where = f"models.{stage}" if stage in PIPELINE_STAGES else f"the settings of {stage}"
        if model not in served:
            shown = ", ".join(names[:5]) + (" ..." if len(names) > 5 else "")
            problems.append(
                f"{stage}: model {model!r} is not served here (served: {shown}); every call would be a 404."
                f" Set model: {_suggest(model, names)!r} in {where} (or start vLLM with"
                f" --served-model-name {model})"
            )
            continue
        served_len = served[model]
        if served_len is None:
            continue
        if configured_len is not None and configured_len > served_len:
            problems.append(
                f"{stage}: max_model_len is {configured_len} in {where} but the server serves {model} with"
                f" max_model_len {served_len}; set max_model_len: {served_len} (or restart vLLM with"
                f" --max-model-len {configured_len})"
            )
        elif configured_len is None and max_tokens + MIN_PROMPT_TOKENS > served_len:
            problems.append(
                f"{stage}: max_tokens {max_tokens} plus a prompt does not fit the server's max_model_len"
                f" {served_len} for {model}; every call would be a 400. Set max_model_len: {served_len} in"
                f" {where} (repro then lowers max_tokens to fit each prompt) or lower max_tokens"
            )
    return problems


def _key_note(api_key_env: str | None) -> str:
    if api_key_env and not os.environ.get(api_key_env):
        return f"; also, the environment variable {api_key_env} is not set"
    return ""


async def _check_one(client: httpx.AsyncClient, endpoint: EndpointCheck) -> EndpointCheck:
    headers = {}
    key = os.environ.get(endpoint.api_key_env, "") if endpoint.api_key_env else ""
    if key:
        headers["Authorization"] = f"Bearer {key}"
    url = endpoint.base_url.rstrip("/") + "/models"
    try:
        response = await client.get(url, headers=headers)
    except httpx.TimeoutException:
        return endpoint.model_copy(
            update={"ok": False, "detail": "unreachable (no answer in time)" + _key_note(endpoint.api_key_env)}
        )
    except httpx.HTTPError as error:
        cause = str(error) or type(error).__name__
        return endpoint.model_copy(
            update={"ok": False, "detail": f"unreachable ({cause[:160]})" + _key_note(endpoint.api_key_env)}
        )
    status = response.status_code
    if status in (401, 403):
        if endpoint.api_key_env and not key:
            detail = f"HTTP {status}: the environment variable {endpoint.api_key_env} is not set"
        elif endpoint.api_key_env:
            detail = f"HTTP {status}: the key in {endpoint.api_key_env} was refused"
        else:
            detail = f"HTTP {status}: the endpoint wants a key; set api_key_env in the config"
        return endpoint.model_copy(update={"ok": False, "detail": detail})
    if status in _NO_LISTING:
        return endpoint.model_copy(
            update={
                "ok": True,
                "detail": f"reachable; it does not list models (HTTP {status}), so the model name and context"
                " length were not checked",
            }
        )
    if status >= 500:
        return endpoint.model_copy(update={"ok": False, "detail": f"HTTP {status}: the server is failing"})
    try:
        served = _served_models(response.json()) if status < 300 else None
    except ValueError:
        served = None
    if served is None:
        return endpoint.model_copy(update={"ok": True, "detail": f"reachable (HTTP {status}); no model list"})
    problems = _model_problems(endpoint, served)
    if problems:
        return endpoint.model_copy(update={"ok": False, "detail": "; ".join(problems), "served": served})
    return endpoint.model_copy(
        update={"ok": True, "detail": f"reachable, serves {', '.join(served)}", "served": served}
    )


async def check_endpoints(
    config: RunConfig | None = None,
    *,
    timeout_s: float = 5.0,
    endpoints: list[EndpointCheck] | None = None,
) -> list[EndpointCheck]:
    """Probe every endpoint concurrently, so the whole check takes at most about ``timeout_s``."""
    if endpoints is None:
        endpoints = endpoints_of(config) if config is not None else []
    if not endpoints:
        return []
    async with httpx.AsyncClient(timeout=httpx.Timeout(timeout_s)) as client:
        return list(await asyncio.gather(*(_check_one(client, endpoint) for endpoint in endpoints)))


def preflight_endpoints(config: RunConfig, *, timeout_s: float = 5.0) -> list[EndpointCheck]:
    """Raise :class:`EndpointPreflightError` when an endpoint the run needs cannot answer."""
    checks = asyncio.run(check_endpoints(config, timeout_s=timeout_s))
    failures = [check for check in checks if not check.ok]
    if failures:
        raise EndpointPreflightError(failures, run=True)
    return checks


def preflight_models(used: Iterable[tuple[str, ModelSettings]], *, timeout_s: float = 5.0) -> list[EndpointCheck]:
    """The same check for any set of models (``(user, settings)``): the provers of a study, the models
    of an evaluation, the repair model. Raises :class:`EndpointPreflightError` naming each failing one."""
    return asyncio.run(preflight_models_async(used, timeout_s=timeout_s))


async def preflight_models_async(
    used: Iterable[tuple[str, ModelSettings]], *, timeout_s: float = 5.0
) -> list[EndpointCheck]:
    """:func:`preflight_models` from inside an event loop."""
    checks = await check_endpoints(timeout_s=timeout_s, endpoints=endpoints_for(used))
    failures = [check for check in checks if not check.ok]
    if failures:
        raise EndpointPreflightError(failures)
    return checks
