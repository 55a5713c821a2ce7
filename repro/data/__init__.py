"""Source benchmark loaders."""

from repro.data.answers import last_boxed_answer, parse_gsm8k_answer
from repro.data.errors import DataError
from repro.data.loaders import (
    LoadReport,
    apply_filters,
    iter_problems,
    iter_seeded_order,
    iter_source,
    load_problems,
    load_source,
    scan_source,
    seeded_order,
)

__all__ = [
    "DataError",
    "LoadReport",
    "apply_filters",
    "iter_problems",
    "iter_seeded_order",
    "iter_source",
    "last_boxed_answer",
    "load_problems",
    "load_source",
    "parse_gsm8k_answer",
    "scan_source",
    "seeded_order",
]
