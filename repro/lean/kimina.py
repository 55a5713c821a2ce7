"""Client for a Kimina Lean Server, for verification that scales past one machine.

``POST /api/check`` with ``{"snippets": [{"id", "code"}], "timeout": T}``; each result carries
``response`` (the raw REPL JSON) or ``error``. The verdict rules are the local pool's: this backend
only turns replies into :class:`LeanResult`.

A sequence of commands goes as one snippet (the server takes no environments), each command starting
on a fresh line; every message is attributed to the command whose source span holds its position,
never by its text, so the prover's code cannot speak for the trusted commands that follow it. Trusted
sentinels between the commands prove that the server kept our line numbers (an older server strips
import lines without adding their count back; every server splits lines at characters other than
``\\n``, which the gate refuses); a sentinel out of place is an infrastructure failure, never a verdict.
"""

from __future__ import annotations

import os
import time
import uuid
from typing import Any

import httpx

from repro.lean.protocol import (
    InfraStatus,
    LeanMessage,
    LeanResult,
    infrastructure_failure,
    result_from_repl_json,
)

# A trusted ``#print "<prefix><nonce>_<k>"`` of ours stands before each command and after the last:
# Lean's reply must place each at the line we wrote it on, or the server moved lines and no message
# can be attributed to a command by its position.
SENTINEL_PREFIX = "repro_sentinel_"


def _misplaced_sentinel(result: LeanResult, sentinels: list[tuple[str, int]], nonce: str) -> str | None:
    """Why the sentinels show shifted positions, or None when every one is exactly where we put it."""
    for text, line in sentinels:
        found = [m for m in result.messages if m.text.strip() == text]
        if len(found) != 1 or found[0].line != line or found[0].severity != "info":
            where = [m.line for m in found]
            return (
                f"Kimina server moved message positions: sentinel {text[-8:]} expected once at line {line}, "
                f"found at {where}; no verdict"
            )
    expected = {text for text, _ in sentinels}
    stray = [m for m in result.messages if nonce in m.text and m.text.strip() not in expected]
    if stray:
        return "Kimina server reply holds a sentinel in an unexpected message; no verdict"
    return None


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
        return (await self.check_sequence([code], header))[0]

    async def check_sequence(self, commands: list[str], header: str) -> list[LeanResult]:
        nonce = uuid.uuid4().hex
        pieces = [header.rstrip() + "\n\n"] if header.strip() else []
        spans: list[tuple[int, int]] = []  # (first line, last line) of each command, 1-based
        sentinels: list[tuple[str, int]] = []  # (text, line) of each trusted sentinel of ours
        line = sum(piece.count("\n") for piece in pieces) + 1

        def add_sentinel() -> None:
            nonlocal line
            text = f"{SENTINEL_PREFIX}{nonce}_{len(sentinels)}"
            sentinels.append((text, line))
            pieces.append(f'#print "{text}"\n\n')
            line += 2

        for command in commands:
            add_sentinel()
            text = command.rstrip() + "\n\n"
            spans.append((line, line + text.count("\n") - 1))
            pieces.append(text)
            line += text.count("\n")
        add_sentinel()
        result, raw_sorries = await self._check_snippet("".join(pieces))
        if result.infra_status != InfraStatus.ok:
            return [result]
        misplaced = _misplaced_sentinel(result, sentinels, nonce)
        if misplaced is not None:
            # the server moved lines (stripped the header, split a line): no message can be attributed
            return [
                result.model_copy(
                    update={"infra_status": InfraStatus.crash, "messages": [], "sorries": [], "detail": misplaced}
                )
            ]
        own = [m for m in result.messages if nonce not in m.text]
        between = [
            m
            for m in own
            if isinstance(m.line, int)
            and m.line >= spans[0][0]
            and not any(first <= m.line <= last for first, last in spans)
        ]
        if between:
            detail = f"Lean message outside every command (line {between[0].line}): {between[0].text[:200]}"
            return [result.model_copy(update={"infra_status": InfraStatus.crash, "detail": detail})]
        result = result.model_copy(update={"messages": own})
        return [
            _only_span(result, raw_sorries, first, last, first_of_all=index == 0)
            for index, (first, last) in enumerate(spans)
        ]

    async def _check_snippet(self, full: str) -> tuple[LeanResult, list[dict[str, Any]]]:
        snippet_id = uuid.uuid4().hex
        payload = {"snippets": [{"id": snippet_id, "code": full}], "timeout": self.timeout_s}
        started = time.perf_counter()
        try:
            response = await self._client.post(f"{self.url}/api/check", json=payload)
        except httpx.TimeoutException:
            return self._result(InfraStatus.timeout, started, f"{self.url}: HTTP request timed out"), []
        except httpx.HTTPError as error:
            return self._result(InfraStatus.unavailable, started, f"{self.url}: {type(error).__name__}: {error}"), []
        if response.status_code != 200:
            return self._result(InfraStatus.unavailable, started, f"{self.url}: HTTP {response.status_code}"), []
        try:
            body: Any = response.json()
            results = body["results"] if isinstance(body, dict) else body
            item = next(r for r in results if r.get("id") == snippet_id) if len(results) > 1 else results[0]
        except (ValueError, KeyError, IndexError, StopIteration, TypeError, AttributeError):
            return self._result(InfraStatus.crash, started, f"{self.url}: unreadable reply {response.text[:200]!r}"), []
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
            return self._result(status, started, str(failure)[:500]), []
        reply = item.get("response") or {}
        result = result_from_repl_json(
            reply,
            backend_id=self.backend_id,
            real_lean=self.real_lean,
            elapsed_s=float(item.get("time") or time.perf_counter() - started),
            toolchain=self.toolchain,
            mathlib_revision=self.mathlib_revision,
        )
        raw_sorries = reply.get("sorries") if isinstance(reply, dict) else None
        return result, [s for s in raw_sorries or [] if isinstance(s, dict)]

    async def close(self) -> None:
        await self._client.aclose()


def _only_span(
    result: LeanResult, raw_sorries: list[dict[str, Any]], first: int, last: int, *, first_of_all: bool
) -> LeanResult:
    """The messages positioned in lines ``first..last``, renumbered from 1.

    A message with no position, or one in the header, goes to the first command (our statement): a
    header that fails makes the statement fail, and an unplaced error can only reject.
    """

    def belongs_at(line: object) -> bool:
        if not isinstance(line, int) or line < first:
            return first_of_all
        return line <= last

    def belongs(message: LeanMessage) -> bool:
        return belongs_at(message.line)

    def shifted(message: LeanMessage) -> LeanMessage:
        offset = first - 1
        return message.model_copy(
            update={
                "line": None if message.line is None else max(message.line - offset, 1),
                "end_line": None if message.end_line is None else message.end_line - offset,
            }
        )

    messages = [shifted(message) for message in result.messages if belongs(message)]
    sorries = [str(s.get("goal", "")) for s in raw_sorries if belongs_at((s.get("pos") or {}).get("line"))]
    return result.model_copy(update={"messages": messages, "sorries": sorries})
