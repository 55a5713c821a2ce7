"""The prove stage's levers in a whole run: salvage (on by default) and Lean-feedback rounds.

The world (``tests/pipeline_world.py``) holds near misses salvage rescues, outputs nothing may rescue,
and a proof Lean rejects that one feedback round fixes. Every rescue goes through the same gate.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from repro.app import run, status
from repro.config import build_config
from repro.records import CandidateStatus, ReasonCode, Stage
from repro.store import RunStore
from tests.pipeline_world import world_config

CASES = [
    ("retained", "Level 1", "Algebra"),
    ("restated_target", "Level 1", "Algebra"),
    ("special_token_header", "Level 2", "Algebra"),
    ("repetition_to_limit", "Level 2", "Geometry"),
    ("restated_assumes_conclusion", "Level 2", "Geometry"),
    ("corrupted_wrong_math", "Level 1", "Geometry"),
    ("feedback_fixes", "Level 2", "Algebra"),
]
RESCUED_BY_SALVAGE = {"restated_target", "special_token_header", "repetition_to_limit"}
NOTHING_RESCUES = {"restated_assumes_conclusion", "corrupted_wrong_math"}


def _write_world(tmp_path: Path, cases: list[tuple[str, str, str]]) -> tuple[str, str]:
    dataset = tmp_path / "problems.jsonl"
    dataset.write_text(
        "".join(
            json.dumps(
                {
                    "problem": f"Problem {i} [[case:{case}]]: 3600 threads in 12 bolts. How many per bolt?",
                    "solution": "3600 / 12 = \\boxed{300}",
                    "level": level,
                    "type": kind,
                }
            )
            + "\n"
            for i, (case, level, kind) in enumerate(cases)
        )
    )
    rules = tmp_path / "rules.json"
    message = {
        "severity": "error",
        "pos": {"line": 3, "column": 12},
        "endPos": {"line": 3, "column": 20},
        "data": "unknown identifier 'BADLEMMA'",
    }
    rules.write_text(json.dumps([{"match": "BADLEMMA", "action": "reply", "messages": [message]}]))
    return str(dataset), str(rules)


def _run(tmp_path: Path, cases: list[tuple[str, str, str]], **prove: Any) -> dict[str, Any]:
    dataset, rules = _write_world(tmp_path, cases)
    config = world_config(dataset, prove={"k": 2, "strategy": "parallel", **prove})
    config["retries"] = {"rewrites_per_problem": 1, "formalizations_per_rewrite": 1}
    config["lean"]["factory_options"] = {"rules": rules}
    run(build_config(config), tmp_path / "run")
    with RunStore(tmp_path / "run", create=False) as store:
        by_case = {
            cases[int(c.problem_id.split(":")[1])][0]: (c, store.attempts(candidate_id=c.candidate_id))
            for c in store.candidates()
        }
    return {"by_case": by_case, "run_dir": tmp_path / "run"}


@pytest.fixture(scope="module")
def lever_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _run(tmp_path_factory.mktemp("levers"), CASES, feedback_rounds=1)


@pytest.mark.parametrize("case", sorted(RESCUED_BY_SALVAGE))
def test_near_misses_are_rescued_by_salvage_through_the_gate(lever_run: dict[str, Any], case: str) -> None:
    candidate, attempts = lever_run["by_case"][case]
    assert candidate.status == CandidateStatus.retained and candidate.proof_lever == "salvage"
    assert all(a.status.value == "rejected" for a in attempts if a.stage == Stage.verify)
    salvaged = [a for a in attempts if a.stage == Stage.salvage]
    passed = [a for a in salvaged if a.status.value == "passed"]
    assert len(passed) == 1 and passed[-1] is salvaged[-1], "salvage stops at the first verified variant"
    record = passed[0].output
    assert record["salvage_kinds"] and record["real_lean"] is False
    # the salvaged text is what was verified and kept; the original sample stays in its prove attempt
    assert candidate.lean_proof == record["text"] and candidate.verified_code == record["checked_code"]
    assert record["of_attempt"] in {a.attempt_number for a in attempts if a.stage == Stage.prove}
    assert "x / 12 = 300 := by" in candidate.verified_code and "<|" not in candidate.verified_code


def test_a_corrupted_header_is_rescued_by_re_splicing_our_statement(lever_run: dict[str, Any]) -> None:
    candidate, attempts = lever_run["by_case"]["special_token_header"]
    kinds = next(a.output["salvage_kinds"] for a in attempts if a.stage == Stage.salvage and a.status.value == "passed")
    assert kinds == ["special_tokens", "respliced_statement"]
    _, repeated = lever_run["by_case"]["repetition_to_limit"]
    kinds = next(a.output["salvage_kinds"] for a in repeated if a.stage == Stage.salvage and a.status.value == "passed")
    assert kinds[0] == "closed_fence" and "repetition" in kinds


@pytest.mark.parametrize("case", sorted(NOTHING_RESCUES))
def test_outputs_nothing_may_rescue_stay_rejected(lever_run: dict[str, Any], case: str) -> None:
    candidate, attempts = lever_run["by_case"][case]
    assert candidate.status == CandidateStatus.rejected and candidate.reject_reason == ReasonCode.proof_not_found
    salvaged = [a for a in attempts if a.stage == Stage.salvage]
    assert salvaged, "salvage was tried"
    assert all(a.status.value == "rejected" and a.reason == ReasonCode.lean_error for a in salvaged)


def test_a_feedback_round_repairs_a_proof_lean_rejected(lever_run: dict[str, Any]) -> None:
    candidate, attempts = lever_run["by_case"]["feedback_fixes"]
    assert candidate.status == CandidateStatus.retained and candidate.proof_lever == "feedback"
    rounds = [a for a in attempts if a.stage == Stage.feedback]
    assert rounds[-1].status.value == "passed" and rounds[-1].output["feedback_round"] == 1
    assert rounds[-1].output["feedback_style"] == "generic" and rounds[-1].model_calls == 1
    assert rounds[-1].output["of_attempt"] in {a.attempt_number for a in attempts if a.stage == Stage.verify}
    assert "BADLEMMA" not in (candidate.verified_code or "")


def test_status_reports_the_rate_without_levers_with_salvage_and_with_feedback(lever_run: dict[str, Any]) -> None:
    rates = status(lever_run["run_dir"])["rates"]
    levers = rates["levers"]
    n = len(CASES)
    assert levers["retained"] == {"none": 1, "salvage": 3, "feedback": 1}
    assert levers["rate"] == {"none": round(1 / n, 4), "salvage": round(4 / n, 4), "feedback": round(5 / n, 4)}
    assert levers["rate"]["feedback"] == rates["generation_rate"]
    # Level 2: special_token_header (salvage), repetition_to_limit (salvage), feedback_fixes (feedback), one lost
    assert levers["by_level"]["Level 2"] == {"none": 0.0, "salvage": 0.5, "feedback": 0.75}
    assert levers["by_type"]["Geometry"] == {"none": 0.0, "salvage": round(1 / 3, 4), "feedback": round(1 / 3, 4)}
    cost = levers["cost"]
    assert cost["salvage"]["verified"] == 3 and cost["salvage"]["model_calls"] == 0
    assert cost["feedback"]["attempts"] >= 1 and cost["feedback"]["model_calls"] >= 1
    # pass@j is the prover's own samples over the formal statements it was given (one per case): the
    # rescued proofs are not in it
    assert rates["pass_at"]["statements"] == n
    assert rates["pass_at"]["values"]["pass@2"] == round(1 / n, 4)


def test_salvage_off_keeps_the_near_misses_rejected(tmp_path: Path) -> None:
    outcome = _run(tmp_path, [CASES[2], CASES[3]], salvage=False)
    for case in ("special_token_header", "repetition_to_limit"):
        candidate, attempts = outcome["by_case"][case]
        assert candidate.status == CandidateStatus.rejected
        assert not [a for a in attempts if a.stage in (Stage.salvage, Stage.feedback)]
