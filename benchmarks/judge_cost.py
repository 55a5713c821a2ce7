"""What the kernel judge costs on our side, and how much of a run's and a study's samples it judges.

1. Cost per judged proof. The stand-in SafeVerify (``tests/doubles/fake_safe_verify.py``) with a fixed cost
   per step (``--cost``) is run two ways: bare (its three command lines back to back, as SafeVerify's
   ``verify.py`` runs them: no sandbox, no fresh directories, no hashing) and through
   :class:`repro.judge.kernel.SafeVerifyJudge` (three fresh directories, each step in the sandbox, the
   target hashed and re-checked). The difference is our side's cost per judgement; it is reported in
   milliseconds and as a ratio to the bare tool time, with the sandbox that was in force. Then the
   throughput of ``workers`` judgements at once against ``workers`` times one, and the cost of an answer
   from :class:`repro.judge.cached.CachedJudge` (memory, and the run store after a restart).
2. How much is judged. A scripted run and a scripted study (``tests/pipeline_world.py``,
   ``tests/study_world.py``) with the stand-in judge: judgements made / samples drawn. A run judges only
   what the screen passed, one proof search at a time, and stops at the first pass; a study judges every
   sample it counts as a success (identical code once). Where the pipeline predates the judge stage, the
   screen passes stand in for the judgements a run would make.

The real figure (seconds of Lean per judgement on a node) is a line to fill in ``docs/trust.md``.

    PYTHONPATH=. python benchmarks/judge_cost.py --judgements 40 --cost 0.2 --workers 4
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from repro.config import JudgeSettings
from repro.judge.cached import CachedJudge
from repro.judge.kernel import judge_all, submission_source, target_source
from repro.judge.verdict import JudgeRequest, JudgeStatus
from repro.lean.sandbox import detect_sandbox
from repro.store import RunStore
from tests.doubles import judges

HEADER = "import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 400000\n\nopen BigOperators Real Nat Topology Rat\n"
STATEMENT = "theorem t (x : ℕ) (h₀ : x = 3) : x + 1 = {n} := by sorry"
PROOF = "theorem t (x : ℕ) (h₀ : x = 3) : x + 1 = {n} := by\n  subst h₀\n  norm_num"


def _requests(count: int) -> list[JudgeRequest]:
    return [
        JudgeRequest(
            key=str(i),
            header=HEADER,
            statement=STATEMENT.format(n=i),
            theorem_name="t",
            submission=PROOF.format(n=i),
            toolchain="v4.15.0",
        )
        for i in range(count)
    ]


def bare_seconds(requests: list[JudgeRequest], cost: float, tools: Path) -> float:
    """The stand-in's three command lines per request, back to back, in one directory (verify.py's way)."""
    lake = [sys.executable, str(judges.FAKE_SAFEVERIFY), "--cost", str(cost)]
    checkout = str(tools / "v4.15.0")
    started = time.perf_counter()
    for request in requests:
        with tempfile.TemporaryDirectory() as directory:
            work = Path(directory)
            (work / "Target.lean").write_text(target_source(request.header, request.statement))
            (work / "Submission.lean").write_text(submission_source(request.header, request.submission))
            for stem in ("Target", "Submission"):
                olean, source = str(work / f"{stem}.olean"), str(work / f"{stem}.lean")
                command = [*lake, "-d", checkout, "env", "lean", "-o", olean, source]
                subprocess.run(command, check=True, capture_output=True)
            done = subprocess.run(
                [
                    *lake,
                    "-d",
                    checkout,
                    "env",
                    "safe_verify",
                    str(work / "Target.olean"),
                    str(work / "Submission.olean"),
                ],
                capture_output=True,
                text=True,
            )
            assert done.returncode == 0, done.stderr
    return time.perf_counter() - started


async def judged_seconds(requests: list[JudgeRequest], cost: float, tools: Path, workers: int) -> float:
    judge = judges.safeverify(JudgeSettings(tools_dir=str(tools), workers=workers), "--cost", str(cost))
    started = time.perf_counter()
    verdicts = await judge_all(judge, requests)
    elapsed = time.perf_counter() - started
    assert all(v.status == JudgeStatus.passed for v in verdicts), [v.detail for v in verdicts if not v.passed][:2]
    return elapsed


async def cached_answers(requests: list[JudgeRequest], tools: Path, run_dir: Path) -> dict[str, float]:
    inner = judges.safeverify(JudgeSettings(tools_dir=str(tools), workers=4))
    with RunStore(run_dir) as store:
        first = CachedJudge(inner, store)
        await judge_all(first, requests)
        started = time.perf_counter()
        for _ in range(20):
            await judge_all(first, requests)
        memory = (time.perf_counter() - started) / (20 * len(requests))
    with RunStore(run_dir) as store:  # a resume: every verdict from the store
        again = CachedJudge(inner, store)
        started = time.perf_counter()
        await judge_all(again, requests)
        stored = (time.perf_counter() - started) / len(requests)
        assert again.misses == 0
    return {"memory_hit_us": round(memory * 1e6, 1), "store_hit_us": round(stored * 1e6, 1)}


def judged_fractions() -> dict[str, Any]:
    """Judgements per sample in a scripted run and a scripted study (see the module docstring)."""
    from benchmarks._judged_fraction import run_fraction, study_fraction

    return {"run": run_fraction(), "study": study_fraction()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--judgements", type=int, default=40)
    parser.add_argument("--cost", type=float, default=0.2, help="seconds the stand-in takes per step (3 per judgement)")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--skip-fractions", action="store_true")
    arguments = parser.parse_args()
    requests = _requests(arguments.judgements)
    with tempfile.TemporaryDirectory() as directory:
        tools = Path(directory) / "tools"
        judges.lay_out_safeverify(tools)
        bare = bare_seconds(requests, arguments.cost, tools)
        one = asyncio.run(judged_seconds(requests, arguments.cost, tools, 1))
        many = asyncio.run(judged_seconds(requests, arguments.cost, tools, arguments.workers))
        cached = asyncio.run(cached_answers(requests[:10], tools, Path(directory) / "run"))
    n = len(requests)
    figures: dict[str, Any] = {
        "judgements": n,
        "tool_cost_per_step_s": arguments.cost,
        "sandbox": detect_sandbox().describe(),
        "bare_tool_s_per_judgement": round(bare / n, 3),
        "judge_s_per_judgement": round(one / n, 3),
        "our_side_ms_per_judgement": round((one - bare) / n * 1000, 1),
        "our_side_over_bare_tool": round((one - bare) / bare, 3),
        f"throughput_{arguments.workers}_workers_over_{arguments.workers}x_one": round(
            one / many / arguments.workers, 3
        ),
        **cached,
    }
    if not arguments.skip_fractions:
        figures["judged_per_sample"] = judged_fractions()
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
