"""Judge identical code once: verdicts kept by :meth:`JudgeRequest.cache_key`, shared while in flight.

The key is (tool, tool revision, toolchain, trusted header, our statement, theorem name, submission), so a
verdict is reused only for the same text judged by the same tool at the same pin. Only a verdict (passed
or rejected) is kept; ``unavailable`` is no verdict and is asked again next time, as :mod:`repro.lean.cached`
does for a Lean check that timed out. Concurrent requests for one key share one judgement (k identical
prover samples, or the same proof reached by two levers, are judged once).
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from typing import Any, Protocol

from repro.judge.kernel import JUDGE_CHECKS, toolchain_key
from repro.judge.verdict import Judge, JudgeRequest, JudgeStatus, JudgeVerdict
from repro.waiting import waiting_on

CACHED_STATUSES = frozenset({JudgeStatus.passed, JudgeStatus.rejected})


class JudgeVerdictStore(Protocol):
    """Where verdicts outlive the process: the run store, or a study's store."""

    def cached_judge_verdict(self, cache_key: str) -> dict[str, Any] | None: ...

    def cache_judge_verdict(self, cache_key: str, verdict: dict[str, Any]) -> None: ...


def judge_cache_key(judge: Judge, request: JudgeRequest) -> str:
    toolchain = toolchain_key(request.toolchain)
    return request.cache_key(judge_identity(judge, toolchain), judge.revision(toolchain), toolchain)


def judge_identity(judge: Judge, toolchain: str) -> str:
    """The tool that judges ``toolchain``, whether it is real, the confinement the operator named and the
    version of our own checks: a stand-in's verdict never answers for a real judge's, one obtained
    unconfined never for a confined judge's, one of an older, weaker judge never for this one's."""
    dispatch = getattr(judge, "judge_for", None)  # ByToolchainJudge: the tool this toolchain goes to
    chosen = dispatch(toolchain) if callable(dispatch) else judge
    confined = getattr(chosen, "confined", None)
    named = getattr(confined, "named", "?")
    return f"{chosen.name}:{'real' if chosen.real else 'stand-in'}:sandbox={named}:checks={JUDGE_CHECKS}"


class CachedJudge:
    """A :class:`~repro.judge.verdict.Judge` in front of another, with a memory and a lasting layer."""

    def __init__(self, inner: Judge, store: JudgeVerdictStore | None = None, *, memory_entries: int = 4096) -> None:
        self.inner = inner
        self.store = store
        self._memory: OrderedDict[str, JudgeVerdict] = OrderedDict()
        self._memory_entries = memory_entries
        self._in_flight: dict[str, asyncio.Future[JudgeVerdict]] = {}
        self.hits = 0
        self.misses = 0

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def real(self) -> bool:
        return self.inner.real

    def revision(self, toolchain: str) -> str | None:
        return self.inner.revision(toolchain)

    def __getattr__(self, attribute: str) -> Any:  # problem(), confinement, sandbox of the judge inside
        return getattr(self.inner, attribute)

    def _answer(self, verdict: JudgeVerdict, request: JudgeRequest) -> JudgeVerdict:
        # a kept verdict says exactly what the judge said when it gave it, checks version included: a judge
        # that records none (a stand-in) reads back as it answered fresh, so a resumed run stores what an
        # uninterrupted one does (the key holds today's checks version, so no older judge's verdict is kept)
        return verdict.model_copy(update={"key": request.key, "cached": True})

    async def judge(self, request: JudgeRequest) -> JudgeVerdict:
        key = judge_cache_key(self.inner, request)
        if key in self._memory:
            self.hits += 1
            self._memory.move_to_end(key)
            return self._answer(self._memory[key], request)
        if self.store is not None:
            stored = self.store.cached_judge_verdict(key)
            if stored is not None:
                verdict = JudgeVerdict.model_validate(stored)
                if verdict.status in CACHED_STATUSES:
                    self.hits += 1
                    self._remember(key, verdict)
                    return self._answer(verdict, request)
        if key in self._in_flight:
            self.hits += 1
            return self._answer(await asyncio.shield(self._in_flight[key]), request)
        self.misses += 1
        future: asyncio.Future[JudgeVerdict] = asyncio.get_running_loop().create_future()
        self._in_flight[key] = future
        try:
            with waiting_on(f"judgement by {self.inner.name}", named=True):
                verdict = await self.inner.judge(request)
            if verdict.status in CACHED_STATUSES:
                self._remember(key, verdict)
                if self.store is not None:
                    self.store.cache_judge_verdict(key, verdict.model_dump(mode="json"))
            future.set_result(verdict)
            return verdict
        except BaseException as error:
            future.set_exception(error)
            raise
        finally:
            self._in_flight.pop(key, None)
            if future.done() and not future.cancelled():
                future.exception()  # mark retrieved

    def _remember(self, key: str, verdict: JudgeVerdict) -> None:
        self._memory[key] = verdict
        if len(self._memory) > self._memory_entries:
            self._memory.popitem(last=False)
