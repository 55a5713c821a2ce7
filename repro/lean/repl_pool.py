"""A pool of warm Lean REPL workers driven through LeanInteract.

Each worker is one REPL process (its own process group) that elaborated the header once; every check
is a ``Command`` on that header environment with a hard timeout. A worker that times out, crashes,
prints garbage or runs out of memory is killed with its whole process group and replaced in the
background, and the check is retried once on a fresh worker; workers are also recycled after a
configured number of checks. Results do not depend on which worker ran them.

Lifecycle, so that N workers stay busy: checks run on the pool's own executor sized to the
workers (Python's shared default pool is capped at cores + 4 threads and also serves everything
else); a worker due for recycling keeps serving until its replacement has started and elaborated
the header, and recycle points are staggered so workers do not all restart at once; starting,
killing and cleaning up processes happen on a separate executor, never on the event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

from repro.lean.framing import FramingError, frame_command, new_nonce, sentinel_text, unframe_reply
from repro.lean.protocol import InfraStatus, LeanResult, infrastructure_failure, result_from_repl_json
from repro.lean.sandbox import WorkerSandbox, kill_process_group
from repro.lean.toolchains import DEFAULT_TOOLCHAIN, Toolchain, get_toolchain

_T = TypeVar("_T")


class LeanUnavailable(RuntimeError):
    pass


@dataclass
class _Worker:
    server: Any
    header_env: int | None
    header: str
    checks: int = 0
    serial: int = 0
    # the process LeanInteract started (the sandbox launcher, which names the worker's scratch directory)
    pid: int | None = None
    # checks after which this worker is recycled (staggered across the first generation)
    recycle_at: int = 0
    # a replacement is being started; this worker keeps serving until it is ready
    retiring: bool = False
    # the replacement is ready: retire this worker the next time it is free
    replaced: bool = False
    # the ``env`` number the REPL gives the next command that runs (leanprover-community/repl numbers
    # environments in order): a reply naming another one is not the reply to our command
    next_env: int = 0


def _kill_process_group(server: Any) -> None:
    process = getattr(server, "_proc", None)
    if process is not None:
        with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
            kill_process_group(os.getpgid(process.pid))
    with contextlib.suppress(Exception):
        server.kill()


def repl_command(config: Any) -> list[str]:
    """The command LeanInteract starts a REPL with (lean-interact 0.11.6 ``server.py``, ``LeanServer.start``)."""
    binary = os.path.join(config._cache_repl_dir, ".lake", "build", "bin", "repl")
    return [str(config.lake_path), "env", str(binary)]


def limited(command: list[str], memory_limit_mb: int | None) -> list[str]:
    """``command`` under an address-space limit set by the shell that ``exec``s it (same pid, same group)."""
    if not memory_limit_mb:
        return command
    return ["/bin/sh", "-c", f'ulimit -v {int(memory_limit_mb) * 1024} && exec "$@"', "repro-repl", *command]


def _server_class() -> Any:
    from lean_interact import LeanServer

    class ReplServer(LeanServer):
        """LeanInteract's server, started as its ``start`` does but without ``preexec_fn``.

        LeanInteract applies the memory limit in a ``preexec_fn`` (``utils._limit_memory``, RLIMIT_AS), and
        our workers start from the pool's lifecycle threads: Python documents ``preexec_fn`` in a process
        with threads as liable to deadlock the child before ``exec`` (lean audit M9). The same limit is set
        by ``ulimit -v`` in a shell that ``exec``s the same command line instead.
        """

        def start(self) -> None:
            config = self.config
            self._proc = subprocess.Popen(
                limited(repl_command(config), config.memory_hard_limit_mb),
                cwd=config.working_dir,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                encoding="utf-8",
                text=True,
                bufsize=1,
                start_new_session=True,
            )
            if not self.is_alive():
                stdout, stderr = self.get_stdout_stderr()
                raise ChildProcessError(f"The Lean server could not be started:\nstdout: {stdout}\nstderr: {stderr}")

    return ReplServer


# what a crash is compared against: it runs on every working Lean under any header
CRASH_PROBE = "theorem repro_crash_probe : True := trivial"


def _classify_exception(error: BaseException) -> InfraStatus:
    text = str(error).lower()
    if isinstance(error, TimeoutError):
        return InfraStatus.timeout
    if "out of memory" in text or "std::bad_alloc" in text:
        return InfraStatus.out_of_memory
    return InfraStatus.crash


class ReplPoolVerifier:
    """``repl`` backend. ``repl_config`` is a ``lean_interact.LeanREPLConfig`` (built lazily if None)."""

    def __init__(
        self,
        *,
        workers: int = 2,
        timeout_s: float = 120.0,
        recycle_after: int = 200,
        repl_config: Any = None,
        project_path: str | None = None,
        memory_limit_mb: int | None = None,
        toolchain: str | None = None,
        mathlib_revision: str | None = None,
        real_lean: bool = True,
        backend_id: str = "lean-interact-repl",
        infra_retries: int = 1,
        start_timeout_s: float = 600.0,
        owned_directory: str | None = None,
        lean_toolchain: Toolchain | None = None,
        sandbox: WorkerSandbox | None = None,
        refused: str | None = None,
    ) -> None:
        self.worker_count = workers
        # applied to the LeanREPLConfig once built (repro.lean.sandbox.WorkerSandbox): every REPL process
        # LeanInteract starts then runs inside the sandbox, each worker in a scratch directory of its own
        self.sandbox = sandbox
        # why no worker may start at all (the configured sandbox does not work here): every check says so
        self.refused = refused
        self.timeout_s = timeout_s
        self.recycle_after = recycle_after
        self._repl_config = repl_config
        self.project_path = project_path
        self.memory_limit_mb = memory_limit_mb
        self.toolchain = toolchain
        self.mathlib_revision = mathlib_revision
        self.real_lean = real_lean
        self.backend_id = backend_id
        self.infra_retries = infra_retries
        self.start_timeout_s = start_timeout_s
        self._idle: dict[str, asyncio.Queue[_Worker]] = {}
        self._live: dict[str, int] = {}
        self._serial = 0
        self._background: set[asyncio.Task[object]] = set()
        self.replaced = 0
        self.started = 0
        self._start_error: str | None = None
        self._owned_directory = owned_directory
        self.lean_toolchain = lean_toolchain or get_toolchain(toolchain or DEFAULT_TOOLCHAIN)
        self.configs_built = 0
        self._check_executor: ThreadPoolExecutor | None = None
        self._lifecycle_executor: ThreadPoolExecutor | None = None
        self.recycled = 0

    # -- workers ---------------------------------------------------------------------------------
    def _config(self) -> Any:
        """The pool's one ``LeanREPLConfig``; built once, before any worker starts (see ``_ensure_pool``)."""
        if self.refused:
            raise LeanUnavailable(self.refused)
        if self._repl_config is None:
            from repro.lean.project import repl_config

            if not self.project_path:
                raise LeanUnavailable("lean.project_path is not set")
            try:
                self._repl_config = repl_config(
                    self.project_path, self.lean_toolchain, memory_limit_mb=self.memory_limit_mb
                )
                self.configs_built += 1
            except ImportError as error:  # pragma: no cover - core dependency
                raise LeanUnavailable(f"lean-interact is not installed: {error}") from error
            except Exception as error:
                raise LeanUnavailable(
                    f"could not set up the Lean REPL for {self.project_path}: {type(error).__name__}: {error}. "
                    "Run `repro lean setup` (needs network once) and `repro doctor`."
                ) from error
            self.toolchain = self.toolchain or getattr(self._repl_config, "lean_version", None)
        if self.sandbox is not None and self.sandbox.real_lake is None:
            self.sandbox.prepare(self._repl_config, str(self._repl_config.lake_path))
        return self._repl_config

    def _start_worker_sync(self, header: str) -> _Worker:
        from lean_interact import Command

        config = self._config()
        if self.sandbox is not None:
            self.sandbox.verify()  # the launcher is what we wrote, or no worker starts (issue 27 §3)
        server = _server_class()(config)
        self._serial += 1
        process = getattr(server, "_proc", None)
        worker = _Worker(
            server=server, header_env=None, header=header, serial=self._serial, pid=getattr(process, "pid", None)
        )
        if header.strip():
            try:
                reply = server.run(Command(cmd=header), timeout=self.start_timeout_s)
            except Exception:
                self._end_worker(worker)
                raise
            env = getattr(reply, "env", None)
            errors = [m for m in getattr(reply, "messages", []) or [] if m.severity == "error"]
            if env is None or errors:
                self._end_worker(worker)
                detail = getattr(reply, "message", None) or "; ".join(m.data for m in errors)
                raise LeanUnavailable(f"the header did not elaborate: {detail}")
            worker.header_env = env
            worker.next_env = env + 1
        self.started += 1
        return worker

    # -- executors ---------------------------------------------------------------------------------
    def _executors(self) -> tuple[ThreadPoolExecutor, ThreadPoolExecutor]:
        if self._check_executor is None or self._lifecycle_executor is None:
            # room for every worker plus the replacements that overlap them while they warm up
            self._check_executor = ThreadPoolExecutor(2 * self.worker_count, thread_name_prefix="lean-check")
            self._lifecycle_executor = ThreadPoolExecutor(self.worker_count, thread_name_prefix="lean-lifecycle")
        return self._check_executor, self._lifecycle_executor

    async def _in_executor(self, function: Callable[..., _T], *arguments: Any) -> _T:
        """Run a blocking check on the pool's own threads (one per worker, not the shared default pool)."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executors()[0], functools.partial(function, *arguments))

    async def _off_loop(self, function: Callable[..., _T], *arguments: Any) -> _T:
        """Start, kill or clean up a process without blocking the event loop or a check thread."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executors()[1], functools.partial(function, *arguments))

    def _in_background(self, coroutine: Coroutine[Any, Any, object]) -> None:
        task: asyncio.Task[object] = asyncio.create_task(coroutine)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # -- lifecycle -------------------------------------------------------------------------------
    def _recycle_point(self, position: int) -> int:
        """Spread the first generation's recycle points over [recycle_after / 2, recycle_after]."""
        offset = (position * self.recycle_after) // (2 * self.worker_count)
        return max(1, self.recycle_after - offset)

    async def _add_worker(self, header: str, position: int | None = None) -> bool:
        try:
            worker = await self._off_loop(self._start_worker_sync, header)
        except Exception as error:
            self._live[header] -= 1
            self._start_error = f"{type(error).__name__}: {error}"
            return False
        worker.recycle_at = self._recycle_point(position) if position is not None else self.recycle_after
        await self._idle[header].put(worker)
        return True

    def _spawn_replacement(self, header: str) -> None:
        self._in_background(self._add_worker(header))

    async def _ensure_pool(self, header: str) -> None:
        if header in self._idle:
            return
        self._idle[header] = asyncio.Queue()
        self._live[header] = self.worker_count
        try:
            # one config (it may clone and build the REPL) before N workers start, never N at once
            await self._off_loop(self._config)
        except Exception as error:
            self._live[header] = 0
            self._start_error = f"{type(error).__name__}: {error}"
            return
        await asyncio.gather(*(self._add_worker(header, position) for position in range(self.worker_count)))

    async def _take_worker(self, header: str) -> _Worker | None:
        await self._ensure_pool(header)
        queue = self._idle[header]
        while True:
            if self._live[header] <= 0 and queue.empty():
                return None
            try:
                worker = await asyncio.wait_for(queue.get(), timeout=1.0)
            except TimeoutError:
                continue
            if worker.replaced:  # its warm replacement is already serving
                self._dispose(worker, header)
                continue
            return worker

    def _end_worker(self, worker: _Worker) -> None:
        """Kill the worker's process group and remove its scratch directory."""
        _kill_process_group(worker.server)
        if self.sandbox is not None:
            self.sandbox.release(worker.pid)

    def _kill_in_background(self, worker: _Worker) -> None:
        self._in_background(self._off_loop(self._end_worker, worker))

    def _retire(self, worker: _Worker, header: str) -> None:
        """A broken worker (timeout, crash, garbage, memory): kill it now, start another."""
        if worker.retiring:  # a replacement is already on the way
            self._dispose(worker, header)
            return
        self._kill_in_background(worker)
        self.replaced += 1
        self._spawn_replacement(header)

    def _dispose(self, worker: _Worker, header: str) -> None:
        """Retire a recycled worker whose replacement is ready."""
        self._live[header] -= 1
        self._kill_in_background(worker)

    def _recycle(self, worker: _Worker, header: str) -> None:
        """Start and warm a replacement; the old worker keeps serving until it is ready."""
        worker.retiring = True
        self._live[header] += 1
        self.recycled += 1

        async def replace() -> None:
            if await self._add_worker(header):
                worker.replaced = True
            else:  # no replacement could start: keep this one, try again at its next check
                worker.retiring = False

        self._in_background(replace())

    async def _release(self, worker: _Worker, header: str, results: list[LeanResult]) -> None:
        """After a finished check: keep the worker, recycle it (warm replacement first) or retire it."""
        if worker.replaced:
            self._dispose(worker, header)
        elif any(result.infra_status == InfraStatus.lean_error for result in results) or self._over_memory(worker):
            self._retire(worker, header)
        else:
            if worker.checks >= (worker.recycle_at or self.recycle_after) and not worker.retiring:
                self._recycle(worker, header)
            await self._idle[header].put(worker)

    def _over_memory(self, worker: _Worker) -> bool:
        """Recycle a worker whose REPL grew past 90% of its limit, before the limit kills it mid-check."""
        if not self.memory_limit_mb:
            return False
        try:
            used_mb = float(worker.server.get_memory_usage())
        except Exception:  # psutil races with a process that just exited
            return False
        return used_mb > 0.9 * self.memory_limit_mb

    # -- checks --------------------------------------------------------------------------------
    def _run_sync(self, worker: _Worker, commands: list[str], replies: list[dict[str, Any]]) -> None:
        """Each command in the environment the previous one produced (the first in the header's), framed
        by a sentinel of ours (:mod:`repro.lean.framing`), its reply appended to ``replies`` as it comes;
        raises :class:`FramingError` for a reply that is not Lean's answer to it (``replies`` then holds
        the answers before it)."""
        env = worker.header_env
        nonce = new_nonce()
        for index, code in enumerate(commands):
            sentinel = sentinel_text(nonce, index)
            framed, line = frame_command(code, sentinel)
            request: dict[str, Any] = {"cmd": framed}
            if env is not None:
                request["env"] = env
            raw = worker.server.run_dict(request, timeout=self.timeout_s)
            reply = unframe_reply(raw, sentinel=sentinel, line=line, nonce=nonce, expected_env=worker.next_env)
            if "env" in reply:
                worker.next_env += 1
            replies.append(reply)
            env = reply.get("env")
            if not isinstance(env, int):
                break  # the REPL refused the command: nothing later can run in its environment

    async def check(self, code: str, header: str) -> LeanResult:
        return (await self.check_sequence([code], header))[0]

    def _results(self, replies: list[dict[str, Any]], elapsed: float) -> list[LeanResult]:
        return [
            result_from_repl_json(
                reply,
                backend_id=self.backend_id,
                real_lean=self.real_lean,
                elapsed_s=elapsed / max(len(replies), 1),
                toolchain=self.toolchain,
                mathlib_revision=self.mathlib_revision,
            )
            for reply in replies
        ]

    async def check_sequence(self, commands: list[str], header: str) -> list[LeanResult]:
        """The results of ``commands`` in order; an infrastructure failure ends the list, last, after the
        results that came before it (the :class:`~repro.lean.protocol.Verifier` contract; lean audit M5)."""
        attempts = 0
        last: list[LeanResult] | None = None
        while attempts <= self.infra_retries:
            attempts += 1
            worker = await self._take_worker(header)
            if worker is None:
                return [
                    infrastructure_failure(
                        self, InfraStatus.unavailable, self._start_error or "no Lean worker could be started"
                    )
                ]
            started = time.perf_counter()
            replies: list[dict[str, Any]] = []
            try:
                await self._in_executor(self._run_sync, worker, commands, replies)
            except (
                TimeoutError,
                ConnectionAbortedError,
                ChildProcessError,
                BrokenPipeError,
                json.JSONDecodeError,
                OSError,
                AssertionError,
                FramingError,  # a reply not framed by our sentinel: a crash, never a verdict; worker retired
            ) as error:
                status = _classify_exception(error)
                self._retire(worker, header)
                elapsed = time.perf_counter() - started
                failure = infrastructure_failure(
                    self, status, f"{type(error).__name__}: {str(error)[:500]}", elapsed_s=elapsed
                )
                last = self._results(replies, elapsed) + [failure]
                if status == InfraStatus.timeout:
                    return last  # a proof that hangs hangs again; do not pay the timeout twice
                if isinstance(error, FramingError) and error.deterministic:
                    return last  # Lean placed a message where the code made it: a fresh worker says the same
                continue
            elapsed = time.perf_counter() - started
            results = self._results(replies, elapsed)
            worker.checks += 1
            await self._release(worker, header, results)
            return results
        assert last is not None
        if attempts > 1 and last[-1].infra_status == InfraStatus.crash and await self._probe_passes(header):
            # the code crashed a fresh worker too and a known-good probe runs: the code crashes Lean (red1 R6)
            detail = f"{last[-1].detail or ''} (again on a fresh worker; a known-good probe passed on one)"
            last[-1] = last[-1].model_copy(update={"infra_status": InfraStatus.reproducible_crash, "detail": detail})
        return last

    async def _probe_passes(self, header: str) -> bool:
        """Whether a known-good command runs on a worker of this pool under ``header``: tells a crash of the
        code (the probe passes) from a crash of the backend (every check fails, the probe too)."""
        worker = await self._take_worker(header)
        if worker is None:
            return False
        replies: list[dict[str, Any]] = []
        try:
            await self._in_executor(self._run_sync, worker, [CRASH_PROBE], replies)
        except Exception:  # noqa: BLE001 - any failure of the probe: the backend, not the code
            self._retire(worker, header)
            return False
        results = self._results(replies, 0.0)
        worker.checks += 1
        await self._release(worker, header, results)
        return bool(results) and results[0].infra_status == InfraStatus.ok and not results[0].has_error

    async def close(self) -> None:
        for task in list(self._background):
            task.cancel()
        servers = []
        for queue in self._idle.values():
            while not queue.empty():
                worker = queue.get_nowait()
                servers.append(worker.server)
        self._idle.clear()
        if servers:
            await asyncio.gather(*(self._off_loop(_kill_process_group, server) for server in servers))
        if self.sandbox is not None:
            await self._off_loop(self.sandbox.close)
        if self._owned_directory:
            await self._off_loop(shutil.rmtree, self._owned_directory, True)
        for executor in (self._check_executor, self._lifecycle_executor):
            if executor is not None:
                executor.shutdown(wait=False, cancel_futures=True)
        self._check_executor = self._lifecycle_executor = None
