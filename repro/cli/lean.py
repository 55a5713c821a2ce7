"""Lean-facing commands: `repro check-proof`, `repro doctor`, `repro lean setup|toolchains|selftest`."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text

from repro.cli._common import add_judge_options, add_lean_options, console, errors, judge_settings, lean_settings
from repro.config import JudgeSettings, load_config
from repro.exit_codes import ExitCode

if TYPE_CHECKING:
    from repro.cli._common import Commands
    from repro.judge.batch import BatchSummary


CHECK_PROOF_EXIT_CODES = """\
exit status: 0 verified: a real Lean screen passed it and then a real kernel judge did; 1 rejected (by the
screen or by the judge); 2 usage error (bad arguments, unreadable input, a statement that is not one
theorem); 3 no verdict (Lean or the judge unavailable, crashed or timed out); 4 passed, but only a fake
backend or a stand-in judge checked it (never a real verdict).
With --batch: 3 if any row got no verdict, else 1 if any was rejected, else 0 (every row verified) or 4."""


ANSWER_ONLY_EXIT_CODES = """\
With --answer-only: 0 answer(s) confirmed by real Lean (or none, with its reason); 3 Lean gave no verdict on
some statement; 4 only a fake backend answered (never a real confirmation)."""


def command_answer_only(arguments: argparse.Namespace) -> int:
    from repro.answer_check import AnswerRow, read_answer_rows
    from repro.app import answer_only

    lean = lean_settings(arguments)
    if arguments.proof is not None or (arguments.batch is None) == (arguments.statement is None):
        errors.print("error: --answer-only takes --statement FILE or --batch IN.jsonl (no --proof)")
        return ExitCode.usage
    if arguments.batch is not None:
        rows = read_answer_rows(Path(arguments.batch))
    else:
        rows = [AnswerRow(id=Path(arguments.statement).name, statement=Path(arguments.statement).read_text("utf-8"))]
    with console.status("reading answers") as status:
        results, summary = asyncio.run(
            answer_only(rows, lean, progress=lambda done, total: status.update(f"answered {done}/{total}"))
        )
    if arguments.out:
        Path(arguments.out).write_text("".join(result.model_dump_json() + "\n" for result in results), encoding="utf-8")
    if arguments.json:
        payload = summary.model_dump() if arguments.batch else results[0].model_dump()
        print(json.dumps(payload, indent=2, ensure_ascii=False))
        return summary.exit_code
    for result in results if arguments.batch is None or not arguments.out else []:
        if result.answer is not None:
            named = f" ({', '.join(result.variables)})" if result.variables else ""
            console.print(
                f"{result.id}: answer {result.answer}{named}, type {', '.join(result.lean_types)}, form {result.form}",
                soft_wrap=True,
            )
        else:
            console.print(f"{result.id}: no answer: {result.reason}: {result.detail}", soft_wrap=True)
    if arguments.batch is not None:
        console.print(
            f"{summary.total} statements: {summary.answered} give an answer"
            + (" (" + ", ".join(f"{k} {v}" for k, v in summary.by_form.items()) + ")" if summary.by_form else "")
            + "; no answer: "
            + (", ".join(f"{k} {v}" for k, v in summary.no_answer.items()) or "none")
        )
    console.print(f"backend: {summary.backend}" + ("" if summary.real_lean else " (fake: never a real verdict)"))
    return summary.exit_code


def command_check_proof(arguments: argparse.Namespace) -> int:
    from repro.app import check_proof, check_proof_batch

    if arguments.answer_only:
        return command_answer_only(arguments)
    lean = lean_settings(arguments)
    judge = judge_settings(arguments)
    single = arguments.statement is not None or arguments.proof is not None
    if arguments.batch is not None:
        if single or arguments.out is None:
            errors.print("error: --batch IN.jsonl needs --out OUT.jsonl and takes no --statement/--proof")
            return ExitCode.usage
        with console.status("checking") as status:
            summary = asyncio.run(
                check_proof_batch(
                    Path(arguments.batch),
                    Path(arguments.out),
                    lean,
                    progress=lambda done, total: status.update(f"checked {done}/{total}"),
                    salvage=arguments.salvage,
                    judge=judge,
                )
            )
        if arguments.json:
            print(summary.model_dump_json(indent=2))
        else:
            _print_batch_summary(summary, salvage=bool(arguments.salvage))
        return summary.exit_code
    if arguments.statement is None or arguments.proof is None:
        errors.print("error: give --statement FILE and --proof FILE, or --batch IN.jsonl --out OUT.jsonl")
        return ExitCode.usage
    statement = Path(arguments.statement).read_text(encoding="utf-8")
    proof = Path(arguments.proof).read_text(encoding="utf-8")
    checked = asyncio.run(check_proof(statement, proof, lean, judge))
    verdict = checked.screen
    # a text the screen refused never reached Lean: say so rather than print the config's name as an id (n21)
    backend = verdict.lean.backend_id if verdict.lean else f"{lean.backend} (not asked: refused before Lean)"
    if arguments.json:
        payload = json.loads(verdict.model_dump_json(exclude={"lean", "lean_steps", "verified", "reasons"}))
        payload = {
            "verified": checked.verified,
            "passed": checked.passed,
            "reasons": [reason.value for reason in checked.reasons],
            "screen_passed": verdict.verified,
            **payload,
            "backend": backend,
            "real_lean": checked.screen_real,
            "judge": checked.judge.model_dump(mode="json") if checked.judge else None,
        }
        print(json.dumps(payload, indent=2, ensure_ascii=False))
    else:
        console.print(checked.summary_line())
        console.print(f"  screen backend: {backend}" + ("" if checked.screen_real else " (fake: never a real verdict)"))
        if checked.judge is not None and checked.judge.confinement:
            console.print(f"  judge confinement: {checked.judge.confinement}")
        for detail in verdict.details:
            console.print(f"  reason: {detail}")
        if checked.judge is not None and not checked.judge.passed and checked.judge.detail:
            console.print(f"  judge said: {checked.judge.detail[:600]}")
        if verdict.taxonomy:
            console.print("  taxonomy: " + ", ".join(verdict.taxonomy))
        for message in verdict.messages:
            console.print(f"  lean {message.severity} line {message.line}: {message.text[:300]}")
    return checked.exit_code


def _print_batch_summary(summary: BatchSummary, *, salvage: bool) -> None:
    console.print(
        f"{summary.total} rows ({summary.checked_now} checked now, {summary.kept_from_before} kept):"
        f" {summary.verified} verified, {summary.passed - summary.verified} passed only with a fake backend or a"
        f" stand-in judge, {summary.rejected} rejected ({summary.judge_rejected} of them by the judge),"
        f" {summary.infrastructure_failures} with no verdict; {summary.screen_passed} passed the screen,"
        f" {summary.static_passed} its static layer"
    )
    if summary.refused_by_policy:
        console.print("  refused by policy: " + ", ".join(f"{k} {v}" for k, v in summary.refused_by_policy.items()))
    for reason, count in sorted(summary.reasons.items(), key=lambda item: -item[1]):
        console.print(f"  {reason}: {count}")
    if salvage:
        console.print(
            f"salvage: {summary.salvaged_rows} failed rows gave {summary.salvage_variants} repaired texts,"
            f" {summary.salvage_static_passed} passed the static layer, {summary.salvage_verified} rows passed by a"
            " repaired text (screen and judge)"
        )
    console.print(
        f"screen backend: {summary.backend}"
        + ("" if summary.real_lean else " (fake: never a real verdict)")
        + f"; judge: {summary.judge}"
        + ("" if summary.judge_real else " (a stand-in or none: never a real verdict)")
    )


def _check_proof_interrupted(arguments: argparse.Namespace) -> str | None:
    if arguments.batch is None or arguments.out is None:
        return None
    return f"run the same command again: {arguments.out} keeps every row checked so far and goes on from there"


def command_doctor(arguments: argparse.Namespace) -> int:
    from repro.app import doctor

    config = load_config(arguments.config) if arguments.config else None
    lines = doctor(config)
    for line in lines:
        mark = "OK     " if line.ok else ("MISSING" if line.required else "absent ")
        detail = line.detail.removeprefix("MISSING: ")
        if not line.ok and not line.required:
            detail += " (not needed" + (" by this config)" if config is not None else " without --config)")
        color = "green" if line.ok else ("red" if line.required else "yellow")
        console.print(Text.assemble((mark, color), f" {line.name}: {detail}"))
    if config is None:
        console.print("(pass --config FILE to also check the configured model endpoints)")
    missing = [line.name for line in lines if line.required and not line.ok]
    if missing:
        errors.print(f"{len(missing)} things this setup needs are missing: {', '.join(missing)}", style="red")
        return 1
    return 0


def command_lean_setup(arguments: argparse.Namespace) -> int:
    from repro.lean import SetupError, get_toolchain, setup_lean_project
    from repro.lean.toolchains import UnknownToolchain, default_project_path

    configured = load_config(arguments.config).lean if arguments.config else None
    name = arguments.toolchain or (configured.toolchain if configured else "v4.15.0")
    try:
        toolchain = get_toolchain(name)
    except UnknownToolchain as error:
        errors.print(f"error: --toolchain: {error}", style="red")
        return ExitCode.usage
    same = configured is not None and configured.toolchain == toolchain.name
    project = Path(
        arguments.project or (configured.project_dir() if same and configured else default_project_path(toolchain.name))
    )
    console.print(
        f"toolchain {toolchain.name}: Lean {toolchain.lean_version}, Mathlib {toolchain.mathlib_rev}, "
        f"REPL {toolchain.interact_repl_git} @ {toolchain.interact_repl_rev} -> {project}",
        markup=False,
    )
    try:
        setup_lean_project(
            project,
            toolchain,
            on_step=lambda step: console.print(f"OK {step}", markup=False),
            build_mathlib=arguments.build_mathlib,
            step_timeout_s=arguments.step_timeout,
        )
    except SetupError as error:
        errors.print(f"lean setup failed: {error}", style="red")
        return ExitCode.unfinished
    return ExitCode.ok


def command_lean_cache(arguments: argparse.Namespace) -> int:
    """Whether Mathlib's prebuilt cache left every module built in a project (before a long ``lake build``)."""
    from repro.lean.project import CACHE_FALLBACK, mathlib_cache_state

    project = Path(arguments.project)
    state = mathlib_cache_state(project)
    console.print(f"{project}: Mathlib cache: {state.oleans} of {state.sources} modules built", markup=False)
    if state.complete:
        return ExitCode.ok
    first = ", ".join(state.missing[:3]) or "no Mathlib sources (run `lake update` first)"
    errors.print(
        f"Mathlib's cache is incomplete (first missing: {first}); `lake build` would compile Mathlib from source."
        f" {CACHE_FALLBACK}",
        style="red",
    )
    return ExitCode.unfinished


def command_lean_toolchains(arguments: argparse.Namespace) -> int:
    from repro.lean import list_toolchains
    from repro.lean.toolchains import default_project_path

    for toolchain in list_toolchains():
        users = ", ".join(toolchain.used_by) or "-"
        console.print(
            f"{toolchain.name}: Lean {toolchain.lean_version}, Mathlib {toolchain.mathlib_rev}, "
            # the REPL `repro lean setup` builds (LeanInteract's), as setup names it; then the Kimina server's tag
            f"REPL {toolchain.interact_repl_git} @ {toolchain.interact_repl_rev} (a Kimina server builds"
            f" leanprover-community/repl {toolchain.repl_rev}); project {default_project_path(toolchain.name)};"
            f" used by {users}",
            markup=False,
        )
    return ExitCode.ok


SELFTEST_EXIT_CODES = """\
exit status: 0 every case passed on a real Lean backend (and, with --judge, a real judge); 1 a case
failed (named); 2 usage error; 3 the backend could not be reached or built; 4 passed on the fake
backend or a stand-in judge (which cannot answer the cases listed as needing a real one)."""


def command_lean_selftest(arguments: argparse.Namespace) -> int:
    import difflib

    from pydantic import ValidationError

    from repro.config import ConfigError, explain_validation
    from repro.judge.selftest import CASES, JUDGE_CASES, render_report, run_selftest

    lean = lean_settings(arguments)
    if arguments.toolchain:
        try:
            lean = type(lean).model_validate(lean.model_dump() | {"toolchain": arguments.toolchain})
        except ValidationError as error:
            raise ConfigError(explain_validation(error, type(lean), where="--toolchain")) from None
    names = [case.name for case in CASES] + [case.name for case in JUDGE_CASES if arguments.judge]
    for name in arguments.case or []:
        if name not in names:
            close = difflib.get_close_matches(name, names, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(f"--case {name!r}: no such case; {hint}the cases are: {', '.join(names)}")
    judge = None
    if arguments.judge:
        from repro.judge.kernel import build_judge

        config = load_config(arguments.config) if arguments.config else None
        judge = build_judge(config.judge if config else JudgeSettings(), sandbox=lean.sandbox)
    try:
        report = asyncio.run(run_selftest(lean, only=arguments.case or None, judge=judge))
    except Exception as error:  # the backend could not even be built (no project, no lean-interact)
        errors.print(f"error: the Lean backend could not be started: {type(error).__name__}: {error}", style="red")
        return ExitCode.unfinished
    if arguments.json:
        print(report.model_dump_json(indent=2))
    else:
        for line in render_report(report):
            console.print(line, markup=False)
    if report.unreachable:
        return ExitCode.unfinished
    if not report.passed:
        return ExitCode.rejected
    return ExitCode.ok if report.real_lean and (judge is None or judge.real) else ExitCode.fake_backend


def register(commands: Commands) -> None:
    check = commands.add_parser(
        "check-proof",
        help="run one proof, or a JSONL file of them, through the screen and then the kernel judge",
        description="The screen (static layer and Lean REPL check, --backend) first; what it passes goes to the"
        " kernel judge of --config's judge: section (--judge-factory, --judge-tools), which decides. Only a real"
        " screen's and a real judge's pass is verified (exit 0).",
        epilog=CHECK_PROOF_EXIT_CODES + "\n" + ANSWER_ONLY_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument("--statement", help="file with the formal statement (one theorem ending := by sorry)")
    check.add_argument("--proof", help="file with the prover output")
    check.add_argument(
        "--batch",
        metavar="IN.jsonl",
        help="rows with id, statement, output [, header, finish_reason]; a row's header is never run (its lines"
        " must be import/open/set_option lines of lean.header, which runs); every bad row is named (line, field,"
        " reason) and nothing is checked (exit 2); a rerun keeps only verdicts given for the same row, header,"
        " backend and judge",
    )
    check.add_argument(
        "--answer-only",
        action="store_true",
        help="no proof: the answer our statement alone would release (value, Lean type, form) or why none,"
        " confirmed by the configured Lean backend; with --batch, rows with id and statement",
    )
    check.add_argument("--out", metavar="OUT.jsonl", help="verdict rows (with --batch); resumable")
    check.add_argument(
        "--salvage",
        type=int,
        default=0,
        metavar="N",
        help="with --batch: check up to N repaired texts of each failed row that is no cheat (special tokens,"
        " restated target, repetition, unclosed fence, trailing junk), each through the same gate",
    )
    add_lean_options(check)
    add_judge_options(check)
    check.add_argument("--json", action="store_true", help="the verdict (or the batch summary) as JSON")
    check.set_defaults(handler=command_check_proof, on_interrupt=_check_proof_interrupted, heartbeat=True)

    doctor = commands.add_parser("doctor", help="report what is installed and reachable, with fixes")
    doctor.add_argument("--config", help="also check what this run config needs (its endpoints, backends)")
    doctor.set_defaults(handler=command_doctor)

    lean = commands.add_parser("lean", help="Lean project management")
    lean_commands = lean.add_subparsers(dest="lean_command", required=True, help="setup, cache, toolchains or selftest")
    setup = lean_commands.add_parser(
        "setup", help="prepare one pinned project per toolchain: Mathlib, its cache and the REPL (network once)"
    )
    setup.add_argument(
        "--toolchain",
        default=None,
        help="v4.9.0 (Goedel-Prover-V2, DeepSeek-Prover) or v4.15.0 (Kimina-Prover); default: the config's "
        "lean.toolchain, else v4.15.0; see `repro lean toolchains`",
    )
    setup.add_argument("--config", help="take lean.toolchain and lean.project_path from this config")
    setup.add_argument(
        "--project", default=None, help="where (default: lean_project for v4.15.0, lean_project_<toolchain> otherwise)"
    )
    setup.add_argument(
        "--build-mathlib",
        action="store_true",
        help="where Mathlib's prebuilt cache is missing or partial, compile the rest from source (hours) instead"
        " of stopping with the cause",
    )
    setup.add_argument(
        "--step-timeout",
        type=float,
        default=None,
        metavar="S",
        help="seconds each setup step may take before its processes are killed (default 3600; a source build of"
        " Mathlib gets at least 6 h)",
    )
    setup.set_defaults(handler=command_lean_setup)

    cache = lean_commands.add_parser(
        "cache",
        help="check that Mathlib's prebuilt cache built every module of a project (exit 3 if not), before `lake build`",
    )
    cache.add_argument("--project", default=".", help="the Lean project (default: the current directory)")
    cache.set_defaults(handler=command_lean_cache)

    toolchains = lean_commands.add_parser("toolchains", help="list the pinned toolchains and who uses them")
    toolchains.set_defaults(handler=command_lean_toolchains)

    selftest = lean_commands.add_parser(
        "selftest",
        help="run the gate's self-test battery through the configured Lean backend",
        epilog=SELFTEST_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_lean_options(selftest)
    selftest.add_argument("--toolchain", help="override lean.toolchain (v4.9.0, v4.15.0)")
    selftest.add_argument("--case", action="append", help="run only this case (repeatable)")
    selftest.add_argument("--json", action="store_true", help="the results as JSON")
    selftest.add_argument(
        "--judge",
        action="store_true",
        help="also run the kernel judge's cases (honest proof passed, changed statement and extra axiom rejected)"
        " through the judge of the config's `judge:` section",
    )
    selftest.set_defaults(handler=command_lean_selftest)
