"""Kill -9 of a study midway, then --resume: same report, no model request and no Lean check repeated.

The endpoint is the OpenAI-compatible test server (requests counted over HTTP); Lean is the fake REPL,
whose log records every command it checked. To make "repeated" exact, the server stops answering after
60 requests and the test kills the study only once those 60 answers and all their verdicts are stored:
a request still hanging at the kill never got an answer, so asking it again is not a repeat.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from repro.study import StudyStore
from tests import study_world as world
from tests.doubles.openai_server import OpenAITestServer

REPO = Path(__file__).resolve().parents[1]


def _key(body: dict[str, Any]) -> tuple[str, str, int]:
    theorem = re.search(r"theorem (study_\d+)", body["messages"][-1]["content"])
    return (body["model"], theorem.group(1) if theorem else "?", int(body.get("seed") or 0))


class FreezingResponder:
    """Answers like the world's provers, but holds every request after the first ``freeze_after``."""

    def __init__(self, freeze_after: int | None) -> None:
        self.freeze_after = freeze_after
        self.answered: list[tuple[str, str, int]] = []
        self.release = threading.Event()
        self._lock = threading.Lock()

    def __call__(self, body: dict[str, Any], index: int) -> str:
        if index == 0:
            with self._lock:
                hold = self.freeze_after is not None and len(self.answered) >= self.freeze_after
                if not hold:
                    self.answered.append(_key(body))
            if hold:
                self.release.wait(60)
        return world.http_responder(body, index)


def _command(study_dir: Path, base_url: str, statements: Path, lean: Path) -> list[str]:
    provers = [f"--prover={name}={name}@{base_url}" for name in ("corrupt", "restate", "slow")]
    return [
        sys.executable,
        "-m",
        "repro.cli",
        "prove-study",
        str(statements),
        *provers,
        "--k",
        str(world.K),
        "--study-dir",
        str(study_dir),
        "--config",
        str(lean),
    ]


def _checked_codes(log: Path) -> list[str]:
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    # the gate sends four commands per check (our target, the prover's code, the bridge, #print axioms);
    # the prover's code is the one that identifies what was checked
    trusted = ("repro_target_", "type_of%", "#print axioms", "repro_preflight")
    # (each worker's header import is not a check)
    checks = [e["cmd"] for e in entries if not e["cmd"].lstrip().startswith("import ")]
    return [command for command in checks if not any(marker in command for marker in trusted)]


def _report(study_dir: Path) -> dict[str, Any]:
    result = subprocess.run(
        [sys.executable, "-m", "repro.cli", "study-report", str(study_dir), "--json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    )
    report = json.loads(result.stdout)
    report.pop("study_dir")
    for prover in report["provers"]:  # wall-clock measurements differ between any two runs
        for key in ("model_seconds", "lean_seconds", "model_seconds_per_verified", "lean_seconds_per_verified"):
            prover["cost"].pop(key)
        if prover.get("salvage"):  # so is the Lean time salvage's checks took
            prover["salvage"].pop("lean_seconds")
    return report


def test_kill_9_then_resume_repeats_no_request_and_no_lean_check(tmp_path: Path) -> None:
    statements = world.write_statement_file(tmp_path / "statements.jsonl")
    lean = world.write_lean_config(tmp_path)
    environment = {**os.environ, "PYTHONPATH": str(REPO)}

    with OpenAITestServer(world.http_responder) as server:
        clean_env = {**environment, "REPRO_FAKE_REPL_LOG": str(tmp_path / "clean.log")}
        subprocess.run(
            _command(tmp_path / "clean", server.base_url, statements, lean),
            cwd=REPO,
            env=clean_env,
            check=True,
            capture_output=True,
        )
        clean_requests = len(server.requests)
    assert clean_requests == 180

    responder = FreezingResponder(freeze_after=60)
    with OpenAITestServer(responder) as server:
        killed_env = {**environment, "REPRO_FAKE_REPL_LOG": str(tmp_path / "killed.log")}
        command = _command(tmp_path / "killed", server.base_url, statements, lean)
        process = subprocess.Popen(
            command, cwd=REPO, env=killed_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        deadline = time.monotonic() + 90
        stored = judged = 0
        while time.monotonic() < deadline:
            if (tmp_path / "killed" / "study.sqlite").exists():
                with StudyStore(tmp_path / "killed", create=False) as store:
                    counts = store.sample_counts()
                stored = sum(n for n, _ in counts.values())
                judged = sum(j for _, j in counts.values())
                if stored == 60 * world.K and judged == stored:
                    break
            time.sleep(0.05)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        requests_at_kill = len(server.requests)
        assert (stored, judged) == (240, 240), "the kill landed once 60 answers were stored and judged"
        answered_before = list(responder.answered)
        checks_before = _checked_codes(tmp_path / "killed.log")
        assert len(answered_before) == 60 and requests_at_kill > 60, "requests were still hanging at the kill"

        responder.freeze_after = None
        responder.release.set()
        resumed = subprocess.run(
            [*command[:4], "--resume", "--study-dir", str(tmp_path / "killed")],
            cwd=REPO,
            env=killed_env,
            capture_output=True,
            text=True,
        )
        assert resumed.returncode == 0, resumed.stderr
        after = [_key(body) for body in server.requests[requests_at_kill:]]

    assert not set(after) & set(answered_before), "a request answered before the kill was asked again"
    assert len(after) == len(set(after))
    assert len(answered_before) + len(after) == clean_requests

    clean_checks, all_checks = _checked_codes(tmp_path / "clean.log"), _checked_codes(tmp_path / "killed.log")
    assert 0 < len(checks_before) < len(all_checks)
    assert len(all_checks) == len(set(all_checks)), "some code was checked by Lean twice"
    assert sorted(all_checks) == sorted(clean_checks)

    assert _report(tmp_path / "killed") == _report(tmp_path / "clean")
