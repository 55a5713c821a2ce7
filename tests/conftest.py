from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.doubles.openai_server import OpenAITestServer

REPO = Path(__file__).resolve().parents[1]
# the test doubles (tests/doubles/) are not part of repro: a `repro` subprocess a test starts (the CLI, a fake
# REPL, a scripted endpoint) imports them from the repository root, wherever it runs
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)
# ... and inside the sandbox too: a fake REPL started under bubblewrap imports tests.doubles, which the
# sandbox does not show (it shows repro's package, never the checkout around it); the suite shows its own
# tests/ read-only the way an operator shows what their node's Lean needs
SANDBOX_READ_ONLY = "REPRO_SANDBOX_READ_ONLY"
os.environ[SANDBOX_READ_ONLY] = os.pathsep.join(
    p for p in (str(REPO / "tests"), os.environ.get(SANDBOX_READ_ONLY)) if p
)
# REPRO_SHARED_DATA points elsewhere (a worktree whose parent holds no shared/data)
SHARED_DATA = Path(os.environ.get("REPRO_SHARED_DATA") or REPO.parent / "shared" / "data")


def shared_file(relative: str) -> Path:
    """A file of ../shared/data, or skip (with the reason printed) where it is absent."""
    path = SHARED_DATA / relative
    if not path.is_file():
        pytest.skip(f"{path} is absent: the shared benchmark data lives beside the clone on CI and dev machines")
    return path


@pytest.fixture
def openai_server() -> Iterator[OpenAITestServer]:
    with OpenAITestServer() as server:
        yield server


@pytest.fixture
def sample_gsm8k() -> Path:
    return REPO / "data" / "gsm8k_sample.jsonl"


def lean_available() -> bool:
    return shutil.which("lake") is not None and (REPO / "lean_project" / ".lake" / "packages" / "mathlib").is_dir()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if lean_available():
        return
    skip = pytest.mark.skip(
        reason="needs a real Lean toolchain: `lake` on PATH and lean_project/ built "
        "(`repro lean setup`, or docker/Dockerfile)"
    )
    for item in items:
        if "lean" in item.keywords:
            item.add_marker(skip)
