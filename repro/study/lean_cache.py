"""Lean results kept in the study store, so identical code is checked once across provers and resumes."""

from __future__ import annotations

from repro.lean import LeanResult, Verifier, lean_cache_key
from repro.lean.cached import lean_sequence_key
from repro.lean.protocol import InfraStatus
from repro.study.store import StudyStore


class StoredLeanResults:
    """A :class:`Verifier` that answers from the study store before asking ``inner``.

    ``inner`` should be a ``CachedVerifier`` (``repro.lean.build_verifier`` returns one), which shares
    concurrent checks of the same code; this layer makes the sharing survive a kill. Only
    infrastructure-clean results are kept: a crash or timeout is asked again next time.
    """

    def __init__(self, inner: Verifier, store: StudyStore) -> None:
        self.inner = inner
        self.store = store
        self.fresh_checks = 0
        self.stored_hits = 0

    @property
    def backend_id(self) -> str:
        return self.inner.backend_id

    @property
    def real_lean(self) -> bool:
        return self.inner.real_lean

    @property
    def toolchain(self) -> str | None:
        return self.inner.toolchain

    @property
    def mathlib_revision(self) -> str | None:
        return self.inner.mathlib_revision

    async def check(self, code: str, header: str) -> LeanResult:
        key = lean_cache_key(self.inner, code, header)
        stored = self.store.cached_lean_result(key)
        if stored is not None:
            self.stored_hits += 1
            return LeanResult.model_validate(stored).model_copy(update={"cached": True})
        result = await self.inner.check(code, header)
        if not result.cached:
            self.fresh_checks += 1
        if result.infra_status == InfraStatus.ok:
            self.store.cache_lean_result(key, result.model_copy(update={"cached": False}).model_dump(mode="json"))
        return result

    async def check_sequence(self, commands: list[str], header: str) -> list[LeanResult]:
        """A whole command sequence (the gate's target, proof, bridge, axioms) is stored as one entry."""
        key = lean_sequence_key(self.inner, commands, header)
        stored = self.store.cached_lean_result(key)
        if stored is not None and isinstance(stored.get("sequence"), list):
            self.stored_hits += 1
            return [LeanResult.model_validate(item).model_copy(update={"cached": True}) for item in stored["sequence"]]
        results = await self.inner.check_sequence(commands, header)
        if not any(result.cached for result in results):
            self.fresh_checks += 1
        if len(results) == len(commands) and all(result.infra_status == InfraStatus.ok for result in results):
            fresh = [result.model_copy(update={"cached": False}).model_dump(mode="json") for result in results]
            self.store.cache_lean_result(key, {"sequence": fresh})
        return results

    async def close(self) -> None:
        await self.inner.close()
