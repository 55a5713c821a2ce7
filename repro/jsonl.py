"""Reading the small JSONL files users hand to single commands (statement sets, batch proofs, traces).

Every such file fails the same way when lines are bad: one error names every bad line (file, line,
field, reason), so a user fixes them all in one pass, and nothing has been acted on yet. (Benchmark
sources go through :mod:`repro.data`, which can skip bad rows.)
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

_BOM = b"\xef\xbb\xbf"
M = TypeVar("M", bound=BaseModel)


def unknown_field(field: str, known: list[str]) -> str:
    """Why a field is refused: unknown, the close known name if there is one, and the known ones."""
    close = difflib.get_close_matches(field, known, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    listed = f" (a row has {', '.join(known)})" if known else ""
    return f"unknown field{hint}{listed}"


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

    def add_invalid(
        self,
        number: int,
        error: ValidationError,
        *,
        model: type[BaseModel] | None = None,
        missing: dict[str, str] | None = None,
    ) -> None:
        """Every field the row's model refused, each with its reason (``(row)``: the row itself).

        Given the ``model``, an unknown field is named with the close known one (a misspelt
        ``reasoning`` for ``initial_reasoning``) and the fields the row may have; ``missing`` says
        more about a field that is missing than that it is."""
        known = [name for name in (model.model_fields if model else {}) if name != "schema_version"]
        for problem in error.errors():
            field = ".".join(str(part) for part in problem["loc"]) or "(row)"
            reason = problem["msg"]
            if problem["type"] == "missing":
                reason = "missing" + (f": {missing[field]}" if missing and field in missing else "")
            elif problem["type"] == "extra_forbidden":
                reason = unknown_field(field, known)
            self.add(number, reason, field=field)

    def validated(
        self, number: int, model: type[M], row: dict[str, Any], *, missing: dict[str, str] | None = None
    ) -> M | None:
        """The row as ``model``, or None with every refused field recorded (see :meth:`add_invalid`)."""
        try:
            return model.model_validate(row)
        except ValidationError as error:
            self.add_invalid(number, error, model=model, missing=missing)
            return None

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
