"""``repro check-proof --answer-only``: the answer our statement alone would release, before any prover runs.

Through the configured backend (the fake here: exit 4, never a real confirmation), for one statement or a
JSONL batch; an unavailable Lean is no verdict (exit 3), a bad row is named before any check (exit 2). The
status of a run, its report and its card count answers per form and why verified statements gave none.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repro.cli import main
from repro.exit_codes import ExitCode

PAIR = "theorem mathd_algebra_44 (s t : ℝ) (h₀ : s = 9 - 2 * t) (h₁ : t = 3 * s + 1) : s = 1 ∧ t = 4 := by sorry"


def test_one_statement_prints_its_confirmed_answer_and_exits_4_on_the_fake(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "s.lean").write_text("import Mathlib\n\n" + PAIR, encoding="utf-8")
    code = main(["check-proof", "--statement", str(tmp_path / "s.lean"), "--answer-only", "--backend", "fake"])
    out = capsys.readouterr().out
    assert code == ExitCode.fake_backend == 4
    assert "answer (1, 4) (s, t), type ℝ, ℝ, form tuple" in out and "fake: never a real verdict" in out
    code = main(
        ["check-proof", "--statement", str(tmp_path / "s.lean"), "--answer-only", "--backend", "fake", "--json"]
    )
    payload = json.loads(capsys.readouterr().out)
    assert payload["answer"] == "(1, 4)" and payload["lean_types"] == ["ℝ", "ℝ"] and payload["real_lean"] is False


def test_a_statement_with_no_answer_says_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "s.lean").write_text("theorem t (x : ℕ) (h : x = 3) : x ≤ 7 := by sorry", encoding="utf-8")
    code = main(["check-proof", "--statement", str(tmp_path / "s.lean"), "--answer-only", "--backend", "fake"])
    assert code == ExitCode.fake_backend
    assert "no answer: inequality" in capsys.readouterr().out


def test_without_lean_there_is_no_verdict_and_exit_3(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "s.lean").write_text(PAIR, encoding="utf-8")
    config = tmp_path / "c.yaml"
    config.write_text(f"lean:\n  backend: repl\n  project_path: {tmp_path / 'none'}\n", encoding="utf-8")
    code = main(["check-proof", "--statement", str(tmp_path / "s.lean"), "--answer-only", "--config", str(config)])
    assert code == ExitCode.unfinished == 3
    assert "no_verdict" in capsys.readouterr().out


def test_a_batch_writes_one_row_per_statement_and_a_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        {"id": "pair", "statement": PAIR},
        {"id": "nat", "statement": "theorem t : 91 ^ 2 = 8281 := by sorry"},
        {"id": "zmod", "statement": "theorem t : (2 : ZMod 7) ^ 10 = 9 := by sorry"},
        {"statement": "theorem t (x : ℝ) (h : x ^ 2 = 18) (hx : 0 < x) : x = 3 * Real.sqrt 2 := by sorry"},
    ]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    out = tmp_path / "out.jsonl"
    code = main(["check-proof", "--batch", str(source), "--answer-only", "--backend", "fake", "--out", str(out)])
    assert code == ExitCode.fake_backend
    results = {row["id"]: row for row in map(json.loads, out.read_text(encoding="utf-8").splitlines())}
    assert results["pair"]["form"] == "tuple" and results["nat"]["lean_types"] == ["ℕ"]
    assert results["zmod"]["answer"] is None and results["zmod"]["reason"] == "lean_refused"
    # the fake finds no values for x ^ 2 = 18 (an irrational x): flagged, so the release would withhold it, and
    # --answer-only reports exactly that (red2 R2-8), naming the value the statement alone gives
    assert results["4"]["answer"] is None and results["4"]["reason"] == "statement_flagged"
    assert results["4"]["statement_check"] == "flagged" and "3 \\cdot \\sqrt{2}" in results["4"]["detail"]
    summary = capsys.readouterr().out
    assert "4 statements: 2 give an answer" in summary and "lean_refused 1" in summary
    assert "statement_flagged 1" in summary


def test_a_bad_batch_row_is_named_before_any_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"id": "a", "statement": PAIR}) + "\n" + json.dumps({"id": "b"}) + "\n")
    code = main(["check-proof", "--batch", str(source), "--answer-only", "--backend", "fake"])
    assert code == ExitCode.usage
    assert f"{source}:2: field 'statement'" in capsys.readouterr().err


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from repro.app import run
    from repro.config import load_config
    from tests.conftest import REPO

    run_dir = tmp_path_factory.mktemp("demo") / "run"
    run(load_config(REPO / "configs" / "demo.yaml"), run_dir)
    return run_dir


def test_status_report_and_card_count_answers_per_form_and_why_none(demo_run: Path, tmp_path: Path) -> None:
    from repro.app import status
    from repro.release import write_release
    from repro.report import write_report

    answers = status(demo_run)["answers"]
    retained = status(demo_run)["rates"]["retained"]
    assert sum(answers["answered"].values()) == retained and set(answers["answered"]) <= {"integer", "fraction"}
    assert answers["reached"] == retained + sum(answers["no_answer"].values()) + sum(answers["not_final"].values())
    assert answers["not_final"], "the demo's unevaluated answer is counted as not final"
    page = Path(write_report(demo_run, tmp_path / "report.html").path).read_text(encoding="utf-8")
    assert 'id="answers-table"' in page and "integer" in page
    write_release(demo_run, tmp_path / "release", allow_unverified=True, include_flagged=True)
    card = (tmp_path / "release" / "README.md").read_text(encoding="utf-8")
    assert "## Answers" in card and f"- integer: {answers['answered'].get('integer', 0)} of" in card
    assert f"Of the run's {answers['reached']} verified statements that reached the answer stage" in card
