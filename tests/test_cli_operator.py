"""Issue 20's majors as a user meets them: each test runs ``repro`` in a subprocess and checks the
exit status, what was printed and what is left on disk."""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from repro.cli import build_parser, main
from repro.dirlock import hold_directory
from repro.testing import Fault, OpenAITestServer
from tests import study_world
from tests.doubles.fake_lean import STAND_INS_SET
from tests.pipeline_world import world_config
from tests.repro_cli import demo_endpoint_config, repro, stop_at_first_request

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished two-problem demonstration run (scripted models, fake Lean)."""
    run_dir = tmp_path_factory.mktemp("demo") / "run"
    result = repro("run", "--config", "configs/demo.yaml", "--run-dir", str(run_dir), "--limit", "2")
    assert result.returncode == 0, result.stderr
    return run_dir


# -- 1: a resume keeps the stored limit and says what it changes ------------------------------------


def test_resume_with_the_same_config_keeps_the_stored_limit_and_says_so(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    first = repro("run", "--config", "configs/demo.yaml", "--run-dir", str(run_dir), "--limit", "2")
    assert first.returncode == 0, first.stderr
    # configs/demo.yaml says limit: 20; the run was started with --limit 2
    resumed = repro("run", "--resume", "--run-dir", str(run_dir), "--config", "configs/demo.yaml")
    assert resumed.returncode == 0, resumed.stderr
    assert "resume keeps the run's settings (limit 2, target none)" in resumed.stdout
    assert yaml.safe_load((run_dir / "config.yaml").read_text())["dataset"]["limit"] == 2
    assert json.loads(repro("status", str(run_dir), "--json").stdout)["rates"]["drawn"] == 2
    wider = repro("run", "--resume", "--run-dir", str(run_dir), "--config", "configs/demo.yaml", "--limit", "3")
    assert wider.returncode == 0, wider.stderr
    assert "resume changes: dataset.limit 2 -> 3" in wider.stdout
    assert json.loads(repro("status", str(run_dir), "--json").stdout)["rates"]["drawn"] == 3


# -- 2: one writer per directory, and the refusal names it ------------------------------------------


def test_a_held_run_study_or_evaluation_directory_is_refused_with_the_holders_pid(
    demo_run: Path, tmp_path: Path
) -> None:
    log_before = (demo_run / "run.log").read_text()
    with hold_directory(demo_run, command="a test holding the run"):
        resumed = repro("run", "--resume", "--run-dir", str(demo_run))
    assert resumed.returncode == 3, resumed.stderr
    assert f"in use by process {os.getpid()} (a test holding the run" in resumed.stderr
    assert (demo_run / "run.log").read_text() == log_before, "the refused resume wrote nothing"
    study_dir, eval_dir = tmp_path / "study", tmp_path / "eval"
    with hold_directory(study_dir, command="repro prove-study"), hold_directory(eval_dir, command="repro evaluate"):
        study = repro("prove-study", "--resume", "--study-dir", str(study_dir))
        evaluation = repro("evaluate", str(tmp_path / "release"), "--eval-dir", str(eval_dir), "--resume")
    assert study.returncode == 3 and f"process {os.getpid()} (repro prove-study" in study.stderr
    assert evaluation.returncode == 3 and f"process {os.getpid()} (repro evaluate" in evaluation.stderr
    # the lock dies with its holder: the same resume now runs
    assert repro("run", "--resume", "--run-dir", str(demo_run)).returncode == 0


# -- 3: an interrupt names the real directory and the right command ---------------------------------


def test_sigterm_on_prove_study_prints_the_study_resume_command(tmp_path: Path) -> None:
    statements = study_world.write_statement_file(tmp_path / "statements.jsonl")
    lean = study_world.write_lean_config(tmp_path)
    study_dir = tmp_path / "study dir"
    with OpenAITestServer(latency_s=30) as server:
        arguments = ["prove-study", str(statements), f"--prover=p=m@{server.base_url}", "--k", "1"]
        arguments += ["--study-dir", str(study_dir), "--config", str(lean)]
        returncode, stderr = stop_at_first_request(arguments, server, within_s=90)
    assert returncode == 130, stderr
    assert f"resume with: repro prove-study --resume --study-dir '{study_dir}'" in stderr
    assert "DIR" not in stderr.replace(str(study_dir), "")
    assert (study_dir / "study.sqlite").exists()


# -- 4: reading commands work on a read-only run; writing ones fail in one line ---------------------


def _read_only_prefix(directory: Path) -> list[str] | None:
    """A command prefix under which ``directory`` is read-only even for root (a private mount)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("unshare") is None:
        return None
    script = 'mount --bind "$0" "$0" && mount -o remount,bind,ro "$0" && exec "$@"'
    prefix = ["unshare", "-m", "sh", "-c", script, str(directory)]
    probe = subprocess.run([*prefix, "sh", "-c", f"! touch '{directory}/probe'"], capture_output=True)
    return prefix if probe.returncode == 0 else None


@pytest.fixture
def read_only_run(demo_run: Path, tmp_path: Path) -> Iterator[tuple[Path, list[str]]]:
    run_dir = tmp_path / "archived"
    shutil.copytree(demo_run, run_dir, ignore=shutil.ignore_patterns(".repro.lock"))
    prefix = _read_only_prefix(run_dir)
    if prefix is None:
        pytest.skip("running as root without a private read-only mount (unshare): cannot make a read-only run")
    if not prefix:
        for path in [run_dir, *run_dir.iterdir()]:
            path.chmod(0o555 if path.is_dir() else 0o444)
    yield run_dir, prefix
    for path in [run_dir, *run_dir.iterdir()]:
        path.chmod(0o755 if path.is_dir() else 0o644)


def test_reading_commands_work_on_a_read_only_run_and_writing_ones_fail_in_one_line(
    read_only_run: tuple[Path, list[str]], tmp_path: Path
) -> None:
    run_dir, prefix = read_only_run

    def under(*arguments: str) -> subprocess.CompletedProcess[str]:
        command = [*prefix, sys.executable, "-m", "repro.cli", *arguments]
        return subprocess.run(command, cwd=REPO, capture_output=True, text=True)

    before = sorted(path.name for path in run_dir.iterdir())
    status = under("status", str(run_dir), "--json")
    assert status.returncode == 0, status.stderr
    assert json.loads(status.stdout)["rates"]["drawn"] == 2
    audit = under("audit", str(run_dir), "--json")
    assert audit.returncode == 0 and isinstance(json.loads(audit.stdout), list), audit.stderr
    report = under("report", str(run_dir), "--out", str(tmp_path / "report.html"))
    assert report.returncode == 0 and (tmp_path / "report.html").stat().st_size > 0, report.stderr
    release = under("release", str(run_dir), "--out", str(tmp_path / "rel"), "--allow-unverified")
    assert release.returncode == 0 and (tmp_path / "rel" / "SHA256SUMS").exists(), release.stderr
    for writing in (("run", "--resume", "--run-dir", str(run_dir)), ("report", str(run_dir))):
        refused = under(*writing)
        assert refused.returncode == 2, refused.stderr
        assert "Traceback" not in refused.stderr and len(refused.stderr.strip().splitlines()) == 1, refused.stderr
        assert "Read-only" in refused.stderr or "read-only" in refused.stderr
    assert sorted(path.name for path in run_dir.iterdir()) == before


# -- 5: a coverage study whose every request failed does not exit 0; endpoints are checked first ----


def test_prove_study_preflights_its_endpoints_and_fails_when_every_request_failed(tmp_path: Path) -> None:
    rows = study_world.statement_rows()[:2]
    statements = tmp_path / "statements.jsonl"
    statements.write_text("".join(json.dumps(row) + "\n" for row in rows))
    lean = study_world.write_lean_config(tmp_path, workers=1)
    down = repro(
        "prove-study", str(statements), "--prover", "p=m@http://127.0.0.1:9/v1", "--k", "1",
        "--study-dir", str(tmp_path / "down"), "--config", str(lean),
    )  # fmt: skip
    assert down.returncode == 3 and "http://127.0.0.1:9/v1" in down.stderr and "unreachable" in down.stderr
    assert not (tmp_path / "down").exists(), "a study whose endpoint is down creates nothing"
    with OpenAITestServer() as server:
        server.faults = [Fault(status=500) for _ in range(100)]  # /models answers; every completion fails
        spec = tmp_path / "p.yaml"
        spec.write_text(
            yaml.safe_dump({"model": "m", "base_url": server.base_url, "api_key_env": None, "max_retries": 0})
        )
        failed = repro(
            "prove-study", str(statements), "--prover", f"p={spec}", "--k", "1",
            "--study-dir", str(tmp_path / "study"), "--config", str(lean),
        )  # fmt: skip
    assert failed.returncode == 3, failed.stdout + failed.stderr
    assert "every model request failed" in failed.stderr
    assert f"repro prove-study --resume --study-dir {tmp_path / 'study'}" in failed.stderr


# -- 8: a release never replaces another one, nor writes into an unrelated folder, unasked ----------


def test_release_refuses_a_non_empty_out_unless_overwrite(demo_run: Path, tmp_path: Path) -> None:
    out = tmp_path / "rel"
    first = repro("release", str(demo_run), "--out", str(out), "--allow-unverified")
    assert first.returncode == 0, first.stderr
    for name in ("data/test.parquet", "data/test.jsonl", "README.md", "SHA256SUMS"):
        assert name in first.stdout and (out / name).exists()
    manifest = (out / "SHA256SUMS").read_bytes()
    again = repro("release", str(demo_run), "--out", str(out), "--allow-unverified")
    assert again.returncode == 2 and "is not empty" in again.stderr and "--overwrite" in again.stderr
    assert (out / "SHA256SUMS").read_bytes() == manifest
    unrelated = tmp_path / "thesis"
    unrelated.mkdir()
    (unrelated / "chapter1.tex").write_text("keep me")
    into = repro("release", str(demo_run), "--out", str(unrelated), "--allow-unverified")
    assert into.returncode == 2 and [p.name for p in unrelated.iterdir()] == ["chapter1.tex"]
    replaced = repro("release", str(demo_run), "--out", str(out), "--allow-unverified", "--overwrite")
    assert replaced.returncode == 0, replaced.stderr
    assert sum(1 for _ in (out / "data" / "test.jsonl").open()) == 2


# -- 9: reverify checks its backend first and uses check-proof's exit statuses ----------------------


def test_reverify_without_lean_says_so_once_and_exits_3_and_a_fake_pass_exits_4(demo_run: Path, tmp_path: Path) -> None:
    if (REPO / "lean_project" / ".lake").exists():
        pytest.skip("a Lean project is built here, so the repl backend works")
    out = tmp_path / "rel"
    assert repro("release", str(demo_run), "--out", str(out), "--allow-unverified").returncode == 0
    no_lean = repro("reverify", str(out), "--backend", "repl")
    assert no_lean.returncode == 3, no_lean.stdout + no_lean.stderr
    assert "cannot check code" in no_lean.stderr and "NOT verified" not in no_lean.stdout
    # the demo's own config names its stand-in judge (a release's rows are judged again by the config's judge)
    fake = repro("reverify", str(out), "--backend", "fake", "--config", str(REPO / "configs" / "demo.yaml"))
    assert fake.returncode == 4, fake.stdout + fake.stderr
    assert "2 of 2 instances passed" in fake.stdout and "not real" in fake.stderr


# -- 10: a run waiting on a slow endpoint says so ----------------------------------------------------


def test_a_run_waiting_on_a_slow_endpoint_prints_a_heartbeat_naming_the_wait(tmp_path: Path) -> None:
    with OpenAITestServer() as server:
        server.faults = [Fault(delay_s=4)]  # the first request hangs for 4 s; the rest answer at once
        path = demo_endpoint_config(tmp_path / "c.yaml", server.base_url, limit=1)
        run_dir = tmp_path / "run"
        result = repro("run", "--config", str(path), "--run-dir", str(run_dir), env={"REPRO_PROGRESS_INTERVAL_S": "1"})
    assert result.returncode in (0, 3), result.stderr
    expected = f"waiting on 1 request to rewrite model m (openai:{server.base_url}), the oldest for"
    assert expected in result.stdout, result.stdout
    assert expected in (run_dir / "run.log").read_text()


def test_the_heartbeat_names_the_lean_checks_in_flight(tmp_path: Path) -> None:
    """A slow Lean check (the fake REPL sleeps 3 s on the gate's axiom command) is named in the
    heartbeat by the candidate it checks, with its age."""
    rules = tmp_path / "slow.json"
    rules.write_text(json.dumps([{"match": "#print axioms", "action": "slow", "delay_s": 3}]))
    run_dir = tmp_path / "run"
    result = repro(
        "run", "--config", "configs/demo.yaml", "--run-dir", str(run_dir), "--limit", "1",
        *STAND_INS_SET, "--set", f"lean.factory_options.rules={rules}", env={"REPRO_PROGRESS_INTERVAL_S": "1"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "waiting on 1 check by Lean (fake-repl), the oldest for" in result.stdout, result.stdout
    assert re.search(r"the oldest for \d+ s: gsm8k:0#r0 \d+ s", result.stdout), result.stdout
    assert "check by Lean (fake-repl)" in (run_dir / "run.log").read_text()


def test_check_proof_batch_names_the_row_whose_lean_check_is_in_flight(tmp_path: Path) -> None:
    rules = tmp_path / "slow.json"
    rules.write_text(json.dumps([{"match": "#print axioms", "action": "slow", "delay_s": 3}]))
    config = tmp_path / "c.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "lean": {"backend": "fake", "workers": 1, "fake_rules": str(rules)},
                "judge": {"backend": "factory", "factory": "tests.doubles.judge:stand_in_judge"},
            }
        )
    )
    statement = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry"
    proof = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num"
    batch = tmp_path / "in.jsonl"
    batch.write_text(json.dumps({"id": "robe-7", "statement": statement, "output": proof}) + "\n")
    result = repro(
        "check-proof", "--batch", str(batch), "--out", str(tmp_path / "out.jsonl"), "--config", str(config),
        env={"REPRO_PROGRESS_INTERVAL_S": "1"},
    )  # fmt: skip
    assert result.returncode == 4, result.stdout + result.stderr
    assert re.search(r"waiting on 1 check by Lean \(fake-repl\), the oldest for \d+ s: row robe-7", result.stderr), (
        result.stderr
    )


def test_the_progress_line_counts_unfinished_problems_apart_with_their_cause(tmp_path: Path) -> None:
    """Every model request fails: no problem is finished, both are unfinished (model_call_failed)."""
    with OpenAITestServer() as server:
        server.faults = [Fault(status=500) for _ in range(100)]
        model = {"backend": "openai", "model": "m", "base_url": server.base_url, "api_key_env": None, "max_retries": 0}
        config = {
            "dataset": {"name": "gsm8k", "path": str(REPO / "data" / "gsm8k_sample.jsonl"), "limit": 2},
            "models": {stage: dict(model) for stage in ("rewrite", "screen", "formalize", "align", "prove")},
            "lean": {"backend": "fake", "workers": 1},
        }
        path = tmp_path / "c.yaml"
        path.write_text(yaml.safe_dump(config))
        run_dir = tmp_path / "run"
        result = repro("run", "--config", str(path), "--run-dir", str(run_dir), env={"REPRO_PROGRESS_INTERVAL_S": "0"})
    assert result.returncode == 3, result.stdout + result.stderr
    last = [line for line in result.stdout.splitlines() if line.startswith("progress:")][-1]
    assert "problems finished 0 of 2 (retained 0, rejected 0), unfinished 2 (model_call_failed 2)" in last, last
    assert "unfinished 2 (model_call_failed 2)" in (run_dir / "run.log").read_text()


# -- minors: every option documented, the exit statuses in every --help, --run-dir everywhere -------


def _parsers(parser: argparse.ArgumentParser, name: str = "repro") -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield name, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command, child in action.choices.items():
                yield from _parsers(child, f"{name} {command}")


def test_every_option_has_help_and_every_help_lists_the_exit_statuses() -> None:
    for name, parser in _parsers(build_parser()):
        undocumented = [
            action.option_strings or action.dest
            for action in parser._actions
            if action.help is None and not isinstance(action, argparse._HelpAction | argparse._VersionAction)
        ]
        assert undocumented == [], f"{name}: options without help text"
        text = parser.format_help()
        assert "exit status" in text and "130 interrupted" in text.replace("\n", " "), name


def test_run_dir_is_accepted_as_an_option_wherever_a_run_directory_is_read(demo_run: Path) -> None:
    positional = repro("status", str(demo_run), "--json")
    option = repro("status", "--run-dir", str(demo_run), "--json")
    assert option.returncode == 0 and json.loads(option.stdout) == json.loads(positional.stdout)
    audit = repro("audit", "--run-dir", str(demo_run), "--limit", "1")
    assert audit.returncode == 0, audit.stderr
    missing = repro("audit")
    assert missing.returncode == 2 and "RUN_DIR or --run-dir" in missing.stderr


def test_check_proof_on_prose_says_no_lean_block_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    statement, prose = tmp_path / "s.lean", tmp_path / "p.txt"
    statement.write_text("theorem t (x : ℕ) (h : x = 2) : x + 1 = 3 := by sorry")
    prose.write_text("I think the answer is 3, because x is 2. Sorry, I cannot write Lean.")
    code = main(["check-proof", "--statement", str(statement), "--proof", str(prose), "--backend", "fake"])
    assert code == 1
    reasons = [line for line in capsys.readouterr().out.splitlines() if line.strip().startswith("reason:")]
    assert reasons and "no_lean_block" in reasons[0]


def test_the_test_server_answers_500_with_the_scripts_message() -> None:
    def broken(body: dict[str, object], index: int) -> str:
        raise KeyError("no rule matches this prompt")

    with OpenAITestServer(broken) as server:
        response = httpx.post(f"{server.base_url}/chat/completions", json={"model": "m", "messages": []}, timeout=10)
    assert response.status_code == 500
    assert "no rule matches this prompt" in response.json()["error"]["message"]


def test_a_mistyped_dataset_name_is_refused_offline_with_the_close_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    code = main(
        ["run", "--config", str(REPO / "configs" / "demo.yaml"), "--dataset", "gsm8kk", "--run-dir", str(run_dir)]
    )
    assert code == 2 and "did you mean gsm8k?" in capsys.readouterr().err
    assert not run_dir.exists()


def test_every_funnel_row_adds_up_with_rejections_counted_where_candidates_stopped(tmp_path: Path) -> None:
    cases = ["restated_target", "infeasible", "semantic_mismatch", "intermediate", "retained"]
    dataset = tmp_path / "p.jsonl"
    dataset.write_text(
        "".join(
            json.dumps({"question": f"Problem {i} [[case:{case}]]: 3600 threads in 12 bolts?", "answer": "#### 300"})
            + "\n"
            for i, case in enumerate(cases)
        )
    )
    (tmp_path / "world.yaml").write_text(yaml.safe_dump(world_config(str(dataset))))
    run_dir = tmp_path / "run"
    assert repro("run", "--config", str(tmp_path / "world.yaml"), "--run-dir", str(run_dir)).returncode == 0
    funnel = json.loads(repro("status", str(run_dir), "--json").stdout)["funnel"]
    for stage, row in funnel.items():
        assert row["reached"] - row["passed"] == sum(row["rejected"].values()), (stage, row)
    # rejections happened at several stages, each counted once, where its candidate stopped
    assert len([stage for stage, row in funnel.items() if row["rejected"]]) >= 2


def test_a_study_waiting_on_a_slow_prover_says_what_it_waits_on(tmp_path: Path) -> None:
    statements = tmp_path / "statements.jsonl"
    statements.write_text(json.dumps(study_world.statement_rows()[0]) + "\n")
    lean = study_world.write_lean_config(tmp_path, workers=1)
    with OpenAITestServer(latency_s=3) as server:
        result = repro(
            "prove-study", str(statements), "--prover", f"p=m@{server.base_url}", "--k", "1",
            "--study-dir", str(tmp_path / "study"), "--config", str(lean),
            env={"REPRO_PROGRESS_INTERVAL_S": "1"},
        )  # fmt: skip
    assert result.returncode in (0, 3), result.stderr
    assert (
        f"still working: waiting on 1 request to prover p (openai:{server.base_url}), the oldest for" in result.stderr
    )
