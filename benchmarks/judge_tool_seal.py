"""What checking the judge's tools before each judgement costs (:mod:`repro.judge.integrity`, red1 R9).

A SafeVerify checkout with Mathlib built holds tens of thousands of files (Mathlib v4.15.0: about 5,000
modules, each with ``.lean``, ``.olean``, ``.ilean``, ``.trace`` and ``.hash`` files, and the other
packages'), several GB in all. Hashing them before each judgement would cost minutes; the seal records one
``stat`` per file instead (size, inode, modification and change times, mode). This builds a tree of as many
files (small ones: a ``stat`` does not read the file, so size does not matter) and times sealing, checking
an unchanged tree, checking after one file changed, and the walk that looks for a path this user can write,
each as milliseconds per judgement and against a judgement's own cost (``--judgement-s``, the seconds Lean
takes to compile a target and a submission importing Mathlib: about 10 s on a node, to fill in).

    PYTHONPATH=. python benchmarks/judge_tool_seal.py --files 30000
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from repro.judge import integrity
from repro.judge.integrity import check_seal, seal_tools, writable_path


def _tree(root: Path, files: int, per_directory: int = 200) -> None:
    for index in range(files):
        directory = root / ".lake" / "packages" / "mathlib" / ".lake" / "build" / "lib" / f"d{index // per_directory}"
        if index % per_directory == 0:
            directory.mkdir(parents=True, exist_ok=True)
        (directory / f"M{index}.olean").write_bytes(b"x")


def _timed(action: object, repeat: int) -> float:
    started = time.perf_counter()
    for _ in range(repeat):
        action()  # type: ignore[operator]
    return (time.perf_counter() - started) / repeat * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=30000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--judgement-s", type=float, default=10.0)
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        home = Path(directory) / "v4.15.0"
        _tree(home, arguments.files)
        seal_ms = _timed(lambda: seal_tools(home), 1)

        def first() -> None:  # a new process: the whole tree walked
            integrity._CHECKED.clear()
            assert check_seal(home) is None

        first_ms = _timed(first, arguments.repeat)
        then_ms = _timed(lambda: check_seal(home), arguments.repeat * 20)  # each later judgement of the process
        victim = next(home.rglob("M7.olean"))
        before = victim.stat()
        victim.write_bytes(b"y")
        os.utime(victim, ns=(before.st_atime_ns, before.st_mtime_ns))  # the modification time set back
        integrity._CHECKED.clear()
        assert check_seal(home) is not None, "a rewrite with its mtime set back must show"
        writable_ms = _timed(lambda: writable_path(home), arguments.repeat)
    budget = arguments.judgement_s * 1000
    print(f"files: {arguments.files}")
    print(f"seal (once, at setup): {seal_ms:.0f} ms")
    print(f"first check in a process (whole tree): {first_ms:.0f} ms = {first_ms / budget:.2%} of one judgement")
    print(f"each later check (entries, executables): {then_ms:.2f} ms = {then_ms / budget:.4%} of one judgement")
    print("a rewrite with its modification time set back: found")
    print(f"writable-path walk (unconfined real judgements only; stops at the first): {writable_ms:.2f} ms")


if __name__ == "__main__":
    main()
