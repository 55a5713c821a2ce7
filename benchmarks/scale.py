"""Scale of one run: problems per second and peak memory from 1k to 100k problems on one node.

Zero-latency scripted models (the test world's responder) and the fake Lean REPL (real
LeanInteract client, real subprocesses), so everything measured is the toolkit's own cost per
problem: orchestration, the run store, the Lean pool, the cache. The problems stream from a
generator; nothing holds the dataset in memory. After the run it times the commands a user runs on
the finished store (`status`, `audit --limit 10`, `release --allow-unverified`) as subprocesses,
imports included.

    python benchmarks/scale.py --problems 1000 10000 --out bench-runs

Prints one JSON object per size: problems/s over the whole run and over its first and last fifth
(flat per-problem cost means these agree), the run process's CPU per problem likewise (the fake
REPL processes excluded; unlike wall time it does not depend on what else the machine runs), peak
RSS of the run's process, and each command's wall time.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from repro.config import build_config, dump_config
from repro.lean import build_verifier
from repro.llm import ModelClient, ScriptedBackend
from repro.pipeline import Pipeline
from repro.records import SourceProblem
from repro.store import RunStore
from tests.doubles.judge import StandInJudge
from tests.pipeline_world import responder, world_config

STAGES = ("rewrite", "screen", "formalize", "align", "prove", "extract", "classify")


def problem_stream(count: int) -> Iterator[SourceProblem]:
    for index in range(count):
        yield SourceProblem(
            problem_id=f"scale:{index}",
            source="scale",
            source_id=str(index),
            question=f"Problem {index}: a robe needs 3600 threads in 12 bolts. How many per bolt?",
            answer="300",
            level=f"Level {index % 5 + 1}",
        )


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def run_pipeline(run_dir: Path, count: int, *, workers: int, in_flight: int, k: int) -> dict[str, Any]:
    settings = world_config("unused.jsonl", problems_in_flight=in_flight)
    settings["prove"] = {"k": k, "strategy": "parallel"}
    settings["lean"] = {**settings["lean"], "workers": workers, "timeout_s": 60}
    config = build_config(settings)
    run_dir.mkdir(parents=True)
    (run_dir / "config.yaml").write_text(dump_config(config), encoding="utf-8")
    store = RunStore(run_dir)
    if hasattr(store, "start_writer"):  # the batching writer thread (absent on older code)
        store.start_writer()
    backend = ScriptedBackend(responder, model_id="scale", latency_s=0.0)
    clients = {stage: ModelClient(backend, store=store, stage=stage) for stage in STAGES}
    verifier = build_verifier(config.lean, store)
    await verifier.check("theorem warmup : True := trivial", config.lean.header)  # start the workers up front
    finished: list[float] = []
    finished_cpu: list[float] = []

    def on_event(event: str, stage: str, reason: str | None) -> None:
        if event == "problem_done":
            finished.append(time.perf_counter())
            finished_cpu.append(time.process_time())

    gc.freeze()  # as `repro run` does
    started = time.perf_counter()
    cpu_started = time.process_time()
    summary = await Pipeline(config, store, clients, verifier, StandInJudge(), on_event=on_event).run(
        problem_stream(count)
    )
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    await verifier.close()
    store.close()
    fifth = max(len(finished) // 5, 1)

    def window_rate(stamps: list[float], before: float) -> float:
        return len(stamps) / max(stamps[-1] - before, 1e-9)

    def window_cpu_ms(stamps: list[float], before: float) -> float:
        return (stamps[-1] - before) / len(stamps) * 1000

    return {
        "problems": count,
        "retained": summary.retained,
        "unfinished": summary.incomplete,
        "elapsed_s": round(elapsed, 1),
        "problems_per_s": round(count / elapsed, 2),
        "first_fifth_per_s": round(window_rate(finished[:fifth], started), 2),
        "last_fifth_per_s": round(window_rate(finished[-fifth:], finished[-fifth - 1]), 2),
        "cpu_ms_per_problem": round(cpu / count * 1000, 2),
        "first_fifth_cpu_ms_per_problem": round(window_cpu_ms(finished_cpu[:fifth], cpu_started), 2),
        "last_fifth_cpu_ms_per_problem": round(window_cpu_ms(finished_cpu[-fifth:], finished_cpu[-fifth - 1]), 2),
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }


def time_command(arguments: list[str]) -> float:
    started = time.perf_counter()
    completed = subprocess.run([sys.executable, "-m", "repro.cli", *arguments], capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if completed.returncode != 0:
        raise RuntimeError(f"repro {' '.join(arguments)} failed: {completed.stderr[-2000:]}")
    return round(elapsed, 2)


def measure(run_dir: Path, count: int, arguments: argparse.Namespace) -> dict[str, Any]:
    figures = asyncio.run(
        run_pipeline(run_dir, count, workers=arguments.lean_workers, in_flight=arguments.in_flight, k=arguments.k)
    )
    release_dir = run_dir.parent / f"{run_dir.name}-release"
    shutil.rmtree(release_dir, ignore_errors=True)
    figures["status_s"] = time_command(["status", str(run_dir)])
    figures["audit_limit_10_s"] = time_command(["audit", str(run_dir), "--limit", "10"])
    figures["release_s"] = time_command(["release", str(run_dir), "--out", str(release_dir), "--allow-unverified"])
    figures["store_mb"] = round(sum(p.stat().st_size for p in run_dir.glob("run.sqlite*")) / 2**20, 1)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--problems", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--out", default="bench-runs", help="directory for the run stores (kept for inspection)")
    parser.add_argument("--in-flight", type=int, default=32)
    parser.add_argument("--lean-workers", type=int, default=2)
    parser.add_argument("--k", type=int, default=3, help="prover samples per statement")
    arguments = parser.parse_args()
    out = Path(arguments.out)
    out.mkdir(parents=True, exist_ok=True)
    for count in arguments.problems:
        run_dir = out / f"scale-{count}"
        shutil.rmtree(run_dir, ignore_errors=True)
        # each size runs in a fresh process so peak RSS is that size's own
        if os.environ.get("REPRO_SCALE_CHILD") != str(count):
            child = subprocess.run(
                [sys.executable, *sys.argv[:1], *_child_arguments(arguments, count)],
                env={**os.environ, "REPRO_SCALE_CHILD": str(count)},
                check=True,
            )
            del child
            continue
        print(json.dumps(measure(run_dir, count, arguments)), flush=True)


def _child_arguments(arguments: argparse.Namespace, count: int) -> list[str]:
    return [
        "--problems",
        str(count),
        "--out",
        arguments.out,
        "--in-flight",
        str(arguments.in_flight),
        "--lean-workers",
        str(arguments.lean_workers),
        "--k",
        str(arguments.k),
    ]


if __name__ == "__main__":
    main()
