"""`repro release` (write a dataset) and `repro reverify` (re-check one from its own files)."""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING

from repro.cli._common import console, errors, lean_settings

if TYPE_CHECKING:
    from repro.cli._common import Commands


def command_release(arguments: argparse.Namespace) -> int:
    from repro.release import write_release

    summary = write_release(
        arguments.run_dir,
        arguments.out,
        allow_unverified=arguments.allow_unverified,
        license=arguments.license,
        attribution=arguments.attribution,
    )
    if summary.unfinished_problems:
        errors.print(
            f"warning: {summary.unfinished_problems} problems of this run are unfinished; the release holds only"
            f" what was finished (continue with: repro run --resume --run-dir {arguments.run_dir})",
            style="yellow",
        )
    if summary.withheld_unverified:
        errors.print(
            f"withheld {summary.withheld_unverified} instances not checked by a real Lean backend;"
            " pass --allow-unverified to write them, marked as such",
            style="yellow",
        )
    if summary.written == 0:
        why = (
            "every retained instance was withheld as unverified"
            if summary.withheld_unverified
            else "no retained instance"
        )
        errors.print(f"error: nothing to release from {arguments.run_dir}: {why}; nothing written")
        return 1
    console.print(
        f"wrote {summary.written} instances to {summary.out_dir}"
        " (data/test.parquet, data/test.jsonl, README.md, SHA256SUMS)"
    )
    if summary.unverified:
        errors.print(
            f"{summary.unverified} rows are marked unverified (not checked by a real Lean backend)", style="yellow"
        )
    return 0


def command_reverify(arguments: argparse.Namespace) -> int:
    from repro.release import reverify_release

    lean = lean_settings(arguments)
    results = asyncio.run(reverify_release(arguments.release_dir, lean))
    for result in results:
        if not (result.passed_gate and result.answer_grounded):
            console.print(f"NOT verified: {result.instance_id}: {result.reasons}")
    passed = sum(result.passed_gate and result.answer_grounded for result in results)
    console.print(
        f"{passed} of {len(results)} instances passed the soundness gate and the answer check"
        f" with backend {lean.backend} (files match SHA256SUMS; Parquet and JSONL agree)"
    )
    if any(not result.real_lean for result in results):
        errors.print("the Lean backend was not real (fake): these verdicts re-verify nothing", style="yellow")
    good = all(result.passed_gate and result.answer_grounded and result.real_lean for result in results)
    return 0 if results and good else 1


def register(commands: Commands) -> None:
    release = commands.add_parser("release", help="write retained instances as a dataset (JSONL, Parquet, card)")
    release.add_argument("run_dir")
    release.add_argument("--out", required=True)
    release.add_argument(
        "--allow-unverified",
        action="store_true",
        help="also write instances not checked by a real Lean backend, marked unverified",
    )
    release.add_argument("--license", help="license of the source dataset (SPDX id), for sources repro does not know")
    release.add_argument("--attribution", help="who made the source dataset and where it is from (for the card)")
    release.set_defaults(handler=command_release)

    reverify = commands.add_parser("reverify", help="re-check every proof of a released dataset with Lean")
    reverify.add_argument("release_dir")
    reverify.add_argument("--backend", choices=["repl", "kimina", "fake"])
    reverify.add_argument("--config", help="config whose lean: section to use")
    reverify.set_defaults(handler=command_reverify)
