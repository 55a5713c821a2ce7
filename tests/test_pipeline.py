from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from repro.app import audit, run, status
from repro.config import build_config
from repro.records import CandidateStatus, ReasonCode, Stage
from repro.release import write_release
from repro.store import RunStore
from tests.pipeline_world import screen_outage, world_config, write_problems

REPO = Path(__file__).resolve().parents[1]
CASES = [
    "retained",
    "rewrite_invalid_json",
    "infeasible",
    "no_lean_block",
    "compile_error",
    "semantic_mismatch",
    "mismatch_then_regenerated",
    "second_attempt",
    "restated_target",
    "extraction_not_in_proof",
    "intermediate",
]


def rules_file(tmp_path: Path) -> str:
    path = tmp_path / "rules.json"
    path.write_text(
        json.dumps(
            [
                {
                    "match": "BADSTMT",
                    "action": "reply",
                    "messages": [
                        {
                            "severity": "error",
                            "pos": {"line": 1, "column": 40},
                            "endPos": {"line": 1, "column": 47},
                            "data": "unknown identifier 'BADSTMT'",
                        }
                    ],
                }
            ]
        )
    )
    return str(path)


@pytest.fixture(scope="module")
def world_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp_path = tmp_path_factory.mktemp("world")
    dataset = write_problems(tmp_path / "problems.jsonl", CASES)
    config = world_config(str(dataset))
    config["lean"]["factory_options"] = {"rules": rules_file(tmp_path)}
    outcome = run(build_config(config), tmp_path / "run")
    store = RunStore(tmp_path / "run", create=False)
    by_case = {}
    for candidate in store.candidates():
        index = int(candidate.problem_id.split(":")[1])
        by_case[CASES[index]] = (candidate, store.attempts(candidate_id=candidate.candidate_id))
    store.close()
    return {"outcome": outcome, "by_case": by_case, "run_dir": tmp_path / "run"}


def test_a_clean_problem_is_retained_with_its_answer_read_from_the_proof(world_run: dict[str, Any]) -> None:
    candidate, attempts = world_run["by_case"]["retained"]
    assert candidate.status == CandidateStatus.retained
    assert candidate.new_answer == "300" and candidate.answer_class == "final"
    assert candidate.verified_code and "x / 12 = 300 := by" in candidate.verified_code
    assert candidate.verifier_backend == "fake-repl" and candidate.verifier_is_real_lean is False
    assert candidate.answer_disagrees_with_screener is False
    assert [a.stage for a in attempts if a.stage in (Stage.rewrite, Stage.screen, Stage.answer)] == [
        Stage.rewrite,
        Stage.screen,
        Stage.answer,
    ]


@pytest.mark.parametrize(
    ("case", "stage", "reason"),
    [
        ("rewrite_invalid_json", Stage.rewrite, ReasonCode.rewrite_invalid_json),
        ("infeasible", Stage.screen, ReasonCode.infeasible),
        ("no_lean_block", Stage.formalize, ReasonCode.no_lean_block),
        ("compile_error", Stage.formalize, ReasonCode.formalization_compile_error),
        ("semantic_mismatch", Stage.align, ReasonCode.semantic_mismatch),
        ("extraction_not_in_proof", Stage.answer, ReasonCode.answer_not_grounded),
        ("intermediate", Stage.answer, ReasonCode.answer_not_final),
    ],
)
def test_each_rejection_is_kept_with_its_stage_and_reason(
    world_run: dict[str, Any], case: str, stage: Stage, reason: ReasonCode
) -> None:
    candidate, attempts = world_run["by_case"][case]
    assert candidate.status == CandidateStatus.rejected
    assert (candidate.reject_stage, candidate.reject_reason) == (stage, reason)
    assert attempts, "every attempt is stored"


def test_formalization_failures_regenerate_up_to_the_limit(world_run: dict[str, Any]) -> None:
    _, attempts = world_run["by_case"]["semantic_mismatch"]
    assert [a.attempt_number for a in attempts if a.stage == Stage.formalize] == [0, 1]
    assert all(a.reason == ReasonCode.semantic_mismatch for a in attempts if a.stage == Stage.align)


def test_a_semantic_mismatch_regenerates_the_formalization(world_run: dict[str, Any]) -> None:
    candidate, attempts = world_run["by_case"]["mismatch_then_regenerated"]
    aligns = [a for a in attempts if a.stage == Stage.align]
    assert [a.reason for a in aligns] == [ReasonCode.semantic_mismatch, None]
    assert aligns[0].output["verdicts"] == ["Inconsistent"] * 3 and aligns[1].output["verdicts"] == ["Consistent"] * 3
    assert candidate.status == CandidateStatus.retained


def test_a_proof_found_on_the_second_attempt(world_run: dict[str, Any]) -> None:
    candidate, attempts = world_run["by_case"]["second_attempt"]
    verifies = [a for a in attempts if a.stage == Stage.verify]
    assert [a.status.value for a in verifies] == ["rejected", "passed", "passed"]
    assert verifies[0].reason == ReasonCode.forbidden_construct
    assert candidate.proof_attempt_number == 1 and candidate.status == CandidateStatus.retained
    proves = [a for a in attempts if a.stage == Stage.prove]
    assert [a.output["finish_reason"] for a in proves] == ["stop"] * 3 and "sorry" in proves[0].output["text"]


def test_pass_at_j_accounting_reflects_the_second_attempt(world_run: dict[str, Any]) -> None:
    rates = status(world_run["run_dir"])["rates"]
    retained = {"retained", "mismatch_then_regenerated", "second_attempt"}
    # restated_target is retained too, by salvage (our statement re-spliced onto its body): pass@j counts
    # only the prover's own samples
    assert rates["retained"] == len(retained) + 1 and rates["drawn"] == len(CASES)
    pass_at = rates["pass_at"]
    # over the formal statements the prover was given: the three retained by their samples, restated_target
    # (0 of 3: its proof came from salvage), extraction_not_in_proof and intermediate (3 of 3, rejected later)
    assert pass_at["statements"] == 6 and pass_at["estimator"].startswith("unbiased")
    at = pass_at["values"]
    # unbiased estimator (all k = 3 drawn): second_attempt verified 2 of 3 samples (pass@1 = 2/3)
    assert at["pass@1"] == round((4 + 2 / 3) / 6, 4)
    assert at["pass@2"] == at["pass@3"] == round(5 / 6, 4)


def test_a_restated_target_is_rejected_by_the_gate(world_run: dict[str, Any]) -> None:
    candidate, attempts = world_run["by_case"]["restated_target"]
    # salvage then re-spliced our statement onto the prover's body, which proves it
    assert candidate.status == CandidateStatus.retained and candidate.proof_lever == "salvage"
    verifies = [a for a in attempts if a.stage == Stage.verify]
    assert verifies and all(a.reason == ReasonCode.statement_mismatch for a in verifies)
    assert all("target_corruption" in a.taxonomy for a in verifies)
    # Lean's bridge (our statement, elaborated before the prover's code) refused the restated theorem
    assert all(a.output["prover_statement_matches"] is False for a in verifies)
    assert all(any("type of our statement" in d for d in a.output["details"]) for a in verifies)


def test_audit_filters_by_stage_and_reason(world_run: dict[str, Any]) -> None:
    rows = audit(world_run["run_dir"], stage="verify", reason="statement_mismatch")
    # one row per rejected attempt: every prover sample of the restated-target case, each with its evidence
    assert rows and {row["candidate_id"] for row in rows} == {world_run["by_case"]["restated_target"][0].candidate_id}
    assert all(row["reject_reason"] == "statement_mismatch" and row["prover_output"] for row in rows)
    compile_rows = audit(world_run["run_dir"], reason="formalization_compile_error")
    assert compile_rows[0]["lean_messages"][0]["text"] == "unknown identifier 'BADSTMT'"


def test_release_withholds_fake_lean_rows_unless_allowed(world_run: dict[str, Any], tmp_path: Path) -> None:
    assert write_release(world_run["run_dir"], tmp_path / "strict").written == 0
    summary = write_release(world_run["run_dir"], tmp_path / "loose", allow_unverified=True)
    assert summary.written == 4 and summary.unverified == 4


def test_target_keeps_drawing_until_enough_are_retained(tmp_path: Path) -> None:
    cases = ["infeasible", "retained", "infeasible", "retained", "retained", "infeasible", "retained"] * 3
    dataset = write_problems(tmp_path / "p.jsonl", cases)
    config = world_config(str(dataset), target=3, problems_in_flight=1)
    outcome = run(build_config(config), tmp_path / "run")
    rates = outcome.metrics["rates"]
    assert rates["retained"] == 3 and rates["drawn"] < len(cases)
    assert rates["generation_rate"] == round(3 / rates["drawn"], 4)


def _normalized_store(run_dir: Path) -> dict[str, Any]:
    store = RunStore(run_dir, create=False)
    try:
        attempts = sorted(
            (
                a.candidate_id,
                a.stage.value,
                a.attempt_number,
                a.status.value,
                a.reason,
                json.dumps(a.output, sort_keys=True),
            )
            for a in store.attempts()
        )
        candidates = sorted(c.model_dump_json() for c in store.candidates())
        calls = [c for c in store.model_calls() if not c.cache_hit]
        return {
            "attempts": attempts,
            "candidates": candidates,
            "fresh_calls": len(calls),
            "fresh_keys": sorted(c.cache_key for c in calls),
        }
    finally:
        store.close()


def _release_rows(run_dir: Path, out: Path) -> list[dict[str, Any]]:
    write_release(run_dir, out, allow_unverified=True)
    rows = [json.loads(line) for line in (out / "data" / "test.jsonl").read_text().splitlines()]
    for row in rows:
        row["provenance"].pop("released_at")
    return rows


def test_kill_9_and_resume_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    cases = ["retained", "second_attempt", "infeasible", "semantic_mismatch", "intermediate"] * 60
    dataset = write_problems(tmp_path / "p.jsonl", cases)
    config_path = tmp_path / "world.yaml"
    config_path.write_text(yaml.safe_dump(world_config(str(dataset), problems_in_flight=8)))
    command = [sys.executable, "-m", "repro.cli", "run", "--config", str(config_path), "--run-dir"]
    environment = {**os.environ, "PYTHONPATH": str(REPO)}

    subprocess.run([*command, str(tmp_path / "clean")], cwd=REPO, env=environment, check=True, capture_output=True)

    killed = subprocess.Popen(
        [*command, str(tmp_path / "killed")],
        cwd=REPO,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    store_file = tmp_path / "killed" / "run.sqlite"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if store_file.exists():
            with RunStore(tmp_path / "killed", create=False) as store:
                if sum(1 for v in store.problem_outcomes().values() if v) >= 60:
                    break
        time.sleep(0.1)
    os.kill(killed.pid, signal.SIGKILL)
    killed.wait()
    with RunStore(tmp_path / "killed", create=False) as store:
        finished_before = sum(1 for v in store.problem_outcomes().values() if v)
    assert 0 < finished_before < len(cases), "the kill landed mid-run"

    resumed = subprocess.run(
        [*command, str(tmp_path / "killed"), "--resume"], cwd=REPO, env=environment, capture_output=True, text=True
    )
    assert resumed.returncode == 0, resumed.stderr

    clean, recovered = _normalized_store(tmp_path / "clean"), _normalized_store(tmp_path / "killed")
    assert recovered["attempts"] == clean["attempts"]
    assert recovered["candidates"] == clean["candidates"]
    assert recovered["fresh_calls"] == clean["fresh_calls"], "no model call was repeated"
    assert len(set(recovered["fresh_keys"])) == len(recovered["fresh_keys"])
    assert _release_rows(tmp_path / "killed", tmp_path / "r1") == _release_rows(tmp_path / "clean", tmp_path / "r2")


def test_an_endpoint_outage_leaves_problems_for_resume_instead_of_rejecting_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flag = screen_outage(monkeypatch, tmp_path)
    dataset = write_problems(tmp_path / "p.jsonl", ["retained"] * 4)
    first = run(build_config(world_config(str(dataset))), tmp_path / "run")
    assert (first.summary.incomplete, first.summary.rejected, first.summary.retained) == (4, 0, 0)
    rows = audit(tmp_path / "run", reason="model_call_failed")
    assert rows and "simulated outage" in json.dumps(rows)
    flag.unlink()
    resumed = run(None, tmp_path / "run", resume=True)
    assert resumed.summary.retained == 4 and resumed.metrics["rates"]["retained"] == 4
