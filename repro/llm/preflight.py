"""Check every model endpoint a run needs before the first problem is drawn.

Without this, a run whose endpoint is down or whose key is unset tries every problem, fails every
call and ends with "retained 0". One request per distinct endpoint (``GET {base_url}/models``,
with the key the stages will send) tells the user the cause in seconds, before anything is written.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable

import httpx
from pydantic import BaseModel

from repro.config import ConfigError, ModelBackendName, ModelSettings, RunConfig

PIPELINE_STAGES = ("rewrite", "screen", "formalize", "align", "prove", "extract", "classify")


class EndpointCheck(BaseModel):
    """The verdict on one endpoint, shared by every stage that reaches it."""

    base_url: str
    api_key_env: str | None
    stages: list[str]
    models: list[str]
    ok: bool
    detail: str

    def describe(self) -> str:
        used = ", ".join(f"{stage} ({model})" for stage, model in zip(self.stages, self.models, strict=True))
        return f"{self.base_url} [{used}]: {self.detail}"


class EndpointPreflightError(RuntimeError):
    """At least one endpoint the run needs cannot answer; the message lists each with its cause."""

    def __init__(self, failures: list[EndpointCheck]) -> None:
        lines = "\n  ".join(check.describe() for check in failures)
        super().__init__(
            f"model endpoint check failed; nothing was run:\n  {lines}\n"
            "Start the server or fix base_url / api_key_env in the config (`repro doctor --config FILE`)."
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
    return group_endpoints(used)


def group_endpoints(used: Iterable[tuple[str, ModelSettings]]) -> list[EndpointCheck]:
    """One check per distinct (base_url, key variable) among ``(user, settings)`` pairs; a user is a
    stage of a run, a prover of a study or a model of an evaluation."""
    grouped: dict[tuple[str, str | None], EndpointCheck] = {}
    for user, settings in used:
        if settings.backend != ModelBackendName.openai or not settings.base_url:
            continue
        key = (settings.base_url, settings.api_key_env)
        entry = grouped.setdefault(
            key,
            EndpointCheck(
                base_url=settings.base_url, api_key_env=settings.api_key_env, stages=[], models=[], ok=False, detail=""
            ),
        )
        entry.stages.append(user)
        entry.models.append(settings.model)
    return list(grouped.values())


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
    if status >= 500:
        return endpoint.model_copy(update={"ok": False, "detail": f"HTTP {status}: the server is failing"})
    # 404 on /models: some compatible servers do not list models; the server itself answered.
    return endpoint.model_copy(update={"ok": True, "detail": f"reachable (HTTP {status})"})


async def check_endpoints(config: RunConfig, *, timeout_s: float = 5.0) -> list[EndpointCheck]:
    """Probe every endpoint concurrently, so the whole check takes at most about ``timeout_s``."""
    return await probe(endpoints_of(config), timeout_s=timeout_s)


async def probe(endpoints: list[EndpointCheck], *, timeout_s: float = 5.0) -> list[EndpointCheck]:
    if not endpoints:
        return []
    async with httpx.AsyncClient(timeout=httpx.Timeout(timeout_s)) as client:
        return list(await asyncio.gather(*(_check_one(client, endpoint) for endpoint in endpoints)))


def preflight_endpoints(config: RunConfig, *, timeout_s: float = 5.0) -> list[EndpointCheck]:
    """Raise :class:`EndpointPreflightError` when an endpoint the run needs cannot answer."""
    return preflight_models(
        [(stage, settings) for stage in PIPELINE_STAGES for settings in _stage_settings(config, stage)],
        timeout_s=timeout_s,
    )


def _stage_settings(config: RunConfig, stage: str) -> list[ModelSettings]:
    try:
        return [config.model_for(stage)]
    except ConfigError:
        return []


def preflight_models(used: Iterable[tuple[str, ModelSettings]], *, timeout_s: float = 5.0) -> list[EndpointCheck]:
    """The same check for any set of models (``(user, settings)``): provers of a study, models of an
    evaluation, the repair model. Raises :class:`EndpointPreflightError` naming each failing endpoint."""
    return asyncio.run(preflight_models_async(used, timeout_s=timeout_s))


async def preflight_models_async(
    used: Iterable[tuple[str, ModelSettings]], *, timeout_s: float = 5.0
) -> list[EndpointCheck]:
    """:func:`preflight_models` from inside an event loop."""
    checks = await probe(group_endpoints(used), timeout_s=timeout_s)
    failures = [check for check in checks if not check.ok]
    if failures:
        raise EndpointPreflightError(failures)
    return checks
