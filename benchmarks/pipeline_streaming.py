"""Streaming pipeline versus a strictly sequential per-problem loop, same problems, same backends.

Both use a scripted model with injected latency and the fake Lean REPL (through the real
LeanInteract client) with an injected per-check delay. The streaming run keeps many problems in
flight; the sequential run finishes one problem before starting the next. Prints instances per
minute for both and their ratio.

    python benchmarks/pipeline_streaming.py --problems 40 --model-latency 0.05 --lean-latency 0.1
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from repro.config import build_config
from repro.lean import CachedVerifier
from repro.llm import ModelClient, ScriptedBackend
from repro.pipeline import Pipeline
from repro.records import SourceProblem
from repro.store import RunStore
from tests.doubles.fake_backend import fake_repl_verifier
from tests.doubles.judge import StandInJudge
from tests.pipeline_world import responder, world_config


def problems(count: int) -> list[SourceProblem]:
    return [
        SourceProblem(
            problem_id=f"bench:{i}",
            source="bench",
            source_id=str(i),
            question=f"Problem {i}: a robe needs 3600 threads in 12 bolts. How many per bolt?",
            answer="300",
        )
        for i in range(count)
    ]


async def run_once(count: int, in_flight: int, model_latency: float, lean_latency: float, workers: int) -> float:
    config = build_config(world_config("unused.jsonl", problems_in_flight=in_flight))
    with tempfile.TemporaryDirectory() as directory:
        store = RunStore(Path(directory))
        backend = ScriptedBackend(responder, model_id="bench", latency_s=model_latency)
        clients = {
            stage: ModelClient(backend, store=store, stage=stage)
            for stage in ("rewrite", "screen", "formalize", "align", "prove", "extract", "classify")
        }
        verifier = CachedVerifier(
            fake_repl_verifier(
                [{"match": "theorem", "action": "slow", "delay_s": lean_latency}], workers=workers, timeout_s=60
            )
        )
        await verifier.check("theorem warmup : True := trivial", config.lean.header)  # start workers up front
        started = time.perf_counter()
        summary = await Pipeline(config, store, clients, verifier, StandInJudge()).run(problems(count))
        elapsed = time.perf_counter() - started
        await verifier.close()
        store.close()
    return summary.retained / elapsed * 60


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--problems", type=int, default=40)
    parser.add_argument("--in-flight", type=int, default=16)
    parser.add_argument("--model-latency", type=float, default=0.05)
    parser.add_argument("--lean-latency", type=float, default=0.1)
    parser.add_argument("--lean-workers", type=int, default=4)
    arguments = parser.parse_args()
    common = (arguments.model_latency, arguments.lean_latency, arguments.lean_workers)
    streaming = asyncio.run(run_once(arguments.problems, arguments.in_flight, *common))
    sequential = asyncio.run(run_once(arguments.problems, 1, *common))
    print(
        json.dumps(
            {
                "problems": arguments.problems,
                "model_latency_s": arguments.model_latency,
                "lean_latency_s": arguments.lean_latency,
                "lean_workers": arguments.lean_workers,
                "streaming_instances_per_minute": round(streaming, 1),
                "sequential_instances_per_minute": round(sequential, 1),
                "speedup": round(streaming / sequential, 2),
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
