"""Regenerate the offline demo's recording (``data/demo_recording.jsonl``) from the stand-ins.

    python -m tests.doubles.record_demo            # from the repository root; rewrites the recording
    python -m tests.doubles.record_demo --check    # exit 1 when the shipped recording differs

It runs the shipped offline journeys as a user types them (``repro run`` on ``configs/demo.yaml``, the README's
tour: ``release``, ``reverify``; the offline study over the demo's statements; the check-proof examples), each
with the demo config's Lean and judge swapped for the test suite's stand-ins behind the recorded backends'
identities (:mod:`tests.doubles.recorder`), and merges everything they answered into one sorted file. The
recording is stale when ``tests/test_recording.py`` says so: the demo on the recording no longer gives the
outcomes the stand-ins give (a prompt, a stage, the gate or the stand-ins changed).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

from repro.lean.recorded import DEFAULT_RECORDING, JUDGE, LEAN, Recording
from tests.doubles.recorder import RECORD_TO

REPO = Path(__file__).resolve().parents[2]
RECORDING = REPO / DEFAULT_RECORDING
DEMO_CONFIG = REPO / "configs" / "demo.yaml"

# the lean: and judge: sections that stand in for the demo's recorded backends while recording
RECORDING_LEAN = {"backend": "factory", "factory": "tests.doubles.recorder:recording_lean"}
RECORDING_JUDGE = {"backend": "factory", "factory": "tests.doubles.recorder:recording_judge"}
# the demo's prover as a study prover (``--prover NAME=FILE.yaml``)
DEMO_PROVER = {
    "backend": "scripted",
    "model": "demo-scripted",
    "script": "repro.demo:responder",
    "base_url": None,
    "api_key_env": None,
}  # the README tour's prover.yaml


def recording_config(directory: Path) -> Path:
    """``configs/demo.yaml`` with its Lean and judge recorded from the stand-ins."""
    config: dict[str, Any] = yaml.safe_load(DEMO_CONFIG.read_text(encoding="utf-8"))
    lean = {key: value for key, value in config.get("lean", {}).items() if key not in ("backend", "recording")}
    config["lean"] = {**lean, **RECORDING_LEAN}
    config["judge"] = dict(RECORDING_JUDGE)
    path = directory / "record.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


# the check-proof example of docs/python-api.md ("One proof through the screen and the judge"); the tour fails if
# they part
CHECK_PROOF_STATEMENT = "theorem t (x : ℕ) (h : x = 3) : x + 1 = 4 := by sorry"
CHECK_PROOF_OUTPUT = "```lean4\ntheorem t (x : ℕ) (h : x = 3) : x + 1 = 4 := by\n  subst h\n  rfl\n```"


def journeys(config: Path, work: Path) -> list[tuple[list[str], set[int]]]:
    """Each command (``repro`` arguments) and the exit statuses it may end with."""
    prover = work / "demo-prover.yaml"
    prover.write_text(yaml.safe_dump(DEMO_PROVER), encoding="utf-8")
    (work / "statement.lean").write_text(CHECK_PROOF_STATEMENT, encoding="utf-8")
    (work / "proof.txt").write_text(CHECK_PROOF_OUTPUT, encoding="utf-8")
    run = str(work / "runs" / "demo")
    release = str(work / "release" / "demo")
    return [
        (["run", "--config", str(config), "--run-dir", run], {0}),
        (["release", run, "--out", release, "--allow-unverified"], {0}),
        (["reverify", release, "--config", str(config)], {4}),
        (["check-proof", "--statement", "statement.lean", "--proof", "proof.txt", "--config", str(config)], {4}),
        (["statements", run, "--out", str(work / "studies" / "demo.jsonl")], {0}),
        (
            [
                "prove-study",
                str(work / "studies" / "demo.jsonl"),
                "--k",
                "2",
                "--study-dir",
                str(work / "studies" / "demo-provers"),
                "--prover",
                f"demo={prover}",
                "--config",
                str(config),
            ],
            {0, 4},
        ),
    ]


def record(out: Path) -> Recording:
    with tempfile.TemporaryDirectory(prefix="repro-record-") as scratch:
        work = Path(scratch)
        lines = work / "answers.jsonl"
        lines.touch()
        env = {
            **os.environ,
            RECORD_TO: str(lines),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
            "REPRO_CACHE_DIR": str(work / "cache"),
            "REPRO_SAFEVERIFY_DIR": str(work / "tools"),
        }
        config = recording_config(work)
        for arguments, statuses in journeys(config, work):
            done = subprocess.run(
                [sys.executable, "-m", "repro.cli", *arguments], cwd=work, env=env, capture_output=True, text=True
            )
            shown = " ".join(["repro", *arguments])
            print(f"exit {done.returncode}: {shown}", file=sys.stderr)
            if done.returncode not in statuses:
                raise SystemExit(f"{shown} exited {done.returncode}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
        recording = Recording.load(lines)
    recording.save(out)
    return recording


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.doubles.record_demo", description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=RECORDING, help=f"where to write (default: {DEFAULT_RECORDING})")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when the recording differs")
    arguments = parser.parse_args(argv)
    if arguments.check:
        with tempfile.TemporaryDirectory() as scratch:
            fresh = Path(scratch) / "fresh.jsonl"
            record(fresh)
            same = fresh.read_bytes() == RECORDING.read_bytes() if RECORDING.is_file() else False
        stale = f"{RECORDING} is stale: run python -m tests.doubles.record_demo"
        print("the recording is up to date" if same else stale)
        return 0 if same else 1
    recording = record(arguments.out)
    print(f"wrote {arguments.out}: {recording.count(LEAN)} Lean answers, {recording.count(JUDGE)} judge verdicts")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
