"""Reading the small JSONL files users hand to single commands (statement sets, batch proofs, traces).

Every such file fails the same way when lines are bad: one error names every bad line (file, line,
field, reason), so a user fixes them all in one pass, and nothing has been acted on yet. (Benchmark
sources go through :mod:`repro.data`, which can skip bad rows.)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

_BOM = b"\xef\xbb\xbf"


class BadRows:
    """Every bad row of one input file, raised together as one error once the whole file was read.

    A reader records each problem with :meth:`add` and keeps reading; :meth:`raise_if_any` ends the
    read with ``error(message)``, whose message lists every row as ``FILE:LINE: field 'F': reason``.
    """

    def __init__(self, path: Path, error: Callable[[str], Exception]) -> None:
        self.path = path
        self._error = error
        self.lines: list[str] = []
        self.numbers: set[int] = set()
        self._first_lines: dict[str, int] = {}

    def add(self, number: int, reason: str, *, field: str | None = None) -> None:
        where = f"field {field!r}: " if field else ""
        self.lines.append(f"{self.path}:{number}: {where}{reason}")
        self.numbers.add(number)

    def add_invalid(self, number: int, error: ValidationError) -> None:
        """Every field the row's model refused, each with pydantic's reason (``(row)``: the row itself)."""
        for problem in error.errors():
            self.add(number, problem["msg"], field=".".join(str(part) for part in problem["loc"]) or "(row)")

    def first_use(self, number: int, row_id: str) -> bool:
        """True the first time ``row_id`` is met; a repeat is recorded as bad, naming the line of its first use."""
        first = self._first_lines.setdefault(row_id, number)
        if first != number:
            self.add(number, f"{row_id!r} already used on line {first}", field="id")
            return False
        return True

    def __contains__(self, number: int) -> bool:
        return number in self.numbers

    def raise_if_any(self) -> None:
        if not self.lines:
            return
        if len(self.lines) == 1:
            raise self._error(self.lines[0])
        rows = len(self.numbers)
        heading = f"{self.path}: {rows} bad rows ({len(self.lines)} problems); nothing was done"
        raise self._error("\n".join([heading, *(f"  {line}" for line in self.lines)]))


def iter_json_objects(
    path: Path, error: Callable[[str], Exception], *, bad: BadRows | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line.

    A line that is not a JSON object raises ``error(message)`` at once, or, given ``bad``, is recorded
    there and skipped so the caller can name every bad line of the file together.
    """
    with path.open("rb") as handle:  # decoded per line, so a line that is not UTF-8 is named, not the file
        for number, raw in enumerate(handle, start=1):
            if number == 1 and raw.startswith(_BOM):  # a UTF-8 BOM is not part of the first row
                raw = raw[len(_BOM) :]
            row, problem = _parse(raw)
            if problem is None and row is None:
                continue  # a blank line
            if isinstance(row, dict):
                yield number, row
                continue
            if bad is None:
                raise error(f"{path}:{number}: {problem}")
            bad.add(number, problem or "not a JSON object")


def _parse(raw: bytes) -> tuple[object, str | None]:
    """(value, None) for a JSON line, (None, None) for a blank one, (None, why) for a bad one."""
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return None, f"not UTF-8 (byte {error.start + 1})"
    if not line.strip():
        return None, None
    try:
        value = json.loads(line)
    except json.JSONDecodeError as error:
        return None, f"not valid JSON ({error.msg})"
    if not isinstance(value, dict):
        return None, f"expected a JSON object, got {type(value).__name__}"
    return value, None
