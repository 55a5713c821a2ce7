"""What the screen's static layer refuses in published prover proof files, grouped by rule.

A false refusal of the screen costs coverage (issue 27 §4), and a published, Lean-checked proof file is
honest text by construction, so every refusal of one is either policy (a search tactic, ``native_decide``)
or a false refusal. This reads every ``*.lean`` file under the directories given (for instance
ByteDance-Seed/Seed-Prover's ``SeedProver/MiniF2F.zip`` and ``imo.zip``, unpacked), runs
:func:`repro.judge.policy.scan` over each whole file with the pinned header (its own imports are blanked
when the header has them) and prints, per rule, how many refusals and how many files. Nothing is
vendored: the files stay where the caller put them.

    python benchmarks/screen_published.py DIR [DIR ...] [--json OUT] [--baseline OUT_OF_AN_OLDER_RUN]

With ``--baseline``, the files refused there and passing now (and the reverse) are listed, which is how
a change of the screen is counted in files it newly admits or newly refuses.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

from repro.judge.policy import scan

HEADER = "import Mathlib\nimport Aesop\nset_option maxHeartbeats 400000\nopen BigOperators Real Nat Topology Rat\n"
_POSITION = re.compile(r"\(line \d+:\d+;? ?")


def refusals(path: Path) -> list[str]:
    result = scan(path.read_text(encoding="utf-8"), header=HEADER)
    return ([result.unterminated] if result.unterminated else []) + result.forbidden


def rule(label: str) -> str:
    """A refusal without its position: the rule and the word it names."""
    return _POSITION.sub("(", label)[:100]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("directories", nargs="+", type=Path)
    parser.add_argument("--json", type=Path, help="write {file: [refusals]} here")
    parser.add_argument("--baseline", type=Path, help="an earlier --json output to compare with")
    args = parser.parse_args(argv)
    files = sorted(
        path for directory in args.directories for path in directory.rglob("*.lean") if "__MACOSX" not in path.parts
    )
    refused = {str(path): labels for path in files if (labels := refusals(path))}
    by_rule: Counter[str] = Counter()
    files_by_rule: Counter[str] = Counter()
    for labels in refused.values():
        by_rule.update(rule(label) for label in labels)
        files_by_rule.update({rule(label) for label in labels})
    print(f"{len(files)} files, {len(refused)} refused, {len(files) - len(refused)} pass")
    for name, count in by_rule.most_common():
        print(f"{count:5d} refusals in {files_by_rule[name]:4d} files: {name}")
    if args.json:
        args.json.write_text(json.dumps(refused, indent=1, ensure_ascii=False), encoding="utf-8")
    if args.baseline:
        before = json.loads(args.baseline.read_text(encoding="utf-8"))
        admitted = sorted(set(before) - set(refused))
        newly_refused = sorted(set(refused) - set(before))
        print(f"newly admitted: {len(admitted)}; newly refused: {len(newly_refused)}")
        for name in newly_refused:
            print(f"  newly refused: {name}: {refused[name][:2]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
