"""Check identical code once: a result cache keyed by toolchain, Mathlib, header and code.

A single check and a whole command sequence (the gate's target, proof, bridge and axiom commands) go
through one path: concurrent requests for the same key share one in-flight check (k identical prover
samples are checked once), only infrastructure-clean results are cached (a crash or timeout is asked
again next time), and the in-memory layer keeps the most recently used results only (the run store
keeps them all), so memory stays flat over a long run.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from repro.lean.protocol import InfraStatus, LeanResult, Verifier
from repro.waiting import waiting_on


class LeanResultStore(Protocol):
    """Where results outlive the process: the run store, or a study's store."""

    def cached_lean_result(self, code_hash: str) -> dict[str, Any] | None: ...

    def cache_lean_result(self, code_hash: str, result: dict[str, Any]) -> None: ...


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


def lean_sequence_key(verifier: Verifier, commands: list[str], header: str) -> str:
    """Key of a whole command sequence; separators no Lean source contains keep sequences distinct."""
    return lean_cache_key(verifier, "\x00sequence\x00" + "\x00command\x00".join(commands), header)


def encode_results(results: list[LeanResult], single: bool) -> dict[str, Any]:
    """What the store (and a recording, :mod:`repro.lean.recorded`) keeps for one key."""
    if single:
        return results[0].model_dump(mode="json")
    return {"sequence": [result.model_dump(mode="json") for result in results]}


def decode_results(stored: dict[str, Any], single: bool) -> list[LeanResult] | None:
    if single:
        return None if "sequence" in stored else [LeanResult.model_validate(stored)]
    sequence = stored.get("sequence")
    return [LeanResult.model_validate(item) for item in sequence] if isinstance(sequence, list) else None


class CachedVerifier:
    def __init__(self, inner: Verifier, store: LeanResultStore | None = None, *, memory_entries: int = 4096) -> None:
        self.inner = inner
        self.store = store
        self._memory: OrderedDict[str, list[LeanResult]] = OrderedDict()
        self._memory_entries = memory_entries
        self._in_flight: dict[str, asyncio.Future[list[LeanResult]]] = {}
        self.hits = 0
        self.misses = 0
        self._prepared = False

    async def _prepare(self, header: str) -> None:
        """Let a backend that learns its identity from its server (Kimina) do so before the first key.

        A refusal is not raised here: the backend answers every check with it, as ``unavailable``.
        """
        if self._prepared:
            return
        prepare = getattr(self.inner, "prepare", None)
        if prepare is not None:
            with contextlib.suppress(Exception):  # a refusal is repeated by every check
                await prepare(header)
        self._prepared = True

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
        await self._prepare(header)
        key = lean_cache_key(self.inner, code, header)

        async def compute() -> list[LeanResult]:
            return [await self.inner.check(code, header)]

        return (await self._shared(key, compute, single=True, expected=1))[0]

    async def check_sequence(self, commands: list[str], header: str) -> list[LeanResult]:
        """A sequence is cached as a whole, and only when every command's infrastructure answered."""
        await self._prepare(header)
        key = lean_sequence_key(self.inner, commands, header)
        return await self._shared(
            key, lambda: self.inner.check_sequence(commands, header), single=False, expected=len(commands)
        )

    async def _shared(
        self, key: str, compute: Callable[[], Awaitable[list[LeanResult]]], *, single: bool, expected: int
    ) -> list[LeanResult]:
        if key in self._memory:
            self.hits += 1
            self._memory.move_to_end(key)
            return [result.model_copy(update={"cached": True}) for result in self._memory[key]]
        if self.store is not None:
            stored = self.store.cached_lean_result(key)
            decoded = decode_results(stored, single) if stored is not None else None
            if decoded is not None:
                self.hits += 1
                self._remember(key, decoded)
                return [result.model_copy(update={"cached": True}) for result in decoded]
        if key in self._in_flight:
            self.hits += 1
            shared = await asyncio.shield(self._in_flight[key])
            return [result.model_copy(update={"cached": True}) for result in shared]
        self.misses += 1
        future: asyncio.Future[list[LeanResult]] = asyncio.get_running_loop().create_future()
        self._in_flight[key] = future
        try:
            # every check that reaches the backend goes through here: the heartbeat names it
            with waiting_on(f"check by Lean ({self.inner.backend_id})", named=True):
                results = await compute()
            if len(results) == expected and all(result.infra_status == InfraStatus.ok for result in results):
                self._remember(key, results)
                if self.store is not None:
                    self.store.cache_lean_result(key, encode_results(results, single))
            future.set_result(results)
            return results
        except BaseException as error:
            future.set_exception(error)
            raise
        finally:
            self._in_flight.pop(key, None)
            if future.done() and not future.cancelled():
                future.exception()  # mark retrieved

    def _remember(self, key: str, results: list[LeanResult]) -> None:
        self._memory[key] = results
        if len(self._memory) > self._memory_entries:
            self._memory.popitem(last=False)

    async def close(self) -> None:
        await self.inner.close()
