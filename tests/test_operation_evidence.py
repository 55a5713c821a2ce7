"""Audit evidence, logs and progress for unattended runs, piped output, the test server CLI, the wheel."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from repro.app import audit, run, status
from repro.config import build_config
from repro.lean.factory import build_verifier
from repro.records import ReasonCode
from repro.stages.prove import ProofSample, verify_sample
from tests.doubles.fake_lean import fake_lean_settings
from tests.doubles.openai_server import OpenAITestServer
from tests.pipeline_world import screen_outage, world_config, write_problems
from tests.repro_cli import demo_endpoint_config, repro, stop_at_first_request

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def world_run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A scripted run (tests/pipeline_world.py) in which two retained candidates had a first proof
    sample rejected for ``sorry``, plus a screen and an align rejection."""
    base = tmp_path_factory.mktemp("world")
    cases = ["second_attempt", "infeasible", "second_attempt", "semantic_mismatch", "retained"]
    dataset = write_problems(base / "p.jsonl", cases)
    (base / "world.yaml").write_text(yaml.safe_dump(world_config(str(dataset))))
    run_dir = base / "run"
    result = repro("run", "--config", str(base / "world.yaml"), "--run-dir", str(run_dir))
    assert result.returncode == 0, result.stderr
    return run_dir


# -- audit -------------------------------------------------------------------------------------------


def test_audit_shows_rejected_attempts_of_retained_candidates_with_prover_output_and_checked_code(
    world_run_dir: Path,
) -> None:
    counted = json.loads(repro("status", str(world_run_dir), "--json").stdout)["attempts"]
    forbidden = sum(
        row["count"] for row in counted if (row["stage"], row["reason"]) == ("verify", "forbidden_construct")
    )
    assert forbidden == 2
    rows = json.loads(repro("audit", str(world_run_dir), "--json", "--reason", "forbidden_construct").stdout)
    assert len(rows) == forbidden, "audit shows every rejection that status counts"
    assert all(row["candidate_status"] == "retained" for row in rows)
    assert all(row["prover_output"] and "sorry" in row["checked_code"] for row in rows)
    text = repro("audit", str(world_run_dir), "--stage", "verify").stdout
    assert "(retained)" in text and "prover output:" in text and "checked code:" in text
    assert "forbidden construct: sorry" in text


def test_audit_validates_its_filters_and_limit_zero_shows_none(world_run_dir: Path) -> None:
    bad_stage = repro("audit", str(world_run_dir), "--stage", "verfy")
    assert bad_stage.returncode == 2 and "unknown stage" in bad_stage.stderr and "verify" in bad_stage.stderr
    bad_reason = repro("audit", str(world_run_dir), "--reason", "nope")
    assert bad_reason.returncode == 2 and "unknown reason code" in bad_reason.stderr
    none = repro("audit", str(world_run_dir), "--limit", "0", "--json")
    assert none.returncode == 0 and json.loads(none.stdout) == []


def test_audit_piped_into_a_closed_reader_ends_without_a_traceback(world_run_dir: Path, tmp_path: Path) -> None:
    errors = tmp_path / "stderr.txt"
    # `true` exits without reading: every write of the audit meets a closed pipe
    subprocess.run(
        f"'{sys.executable}' -m repro.cli audit '{world_run_dir}' --json 2> '{errors}' | true",
        shell=True,
        cwd=REPO,
        check=False,
    )
    assert "Traceback" not in errors.read_text() and "BrokenPipe" not in errors.read_text()


def test_screen_and_align_rejections_show_the_judges_analysis(tmp_path: Path) -> None:
    dataset = write_problems(tmp_path / "p.jsonl", ["infeasible", "semantic_mismatch"])
    run(build_config(world_config(str(dataset))), tmp_path / "run")
    screen = audit(tmp_path / "run", stage="screen")
    assert screen and screen[0]["analysis"] == "ok" and screen[0]["texts"], "the judge's reply and analysis"
    align = audit(tmp_path / "run", stage="align")
    assert align and isinstance(align[0]["analysis"], list) and align[0]["texts"]


# -- classification of failures ----------------------------------------------------------------------


def test_prover_output_without_any_lean_is_no_lean_block() -> None:
    statement = "theorem t (x : ℕ) (h : x = 2) : x + 1 = 3 := by sorry"
    verifier = build_verifier(fake_lean_settings(workers=1))

    async def check(text: str) -> Any:
        try:
            return await verify_sample(
                statement,
                ProofSample(index=0, text=text, finish_reason="stop"),
                verifier,
                header="",
                allow_native_decide=False,
            )
        finally:
            await verifier.close()

    _, result = asyncio.run(check("I am sorry, I cannot prove this."))
    assert result.reason == ReasonCode.no_lean_block


def test_infrastructure_failures_are_unfinished_not_rejected_and_leave_the_funnel_after_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    flag = screen_outage(monkeypatch, tmp_path)
    dataset = write_problems(tmp_path / "p.jsonl", ["retained"] * 3)
    config = world_config(str(dataset), retries={"rewrites_per_problem": 2, "formalizations_per_rewrite": 2})
    run(build_config(config), tmp_path / "run")
    before = status(tmp_path / "run")
    assert all("model_call_failed" not in row["rejected"] for row in before["funnel"].values())
    assert before["candidates"] == {"unfinished": 3}
    flag.unlink()
    run(None, tmp_path / "run", resume=True)
    after = status(tmp_path / "run")
    assert after["candidates"] == {"retained": 3}
    assert all(not row["rejected"] for row in after["funnel"].values())


# -- unattended runs ---------------------------------------------------------------------------------


def test_redirected_output_gets_plain_progress_lines_and_the_run_keeps_a_log(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    result = repro(
        "run", "--config", "configs/demo.yaml", "--run-dir", str(run_dir), "--limit", "3",
        env={"REPRO_PROGRESS_INTERVAL_S": "0"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "progress: problems finished 3 of 3" in result.stdout
    log = (run_dir / "run.log").read_text()
    assert "start: repro" in log and "progress: problems finished" in log and "finished: retained" in log


def test_sigterm_stops_a_run_like_ctrl_c_and_it_resumes(tmp_path: Path) -> None:
    with OpenAITestServer(latency_s=0.5) as server:
        path = demo_endpoint_config(tmp_path / "c.yaml", server.base_url, limit=5)
        run_dir = tmp_path / "run"
        arguments = ["run", "--config", str(path), "--run-dir", str(run_dir)]
        returncode, stderr = stop_at_first_request(arguments, server, within_s=60)
    assert returncode == 130 and f"resume with: repro run --resume --run-dir {run_dir}" in stderr
    assert "stopped: KeyboardInterrupt" in (run_dir / "run.log").read_text()


def test_piped_output_never_wraps_commands_or_cuts_table_cells(tmp_path: Path) -> None:
    run_dir = tmp_path / ("a-long-directory-name-" * 5) / "run"
    model = "an-organisation/a-model-name-long-enough-to-be-cut-in-an-eighty-column-table-v2"
    result = repro(
        "run", "--config", "configs/demo.yaml", "--run-dir", str(run_dir), "--limit", "2",
        "--set", f"models.prove.model={model}",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert f"next: repro status {run_dir}  |" in result.stdout
    assert model in repro("status", str(run_dir)).stdout


# -- tools a user runs directly ----------------------------------------------------------------------


def test_the_test_server_has_a_cli_for_dry_runs(tmp_path: Path) -> None:
    import openai

    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump([{"when": "capital", "reply": "Paris"}, {"reply": "no idea"}]))
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.doubles.openai_server", "--port", "0", "--script", str(rules)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        base_url = line.split(" at ", 1)[1].split()[0]
        client = openai.OpenAI(base_url=base_url, api_key="none", max_retries=0)
        reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "the capital?"}])
        assert reply.choices[0].message.content == "Paris"
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    assert process.returncode == 0


def test_lean_setup_from_a_built_wheel_creates_the_project_with_its_default_target(tmp_path: Path) -> None:
    from hatchling.builders.wheel import WheelBuilder

    wheel = Path(next(iter(WheelBuilder(str(REPO)).build(directory=str(tmp_path / "dist"), versions=["standard"]))))
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in ("lean-toolchain", "lakefile.toml", "ReproLean.lean"):
        assert f"repro/_bundled/lean_project/{name}" in names
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    work = tmp_path / "work"
    work.mkdir()
    script = (
        f"import sys; sys.path.insert(0, {str(site)!r}); import repro; assert repro.__file__.startswith({str(site)!r});"
        " from repro.cli import main; sys.exit(main(['lean', 'setup']))"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=work, capture_output=True, text=True)
    assert "OK created lean_project for Lean v4.15.0" in result.stdout, result.stderr
    assert (work / "lean_project" / "ReproLean.lean").is_file()
    lakefile = (work / "lean_project" / "lakefile.toml").read_text()
    assert 'defaultTargets = ["ReproLean"]' in lakefile
    if result.returncode != 0:  # no Lean toolchain here: the message says so, not "lean_project missing"
        assert "lake is not on PATH" in result.stderr
