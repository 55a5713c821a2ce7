"""Check identical code once: a result cache keyed by toolchain, Mathlib, header and code.

Concurrent checks of the same code share one in-flight check. Only infrastructure-clean results are
cached; a crash or timeout is retried next time rather than remembered. The in-memory layer keeps
the most recently used results only (the run store keeps them all), so memory stays flat over a
long run.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict

from repro.lean.protocol import InfraStatus, LeanResult, Verifier
from repro.store import RunStore


def lean_cache_key(verifier: Verifier, code: str, header: str) -> str:
    identity = "\x00".join(
        [
            verifier.backend_id.split(":")[0],
            str(verifier.real_lean),
            verifier.toolchain or "",
            verifier.mathlib_revision or "",
            header,
            code,
        ]
    )
    return hashlib.sha256(identity.encode("utf-8")).hexdigest()


class CachedVerifier:
    def __init__(self, inner: Verifier, store: RunStore | None = None, *, memory_entries: int = 4096) -> None:
        self.inner = inner
        self.store = store
        self._memory: OrderedDict[str, LeanResult] = OrderedDict()
        self._memory_entries = memory_entries
        self._in_flight: dict[str, asyncio.Future[LeanResult]] = {}
        self.hits = 0
        self.misses = 0

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
        if key in self._memory:
            self.hits += 1
            self._memory.move_to_end(key)
            return self._memory[key].model_copy(update={"cached": True})
        if self.store is not None:
            stored = self.store.cached_lean_result(key)
            if stored is not None:
                self.hits += 1
                result = LeanResult.model_validate(stored)
                self._remember(key, result)
                return result.model_copy(update={"cached": True})
        if key in self._in_flight:
            self.hits += 1
            shared = await asyncio.shield(self._in_flight[key])
            return shared.model_copy(update={"cached": True})
        self.misses += 1
        future: asyncio.Future[LeanResult] = asyncio.get_running_loop().create_future()
        self._in_flight[key] = future
        try:
            result = await self.inner.check(code, header)
            if result.infra_status == InfraStatus.ok:
                self._remember(key, result)
                if self.store is not None:
                    self.store.cache_lean_result(key, result.model_dump(mode="json"))
            future.set_result(result)
            return result
        except BaseException as error:
            future.set_exception(error)
            raise
        finally:
            self._in_flight.pop(key, None)
            if future.done() and not future.cancelled():
                future.exception()  # mark retrieved

    def _remember(self, key: str, result: LeanResult) -> None:
        self._memory[key] = result
        if len(self._memory) > self._memory_entries:
            self._memory.popitem(last=False)

    async def close(self) -> None:
        await self.inner.close()
