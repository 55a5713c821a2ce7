"""``repro`` as a user runs it: a subprocess from the checkout, for the tests that check exit statuses,
what was printed and what is left on disk."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

from tests.conftest import REPO
from tests.doubles.fake_lean import fake_lean_section
from tests.doubles.openai_server import OpenAITestServer


def repro(*arguments: str, cwd: Path = REPO, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``repro ARGUMENTS`` to its end; ``env`` adds to (or overrides) this process's environment."""
    return subprocess.run(
        [sys.executable, "-m", "repro.cli", *arguments],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )


def demo_endpoint_config(path: Path, base_url: str, *, limit: int) -> Path:
    """A run config over ``limit`` problems of the demo sample whose every model stage asks ``base_url``
    (the test server) and whose Lean is the fake backend; written to ``path``."""
    model = {"backend": "openai", "model": "m", "base_url": base_url, "api_key_env": None}
    config = {
        "dataset": {"name": "gsm8k", "path": str(REPO / "data" / "gsm8k_sample.jsonl"), "limit": limit},
        "models": {stage: dict(model) for stage in ("rewrite", "screen", "formalize", "align", "prove")},
        "lean": fake_lean_section(workers=1),
        "judge": {"backend": "factory", "factory": "tests.doubles.judge:stand_in_judge"},
    }
    path.write_text(yaml.safe_dump(config))
    return path


def stop_at_first_request(arguments: list[str], server: OpenAITestServer, *, within_s: float) -> tuple[int, str]:
    """Start ``repro ARGUMENTS``, send it SIGTERM (what a scheduler or ``kill`` sends) once ``server`` has
    its first model request, and return its exit status and stderr."""
    process = subprocess.Popen(
        [sys.executable, "-m", "repro.cli", *arguments],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + within_s
    while not server.requests and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    assert server.requests, "the command reached its first model request"
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    return process.returncode, stderr
