"""`repro check-proof`: one proof or a JSONL batch, exit codes, resumability, and real corpora."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from repro.cli import main
from repro.judge.batch import ExitCode
from tests.conftest import shared_file

STATEMENT = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry"
HONEST = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num"
CHEAT = "axiom cheat : (3600 : ℕ) / 12 = 300\n" + HONEST.replace("norm_num", "exact cheat")


# the offline screen and the tests' stand-in judge: a pass is exit 4 at best, never a real verdict
FAKE = ["--backend", "fake", "--judge-factory", "tests.doubles.judge:stand_in_judge"]


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def _rows(path: Path) -> dict[str, dict[str, Any]]:
    return {row["id"]: row for row in map(json.loads, path.read_text(encoding="utf-8").splitlines())}


def test_single_proof_json_names_the_backend_and_exits_4_for_a_fake_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a statement file may repeat the header: the configured one is used
    (tmp_path / "s.lean").write_text("import Mathlib\nopen Real\n\n" + STATEMENT, encoding="utf-8")
    (tmp_path / "p.lean").write_text(HONEST, encoding="utf-8")
    code = main(
        ["check-proof", "--statement", str(tmp_path / "s.lean"), "--proof", str(tmp_path / "p.lean")]
        + [*FAKE, "--json"]
    )
    payload = json.loads(capsys.readouterr().out)
    assert code == ExitCode.fake_backend == 4
    assert payload["verified"] is False and payload["passed"] is True and payload["screen_passed"] is True
    assert payload["backend"] == "fake-repl" and payload["real_lean"] is False
    assert payload["judge"]["status"] == "passed" and payload["judge"]["real"] is False


def test_single_proof_rejected_and_bad_statement_exit_codes(tmp_path: Path) -> None:
    (tmp_path / "s.lean").write_text(STATEMENT, encoding="utf-8")
    (tmp_path / "cheat.lean").write_text(CHEAT, encoding="utf-8")
    (tmp_path / "two.lean").write_text("def k := 1\n" + STATEMENT, encoding="utf-8")
    base = ["check-proof", *FAKE, "--proof", str(tmp_path / "cheat.lean")]
    assert main([*base, "--statement", str(tmp_path / "s.lean")]) == ExitCode.rejected == 1
    assert main([*base, "--statement", str(tmp_path / "two.lean")]) == ExitCode.usage == 2
    assert main(["check-proof", "--statement", str(tmp_path / "s.lean")]) == ExitCode.usage


def test_unavailable_lean_exits_3(tmp_path: Path) -> None:
    (tmp_path / "s.lean").write_text(STATEMENT, encoding="utf-8")
    (tmp_path / "p.lean").write_text(HONEST, encoding="utf-8")
    config = tmp_path / "c.yaml"
    config.write_text(f"lean:\n  backend: repl\n  project_path: {tmp_path / 'no-such-project'}\n", encoding="utf-8")
    code = main(
        ["check-proof", "--statement", str(tmp_path / "s.lean"), "--proof", str(tmp_path / "p.lean")]
        + ["--config", str(config)]
    )
    assert code == ExitCode.infrastructure == 3


def test_batch_streams_verdicts_resumes_and_summarises(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [
        {"id": "honest", "statement": STATEMENT, "output": HONEST},
        {"id": "cheat", "statement": STATEMENT, "output": CHEAT},
        {"id": "cut", "statement": STATEMENT, "output": "```lean4\n" + HONEST, "finish_reason": "length"},
        {"id": 7, "statement": STATEMENT, "output": HONEST.replace("robe_total", "other")},
    ]
    batch = _write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out.jsonl"
    arguments = ["check-proof", "--batch", str(batch), "--out", str(out), *FAKE, "--json"]
    assert main(arguments) == ExitCode.rejected
    summary = json.loads(capsys.readouterr().out)
    verdicts = _rows(out)
    assert set(verdicts) == {"honest", "cheat", "cut", "7"}
    honest = verdicts["honest"]
    assert honest["passed"] and not honest["verified"] and honest["real_lean"] is False
    assert verdicts["honest"]["judge"]["status"] == "passed" and verdicts["cheat"]["judge"] is None
    assert verdicts["cheat"]["reasons"] == ["forbidden_construct"] and not verdicts["cheat"]["static_passed"]
    assert verdicts["cut"]["reasons"] == ["generation_truncated"]
    assert verdicts["7"]["reasons"] == ["statement_mismatch"]
    assert summary["total"] == 4 and summary["passed"] == 1 and summary["verified"] == 0 and summary["checked_now"] == 4
    # an interrupted file (a half-written last line) resumes: kept rows are not checked again
    out.write_text("".join(line + "\n" for line in out.read_text().splitlines()[:2]) + '{"id": "cu', encoding="utf-8")
    assert main(arguments) == ExitCode.rejected
    resumed = json.loads(capsys.readouterr().out)
    assert resumed["checked_now"] == 2 and resumed["kept_from_before"] == 2 and resumed["total"] == 4
    assert set(_rows(out)) == {"honest", "cheat", "cut", "7"}


def test_batch_rechecks_infrastructure_failures_on_resume(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    batch = _write_jsonl(tmp_path / "in.jsonl", [{"id": "a", "statement": STATEMENT, "output": HONEST}])
    out = tmp_path / "out.jsonl"
    failed = {
        "id": "a", "verified": False, "reasons": ["lean_unavailable"], "details": ["x"], "taxonomy": [],
        "static_passed": True, "policy": [], "axioms": None, "backend": "fake-repl", "real_lean": False,
    }  # fmt: skip
    _write_jsonl(out, [failed])
    assert main(["check-proof", "--batch", str(batch), "--out", str(out), *FAKE]) == 4
    assert _rows(out)["a"]["passed"] is True and len(out.read_text().splitlines()) == 1
    assert "0 verified, 1 passed only with a fake backend or a stand-in judge" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("line", "named"),
    [
        ("not json", "in.jsonl:2: not valid JSON"),
        (json.dumps({"id": "b", "statement": STATEMENT}), "in.jsonl:2: field 'output': missing"),
        (
            json.dumps({"id": "a", "statement": STATEMENT, "output": HONEST}),
            "in.jsonl:2: field 'id': 'a' already used on line 1",
        ),
    ],
)
def test_batch_bad_input_names_file_line_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, named: str
) -> None:
    batch = tmp_path / "in.jsonl"
    batch.write_text(json.dumps({"id": "a", "statement": STATEMENT, "output": HONEST}) + "\n" + line + "\n")
    code = main(["check-proof", "--batch", str(batch), "--out", str(tmp_path / "o.jsonl"), "--backend", "fake"])
    assert code == ExitCode.usage
    assert "".join(named.split()) in "".join(capsys.readouterr().err.split())  # rich wraps long lines


def test_batch_names_every_bad_row_and_keeps_stored_verdicts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Four bad rows are named together (line, field, reason), so one edit fixes the file; the
    verdicts a previous run stored are kept untouched, and nothing is checked."""
    good = {"id": "a", "statement": STATEMENT, "output": HONEST}
    batch = tmp_path / "in.jsonl"
    batch.write_bytes(
        "\n".join(
            [
                json.dumps(good),
                "not json",
                json.dumps({"id": "b", "statement": STATEMENT}),
                json.dumps({"id": "a", "statement": STATEMENT, "output": HONEST}),
                json.dumps({"id": "c", "statement": 7, "output": None}),
                json.dumps({"id": "ok", "statement": STATEMENT, "output": HONEST}),
            ]
        ).encode()
        + b"\n\xff{}\n"
    )
    out = tmp_path / "out.jsonl"
    stored = {
        "id": "a", "verified": True, "reasons": [], "details": [], "taxonomy": [], "static_passed": True,
        "policy": [], "axioms": [], "backend": "fake-repl", "real_lean": False,
    }  # fmt: skip
    _write_jsonl(out, [stored])
    before = out.read_bytes()
    assert main(["check-proof", "--batch", str(batch), "--out", str(out), "--backend", "fake"]) == ExitCode.usage
    error = "".join(capsys.readouterr().err.split())  # rich wraps long lines
    for named in (
        "in.jsonl: 5 bad rows",
        "in.jsonl:2: not valid JSON",
        "in.jsonl:3: field 'output': missing",
        "in.jsonl:4: field 'id': 'a' already used on line 1",
        "in.jsonl:5: field 'statement': Input should be a valid string",
        "in.jsonl:5: field 'output': Input should be a valid string",
        "in.jsonl:7: not UTF-8",
    ):
        assert "".join(named.split()) in error, named
    assert "in.jsonl:6" not in error and "in.jsonl:1:" not in error
    assert out.read_bytes() == before


@pytest.mark.shared_data
def test_real_prover_outputs_pass_the_static_layer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Outputs real Lean accepted: at least 98% pass the static layer (native_decide/exact? counted apart)."""
    rows = []
    for name in (
        "realproofs/MoonshotAI_Kimina-Prover-Preview_minif2f-test-solved.jsonl",
        "realproofs/project-numina_kimina-lean-server_test-fixtures.jsonl",
    ):
        for number, line in enumerate(shared_file(name).read_text(encoding="utf-8").splitlines()):
            row = json.loads(line)
            if row["lean_verdict"] == "pass":
                rows.append(
                    {"id": f"{name}:{number}", "statement": row["statement"], "output": row["output"]}
                    | {"header": row["header"]}
                )
    assert len(rows) == 321
    batch = _write_jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out.jsonl"
    # a row's own header is never run; two rows bring lines the configured header lacks: named, nothing checked
    assert main(["check-proof", "--batch", str(batch), "--out", str(out), "--backend", "fake"]) == ExitCode.usage
    captured = capsys.readouterr()
    said = "".join((captured.out + captured.err).split())  # however the console wrapped it
    refused = [number for number, row in enumerate(rows, start=1) if f"in.jsonl:{number}:field'header'" in said]
    assert [rows[number - 1]["header"].split("\n")[2] for number in refused] == ["open Real Set", "open Finset in"]
    assert not out.exists()
    for number in refused:  # without their headers they run under the configured one, as every other row does
        rows[number - 1]["header"] = None
    batch = _write_jsonl(tmp_path / "in.jsonl", rows)
    main(["check-proof", "--batch", str(batch), "--out", str(out), "--backend", "fake", "--json"])
    summary = json.loads(capsys.readouterr().out)
    verdicts = list(_rows(out).values())
    by_policy = [v for v in verdicts if v["policy"]]
    judged = [v for v in verdicts if not v["policy"]]
    passed = [v for v in judged if v["static_passed"]]
    assert summary["total"] == 321 and len(verdicts) == 321
    assert len(passed) >= 0.98 * len(judged), [(v["id"], v["details"]) for v in judged if not v["static_passed"]]
    assert all(set(v["policy"]) <= {"native_decide", "search_tactic", "kernel_decide"} for v in by_policy)
