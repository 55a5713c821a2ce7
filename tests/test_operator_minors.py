"""Issue 30's minors as a user meets them (the trial's m- and n- items): each checks what a command prints,
its exit status or what is left on disk."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from repro.dirlock import hold_directory
from repro.metrics import funnel
from repro.records import AttemptStatus, Candidate, SourceProblem, Stage, StageAttempt
from repro.store import RunReader, RunStore
from tests.repro_cli import repro


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("minors") / "demo"
    result = repro("run", "--run-dir", str(run_dir), "--limit", "3")
    assert result.returncode == 0, result.stderr
    return run_dir


def test_m2_status_of_a_live_run_says_it_is_live_not_interrupted(demo_run: Path) -> None:
    with hold_directory(demo_run, command="repro run (a test holding it)"):
        live = repro("status", str(demo_run))
    assert live.returncode == 0
    assert f"live: the run is in progress (process {os.getpid()} (repro run (a test holding it))" in live.stdout
    assert "--resume" not in live.stdout
    after = repro("status", str(demo_run), "--json")
    assert json.loads(after.stdout)["unfinished"]["live"] is None, "the lock died with its holder"


def test_m3_a_candidate_killed_between_two_stages_is_unfinished_where_it_waits(tmp_path: Path) -> None:
    with RunStore(tmp_path / "run") as store:
        store.add_problems([SourceProblem(problem_id="p:1", source="p", source_id="1", question="Q", answer="1")])
        candidate = Candidate(candidate_id="p:1#r0", problem_id="p:1", rewrite_index=0, rewritten_question="Q'")
        store.save_candidate(candidate)
        rewrite = StageAttempt(
            candidate_id="p:1#r0", problem_id="p:1", stage=Stage.rewrite, attempt_number=0, status=AttemptStatus.passed
        )
        store.record_attempt(rewrite, candidate)  # killed here: the screen attempt was never stored
    with RunReader(tmp_path / "run") as reader:
        table = funnel(reader)
    assert (table["rewrite"]["reached"], table["rewrite"]["passed"]) == (1, 1)
    assert (table["screen"]["reached"], table["screen"]["passed"]) == (1, 0), "it waits at the screen"
    shown = repro("status", str(tmp_path / "run")).stdout
    screen = next(line for line in shown.splitlines() if line.startswith("│ screen"))
    assert screen.split("│")[5].strip() == "1", "the unfinished-here column says where it is"


def test_m15_m16_an_opened_example_shows_below_the_banner_with_the_judges_reasons(tmp_path: Path) -> None:
    """The full demo: gsm8k:4#r0's first formalization was judged Inconsistent, with the judge's analysis."""
    from tests.browser import headless_chromium, open_page

    run_dir = tmp_path / "demo"
    assert repro("run", "--run-dir", str(run_dir)).returncode == 0
    out = tmp_path / "report.html"
    assert repro("report", str(run_dir), "--out", str(out)).returncode == 0
    with headless_chromium() as browser:
        page, problems = open_page(browser, out, "#audit-body tr.row")
        page.goto(out.as_uri() + "#candidate=gsm8k%3A4%23r0")  # as a taxonomy example link opens it
        page.wait_for_selector(".detail-row")
        banner = page.locator("#unverified-banner").bounding_box()
        row = page.locator('#audit-body tr.row[data-id="gsm8k:4#r0"]').bounding_box()
        assert banner and row and row["y"] >= banner["y"] + banner["height"], "the opened row is not under the banner"
        details = page.locator(".detail-row").inner_text()
        assert "Alignment of formalization round 0: rejected" in details
        assert "the problem also gives 14 scoops at noon" in details, "the judge's analysis beside its verdict"
        assert problems == []


def test_m4_a_resume_counts_on_from_what_the_run_already_finished(tmp_path: Path) -> None:
    run_dir = tmp_path / "demo"
    assert repro("run", "--run-dir", str(run_dir), "--limit", "3").returncode == 0
    resumed = repro("run", "--resume", "--run-dir", str(run_dir), "--limit", "5")
    assert resumed.returncode == 0, resumed.stderr
    progress = [line for line in (resumed.stdout + resumed.stderr).splitlines() if line.startswith("progress:")]
    assert progress and progress[-1].startswith("progress: problems finished 5 of 5 (")
    assert "3 before this session" in progress[-1]
    with RunReader(run_dir) as store:
        retained = store.outcome_counts().get("retained", 0)
    assert f"retained {retained}," in progress[-1] and f"drawn 5, retained {retained}," in resumed.stdout


def test_m6_no_rejection_reason_is_drawn_in_the_colour_of_passed() -> None:
    from repro.report.svg import PASSED, color_for

    reasons = [f"reason_{index}" for index in range(40)] + ["statement_vacuous"]
    assert PASSED not in {color_for(reason, reasons) for reason in reasons}
