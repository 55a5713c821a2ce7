"""Time of the gate's static layer on 1x, 10x and 100x inputs of each shape: its cost must be linear.

Issue 19 §1 found quadratic paths: an opening fence re-lexed the rest of the reply (2,000 empty
``lean4`` fences: 41 s), and every token's line number was counted from the start of the text (an
honest 95 KB proof: 1.6 s; 799 KB: 97 s). Each shape below is timed through ``verify_proof`` with
no Lean backend (the static layer and the taxonomy only), caps lifted so the largest inputs are read,
best of ``--repeat`` runs. Linear means a 10x larger input takes at most about 12x as long.

    python -m benchmarks.gate_static            # sizes 1x = --base, 10x, 100x
    python -m benchmarks.gate_static --base 10 --repeat 3 --json
    PYTHONPATH=<checkout of an older main> python benchmarks/gate_static.py --shapes empty_fences  # before/after
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import time
from collections.abc import Callable

from repro.lean import verify_proof

try:
    from repro.config import StaticLimits
except ImportError:  # an older gate, timed for comparison
    StaticLimits = None  # type: ignore[assignment,misc]

STATEMENT = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry"
HEADER = "import Mathlib\nimport Aesop\nset_option maxHeartbeats 400000\nopen BigOperators Real Nat Topology Rat\n"
LIFTED = StaticLimits and StaticLimits(max_reply_chars=10**9, max_fences=10**9, max_tokens=10**9, timeout_s=3600)


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
}


def _time(reply: str, repeat: int) -> float:
    # a gate from before the caps (to compare the same inputs on the same machine) takes no ``limits``
    options = {"limits": LIFTED} if "limits" in inspect.signature(verify_proof).parameters else {}
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        asyncio.run(verify_proof(STATEMENT, reply, None, header=HEADER, **options))
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=int, default=3, help="size unit of the 1x input (default 3: 100x is ~400 KB)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per point; the best is kept (default 3)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--shapes", nargs="*", choices=sorted(SHAPES), help="only these shapes")
    arguments = parser.parse_args()
    figures = []
    for name, make in SHAPES.items():
        if arguments.shapes and name not in arguments.shapes:
            continue
        sizes = [arguments.base, 10 * arguments.base, 100 * arguments.base]
        replies = [make(size) for size in sizes]
        seconds = [_time(reply, arguments.repeat) for reply in replies]
        figures.append(
            {
                "shape": name,
                "chars": [len(reply) for reply in replies],
                "seconds": [round(s, 4) for s in seconds],
                "ratio_10x": round(seconds[1] / seconds[0], 1),
                "ratio_100x_over_10x": round(seconds[2] / seconds[1], 1),
            }
        )
    if arguments.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"{'shape':26} {'chars 1x/10x/100x':>28} {'seconds 1x/10x/100x':>30} {'10x/1x':>7} {'100x/10x':>9}")
    for row in figures:
        chars = "/".join(str(c) for c in row["chars"])
        seconds = "/".join(f"{s:.3f}" for s in row["seconds"])
        print(f"{row['shape']:26} {chars:>28} {seconds:>30} {row['ratio_10x']:>7} {row['ratio_100x_over_10x']:>9}")


if __name__ == "__main__":
    main()
