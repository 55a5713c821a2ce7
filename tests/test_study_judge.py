"""Studies count only what the kernel judge passed: a judge rejection is a failure of that sample (counted where
the screen had passed it), and a study stored before the judge existed is judged on resume, with no model call."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from repro.config import JudgeSettings
from repro.records import ReasonCode
from repro.study import StudySettings, StudyStore, parse_prover_spec, prove_study, study_report
from repro.study.render import report_tables
from repro.study.store import _MIGRATIONS
from tests import study_world as world
from tests.doubles.fake_lean import fake_lean_settings
from tests.doubles.judge import STAND_IN_SETTINGS

STATEMENTS = 4
K = 2
REJECTING = JudgeSettings(backend="factory", factory="tests.doubles.judge:norm_num_rejecting_judge")


def _study(tmp_path: Path, judge: JudgeSettings, *, resume: bool = False) -> object:
    statements = world.write_statement_file(tmp_path / "statements.jsonl", STATEMENTS)
    prover = tmp_path / "prover.yaml"
    prover.write_text("backend: scripted\nmodel: statement-prover\nscript: tests.study_world:statement_prover\n")
    settings = StudySettings(k=K, lean=fake_lean_settings(workers=1), judge=judge)
    return prove_study(
        tmp_path / "study",
        statements_path=None if resume else statements,
        provers=[] if resume else [parse_prover_spec(f"p={prover}")],
        settings=None if resume else settings,
        resume=resume,
    )


def test_a_sample_the_screen_passed_and_the_judge_rejected_is_a_failure_counted_apart(tmp_path: Path) -> None:
    _study(tmp_path, REJECTING)
    report = study_report(tmp_path / "study")
    (prover,) = report.provers
    assert prover.covered == 0 and prover.verified_samples == 0 and prover.pass_at["pass@1"].value == 0.0
    assert prover.screened_samples == prover.judge_rejected_samples == STATEMENTS * K
    assert prover.reasons == {ReasonCode.judge_rejected.value: 1.0}
    assert prover.incomplete_pairs == 0, "a rejection is a verdict: nothing is left for --resume"
    lines = [item for item in report_tables(report) if isinstance(item, str)]
    assert any(f"it rejected {STATEMENTS * K} that the screen passed" in line for line in lines)


def test_a_study_stored_before_the_judge_is_judged_on_resume_without_a_model_call(tmp_path: Path) -> None:
    first = _study(tmp_path, STAND_IN_SETTINGS)
    assert study_report(tmp_path / "study").provers[0].covered == STATEMENTS
    # the store as a repro without the judge left it: successes the screen alone passed, an older schema
    version = next(i for i, sql in enumerate(_MIGRATIONS) if "salvage_verified" in sql)
    with sqlite3.connect(tmp_path / "study" / "study.sqlite") as raw:
        raw.execute("UPDATE samples SET payload = json_remove(payload, '$.judge')")
        raw.execute("DELETE FROM judge_cache")
        raw.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(version),))
    with StudyStore(tmp_path / "study", create=False):  # opening migrates it
        pass
    (migrated,) = study_report(tmp_path / "study").provers
    assert migrated.covered == 0 and migrated.unjudged_samples == STATEMENTS * K, "never judged: nothing counts"
    resumed = _study(tmp_path, STAND_IN_SETTINGS, resume=True)
    assert resumed.fresh_requests == 0 and first.fresh_requests == STATEMENTS
    (judged,) = study_report(tmp_path / "study").provers
    assert judged.covered == STATEMENTS and judged.unjudged_samples == 0
    assert judged.screened_samples == judged.verified_samples == STATEMENTS * K
