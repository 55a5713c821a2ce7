"""What the process is waiting on right now, so a heartbeat can name it.

A hung endpoint shows no progress: no problem finishes, so no progress line is due. Each await on
something outside the process (a model request, a Lean check) registers here for as long as it
waits; the heartbeat of a long command reads :func:`describe` and prints, for example, "waiting on
3 requests to prove model m (openai:http://gpu:8000/v1), the oldest for 95 s".
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_open: dict[int, tuple[str, float]] = {}
_tokens = itertools.count()


@contextmanager
def waiting_on(what: str) -> Iterator[None]:
    """Register one wait (``what`` names the kind: "request to rewrite model m (…)")."""
    token = next(_tokens)
    with _lock:
        _open[token] = (what, time.monotonic())
    try:
        yield
    finally:
        with _lock:
            _open.pop(token, None)


def describe(*, at_least_s: float = 0.0) -> str | None:
    """The waits open for at least ``at_least_s``, grouped by kind, longest first; None when none."""
    now = time.monotonic()
    with _lock:
        waits = list(_open.values())
    grouped: dict[str, list[float]] = {}
    for what, since in waits:
        if now - since >= at_least_s:
            grouped.setdefault(what, []).append(now - since)
    if not grouped:
        return None
    parts = []
    for what, ages in sorted(grouped.items(), key=lambda item: -max(item[1])):
        count = len(ages)
        plural = what if count == 1 else _plural(what)
        parts.append(f"{count} {plural}, the oldest for {max(ages):.0f} s")
    return "waiting on " + "; ".join(parts)


def _plural(what: str) -> str:
    noun, _, rest = what.partition(" ")
    return f"{noun}s {rest}".rstrip()
