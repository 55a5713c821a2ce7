"""Statement export from a run, and ``repro run --resume --reprove-with STUDY_DIR``."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from repro.app import RunError, run
from repro.config import DEFAULT_HEADER, JudgeSettings, LeanSettings, build_config
from repro.judge.verdict import JudgeStatus, JudgeVerdict
from repro.metrics import generation_rates, lever_lines
from repro.records import CandidateStatus, ReasonCode, Stage
from repro.release import write_release
from repro.store import RunStore
from repro.study import (
    SampleOutcome,
    StudySettings,
    export_statements,
    parse_prover_spec,
    prove_study,
    read_statements,
    reusable,
    study_proofs,
    write_statements,
)
from tests.doubles.judge import DOWN_FLAG, STAND_IN_SETTINGS
from tests.pipeline_world import world_config

CASES = ["retained", "restated_target", "restated_target"]


def _fresh_calls(run_dir: Path) -> Counter[str]:
    with RunStore(run_dir, create=False) as store:
        return Counter(call.stage for call in store.model_calls() if not call.cache_hit)


@pytest.fixture(scope="module")
def failed_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run whose prover restates the target for problems 1 and 2: both rejected at prove (salvage off:
    re-splicing our statement onto the restated body would rescue them, see tests/test_levers.py)."""
    directory = tmp_path_factory.mktemp("reprove")
    dataset = directory / "problems.jsonl"
    rows = [
        {"question": f"Problem {i} [[case:{case}]]: 3600 threads in 12 bolts. How many per bolt?", "answer": "#### 300"}
        for i, case in enumerate(CASES)
    ]
    dataset.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    config = world_config(str(dataset), prove={"k": 3, "strategy": "parallel", "salvage": False})
    run(build_config(config), directory / "run")
    return directory / "run"


def test_statements_export_every_aligned_candidate(failed_run: Path, tmp_path: Path) -> None:
    written, _ = export_statements(failed_run, tmp_path / "statements.jsonl")
    rows = read_statements(tmp_path / "statements.jsonl")
    # the retained problem aligned once; each rejected one aligned in both formalization rounds, but the world's
    # formalizer wrote the same statement twice, and an identical statement is exported once
    assert written == len(rows) == 3
    assert sorted(row.id for row in rows) == ["world:0#r0/f0", "world:1#r0/f0", "world:2#r0/f0"]
    with RunStore(failed_run, create=False) as store:
        candidates = {c.candidate_id: c for c in store.candidates()}
    for row in rows:
        candidate = candidates[row.id.rsplit("/", 1)[0]]
        assert row.statement == candidate.lean_statement and row.theorem_name == candidate.theorem_name
        assert row.header == DEFAULT_HEADER and row.run == "world" and row.source_dataset == "world"
        assert row.question == candidate.rewritten_question


def test_statement_commands_on_the_command_line(failed_run: Path, tmp_path: Path) -> None:
    from repro.cli import main

    assert main(["statements", str(failed_run), "--out", str(tmp_path / "s.jsonl")]) == 0
    assert len(read_statements(tmp_path / "s.jsonl")) == 3
    bad = tmp_path / "bad.jsonl"
    bad.write_text((tmp_path / "s.jsonl").read_text() + '{"id": "x"}\n')
    arguments = ["prove-study", str(bad), "--prover", "p=m@http://127.0.0.1:9/v1", "--study-dir", str(tmp_path / "st")]
    assert main(arguments) == 2
    assert not (tmp_path / "st" / "study.sqlite").exists()
    assert main(["study-report", str(tmp_path / "missing")]) == 2


def _study(tmp_path: Path, statements: Path, judge: JudgeSettings = STAND_IN_SETTINGS) -> Path:
    prover = tmp_path / "prover.yaml"
    prover.write_text("backend: scripted\nmodel: statement-prover\nscript: tests.study_world:statement_prover\n")
    settings = StudySettings(k=2, lean=LeanSettings(backend="fake", workers=1), judge=judge)
    prove_study(
        tmp_path / "study",
        statements_path=statements,
        provers=[parse_prover_spec(f"good={prover}")],
        settings=settings,
    )
    return tmp_path / "study"


def test_a_failed_run_retains_candidates_from_a_study_without_new_upstream_calls(
    failed_run: Path, tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    _copy_run(failed_run, run_dir)
    export_statements(run_dir, tmp_path / "statements.jsonl")
    rows = read_statements(tmp_path / "statements.jsonl")
    altered = []
    for row in rows:
        if row.id.startswith("world:2#"):
            # problem 2: the study proves a different statement text (a statement file's own header is no longer
            # one: the study checks it against, and runs, its trusted header: test_data_headers_are_not_trusted.py)
            altered.append(row.model_copy(update={"statement": row.statement.replace("= 300", "= 300 + 0")}))
        else:
            altered.append(row)
    write_statements(altered, tmp_path / "study_statements.jsonl")
    study = _study(tmp_path, tmp_path / "study_statements.jsonl")
    before = _fresh_calls(run_dir)

    outcome = run(None, run_dir, resume=True, reprove_with=study)

    after = _fresh_calls(run_dir)
    for stage in ("rewrite", "screen", "formalize", "align", "prove"):
        assert after[stage] == before[stage], f"a new {stage} call was made"
    with RunStore(run_dir, create=False) as store:
        by_problem = {c.problem_id: c for c in store.candidates()}
        outcomes = store.problem_outcomes()
        reused_attempts = [a for a in store.attempts(stage=Stage.prove.value) if a.output.get("reused_from_study")]
    assert outcome.summary.retained == 2 and outcomes["world:1"] == "retained"
    rescued = by_problem["world:1"]
    assert rescued.status == CandidateStatus.retained and rescued.new_answer == "300"
    assert rescued.models["prove"] == "statement-prover" and rescued.backends["prove"] == "study:good"
    assert rescued.verifier_is_real_lean is False  # the study and this run used the fake REPL
    # a proof verified for another text is never reused
    assert by_problem["world:2"].status == CandidateStatus.rejected and outcomes["world:2"] == "rejected"
    assert {a.candidate_id for a in reused_attempts} == {"world:1#r0"}
    # the study's proof is in no lever's rate, and counted apart so the lever figures add up
    with RunStore(run_dir, create=False) as store:
        levers = generation_rates(store, k=1)["levers"]
    assert levers["from_study"] == 1 and sum(levers["retained"].values()) == outcome.summary.retained - 1
    assert any("from a prove-study 1" in line for line in lever_lines(levers))

    summary = write_release(run_dir, tmp_path / "release")
    assert summary.written == 0 and summary.withheld_unverified == 2, "fake-Lean proofs never release as verified"
    write_release(run_dir, tmp_path / "release_all", allow_unverified=True)
    released = {
        row["instance_id"]: row
        for row in map(json.loads, (tmp_path / "release_all" / "data" / "test.jsonl").read_text().splitlines())
    }
    provenance = released["world:1#r0"]["provenance"]
    assert {"stage": "prove", "model": "statement-prover", "backend": "study:good"} in [
        {key: model[key] for key in ("stage", "model", "backend")} for model in provenance["models"]
    ]
    assert released["world:1#r0"]["unverified"] is True
    # the rescued row is not counted as this run's prover's own sample
    assert provenance["proof_lever"] == "study"
    assert "- study: 1 of 2 rows" in (tmp_path / "release_all" / "README.md").read_text(encoding="utf-8")


def test_only_judged_study_proofs_feed_a_run_and_stand_in_ones_never_a_real_one() -> None:
    sample: dict[str, Any] = {
        "prover": "p",
        "statement_id": "s",
        "sample_index": 0,
        "text": "t",
        "finish_reason": "stop",
    }

    def judge(status: JudgeStatus, *, real: bool) -> JudgeVerdict:
        return JudgeVerdict(key="s", status=status, tool="SafeVerify" if real else "stand-in", real=real)

    passed, stand_in = judge(JudgeStatus.passed, real=True), judge(JudgeStatus.passed, real=False)
    fake = SampleOutcome(**sample, judged=True, verified=True, screened=True, real_lean=False, judge=stand_in)
    real = SampleOutcome(**sample, judged=True, verified=True, screened=True, real_lean=True, judge=passed)
    real_lean_stand_in_judge = SampleOutcome(
        **sample, judged=True, verified=True, screened=True, real_lean=True, judge=stand_in
    )
    failed = SampleOutcome(**sample, judged=True, verified=False, real_lean=True)
    rejected = SampleOutcome(
        **sample, judged=True, screened=True, real_lean=True, judge=judge(JudgeStatus.rejected, real=True)
    )
    # what a study stored before the judge existed: the screen's "yes" only, never judged
    screened_only = SampleOutcome(**sample, judged=True, verified=True, screened=True, real_lean=True)
    assert not reusable(fake, run_uses_real_lean=True)
    assert reusable(fake, run_uses_real_lean=False)  # a fake run (test, demo) stays unverified downstream
    assert reusable(real, run_uses_real_lean=True)
    assert not reusable(real_lean_stand_in_judge, run_uses_real_lean=True)
    for never in (failed, rejected, screened_only):
        assert not reusable(never, run_uses_real_lean=True) and not reusable(never, run_uses_real_lean=False)


def test_reprove_with_needs_resume_and_a_study(failed_run: Path, tmp_path: Path) -> None:
    with pytest.raises(RunError, match="needs --resume"):
        run(None, failed_run, reprove_with=tmp_path)
    with pytest.raises(RunError, match="not a study directory"):
        run(None, failed_run, resume=True, reprove_with=tmp_path)


def _copy_run(source: Path, target: Path) -> None:
    import shutil
    import sqlite3

    target.mkdir(parents=True)
    shutil.copy(source / "config.yaml", target / "config.yaml")
    with sqlite3.connect(source / "run.sqlite") as origin, sqlite3.connect(target / "run.sqlite") as copy:
        origin.backup(copy)


REJECTING = JudgeSettings(backend="factory", factory="tests.doubles.judge:norm_num_rejecting_judge")


def _reprove(run_dir: Path, study: Path) -> tuple[Any, dict[str, Any]]:
    outcome = run(None, run_dir, resume=True, reprove_with=study)
    with RunStore(run_dir, create=False) as store:
        by_problem = {c.problem_id: (c, store.attempts(candidate_id=c.candidate_id)) for c in store.candidates()}
    return outcome, by_problem


def test_a_study_proof_its_own_judge_rejected_is_never_taken(failed_run: Path, tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    _copy_run(failed_run, run_dir)
    export_statements(run_dir, tmp_path / "statements.jsonl")
    study = _study(tmp_path, tmp_path / "statements.jsonl", judge=REJECTING)  # the screen passed, its judge did not
    assert not study_proofs(study), "the study counts no sample its judge rejected"
    outcome, by_problem = _reprove(run_dir, study)
    assert outcome.summary.retained == 1, "only the run's own retained problem"
    for problem in ("world:1", "world:2"):
        candidate, attempts = by_problem[problem]
        assert candidate.status == CandidateStatus.rejected
        assert not [a for a in attempts if a.output.get("reused_from_study")], "no study proof was even tried"


def test_a_study_proof_the_run_s_judge_rejects_or_cannot_judge_is_not_retained(tmp_path: Path) -> None:
    """The study's judge passed the proof; the run's own judge decides for the run."""
    dataset = tmp_path / "problems.jsonl"
    rows = [
        {"question": "Problem 0 [[case:restated_target]]: 3600 threads in 12 bolts. How many?", "answer": "#### 300"}
    ]
    dataset.write_text("".join(json.dumps(row) + "\n" for row in rows))
    config = world_config(str(dataset), prove={"k": 3, "strategy": "parallel", "salvage": False})
    config["judge"] = REJECTING.model_dump(mode="json", exclude_defaults=True)
    run(build_config(config), tmp_path / "run")
    export_statements(tmp_path / "run", tmp_path / "statements.jsonl")
    study = _study(tmp_path, tmp_path / "statements.jsonl")
    assert study_proofs(study), "the study's stand-in judge passed its proofs"

    flag = tmp_path / "judge-down"
    flag.touch()
    with pytest.MonkeyPatch.context() as patch:  # the run's judge gives no verdict: nothing is decided
        patch.setenv(DOWN_FLAG, str(flag))
        outcome, by_problem = _reprove(tmp_path / "run", study)
    assert outcome.summary.reprove_unjudged == 1 and outcome.summary.retained == 0
    candidate, attempts = by_problem["world:0"]
    assert candidate.status == CandidateStatus.rejected and candidate.judge_tool is None
    judged = [a for a in attempts if a.stage == Stage.judge and a.output.get("reused_from_study")]
    assert [a.reason for a in judged] == [ReasonCode.judge_unavailable]

    flag.unlink()  # the run's judge answers, and rejects the study's proof: the judge wins
    outcome, by_problem = _reprove(tmp_path / "run", study)
    assert outcome.summary.retained == 0 and outcome.summary.reprove_unjudged == 0
    candidate, attempts = by_problem["world:0"]
    assert candidate.status == CandidateStatus.rejected and candidate.verified_code is None
    judged = [a for a in attempts if a.stage == Stage.judge and a.output.get("reused_from_study")]
    assert judged[-1].reason == ReasonCode.judge_rejected and judged[-1].output["overrules_screen"]
