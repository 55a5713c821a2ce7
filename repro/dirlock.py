"""One writer per run, study or evaluation directory.

Two processes writing one store duplicate model calls and interleave ``run.log``, so every command
that writes a directory holds an exclusive ``flock`` on ``DIR/.repro.lock`` for as long as it runs.
The lock file names the holder (pid, command, start time) so the refusal can say who holds it. The
kernel releases an ``flock`` when its holder dies, even by ``kill -9``: a stale lock file never blocks
a resume. Readers (``status``, ``audit``, ``report``) take no lock; SQLite's WAL lets them read a live run.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from repro.exit_codes import ExitCode, ReproError
from repro.records import utc_now

LOCK_FILENAME = ".repro.lock"


class DirectoryBusyError(ReproError, RuntimeError):
    """Another live process holds the directory; the message names its pid and command."""

    exit_code = ExitCode.unfinished


def _holder(path: Path) -> str:
    try:
        info = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        info = {}
    if not isinstance(info, dict) or "pid" not in info:
        return "another process"
    command = f" ({info['command']})" if info.get("command") else ""
    since = f", since {info['started_at']}" if info.get("started_at") else ""
    return f"process {info['pid']}{command}{since}"


def held_by(directory: Path) -> str | None:
    """Who holds ``directory`` now ("process 123 (repro run), since ..."), or None when no live process does.

    Asks the kernel (a non-blocking lock attempt on the lock file, released at once), never trusts the
    file's text alone: a holder killed with -9 leaves its record behind but no lock.
    """
    path = directory / LOCK_FILENAME
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return _holder(path)
    except OSError:
        return None
    else:
        fcntl.flock(descriptor, fcntl.LOCK_UN)
        return None
    finally:
        os.close(descriptor)


@contextmanager
def hold_directory(directory: Path, *, command: str) -> Iterator[None]:
    """Hold ``directory`` (created if needed) exclusively, or raise :class:`DirectoryBusyError` at once.

    A command that leaves nothing but the lock (it was refused, or failed before writing anything)
    leaves the directory as it found it: a directory it created is removed again, so the corrected
    command finds no half-made directory in its way.
    """
    created = not directory.exists()
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / LOCK_FILENAME
    had_lock = path.exists()
    descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise DirectoryBusyError(
                f"{directory} is in use by {_holder(path)}; wait for it to finish or stop it, then retry"
            ) from None
        record = {"pid": os.getpid(), "command": command, "started_at": utc_now(), "argv": sys.argv[1:]}
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, json.dumps(record).encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(descriptor, 0)
            _leave_as_found(directory, path, created=created, had_lock=had_lock)  # still holding the lock
            fcntl.flock(descriptor, fcntl.LOCK_UN)
    finally:
        os.close(descriptor)


def _leave_as_found(directory: Path, lock: Path, *, created: bool, had_lock: bool) -> None:
    """Remove the lock file (and the directory, if this command made it) when nothing else is there."""
    try:
        if had_lock or [entry.name for entry in directory.iterdir()] != [LOCK_FILENAME]:
            return
        lock.unlink()
        if created:
            directory.rmdir()
    except OSError:
        pass  # a read-only place, or something appeared meanwhile: leave it
