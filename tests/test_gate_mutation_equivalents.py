"""The mutation benchmark's reviewed equivalents name mutants that exist (issue 19, section 6).

``benchmarks/gate_mutation.py`` names a mutant by its function, its kind and the source of the node it
changes, so an entry of ``EQUIVALENT`` silently stops matching when that source is rewritten. A stale
entry hides nothing, but the list is what the note reports as "the equivalent ones listed": it must say
what the benchmark actually skips, so a rewrite of a rule is also a review of its equivalents.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def benchmark() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gate_mutation_benchmark", REPO / "benchmarks" / "gate_mutation.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def test_every_reviewed_equivalent_names_a_mutant_of_the_current_code(benchmark: ModuleType) -> None:
    names: set[tuple[str, str]] = set()
    for module in benchmark.DEFAULT_MODULES:
        tree = ast.parse((REPO / module).read_text(encoding="utf-8"))
        for mutant in benchmark.enumerate_mutants(module, tree):
            names.add((module, mutant.name))
            names.add((module, f"{mutant.function} | {mutant.kind}: {mutant.description}"))
    stale = [key for key in benchmark.EQUIVALENT if key not in names]
    assert not stale, f"EQUIVALENT entries that match no mutant (review them against the rewritten code): {stale}"
