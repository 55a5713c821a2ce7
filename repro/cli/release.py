"""`repro release` (write a dataset) and `repro reverify` (re-check one from its own files)."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from repro.cli._common import ExitCode, add_lean_options, add_run_dir, console, errors, lean_settings

if TYPE_CHECKING:
    from repro.cli._common import Commands
    from repro.config import JudgeSettings


def _judge_settings(arguments: argparse.Namespace) -> JudgeSettings:
    from repro.config import ConfigError, JudgeSettings

    try:
        return JudgeSettings(
            backend=arguments.replay_backend,
            factory=arguments.replay_factory,
            tools_dir=str(Path(arguments.replay_tools)) if arguments.replay_tools else None,
        )
    except ValueError as error:
        raise ConfigError(str(error)) from None


def command_release(arguments: argparse.Namespace) -> int:
    from repro.judge.release import describe, release_judge_filter
    from repro.release import write_release

    replay = release_judge_filter(_judge_settings(arguments)) if arguments.replay else None
    summary = write_release(
        arguments.run_dir,
        arguments.out,
        allow_unverified=arguments.allow_unverified,
        license=arguments.license,
        attribution=arguments.attribution,
        overwrite=arguments.overwrite,
        keep=replay,
        include_flagged=arguments.include_flagged,
    )
    if replay is not None:
        for verdict in replay.withheld:
            errors.print(f"withheld (not passed by the judge): {describe(verdict)}", style="yellow")
        console.print(
            f"judge: {len(replay.verdicts) - len(replay.withheld)} of {len(replay.verdicts)} rows passed by"
            f" {replay.judge.name}; {len(replay.withheld)} withheld"
        )
        if not replay.judge.real:
            errors.print("the judge is a stand-in: its verdicts judge nothing", style="yellow")
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
    if summary.withheld_flagged:
        errors.print(
            f"withheld {summary.withheld_flagged} instances whose statement was neither found vacuous nor shown"
            " satisfiable (flagged or undecided); pass --include-flagged to write them (the card says so)",
            style="yellow",
        )
    if summary.written == 0:
        why = (
            "every retained instance was withheld as unverified"
            if summary.withheld_unverified
            else "every retained instance was withheld as flagged"
            if summary.withheld_flagged
            else "every retained instance was withheld as not passed by the judge"
            if summary.withheld_by_keep
            else "no retained instance"
        )
        errors.print(f"error: nothing to release from {arguments.run_dir}: {why}; nothing written")
        return 1
    console.print(f"wrote {summary.written} instances to {summary.out_dir}: {', '.join(summary.files)}")
    if summary.unverified:
        errors.print(
            f"{summary.unverified} rows are marked unverified (not checked by a real Lean backend)", style="yellow"
        )
    return 0


def command_reverify(arguments: argparse.Namespace) -> int:
    from repro.release import reverify_release

    lean = lean_settings(arguments)
    results = asyncio.run(reverify_release(arguments.release_dir, lean))  # LeanUnavailableError: exit 3
    for result in results:
        if not result.passed:
            label = "NO VERDICT" if result.infrastructure else "NOT verified"
            console.print(f"{label}: {result.instance_id}: {'; '.join(result.reasons)}")
    passed = sum(result.passed for result in results)
    console.print(
        f"{passed} of {len(results)} instances passed the soundness gate, the answer and the statement checks"
        f" with backend {lean.backend} (files match SHA256SUMS; Parquet and JSONL agree)"
    )
    fake = any(not result.real_lean for result in results)
    if fake:
        errors.print("the Lean backend was not real (fake): these verdicts re-verify nothing", style="yellow")
    if not results:
        errors.print("error: the release has no rows to re-verify")
        return ExitCode.rejected
    if any(result.infrastructure for result in results):
        code = ExitCode.unfinished
    elif passed < len(results):
        code = ExitCode.rejected
    else:
        code = ExitCode.fake_backend if fake else ExitCode.ok
    if arguments.replay:
        from repro.judge.kernel import build_judge
        from repro.judge.release import describe, judge_exit_code, judge_release

        judge = build_judge(_judge_settings(arguments))
        verdicts = asyncio.run(judge_release(arguments.release_dir, lean.header, judge))
        for verdict in verdicts:
            if not verdict.passed:
                console.print(f"NOT passed by the judge: {describe(verdict)}")
        passed_judge = sum(verdict.passed for verdict in verdicts)
        confinement = sorted({verdict.confinement for verdict in verdicts if verdict.confinement})
        console.print(
            f"{passed_judge} of {len(verdicts)} instances passed by {judge.name} (pinned per toolchain;"
            f" sandbox: {'; '.join(confinement) or 'not run'})"
        )
        if not judge.real:
            errors.print("the judge is a stand-in: its verdicts judge nothing", style="yellow")
        replay_code = ExitCode(int(judge_exit_code(verdicts)))
        # a refusal or a missing verdict of the gate stays the answer; else the replay's can only lower it
        if code == ExitCode.ok or (code == ExitCode.fake_backend and replay_code != ExitCode.ok):
            code = replay_code
    return code


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
        help="also write instances not checked by a real Lean backend, marked unverified",
    )
    release.add_argument(
        "--include-flagged",
        action="store_true",
        help="also write instances whose statement our Lean checks neither found vacuous nor showed satisfiable"
        " (flagged, undecided); the card records it",
    )
    release.add_argument("--license", help="license of the source dataset (SPDX id), for sources repro does not know")
    release.add_argument("--attribution", help="who made the source dataset and where it is from (for the card)")
    _replay_options(release, "withhold every row the kernel judge does not pass (rebuilt and replayed in the kernel)")
    release.set_defaults(handler=command_release)

    reverify = commands.add_parser("reverify", help="re-check every proof of a released dataset with Lean")
    reverify.add_argument("release_dir", help="a directory written by repro release")
    add_lean_options(reverify)
    _replay_options(reverify, "also judge every row with the kernel judge (rebuilt from source, replayed in kernel)")
    reverify.set_defaults(handler=command_reverify, heartbeat=True)


def _replay_options(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument("--replay", action="store_true", help=what)
    parser.add_argument(
        "--replay-backend",
        choices=["auto", "safeverify", "comparator", "factory"],
        default="auto",
        help="auto: the tool pinned for each row's toolchain (SafeVerify for v4.9.0/v4.15.0, comparator from"
        " v4.21.0-rc3); factory: the judge --replay-factory builds",
    )
    parser.add_argument("--replay-factory", help="with --replay-backend factory: package.module:function")
    parser.add_argument(
        "--replay-tools",
        help="directory with one built SafeVerify checkout per toolchain (default: $REPRO_SAFEVERIFY_DIR"
        " or ~/.cache/repro/safeverify)",
    )
