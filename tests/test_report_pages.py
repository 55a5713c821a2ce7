"""`repro report` on a coverage-study directory and on an evaluation directory (issue 20, majors 6-7).

The study is the study test world (tests/study_world.py) at 3 provers x 200 statements, read straight
from its ``study.sqlite``; the evaluation is the synthetic release of tests/evaluate_world.py answered
by two models behind the OpenAI-compatible test server. Both pages are also opened in headless
Chromium (Debian's ``chromium`` driven by Playwright, as in tests/test_report.py).
"""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from repro.config import load_config
from repro.evaluate import EvaluationPlan, parse_model_argument, run_evaluation
from repro.report import build_report, write_report
from repro.report.page import read_embedded
from repro.study import StudySettings, StudyStore, parse_prover_spec, prove_study, study_report
from repro.testing import OpenAITestServer
from tests import evaluate_world
from tests import study_world as world
from tests.browser import headless_chromium, open_page
from tests.conftest import REPO
from tests.doubles.judge import STAND_IN_SETTINGS

STATEMENTS = 200
PROVERS = ("corrupt", "restate", "slow")


@pytest.fixture(scope="module")
def big_study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("pages-study")
    statements = world.write_statement_file(base / "statements.jsonl", STATEMENTS)
    lean = load_config(world.write_lean_config(base)).lean
    with OpenAITestServer(world.http_responder) as server:
        provers = [parse_prover_spec(f"{name}={name}@{server.base_url}") for name in PROVERS]
        prove_study(
            base / "study",
            statements_path=statements,
            provers=provers,
            settings=StudySettings(k=4, lean=lean, judge=STAND_IN_SETTINGS),
        )
    return base / "study"


def _release(directory: Path, *, unverified: int) -> Path:
    """The synthetic release with model-made, real-Lean provenance, and ``unverified`` rows flagged."""
    release = evaluate_world.write_release(directory)
    path = release / "data" / "test.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for index, row in enumerate(rows):
        row["provenance"]["models"] = [{"stage": "prove", "model": "prover-7b", "backend": "openai"}]
        row["unverified"] = index < unverified
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return release


def _evaluate(base: Path, name: str, *, unverified: int) -> Path:
    release = _release(base / f"release-{name}", unverified=unverified)
    with pytest.MonkeyPatch.context() as patch, OpenAITestServer(evaluate_world.http_responder) as server:
        patch.setenv("OPENAI_API_KEY", "test-key")
        models = dict(parse_model_argument(f"{m}={m}@{server.base_url}") for m in ("steady", "noisy"))
        plan = EvaluationPlan(
            release_dir=release, eval_dir=base / name, models=models, include_unverified=bool(unverified)
        )
        summary = asyncio.run(run_evaluation(plan))
    assert summary.failed == 0
    return base / name


@pytest.fixture(scope="module")
def evaluations(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("pages-eval")
    return {"verified": _evaluate(base, "verified", unverified=0), "flagged": _evaluate(base, "flagged", unverified=7)}


class _Cells(HTMLParser):
    """The text of every table cell of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.cells: list[str] = []
        self._open = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "td":
            self._open = True
            self.cells.append("")

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self._open = False

    def handle_data(self, data: str) -> None:
        if self._open:
            self.cells[-1] += data


def _reprs_in_cells(html: str) -> list[str]:
    parser = _Cells()
    parser.feed(html)
    assert parser.cells
    # JSON objects or lists of strings, Python literals, unrounded floats ("[0.1, 0.2]" intervals are fine)
    pattern = re.compile(r"^\s*\{|\[\s*[\"'{\[]|^\s*(None|True|False|nan)\s*$|\d\.\d{8,}")
    return [cell for cell in parser.cells if pattern.search(cell)]


# -- the study page, without a browser ---------------------------------------------------------------------
def test_study_page_is_read_from_the_store_and_agrees_with_study_report(big_study: Path) -> None:
    assert not list(big_study.glob("*.json"))  # nothing written by hand
    html, kinds, _ = build_report(big_study)
    assert kinds == ["study"]
    figures = study_report(big_study)
    rows = read_embedded(html)["statements"]
    assert len(rows) == STATEMENTS and figures.statements == STATEMENTS
    # the statement rows say which provers proved what, consistently with the study's own figures
    for prover in figures.provers:
        assert sum(prover.name in row["proved_by"] for row in rows) == prover.covered
        only = sum(row["proved_by"] == [prover.name] for row in rows)
        assert only == figures.overlap.only[prover.name] and only > 0
    unproved = [row for row in rows if not row["proved_by"]]
    assert len(unproved) == figures.overlap.none == 15  # statements 45..49 of every block of 60
    assert f"Statements no prover proved ({len(unproved)} of {STATEMENTS})" in html
    for figure in ("pass-at", "level", "type", "overlap", "taxonomy", "cost"):
        assert f'id="figure-study-{figure}"' in html
    # the pass@j figure carries each prover's interval, as printed by `repro study-report`
    slow = next(p for p in figures.provers if p.name == "slow")
    first = slow.pass_at["pass@1"]
    label = f"slow ({slow.covered}/{STATEMENTS} covered): j=1, {first.value:.3f} [{first.low:.3f}, {first.high:.3f}]"
    assert label in html
    assert "NOT VERIFIED" in html and "fake-repl" in html
    assert _reprs_in_cells(html) == []


def test_an_unproved_statement_opens_to_every_sample_and_lean_message(big_study: Path) -> None:
    rows = read_embedded(build_report(big_study)[0])["statements"]
    row = next(r for r in rows if r["id"] == "s45")
    assert row["proved_by"] == []
    assert [len(row["provers"][name]["samples"]) for name in PROVERS] == [4, 4, 4]
    slow = row["provers"]["slow"]["samples"][0]
    assert slow["status"] == "rejected" and slow["reasons"] == ["lean_error"]
    assert any("linarith failed" in m["text"] and m["severity"] == "error" for m in slow["messages"])
    corrupt = row["provers"]["corrupt"]["samples"][0]
    assert "boundary corruption" in corrupt["taxonomy"] and corrupt["messages"] == []  # refused before Lean
    with StudyStore(big_study, create=False) as store:
        stored = store.samples(prover="slow", statement_id="s45")
    assert all(s.lean_messages and s.lean_backend for s in stored)


def test_study_banner_names_fake_lean_and_scripted_provers(big_study: Path, tmp_path: Path) -> None:
    from repro.report.study_page import _unverified, collect_study

    page = collect_study(big_study)
    assert any("fake-repl" in reason for reason in page.unverified_sources)
    with StudyStore(big_study, create=False) as store:
        samples = store.samples()
    assert any("kernel-judge verdicts from a stand-in" in reason for reason in page.unverified_sources)
    real = [
        s.model_copy(
            update={"real_lean": True, "judge": s.judge.model_copy(update={"real": True}) if s.judge else None}
        )
        for s in samples
    ]
    assert _unverified(real, page.provers, "repl")[0] == []
    scripted = [p.model_copy(update={"backend": "scripted"}) for p in page.provers[:1]]
    reasons, _ = _unverified(real, scripted + page.provers[1:], "repl")
    assert reasons == ["scripted (not model) prover outputs: corrupt"]


# -- the evaluation page, without a browser ---------------------------------------------------------------
def test_evaluation_model_cache_is_not_a_run(evaluations: dict[str, Path]) -> None:
    directory = evaluations["verified"]
    assert (directory / "model_cache" / "run.sqlite").is_file()
    html, kinds, _ = build_report(directory)
    assert kinds == ["evaluation"]
    assert "runs compared" not in html and "figure-study" not in html
    assert 'id="figure-eval-accuracy"' in html and 'id="figure-eval-drop"' in html
    assert len(read_embedded(html)["instances"]) == evaluate_world.INSTANCES
    assert (
        "NOT VERIFIED" not in html and 'id="unverified-banner"' not in html
    )  # every row real-Lean verified and model-made, models behind HTTP
    assert _reprs_in_cells(html) == []


def test_evaluation_of_unverified_rows_says_not_verified(evaluations: dict[str, Path]) -> None:
    html, _, _ = build_report(evaluations["flagged"])
    assert "NOT VERIFIED" in html
    assert f"7 of {evaluate_world.INSTANCES} evaluated rows are marked unverified" in html


def test_summary_json_renders_without_raw_json(tmp_path: Path) -> None:
    (tmp_path / "study_summary.json").write_text(json.dumps({"provers": [{"name": "a", "ci": [0.1, 0.25]}]}))
    html, kinds, _ = build_report(tmp_path)
    assert kinds == ["study"] and "0.1, 0.25" in html and _reprs_in_cells(html) == []


# -- the command line -----------------------------------------------------------------------------------------
def _report(directory: Path, out: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "repro.cli", "report", str(directory), "--out", str(out)]
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=300)


def test_repro_report_on_a_study_and_an_evaluation_directory(
    big_study: Path, evaluations: dict[str, Path], tmp_path: Path
) -> None:
    done = _report(big_study, tmp_path / "study.html")
    assert done.returncode == 0, done.stderr
    assert f"study; {STATEMENTS} statements, 3 provers" in done.stdout
    assert 'id="figure-study-overlap"' in (tmp_path / "study.html").read_text(encoding="utf-8")
    done = _report(evaluations["flagged"], tmp_path / "eval.html")
    assert done.returncode == 0, done.stderr
    assert f"evaluation; {evaluate_world.INSTANCES} evaluated rows, 2 models" in done.stdout
    page = (tmp_path / "eval.html").read_text(encoding="utf-8")
    assert "NOT VERIFIED" in page and "runs compared" not in page
    assert sorted(p.name for p in evaluations["flagged"].iterdir() if p.suffix == ".html") == []  # --out honoured


# -- in a real browser -----------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def browser(big_study: Path, evaluations: dict[str, Path]) -> Iterator[Any]:
    """Depends on the directories: Playwright's sync API holds an event loop, so they must exist first."""
    with headless_chromium() as launched:
        yield launched


def test_study_page_in_chromium(browser: Any, big_study: Path, tmp_path: Path) -> None:
    out = tmp_path / "study.html"
    write_report(big_study, out)
    figures = study_report(big_study)
    page, problems = open_page(browser, out, "#statements-body tr.row")
    assert page.locator("#unverified-banner").is_visible()
    for figure in ("pass-at", "level", "type", "overlap", "taxonomy", "cost"):
        box = page.locator(f"svg#figure-study-{figure}").bounding_box()
        assert box and box["width"] > 200 and box["height"] > 50, figure
    assert page.locator("#figure-study-pass-at line.interval").count() == 3 * 4
    assert page.locator("#figure-study-overlap rect.intersection").count() == 2**3

    # the table opens on the statements no prover proved
    assert page.locator("#statements-body tr.row").count() == figures.overlap.none
    assert page.locator("#statements-count").inner_text() == f"{figures.overlap.none} of {STATEMENTS} statements"
    page.locator("#statements-body tr.row").first.click()
    detail = page.locator(".detail-row")
    assert detail.locator(".sample").count() == 3 * 4
    slow = detail.locator('.sample[data-prover="slow"] .lean-messages li')
    assert slow.count() >= 1 and "linarith failed" in slow.first.inner_text()
    assert "boundary_corruption" in detail.inner_text()

    page.select_option("#filter-proved", "only:slow")
    assert page.locator("#statements-body tr.row").count() == figures.overlap.only["slow"]
    page.select_option("#filter-proved", "")
    assert "page 1 of 4" in page.locator("#statements-pager").inner_text()
    page.fill("#filter-statement-text", "study_123 ")
    assert page.locator("#statements-body tr.row").count() == 1
    assert problems == []


def test_evaluation_page_in_chromium(browser: Any, evaluations: dict[str, Path], tmp_path: Path) -> None:
    out = tmp_path / "flagged.html"
    write_report(evaluations["flagged"], out)
    page, problems = open_page(browser, out, "#rows-body tr.row")
    assert page.locator("#unverified-banner").is_visible()
    for figure in ("figure-eval-accuracy", "figure-eval-drop"):
        box = page.locator(f"svg#{figure}").bounding_box()
        assert box and box["width"] > 200 and box["height"] > 50, figure
    page.select_option("#filter-outcome", "unverified")
    assert page.locator("#rows-count").inner_text() == f"7 of {evaluate_world.INSTANCES} rows"
    page.locator("#rows-body tr.row").first.click()
    detail = page.locator(".detail-row")
    assert "the release marks this row unverified" in detail.inner_text()
    assert "theorem t0" in detail.locator("pre.code").first.inner_text()
    assert detail.locator(".sample").count() == 2 * 2  # two models, original and rewritten
    assert problems == []

    clean = tmp_path / "verified.html"
    write_report(evaluations["verified"], clean)
    page, problems = open_page(browser, clean, "#rows-body tr.row")
    assert page.locator("#unverified-banner").count() == 0 and page.locator("p.ok").is_visible()
    assert problems == []


def test_hostile_prover_output_stays_inert_on_the_study_page(browser: Any, big_study: Path, tmp_path: Path) -> None:
    import shutil

    from tests.test_report import HOSTILE

    study = tmp_path / "hostile"
    shutil.copytree(big_study, study)
    with StudyStore(study, create=False) as store:
        sample = store.samples(prover="slow", statement_id="s45")[0]
        store.save_verdict(sample.model_copy(update={"text": f"Plan: {HOSTILE}\n" + sample.text}))
    out = tmp_path / "hostile.html"
    write_report(study, out)
    html = out.read_text(encoding="utf-8")
    assert "<script>window.__pwned" not in html and "<img" not in html
    page, problems = open_page(browser, out, "#statements-body tr.row")
    page.fill("#filter-statement-text", "window.__pwned")
    row = page.locator("#statements-body tr.row")
    assert row.count() == 1 and row.first.get_attribute("data-id") == "s45"
    row.first.click()
    assert HOSTILE in page.locator(".detail-row").inner_text()
    assert page.evaluate("window.__pwned") is None and page.locator(".detail-row img").count() == 0
    assert problems == []
