"""Salvage over real prover outputs and over near misses built from them in RePro's App. J styles.

Reads ``../shared/data/realproofs`` (outputs real Lean accepted), writes two ``check-proof --batch``
inputs, and runs the batch check with ``--salvage 4`` and no Lean backend (this machine has none):
for each style, how many rows salvage reads, how many repaired texts they give, and how many of those
pass the static layer. On a node with Lean, the same files with ``--backend repl`` let Lean decide.

    python benchmarks/salvage_batch.py [--data ../shared/data] [--out /tmp/salvage-batch] [--every 5]

The near-miss styles (App. J, DeepSeek-Prover-V2-7B): a special token inside the theorem header
(example 6), a restated target (example 5: the signature changed), a tactic repeated until the length
limit with the fence left open (example 8), an output cut at the length limit, junk after the proof
inside the block, and an end-of-sentence token after the block.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from repro.judge.batch import VerdictRow, check_batch

FILES = (
    "realproofs/MoonshotAI_Kimina-Prover-Preview_minif2f-test-solved.jsonl",
    "realproofs/project-numina_kimina-lean-server_test-fixtures.jsonl",
)
HEADER = "import Mathlib\nimport Aesop\nset_option maxHeartbeats 400000\nopen BigOperators Real Nat Topology Rat\n"


def _main_header_end(output: str, name: str) -> int | None:
    """Offset of the ``:=`` that ends the prover's theorem header (last declaration of ``name``)."""
    start = output.rfind(f"theorem {name}")
    if start == -1:
        return None
    match = re.compile(r":=\s*by\b").search(output, start)
    return match.start() if match else None


def _name(statement: str) -> str:
    return statement.split()[1]


def _in_header(output: str, name: str) -> str | None:
    cut = _main_header_end(output, name)
    return None if cut is None else output[:cut].rstrip() + "<|Assistant|>3 " + output[cut:]


def _restated(output: str, name: str) -> str | None:
    start = output.rfind(f"theorem {name}")
    if start == -1:
        return None
    end = start + len(f"theorem {name}")
    return output[:end] + " (h_restated : (1 : ℕ) = 1)" + output[end:]


def _closing_fence(output: str) -> int:
    return output.rfind("```")


def _repeated_to_limit(output: str, name: str) -> str | None:
    fence = _closing_fence(output)
    if fence <= 0:
        return None
    return output[:fence].rstrip() + "\n" + "  <;> norm_num\n" * 40 + "  <;> norm_"


def _cut_at_limit(output: str, name: str) -> str | None:
    fence = _closing_fence(output)
    return None if fence <= 0 else output[:fence].rstrip()


def _junk_after(output: str, name: str) -> str | None:
    fence = _closing_fence(output)
    if fence <= 0:
        return None
    junk = "\nThe proof above is complete. Let me also try another approach:\ntheorem extra_attempt : True := by\n"
    return output[:fence].rstrip() + junk + output[fence:]


def _token_after(output: str, name: str) -> str | None:
    return output + "<｜end▁of▁sentence｜>"


STYLES: dict[str, tuple[Callable[[str, str], str | None], str]] = {
    "special_token_in_header": (_in_header, "stop"),
    "restated_target": (_restated, "stop"),
    "repetition_to_length_limit": (_repeated_to_limit, "length"),
    "cut_at_length_limit": (_cut_at_limit, "length"),
    "junk_after_the_proof": (_junk_after, "stop"),
    "token_after_the_block": (_token_after, "stop"),
}


def real_rows(data: Path) -> list[dict[str, Any]]:
    rows = []
    for name in FILES:
        for number, line in enumerate((data / name).read_text(encoding="utf-8").splitlines()):
            row = json.loads(line)
            if row["lean_verdict"] == "pass":
                rows.append(
                    {"id": f"{name}:{number}", "statement": row["statement"], "output": row["output"]}
                    | {"header": row["header"]}
                )
    return rows


def near_miss_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    built = []
    for style, (make, finish) in STYLES.items():
        for row in rows:
            output = make(row["output"], _name(row["statement"]))
            if output is not None:
                built.append(row | {"id": f"{style}:{row['id']}", "output": output, "finish_reason": finish})
    return built


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def _by_style(out: Path) -> dict[str, dict[str, int]]:
    table: dict[str, dict[str, int]] = {}
    for line in out.read_text(encoding="utf-8").splitlines():
        row = VerdictRow.model_validate_json(line)
        style = row.id.split(":", 1)[0] if not row.id.startswith("realproofs") else "real (as published)"
        entry = table.setdefault(style, {"rows": 0, "raw_static": 0, "salvaged": 0, "variants": 0, "static": 0})
        entry["rows"] += 1
        entry["raw_static"] += row.static_passed
        entry["salvaged"] += bool(row.salvage_variants)
        entry["variants"] += len(row.salvage_variants)
        entry["static"] += row.salvage_static_passed
    return table


async def main(data: Path, out_dir: Path, every: int) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    real = real_rows(data)
    results: dict[str, dict[str, int]] = {}
    for label, rows in (("real", real), ("near_misses", near_miss_rows(real[::every]))):
        batch = _write(out_dir / f"{label}.jsonl", rows)
        out = out_dir / f"{label}-verdicts.jsonl"
        out.unlink(missing_ok=True)
        started = time.perf_counter()
        await check_batch(batch, out, None, header=HEADER, salvage=4, concurrency=1)
        elapsed = time.perf_counter() - started
        results.update(_by_style(out))
        print(f"{label}: {len(rows)} rows in {elapsed:.1f} s (static layer and salvage only, no Lean)")
    print(f"{'style':30} {'rows':>5} {'raw static':>10} {'salvaged':>8} {'variants':>8} {'pass static':>11}")
    for style, entry in results.items():
        print(
            f"{style:30} {entry['rows']:>5} {entry['raw_static']:>10} {entry['salvaged']:>8}"
            f" {entry['variants']:>8} {entry['static']:>11}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", default=str(Path(__file__).resolve().parents[1].parent / "shared" / "data"))
    parser.add_argument("--out", default="/tmp/salvage-batch")
    parser.add_argument("--every", type=int, default=5, help="build near misses from every N-th real row (default 5)")
    arguments = parser.parse_args()
    asyncio.run(main(Path(arguments.data), Path(arguments.out), arguments.every))
