"""What a long run leaves behind when nobody watches a terminal: a log file and plain progress lines.

On a cluster, output goes to a file and the job is ended with SIGTERM. A live progress bar writes
nothing useful there, so when the console is not a terminal a plain line is printed every
``interval_s`` seconds; every such line (and the start, stop and any stop reason) also goes to
``run.log`` in the run directory. SIGTERM is turned into SIGINT so that it stops the run exactly as
Ctrl-C does: stored work is kept and ``--resume`` continues.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType

from rich.console import Console

from repro.records import utc_now
from repro.waiting import describe as describe_waits

LOG_FILENAME = "run.log"
DEFAULT_INTERVAL_S = 30.0


class RunLog:
    """Appends timestamped lines to ``run.log``; each line is flushed, so a killed run keeps its log."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / LOG_FILENAME
        self._handle = self.path.open("a", encoding="utf-8")

    def write(self, message: str) -> None:
        self._handle.write(f"{utc_now()} {message}\n")
        self._handle.flush()

    def close(self) -> None:
        self._handle.close()


class PlainProgress:
    """Counts pipeline events; prints a progress line to a non-terminal console now and then."""

    def __init__(
        self,
        console: Console | None,
        log: RunLog | None,
        *,
        total: int | None,
        interval_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
        finished: Counter[str] | None = None,
    ) -> None:
        self.console = console if console is not None and not console.is_terminal else None
        # a heartbeat that names a stuck wait is printed on a terminal too: the bar alone stands still
        self.terminal = console if console is not None and console.is_terminal else None
        self.log = log
        self.total = total
        if interval_s is None:
            interval_s = float(os.environ.get("REPRO_PROGRESS_INTERVAL_S", DEFAULT_INTERVAL_S))
        self.interval_s = interval_s
        self.clock = clock
        self.started = clock()
        self.last = self.started
        self.counts: Counter[str] = Counter()
        # problems: finished ones by outcome (retained, rejected; a resume starts from the run's), unfinished
        # ones by cause
        self.finished: Counter[str] = Counter(finished or {})
        self.earlier = sum(self.finished.values())
        self.unfinished: Counter[str] = Counter()

    def line(self) -> str:
        """Finished problems (a verdict: retained or rejected) apart from unfinished ones (no verdict:
        Lean unavailable, a model call failed, a crash), each unfinished cause named; then candidates."""
        elapsed = self.clock() - self.started
        finished = sum(self.finished.values())
        unfinished = sum(self.unfinished.values())
        rate = (finished - self.earlier) / (elapsed / 60) if elapsed > 0 else 0.0
        total = f" of {self.total}" if self.total is not None else ""
        hours, rest = divmod(int(elapsed), 3600)
        clock = f"{hours}:{rest // 60:02d}:{rest % 60:02d}"
        causes = ", ".join(f"{cause} {count}" for cause, count in sorted(self.unfinished.items()))
        return (
            f"progress: problems finished {finished}{total} (retained {self.finished['retained']},"
            f" rejected {self.finished['rejected']}{f'; {self.earlier} before this session' if self.earlier else ''}),"
            f" unfinished {unfinished}{f' ({causes})' if causes else ''};"
            f" candidates retained {self.counts['retained']}, rejected {self.counts['rejected']},"
            f" unfinished {self.counts['unfinished']}; {rate:.1f} problems finished/min, elapsed {clock}"
        )

    def on_event(self, event: str, stage: str, reason: str | None) -> None:
        self.counts[event] += 1
        if event == "problem_finished":
            self.finished[reason or "rejected"] += 1
        elif event == "problem_unfinished":
            self.unfinished[reason or "crashed"] += 1
        now = self.clock()
        if now - self.last >= self.interval_s:
            self.last = now
            self.emit()

    def emit(self, waiting: str | None = None) -> None:
        text = self.line() + (f"; {waiting}" if waiting else "")
        for console in (self.console, self.terminal if waiting else None):
            if console is not None:
                console.print(text, markup=False, highlight=False, soft_wrap=True)
        if self.log is not None:
            self.log.write(text)

    def heartbeat(self) -> None:
        """Called every few seconds whatever happens: when no line was due for a whole interval (no
        problem finished), print one anyway, naming what has been waited on for that long."""
        now = self.clock()
        if now - self.last >= self.interval_s:
            self.last = now
            self.emit(describe_waits(at_least_s=self.interval_s))

    async def beat(self) -> None:
        """Run :meth:`heartbeat` until cancelled."""
        while True:
            await asyncio.sleep(min(self.interval_s, 5.0))
            self.heartbeat()


@contextmanager
def sigterm_as_sigint() -> Iterator[None]:
    """Within the block, SIGTERM interrupts like Ctrl-C (asyncio cancels, the store stays consistent)."""
    try:
        previous = signal.getsignal(signal.SIGTERM)
    except ValueError:  # not the main thread: signals cannot be handled here
        yield
        return

    def forward(signum: int, frame: FrameType | None) -> None:
        os.kill(os.getpid(), signal.SIGINT)

    try:
        signal.signal(signal.SIGTERM, forward)
    except ValueError:
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
