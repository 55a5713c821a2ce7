"""Reading the small JSONL files users hand to single commands (statement sets, batch proofs, traces).

Every such file fails the same way when a line is bad: the error names the file and line, and nothing
has been acted on yet. (Benchmark sources go through :mod:`repro.data`, which can skip bad rows.)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any


def iter_json_objects(path: Path, error: Callable[[str], Exception]) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line; ``error(message)`` is raised for a bad line."""
    with path.open(encoding="utf-8-sig") as handle:  # a UTF-8 BOM is not part of the first row
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as decode_error:
                raise error(f"{path}:{number}: not valid JSON ({decode_error.msg})") from None
            if not isinstance(row, dict):
                raise error(f"{path}:{number}: expected a JSON object, got {type(row).__name__}")
            yield number, row
