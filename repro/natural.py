"""Natural order of ids (``cand-2`` before ``cand-10``, ``gsm8k-9#r0`` before ``gsm8k-10#r0``).

Ids are stored exactly as the source or the pipeline wrote them; only the order in which they are
listed to a user changes. The key is a plain string, so Python's ``sorted`` and SQLite's default
(binary) comparison agree on it: SQLite computes it once per row through the ``natural_key`` SQL
function (:func:`register`), and its sorter then compares bytes, never calling back into Python.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterable
from typing import TypeVar

_DIGITS = re.compile(r"[0-9]+")  # ASCII digits only: other scripts' digits stay text

T = TypeVar("T")


def _encoded_number(match: re.Match[str]) -> str:
    """A digit run as a string that sorts by numeric value: its length's length, its length, then
    its digits (leading zeros dropped). Every character is a digit, so the run still compares with
    the text around it as digits do."""
    digits = match.group().lstrip("0") or "0"
    length = str(len(digits))
    return f"{len(length)}{length}{digits}"


def natural_key(text: str) -> str:
    """The sort key of ``text``: every run of ASCII digits compares by its value.

    Two ids differing only in leading zeros (``a7``, ``a007``) share a key; callers that need a total
    order add the id itself as a second key (:func:`natural_sorted` does).
    """
    return _DIGITS.sub(_encoded_number, text)


def natural_sorted(items: Iterable[T], key: Callable[[T], str] | None = None) -> list[T]:
    """``items`` in natural order of ``key(item)`` (the item itself when it is a string)."""

    def text(item: T) -> str:
        return key(item) if key is not None else str(item)

    return sorted(items, key=lambda item: (natural_key(text(item)), text(item)))


def register(connection: sqlite3.Connection) -> sqlite3.Connection:
    """Make ``natural_key(text)`` callable in SQL on this connection (deterministic, so SQLite may
    compute it once per row)."""
    connection.create_function("natural_key", 1, _sql_natural_key, deterministic=True)
    return connection


def _sql_natural_key(value: str | bytes | int | float | None) -> str | bytes | int | float | None:
    return natural_key(value) if isinstance(value, str) else value
