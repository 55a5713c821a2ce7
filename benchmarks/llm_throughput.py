"""Throughput of the OpenAI-compatible backend against a local server with a fixed latency.

Sends N requests through the real `openai` client with a concurrency bound C to a server that
answers each after L seconds. Two things bound the rate: the latency (C / L requests per second)
and the client's own CPU per request (one event loop, one core: 1 / CPU seconds per request). The
benchmark measures the second (process CPU time over the run, the server being in another
process), reports both, and divides the achieved rate by the smaller: a fraction near 1 says the
client adds no overhead beyond what it must spend; a CPU ceiling under C / L says to run more
client processes (or fewer, larger requests: n > 1 samples per request).

    python benchmarks/llm_throughput.py --requests 1000 --concurrency 32 --latency 0.05
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import time
from multiprocessing.synchronize import Event

from repro.llm import ChatMessage, ModelRequest, OpenAIBackend
from tests.doubles.openai_server import OpenAITestServer


def _serve(latency: float, urls: multiprocessing.Queue[object], stop: Event) -> None:
    """The server lives in its own process so it does not share the client's interpreter lock."""
    with OpenAITestServer(latency_s=latency) as server:
        urls.put(server.base_url)
        stop.wait()
        urls.put(server.max_in_flight)


async def measure(requests: int, concurrency: int, latency: float) -> dict[str, object]:
    urls: multiprocessing.Queue[object] = multiprocessing.Queue()
    stop = multiprocessing.Event()
    process = multiprocessing.Process(target=_serve, args=(latency, urls, stop), daemon=True)
    process.start()
    base_url = str(urls.get(timeout=30))
    backend = OpenAIBackend(model_id="bench", base_url=base_url, max_concurrency=concurrency)
    started = time.perf_counter()
    cpu_started = time.process_time()
    await asyncio.gather(
        *(
            backend.generate(ModelRequest(messages=[ChatMessage(role="user", content=f"request {i}")], max_tokens=32))
            for i in range(requests)
        )
    )
    elapsed = time.perf_counter() - started
    cpu_per_request = (time.process_time() - cpu_started) / requests
    stop.set()
    peak = urls.get(timeout=30)
    process.join(timeout=10)
    achieved = requests / elapsed
    latency_bound = concurrency / latency
    cpu_ceiling = 1 / cpu_per_request
    bound = min(latency_bound, cpu_ceiling)
    return {
        "requests": requests,
        "concurrency": concurrency,
        "latency_s": latency,
        "elapsed_s": round(elapsed, 3),
        "achieved_rps": round(achieved, 1),
        "latency_bound_rps": round(latency_bound, 1),
        "client_cpu_ms_per_request": round(cpu_per_request * 1000, 3),
        "client_cpu_ceiling_rps": round(cpu_ceiling, 1),
        "bound_rps": round(bound, 1),
        "bounded_by": "latency" if latency_bound <= cpu_ceiling else "client CPU",
        "fraction_of_bound": round(achieved / bound, 3),
        "server_peak_in_flight": peak,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--latency", type=float, default=0.05)
    arguments = parser.parse_args()
    print(json.dumps(asyncio.run(measure(arguments.requests, arguments.concurrency, arguments.latency)), indent=2))


if __name__ == "__main__":
    main()
