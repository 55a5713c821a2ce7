"""Coverage studies: `repro statements`, `repro prove-study`, `repro study-report`."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from repro.cli._common import console, errors, lean_settings

if TYPE_CHECKING:
    from repro.cli._common import Commands


def command_statements(arguments: argparse.Namespace) -> int:
    from repro.study import StatementSetError, export_statements

    try:
        written = export_statements(Path(arguments.run_dir), Path(arguments.out))
    except StatementSetError as error:
        errors.print(f"error: {error}", style="red")
        return 2
    console.print(f"wrote {written} aligned statements to {arguments.out}")
    return 0


def command_prove_study(arguments: argparse.Namespace) -> int:
    from rich.progress import Progress

    from repro.study import (
        ProverSpecError,
        StatementSetError,
        StudyError,
        StudySettings,
        StudyStoreError,
        open_study,
        parse_prover_spec,
        run_study,
        study_size,
    )

    if arguments.k < 1 or (arguments.lean_workers is not None and arguments.lean_workers < 1):
        errors.print("error: --k and --lean-workers must be at least 1", style="red")
        return 2
    try:
        provers = [parse_prover_spec(spec, api_key_env=arguments.api_key_env) for spec in arguments.prover or []]
        settings = None
        if not arguments.resume:
            lean = lean_settings(arguments)
            if arguments.lean_workers:
                lean = lean.model_copy(update={"workers": arguments.lean_workers})
            strategy = "sequential" if arguments.sequential else "parallel"
            settings = StudySettings(k=arguments.k, strategy=strategy, lean=lean, salvage=not arguments.no_salvage)
        store = open_study(
            Path(arguments.study_dir),
            statements_path=arguments.statements,
            provers=provers,
            settings=settings,
            resume=arguments.resume,
        )
    except (ProverSpecError, StatementSetError, StudyError, StudyStoreError) as error:
        errors.print(f"error: {error}", style="red")
        return 2
    try:
        pairs, _ = study_size(store)
        with Progress(console=console) as progress:
            task = progress.add_task("(prover, statement) pairs", total=pairs)
            summary, verifier = asyncio.run(
                run_study(store, on_progress=lambda prover, statement, covered: progress.advance(task))
            )
    except StudyError as error:
        errors.print(f"error: {error}", style="red")
        return 2
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
        errors.print(
            f"some pairs are unfinished; rerun with: repro prove-study --resume --study-dir {arguments.study_dir}"
        )
    console.print(f"next: repro study-report {arguments.study_dir}")
    return 0


def command_study_report(arguments: argparse.Namespace) -> int:
    from repro.study import StudyStoreError, study_report
    from repro.study.render import report_tables

    try:
        report = study_report(Path(arguments.study_dir))
    except StudyStoreError as error:
        errors.print(f"error: {error}", style="red")
        return 2
    if arguments.json:
        print(report.model_dump_json(indent=2))
        return 0
    for item in report_tables(report):
        console.print(item)
    return 0


def register(commands: Commands) -> None:
    statements = commands.add_parser("statements", help="export a run's aligned statements for a coverage study")
    statements.add_argument("run_dir")
    statements.add_argument("--out", required=True, help="statement file to write (JSONL)")
    statements.set_defaults(handler=command_statements)

    study = commands.add_parser(
        "prove-study",
        help="re-prove a statement set with several provers (coverage study)",
        description="Run each prover on every statement with up to k samples, every sample through the"
        " soundness gate; resumable. SPEC is PROFILE@BASE_URL (a profile from `repro provers`: its harness's"
        " prompt, sampling and budget), MODEL@BASE_URL (a model with a profile gets it; others get `custom`)"
        " or a YAML file of model settings (`profile:` allowed; explicit values override the profile).",
    )
    study.add_argument("statements", nargs="?", help="statement file (JSONL; `repro statements` writes one)")
    study.add_argument(
        "--prover",
        action="append",
        metavar="NAME=SPEC",
        help="a prover: NAME=PROFILE@URL, NAME=MODEL@URL or NAME=FILE.yaml; repeat for several",
    )
    study.add_argument("--k", type=int, default=8, help="samples per (prover, statement) (default 8)")
    study.add_argument("--study-dir", required=True)
    study.add_argument("--resume", action="store_true", help="continue a killed study, repeating nothing")
    study.add_argument("--sequential", action="store_true", help="stop a pair at its first verified sample")
    study.add_argument(
        "--no-salvage",
        action="store_true",
        help="do not repair near-miss samples (salvage costs Lean checks only; the report shows coverage with and"
        " without it)",
    )
    study.add_argument("--lean-backend", dest="backend", choices=["repl", "kimina", "fake"])
    study.add_argument("--lean-workers", type=int, help="Lean worker processes")
    study.add_argument("--config", help="config whose lean: section to use")
    study.add_argument("--api-key-env", default="OPENAI_API_KEY", help="variable holding the endpoints' API key")
    study.set_defaults(handler=command_prove_study)

    study_report = commands.add_parser("study-report", help="coverage, pass@j, overlap, taxonomy and cost of a study")
    study_report.add_argument("study_dir")
    study_report.add_argument("--json", action="store_true")
    study_report.set_defaults(handler=command_study_report)
