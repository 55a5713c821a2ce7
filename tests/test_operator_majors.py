"""Issue 30's four majors as a new user met them: each test runs ``repro`` in a subprocess and checks
what it printed, the exit status and what is left on disk."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from repro.report.page import read_embedded
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
