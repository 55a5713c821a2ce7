"""Coverage studies: `repro statements`, `repro prove-study`, `repro study-report`."""

from __future__ import annotations

import argparse
import asyncio
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from repro.cli._common import (
    ExitCode,
    add_lean_options,
    add_run_dir,
    console,
    errors,
    judge_settings,
    lean_settings,
    quoted,
)
from repro.dirlock import hold_directory
from repro.exit_codes import ReproError

if TYPE_CHECKING:
    from repro.cli._common import Commands
    from repro.study import ProverEntry
    from repro.study.store import StudyStore


def command_statements(arguments: argparse.Namespace) -> int:
    from repro.study import export_statements

    written, left_out = export_statements(
        Path(arguments.run_dir), Path(arguments.out), overwrite=arguments.overwrite, include_checked_out=arguments.all
    )
    console.print(f"wrote {written} aligned statements to {arguments.out}")
    if left_out:
        shown = ", ".join(f"{count} {outcome}" for outcome, count in left_out.items())
        console.print(
            f"left out the statements the run's Lean checks found vacuous or refuted ({shown}): a proof of one"
            " proves nothing about its answer; --all exports them too, marked in statement_check"
        )
    return 0


def command_prove_study(arguments: argparse.Namespace) -> int:
    from rich.progress import Progress

    from repro.llm.preflight import preflight_models
    from repro.study import (
        feedback_rounds_refusal,
        parse_prover_spec,
        read_statements,
        run_study,
        study_size,
    )

    if arguments.k < 1 or (arguments.lean_workers is not None and arguments.lean_workers < 1):
        errors.print("error: --k and --lean-workers must be at least 1", style="red")
        return 2
    study_dir = Path(arguments.study_dir)
    if arguments.config:
        from repro.config import load_config

        refusal = feedback_rounds_refusal(load_config(arguments.config).prove.feedback_rounds, arguments.config)
        if refusal is not None:
            errors.print(f"error: {refusal}", style="red", soft_wrap=True)
            return ExitCode.usage
    provers = [parse_prover_spec(spec, api_key_env=arguments.api_key_env) for spec in arguments.prover or []]
    if not arguments.resume:  # a new study creates nothing until its input reads and every endpoint answers
        if arguments.statements is not None:
            # bad input (a header beyond the trusted one among it) is named first (2), before any endpoint (3)
            read_statements(arguments.statements, trusted_header=lean_settings(arguments).header)
        preflight_models([(f"prover {prover.name}", prover.settings) for prover in provers])
    created = not study_dir.exists()
    with hold_directory(study_dir, command="repro prove-study"):
        try:
            store = _open(arguments, study_dir, provers)
        except ReproError:
            if created:
                shutil.rmtree(study_dir, ignore_errors=True)
            raise
        try:
            pairs, _ = study_size(store)
            with Progress(console=console) as progress:
                task = progress.add_task("(prover, statement) pairs", total=pairs)
                summary, verifier = asyncio.run(  # a prover endpoint or Lean that cannot answer: StudyError, 3
                    run_study(store, on_progress=lambda prover, statement, covered: progress.advance(task))
                )
        finally:
            store.close()
    console.print(
        f"pairs {summary.pairs}, covered {summary.covered}; model requests {summary.fresh_requests} new,"
        f" {summary.failed_requests} failed; Lean checks {verifier.fresh_checks} new,"
        f" {verifier.stored_hits} answered from the store"
    )
    for line in summary.errors[:5]:
        errors.print(f"unfinished: {line}", style="yellow")
    if summary.failed_requests or summary.unjudged_samples or summary.errors:
        if summary.failed_requests and summary.failed_requests >= summary.fresh_requests:
            errors.print(f"every model request failed ({summary.failed_requests}); nothing new was proved")
        errors.print(f"some pairs are unfinished; rerun with: {_resume_command(study_dir)}", soft_wrap=True)
        return ExitCode.unfinished
    console.print(f"next: repro study-report {quoted(study_dir)}")
    return ExitCode.ok


def _open(arguments: argparse.Namespace, study_dir: Path, provers: list[ProverEntry]) -> StudyStore:
    from repro.study import StudySettings, open_study

    settings = None
    if not arguments.resume:
        lean = lean_settings(arguments)
        if arguments.lean_workers:
            lean = lean.model_copy(update={"workers": arguments.lean_workers})
        strategy = "sequential" if arguments.sequential else "parallel"
        settings = StudySettings(
            k=arguments.k,
            strategy=strategy,
            lean=lean,
            salvage=not arguments.no_salvage,
            judge=judge_settings(arguments),
        )
    return open_study(
        study_dir, statements_path=arguments.statements, provers=provers, settings=settings, resume=arguments.resume
    )


def _resume_command(study_dir: Path) -> str:
    return f"repro prove-study --resume --study-dir {quoted(study_dir)}"


def _on_interrupt(arguments: argparse.Namespace) -> str:
    from repro.study.store import STUDY_FILENAME

    study_dir = Path(arguments.study_dir)
    if not (study_dir / STUDY_FILENAME).exists():
        return "nothing was stored yet; start again with the same command"
    return f"resume with: {_resume_command(study_dir)}"


def command_study_report(arguments: argparse.Namespace) -> int:
    from repro.study import study_report
    from repro.study.render import report_tables

    report = study_report(Path(arguments.study_dir))
    if arguments.json:
        print(report.model_dump_json(indent=2))
        return 0
    for item in report_tables(report):
        console.print(item)
    return 0


def register(commands: Commands) -> None:
    statements = commands.add_parser("statements", help="export a run's aligned statements for a coverage study")
    add_run_dir(statements)
    statements.add_argument("--out", required=True, help="statement file to write (JSONL); an existing one is refused")
    statements.add_argument("--overwrite", action="store_true", help="replace an existing --out file")
    statements.add_argument(
        "--all",
        action="store_true",
        help="also export the statements the run's Lean checks found vacuous or refuted (marked statement_check)",
    )
    statements.set_defaults(handler=command_statements)

    study = commands.add_parser(
        "prove-study",
        help="re-prove a statement set with several provers (coverage study)",
        description="Run each prover on every statement with up to k samples, every sample through the"
        " soundness gate; resumable. SPEC is PROFILE@BASE_URL (a profile from `repro provers`: its harness's"
        " prompt, sampling and budget), MODEL@BASE_URL (a model with a profile gets it; others get `custom`)"
        " or a YAML file of model settings (`profile:` allowed; explicit values override the profile).",
    )
    study.add_argument(
        "statements",
        nargs="?",
        help="statement file (JSONL; `repro statements` writes one); every bad row is named (line, field,"
        " reason), exit 2",
    )
    study.add_argument(
        "--prover",
        action="append",
        metavar="NAME=SPEC",
        help="a prover: NAME=PROFILE@URL, NAME=MODEL@URL or NAME=FILE.yaml; repeat for several",
    )
    study.add_argument("--k", type=int, default=8, help="samples per (prover, statement) (default 8)")
    study.add_argument("--study-dir", required=True, help="where the study store lives (study.sqlite)")
    study.add_argument("--resume", action="store_true", help="continue a killed study, repeating nothing")
    study.add_argument("--sequential", action="store_true", help="stop a pair at its first verified sample")
    study.add_argument(
        "--no-salvage",
        action="store_true",
        help="do not repair near-miss samples (salvage costs Lean checks only; the report shows coverage with and"
        " without it)",
    )
    add_lean_options(study, backend_flag="--lean-backend")
    study.add_argument("--lean-workers", type=int, help="Lean worker processes")
    study.add_argument("--api-key-env", default="OPENAI_API_KEY", help="variable holding the endpoints' API key")
    study.set_defaults(handler=command_prove_study, on_interrupt=_on_interrupt, heartbeat=True)

    study_report = commands.add_parser("study-report", help="coverage, pass@j, overlap, taxonomy and cost of a study")
    study_report.add_argument("study_dir", help="a directory written by repro prove-study")
    study_report.add_argument("--json", action="store_true", help="the report as one JSON object")
    study_report.set_defaults(handler=command_study_report)
