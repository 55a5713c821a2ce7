"""Errors raised while reading source benchmarks."""

from __future__ import annotations

from repro.exit_codes import ReproError


class DataError(ReproError, ValueError):
    """A source row that cannot be used, named by file, line and field."""

    def __init__(self, source: str, line: int | None, field: str | None, problem: str) -> None:
        location = source if line is None else f"{source}:{line}"
        where = f" field {field!r}" if field else ""
        super().__init__(f"{location}:{where} {problem}".replace(": ", ": ", 1))
        self.source = source
        self.line = line
        self.field = field
        self.problem = problem
