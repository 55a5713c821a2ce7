"""What stages call: a backend behind the response cache, with per-call accounting in the run store.

A request for n samples is answered sample by sample from the cache; only the missing samples go to
the backend, so a resumed or repeated run never pays twice for an answer that was stored.
"""

from __future__ import annotations

from typing import Any

from repro.config import CacheMode
from repro.llm.breaker import EndpointBreaker
from repro.llm.cache import cache_key
from repro.llm.protocol import ModelBackend, ModelCallError, ModelRequest, ModelResponse
from repro.records import ModelCallRecord
from repro.store import RunStore
from repro.waiting import waiting_on


def _contiguous_runs(positions: list[int]) -> list[list[int]]:
    runs: list[list[int]] = []
    for position in positions:
        if runs and runs[-1][-1] == position - 1:
            runs[-1].append(position)
        else:
            runs.append([position])
    return runs


def _combined(first: ModelResponse, second: ModelResponse) -> ModelResponse:
    """Accounting of two backend calls made for one request."""
    return first.model_copy(
        update={
            "tokens_in": first.tokens_in + second.tokens_in,
            "tokens_out": first.tokens_out + second.tokens_out,
            "latency_s": first.latency_s + second.latency_s,
            "retries": first.retries + second.retries,
        }
    )


class ReplayBackend:
    """Answers only from the cache; any miss fails loudly (reproducing an analysis must not call out)."""

    scripted = False

    def __init__(self, model_id: str) -> None:
        self.model_id = model_id
        self.backend_id = "replay"

    async def generate(self, request: ModelRequest) -> ModelResponse:
        raise ModelCallError(
            f"replay of {self.model_id}",
            "response not in the cache (replay mode never calls a model); run with the original backend",
        )


class ModelClient:
    def __init__(
        self,
        backend: ModelBackend,
        *,
        store: RunStore | None,
        stage: str,
        cache_mode: CacheMode = CacheMode.read_write,
        breaker: EndpointBreaker | None = None,
    ) -> None:
        self.backend = backend
        self.breaker = breaker
        self.store = store
        self.stage = stage
        self.cache_mode = CacheMode.read_only if isinstance(backend, ReplayBackend) else cache_mode
        if isinstance(backend, ReplayBackend) and store is None:
            raise ValueError("the replay backend needs a run store to read from")

    @property
    def model_id(self) -> str:
        return self.backend.model_id

    @property
    def backend_id(self) -> str:
        return self.backend.backend_id

    async def generate(self, request: ModelRequest) -> ModelResponse:
        indices = [request.sample_offset + i for i in range(request.n)]
        keys = [cache_key(self.backend.model_id, request, index) for index in indices]
        found: dict[int, dict[str, object]] = {}
        if self.store is not None and self.cache_mode != CacheMode.off:
            for position, key in enumerate(keys):
                hit = self.store.cached_response(key)
                if hit is not None:
                    found[position] = hit
        missing = [position for position in range(request.n) if position not in found]
        fresh: ModelResponse | None = None
        for run in _contiguous_runs(missing):
            response = await self._ask(request, run, keys)
            for slot, position in enumerate(run):
                found[position] = {
                    "text": response.texts[slot],
                    "finish_reason": response.finish_reasons[slot],
                    "backend_id": response.backend_id,
                    "scripted": response.scripted,
                }
            fresh = response if fresh is None else _combined(fresh, response)
        if len(missing) < request.n:
            self._account(keys[0], cache_hit=True, samples=request.n - len(missing))
        ordered = [found[position] for position in range(request.n)]
        return ModelResponse(
            texts=[str(entry["text"]) for entry in ordered],
            finish_reasons=[entry["finish_reason"] for entry in ordered],
            tokens_in=fresh.tokens_in if fresh else 0,
            tokens_out=fresh.tokens_out if fresh else 0,
            latency_s=fresh.latency_s if fresh else 0.0,
            backend_id=fresh.backend_id if fresh else str(ordered[0].get("backend_id", self.backend_id)),
            model_id=self.backend.model_id,
            scripted=any(bool(entry.get("scripted")) for entry in ordered),
            cache_hits=request.n - len(missing),
            retries=fresh.retries if fresh else 0,
        )

    async def _ask(self, request: ModelRequest, run: list[int], keys: list[str]) -> ModelResponse:
        """Ask the backend for the samples at positions ``run`` (contiguous), and store them.

        Sample i of a request with seed s is drawn with seed s+i (vLLM gives child i of an ``n``-sample
        request seed+i, vllm/v1/engine/parallel_sampling.py), so a re-ask of samples i..j carries seed
        s+i: it draws what the full request would have, never sample 0's seed again.
        """
        first = run[0]
        seed = None if request.seed is None else request.seed + first
        partial = request.model_copy(
            update={"n": len(run), "sample_offset": request.sample_offset + first, "seed": seed}
        )
        if self.breaker is not None:
            self.breaker.check(self.backend.backend_id)
        try:
            with waiting_on(f"request to {self.stage} model {self.backend.model_id} ({self.backend.backend_id})"):
                fresh = await self.backend.generate(partial)
        except ModelCallError as error:
            # a refusal of this request alone (its prompt does not fit the context) says nothing about the endpoint
            if self.breaker is not None and error.endpoint_fault:
                self.breaker.failure(self.backend.backend_id, error.cause)
            self._account(
                keys[first], cache_hit=False, samples=len(run), error=str(error), retries=max(error.attempts - 1, 0)
            )
            raise
        if self.breaker is not None:
            self.breaker.success(self.backend.backend_id)
        if self.store is not None:
            entries: dict[str, dict[str, object]] = {}
            for slot, position in enumerate(run):
                entries[keys[position]] = {
                    "text": fresh.texts[slot],
                    "finish_reason": fresh.finish_reasons[slot],
                    "backend_id": fresh.backend_id,
                    "scripted": fresh.scripted,
                }
            record = self._call_record(keys[first], cache_hit=False, samples=len(run), response=fresh)
            self.store.record_model_response(record, entries if self.cache_mode == CacheMode.read_write else {})
        return fresh

    def _call_record(
        self,
        key: str,
        *,
        cache_hit: bool,
        samples: int,
        response: ModelResponse | None = None,
        error: str | None = None,
        retries: int = 0,
    ) -> ModelCallRecord:
        return ModelCallRecord(
            stage=self.stage,
            model_id=self.backend.model_id,
            backend_id=self.backend.backend_id,
            cache_key=key,
            cache_hit=cache_hit,
            samples=samples,
            tokens_in=response.tokens_in if response else 0,
            tokens_out=response.tokens_out if response else 0,
            latency_s=response.latency_s if response else 0.0,
            retries=response.retries if response else retries,
            error=error,
        )

    def _account(self, key: str, **fields: Any) -> None:
        if self.store is not None:
            self.store.record_model_call(self._call_record(key, **fields))
