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

Before its first check the client asks the server itself what it runs (:meth:`KiminaVerifier.prepare`):
``Lean.versionString`` must be the configured toolchain's Lean, the Mathlib checkout's commit is read
for provenance, and the sentinels must come back where we wrote them (Kimina Lean Server between
1777d73, 2025-07-24, and e2cdc1f, 2025-10-24, does not add the header's line count back:
``server/routers/check.py``, ``_apply_header_offset``). A server that fails any of these is refused,
and every check on it is ``unavailable``, never a verdict.

Load, as the server behaves (project-numina/kimina-lean-server, ``server/routers/check.py``,
``server/manager.py``, ``server/settings.py``): a request waits up to ``max_wait`` (60 s) for a free
REPL and then gets HTTP 429; the header and the body each run under the request's ``timeout`` (an int
in ``BaseRequest``), and a REPL that times out, or whose client disconnected, is destroyed. So this client
bounds its own requests per server URL, retries a 429 with backoff (the server is busy, not down), waits
longer than the server's worst case (``max_wait + 2 * timeout``) so the server never loses a warm REPL to
our impatience, and records a wait that Lean never saw (our bound, the connection pool, a 429, a server
that never answered) as ``unavailable``, never as a Lean timeout.
"""

from __future__ import annotations

import asyncio
import math
import os
import re
import time
import uuid
import weakref
from typing import Any

import httpx

from repro.lean.protocol import (
    InfraStatus,
    LeanMessage,
    LeanResult,
    infrastructure_failure,
    result_from_repl_json,
)
from repro.lean.toolchains import STANDARD_HEADER, lean_version_of

# A trusted ``#print "<prefix><nonce>_<k>"`` of ours stands before each command and after the last:
# Lean's reply must place each at the line we wrote it on, or the server moved lines and no message
# can be attributed to a command by its position.
SENTINEL_PREFIX = "repro_sentinel_"

# server/settings.py: ``max_wait`` (LEAN_SERVER_MAX_WAIT), how long a request may wait for a free REPL
# (60 at upstream HEAD fb2393d; 3600 in kimina-ast-server 2.1.3: set lean.kimina_max_wait_s to the server's)
KIMINA_SERVER_MAX_WAIT_S = 60.0
# kimina-ast-server 2.1.3 (server/routers/check.py) answers a request that found no free REPL with this
# error result; upstream HEAD answers HTTP 429 "No available REPLs" instead
NO_FREE_REPL = "No available REPLs"

# What the server runs, asked of Lean on the server (trusted commands of ours, never a prover's code).
# The REPL's working directory is the server's Mathlib checkout (server/repl.py: cwd=settings.project_dir).
VERSION_PROBE = "#eval Lean.versionString"
MATHLIB_PROBE = '#eval show IO String from do\n  let head ← IO.FS.readFile ".git/HEAD"\n  pure head.trim'

# one bound per (event loop, server URL): several verifiers on one server share it
_URL_BOUNDS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Semaphore]] = (
    weakref.WeakKeyDictionary()
)


def _url_bound(url: str, limit: int) -> asyncio.Semaphore:
    per_loop = _URL_BOUNDS.setdefault(asyncio.get_running_loop(), {})
    if url not in per_loop:
        per_loop[url] = asyncio.Semaphore(limit)
    return per_loop[url]


class KiminaRefused(RuntimeError):
    """The server cannot judge this run's proofs: another Lean, or it moves message positions."""


def _info_texts(result: LeanResult) -> list[str]:
    return [m.text.strip() for m in result.messages if m.severity == "info"]


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
        max_in_flight: int = 4,
        server_max_wait_s: float = KIMINA_SERVER_MAX_WAIT_S,
        busy_retries: int = 8,
        backoff_s: float = 1.0,
        verify_server: bool = True,
        http_margin_s: float = 30.0,
    ) -> None:
        self.url = url.rstrip("/")
        # the server's BaseRequest.timeout is an int: a float is refused with HTTP 422
        self.timeout_s = max(1, math.ceil(timeout_s))
        self.backend_id = f"kimina:{self.url}"
        self.real_lean = True
        self.toolchain = toolchain
        self.mathlib_revision = mathlib_revision
        self.max_in_flight = max_in_flight
        self.busy_retries = busy_retries
        self.backoff_s = backoff_s
        self.verify_server = verify_server
        self.busy_answers = 0
        self.server_mathlib_commit: str | None = None
        self._prepared = False
        self._refusal: str | None = None
        self._prepare_lock: asyncio.Lock | None = None
        headers = {}
        api_key = os.environ.get(api_key_env, "") if api_key_env else ""
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        # the server may take max_wait (a free REPL) + timeout (header) + timeout (body): wait longer than that
        self.http_timeout_s = server_max_wait_s + 2 * self.timeout_s + http_margin_s
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(self.http_timeout_s, connect=10.0, pool=None),
            limits=httpx.Limits(max_connections=max_in_flight, max_keepalive_connections=max_in_flight),
            headers=headers,
        )

    def _result(self, status: InfraStatus, started: float, detail: str) -> LeanResult:
        return infrastructure_failure(self, status, detail, elapsed_s=time.perf_counter() - started)

    async def check(self, code: str, header: str) -> LeanResult:
        return (await self.check_sequence([code], header))[0]

    @property
    def prepared(self) -> bool:
        """Whether the server has answered what it runs (or was not asked: ``verify_server=False``)."""
        return self._prepared

    async def prepare(self, header: str = STANDARD_HEADER) -> None:
        """Ask the server what it runs and how it places messages; raise :class:`KiminaRefused` if unfit.

        Runs once (later calls repeat the first answer). Infrastructure trouble (server down) is not a
        refusal: it is left to the checks, which report it as ``unavailable``.
        """
        if self._prepare_lock is None:
            self._prepare_lock = asyncio.Lock()
        async with self._prepare_lock:
            if not self._prepared and self.verify_server:
                answered, self._refusal = await self._inspect_server(header)
                self._prepared = answered
            elif not self.verify_server:
                self._prepared = True
        if self._refusal:
            raise KiminaRefused(self._refusal)

    async def _inspect_server(self, header: str) -> tuple[bool, str | None]:
        """(whether the server answered, why it is refused)."""
        results = await self._check_sequence([VERSION_PROBE, MATHLIB_PROBE], header)
        first = results[0]
        if first.infra_status != InfraStatus.ok:
            if first.detail and "moved message positions" in first.detail:
                return True, (
                    f"{self.url} moves Lean's message positions ({first.detail}). Kimina Lean Server releases "
                    "from 2025-07-24 to 2025-10-24 do not add the header's line count back; update the server "
                    "(project-numina/kimina-lean-server e2cdc1f or later)."
                )
            return False, None  # down or busy: the checks will say so, as unavailable
        found = next((v for v in map(lean_version_of, _info_texts(first)) if v), None)
        expected = lean_version_of(self.toolchain)
        if found is None:
            return True, f"{self.url} did not say which Lean it runs (`{VERSION_PROBE}` answered {first.messages[:2]})"
        if expected is not None and found != expected:
            return True, (
                f"{self.url} runs Lean {found}, but lean.toolchain is {expected}: start a server for this "
                f"toolchain (LEAN_SERVER_LEAN_VERSION={expected} in its .env) or set lean.toolchain to {found}."
            )
        self.toolchain = f"leanprover/lean4:{found}"
        if len(results) > 1 and results[1].infra_status == InfraStatus.ok:
            for text in _info_texts(results[1]):
                commit = re.fullmatch(r'"?([0-9a-f]{40})"?', text)
                if commit:
                    self.server_mathlib_commit = commit.group(1)
                    # the revision the server reports, next to the one the config asked for
                    self.mathlib_revision = f"{self.mathlib_revision or 'mathlib'}@{commit.group(1)}"
        return True, None

    async def check_sequence(self, commands: list[str], header: str) -> list[LeanResult]:
        try:
            await self.prepare(header)
        except KiminaRefused as refusal:
            return [infrastructure_failure(self, InfraStatus.unavailable, f"server refused: {refusal}")]
        return await self._check_sequence(commands, header)

    async def _check_sequence(self, commands: list[str], header: str) -> list[LeanResult]:
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
        own = [_at_command_end(m, sentinels, spans) for m in result.messages if nonce not in m.text]
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

    async def _post(self, payload: dict[str, Any]) -> httpx.Response | str:
        """The server's answer, or why there is none. A 429 (no free REPL) is retried with backoff."""
        async with _url_bound(self.url, self.max_in_flight):
            for attempt in range(self.busy_retries + 1):
                try:
                    response = await self._client.post(f"{self.url}/api/check", json=payload)
                except httpx.PoolTimeout:
                    return f"{self.url}: no free HTTP connection (client-side wait, Lean never saw the check)"
                except httpx.TimeoutException as error:
                    return (
                        f"{self.url}: no answer within {self.http_timeout_s:.0f} s, longer than the server's own "
                        f"worst case ({type(error).__name__}); not a Lean timeout"
                    )
                except httpx.HTTPError as error:
                    return f"{self.url}: {type(error).__name__}: {error}"
                if response.status_code != 429:
                    return response
                self.busy_answers += 1
                if attempt < self.busy_retries:
                    retry_after = response.headers.get("Retry-After", "")
                    delay = float(retry_after) if retry_after.isdigit() else self.backoff_s * 2**attempt
                    await asyncio.sleep(min(delay, 30.0))
            return f"{self.url}: HTTP 429 (no free REPL) after {self.busy_retries} retries; Lean never saw the check"

    async def _check_snippet(self, full: str) -> tuple[LeanResult, list[dict[str, Any]]]:
        """One snippet; a "No available REPLs" result (kimina-ast-server 2.1.3's answer where upstream HEAD
        answers HTTP 429) is the server being busy: retried with backoff, then ``unavailable``, never a crash."""
        for attempt in range(self.busy_retries + 1):
            result, sorries = await self._check_snippet_once(full)
            if not (result.infra_status == InfraStatus.unavailable and NO_FREE_REPL in (result.detail or "")):
                break
            self.busy_answers += 1
            if attempt < self.busy_retries:
                await asyncio.sleep(min(self.backoff_s * 2**attempt, 30.0))
        return result, sorries

    async def _check_snippet_once(self, full: str) -> tuple[LeanResult, list[dict[str, Any]]]:
        snippet_id = uuid.uuid4().hex
        payload = {"snippets": [{"id": snippet_id, "code": full}], "timeout": self.timeout_s}
        started = time.perf_counter()
        response = await self._post(payload)
        if isinstance(response, str):
            return self._result(InfraStatus.unavailable, started, response), []
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
            if NO_FREE_REPL.lower() in lowered or "failed to get repl" in lowered:
                detail = f"{self.url}: {failure} (the server is busy; Lean never saw the check)"
                return self._result(InfraStatus.unavailable, started, detail), []
            status = (
                # the header (imports) timing out says nothing about the proof: the server is overloaded
                InfraStatus.unavailable
                if "header" in lowered and ("timeout" in lowered or "timed out" in lowered)
                else InfraStatus.timeout
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


def _at_command_end(
    message: LeanMessage, sentinels: list[tuple[str, int]], spans: list[tuple[int, int]]
) -> LeanMessage:
    """An error that starts on one of our sentinel lines and ends where the sentinel starts is the preceding
    command's own (Lean's "unexpected token '#print'" for an unfinished last declaration, placed from the end
    of the preceding token: leanprover/lean4#2393): moved to that command's last line. An error can only
    reject, so this never makes a check pass (lean audit M6)."""
    if message.severity != "error" or message.end_column != 0:
        return message
    for (_, line), (first, last) in zip(sentinels[1:], spans, strict=False):
        if message.line == line and message.end_line == line and first <= last:
            return message.model_copy(update={"line": last})
    return message


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
