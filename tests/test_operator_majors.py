"""Issue 30's four majors as a new user met them: each test runs ``repro`` in a subprocess and checks
what it printed, the exit status and what is left on disk."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from repro.report.page import read_embedded
from tests.conftest import REPO
from tests.doubles.fake_lean import FAKE_LEAN_CONFIG
from tests.repro_cli import repro


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The whole offline demonstration (22 problems): gsm8k:4 and gsm8k:21 need a second formalization."""
    run_dir = tmp_path_factory.mktemp("majors") / "demo"
    result = repro("run", "--run-dir", str(run_dir))
    assert result.returncode == 0, result.stderr
    return run_dir


def _stored_statements(run_dir: Path, candidate_id: str) -> dict[int, str]:
    """Formalization round -> the statement that round produced, read from the store itself."""
    with sqlite3.connect(run_dir / "run.sqlite") as connection:
        rows = connection.execute(
            "SELECT attempt_number, json_extract(payload, '$.output.statement') FROM attempts"
            " WHERE candidate_id=? AND stage='formalize' ORDER BY attempt_number",
            (candidate_id,),
        ).fetchall()
    return {number: statement for number, statement in rows}


def _audit_blocks(text: str) -> dict[str, str]:
    """``== CANDIDATE (status)  STAGE #N: ...`` header -> the block printed under it."""
    blocks = {}
    for block in text.split("\n== "):
        header, _, body = block.removeprefix("== ").partition("\n")
        candidate, _, rest = header.partition(" (")
        where = rest.split(")  ", 1)[1].split(":", 1)[0] if ")  " in rest else ""
        blocks[f"{candidate} {where}"] = body
    return blocks


# -- M1: every attempt is shown with the statement it judged, checked or proved ---------------------


@pytest.mark.parametrize(
    ("candidate", "stage", "attempt", "round_", "marker"),
    [
        ("gsm8k:4#r0", "align", 0, 0, "evening = 30"),  # the judge's reason is about round 0's statement
        ("gsm8k:21#r0", "check", 1, 0, "years_ago = 11"),  # the refuted statement, not the true one
        ("gsm8k:21#r0", "salvage", 32, 0, "years_ago = 11"),  # a salvaged sample of round 0
        ("gsm8k:21#r0", "verify", 0, 0, "years_ago = 11"),
    ],
)
def test_audit_json_and_text_show_each_attempts_own_statement(
    demo_run: Path, candidate: str, stage: str, attempt: int, round_: int, marker: str
) -> None:
    statements = _stored_statements(demo_run, candidate)
    assert len(statements) == 2 and statements[0] != statements[1], "the demo formalizes this problem twice"
    expected = statements[round_]
    assert marker in expected and marker not in statements[1]

    listed = repro("audit", str(demo_run), "--json")
    assert listed.returncode == 0, listed.stderr
    rows = [
        row
        for row in json.loads(listed.stdout)
        if row["candidate_id"] == candidate and row["reject_stage"] == stage and row["attempt"] == attempt
    ]
    assert len(rows) == 1
    assert rows[0]["lean_statement"] == expected, "the statement this attempt worked on, not the candidate's last"
    assert rows[0]["statement_from"] == {"stage": "formalize", "attempt": round_}

    text = repro("audit", str(demo_run), "--stage", stage)
    assert text.returncode == 0, text.stderr
    block = _audit_blocks(text.stdout)[f"{candidate} {stage} #{attempt}"]
    assert marker in block and statements[1].splitlines()[-1].strip() not in block


def test_the_html_row_view_ties_each_sample_and_check_to_its_formalization(demo_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    result = repro("report", str(demo_run), "--out", str(out))
    assert result.returncode == 0, result.stderr
    data: dict[str, Any] = read_embedded(out.read_text(encoding="utf-8"))
    row = next(row for row in data["candidates"] if row["id"] == "gsm8k:21#r0")
    statements = _stored_statements(demo_run, "gsm8k:21#r0")
    by_round = {formal["round"]: formal["statement"] for formal in row["formalizations"]}
    assert by_round == statements
    assert [sample["round"] for sample in row["samples"]] == [0, 0, 0, 1, 1, 1]
    refuted = [check for check in row["checks"] if check["reason"] == "statement_refuted"]
    assert [(check["attempt"], check["round"]) for check in refuted] == [(1, 0)]
    assert [(entry["attempt"], entry["round"]) for entry in row["salvage"]] == [(32, 0), (33, 0)]


# -- M3: every input file is checked field by field, as the run's datasets are ---------------------


def _traces(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _trace(index: int) -> dict[str, Any]:
    return {
        "id": index,
        "problem": f"Tom has {index + 3} apples and eats 1. How many are left?",
        "gold_answer": str(index + 2),
        "initial_reasoning": f"He eats 1: {index + 3} - 1 = {index + 1}.\nFinal Answer: {index + 1}",
    }


def _candidate(index: int) -> dict[str, Any]:
    return {"id": index, "candidates": [f"He eats 1: {index + 3} - 1 = {index + 2}.\nFinal Answer: {index + 2}"]}


def test_repair_refuses_a_misnamed_trace_field_naming_it_and_writes_nothing(tmp_path: Path) -> None:
    rows = [{("reasoning" if k == "initial_reasoning" else k): v for k, v in _trace(i).items()} for i in range(3)]
    traces = _traces(tmp_path / "traces.jsonl", rows)
    candidates = _traces(tmp_path / "cands.jsonl", [_candidate(i) for i in range(3)])
    result = repro("repair", "--traces", str(traces), "--candidates", str(candidates), "--out", str(tmp_path / "out"))
    assert result.returncode == 2, result.stdout
    assert f"{traces}:1: field 'initial_reasoning': missing" in result.stderr
    assert f"{traces}:3: field 'reasoning': unknown field; did you mean 'initial_reasoning'?" in result.stderr
    assert "fixed" not in result.stdout and not (tmp_path / "out").exists()


def test_repair_refuses_benchmark_rows_as_traces(tmp_path: Path) -> None:
    gsm8k = REPO / "data" / "gsm8k_sample.jsonl"
    candidates = _traces(tmp_path / "cands.jsonl", [_candidate(0)])
    result = repro("repair", "--traces", str(gsm8k), "--candidates", str(candidates), "--out", str(tmp_path / "out"))
    assert result.returncode == 2
    assert f"{gsm8k}:1: field 'initial_reasoning': missing: this row is a benchmark problem" in result.stderr


def test_repair_reads_a_gsm8k_answer_as_its_number_or_refuses_it(tmp_path: Path) -> None:
    rows = []
    for index in range(3):
        row = _trace(index)
        row["question"], row["answer"] = row.pop("problem"), f"Tom eats one.\n#### {row.pop('gold_answer')}"
        rows.append(row)
    traces = _traces(tmp_path / "traces.jsonl", rows)
    candidates = _traces(tmp_path / "cands.jsonl", [_candidate(i) for i in range(3)])
    ok = repro("repair", "--traces", str(traces), "--candidates", str(candidates), "--out", str(tmp_path / "out"))
    assert ok.returncode == 0, ok.stderr
    examples = [json.loads(line) for line in (tmp_path / "out" / "examples.jsonl").read_text().splitlines()]
    assert [example["gold_answer"] for example in examples] == ["2", "3", "4"]
    assert "accuracy 0/3 -> 3/3" in ok.stdout
    rows[1]["answer"] = "Tom eats one.\n#### about four"
    _traces(traces, rows)
    refused = repro("repair", "--traces", str(traces), "--candidates", str(candidates), "--out", str(tmp_path / "o2"))
    assert refused.returncode == 2
    assert f"{traces}:2: field 'answer': a GSM8K answer must end in '#### <number>'" in refused.stderr


def test_repair_refuses_candidates_for_no_trace(tmp_path: Path) -> None:
    traces = _traces(tmp_path / "traces.jsonl", [_trace(i) for i in range(2)])
    candidates = _traces(tmp_path / "cands.jsonl", [_candidate(0), _candidate(7), {"id": 1, "candidate": ["x"]}])
    result = repro("repair", "--traces", str(traces), "--candidates", str(candidates), "--out", str(tmp_path / "out"))
    assert result.returncode == 2
    assert f"{candidates}:2: field 'id': '7' is the id of no trace" in result.stderr
    assert f"{candidates}:3: field 'candidate': unknown field; did you mean 'candidates'?" in result.stderr
    assert f"{candidates}:3: field 'candidates': missing" in result.stderr


def test_other_input_files_name_an_unknown_field_with_the_close_one(tmp_path: Path) -> None:
    batch = _traces(tmp_path / "batch.jsonl", [{"id": "a", "statement": "theorem t : True := by sorry", "ouput": "x"}])
    checked = repro(
        "check-proof", "--batch", str(batch), "--out", str(tmp_path / "o.jsonl"), "--config", FAKE_LEAN_CONFIG
    )
    assert checked.returncode == 2
    assert f"{batch}:1: field 'ouput': unknown field; did you mean 'output'?" in checked.stderr

    config = tmp_path / "run.yaml"
    config.write_text((REPO / "configs" / "demo.yaml").read_text().replace("problems_in_flight", "problem_in_flight"))
    run = repro("run", "--config", str(config), "--run-dir", str(tmp_path / "run"))
    assert run.returncode == 2 and not (tmp_path / "run").exists()
    assert f"invalid config file {config}:" in run.stderr
    assert "problem_in_flight: unknown key; did you mean 'problems_in_flight'?" in run.stderr

    toolchain = repro("run", "--set", "lean.toolchain=v4.10.0", "--run-dir", str(tmp_path / "run"))
    assert toolchain.returncode == 2
    assert "lean.toolchain: 'v4.10.0' refused: unknown Lean toolchain 'v4.10.0'" in toolchain.stderr

    rules = tmp_path / "rules.yaml"
    rules.write_text("- when: robe\n  respond: '42'\n")
    prover = tmp_path / "prover.yaml"
    prover.write_text(f"backend: scripted\nmodel: m\nscript: {rules}\ntemprature: 1.0\n")
    statements = tmp_path / "statements.jsonl"
    study = repro("prove-study", str(statements), "--prover", f"p={prover}", "--study-dir", str(tmp_path / "s"))
    assert study.returncode == 2 and not (tmp_path / "s").exists()
    assert "temprature: unknown key; did you mean 'temperature'?" in study.stderr


# -- M4: nothing is created before the preflight passes; a failed start never blocks the retry ------


def test_a_failed_evaluate_leaves_nothing_and_the_corrected_command_runs(tmp_path: Path) -> None:
    from tests import evaluate_world
    from tests.doubles.openai_server import OpenAITestServer

    release = evaluate_world.write_release(tmp_path / "release", count=4)
    eval_dir = tmp_path / "evals" / "down"
    env = {"OPENAI_API_KEY": "test-key"}
    down = repro("evaluate", str(release), "--eval-dir", str(eval_dir), "--model", "a=x@http://127.0.0.1:9/v1", env=env)
    assert down.returncode == 3, down.stderr
    assert "nothing was run" in down.stderr and "━" not in down.stderr, "the refusal alone, no empty progress bar"
    assert not eval_dir.exists(), "a failed preflight leaves no evaluation directory behind"
    for missing in (
        ["evaluate", str(tmp_path / "no-release"), "--eval-dir", str(eval_dir), "--model", "a=x@http://127.0.0.1:9/v1"],
        ["evaluate", str(release), "--eval-dir", str(eval_dir)],
    ):
        refused = repro(*missing, env=env)
        assert refused.returncode == 2 and not eval_dir.exists(), refused.stderr
    with OpenAITestServer(evaluate_world.http_responder) as server:
        model = f"a=steady@{server.base_url}"
        again = repro("evaluate", str(release), "--eval-dir", str(eval_dir), "--model", model, env=env)
        assert again.returncode == 0, again.stderr
        twice = repro("evaluate", str(release), "--eval-dir", str(eval_dir), "--model", model, env=env)
    assert twice.returncode == 2 and "pass --resume to continue it, or choose another --eval-dir" in twice.stderr


def test_a_run_whose_lean_failed_at_start_leaves_a_directory_that_is_reusable(tmp_path: Path) -> None:
    run_dir = tmp_path / "mine"
    run_dir.mkdir()  # made by the user (a scheduler's output folder): it stays
    lean = ["--set", "lean.backend=repl", "--set", "lean.project_path=/nonexistent"]
    broken = repro("run", "--run-dir", str(run_dir), *lean)
    assert broken.returncode == 3 and "cannot check code" in broken.stderr, broken.stderr
    assert sorted(path.name for path in run_dir.iterdir()) == [], "the failed start left nothing in the folder"
    fixed = repro("run", "--run-dir", str(run_dir), "--limit", "2")
    assert fixed.returncode == 0, fixed.stderr
    again = repro("run", "--run-dir", str(run_dir), "--limit", "2")
    assert again.returncode == 2 and "pass --resume to continue it, or choose another --run-dir" in again.stderr


# -- one figure per name, and no figure without its provenance --------------------------------------


def test_status_and_report_show_one_pass_at_and_the_same_not_verified_banner(demo_run: Path, tmp_path: Path) -> None:
    figures = json.loads(repro("status", str(demo_run), "--json").stdout)
    pass_at = figures["rates"]["pass_at"]
    assert pass_at["statements"] > 0 and f"over {pass_at['statements']} formal statements" in pass_at["label"]
    assert "generation_rate_at" not in figures["rates"], "one figure is called pass@j"
    reasons = figures["not_verified"]
    assert any("demonstration" in reason for reason in reasons)
    assert any(reason.startswith("scripted (not model) outputs at stages") for reason in reasons)
    assert any(reason.startswith("Lean verdicts from a backend that is not real Lean") for reason in reasons)

    text = repro("status", str(demo_run)).stdout
    assert text.splitlines()[0].startswith("NOT VERIFIED: the run's config is a demonstration config")
    assert pass_at["label"] + ": " + ", ".join(f"{j} {v}" for j, v in pass_at["values"].items()) in text

    from html import escape

    from repro.report import collect_run

    out = tmp_path / "report.html"
    assert repro("report", str(demo_run), "--out", str(out)).returncode == 0
    page = out.read_text(encoding="utf-8")
    assert escape(pass_at["label"]) in page and all(escape(reason) in page for reason in reasons)
    report = collect_run(demo_run)
    assert report.prover_pass_at == pass_at["values"] and report.prover_statements == pass_at["statements"]
    assert report.header.unverified_sources[: len(reasons)] == reasons
