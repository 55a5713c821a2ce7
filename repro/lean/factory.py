"""Build the verifier a run's Lean settings name, wrapped in the result cache."""

from __future__ import annotations

from pathlib import Path

from repro.config import LeanBackendName, LeanSettings
from repro.lean.cached import CachedVerifier
from repro.lean.fake_backend import fake_repl_verifier
from repro.lean.fleet import KiminaFleet, split_urls
from repro.lean.kimina import KiminaVerifier
from repro.lean.project import project_toolchain
from repro.lean.repl_pool import ReplPoolVerifier
from repro.store import RunStore


def build_verifier(settings: LeanSettings, store: RunStore | None = None) -> CachedVerifier:
    if settings.backend == LeanBackendName.fake:
        inner: object = fake_repl_verifier(
            settings.fake_rules,
            workers=settings.workers,
            timeout_s=settings.timeout_s,
            recycle_after=settings.recycle_after,
        )
    elif settings.backend == LeanBackendName.kimina:
        servers = [
            KiminaVerifier(
                url=url,
                timeout_s=settings.timeout_s,
                api_key_env=settings.kimina_api_key_env,
                toolchain=project_toolchain(Path(settings.project_path)),
                mathlib_revision=settings.mathlib_revision,
            )
            for url in split_urls(settings.kimina_url)
        ]
        # several servers: lean.workers is each server's concurrency
        inner = servers[0] if len(servers) == 1 else KiminaFleet(servers, per_server=settings.workers)
    else:
        inner = ReplPoolVerifier(
            workers=settings.workers,
            timeout_s=settings.timeout_s,
            recycle_after=settings.recycle_after,
            project_path=settings.project_path,
            memory_limit_mb=settings.memory_limit_mb,
            toolchain=project_toolchain(Path(settings.project_path)),
            mathlib_revision=settings.mathlib_revision,
        )
    return CachedVerifier(inner, store)  # type: ignore[arg-type]
