"""The judge stage of a run: what the screen passes goes to the kernel judge, only the judge's pass retains a
candidate, a judge that gives no verdict leaves the problem unfinished for ``--resume``, and nothing a stand-in
judge passed is ever reported verified."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from repro.app import audit, run, status
from repro.config import build_config
from repro.judge.verdict import JudgeRequest, JudgeStatus, JudgeVerdict
from repro.records import AttemptStatus, CandidateStatus, ReasonCode, Stage
from repro.stages.judge import ask_judge, judge_attempt_number
from repro.store import _MIGRATIONS, RunStore
from tests.doubles.judge import DOWN_FLAG, LOG, NAME, StandInJudge
from tests.pipeline_world import world_config, write_problems

CASES = ["retained", "judge_overrules", "judge_overrules_first", "restated_target", "feedback_fixes"]


def _world(tmp_path: Path, cases: list[str] = CASES) -> dict[str, Any]:
    dataset = write_problems(tmp_path / "problems.jsonl", cases)
    config = world_config(str(dataset), prove={"k": 3, "strategy": "parallel", "feedback_rounds": 1})
    rules = tmp_path / "rules.json"  # the fake REPL answers BADLEMMA with Lean's error: the feedback case
    message = {
        "severity": "error",
        "pos": {"line": 3, "column": 12},
        "endPos": {"line": 3, "column": 20},
        "data": "unknown identifier 'BADLEMMA'",
    }
    rules.write_text(json.dumps([{"match": "BADLEMMA", "action": "reply", "messages": [message]}]))
    config["lean"]["fake_rules"] = str(rules)
    return config


def _by_case(run_dir: Path, cases: list[str] = CASES) -> dict[str, tuple[Any, list[Any]]]:
    with RunStore(run_dir, create=False) as store:
        found = {}
        for candidate in store.candidates():
            index = int(candidate.problem_id.split(":")[1])
            found[cases[index]] = (candidate, store.attempts(candidate_id=candidate.candidate_id))
    return found


def _fresh_model_calls(run_dir: Path) -> dict[str, int]:
    with RunStore(run_dir, create=False) as store:
        return {row["stage"]: row["calls"] for row in store.model_totals()}


@pytest.fixture(scope="module")
def judged_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp_path = tmp_path_factory.mktemp("judged")
    outcome = run(build_config(_world(tmp_path)), tmp_path / "run")
    return {"outcome": outcome, "by_case": _by_case(tmp_path / "run"), "run_dir": tmp_path / "run"}


def test_a_candidate_is_retained_on_the_judges_pass_with_its_provenance_and_never_reported_verified(
    judged_run: dict[str, Any],
) -> None:
    candidate, attempts = judged_run["by_case"]["retained"]
    assert candidate.status == CandidateStatus.retained
    judged = [a for a in attempts if a.stage == Stage.judge]
    screened = [a for a in attempts if a.stage == Stage.verify and a.status == AttemptStatus.passed]
    # a parallel batch: every sample the screen passed was judged, each as its own stored attempt
    assert len(judged) == len(screened) == 3 and all(a.status == AttemptStatus.passed for a in judged)
    assert {a.attempt_number for a in judged} == {
        judge_attempt_number(Stage.verify, a.attempt_number) for a in screened
    }
    first = next(a for a in judged if a.output["of_attempt"] == candidate.proof_attempt_number)
    assert first.output["submission"] == candidate.verified_code, "the judge judged the code the candidate keeps"
    assert first.output["judge"]["tool"] == NAME and first.output["judge"]["real"] is False
    assert (candidate.judge_tool, candidate.judge_real) == (NAME, False)
    assert candidate.judge_toolchain == "v4.15.0" and candidate.judge_revision == "stand-in-1"
    assert candidate.verified is False, "a stand-in judge's pass is never verified"


def test_where_the_screen_passed_and_the_judge_rejected_the_judge_wins_and_it_is_counted(
    judged_run: dict[str, Any],
) -> None:
    candidate, attempts = judged_run["by_case"]["judge_overrules"]
    assert candidate.status == CandidateStatus.rejected
    assert (candidate.reject_stage, candidate.reject_reason) == (Stage.judge, ReasonCode.judge_rejected)
    assert candidate.verified_code is None and candidate.judge_tool is None, "no proof was taken"
    verifies = [a for a in attempts if a.stage == Stage.verify]
    judged = [a for a in attempts if a.stage == Stage.judge]
    assert verifies and all(a.status == AttemptStatus.passed for a in verifies), "the screen said yes every time"
    assert judged and all(a.reason == ReasonCode.judge_rejected for a in judged)
    assert all(a.output["overrules_screen"] for a in judged)
    figures = status(judged_run["run_dir"])
    overruled = sum(1 for a in attempts if a.stage == Stage.judge)
    others = judged_run["by_case"]["judge_overrules_first"][1]
    overruled += sum(1 for a in others if a.stage == Stage.judge and a.reason == ReasonCode.judge_rejected)
    assert figures["judge"]["overruled"] == overruled
    assert figures["funnel"]["judge"]["rejected"].get("judge_rejected") == 1
    rows = audit(judged_run["run_dir"], stage="judge")
    assert rows and all(row["reject_reason"] == "judge_rejected" for row in rows)
    assert "the judge wins" in rows[0]["details"][0] and "judge_rejects_this" in rows[0]["checked_code"]
    assert rows[0]["prover_output"], "a raw sample's judgement shows the prover's text"


def test_a_judge_rejection_makes_that_sample_fail_and_the_next_screened_one_is_taken(
    judged_run: dict[str, Any],
) -> None:
    candidate, attempts = judged_run["by_case"]["judge_overrules_first"]
    assert candidate.status == CandidateStatus.retained and candidate.proof_attempt_number == 1
    judged = {a.output["of_attempt"]: a.reason for a in attempts if a.stage == Stage.judge}
    assert judged == {0: ReasonCode.judge_rejected, 1: None, 2: None}
    assert "judge_rejects_this" not in (candidate.verified_code or "")


def test_salvage_and_feedback_proofs_go_through_the_judge(judged_run: dict[str, Any]) -> None:
    for case, lever in (("restated_target", "salvage"), ("feedback_fixes", "feedback")):
        candidate, attempts = judged_run["by_case"][case]
        assert candidate.status == CandidateStatus.retained and candidate.proof_lever == lever, case
        judged = [a for a in attempts if a.stage == Stage.judge and a.output["screened_by"] == lever]
        assert judged and judged[-1].status == AttemptStatus.passed, case
        assert judged[-1].output["submission"] == candidate.verified_code


def test_pass_at_j_of_a_run_counts_judged_samples(judged_run: dict[str, Any]) -> None:
    rates = status(judged_run["run_dir"])["rates"]
    # over the 6 formal statements the prover was given: "retained" (3 of 3 judged passed),
    # "judge_overrules_first" (2 of 3), and 0 of 3 for judge_overrules (formalized twice), restated_target and
    # feedback_fixes (whose proofs came from salvage and a feedback round, levers counted apart)
    pass_at = rates["pass_at"]
    assert pass_at["estimator"].startswith("unbiased") and pass_at["statements"] == 6
    assert pass_at["values"]["pass@1"] == round((1 + 2 / 3) / 6, 4)


def test_a_judge_that_fails_to_start_leaves_candidates_unfinished_and_resume_judges_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flag = tmp_path / "judge-down"
    flag.touch()
    monkeypatch.setenv(DOWN_FLAG, str(flag))
    cases = [case for case in CASES if case != "judge_overrules"]
    outcome = run(build_config(_world(tmp_path, cases)), tmp_path / "run")
    # every case reaches the judge, and no judge gives a verdict: nothing is retained, nothing rejected
    assert outcome.unfinished == len(cases) and outcome.summary.retained == 0 and outcome.summary.rejected == 0
    for case, (candidate, attempts) in _by_case(tmp_path / "run", cases).items():
        assert candidate.status == CandidateStatus.unfinished, case
        assert (candidate.reject_stage, candidate.reject_reason) == (Stage.judge, ReasonCode.judge_unavailable)
        assert candidate.verified_code is None and candidate.judge_tool is None, case
        judged = [a for a in attempts if a.stage == Stage.judge]
        assert len(judged) >= 1 and all(a.status == AttemptStatus.error for a in judged), case
        assert not [a for a in attempts if a.stage == Stage.answer], "nothing went on past the judge"
    assert all("judge_unavailable" in (cause or "") for _, cause in outcome.unfinished_examples)
    assert status(tmp_path / "run")["judge"]["unavailable"] >= len(cases)
    calls = _fresh_model_calls(tmp_path / "run")

    flag.unlink()  # the judge is fixed
    resumed = run(None, tmp_path / "run", resume=True)
    assert resumed.unfinished == 0 and resumed.summary.retained == len(cases)
    by_case = _by_case(tmp_path / "run", cases)
    assert all(candidate.status == CandidateStatus.retained for candidate, _ in by_case.values())
    assert all(candidate.judge_tool == NAME for candidate, _ in by_case.values())
    after = _fresh_model_calls(tmp_path / "run")
    # what was asked before the judge is read back; only the answer stage, past the judge, asks anew
    assert {stage: n for stage, n in after.items() if stage not in ("extract", "classify")} == calls
    judge = status(tmp_path / "run")["judge"]
    assert judge["unavailable"] == 0, "the resumed judgements replaced the ones that gave no verdict"


def test_a_judge_that_gives_no_verdict_stops_the_search_before_any_lever_costs_a_model_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flag = tmp_path / "judge-down"
    flag.touch()
    monkeypatch.setenv(DOWN_FLAG, str(flag))
    cases = ["retained"]
    config = _world(tmp_path, cases)
    config["retries"] = {"rewrites_per_problem": 2, "formalizations_per_rewrite": 2}
    run(build_config(config), tmp_path / "run")
    candidate, attempts = _by_case(tmp_path / "run", cases)["retained"]
    assert candidate.candidate_id.endswith("#r0"), "no second rewrite was tried"
    assert len([a for a in attempts if a.stage == Stage.formalize]) == 1, "no second formalization"
    assert len([a for a in attempts if a.stage == Stage.prove]) == 3


def test_a_store_retained_before_the_judge_existed_is_unfinished_after_migration_and_resume_judges_it(
    tmp_path: Path,
) -> None:
    cases = ["retained"]
    run(build_config(_world(tmp_path, cases)), tmp_path / "run")
    # the store as a repro without the judge stage left it: no judge attempt, an older schema version
    version = next(i for i, sql in enumerate(_MIGRATIONS) if "judge_unavailable" in sql)
    with sqlite3.connect(tmp_path / "run" / "run.sqlite") as raw:
        raw.execute("DELETE FROM attempts WHERE stage='judge'")
        raw.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(version),))
    figures = status(tmp_path / "run")  # a reader migrates a writable store once
    assert figures["rates"]["retained"] == 0 and figures["unfinished"]["count"] == 1
    assert "never judged" in figures["unfinished"]["first"][0]["cause"]
    with RunStore(tmp_path / "run", create=False) as store:
        (candidate,) = store.candidates()
        assert (candidate.status, candidate.reject_reason) == (CandidateStatus.unfinished, ReasonCode.judge_unavailable)
    resumed = run(None, tmp_path / "run", resume=True)
    assert resumed.unfinished == 0 and resumed.summary.retained == 1
    candidate, attempts = _by_case(tmp_path / "run", cases)["retained"]
    assert candidate.status == CandidateStatus.retained and candidate.judge_tool == NAME
    assert any(a.stage == Stage.judge and a.status == AttemptStatus.passed for a in attempts)


def _request() -> JudgeRequest:
    return JudgeRequest(
        key="k",
        header="import Mathlib",
        statement="theorem t : True := by sorry",
        theorem_name="t",
        submission="theorem t : True := trivial",
    )


def test_a_judge_that_raises_gives_no_verdict_and_a_stand_in_cannot_claim_to_be_real() -> None:
    class Raising(StandInJudge):
        async def judge(self, request: JudgeRequest) -> JudgeVerdict:
            raise RuntimeError("tool exploded")

    class Boasting(StandInJudge):
        async def judge(self, request: JudgeRequest) -> JudgeVerdict:
            verdict = await super().judge(request)
            return verdict.model_copy(update={"real": True})

    raised = asyncio.run(ask_judge(Raising(), _request()))
    assert raised.status == JudgeStatus.unavailable and raised.cause == "crashed" and "tool exploded" in raised.detail
    boasted = asyncio.run(ask_judge(Boasting(), _request()))
    assert boasted.passed and boasted.real is False


def test_the_report_names_the_judge_counts_where_it_overruled_the_screen_and_says_nothing_is_verified(
    judged_run: dict[str, Any], tmp_path: Path
) -> None:
    from repro.report import write_report
    from repro.report.collect import collect_run

    report = collect_run(judged_run["run_dir"])
    assert [(j.tool, j.real) for j in report.header.judges] == [(NAME, False)]
    assert any("stand-in, not Lean's kernel" in source for source in report.header.unverified_sources)
    assert report.judge["overruled"] == status(judged_run["run_dir"])["judge"]["overruled"] > 0
    # the prover's pass@1 counts judged samples: "judge_overrules" has 3 screened, 0 judged
    row = next(c for c in report.candidates if c["id"].startswith("world:1#"))
    assert [s["judge"]["status"] for s in row["samples"] if s["judge"]][:3] == ["rejected"] * 3
    html = Path(write_report(judged_run["run_dir"], tmp_path / "report.html").path).read_text(encoding="utf-8")
    assert "id=judge" in html and "the judge won" in html and "NOT VERIFIED" in html


def test_identical_code_is_judged_once_and_a_resume_reads_the_verdicts_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "judged.jsonl"
    monkeypatch.setenv(LOG, str(log))
    cases = ["retained", "retained"]  # two problems, each with three identical samples of one proof
    outcome = run(build_config(_world(tmp_path, cases)), tmp_path / "run")
    assert outcome.summary.retained == 2
    judged = [json.loads(line) for line in log.read_text().splitlines()]
    with RunStore(tmp_path / "run", create=False) as store:
        problems = {c.problem_id: [a for a in store.attempts(candidate_id=c.candidate_id) if a.stage == Stage.judge]
                    for c in store.candidates()}  # fmt: skip
    assert all(len(found) == 3 for found in problems.values()), "every screened sample has its judge attempt"
    # the two problems' theorems have different names: two distinct submissions, each judged once
    assert len(judged) == len({row["cache_key"] for row in judged}) == 2
    log.unlink()
    with RunStore(tmp_path / "run") as store:  # forget the outcomes: the problems are judged again on resume
        for candidate in store.candidates():
            store.mark_unfinished(candidate.problem_id, "test")
        store._write(lambda connection: connection.execute("UPDATE problems SET outcome = NULL"))
    assert run(None, tmp_path / "run", resume=True).summary.retained == 2
    assert not log.exists(), "every verdict came back from the run store: nothing was judged again"
