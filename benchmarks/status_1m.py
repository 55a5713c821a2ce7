"""`repro status` on a synthetic run store of a million problems.

Builds the store with the real schema (through :class:`RunStore`, so migrations and indexes are
the shipped ones) and fills it with bulk inserts: problems with levels and outcomes (some left
unfinished with a cause), one candidate each with the furthest stage it reached, several attempts
per problem, and the running totals a real run keeps. Then times `repro status` and `repro status
--json` as subprocesses, imports included.

    python benchmarks/status_1m.py --problems 1000000 --out bench-runs/status-1m
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from repro.records import STAGE_ORDER, AttemptStatus, Candidate, CandidateStatus, SourceProblem, Stage

try:
    from benchmarks._bulk_store import INSERT_CANDIDATE, INSERT_PROBLEM, bulk_connection, store_mb
except ModuleNotFoundError:  # run by path (python benchmarks/NAME.py): this folder is first on sys.path
    from _bulk_store import INSERT_CANDIDATE, INSERT_PROBLEM, bulk_connection, store_mb

REJECTIONS = [(Stage.screen, "infeasible"), (Stage.align, "semantic_mismatch"), (Stage.prove, "proof_not_found")]


def build(run_dir: Path, problems: int, attempts_per_problem: int) -> dict[str, float]:
    started = time.perf_counter()
    connection = bulk_connection(run_dir)
    generator = random.Random(0)
    counts: Counter[tuple[str, str, str]] = Counter()
    template = SourceProblem(problem_id="x", source="synthetic", source_id="0", question="q", answer="1")
    candidate_template = Candidate(candidate_id="x#r0", problem_id="x", rewrite_index=0)
    last_rank = len(STAGE_ORDER) - 1
    connection.execute("BEGIN")
    for index in range(problems):
        problem_id = f"synthetic:{index}"
        draw = generator.random()
        outcome, cause = ("retained", None) if draw < 0.4 else ("rejected", None) if draw < 0.99 else (None, "x")
        stage, reason = REJECTIONS[index % len(REJECTIONS)]
        reached = last_rank if outcome == "retained" else STAGE_ORDER.index(stage)
        status = CandidateStatus.retained if outcome == "retained" else CandidateStatus.rejected
        payload = template.model_copy(update={"problem_id": problem_id}).model_dump_json()
        connection.execute(
            INSERT_PROBLEM,
            (problem_id, index, payload, outcome, f"Level {index % 5 + 1}", None, cause and "screen: unreachable"),
        )
        connection.execute(
            INSERT_CANDIDATE,
            (
                f"{problem_id}#r0",
                problem_id,
                status.value,
                None if outcome == "retained" else stage.value,
                None if outcome == "retained" else reason,
                candidate_template.model_dump_json(),
                index % 3 if outcome == "retained" else None,
                reached,
                reached if outcome == "retained" else reached - 1,
            ),
        )
        for number in range(attempts_per_problem):
            attempt_stage = STAGE_ORDER[min(number, reached)].value
            attempt_status = AttemptStatus.passed.value
            counts[(attempt_stage, attempt_status, "")] += 1
            connection.execute(
                "INSERT INTO attempts(candidate_id, problem_id, stage, attempt_number, status, reason, payload,"
                " lean_seconds) VALUES (?, ?, ?, ?, ?, NULL, '{}', 0.1)",
                (f"{problem_id}#r0", problem_id, attempt_stage, number, attempt_status),
            )
        if index % 50000 == 49999:
            connection.execute("COMMIT")
            connection.execute("BEGIN")
    connection.executemany(
        "INSERT INTO attempt_counts(stage, status, reason, n) VALUES (?, ?, ?, ?)",
        [(*key, value) for key, value in counts.items()],
    )
    lean_seconds = 0.1 * problems * attempts_per_problem
    connection.execute("INSERT OR REPLACE INTO totals(name, value) VALUES ('lean_seconds', ?)", (lean_seconds,))
    connection.executemany(
        "INSERT INTO model_totals VALUES (?, 'synthetic', ?, 0, 0, 0, ?, ?, ?)",
        [(stage.value, problems, problems * 300, problems * 100, problems * 2.0) for stage in STAGE_ORDER],
    )
    connection.execute("COMMIT")
    connection.close()
    return {"build_s": round(time.perf_counter() - started, 1), "store_mb": store_mb(run_dir)}


def time_command(arguments: list[str]) -> float:
    started = time.perf_counter()
    completed = subprocess.run([sys.executable, "-m", "repro.cli", *arguments], capture_output=True, text=True)
    if completed.returncode != 0:
        raise RuntimeError(completed.stderr[-2000:])
    return round(time.perf_counter() - started, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--problems", type=int, default=1_000_000)
    parser.add_argument("--attempts-per-problem", type=int, default=4)
    parser.add_argument("--out", default="bench-runs/status-1m")
    parser.add_argument("--reuse", action="store_true", help="time commands on an existing store")
    arguments = parser.parse_args()
    run_dir = Path(arguments.out)
    figures: dict[str, float] = {"problems": arguments.problems}
    if not arguments.reuse:
        shutil.rmtree(run_dir, ignore_errors=True)
        figures.update(build(run_dir, arguments.problems, arguments.attempts_per_problem))
    figures["status_s"] = time_command(["status", str(run_dir)])
    figures["status_json_s"] = time_command(["status", str(run_dir), "--json"])
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
