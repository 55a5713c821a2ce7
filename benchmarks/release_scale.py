"""`repro release --allow-unverified` on a synthetic run store of 100,000 problems.

Builds the store once with the shipped schema (through :class:`RunStore`, so migrations and
indexes are the real ones) and fills it with bulk inserts: problems with a question and answer,
one candidate each; most are retained with statement, proof and checked code of a few hundred
bytes (as a fake-REPL run leaves them: not checked by real Lean, so only ``--allow-unverified``
releases them), some rejected, a few left unfinished. Then times the command as a subprocess,
imports included, and reports its wall time and peak RSS (the child's ``ru_maxrss``). With
``--baseline`` it first times another checkout's `repro` on the same store: before and after in one run.

    python benchmarks/release_scale.py --problems 100000 --out bench-runs/release-100k
    python benchmarks/release_scale.py --out bench-runs/release-100k --reuse   # time again, same store
    git worktree add /tmp/repro-main main && python benchmarks/release_scale.py --reuse --baseline /tmp/repro-main
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

from repro.records import STAGE_ORDER, Candidate, CandidateStatus, SourceProblem

try:
    from benchmarks._bulk_store import INSERT_CANDIDATE, INSERT_PROBLEM, bulk_connection, store_mb
except ModuleNotFoundError:  # run by path (python benchmarks/NAME.py): this folder is first on sys.path
    from _bulk_store import INSERT_CANDIDATE, INSERT_PROBLEM, bulk_connection, store_mb

MODELS = {stage: f"synthetic-{stage}" for stage in ("rewrite", "screen", "formalize", "align", "prove")}
BACKENDS = dict.fromkeys(MODELS, "scripted")


def retained_candidate(problem_id: str, index: int) -> Candidate:
    threads, bolts = 3600 + index % 997, 12 + index % 7
    answer = str(threads // bolts)
    name = f"rewrite_{index}"
    statement = (
        f"theorem {name} (threads bolts per_bolt : ℕ) (h₀ : threads = {threads}) (h₁ : bolts = {bolts})\n"
        f"    (h₂ : per_bolt = threads / bolts) : per_bolt = {answer} := by"
    )
    proof = "  subst h₀ h₁\n  subst h₂\n  norm_num"
    return Candidate(
        candidate_id=f"{problem_id}#r0",
        problem_id=problem_id,
        rewrite_index=0,
        status=CandidateStatus.retained,
        rewritten_question=(
            f"A weaver spins {threads} threads and shares them equally among {bolts} bolts of cloth,"
            " discarding any remainder. How many threads does each bolt receive? Give a whole number."
        ),
        screener_answer=answer,
        lean_statement=statement,
        theorem_name=name,
        lean_proof=proof,
        verified_code=f"{statement}\n{proof}\n\n#print axioms {name}\n",
        new_answer=answer,
        answer_class="integer",
        answer_disagrees_with_screener=index % 50 == 0,
        proof_attempt_number=index % 3,
        verifier_backend="lean_interact",
        verifier_is_real_lean=False,
        judge_tool="stand-in judge",
        judge_toolchain="v4.15.0",
        lean_toolchain="leanprover/lean4:v4.15.0",
        mathlib_revision="v4.15.0",
        models=MODELS,
        backends=BACKENDS,
    )


def build(run_dir: Path, problems: int) -> dict[str, float]:
    started = time.perf_counter()
    connection = bulk_connection(run_dir)
    generator = random.Random(0)
    last_rank = len(STAGE_ORDER) - 1
    retained = 0
    connection.execute("BEGIN")
    for index in range(problems):
        problem_id = f"gsm8k:{index}"
        problem = SourceProblem(
            problem_id=problem_id,
            source="gsm8k",
            source_id=str(index),
            question=f"Problem {index}: a robe needs 3600 threads in 12 bolts. How many threads go in each bolt?",
            answer="300",
            level=f"Level {index % 5 + 1}",
        )
        draw = generator.random()
        outcome = "retained" if draw < 0.9 else "rejected" if draw < 0.99 else None
        if outcome == "retained":
            candidate = retained_candidate(problem_id, index)
            retained += 1
        else:
            candidate = Candidate(candidate_id=f"{problem_id}#r0", problem_id=problem_id, rewrite_index=0)
            candidate.status = CandidateStatus.rejected if outcome else CandidateStatus.in_progress
        connection.execute(
            INSERT_PROBLEM,
            (problem_id, index, problem.model_dump_json(), outcome, problem.level, None, outcome or "prove: timeout"),
        )
        reached = last_rank if outcome == "retained" else 2
        connection.execute(
            INSERT_CANDIDATE,
            (
                candidate.candidate_id,
                problem_id,
                candidate.status.value,
                None,
                None,
                candidate.model_dump_json(),
                candidate.proof_attempt_number,
                reached,
                reached if outcome == "retained" else reached - 1,
            ),
        )
    connection.execute("COMMIT")
    connection.close()
    return {
        "build_s": round(time.perf_counter() - started, 1),
        "store_mb": store_mb(run_dir),
        "retained": retained,
    }


def time_release(run_dir: Path, release_dir: Path, source: Path | None = None) -> dict[str, float]:
    """Wall time and peak RSS of one release, in a child that measures itself (imports included)."""
    shutil.rmtree(release_dir, ignore_errors=True)
    environment = dict(os.environ)
    if source is not None:  # an older checkout's package comes first on the path
        environment["PYTHONPATH"] = os.pathsep.join(filter(None, [str(source), environment.get("PYTHONPATH")]))
    arguments = ["release", str(run_dir.resolve()), "--out", str(release_dir.resolve()), "--allow-unverified"]
    started = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "-c", _MEASURED_CHILD, *arguments],
        capture_output=True,
        text=True,
        env=environment,
        cwd=source,  # `python -c` puts the working directory first on the path
    )
    wall_s = time.perf_counter() - started
    if completed.returncode != 0:
        raise RuntimeError(completed.stderr[-2000:])
    in_process_s, peak_rss_mb, module = json.loads(completed.stdout.strip().splitlines()[-1])
    if source is not None and not module.startswith(str(source.resolve())):
        raise RuntimeError(f"the baseline ran {module}, not the package under {source}")
    return {
        "release_s": round(wall_s, 2),  # the whole command, interpreter start-up included
        "release_in_process_s": round(in_process_s, 2),  # from the first import to the command's return
        "release_peak_rss_mb": round(peak_rss_mb, 1),
        "release_mb": round(sum(p.stat().st_size for p in release_dir.rglob("*") if p.is_file()) / 2**20, 1),
    }


# the child times `repro release` from its first import and reports that and its own peak RSS
_MEASURED_CHILD = """
import json, resource, sys, time
started = time.perf_counter()
import repro, repro.cli
sys.argv = ["repro", *sys.argv[1:]]
code = repro.cli.main()
elapsed = time.perf_counter() - started
print(json.dumps([elapsed, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, repro.__file__]))
sys.exit(code or 0)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--problems", type=int, default=100_000)
    parser.add_argument("--out", default="bench-runs/release-100k")
    parser.add_argument("--reuse", action="store_true", help="time the release of an existing store")
    parser.add_argument(
        "--baseline",
        type=Path,
        help="a source tree of another repro version (e.g. `git worktree add /tmp/base main`): timed first, same store",
    )
    arguments = parser.parse_args()
    run_dir = Path(arguments.out)
    figures: dict[str, object] = {"problems": arguments.problems}
    if not arguments.reuse:
        shutil.rmtree(run_dir, ignore_errors=True)
        figures.update(build(run_dir, arguments.problems))
    release_dir = run_dir.parent / f"{run_dir.name}-release"
    if arguments.baseline is not None:
        before = time_release(run_dir, release_dir, arguments.baseline)
        figures["baseline"] = before
    after = time_release(run_dir, release_dir)
    figures.update(after)
    if arguments.baseline is not None:
        figures["speedup"] = round(before["release_s"] / after["release_s"], 1)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
