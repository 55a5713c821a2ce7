"""Client for a Kimina Lean Server, for verification that scales past one machine.

``POST /api/check`` with ``{"snippets": [{"id", "code"}], "timeout": T}``; each result carries
``response`` (the raw REPL JSON) or ``error``. The verdict rules are the local pool's: this backend
only turns replies into :class:`LeanResult`.
"""

from __future__ import annotations

import os
import time
import uuid
from typing import Any

import httpx

from repro.lean.protocol import InfraStatus, LeanResult, infrastructure_failure, result_from_repl_json


class KiminaVerifier:
    def __init__(
        self,
        *,
        url: str,
        timeout_s: float = 120.0,
        api_key_env: str | None = None,
        toolchain: str | None = None,
        mathlib_revision: str | None = None,
    ) -> None:
        self.url = url.rstrip("/")
        self.timeout_s = timeout_s
        self.backend_id = f"kimina:{self.url}"
        self.real_lean = True
        self.toolchain = toolchain
        self.mathlib_revision = mathlib_revision
        headers = {}
        api_key = os.environ.get(api_key_env, "") if api_key_env else ""
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._client = httpx.AsyncClient(timeout=timeout_s + 30, headers=headers)

    def _result(self, status: InfraStatus, started: float, detail: str) -> LeanResult:
        return infrastructure_failure(self, status, detail, elapsed_s=time.perf_counter() - started)

    async def check(self, code: str, header: str) -> LeanResult:
        snippet_id = uuid.uuid4().hex
        full = f"{header.rstrip()}\n\n{code}" if header.strip() else code
        payload = {"snippets": [{"id": snippet_id, "code": full}], "timeout": self.timeout_s}
        started = time.perf_counter()
        try:
            response = await self._client.post(f"{self.url}/api/check", json=payload)
        except httpx.TimeoutException:
            return self._result(InfraStatus.timeout, started, f"{self.url}: HTTP request timed out")
        except httpx.HTTPError as error:
            return self._result(InfraStatus.unavailable, started, f"{self.url}: {type(error).__name__}: {error}")
        if response.status_code != 200:
            return self._result(InfraStatus.unavailable, started, f"{self.url}: HTTP {response.status_code}")
        try:
            body: Any = response.json()
            results = body["results"] if isinstance(body, dict) else body
            item = next(r for r in results if r.get("id") == snippet_id) if len(results) > 1 else results[0]
        except (ValueError, KeyError, IndexError, StopIteration, TypeError, AttributeError):
            return self._result(InfraStatus.crash, started, f"{self.url}: unreadable reply {response.text[:200]!r}")
        failure = item.get("error")
        if failure:
            lowered = str(failure).lower()
            status = (
                InfraStatus.timeout
                if "timeout" in lowered or "timed out" in lowered
                else InfraStatus.out_of_memory
                if "memory" in lowered
                else InfraStatus.crash
            )
            return self._result(status, started, str(failure)[:500])
        reply = item.get("response") or {}
        header_lines = full.count("\n") - code.count("\n")
        return result_from_repl_json(
            reply,
            backend_id=self.backend_id,
            real_lean=self.real_lean,
            elapsed_s=float(item.get("time") or time.perf_counter() - started),
            toolchain=self.toolchain,
            mathlib_revision=self.mathlib_revision,
            line_offset=header_lines,
        )

    async def close(self) -> None:
        await self._client.aclose()
