"""What the process is waiting on right now, so a heartbeat can name it.

A hung endpoint shows no progress: no problem finishes, so no progress line is due. Each await on
something outside the process (a model request, a Lean check) registers here for as long as it
waits; the heartbeat of a long command reads :func:`describe` and prints, for example, "waiting on
3 requests to prove model m (openai:http://gpu:8000/v1), the oldest for 95 s".

A Lean check is named by what it checks: the pipeline says, with :func:`about`, which candidate the
current task works on, and the heartbeat lists the checks in flight by it, oldest first ("2 Lean
checks (lean-interact-repl), the oldest for 120 s: gsm8k-9#r0 120 s, gsm8k-10#r1 41 s"). The
subject is a context variable, so each asyncio task (one per problem) carries its own.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

_lock = threading.Lock()
_open: dict[int, tuple[str, float, str | None]] = {}
_tokens = itertools.count()
_subject: ContextVar[str | None] = ContextVar("repro_waiting_subject", default=None)
# how many waits of one kind a heartbeat names, oldest first; the rest are counted
NAMED_PER_KIND = 5


@contextmanager
def about(subject: str) -> Iterator[None]:
    """Within the block (and the tasks it starts), named waits are for ``subject`` (a candidate id)."""
    token = _subject.set(subject)
    try:
        yield
    finally:
        _subject.reset(token)


def current_subject() -> str | None:
    """What the current task works on (the candidate id :func:`about` set), if anything."""
    return _subject.get()


@contextmanager
def waiting_on(what: str, *, named: bool = False) -> Iterator[None]:
    """Register one wait (``what`` names the kind: "request to rewrite model m (…)"); with ``named``,
    the heartbeat also names the subject the current task works on (see :func:`about`)."""
    token = next(_tokens)
    with _lock:
        _open[token] = (what, time.monotonic(), _subject.get() if named else None)
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
    grouped: dict[str, list[tuple[float, str | None]]] = {}
    for what, since, subject in waits:
        if now - since >= at_least_s:
            grouped.setdefault(what, []).append((now - since, subject))
    if not grouped:
        return None
    parts = []
    for what, entries in sorted(grouped.items(), key=lambda item: -max(age for age, _ in item[1])):
        count = len(entries)
        plural = what if count == 1 else _plural(what)
        part = f"{count} {plural}, the oldest for {max(age for age, _ in entries):.0f} s"
        named = sorted(((age, subject) for age, subject in entries if subject), key=lambda entry: -entry[0])
        if named:
            shown = ", ".join(f"{subject} {age:.0f} s" for age, subject in named[:NAMED_PER_KIND])
            more = len(named) - NAMED_PER_KIND
            part += f": {shown}" + (f" and {more} more" if more > 0 else "")
        parts.append(part)
    return "waiting on " + "; ".join(parts)


def _plural(what: str) -> str:
    noun, _, rest = what.partition(" ")
    return f"{noun}s {rest}".rstrip()
