"""Issue 27's must-show, as a user types it: a run, a study and a release through the kernel judge with stand-in
backends (scripted models, the fake Lean REPL, the product's SafeVerifyJudge over the SafeVerify stand-in of
tests/doubles/fake_safe_verify.py). Nothing is ever verified without a real judge, and with a judge that cannot
start (SafeVerify never built) candidates stay unfinished and ``--resume`` judges them once it is built."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import yaml

from repro.judge.kernel import SAFEVERIFY_PINS
from tests.doubles.judges import lay_out_safeverify
from tests.pipeline_world import world_config, write_problems
from tests.repro_cli import repro

CASES = ["retained", "second_attempt", "restated_target"]


def _config(tmp_path: Path, tools: Path) -> Path:
    """The world's scripted models and fake Lean; the judge: SafeVerify as installed in ``tools`` (empty: never
    built)."""
    config: dict[str, Any] = world_config(str(write_problems(tmp_path / "problems.jsonl", CASES)))
    config["judge"] = {
        "backend": "factory",
        "factory": "tests.doubles.judge:installed_safeverify",
        "tools_dir": str(tools),
    }
    path = tmp_path / "world.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True))
    return path


def _status(run_dir: Path) -> dict[str, Any]:
    done = repro("status", str(run_dir), "--json")
    assert done.returncode == 0, done.stderr
    figures: dict[str, Any] = json.loads(done.stdout)
    return figures


def _ok(done: subprocess.CompletedProcess[str], code: int) -> subprocess.CompletedProcess[str]:
    assert done.returncode == code, f"exit {done.returncode}, expected {code}\n{done.stdout}\n{done.stderr}"
    return done


def test_a_run_and_a_release_through_the_judge_and_a_judge_that_cannot_start_leaves_them_unfinished(
    tmp_path: Path,
) -> None:
    tools, run_dir = tmp_path / "tools", tmp_path / "run"
    config = _config(tmp_path, tools)

    first = _ok(repro("run", "--config", str(config), "--run-dir", str(run_dir)), 3)
    assert "judge_unavailable" in first.stderr and "repro run --resume --run-dir" in first.stderr
    figures = _status(run_dir)
    assert figures["rates"]["retained"] == 0 and figures["unfinished"]["count"] == len(CASES)
    assert figures["judge"]["unavailable"] >= len(CASES) and figures["judge"]["passed"] == 0
    assert all("not set up" in row["cause"] or "missing" in row["cause"] for row in figures["unfinished"]["first"])
    assert figures["candidates"] == {"unfinished": len(CASES)}
    _ok(repro("release", str(run_dir), "--out", str(tmp_path / "nothing"), "--allow-unverified"), 1)

    lay_out_safeverify(tools)  # the operator builds SafeVerify (docker/Dockerfile does so)
    _ok(repro("run", "--resume", "--run-dir", str(run_dir)), 0)
    figures = _status(run_dir)
    assert figures["rates"]["retained"] == len(CASES) and figures["unfinished"]["count"] == 0
    judge = figures["judge"]
    assert judge["unavailable"] == 0 and judge["passed"] >= len(CASES)
    assert judge["retained_verified"] == 0 and judge["retained_by_tool"] == {"SafeVerify (stand-in)": len(CASES)}
    text = _ok(repro("status", str(run_dir)), 0).stdout
    assert "NOT VERIFIED" in text and "verified (retained on a real judge's pass) 0 of 3" in text
    audit = json.loads(_ok(repro("audit", str(run_dir), "--stage", "judge", "--json"), 0).stdout)
    assert audit == [], "the world's proofs are honest: the judge rejected none (the unavailable ones were replaced)"

    # nothing a stand-in judge passed is verified: a release withholds it, or marks it
    strict = _ok(repro("release", str(run_dir), "--out", str(tmp_path / "strict")), 1)
    assert f"withheld {len(CASES)} instances" in strict.stderr and not (tmp_path / "strict").exists()
    out = tmp_path / "release"
    _ok(repro("release", str(run_dir), "--out", str(out), "--allow-unverified"), 0)
    rows = [json.loads(line) for line in (out / "data" / "test.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == len(CASES) and all(row["unverified"] for row in rows)
    pin = SAFEVERIFY_PINS["v4.15.0"].commit
    for row in rows:
        provenance = row["provenance"]
        assert (provenance["judge_tool"], provenance["judge_revision"]) == ("SafeVerify", pin)
        assert provenance["judge_toolchain"] == "v4.15.0" and provenance["verified_by_real_judge"] is False
        assert provenance["judge_confinement"], "the confinement is recorded"
    card = (out / "README.md").read_text(encoding="utf-8")
    assert f"toolchain v4.15.0: SafeVerify at {pin} (a stand-in, not Lean's kernel" in card
    assert "the judge won: 0 such texts" in card

    # reverify: the judge again, from the release's own files; a stand-in's pass re-verifies nothing (4)
    again = _ok(repro("reverify", str(out), "--config", str(config)), 4)
    assert f"{len(CASES)} of {len(CASES)} instances passed by the kernel judge SafeVerify again" in again.stdout
    assert "the kernel judge was a stand-in" in again.stderr
    # with SafeVerify gone, no verdict: 3, never a pass
    broken = tmp_path / "broken.yaml"
    settings = yaml.safe_load(config.read_text())
    settings["judge"]["tools_dir"] = str(tmp_path / "no-tools")
    broken.write_text(yaml.safe_dump(settings, allow_unicode=True))
    missing = _ok(repro("reverify", str(out), "--config", str(broken)), 3)
    assert "NO VERDICT" in missing.stdout and "kernel judge SafeVerify: unavailable" in missing.stdout


def test_a_study_through_the_judge_and_a_judge_that_cannot_start_leaves_pairs_unfinished(tmp_path: Path) -> None:
    tools, run_dir = tmp_path / "tools", tmp_path / "run"
    config = _config(tmp_path, tools)
    lay_out_safeverify(tools)
    _ok(repro("run", "--config", str(config), "--run-dir", str(run_dir)), 0)
    statements = tmp_path / "statements.jsonl"
    _ok(repro("statements", str(run_dir), "--out", str(statements)), 0)
    count = len(statements.read_text(encoding="utf-8").splitlines())

    prover = tmp_path / "prover.yaml"
    prover.write_text("backend: scripted\nmodel: statement-prover\nscript: tests.study_world:statement_prover\n")
    study_tools = tmp_path / "study-tools"  # the study's judge: SafeVerify not built yet
    study_config = tmp_path / "study.yaml"
    settings = yaml.safe_load(config.read_text())
    settings["judge"]["tools_dir"] = str(study_tools)
    study_config.write_text(yaml.safe_dump(settings, allow_unicode=True))
    study = tmp_path / "study"
    arguments = ["prove-study", str(statements), "--prover", f"p={prover}", "--k", "2", "--study-dir", str(study)]
    first = _ok(repro(*arguments, "--config", str(study_config)), 3)
    assert "prove-study --resume --study-dir" in first.stderr
    report = json.loads(_ok(repro("study-report", str(study), "--json"), 0).stdout)
    (figures,) = report["provers"]
    # the screen passed every sample; the judge gave no verdict on any: nothing is covered, every pair unfinished
    assert figures["covered"] == 0 and figures["unjudged_samples"] == figures["screened_samples"] == 2 * count
    assert figures["incomplete_pairs"] == count

    lay_out_safeverify(study_tools)
    _ok(repro("prove-study", "--resume", "--study-dir", str(study)), 0)
    report = json.loads(_ok(repro("study-report", str(study), "--json"), 0).stdout)
    (figures,) = report["provers"]
    assert figures["covered"] == count and figures["unjudged_samples"] == 0 and figures["incomplete_pairs"] == 0
    assert figures["screened_samples"] == figures["verified_samples"] == 2 * count
    assert figures["judge_rejected_samples"] == 0
    assert figures["verified_by_real_judge"] is False, "a stand-in judge's successes verify nothing"
    text = _ok(repro("study-report", str(study)), 0).stdout
    assert "judged by a stand-in judge" in text
