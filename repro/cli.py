"""The ``repro`` command. Thin: parse arguments, call the library, print."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from repro import __version__
from repro.config import ConfigError, RunConfig, build_config, load_config
from repro.data import DataError
from repro.prompts import bundled_path
from repro.records import REASON_DESCRIPTIONS

console = Console(markup=False, highlight=False)  # printed content is data: brackets must survive
errors = Console(stderr=True, markup=False, highlight=False)

DESCRIPTION = """\
repro builds contamination-resistant math benchmarks whose reference answers are backed by Lean 4
proofs, lets you audit everything that was rejected, and repairs cached reasoning traces.

Typical session:
  repro doctor --config configs/gsm8k.yaml      # what is installed and reachable
  repro run --config configs/gsm8k.yaml --target 100 --run-dir runs/gsm8k
  repro status runs/gsm8k                       # funnel, generation rates, pass@k, cost
  repro audit runs/gsm8k --stage verify         # why candidates were rejected
  repro release runs/gsm8k --out release/gsm8k  # JSONL + Parquet + dataset card
Offline demonstration (scripted models, fake Lean; nothing is verified):
  repro run --config configs/demo.yaml
"""


def _config_from_arguments(arguments: argparse.Namespace) -> RunConfig:
    path = arguments.config
    if path is None:
        path = str(bundled_path("configs/demo.yaml"))
        errors.print(
            "no --config given: running the offline DEMONSTRATION (configs/demo.yaml): scripted"
            " models and a fake Lean backend; its output is not verified.",
            style="yellow",
        )
    config = load_config(path, arguments.set or [])
    data = config.model_dump(mode="json")
    dataset = data["dataset"]
    if arguments.dataset:
        if Path(arguments.dataset).suffix or Path(arguments.dataset).exists():
            dataset.update(path=arguments.dataset, name=Path(arguments.dataset).stem)
        else:
            dataset.update(name=arguments.dataset, path=None)
    for key in ("limit", "sample", "seed"):
        if getattr(arguments, key) is not None:
            dataset[key] = getattr(arguments, key)
    for key in ("levels", "types", "ids"):
        if getattr(arguments, key):
            dataset[key] = [item for value in getattr(arguments, key) for item in value.split(",") if item]
    if arguments.skip_bad_rows:
        dataset["skip_bad_rows"] = True
    if dataset.get("path") and not Path(dataset["path"]).exists() and bundled_path(dataset["path"]).exists():
        dataset["path"] = str(bundled_path(dataset["path"]))
    if arguments.target is not None:
        data["target"] = arguments.target
        dataset["limit"] = dataset.get("limit") if arguments.limit is not None else None
    return build_config(data)


# `repro run` finished but left problems for --resume (distinct from 2: bad input, nothing ran)
EXIT_UNFINISHED = 3


def command_run(arguments: argparse.Namespace) -> int:
    from repro.app import run

    config = None if arguments.resume else _config_from_arguments(arguments)
    if arguments.run_dir:
        run_dir = Path(arguments.run_dir)
    elif arguments.resume:
        errors.print("--resume needs --run-dir DIR")
        return 2
    else:
        assert config is not None
        run_dir = Path("runs") / f"{config.name}-{datetime.now():%Y%m%d-%H%M%S}"
    if config is not None and config.demonstration:
        errors.print("demonstration config: scripted models and fake Lean; nothing here is verified", style="yellow")
    outcome = run(config, run_dir, resume=arguments.resume, console=console)
    rates = outcome.metrics["rates"]
    console.print(f"run directory: {outcome.run_dir}")
    console.print(f"drawn {rates['drawn']}, retained {rates['retained']}, generation rate {rates['generation_rate']}")
    if outcome.unfinished:
        # soft_wrap: a cause or the resume command must survive copy-paste whole, on any terminal width
        errors.print(
            f"{outcome.unfinished} problems are unfinished (an endpoint or Lean failed, or an error):", soft_wrap=True
        )
        for problem_id, cause in outcome.unfinished_examples:
            errors.print(f"  {problem_id}: {cause or 'interrupted before it finished'}", soft_wrap=True)
        if outcome.unfinished > len(outcome.unfinished_examples):
            more = outcome.unfinished - len(outcome.unfinished_examples)
            errors.print(f"  ... and {more} more (repro status lists them)", soft_wrap=True)
        errors.print(f"fix the cause, then resume with: {outcome.resume_command}", soft_wrap=True)
        return EXIT_UNFINISHED
    console.print(
        f"next: repro status {outcome.run_dir}  |  repro audit {outcome.run_dir}  |  "
        f"repro release {outcome.run_dir} --out release/"
    )
    return 0


def _print_status(metrics: dict[str, Any]) -> None:
    table = Table(title="funnel (candidates)")
    for column in ("stage", "reached", "passed", "rejected here (by reason)"):
        table.add_column(column)
    for stage, row in metrics["funnel"].items():
        rejected = ", ".join(f"{reason} {count}" for reason, count in row["rejected"].items())
        table.add_row(stage, str(row["reached"]), str(row["passed"]), rejected)
    console.print(table)
    rates = metrics["rates"]
    console.print(
        f"problems drawn {rates['drawn']}, finished {rates['finished']}, retained {rates['retained']}, "
        f"generation rate {rates['generation_rate']}"
    )
    console.print("generation rate at " + ", ".join(f"{k} {v}" for k, v in rates["generation_rate_at"].items()))
    for label in ("by_level", "by_type"):
        if rates[label]:
            console.print(f"{label}: " + ", ".join(f"{k} {v}" for k, v in rates[label].items()))
    models = Table(title="model calls (per stage and model)")
    for column in (
        "stage",
        "model",
        "calls",
        "cache hits",
        "failed",
        "retries",
        "tokens in",
        "tokens out",
        "latency s",
    ):
        models.add_column(column)
    for key, row in metrics["models"].items():
        models.add_row(
            *key.split(" | ", 1),
            *(
                str(row[name])
                for name in ("calls", "cache_hits", "failed", "retries", "tokens_in", "tokens_out", "latency_s")
            ),
        )
    console.print(models)
    attempts = Table(title="attempts by stage, status and reason")
    for column in ("stage", "status", "reason", "count"):
        attempts.add_column(column)
    for row in metrics["attempts"]:
        attempts.add_row(row["stage"], row["status"], row["reason"] or "", str(row["count"]))
    console.print(attempts)
    console.print(f"cost per retained instance: {metrics['cost_per_retained']}")
    unfinished = metrics.get("unfinished") or {"count": 0}
    if unfinished["count"]:
        console.print(f"unfinished problems: {unfinished['count']} (repro run --resume continues them)", soft_wrap=True)
        for row in unfinished["first"]:
            console.print(f"  {row['problem_id']}: {row['cause'] or 'interrupted before it finished'}", soft_wrap=True)


def command_status(arguments: argparse.Namespace) -> int:
    from repro.app import metrics_json, status

    metrics = status(Path(arguments.run_dir))
    if arguments.json:
        print(metrics_json(metrics))
    else:
        _print_status(metrics)
    return 0


def command_audit(arguments: argparse.Namespace) -> int:
    from repro.app import audit

    rows = audit(Path(arguments.run_dir), stage=arguments.stage, reason=arguments.reason, limit=arguments.limit)
    if arguments.json:
        print(json.dumps(rows, indent=2, default=str, ensure_ascii=False))
        return 0
    for row in rows:
        console.rule(f"{row['candidate_id']}  rejected at {row['reject_stage']}: {row['reject_reason']}")
        console.print(f"original: {row['original_question']}")
        console.print(f"rewritten: {row['rewritten_question']}")
        if row["lean_statement"]:
            console.print(f"statement: {row['lean_statement']}")
        for attempt in row["attempts"]:
            console.print(
                f"  {attempt['stage']} #{attempt['attempt']}: {attempt['status']} {attempt['reason'] or ''}"
                f" {attempt['taxonomy'] or ''}"
            )
            for message in attempt["lean_messages"][:3]:
                console.print(f"    lean {message['severity']} line {message['line']}: {message['text'][:200]}")
    console.print(f"{len(rows)} rejected candidates")
    return 0


def command_release(arguments: argparse.Namespace) -> int:
    from repro.release import write_release

    summary = write_release(arguments.run_dir, arguments.out, allow_unverified=arguments.allow_unverified)
    console.print(
        f"wrote {summary.written} instances to {summary.out_dir} (data/test.parquet, data/test.jsonl, README.md)"
    )
    if summary.written == 0:
        errors.print("the release is empty (note: `datasets` cannot load a split with no rows)", style="yellow")
    if summary.unverified:
        errors.print(
            f"{summary.unverified} rows are marked unverified (not checked by a real Lean backend)", style="yellow"
        )
    if summary.withheld_unverified:
        errors.print(
            f"withheld {summary.withheld_unverified} instances not checked by a real Lean backend;"
            " pass --allow-unverified to write them, marked as such",
            style="yellow",
        )
    return 0


def _lean_settings(arguments: argparse.Namespace) -> Any:
    config = load_config(arguments.config) if getattr(arguments, "config", None) else RunConfig()
    lean = config.lean
    if getattr(arguments, "backend", None):
        lean = lean.model_copy(update={"backend": arguments.backend})
    return lean


def command_check_proof(arguments: argparse.Namespace) -> int:
    from repro.lean import build_verifier, verify_proof

    statement = Path(arguments.statement).read_text(encoding="utf-8")
    proof = Path(arguments.proof).read_text(encoding="utf-8")
    lean = _lean_settings(arguments)

    async def check() -> Any:
        verifier = build_verifier(lean)
        try:
            return await verify_proof(
                statement, proof, verifier, header=lean.header, allow_native_decide=lean.allow_native_decide
            )
        finally:
            await verifier.close()

    verdict = asyncio.run(check())
    if arguments.json:
        print(verdict.model_dump_json(indent=2, exclude={"lean"}))
    else:
        console.print(
            f"verified: {verdict.verified}"
            + ("" if verdict.lean is None or verdict.lean.real_lean else "  (fake Lean backend: never a real verdict)")
        )
        for detail in verdict.details:
            console.print(f"  reason: {detail}")
        if verdict.taxonomy:
            console.print("  taxonomy: " + ", ".join(verdict.taxonomy))
        for message in verdict.messages:
            console.print(f"  lean {message.severity} line {message.line}: {message.text[:300]}")
    real = verdict.lean is not None and verdict.lean.real_lean
    return 0 if verdict.verified and real else 1


def command_reverify(arguments: argparse.Namespace) -> int:
    from repro.release import reverify_release

    lean = _lean_settings(arguments)
    results = asyncio.run(reverify_release(arguments.release_dir, lean))
    for result in results:
        if not result.passed_gate:
            console.print(f"NOT verified: {result.instance_id}: {result.reasons}")
    passed = sum(result.passed_gate for result in results)
    console.print(f"{passed} of {len(results)} instances passed the soundness gate with backend {lean.backend}")
    if any(not result.real_lean for result in results):
        errors.print("the Lean backend was not real (fake): these verdicts re-verify nothing", style="yellow")
    return 0 if results and all(result.passed_gate and result.real_lean for result in results) else 1


def command_doctor(arguments: argparse.Namespace) -> int:
    from repro.app import doctor

    config = load_config(arguments.config) if arguments.config else None
    lines = doctor(config)
    for line in lines:
        mark = "OK     " if line.ok else "MISSING"
        detail = line.detail.removeprefix("MISSING: ")
        console.print(Text.assemble((mark, "green" if line.ok else "red"), f" {line.name}: {detail}"))
    if config is None:
        console.print("(pass --config FILE to also check the configured model endpoints)")
    return 0


def command_lean_setup(arguments: argparse.Namespace) -> int:
    from repro.lean import SetupError, setup_lean_project

    try:
        done = setup_lean_project(Path(arguments.project))
    except SetupError as error:
        errors.print(f"lean setup failed: {error}", style="red")
        return 1
    for step in done:
        console.print(f"OK {step}")
    return 0


def command_reasons(arguments: argparse.Namespace) -> int:
    for code, text in REASON_DESCRIPTIONS.items():
        console.print(f"{code.value}: {text}")
    return 0


def command_repair(arguments: argparse.Namespace) -> int:
    from rich.progress import Progress

    from repro.config import CacheMode, ModelSettings
    from repro.llm.client import ModelClient
    from repro.llm.factory import build_backend
    from repro.repair import Baseline, RepairSettings, read_candidates_file, read_traces, run_repair, write_outputs
    from repro.store import RunStore

    traces = read_traces(Path(arguments.traces))
    if arguments.limit:
        traces = traces[: arguments.limit]
    settings = RepairSettings(candidates=arguments.n, mode=arguments.mode, baseline=Baseline(arguments.baseline))
    settings.guards.graph_guard = not arguments.no_graph_guard
    settings.guards.equation_support = not arguments.no_equation_support
    settings.guards.relaxed_missing_constraint = arguments.relaxed_missing_constraint
    out = Path(arguments.out)
    client = None
    offline = read_candidates_file(Path(arguments.candidates)) if arguments.candidates else None
    store = None
    if offline is None:
        if arguments.config:
            model = load_config(arguments.config).model_for("repair")
        elif arguments.model and arguments.base_url:
            model = ModelSettings(model=arguments.model, base_url=arguments.base_url, api_key_env=arguments.api_key_env)
        else:
            errors.print(
                "repair needs candidates: --candidates FILE (offline) or a model (--model and --base-url,"
                " or --config with models.repair)"
            )
            return 2
        out.mkdir(parents=True, exist_ok=True)
        store = RunStore(out)
        client = ModelClient(build_backend(model), store=store, stage="repair", cache_mode=CacheMode.read_write)
    with Progress(console=console) as progress:
        task = progress.add_task("repair", total=len(traces))
        results, report = asyncio.run(
            run_repair(
                traces,
                settings,
                client=client,
                offline_candidates=offline,
                progress=lambda n: progress.advance(task, n),
            )
        )
    if store is not None:
        store.close()
    write_outputs(out, results, report)
    console.print(
        f"accuracy {report['initial_correct']}/{report['total']} -> {report['final_correct']}/"
        f"{report['total']}; fixed {report['fixed']}, broken {report['broken']}; "
        f"triggered {report['trigger_rate']:.1%}; calls/example {report['calls_per_example']:.2f}"
    )
    console.print(f"wrote {out / 'report.json'} and {out / 'examples.jsonl'}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="repro", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"repro {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = commands.add_parser(
        "run",
        help="build a rewritten benchmark (or resume one)",
        description="Rewrite, screen, formalize, align, prove, verify and answer each problem.",
    )
    run.add_argument("--config", help="run config (YAML or TOML); default: the offline demo config")
    run.add_argument("--run-dir", help="where the run store lives (default runs/NAME-TIMESTAMP)")
    run.add_argument("--resume", action="store_true", help="continue a killed run in --run-dir, losing nothing")
    run.add_argument("--dataset", help="gsm8k | math | a hub dataset id | PATH.jsonl/.csv/.json")
    run.add_argument("--limit", type=int, help="use the first N problems (after filters)")
    run.add_argument("--target", type=int, help="keep drawing problems (seeded) until N instances are retained")
    run.add_argument("--levels", action="append", help="MATH levels to keep, e.g. 4,5")
    run.add_argument("--types", action="append", help="MATH types to keep, e.g. Algebra")
    run.add_argument("--ids", action="append", help="source ids to keep")
    run.add_argument("--sample", type=int, help="seeded random sample of N problems")
    run.add_argument("--seed", type=int, help="seed for --sample and --target draws")
    run.add_argument("--skip-bad-rows", action="store_true", help="skip and count malformed rows instead of failing")
    run.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value, e.g. prove.k=8")
    run.set_defaults(handler=command_run)

    status = commands.add_parser("status", help="funnel, generation rates, pass@k and cost of a run")
    status.add_argument("run_dir")
    status.add_argument("--json", action="store_true")
    status.set_defaults(handler=command_status)

    audit = commands.add_parser("audit", help="list rejected candidates with texts, Lean messages and taxonomy")
    audit.add_argument("run_dir")
    audit.add_argument("--stage", help="rewrite | screen | formalize | align | prove | verify | answer")
    audit.add_argument("--reason", help="a reason code (see `repro reasons`)")
    audit.add_argument("--limit", type=int)
    audit.add_argument("--json", action="store_true")
    audit.set_defaults(handler=command_audit)

    release = commands.add_parser("release", help="write retained instances as a dataset (JSONL, Parquet, card)")
    release.add_argument("run_dir")
    release.add_argument("--out", required=True)
    release.add_argument(
        "--allow-unverified",
        action="store_true",
        help="also write instances not checked by a real Lean backend, marked unverified",
    )
    release.set_defaults(handler=command_release)

    reverify = commands.add_parser("reverify", help="re-check every proof of a released dataset with Lean")
    reverify.add_argument("release_dir")
    reverify.add_argument("--backend", choices=["repl", "kimina", "fake"])
    reverify.add_argument("--config", help="config whose lean: section to use")
    reverify.set_defaults(handler=command_reverify)

    check = commands.add_parser("check-proof", help="run one proof through the soundness gate")
    check.add_argument("--statement", required=True, help="file with the formal statement (ending := by sorry)")
    check.add_argument("--proof", required=True, help="file with the prover output")
    check.add_argument("--backend", choices=["repl", "kimina", "fake"])
    check.add_argument("--config", help="config whose lean: section to use")
    check.add_argument("--json", action="store_true")
    check.set_defaults(handler=command_check_proof)

    doctor = commands.add_parser("doctor", help="report what is installed and reachable, with fixes")
    doctor.add_argument("--config")
    doctor.set_defaults(handler=command_doctor)

    lean = commands.add_parser("lean", help="Lean project management")
    lean_commands = lean.add_subparsers(dest="lean_command", required=True)
    setup = lean_commands.add_parser("setup", help="fetch Mathlib, its cache and the REPL (needs network once)")
    setup.add_argument("--project", default="lean_project")
    setup.set_defaults(handler=command_lean_setup)

    reasons = commands.add_parser("reasons", help="list every rejection reason code and what it means")
    reasons.set_defaults(handler=command_reasons)

    repair = commands.add_parser(
        "repair",
        help="guarded repair of cached reasoning traces",
        description="Diagnose each trace; repair only risky ones; keep the original"
        " unless deterministic guards say the candidate is safer.",
    )
    repair.add_argument("--traces", required=True, help="JSONL with id, problem, gold_answer, initial_reasoning")
    repair.add_argument("--out", required=True, help="directory for report.json and examples.jsonl")
    repair.add_argument("--candidates", help="JSONL of pre-generated candidates per id (no model needed)")
    repair.add_argument("--config", help="config with models.repair")
    repair.add_argument("--model")
    repair.add_argument("--base-url")
    repair.add_argument("--api-key-env")
    repair.add_argument("--n", type=int, default=3, help="candidates per triggered example (default 3)")
    repair.add_argument("--mode", choices=["auto", "strict", "relaxed"], default="auto")
    repair.add_argument(
        "--baseline", choices=["guarded", "resolve_all", "resolve_triggered", "best_of_n"], default="guarded"
    )
    repair.add_argument("--no-graph-guard", action="store_true")
    repair.add_argument("--no-equation-support", action="store_true")
    repair.add_argument("--relaxed-missing-constraint", action="store_true")
    repair.add_argument("--limit", type=int)
    repair.set_defaults(handler=command_repair)
    return parser


def _user_errors() -> tuple[type[BaseException], ...]:
    """Errors that mean bad input or setup, reported in one line. Evaluated only when an exception
    is raised, so no command imports a module (the repair package pulls in scipy) just to catch it."""
    from repro.app import RunError
    from repro.release import ReleaseError
    from repro.store import StoreError

    found: list[type[BaseException]] = [ConfigError, DataError, RunError, ReleaseError, StoreError, FileNotFoundError]
    runner = sys.modules.get("repro.repair.runner")  # loaded only if the repair command ran
    if runner is not None:
        found.append(runner.RepairInputError)
    return tuple(found)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    arguments = parser.parse_args(argv)
    try:
        return int(arguments.handler(arguments))
    except _user_errors() as error:
        errors.print(f"error: {error}", style="red")
        return 2
    except KeyboardInterrupt:
        errors.print("interrupted; resume with: repro run --resume --run-dir DIR")
        return 130


if __name__ == "__main__":
    sys.exit(main())
