"""A time limit for the static layer that the readers themselves honour.

The static layer runs in a worker thread, off the event loop. A thread cannot be stopped from
outside, and a limit measured by the caller would count the time a reply waited for a free thread;
so the limit starts when the reading starts, and the lexer, the fence finder and the policy check it
every few thousand steps and raise :class:`StaticTimeout`. The gate reports that as its own reason,
never as a verdict.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

_STATE = threading.local()


class StaticTimeout(Exception):
    """The static layer ran past its time limit."""


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Within the block (in this thread), :func:`check_time` raises once ``seconds`` have passed."""
    previous = getattr(_STATE, "deadline", None)
    _STATE.deadline = None if seconds is None else time.monotonic() + seconds
    try:
        yield
    finally:
        _STATE.deadline = previous


def check_time() -> None:
    deadline = getattr(_STATE, "deadline", None)
    if deadline is not None and time.monotonic() > deadline:
        raise StaticTimeout
