"""``repro status``: pass@j over formal statements, the unbiased estimator when the k samples were drawn at once,
the first success index when sampling stopped at the first pass."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repro.app import run, status
from repro.config import build_config
from repro.study import FIRST_SUCCESS, UNBIASED
from tests.pipeline_world import world_config


def _run(tmp_path: Path, strategy: str) -> dict[str, float | None]:
    dataset = tmp_path / "problems.jsonl"
    rows = [
        {"question": f"Problem {i} [[case:{case}]]: 3600 threads in 12 bolts. How many per bolt?", "answer": "#### 300"}
        for i, case in enumerate(["second_attempt", "retained"])
    ]
    dataset.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    config = world_config(str(dataset), prove={"k": 3, "strategy": strategy})
    run(build_config(config), tmp_path / strategy)
    pass_at = status(tmp_path / strategy)["rates"]["pass_at"]
    assert pass_at["statements"] == 2 and "over 2 formal statements" in pass_at["label"]
    return {"estimator": pass_at["estimator"], **pass_at["values"]}


def test_all_k_drawn_gives_the_unbiased_estimator(tmp_path: Path) -> None:
    # second_attempt: samples [sorry, good, good] -> c = 2 of 3: pass@1 = 2/3, pass@2 = 1 - C(1,2)/C(3,2) = 1
    # retained: 3 of 3 -> 1 everywhere; averaged over the 2 problems
    rates = _run(tmp_path, "parallel")
    assert rates["estimator"] == UNBIASED
    assert rates["pass@1"] == pytest.approx((2 / 3 + 1) / 2, abs=1e-4)
    assert rates["pass@2"] == rates["pass@3"] == 1.0


def test_sequential_early_stop_reports_the_first_success_index(tmp_path: Path) -> None:
    # second_attempt's first verified sample is its second: it counts from j = 2; retained counts from j = 1
    rates = _run(tmp_path, "sequential")
    assert rates["estimator"] == FIRST_SUCCESS
    assert (rates["pass@1"], rates["pass@2"], rates["pass@3"]) == (0.5, 1.0, 1.0)
