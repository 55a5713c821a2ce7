"""Issue 30's minors as a user meets them (the trial's m- and n- items): each checks what a command prints,
its exit status or what is left on disk."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from repro.dirlock import hold_directory
from repro.metrics import funnel
from repro.records import AttemptStatus, Candidate, SourceProblem, Stage, StageAttempt
from repro.store import RunReader, RunStore
from tests.conftest import REPO
from tests.doubles.fake_lean import FAKE_LEAN_CONFIG
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
        # n11: samples numbered 1..k within their round, the attempt number beside
        assert "Prover sample 1 on the statement of formalization round 1 (attempt #" in details
        assert "Prover sample 3 on" in details and "Prover sample 4 " not in details
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


def test_m7_deepseeks_end_of_sentence_token_is_boundary_corruption_salvaged_like_the_others(tmp_path: Path) -> None:
    statement = "theorem t (x : ℕ) (h₀ : x = 5) : x = 5 := by sorry"
    tokens = ["<｜end▁of▁sentence｜>", "<｜Assistant｜>", "<|im_end|>", "<｜begin▁of▁sentence｜>"]
    rows = [
        {
            "id": str(index),
            "statement": statement,
            "output": f"```lean4\n{statement[:-9]}{token} := by\n  subst h₀\n  rfl\n```",
        }
        for index, token in enumerate(tokens)
    ]
    batch = tmp_path / "tok.jsonl"
    batch.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    judge = [
        "--judge-factory",
        "tests.doubles.judge:stand_in_judge",
    ]  # check-proof asks the kernel judge after the screen
    repro(
        "check-proof", "--batch", str(batch), "--out", str(out), "--config", FAKE_LEAN_CONFIG, "--salvage", "4", *judge
    )
    verdicts = {row["id"]: row for row in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    for index, token in enumerate(tokens):
        verdict = verdicts[str(index)]
        assert verdict["reasons"] == ["boundary_corruption"], (token, verdict["details"])
        assert verdict["salvage_verified"] == "special_tokens", token


def test_m9_an_existing_statement_file_or_finished_repair_is_not_replaced_unasked(
    demo_run: Path, tmp_path: Path
) -> None:
    mine = tmp_path / "my.jsonl"
    mine.write_text('{"hand": "built"}\n')
    refused = repro("statements", str(demo_run), "--out", str(mine))
    assert refused.returncode == 2 and "--overwrite" in refused.stderr and mine.read_text() == '{"hand": "built"}\n'
    assert repro("statements", str(demo_run), "--out", str(mine), "--overwrite").returncode == 0
    assert mine.read_text() != '{"hand": "built"}\n'

    demo = ["--traces", "data/demo_traces.jsonl", "--candidates", "data/demo_candidates.jsonl"]
    out = tmp_path / "repair"
    assert repro("repair", *demo, "--out", str(out)).returncode == 0
    report = (out / "report.json").read_text()
    again = repro("repair", *demo, "--out", str(out))
    assert again.returncode == 2 and "holds a finished repair" in again.stderr and "--overwrite" in again.stderr
    assert (out / "report.json").read_text() == report
    assert repro("repair", *demo, "--out", str(out), "--overwrite").returncode == 0


def test_m11_the_study_evaluate_and_repair_journeys_run_offline_from_any_directory(tmp_path: Path) -> None:
    """Shipped scripted provers, evaluated models and traces, named by their relative paths from elsewhere."""

    def here(*arguments: str) -> Any:
        result = repro(*arguments, cwd=tmp_path)
        assert result.returncode in (0, 4), (arguments, result.stderr)
        return result

    here("run", "--run-dir", "runs/demo")
    here("statements", "runs/demo", "--out", "studies/demo.jsonl")
    provers = [
        "--prover",
        "demo=configs/demo_models/prover.yaml",
        "--prover",
        "weak=configs/demo_models/weak_prover.yaml",
    ]
    here(
        "prove-study",
        "studies/demo.jsonl",
        *provers,
        "--config",
        "configs/demo.yaml",
        "--k",
        "2",
        "--study-dir",
        "studies/demo",
    )
    coverage = json.loads(here("study-report", "studies/demo", "--json").stdout)
    covered = {prover["name"]: prover["covered"] for prover in coverage["provers"]}
    assert covered["demo"] > covered["weak"] > 0, "two scripted provers whose coverage differs"
    assert "charged to the prover whose sample asked first" in here("study-report", "studies/demo").stdout  # n18

    here("release", "runs/demo", "--out", "release/demo", "--allow-unverified")
    models = [
        "--model",
        "solver=configs/demo_models/solver.yaml",
        "--model",
        "memorizer=configs/demo_models/memorizer.yaml",
    ]
    here("evaluate", "release/demo", "--eval-dir", "evals/demo", *models, "--include-unverified")
    figures = json.loads(here("evaluate-report", "evals/demo", "--json").stdout)
    drops = {model["model"]: model["overall"]["drop"] for model in figures["models"]}
    assert drops["solver"] == 0 and drops["memorizer"] > 0.3

    repaired = here(
        "repair",
        "--traces",
        "data/demo_traces.jsonl",
        "--candidates",
        "data/demo_candidates.jsonl",
        "--out",
        "repairs/demo",
    )
    assert "accuracy 8/12 -> 11/12; fixed 3, broken 0" in repaired.stdout


def test_m12_a_candidate_whose_final_answer_is_inline_is_named_in_the_summary(tmp_path: Path) -> None:
    traces = tmp_path / "traces.jsonl"
    traces.write_text(
        (REPO / "data" / "demo_traces.jsonl").read_text(encoding="utf-8").splitlines()[0] + "\n", encoding="utf-8"
    )
    row = json.loads(traces.read_text(encoding="utf-8"))
    inline = {"id": row["id"], "candidates": [f"So she makes $18 every day. Final Answer: {row['gold_answer']}"]}
    candidates = tmp_path / "cands.jsonl"
    candidates.write_text(json.dumps(inline) + "\n", encoding="utf-8")
    result = repro("repair", "--traces", str(traces), "--candidates", str(candidates), "--out", str(tmp_path / "out"))
    assert result.returncode == 0
    assert "1 candidate(s) were refused for their Final Answer" in result.stderr
    assert "starts with 'Final Answer:'" in result.stderr


def test_m19_m20_a_study_leaves_out_what_the_run_found_vacuous_and_the_demo_warns_off_its_script(
    demo_run: Path, tmp_path: Path
) -> None:
    full = tmp_path / "full"
    assert repro("run", "--run-dir", str(full)).returncode == 0
    exported = repro("statements", str(full), "--out", str(tmp_path / "s.jsonl"))
    assert (
        "left out the statements the run's Lean checks found vacuous or refuted (1 vacuous, 1 refuted)"
        in exported.stdout
    )
    rows = [json.loads(line) for line in (tmp_path / "s.jsonl").read_text(encoding="utf-8").splitlines()]
    assert rows and not any(row["statement_check"] in ("vacuous", "refuted") for row in rows)
    every = repro("statements", str(full), "--out", str(tmp_path / "all.jsonl"), "--all")
    assert len((tmp_path / "all.jsonl").read_text(encoding="utf-8").splitlines()) == len(rows) + 2, every.stdout

    sampled = repro("run", "--run-dir", str(tmp_path / "sampled"), "--sample", "3")
    assert sampled.returncode == 0
    assert "the demonstration's scripted models know only the first 22 problems" in sampled.stderr
    assert sampled.stderr.count("DEMONSTRATION") + sampled.stderr.count("demonstration config:") == 1, "one banner (n1)"


# -- nits taken where cheap -------------------------------------------------------------------------


def test_n7_a_reader_that_goes_away_ends_status_and_audit_with_0(demo_run: Path) -> None:
    import subprocess
    import sys

    for command in ("status", "audit"):
        script = f"set -o pipefail; {sys.executable} -m repro.cli {command} {demo_run} | head -1 > /dev/null"
        assert subprocess.run(["bash", "-c", script], cwd=REPO).returncode == 0, command


def test_n3_n15_the_test_server_and_bare_repro_print_no_noise(tmp_path: Path) -> None:
    import subprocess
    import sys

    server = subprocess.run(
        [sys.executable, "-m", "tests.doubles.openai_server", "--help"], capture_output=True, text=True, cwd=REPO
    )
    assert server.returncode == 0 and "RuntimeWarning" not in server.stderr
    bare = repro()
    assert bare.returncode == 0 and bare.stdout.startswith("usage: repro") and "COMMAND" in bare.stdout
    assert repro("status", "--help").stdout.splitlines()[2].startswith("Funnel, generation rates")


def test_n4_n5_n6_audit_labels_filters_and_suggests_and_reasons_explain_the_taxonomy(demo_run: Path) -> None:
    rows = json.loads(repro("audit", str(demo_run), "--json").stdout)
    one = rows[0]["candidate_id"]
    text = repro("audit", str(demo_run), "--candidate", one).stdout
    headers = [line for line in text.splitlines() if line.startswith("== ")]
    assert headers and all(line.startswith(f"== {one} ") for line in headers)
    tagged = [row for row in rows if row["taxonomy"] and row["reject_reason"]]
    if tagged:
        full = repro("audit", str(demo_run), "--candidate", tagged[0]["candidate_id"]).stdout
        assert f": {tagged[0]['reject_reason']}; taxonomy: " in full
    mistyped = repro("audit", str(demo_run), "--reason", "statment_mismatch")
    assert mistyped.returncode == 2 and "did you mean 'statement_mismatch'?" in mistyped.stderr
    assert "salvage" in repro("audit", "--help").stdout and "judge" in repro("audit", "--help").stdout
    reasons = json.loads(repro("reasons", "--json").stdout)
    assert "target_corruption" in reasons["taxonomy"] and "semantic_mismatch" in reasons["reasons"]
    assert "align.asks" in reasons["reasons"]["semantic_mismatch"]


def test_n2_a_prover_profile_reads_as_text() -> None:
    shown = repro("provers", "goedel-prover-v2-32b").stdout
    assert shown.startswith("goedel-prover-v2-32b: ") and "[bold]" not in shown
    assert "system_prompt: (none)" in shown and "None" not in shown and "False" not in shown


def test_n12_a_folder_of_runs_is_reported_as_runs_compared_and_status_points_a_study_to_its_report(
    demo_run: Path, tmp_path: Path
) -> None:
    import shutil

    folder = tmp_path / "compared"
    for name in ("a", "b"):
        shutil.copytree(demo_run, folder / name, ignore=shutil.ignore_patterns("*.lock", "report.html"))
    written = repro("report", str(folder), "--out", str(tmp_path / "r.html"))
    assert written.returncode == 0 and "; runs compared; 2 runs side by side;" in written.stdout, written.stdout
    assert 'id="figure-runs-taxonomy"' in (tmp_path / "r.html").read_text(encoding="utf-8"), "n19: a figure"
    (tmp_path / "empty").mkdir()
    nothing = repro("report", str(tmp_path / "empty"))
    assert nothing.returncode != 0 and "study.sqlite" in nothing.stderr and "evaluation.sqlite" in nothing.stderr

    study = tmp_path / "study"
    study.mkdir()
    (study / "study.sqlite").write_bytes(b"")
    shown = repro("status", str(study))
    assert shown.returncode == 2 and f"see repro study-report {study}" in shown.stderr, shown.stderr


def test_n10_the_forest_axis_draws_each_tick_once_and_the_table_reads_like_the_cli() -> None:
    import re

    from repro.report.evaluation_page import _rate
    from repro.report.svg import forest_chart

    chart = forest_chart([("a", 1.0, 0.0, 1.0, "#000"), ("b", 0.5, 0.0, 0.9, "#111")], title="t", figure_id="f")
    ticks = re.findall(r">(-?\d\.\d\d)</text>", chart)
    assert sorted(ticks) == ["0.00", "1.00"], ticks
    assert (_rate(1.0), _rate(0.5, signed=True), _rate(float("nan"))) == ("1.000", "+0.500", "—")


def test_n17_a_runs_endpoint_refusal_says_lean_and_the_judge_come_next(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    stages = ("rewrite", "screen", "formalize", "align", "prove", "extract", "classify")
    model = "{backend: openai, model: m, base_url: 'http://127.0.0.1:9/v1', api_key_env: null}"
    config.write_text("models:\n" + "".join(f"  {stage}: {model}\n" for stage in stages))
    sample = str(REPO / "data" / "gsm8k_sample.jsonl")
    refused = repro(
        "run", "--config", str(config), "--dataset", sample, "--run-dir", str(tmp_path / "r"), "--limit", "1"
    )
    assert refused.returncode == 3 and "model endpoint check failed; nothing was run" in refused.stderr
    assert "The Lean backend and the kernel judge are checked only after the endpoints answer" in refused.stderr
