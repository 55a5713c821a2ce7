"""Time of the gate's static layer on 1x, 10x and 100x inputs of each shape: its cost must be linear.

Issue 19 §1 found quadratic paths: an opening fence re-lexed the rest of the reply (2,000 empty
``lean4`` fences: 41 s), and every token's line number was counted from the start of the text (an
honest 95 KB proof: 1.6 s; 799 KB: 97 s). Each shape below is timed through ``verify_proof`` with
no Lean backend (the static layer and the taxonomy only), caps lifted so the largest inputs are read.

Linear means a 10x larger input takes at most about 12x as long. The verdict has to survive a busy
machine and CPython's own bookkeeping, so each point is measured as follows:

- CPU seconds of this process (all its threads: the static layer runs in a worker thread), not wall
  time: other processes on a shared machine stretch wall time, not our CPU time;
- the best of ``--repeat`` runs, the sizes interleaved within each round, after a full collection;
- with the cyclic garbage collector paused while timing (``--gc`` keeps it on). A long reply keeps
  hundreds of thousands of tokens alive (named tuples, which CPython tracks and never untracks);
  CPython starts full collections over them only past a heap size that lies between the 10x and
  100x inputs here, so that step pays a one-off cost (17-35% of the 100x time on these shapes, counted
  with ``gc.callbacks``) that the next step does not (full collections are spaced geometrically:
  amortized linear);
- the ratio of times is compared with the ratio of input sizes (``long_unfenced_proof`` grows 10.6x
  per step: its step numbers get longer): a step is linear when its time ratio is at most 1.2 times
  its size ratio.

The last line is ``LINEAR`` or ``NOT LINEAR: <shapes>`` (exit status 1).

    python -m benchmarks.gate_static            # sizes 1x = --base, 10x, 100x
    python -m benchmarks.gate_static --base 10 --repeat 3 --json
    python -m benchmarks.gate_static --gc       # the collector on, as in production
    PYTHONPATH=<checkout of an older main> python benchmarks/gate_static.py --shapes empty_fences  # before/after
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import inspect
import json
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from itertools import pairwise

from repro.judge import verify_proof

try:
    from repro.config import StaticLimits
except ImportError:  # an older gate, timed for comparison
    StaticLimits = None  # type: ignore[assignment,misc]

STATEMENT = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry"
HEADER = "import Mathlib\nimport Aesop\nset_option maxHeartbeats 400000\nopen BigOperators Real Nat Topology Rat\n"
LIFTED = StaticLimits and StaticLimits(max_reply_chars=10**9, max_fences=10**9, max_tokens=10**9, timeout_s=3600)
# a 10x step may take at most this many times its input's growth (the "10x larger, ~12x as long")
SLACK = 1.2


def _honest_body(steps: int) -> str:
    lines = [f"  have h{i} : ({i} : ℕ) + 1 = {i + 1} := by norm_num -- step {i}" for i in range(steps)]
    return "\n".join(
        ["theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by", "  subst h₀", *lines, "  norm_num"]
    )


SHAPES: dict[str, Callable[[int], str]] = {
    # a model stuck repeating an empty fence
    "empty_fences": lambda n: "```lean4\n```\n" * (20 * n),
    # one long honest proof in a fence, and the same without fences
    "long_honest_proof": lambda n: f"```lean4\n{_honest_body(20 * n)}\n```\n",
    "long_unfenced_proof": lambda n: _honest_body(20 * n),
    # every block opens a comment or a string that never closes (each would scan to the end)
    "unclosed_comment_blocks": lambda n: "```lean4\n/- a /- b\n```\n" * (20 * n),
    "unclosed_string_blocks": lambda n: '```lean4\n" \\\\ \\" \n```\n' * (20 * n),
    # a long line of prose (the taxonomy's prose rule once backtracked on it)
    "prose_line": lambda n: "```lean4\nThe proof " + "goes on and " * (200 * n) + "ends]\n```\n",
    # instances whose brackets never close (each instance once scanned the rest of the reply: red team
    # round 5, R5-02), and many refusals of one repeated fragment (R5-06)
    "unclosed_instances": lambda n: "```lean4\n" + "instance(" * (100 * n) + "\n```\n",
    "unclosed_fact_instances": lambda n: "```lean4\n" + "instance : Fact (" * (60 * n) + "\n```\n",
    "repeated_refusals": lambda n: "```lean4\n" + "(a:=b)" * (100 * n) + "\n```\n",
}


def _cpu_seconds(reply: str, collector: bool) -> float:
    """CPU seconds of one ``verify_proof`` call (every thread of this process), garbage collected before."""
    # a gate from before the caps (to compare the same inputs on the same machine) takes no ``limits``
    options = {"limits": LIFTED} if "limits" in inspect.signature(verify_proof).parameters else {}
    gc.collect()
    if not collector:
        gc.disable()
    try:
        start = time.process_time()
        asyncio.run(verify_proof(STATEMENT, reply, None, header=HEADER, **options))
        return time.process_time() - start
    finally:
        gc.enable()


@dataclass
class Figures:
    shape: str
    chars: list[int]
    cpu_seconds: list[float]
    time_ratios: list[float]  # per 10x step
    size_ratios: list[float]

    @property
    def linear(self) -> bool:
        return all(t <= SLACK * s for t, s in zip(self.time_ratios, self.size_ratios, strict=True))


def measure(shape: str, sizes: list[int], repeat: int, collector: bool) -> Figures:
    """Best CPU seconds per size over ``repeat`` rounds (each round times every size once), with step ratios."""
    replies = [SHAPES[shape](size) for size in sizes]
    best = [float("inf")] * len(sizes)
    for _ in range(repeat):
        for index, reply in enumerate(replies):
            best[index] = min(best[index], _cpu_seconds(reply, collector))
    chars = [len(reply) for reply in replies]
    return Figures(
        shape,
        chars,
        [round(s, 4) for s in best],
        [round(later / max(earlier, 1e-9), 2) for earlier, later in pairwise(best)],
        [round(later / earlier, 2) for earlier, later in pairwise(chars)],
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=int, default=3, help="size unit of the 1x input (default 3: 100x is ~400 KB)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; the best time per size is kept (default 3)")
    parser.add_argument("--gc", action="store_true", help="keep the cyclic garbage collector on while timing")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--shapes", nargs="*", choices=sorted(SHAPES), help="only these shapes")
    arguments = parser.parse_args()
    sizes = [arguments.base, 10 * arguments.base, 100 * arguments.base]
    shapes = [name for name in SHAPES if not arguments.shapes or name in arguments.shapes]
    figures = [measure(name, sizes, arguments.repeat, arguments.gc) for name in shapes]
    failed = [row.shape for row in figures if not row.linear]
    verdict = f"NOT LINEAR: {', '.join(failed)}" if failed else "LINEAR"
    if arguments.json:
        rows = [{**asdict(row), "linear": row.linear} for row in figures]
        print(json.dumps({"gc": arguments.gc, "slack": SLACK, "shapes": rows, "verdict": verdict}, indent=2))
        return 1 if failed else 0
    collector = "on" if arguments.gc else "paused"
    print(f"CPU seconds, best of {arguments.repeat}; garbage collector {collector} while timing")
    print(f"{'shape':24} {'chars 1x/10x/100x':>22} {'cpu s 1x/10x/100x':>20} {'time x/step':>12} {'size x/step':>12}")
    for row in figures:
        chars = "/".join(str(c) for c in row.chars)
        seconds = "/".join(f"{s:.3f}" for s in row.cpu_seconds)
        times = "/".join(f"{r:.1f}" for r in row.time_ratios)
        growth = "/".join(f"{r:.1f}" for r in row.size_ratios)
        mark = "" if row.linear else "  <- over"
        print(f"{row.shape:24} {chars:>22} {seconds:>20} {times:>12} {growth:>12}{mark}")
    print(f"(linear: every 10x step takes at most {SLACK:g} times its size ratio)")
    print(verdict)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
