"""Build the verifier a run's Lean settings name, wrapped in the result cache."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from repro.config import LeanBackendName, LeanSettings
from repro.lean.cached import CachedVerifier
from repro.lean.fleet import KiminaFleet, split_urls
from repro.lean.kimina import KiminaVerifier
from repro.lean.project import SetupError, toolchain_mismatch
from repro.lean.protocol import Verifier
from repro.lean.recorded import recorded_verifier
from repro.lean.repl_pool import ReplPoolVerifier
from repro.lean.sandbox import SandboxUnavailable, WorkerSandbox, confinement
from repro.lean.toolchains import get_toolchain
from repro.store import RunStore


def load_factory(spec: str, setting: str = "lean.factory") -> Any:
    """``package.module:function`` -> the function (``lean.factory``)."""
    module_name, _, attribute = spec.partition(":")
    try:
        return getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as error:
        raise ValueError(f"{setting}: cannot load {spec!r}: {error}") from None


def factory_verifier(settings: LeanSettings) -> Verifier:
    """``lean.backend: factory``: the verifier ``lean.factory`` builds from these settings (a test's stand-in).

    It must say it is not real Lean: a stand-in that claimed ``real_lean`` would make its passes verified.
    """
    assert settings.factory is not None  # LeanSettings validates it
    built = load_factory(settings.factory)(settings, **settings.factory_options)
    if not isinstance(built, Verifier):
        raise ValueError(f"lean.factory: {settings.factory} returned {type(built).__name__}, not a Verifier")
    if built.real_lean:
        raise ValueError(f"lean.factory: {settings.factory} built a verifier claiming real Lean; a stand-in never is")
    return built


def build_verifier(settings: LeanSettings, store: RunStore | None = None) -> CachedVerifier:
    """The configured backend; the toolchain it reports (and the cache key) is ``lean.toolchain``'s.

    A local project whose ``lean-toolchain`` names another Lean is refused here, before any check.
    """
    toolchain = get_toolchain(settings.toolchain)
    mathlib_revision = settings.resolved_mathlib_revision()
    inner: object
    if settings.backend == LeanBackendName.recorded:
        inner = recorded_verifier(settings.recording, toolchain=toolchain.elan_toolchain)
    elif settings.backend == LeanBackendName.factory:
        inner = factory_verifier(settings)
    elif settings.backend == LeanBackendName.kimina:
        servers = [
            KiminaVerifier(
                url=url,
                timeout_s=settings.timeout_s,
                api_key_env=settings.kimina_api_key_env,
                toolchain=toolchain.elan_toolchain,
                mathlib_revision=mathlib_revision,
                max_in_flight=settings.workers,
                server_max_wait_s=settings.kimina_max_wait_s,
            )
            for url in split_urls(settings.kimina_url)
        ]
        # several servers: lean.workers is each server's concurrency
        inner = servers[0] if len(servers) == 1 else KiminaFleet(servers, per_server=settings.workers)
    else:
        project = Path(settings.project_dir())
        mismatch = toolchain_mismatch(project, toolchain)
        if mismatch:
            raise SetupError(mismatch)
        try:
            sandbox: WorkerSandbox | SandboxUnavailable = WorkerSandbox(confinement(settings.sandbox))
        except SandboxUnavailable as refusal:
            sandbox = refusal
        inner = ReplPoolVerifier(
            workers=settings.workers,
            timeout_s=settings.timeout_s,
            recycle_after=settings.recycle_after,
            project_path=str(project),
            memory_limit_mb=settings.memory_limit_mb,
            toolchain=toolchain.elan_toolchain,
            mathlib_revision=mathlib_revision,
            lean_toolchain=toolchain,
            sandbox=sandbox if isinstance(sandbox, WorkerSandbox) else None,
            refused=str(sandbox) if isinstance(sandbox, SandboxUnavailable) else None,
        )
    return CachedVerifier(inner, store)
