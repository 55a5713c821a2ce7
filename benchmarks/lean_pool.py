"""Throughput of the Lean worker pool against its ideal: W workers, checks that take D seconds.

The fake REPL (real LeanInteract client, one real process per worker) sleeps D seconds per check,
so the ideal is W / D checks per second. All checks are submitted at once, distinct code each (no
cache), after the pool has started. Measured with recycling off and with frequent recycling, where
a worker due for recycling should keep serving until its warm replacement is ready.

    python benchmarks/lean_pool.py --workers 16 --delay 0.1 --checks 1600
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time

from repro.config import LeanSettings
from tests.doubles.fake_backend import fake_repl_verifier


async def measure(workers: int, delay: float, checks: int, recycle_after: int) -> dict[str, object]:
    header = LeanSettings().header
    pool = fake_repl_verifier(
        [{"match": "theorem bench", "action": "slow", "delay_s": delay}],
        workers=workers,
        timeout_s=60,
        recycle_after=recycle_after,
    )
    try:
        await pool.check("theorem warmup : True := trivial", header)  # starts every worker
        started = time.perf_counter()
        results = await asyncio.gather(
            *(pool.check(f"theorem bench{index} : True := trivial", header) for index in range(checks))
        )
        elapsed = time.perf_counter() - started
    finally:
        await pool.close()
    achieved = checks / elapsed
    ideal = workers / delay
    return {
        "workers": workers,
        "check_s": delay,
        "checks": checks,
        "recycle_after": recycle_after,
        "failed": sum(1 for result in results if not result.ok),
        "elapsed_s": round(elapsed, 2),
        "checks_per_s": round(achieved, 1),
        "ideal_per_s": round(ideal, 1),
        "fraction_of_ideal": round(achieved / ideal, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=16)
    parser.add_argument("--delay", type=float, default=0.1)
    parser.add_argument("--checks", type=int, default=1600)
    parser.add_argument("--recycle-after", type=int, default=100, help="for the run with recycling")
    arguments = parser.parse_args()
    for recycle_after in (10**9, arguments.recycle_after):
        figures = asyncio.run(measure(arguments.workers, arguments.delay, arguments.checks, recycle_after))
        print(json.dumps(figures), flush=True)


if __name__ == "__main__":
    main()
