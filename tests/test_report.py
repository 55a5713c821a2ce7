"""`repro report`: the HTML file is self-contained, complete, inert for hostile texts, and works in a
real browser (headless Chromium from the system, driven by Playwright; no browser download)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from repro.app import run
from repro.cli import main
from repro.config import load_config
from repro.pass_at import pass_at as unbiased_pass_at
from repro.records import AttemptStatus, ReasonCode, Stage, StageAttempt
from repro.report import ReportError, build_report, collect_run, write_report
from repro.report.page import read_embedded
from repro.store import RunStore
from tests.browser import headless_chromium, open_page
from tests.conftest import REPO

HOSTILE = '<script>window.__pwned = 1</script><img src="x" onerror="window.__pwned = 2">'


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = tmp_path_factory.mktemp("report") / "demo"
    run(load_config(REPO / "configs" / "demo.yaml"), run_dir)
    return run_dir


def _data(html: str) -> dict[str, Any]:
    data: dict[str, Any] = read_embedded(html)
    return data


def test_unbiased_pass_at_matches_the_closed_form() -> None:
    assert unbiased_pass_at(3, 0, 1) == 0.0
    assert unbiased_pass_at(3, 1, 1) == pytest.approx(1 / 3)
    assert unbiased_pass_at(3, 1, 2) == pytest.approx(2 / 3)
    assert unbiased_pass_at(3, 1, 3) == 1.0
    assert unbiased_pass_at(8, 2, 4) == pytest.approx(1 - 15 / 70)


def test_report_is_self_contained_and_carries_every_candidate(demo_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    assert main(["report", str(demo_run), "--out", str(out)]) == 0
    html = out.read_text(encoding="utf-8")
    # nothing is fetched: no external scripts, styles, images or links
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", html)
    assert "<link" not in html and "@import" not in html
    assert "NOT VERIFIED" in html and "not real Lean: recorded" in html and "demo-scripted" in html
    with RunStore(demo_run, create=False) as store:
        ids = {c.candidate_id for c in store.candidates()}
    assert {row["id"] for row in _data(html)["candidates"]} == ids
    for figure in ("figure-funnel", "figure-rates", "figure-pass-at", "figure-tokens"):
        assert f'id="{figure}"' in html


def test_report_numbers_agree_with_the_store(demo_run: Path) -> None:
    report = collect_run(demo_run)
    with RunStore(demo_run, create=False) as store:
        verify = store.attempts(stage="verify")
        retained = len(store.candidates())
    rejected = [a for a in verify if a.status == AttemptStatus.rejected]
    assert report.rejected_samples == len(rejected)
    boundary = next(row for row in report.taxonomy if row["fact"] == "boundary_corruption")
    assert boundary["count"] == sum("boundary_corruption" in a.taxonomy for a in rejected)
    assert len(report.candidates) == retained
    hit, total = report.rate_counts["overall"]["all"]
    assert round(hit / total, 4) == report.rates["generation_rate"]
    # pass@k of the prover can only grow with j, and pass@k equals the share of statements with a pass
    values = [report.prover_pass_at[f"pass@{j}"] or 0 for j in range(1, report.k + 1)]
    assert values == sorted(values) and 0 < values[0] < values[-1] <= 1


def test_report_rejects_a_directory_with_nothing_to_report(tmp_path: Path) -> None:
    with pytest.raises(ReportError, match="nothing to report"):
        build_report(tmp_path)
    assert main(["report", str(tmp_path / "missing")]) == 2


def test_study_directory_compares_its_runs(demo_run: Path, tmp_path: Path) -> None:
    study = tmp_path / "study"
    study.mkdir()
    for name in ("prover-a", "prover-b"):
        shutil.copytree(demo_run, study / name)
    (study / "study_summary.json").write_text(json.dumps({"provers": [{"name": "prover-a", "coverage": 0.95}]}))
    html, kinds, _ = build_report(study)
    assert kinds == ["study"]
    assert 'id="figure-study-pass-at"' in html and "prover-b" in html and "study_summary.json" in html
    assert "NOT VERIFIED" in html


def _hostile_run(demo_run: Path, target: Path) -> str:
    """A copy of the demo run whose first candidate has a hostile question and prover output."""
    shutil.copytree(demo_run, target)
    with RunStore(target, create=False) as store:
        candidate = store.candidates()[0]
        candidate.rewritten_question = f"How many quokkas? {HOSTILE}"
        store.save_candidate(candidate)
        sample = StageAttempt(
            candidate_id=candidate.candidate_id,
            problem_id=candidate.problem_id,
            stage=Stage.prove,
            attempt_number=99,
            status=AttemptStatus.passed,
            output={"text": f"Plan: {HOSTILE}\n```lean4\ntheorem x : 1 = 1 := by rfl\n```", "finish_reason": "stop"},
        )
        store.record_attempt(sample)
        check = sample.model_copy(
            update={
                "stage": Stage.verify,
                "status": AttemptStatus.rejected,
                "reason": ReasonCode.lean_error,
                "output": {},
            }
        )
        store.record_attempt(check)
    return candidate.candidate_id


def test_hostile_texts_are_escaped_in_the_file(demo_run: Path, tmp_path: Path) -> None:
    _hostile_run(demo_run, tmp_path / "hostile")
    html, _, _ = build_report(tmp_path / "hostile")
    assert "<script>window.__pwned" not in html and "<img" not in html and 'onerror="window' not in html
    rows = _data(html)["candidates"]
    # the data carries the texts unchanged, to be displayed as text
    assert any(HOSTILE in (row["rewritten"] or "") for row in rows)
    assert any(HOSTILE in (sample["text"] or "") for row in rows for sample in row["samples"])
    assert "script-src 'sha256-" in html  # the page only runs its own script


# -- in a real browser ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def browser(demo_run: Path) -> Iterator[Any]:
    """Depends on ``demo_run``: Playwright's sync API holds an event loop, so the run must exist first."""
    with headless_chromium() as launched:
        yield launched


def _open(browser: Any, path: Path) -> tuple[Any, list[str]]:
    return open_page(browser, path, "#audit-body tr.row")


def _shown_ids(page: Any) -> list[str]:
    ids: list[str] = []
    while True:
        ids += page.eval_on_selector_all("#audit-body tr.row", "rows => rows.map(r => r.dataset.id)")
        following = page.locator("#audit-pager button", has_text="next")
        if following.is_disabled():
            return ids
        following.click()


def test_demo_report_in_chromium(browser: Any, demo_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "demo.html"
    write_report(demo_run, out)
    page, problems = _open(browser, out)
    assert page.locator("#unverified-banner").is_visible()
    for figure in ("figure-funnel", "figure-rates", "figure-pass-at", "figure-tokens"):
        box = page.locator(f"svg#{figure}").bounding_box()
        assert box and box["width"] > 200 and box["height"] > 50, figure
    assert page.locator("#figure-funnel rect").count() >= 7

    with RunStore(demo_run, create=False) as store:
        expected = sorted(
            c.candidate_id
            for c in store.candidates()
            if c.reject_reason == "boundary_corruption"
            or any(a.reason == "boundary_corruption" for a in store.attempts(candidate_id=c.candidate_id))
        )
    assert expected
    page.select_option("#filter-reason", "boundary_corruption")
    assert sorted(_shown_ids(page)) == expected
    assert page.locator("#audit-count").inner_text().startswith(f"{len(expected)} of ")

    page.select_option("#filter-reason", "")
    page.select_option("#filter-stage", "retained")
    page.locator("#audit-body tr.row").first.click()
    messages = page.locator(".detail-row .sample .lean-messages li")
    assert messages.count() >= 1 and "depends on axioms" in messages.first.inner_text()
    assert "declaration uses 'sorry'" in page.locator(".detail-row").inner_text()  # the formalization's check
    assert page.locator(".detail-row").get_by_text("Checked code").count() >= 1

    page.fill("#filter-text", "bicycles")
    assert page.locator("#audit-body tr.row").count() == 1

    page.locator("#taxonomy-table a.example").first.click()
    page.wait_for_selector(".detail-row")
    assert page.locator("#filter-text").input_value() == ""

    shot = tmp_path / "report.png"
    page.goto(out.as_uri())
    page.wait_for_selector("#audit-body tr.row")
    page.screenshot(path=str(shot), full_page=True)
    print(f"screenshot: {shot} ({shot.stat().st_size} bytes)")
    assert shot.stat().st_size > 100_000
    assert problems == []


def test_hostile_texts_stay_inert_in_chromium(browser: Any, demo_run: Path, tmp_path: Path) -> None:
    candidate_id = _hostile_run(demo_run, tmp_path / "hostile")
    out = tmp_path / "hostile.html"
    write_report(tmp_path / "hostile", out)
    page, problems = _open(browser, out)
    page.fill("#filter-text", "quokkas")
    row = page.locator("#audit-body tr.row")
    assert row.count() == 1 and row.first.get_attribute("data-id") == candidate_id
    row.first.click()
    detail = page.locator(".detail-row")
    assert HOSTILE in detail.inner_text()
    assert page.evaluate("window.__pwned") is None
    assert page.locator(".detail-row img, .detail-row script, #audit-body img").count() == 0
    assert problems == []


def test_audit_table_pages_and_filters_a_larger_run(browser: Any, tmp_path: Path) -> None:
    from benchmarks.report_scale import build_store

    build_store(tmp_path / "big", 120, 4)
    out = tmp_path / "big.html"
    write_report(tmp_path / "big", out)
    rows = _data(out.read_text(encoding="utf-8"))["candidates"]
    page, problems = _open(browser, out)
    assert page.locator("#audit-body tr.row").count() == 50
    assert "page 1 of 3" in page.locator("#audit-pager").inner_text()
    assert sorted(_shown_ids(page)) == sorted(row["id"] for row in rows)

    page.select_option("#filter-level", "Level 3")
    page.select_option("#filter-type", "Algebra")
    expected = [row["id"] for row in rows if row["level"] == "Level 3" and row["type"] == "Algebra"]
    assert expected and sorted(_shown_ids(page)) == sorted(expected)
    page.select_option("#filter-level", "")
    page.select_option("#filter-type", "")
    page.select_option("#filter-stage", "prove")
    expected = [row["id"] for row in rows if row["stage"] == "prove"]
    assert expected and sorted(_shown_ids(page)) == sorted(expected)
    assert problems == []


def test_report_shows_vacuous_and_refuted_statements_per_level_and_type(demo_run: Path, tmp_path: Path) -> None:
    report = collect_run(demo_run)
    assert report.statement_checks["vacuous"] >= 1 and report.statement_checks["refuted"] >= 1
    out = tmp_path / "report.html"
    assert main(["report", str(demo_run), "--out", str(out)]) == 0
    html = out.read_text()
    assert 'id="statement-checks-table"' in html and "Statements Lean found vacuous or refuted" in html
