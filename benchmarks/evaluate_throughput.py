"""Throughput of `repro evaluate` (request, cache, grade, store) against a local server with latency L.

Evaluates a synthetic release of N instances (2N questions) with one model behind an
OpenAI-compatible server in its own process; the ideal rate is C / L questions per second for a
concurrency bound C. Prints the achieved rate as a fraction of that bound, then re-runs the same
evaluation from the response cache in a fresh directory's copy (zero requests) for the grading and
storing rate alone.

    PYTHONPATH=. python benchmarks/evaluate_throughput.py --instances 200 --concurrency 16 --latency 0.05
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import shutil
import tempfile
import time
from multiprocessing.synchronize import Event
from pathlib import Path
from typing import Any

from repro.evaluate import EvaluationPlan, parse_model_argument, run_evaluation
from repro.evaluate.store import EVAL_STORE_FILENAME
from tests import evaluate_world as world
from tests.doubles.openai_server import OpenAITestServer


def _responder(body: dict[str, Any], index: int) -> str:
    return world.reply("steady", str(body["messages"][-1]["content"]))


def _serve(latency: float, urls: multiprocessing.Queue[object], stop: Event) -> None:
    with OpenAITestServer(_responder, latency_s=latency) as server:
        urls.put(server.base_url)
        stop.wait()
        urls.put(len(server.requests))


def measure(instances: int, concurrency: int, latency: float) -> dict[str, object]:
    urls: multiprocessing.Queue[object] = multiprocessing.Queue()
    stop = multiprocessing.Event()
    process = multiprocessing.Process(target=_serve, args=(latency, urls, stop), daemon=True)
    process.start()
    base_url = str(urls.get(timeout=30))
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        release = world.write_release(root / "release", instances)
        name, settings = parse_model_argument(f"steady=steady@{base_url}")
        settings = settings.model_copy(update={"max_concurrency": concurrency})
        plan = EvaluationPlan(
            release_dir=release, eval_dir=root / "eval", models={name: settings}, concurrency=concurrency
        )
        started = time.perf_counter()
        asyncio.run(run_evaluation(plan))
        live = time.perf_counter() - started
        # the same evaluation again from the cache alone: grading and storing, no request
        (root / "eval" / EVAL_STORE_FILENAME).unlink()
        for suffix in ("-wal", "-shm"):
            (root / "eval" / (EVAL_STORE_FILENAME + suffix)).unlink(missing_ok=True)
        started = time.perf_counter()
        asyncio.run(run_evaluation(plan))
        cached = time.perf_counter() - started
        shutil.rmtree(root / "eval")
    stop.set()
    requests = int(str(urls.get(timeout=30)))
    process.join(timeout=10)
    questions = 2 * instances
    bound = concurrency / latency
    return {
        "questions": questions,
        "requests_at_server": requests,
        "concurrency": concurrency,
        "latency_s": latency,
        "questions_per_s": round(questions / live, 1),
        "fraction_of_bound": round(questions / live / bound, 3),
        "cached_questions_per_s": round(questions / cached, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--instances", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.05)
    arguments = parser.parse_args()
    print(json.dumps(measure(arguments.instances, arguments.concurrency, arguments.latency), indent=2))


if __name__ == "__main__":
    main()
