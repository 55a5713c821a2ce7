"""Coverage studies: every figure checked against values computed by hand from tests/study_world.py.

Hand derivations (n = 4 samples per pair, 60 statements):
- corrupt proves {0..14, 55..59} (20) with c = 1: pass@j per covered statement = j/4.
- restate proves {0..9, 20..34, 50..54} (30) with c = 2: pass@1 = 1/2, pass@2 = 1 - 1/6 = 5/6, pass@3 = 1.
- slow proves {5..44} (40) with c = 4: pass@j = 1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from repro.config import load_config
from repro.study import (
    FIRST_SUCCESS,
    UNBIASED,
    ProverSpecError,
    StatementSetError,
    StudyError,
    StudySettings,
    StudyStore,
    failure_probability,
    parse_prover_spec,
    pass_at,
    prove_study,
    read_statements,
    study_report,
)
from repro.study.report import StudyReport
from tests import study_world as world
from tests.doubles.judge import STAND_IN_SETTINGS
from tests.doubles.openai_server import Fault, OpenAITestServer

PROVERS = ("corrupt", "restate", "slow")


def _study(tmp_path: Path, *, sequential: bool = False, salvage: bool = False) -> dict[str, Any]:
    """A study of the world; without salvage unless asked, so the figures below are the raw samples'."""
    statements = world.write_statement_file(tmp_path / "statements.jsonl")
    lean = load_config(world.write_lean_config(tmp_path)).lean
    with OpenAITestServer(world.http_responder) as server:
        provers = [parse_prover_spec(f"{name}={name}@{server.base_url}") for name in PROVERS]
        strategy = "sequential" if sequential else "parallel"
        settings = StudySettings(k=world.K, strategy=strategy, lean=lean, salvage=salvage, judge=STAND_IN_SETTINGS)
        summary = prove_study(tmp_path / "study", statements_path=statements, provers=provers, settings=settings)
        requests = list(server.requests)
    return {"report": study_report(tmp_path / "study"), "summary": summary, "requests": requests, "dir": tmp_path}


@pytest.fixture(scope="module")
def parallel_study(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    return _study(tmp_path_factory.mktemp("parallel"))


def _prover(report: StudyReport, name: str) -> Any:
    return next(p for p in report.provers if p.name == name)


def test_coverage_per_prover(parallel_study: dict[str, Any]) -> None:
    report = parallel_study["report"]
    assert report.estimator == UNBIASED and report.statements == 60
    assert {p.name: (p.covered, p.coverage) for p in report.provers} == {
        "corrupt": (20, pytest.approx(1 / 3, abs=1e-6)),
        "restate": (30, 0.5),
        "slow": (40, pytest.approx(2 / 3, abs=1e-6)),
    }
    assert all(p.incomplete_pairs == 0 and p.samples == 240 for p in report.provers)


def test_unbiased_pass_at_j_per_prover(parallel_study: dict[str, Any]) -> None:
    report = parallel_study["report"]
    expected = {
        "corrupt": [20 * (j / 4) / 60 for j in range(1, 5)],  # 1/12, 1/6, 1/4, 1/3
        "restate": [30 * 0.5 / 60, 30 * (5 / 6) / 60, 30 / 60, 30 / 60],  # 1/4, 5/12, 1/2, 1/2
        "slow": [40 / 60] * 4,
    }
    for name, values in expected.items():
        figures = _prover(report, name).pass_at
        assert [figures[f"pass@{j}"].value for j in range(1, 5)] == pytest.approx(values, abs=1e-6), name
        for figure in figures.values():
            assert figure.low <= figure.value <= figure.high
            assert 0 < figure.high - figure.low < 0.4  # statements vary, so the interval has width


def test_coverage_per_level_and_type(parallel_study: dict[str, Any]) -> None:
    corrupt = _prover(parallel_study["report"], "corrupt")
    # {0..14}: five of each level; 55, 58 are level 2; 56, 59 level 3; 57 level 1
    assert {level: g.covered for level, g in corrupt.by_level.items()} == {"Level 1": 6, "Level 2": 7, "Level 3": 7}
    assert {kind: (g.covered, g.statements) for kind, g in corrupt.by_type.items()} == {
        "Algebra": (15, 30),
        "Number Theory": (5, 30),
    }
    # pass@j per group, same estimator: 15 Algebra statements with c = 1 of 4 -> 15 * j/4 / 30
    algebra = corrupt.by_type["Algebra"].pass_at
    assert [algebra[f"pass@{j}"] for j in range(1, 5)] == pytest.approx([0.125, 0.25, 0.375, 0.5], abs=1e-6)
    slow = _prover(parallel_study["report"], "slow")
    assert slow.by_type["Algebra"].covered == 25 and slow.by_type["Number Theory"].covered == 15


def test_overlap_only_all_none_and_union(parallel_study: dict[str, Any]) -> None:
    overlap = parallel_study["report"].overlap
    # only corrupt {55..59}; only restate {50..54}; only slow {15..19, 35..44}; all {5..9}; none {45..49}
    assert overlap.only == {"corrupt": 5, "restate": 5, "slow": 15}
    assert (overlap.all, overlap.none, overlap.union) == (5, 5, 55)
    assert overlap.union_coverage == pytest.approx(55 / 60, abs=1e-6)


def test_best_budget_split_between_two_provers(parallel_study: dict[str, Any]) -> None:
    splits = {(s.first, s.second): s for s in parallel_study["report"].overlap.splits}
    # corrupt + slow: 40 slow statements always; the 10 corrupt-only ones succeed with prob j/4 -> j=3 best
    corrupt_slow = splits[("corrupt", "slow")]
    assert corrupt_slow.curve == pytest.approx([40 / 60, 42.5 / 60, 45 / 60, 47.5 / 60, 20 / 60], abs=1e-6)
    assert (corrupt_slow.best_j, corrupt_slow.best_coverage) == (3, pytest.approx(47.5 / 60, abs=1e-6))
    # corrupt + restate: j=1 gives 10 (both) + 10 * 1/4 (corrupt only) + 20 (restate only, 3 samples) = 32.5
    corrupt_restate = splits[("corrupt", "restate")]
    assert corrupt_restate.best_j == 1
    assert corrupt_restate.curve[1] == pytest.approx(32.5 / 60, abs=1e-6)
    assert corrupt_restate.curve[2] == pytest.approx((10 * 11 / 12 + 5 + 20 * 5 / 6) / 60, abs=1e-6)
    restate_slow = splits[("restate", "slow")]
    assert (restate_slow.best_j, restate_slow.best_coverage) == (3, pytest.approx(50 / 60, abs=1e-6))


def test_failure_taxonomy_as_shares_of_failed_samples(parallel_study: dict[str, Any]) -> None:
    report = parallel_study["report"]
    corrupt, restate, slow = (_prover(report, name) for name in PROVERS)
    # corrupt: 20 x 3 + 40 x 4 = 220 failed, all with special tokens; the 160 on unproved statements also repeat
    assert corrupt.failed_samples == 220
    assert corrupt.taxonomy == {"boundary_corruption": 1.0, "repetitive_tactics": pytest.approx(160 / 220, abs=1e-6)}
    # restate: 30 x 2 + 30 x 4 = 180 failed, every one a restated target
    assert restate.failed_samples == 180 and restate.taxonomy == {"target_corruption": 1.0}
    assert restate.reasons == {"statement_mismatch": 1.0}
    # slow: 20 x 4 = 80 failed, all Lean errors of the linarith class
    assert slow.failed_samples == 80 and slow.taxonomy == {"compile_error": 1.0}
    assert slow.lean_error_classes == {"linarith_failed": 1.0}


def test_cost_per_verified_statement(parallel_study: dict[str, Any]) -> None:
    report = parallel_study["report"]
    # one request (n = 4) per pair; the test server reports 10 prompt tokens per request: 600 per prover
    for name, covered in (("corrupt", 20), ("restate", 30), ("slow", 40)):
        cost = _prover(report, name).cost
        assert cost.samples_per_verified == pytest.approx(240 / covered)
        assert cost.tokens_in == 600 and cost.tokens_in_per_verified == pytest.approx(600 / covered)
        assert cost.tokens_out > 0 and cost.model_seconds > 0
    assert _prover(report, "slow").cost.model_seconds >= 60 * world.SLOW_LATENCY_S


def test_each_pair_is_one_request_and_identical_code_is_checked_once(parallel_study: dict[str, Any]) -> None:
    requests = parallel_study["requests"]
    assert len(requests) == 180 and all(body["n"] == 4 for body in requests)
    # distinct codes: 55 statements with a good proof (from any prover), 60 restated, 20 Lean-rejected,
    # plus the preflight; boundary-corrupted samples never reach Lean
    with StudyStore(parallel_study["dir"] / "study") as store:
        assert store.lean_result_count() == 55 + 60 + 20 + 1


def test_fake_lean_verdicts_are_never_called_real(parallel_study: dict[str, Any]) -> None:
    assert all(not p.verified_by_real_lean for p in parallel_study["report"].provers)


def test_sequential_stops_at_the_first_verified_sample(tmp_path: Path) -> None:
    study = _study(tmp_path, sequential=True)
    report: StudyReport = study["report"]
    assert report.estimator == FIRST_SUCCESS
    per_model: dict[str, int] = {}
    for body in study["requests"]:
        assert body["n"] == 1
        per_model[body["model"]] = per_model.get(body["model"], 0) + 1
    # corrupt's good sample is the third: 20 x 3 + 40 x 4; restate and slow succeed at once: covered x 1 + rest x 4
    assert per_model == {"corrupt": 220, "restate": 30 + 120, "slow": 40 + 80}
    corrupt = _prover(report, "corrupt").pass_at
    assert [corrupt[f"pass@{j}"].value for j in range(1, 5)] == pytest.approx([0, 0, 1 / 3, 1 / 3], abs=1e-6)
    assert _prover(report, "restate").pass_at["pass@1"].value == 0.5
    assert report.overlap.splits == []  # early-stopped samples give no per-sample rates to split a budget by


def test_salvage_reports_coverage_without_and_with_it(tmp_path: Path) -> None:
    """corrupt's special tokens and restate's restated targets are near misses: salvage rescues every one
    through the gate; slow's samples fail in Lean on their mathematics (no defect to repair)."""
    report = _study(tmp_path, salvage=True)["report"]
    corrupt, restate, slow = (_prover(report, name) for name in PROVERS)
    assert (corrupt.covered, restate.covered, slow.covered) == (20, 30, 40)  # raw figures unchanged
    assert corrupt.salvage is not None and restate.salvage is not None
    assert corrupt.salvage.coverage == 1.0 and restate.salvage.coverage == 1.0
    assert restate.salvage.salvaged_samples == 60 * 4 - 30 * 2
    assert set(restate.salvage.kinds) == {"respliced_statement"}
    assert all("special_tokens" in kinds or "cut_at_special_token" in kinds for kinds in corrupt.salvage.kinds)
    assert slow.salvage is None or slow.salvage.salvaged_samples == 0
    assert corrupt.salvage.checks >= corrupt.salvage.salvaged_samples and corrupt.salvage.lean_seconds >= 0


def test_pass_at_estimator_values() -> None:
    assert [pass_at(4, 1, j) for j in range(1, 5)] == pytest.approx([0.25, 0.5, 0.75, 1.0])
    assert pass_at(4, 0, 4) == 0.0 and pass_at(4, 4, 1) == 1.0
    assert failure_probability(4, 2, 2) == pytest.approx(1 / 6)
    with pytest.raises(ValueError, match="pass@5 needs at least 5 samples"):
        pass_at(4, 1, 5)


def test_statement_file_errors_name_the_line_and_field(tmp_path: Path) -> None:
    rows = world.statement_rows()[:3]
    path = tmp_path / "bad.jsonl"

    def write(lines: list[str]) -> None:
        path.write_text("\n".join(lines) + "\n")

    good = [json.dumps(row, ensure_ascii=False) for row in rows]
    assert len(read_statements(world.write_statement_file(tmp_path / "ok.jsonl"))) == 60
    write([good[0], "{not json"])
    with pytest.raises(StatementSetError, match=r"bad.jsonl:2: not valid JSON"):
        read_statements(path)
    missing = dict(rows[1])
    del missing["header"]
    write([good[0], json.dumps(missing)])
    with pytest.raises(StatementSetError, match=r"bad.jsonl:2: field 'header': missing"):
        read_statements(path)
    renamed = {**rows[2], "theorem_name": "other"}
    write([good[0], good[1], json.dumps(renamed)])
    with pytest.raises(StatementSetError, match=r":3: field 'theorem_name': 'other' but the statement declares"):
        read_statements(path)
    write([good[0], good[0]])
    with pytest.raises(StatementSetError, match=r":2: field 'id': 's00' already used on line 1"):
        read_statements(path)
    write([good[0], json.dumps({**rows[1], "statement": "x = 1"})])
    with pytest.raises(
        StatementSetError, match=r":2: field 'statement': a formal statement must be exactly one theorem"
    ):
        read_statements(path)
    write([good[0], json.dumps({**rows[1], "statement": "theorem study_01 : True := trivial"})])
    with pytest.raises(StatementSetError, match=r":2: field 'statement': the statement does not end in `:= by sorry`"):
        read_statements(path)


def test_prove_study_names_every_bad_row_of_a_statement_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Three bad rows among good ones: all three are named (line, field, reason), prove-study exits 2
    before any endpoint is tried, and no study directory is started."""
    from repro.cli import main

    rows = world.statement_rows()[:4]
    lines = [json.dumps(row, ensure_ascii=False) for row in rows]
    lines[1] = json.dumps({**rows[1], "theorem_name": "other"})
    lines[2] = lines[2][:-1]  # cut: not valid JSON
    no_header = dict(rows[3])
    del no_header["header"]
    lines[3] = json.dumps({**no_header, "id": rows[0]["id"]})
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    study = tmp_path / "st"
    assert main(["prove-study", str(path), "--prover", "p=m@http://127.0.0.1:9/v1", "--study-dir", str(study)]) == 2
    error = "".join(capsys.readouterr().err.split())
    for named in (
        "bad.jsonl: 3 bad rows",
        "bad.jsonl:2: field 'theorem_name': 'other' but the statement declares",
        "bad.jsonl:3: not valid JSON",
        "bad.jsonl:4: field 'header': missing",
    ):
        assert "".join(named.split()) in error, named
    assert "bad.jsonl:1:" not in error
    assert not (study / "study.sqlite").exists()


def test_prove_study_refuses_feedback_rounds_and_the_report_records_none(
    parallel_study: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A config asking for Lean-feedback rounds is refused (exit 2) before any endpoint is tried,
    never silently ignored; a study's report says it ran none."""
    from repro.cli import main
    from repro.study.render import report_tables

    statements = world.write_statement_file(tmp_path / "statements.jsonl")
    config = tmp_path / "config.yaml"
    config.write_text(
        "prove:\n  feedback_rounds: 2\nlean:\n  backend: factory\n  factory: tests.doubles.fake_lean:fake_lean\n"
    )
    study = tmp_path / "st"
    arguments = ["prove-study", str(statements), "--prover", "p=m@http://127.0.0.1:9/v1", "--study-dir", str(study)]
    assert main([*arguments, "--config", str(config)]) == 2
    error = " ".join(capsys.readouterr().err.split())
    assert f"{config}: prove.feedback_rounds is 2, but prove-study runs no Lean-feedback rounds" in error
    assert not study.exists()
    report = parallel_study["report"]
    assert report.feedback_rounds == 0 and json.loads(report.model_dump_json())["feedback_rounds"] == 0
    assert "feedback rounds 0 (studies run none)" in str(report_tables(report)[0])
    with pytest.raises(ValidationError):
        StudySettings(k=1, feedback_rounds=1)  # type: ignore[arg-type]


def test_prover_specs(tmp_path: Path) -> None:
    entry = parse_prover_spec("goedel=Goedel-LM/Goedel-Prover-V2-32B@http://gpu:8001/v1", api_key_env="KEY")
    assert (entry.name, entry.settings.model, entry.settings.base_url) == (
        "goedel",
        "Goedel-LM/Goedel-Prover-V2-32B",
        "http://gpu:8001/v1",
    )
    assert entry.settings.api_key_env == "KEY" and entry.settings.temperature == 1.0
    settings = tmp_path / "prover.yaml"
    settings.write_text("backend: scripted\nmodel: s\nscript: tests.pipeline_world:responder\ntemperature: 0.6\n")
    assert parse_prover_spec(f"s={settings}").settings.temperature == 0.6
    settings.write_text("backend: scripted\nmodel: s\ntemperature: 7\n")
    with pytest.raises(ProverSpecError, match="temperature"):
        parse_prover_spec(f"s={settings}")
    for bad in ("nameonly", "a=model-without-url", "a=m@ftp://x", "a=missing.yaml"):
        with pytest.raises(ProverSpecError):
            parse_prover_spec(bad)


def test_a_study_directory_is_not_overwritten_and_resume_needs_one(tmp_path: Path) -> None:
    statements = world.write_statement_file(tmp_path / "s.jsonl")
    with pytest.raises(StudyError, match="nothing to resume"):
        prove_study(tmp_path / "none", resume=True)
    with pytest.raises(StudyError, match="at least one --prover"):
        prove_study(tmp_path / "new", statements_path=statements, settings=StudySettings(k=1, judge=STAND_IN_SETTINGS))


def test_a_failed_request_leaves_its_pair_for_resume(tmp_path: Path) -> None:
    rows = world.statement_rows()[5:10]  # all in SLOW_PROVES
    statements = tmp_path / "five.jsonl"
    statements.write_text("\n".join(json.dumps(row, ensure_ascii=False) for row in rows) + "\n")
    lean = load_config(world.write_lean_config(tmp_path)).lean
    with OpenAITestServer(world.http_responder) as server:
        server.faults = [Fault(status=400)]  # not retryable: the request fails for good
        provers = [parse_prover_spec(f"slow=slow@{server.base_url}")]
        first = prove_study(
            tmp_path / "study",
            statements_path=statements,
            provers=provers,
            settings=StudySettings(k=2, lean=lean, judge=STAND_IN_SETTINGS),
        )
        assert (first.failed_requests, first.pairs) == (1, 5) and "HTTP 400" in first.errors[0]
        assert study_report(tmp_path / "study").provers[0].incomplete_pairs == 1
        second = prove_study(tmp_path / "study", resume=True)
        assert (second.fresh_requests, second.failed_requests) == (1, 0)
        assert len(server.requests) == 6
    report = study_report(tmp_path / "study")
    assert report.provers[0].incomplete_pairs == 0 and report.provers[0].covered == 5
