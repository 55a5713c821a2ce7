"""`repro release` (write a dataset) and `repro reverify` (re-check one from its own files)."""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING

from repro.cli._common import (
    ExitCode,
    add_judge_options,
    add_lean_options,
    add_run_dir,
    console,
    errors,
    judge_settings,
    lean_settings,
)

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
        overwrite=arguments.overwrite,
        include_flagged=arguments.include_flagged,
    )
    if summary.unfinished_problems:
        errors.print(
            f"warning: {summary.unfinished_problems} problems of this run are unfinished; the release holds only"
            f" what was finished (continue with: repro run --resume --run-dir {arguments.run_dir})",
            style="yellow",
        )
    if summary.withheld_unverified:
        errors.print(
            f"withheld {summary.withheld_unverified} instances not checked by a real Lean backend and passed by a real"
            " kernel judge; pass --allow-unverified to write them, marked as such",
            style="yellow",
        )
    if summary.withheld_outdated_judge:
        errors.print(
            f"of them, {summary.withheld_outdated_judge} were passed by a kernel judge that is not today's (another"
            f" pinned revision or an older version of repro's checks): repro run --resume --run-dir {arguments.run_dir}"
            " judges them again",
            style="yellow",
        )
    if summary.withheld_flagged:
        errors.print(
            f"withheld {summary.withheld_flagged} instances whose statement was neither found vacuous nor shown"
            " satisfiable (flagged or undecided); pass --include-flagged to write them (the card says so)",
            style="yellow",
        )
    if summary.withheld_unchecked:
        errors.print(
            f"withheld {summary.withheld_unchecked} instances whose statement no check ran on (statement checks off,"
            " or a run older than them); such a statement may be vacuous. Re-run with the checks on",
            style="yellow",
        )
    if summary.withheld_unconfirmed:
        errors.print(
            f"withheld {summary.withheld_unconfirmed} instances whose answer has no stored evidence that this"
            " version's answer stage confirmed it with Lean (an older run, or an edited store)",
            style="yellow",
        )
    if summary.written == 0:
        why = (
            "every retained instance was withheld as unverified"
            if summary.withheld_unverified
            else "every retained instance was withheld as flagged"
            if summary.withheld_flagged
            else "every retained instance was withheld (unchecked statement or unconfirmed answer)"
            if summary.withheld_unchecked or summary.withheld_unconfirmed
            else "no retained instance"
        )
        errors.print(f"error: nothing to release from {arguments.run_dir}: {why}; nothing written")
        return 1
    console.print(f"wrote {summary.written} instances to {summary.out_dir}: {', '.join(summary.files)}")
    if summary.unverified:
        errors.print(
            f"{summary.unverified} rows are marked unverified (not checked by a real Lean backend and passed by a real"
            " kernel judge)",
            style="yellow",
        )
    return 0


def command_reverify(arguments: argparse.Namespace) -> int:
    from repro.judge.kernel import build_judge
    from repro.release import reverify_release

    lean = lean_settings(arguments)
    judge = build_judge(judge_settings(arguments), sandbox=lean.sandbox)
    results = asyncio.run(reverify_release(arguments.release_dir, lean, judge))  # LeanUnavailableError: exit 3
    for result in results:
        if not result.passed:
            label = "NO VERDICT" if result.infrastructure else "NOT verified"
            console.print(f"{label}: {result.instance_id}: {'; '.join(result.reasons)}")
    passed = sum(result.passed for result in results)
    judged = sum(result.passed_judge for result in results)
    confinement = sorted({r.judge.confinement for r in results if r.judge is not None and r.judge.confinement})
    console.print(
        f"{judged} of {len(results)} instances passed by the kernel judge {judge.name} again (pinned per toolchain;"
        f" confinement: {'; '.join(confinement) or 'not run'}); {passed} passed the judge, the screen with backend"
        f" {lean.backend}, the answer and the statement checks (files match SHA256SUMS; Parquet and JSONL agree)"
    )
    old_form = sum(result.old_form for result in results)
    if old_form:
        console.print(
            f"{old_form} rows hold verified_code as an older repro released it (the prover's block, its imports in"
            " it): each was screened again and judged as the text Lean checks (imports blanked)"
        )
    older = [result for result in results if result.older_judge is not None]
    if older:
        console.print(
            f"{len(older)} rows were released as passed by a kernel judge that is not today's (first:"
            f" {older[0].instance_id}: {older[0].older_judge}); today's judge decided each of them above"
        )
    fake = any(not result.real_lean for result in results)
    stand_in = any(not result.real_judge for result in results)
    if fake:
        errors.print("the Lean backend was a stand-in, not real Lean: these verdicts re-verify nothing", style="yellow")
    if stand_in:
        errors.print(
            "the kernel judge was a stand-in, not Lean's kernel: these verdicts re-verify nothing", style="yellow"
        )
    if not results:
        errors.print("error: the release has no rows to re-verify")
        return ExitCode.rejected
    if any(result.infrastructure for result in results):
        return ExitCode.unfinished
    if passed < len(results):
        return ExitCode.rejected
    return ExitCode.fake_backend if fake or stand_in else ExitCode.ok


def register(commands: Commands) -> None:
    release = commands.add_parser("release", help="write retained instances as a dataset (JSONL, Parquet, card)")
    add_run_dir(release)
    release.add_argument("--out", required=True, help="the release directory to write (new or empty)")
    release.add_argument(
        "--overwrite", action="store_true", help="write into a non-empty --out, replacing the release files there"
    )
    release.add_argument(
        "--allow-unverified",
        action="store_true",
        help="also write instances not checked by a real Lean backend and passed by a real kernel judge (a stand-in's"
        " pass, the demo's), marked unverified; an instance no judge passed is never written",
    )
    release.add_argument(
        "--include-flagged",
        action="store_true",
        help="also write instances whose statement our Lean checks neither found vacuous nor showed satisfiable"
        " (flagged, undecided); the card records it",
    )
    release.add_argument("--license", help="license of the source dataset (SPDX id), for sources repro does not know")
    release.add_argument("--attribution", help="who made the source dataset and where it is from (for the card)")
    release.set_defaults(handler=command_release)

    reverify = commands.add_parser(
        "reverify",
        help="re-check every proof of a released dataset: the kernel judge again, the screen, the answer",
        description="The kernel judge runs again on every row's verified_code (the trusted header from --config,"
        " our statement, the row's toolchain), afresh; then the screen, the answer and the statement checks.",
    )
    reverify.add_argument("release_dir", help="a directory written by repro release")
    add_lean_options(reverify)
    add_judge_options(reverify)
    reverify.set_defaults(handler=command_reverify, heartbeat=True)
