"""One confined process of the judge: started in its own session, killed as a group, its output capped.

A judge step runs prover code (elaborating the submission) or reads prover-made files (replaying its
``.olean``), so the process may hang, spawn children, or print without end. Three rules follow:

- the process starts a new session, and a timeout or a cancellation kills the whole process group, so no
  ``lean`` is left running under a killed ``lake`` (audit M9: killing only the direct child left orphans
  where no sandbox reaped them);
- what it prints is kept up to :data:`OUTPUT_CAP` bytes (its head and its tail), never all of it;
- how it ended is read from the exit status without guessing: a negative status (or ``128 + n`` from a
  launcher that reports its child's signal so, as bubblewrap and shells do) is a signal, never a verdict.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from repro.lean.sandbox import (
    LauncherChanged,
    SandboxStatus,
    SandboxUnavailable,
    confinement,
    kill_process_group,
    sandboxed,
)

OUTPUT_CAP = 1 << 20  # bytes kept of one step's output (half from its start, half from its end)


@dataclass
class StepResult:
    returncode: int | None  # None: it did not end on its own (timed out, or could not start)
    output: str
    timed_out: bool = False
    start_error: str | None = None
    elapsed_s: float = 0.0

    @property
    def signal(self) -> int | None:
        """The signal that ended the process, if one did (directly, or as reported by a launcher)."""
        code = self.returncode
        if code is None:
            return None
        if code < 0:
            return -code
        if 128 < code <= 128 + 64:
            return code - 128
        return None

    @property
    def silent(self) -> bool:
        return not self.output.strip()


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


async def _read_capped(stream: asyncio.StreamReader) -> str:
    head = bytearray()
    tail = bytearray()
    dropped = 0
    half = OUTPUT_CAP // 2
    while chunk := await stream.read(65536):
        room = half - len(head)
        if room > 0:
            head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            tail += chunk
            if len(tail) > half:
                dropped += len(tail) - half
                del tail[: len(tail) - half]
    text = head.decode("utf-8", "replace")
    if dropped:
        text += f"\n[... {dropped} bytes of output not kept ...]\n"
    return text + tail.decode("utf-8", "replace")


def _kill_group(process: asyncio.subprocess.Process) -> None:
    kill_process_group(process.pid)  # the session leader's pid is its group id
    with contextlib.suppress(ProcessLookupError):
        process.kill()


class Slots:
    """At most ``size`` judgements at once, per event loop: a judge may serve several ``asyncio.run`` calls
    (the release filter runs one per page), and an ``asyncio.Semaphore`` belongs to the loop that first
    waited on it."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    def __call__(self) -> asyncio.Semaphore:
        loop = asyncio.get_running_loop()
        if loop not in self._by_loop:
            self._by_loop[loop] = asyncio.Semaphore(self.size)
        return self._by_loop[loop]


class Confinement:
    """The confinement the operator named (``lean.sandbox``: bwrap unless a weaker one is named), probed once.

    The judge runs prover code (the submission's compile) only where writes are confined, unless the
    operator named ``unshare`` or ``none``: that name is the opt-in. A named confinement that does not
    work here gives no verdict, with the sandbox module's message (which names the fix)."""

    def __init__(self, named: str = "bwrap", status: SandboxStatus | None = None) -> None:
        self.named = named
        self._status = status
        self._problem: str | None = None
        self._probed = status is not None

    def status(self) -> SandboxStatus | None:
        if not self._probed:
            self._probed = True
            try:
                self._status = confinement(self.named)
            except SandboxUnavailable as error:
                self._problem = str(error)
        return self._status

    def problem(self) -> str | None:
        status = self.status()
        if status is None:
            return self._problem or f"lean.sandbox {self.named} does not work here"
        if not status.writes_confined and self.named == "bwrap":
            return (
                f"writes would not be confined ({status.describe()}); the judge runs prover code only where they"
                " are, unless the operator names a weaker confinement (lean.sandbox: unshare or none)"
            )
        return None

    def describe(self) -> str:
        status = self.status()
        return status.describe() if status is not None else f"lean.sandbox {self.named}: not available here"


async def run_step(
    command: list[str],
    work: Path,
    sandbox: SandboxStatus,
    deadline: float,
    *,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    read_only: Sequence[Path] = (),
) -> StepResult:
    """Run ``command`` confined to ``work`` (writable, fresh) until it ends or ``deadline`` (monotonic) passes;
    ``read_only`` are the tool's own paths it must see (shown read-only even under a private ``/tmp``)."""
    started = time.monotonic()
    try:
        # under bwrap: only the system view, what ``command`` runs from, ``read_only`` and ``work`` are visible
        confined = sandboxed(command, work, sandbox, read_only=read_only)
    except (SandboxUnavailable, LauncherChanged) as error:
        return StepResult(None, "", start_error=f"the sandbox refused to start {command[0]}: {error}")
    try:
        process = await asyncio.create_subprocess_exec(
            *confined,
            cwd=cwd or work,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
            env=env,
        )
    except OSError as error:
        return StepResult(None, "", start_error=f"{command[0]}: {error}")
    assert process.stdout is not None
    reader = asyncio.ensure_future(_read_capped(process.stdout))
    try:
        await asyncio.wait_for(process.wait(), timeout=max(deadline - time.monotonic(), 0.05))
    except TimeoutError:
        _kill_group(process)
        await process.wait()
        output = await _finish(reader)
        return StepResult(None, output, timed_out=True, elapsed_s=round(time.monotonic() - started, 3))
    except BaseException:
        _kill_group(process)
        with contextlib.suppress(Exception):
            await asyncio.shield(process.wait())
        reader.cancel()
        raise
    # the leader ended; anything it left behind in its group goes too (its output pipe may still be held)
    _kill_group(process)
    output = await _finish(reader)
    return StepResult(process.returncode, output, elapsed_s=round(time.monotonic() - started, 3))


async def _finish(reader: asyncio.Future[str]) -> str:
    try:
        return await asyncio.wait_for(reader, timeout=5)
    except TimeoutError:
        return "[output still open after the process ended]"
