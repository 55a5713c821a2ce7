"""The tours, run as a new user types them: every ``<!-- tour -->`` block of the README and docs/, command by
command, in a fresh directory per page, through the installed ``repro`` command.

A shell line must exit 0 unless its comment says ``exit N``; a Python block runs as a script in the same
directory. The README's tour starts where its set-up command ends: ``repro run`` with no arguments, in an
empty directory (it must not need the repository around it).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs_pages import PAGES, README, REPO, Block, blocks, shell_lines

BIN = Path(sys.executable).parent
TOUR_PAGES = [page for page in PAGES if any(block.marker == "tour" for block in blocks(page))]


def _environment(home: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("REPRO_", "PYTHONPATH"))}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["HF_HOME"] = str(home / "hf")  # load_dataset's cache stays inside the tour
    env["REPRO_CACHE_DIR"] = str(home / "cache")
    env["HOME"] = str(home)
    return env


def _expected_status(line: str) -> int:
    first = line.splitlines()[0]  # a here-document's lines are data, not comments
    comment = first.split(" #", 1)[1] if " #" in first else ""
    match = re.search(r"\bexit (\d+)\b", comment)
    return int(match.group(1)) if match else 0


def _run_block(block: Block, cwd: Path, env: dict[str, str]) -> dict[str, str]:
    """Runs the block; returns each step's stdout and stderr by the step as written."""
    outputs: dict[str, str] = {}
    if block.language == "python":
        steps = [([sys.executable, "-c", block.body], 0, "python block")]
    else:
        steps = [(["bash", "-c", line], _expected_status(line), line) for line in shell_lines(block.body)]
    for argv, expected, shown in steps:
        done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == expected, (
            f"{block.where}: `{shown.strip()}` exited {done.returncode}, expected {expected}\n"
            f"stdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"
        )
        outputs[shown.strip()] = done.stdout + done.stderr
    return outputs


@pytest.mark.parametrize("page", TOUR_PAGES, ids=lambda path: str(path.relative_to(REPO)))
def test_tour(page: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    env = _environment(tmp_path)
    if page == README:
        setup = next(block for block in blocks(README) if block.marker == "setup")
        assert setup.body.strip().endswith("&& repro run")
        done = subprocess.run(["repro", "run"], cwd=work, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"the set-up's `repro run` in an empty directory: {done.stderr[-3000:]}"
        assert "next: repro status runs/demo-" in done.stdout
    outputs: dict[str, str] = {}
    for block in blocks(page):
        if block.marker == "tour":
            outputs.update(_run_block(block, work, env))
    if page == README:  # what the tour promises a new user sees: every result says it is not verified
        said = {line.split(" #")[0].split()[1]: text for line, text in outputs.items() if line.startswith("repro ")}
        for command in ("run", "status", "release", "reverify"):
            assert re.search(r"NOT VERIFIED|not verified|unverified|not real", said[command]), (command, said[command])
        assert "NOT VERIFIED" in (work / "runs" / "demo" / "report.html").read_text(encoding="utf-8")
        assert "NOT checked by a real Lean backend" in (work / "release" / "demo" / "README.md").read_text("utf-8")


def test_the_readme_has_a_tour_and_it_covers_the_journeys() -> None:
    tour = "\n".join(block.body for block in blocks(README) if block.marker == "tour")
    for command in ("repro status", "repro audit", "repro report", "repro release", "repro reverify"):
        assert command in tour, f"the README's offline tour does not run `{command}`"
