"""What a real user meets first: loud failures, honest exits, per-stage overrides, readable input errors.

Each test runs the command as a user would (``repro ...`` in a subprocess, or ``main([...])``) and
checks what the user sees: the exit status, the message, and what is (not) left on disk.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from repro.cli import main
from repro.config import load_config
from repro.testing import Fault, OpenAITestServer
from tests.doubles.fake_lean import STAND_INS_SET
from tests.repro_cli import repro

REPO = Path(__file__).resolve().parents[1]
STAGES = ("rewrite", "screen", "formalize", "align", "prove", "extract", "classify")


def endpoint_config(path: Path, base_url: str, *, api_key_env: str | None = None, **top: Any) -> Path:
    """A config whose every stage talks to one OpenAI-compatible endpoint, over the demo sample."""
    model = {"backend": "openai", "model": "m", "base_url": base_url, "api_key_env": api_key_env, "max_retries": 0}
    config = {
        "name": "endpoint",
        "dataset": {"name": "gsm8k", "path": str(REPO / "data" / "gsm8k_sample.jsonl")},
        "models": {stage: dict(model) for stage in STAGES},
        "lean": {"backend": "fake", "workers": 1},
        "judge": {"backend": "factory", "factory": "tests.doubles.judge:stand_in_judge"},
        "problems_in_flight": 1,
        **top,
    }
    path.write_text(yaml.safe_dump(config))
    return path


# -- failures reported as failures -------------------------------------------------------------------


def test_shipped_config_with_no_endpoint_fails_with_the_cause_before_creating_a_run_directory(tmp_path: Path) -> None:
    environment = {key: value for key, value in os.environ.items() if key != "OPENAI_API_KEY"}
    result = subprocess.run(
        [sys.executable, "-m", "repro.cli", "run", "--config", str(REPO / "configs" / "gsm8k.yaml"), "--limit", "3"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=environment,
    )
    assert result.returncode == 3 and "Traceback" not in result.stderr, "an endpoint down is infrastructure"
    assert "http://127.0.0.1:8001/v1" in result.stderr and "unreachable" in result.stderr
    assert "OPENAI_API_KEY is not set" in result.stderr
    assert list(tmp_path.iterdir()) == [], "no run directory is created"


def test_a_401_names_the_unset_key_variable(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with OpenAITestServer(api_key="sk-right") as server:
        config = endpoint_config(tmp_path / "c.yaml", server.base_url, api_key_env="REPRO_TEST_UNSET_KEY")
        code = main(["run", "--config", str(config), "--run-dir", str(tmp_path / "run")])
        assert server.requests == [], "no completion was requested"
    assert code == 3
    assert "HTTP 401: the environment variable REPRO_TEST_UNSET_KEY is not set" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_an_endpoint_answering_500_fails_the_preflight(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with OpenAITestServer(fail_status=500) as server:
        config = endpoint_config(tmp_path / "c.yaml", server.base_url)
        assert main(["run", "--config", str(config), "--run-dir", str(tmp_path / "run")]) == 3
    assert "HTTP 500" in capsys.readouterr().err and not (tmp_path / "run").exists()


def test_consecutive_failures_stop_the_run_and_release_warns_it_is_unfinished(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with OpenAITestServer() as server:
        server.faults = [Fault(status=500) for _ in range(1000)]  # /models answers; every completion fails
        config = endpoint_config(tmp_path / "c.yaml", server.base_url, stop_after_failed_calls=3)
        code = main(["run", "--config", str(config), "--run-dir", str(tmp_path / "run"), "--limit", "10"])
        calls = len(server.requests)
    error = capsys.readouterr().err
    assert code == 3 and "3 consecutive calls failed" in error and "HTTP 500" in error
    assert f"repro run --resume --run-dir {tmp_path / 'run'}" in error
    assert calls == 3, "no problem is drawn after the endpoint is declared down"
    assert main(["release", str(tmp_path / "run"), "--out", str(tmp_path / "rel"), "--allow-unverified"]) == 1
    error = capsys.readouterr().err
    assert "unfinished" in error and "nothing to release" in error and not (tmp_path / "rel").exists()


def test_doctor_fails_for_what_the_config_needs_and_ignores_lean_it_does_not_use(tmp_path: Path) -> None:
    with OpenAITestServer() as server:
        fine = endpoint_config(tmp_path / "fine.yaml", server.base_url)
        passing = repro("doctor", "--config", str(fine))
    assert passing.returncode == 0, passing.stdout + passing.stderr
    assert "MISSING" not in passing.stdout and "Lean toolchain" in passing.stdout
    down = endpoint_config(tmp_path / "down.yaml", "http://127.0.0.1:9/v1")
    failing = repro("doctor", "--config", str(down))
    assert failing.returncode == 1 and "MISSING endpoint http://127.0.0.1:9/v1 (m): unreachable" in failing.stdout


# -- configuration -----------------------------------------------------------------------------------


def test_set_on_one_stage_does_not_leak_through_a_yaml_anchor() -> None:
    config = load_config(REPO / "configs" / "gsm8k.yaml", ["models.align.model=judge-2"])
    assert config.models["align"].model == "judge-2"
    assert {config.models[stage].model for stage in ("screen", "extract", "classify")} == {"gpt-4o-mini"}


def test_prove_k_is_bounded_and_greedy_sampling_with_k_above_one_warns(tmp_path: Path) -> None:
    huge = repro("run", "--config", "configs/demo.yaml", "--set", "prove.k=1000000", "--run-dir", str(tmp_path / "a"))
    assert huge.returncode == 2 and "prove.k" in huge.stderr and "less than or equal to 1024" in huge.stderr
    config = endpoint_config(tmp_path / "c.yaml", "http://127.0.0.1:9/v1", prove={"k": 4})
    greedy = repro("run", "--config", str(config), "--run-dir", str(tmp_path / "b"))
    assert "warning: prove.k=4 with models.prove.temperature=0" in greedy.stderr


def test_resume_applies_allowed_changes_records_them_and_refuses_the_others(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    first = repro("run", "--config", "configs/demo.yaml", "--run-dir", str(run_dir), "--limit", "2")
    assert first.returncode == 0, first.stderr
    refused = repro("run", "--resume", "--run-dir", str(run_dir), "--set", "models.prove.model=other")
    assert refused.returncode == 2 and "models.prove.model" in refused.stderr and "cannot change" in refused.stderr
    resumed = repro("run", "--resume", "--run-dir", str(run_dir), "--set", "lean.timeout_s=11", "--limit", "4")
    assert resumed.returncode == 0, resumed.stderr
    stored = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert stored["lean"]["timeout_s"] == 11 and stored["dataset"]["limit"] == 4
    status = json.loads(repro("status", str(run_dir), "--json").stdout)
    assert status["rates"]["drawn"] == 4
    import sqlite3

    with sqlite3.connect(run_dir / "run.sqlite") as connection:
        recorded = [json.loads(v) for (v,) in connection.execute("SELECT value FROM meta WHERE key LIKE 'resume_%'")]
    assert recorded == [{"dataset.limit": {"from": 2, "to": 4}, "lean.timeout_s": {"from": 30.0, "to": 11.0}}]
    smaller = repro("run", "--resume", "--run-dir", str(run_dir), "--limit", "1")
    assert smaller.returncode == 2 and "dataset.limit" in smaller.stderr


def test_filters_that_match_nothing_fail_and_an_unreachable_target_warns(tmp_path: Path) -> None:
    for flag, value in (("--ids", "999"), ("--levels", "5")):
        result = repro("run", "--config", "configs/demo.yaml", flag, value, "--run-dir", str(tmp_path / flag))
        assert result.returncode == 2 and f"no problem matches {flag}" in result.stderr
        assert not (tmp_path / flag).exists()
    result = repro(
        "run", "--config", "configs/demo.yaml", "--target", "10", "--limit", "3", "--run-dir", str(tmp_path / "t")
    )
    assert "--target 10 is larger than --limit 3" in result.stderr


def test_a_mistyped_dataset_leaves_no_run_directory(tmp_path: Path) -> None:
    result = repro("run", "--config", "configs/demo.yaml", "--dataset", "nope.jsonl", "--run-dir", str(tmp_path / "r"))
    assert result.returncode == 2 and "nope.jsonl" in result.stderr and "file not found" in result.stderr
    assert not (tmp_path / "r").exists()


# -- input data ----------------------------------------------------------------------------------------


def _gsm8k_row(index: int, question: str | None = None) -> dict[str, Any]:
    return {"id": str(index), "question": question or f"What is {index} + 1?", "answer": f"so\n#### {index + 1}"}


def test_gzip_and_bom_files_are_read_transparently(tmp_path: Path) -> None:
    text = "".join(json.dumps(_gsm8k_row(i)) + "\n" for i in range(3))
    with gzip.open(tmp_path / "g.jsonl.gz", "wt", encoding="utf-8") as handle:
        handle.write(text)
    (tmp_path / "bom.jsonl").write_bytes(b"\xef\xbb\xbf" + text.encode())
    for name in ("g.jsonl.gz", "bom.jsonl"):
        run_dir = tmp_path / f"run-{name}"
        result = repro(
            "run", "--config", "configs/demo.yaml", "--dataset", str(tmp_path / name), "--run-dir", str(run_dir)
        )
        assert result.returncode == 0, result.stderr
        assert json.loads(repro("status", str(run_dir), "--json").stdout)["rates"]["drawn"] == 3


def test_every_bad_row_is_named_by_file_line_and_field_and_can_be_skipped(tmp_path: Path) -> None:
    sample = [json.loads(line) for line in (REPO / "data" / "gsm8k_sample.jsonl").read_text().splitlines()[:3]]
    rows = [
        json.dumps({**sample[0], "id": "0"}).encode(),
        b'{"id": "1", "question": "caf\xe9?", "answer": "#### 1"}',  # Latin-1, not UTF-8
        json.dumps(_gsm8k_row(2, question="x" * 500)).encode(),
        json.dumps({**sample[1], "id": "0"}).encode(),  # the id of line 1 again
        b'{"id": "4", "question": "unterminated',
        json.dumps({**sample[2], "id": "5"}).encode(),
    ]
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"\n".join(rows) + b"\n")
    base = ["run", "--config", "configs/demo.yaml", "--dataset", str(path), "--set", "dataset.max_question_chars=300"]
    base += STAND_INS_SET  # rows of the demo's sample with other ids: not in the demo's recording
    failed = repro(*base, "--run-dir", str(tmp_path / "a"))
    assert failed.returncode == 2 and "Traceback" not in failed.stderr and not (tmp_path / "a").exists()
    assert "4 bad rows of 6" in failed.stderr
    assert f"{path}:2:" in failed.stderr and "not valid UTF-8 (byte 0xe9" in failed.stderr
    assert f"{path}:3: field 'question'" in failed.stderr and "over the cap of 300" in failed.stderr
    assert f"{path}:4: field 'id'" in failed.stderr and "duplicate id '0' (first at line 1)" in failed.stderr
    assert f"{path}:5:" in failed.stderr and "not valid JSON" in failed.stderr
    skipped = repro(*base, "--skip-bad-rows", "--run-dir", str(tmp_path / "b"))
    assert skipped.returncode == 0, skipped.stderr
    status = repro("status", str(tmp_path / "b"))
    assert "skipped source rows (4" in status.stdout and f"{path}:4: field 'id'" in status.stdout
    # a user's own JSONL: repro will not guess its license
    guessed = repro("release", str(tmp_path / "b"), "--out", str(tmp_path / "rel"), "--allow-unverified")
    assert guessed.returncode == 2 and "will not guess" in guessed.stderr and not (tmp_path / "rel").exists()
    release = repro(
        "release", str(tmp_path / "b"), "--out", str(tmp_path / "rel"), "--allow-unverified",
        "--license", "cc-by-4.0", "--attribution", "Problems by the Example Lab",
    )  # fmt: skip
    assert release.returncode == 0, release.stderr
    card = (tmp_path / "rel" / "README.md").read_text()
    assert card.startswith("---\nlicense: cc-by-4.0") and "Problems by the Example Lab" in card
    assert "Skipped source rows (4)" in card and "duplicate id '0'" in card


def test_a_malformed_json_file_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "rows.json"
    path.write_text('[\n  {"question": "q", "answer": "#### 1"},\n  {"question": "q2" "answer": "#### 2"}\n]\n')
    result = repro("run", "--config", "configs/demo.yaml", "--dataset", str(path), "--run-dir", str(tmp_path / "r"))
    assert result.returncode == 2 and f"{path}:3:" in result.stderr and "not valid JSON" in result.stderr
    assert "Traceback" not in result.stderr
