"""The ``repro`` command. Thin: parse arguments, call the library, print."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from repro import __version__
from repro.config import ConfigError, RunConfig, build_config, load_config
from repro.data import DataError
from repro.prompts import bundled_path
from repro.records import REASON_DESCRIPTIONS

if TYPE_CHECKING:
    from repro.repair import RepairSettings


def _make_console(*, stderr: bool = False) -> Console:
    """Printed content is data: brackets must survive. Piped output (logs, ``| grep``) is never
    wrapped at 80 columns nor are table cells cut: a copied command or URL must stay whole."""
    console = Console(stderr=stderr, markup=False, highlight=False, soft_wrap=True)
    if not console.is_terminal:
        console = Console(stderr=stderr, markup=False, highlight=False, soft_wrap=True, width=PIPE_WIDTH)
    return console


PIPE_WIDTH = 100_000
console = _make_console()
errors = _make_console(stderr=True)

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


def _config_from_arguments(arguments: argparse.Namespace, stored: Path | None = None) -> RunConfig:
    path = arguments.config or (str(stored) if stored else None)
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


def _changes_anything(arguments: argparse.Namespace) -> bool:
    names = ("config", "set", "dataset", "limit", "target", "levels", "types", "ids", "sample", "seed")
    return any(getattr(arguments, name) for name in names) or arguments.skip_bad_rows


def command_run(arguments: argparse.Namespace) -> int:
    from repro.app import run
    from repro.config import config_warnings

    config = None
    if not arguments.resume:
        config = _config_from_arguments(arguments)
    elif arguments.run_dir and _changes_anything(arguments):
        # settings given with --resume are applied on top of the run's own config, or refused loudly
        config = _config_from_arguments(arguments, stored=Path(arguments.run_dir) / "config.yaml")
    for warning in config_warnings(config) if config is not None else []:
        errors.print(f"warning: {warning}", style="yellow")
    limit = config.dataset.limit if config is not None else None
    if config is not None and config.target is not None and limit is not None and config.target > limit:
        errors.print(
            f"warning: --target {config.target} is larger than --limit {config.dataset.limit}:"
            f" at most {config.dataset.limit} problems will be drawn, so the target cannot be reached",
            style="yellow",
        )
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
    reprove_with = Path(arguments.reprove_with) if arguments.reprove_with else None
    outcome = run(config, run_dir, resume=arguments.resume, console=console, reprove_with=reprove_with)
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
    console.print(
        "generation rate at "
        + ", ".join(f"{k} {v}" for k, v in rates["generation_rate_at"].items())
        + f" ({rates.get('pass_at_estimator', '')})"
    )
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
    skipped = metrics.get("skipped_rows") or []
    if skipped:
        console.print(f"skipped source rows ({len(skipped)}, --skip-bad-rows):")
        for reason in skipped:
            console.print(f"  {reason}")
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


def command_report(arguments: argparse.Namespace) -> int:
    from repro.report import ReportError, write_report

    try:
        result = write_report(Path(arguments.directory), Path(arguments.out) if arguments.out else None)
    except ReportError as error:
        errors.print(f"error: {error}", style="red")
        return 2
    print(
        f"wrote {result.path} ({result.size_bytes / 1e6:.2f} MB; {', '.join(result.kinds)};"
        f" {result.candidates} candidates; {result.seconds:.1f} s)"
    )
    return 0


def _print_block(label: str, text: str | None, *, indent: str = "    ") -> None:
    if text:
        console.print(f"  {label}:")
        for line in str(text).splitlines() or [""]:
            console.print(f"{indent}{line}")


def command_audit(arguments: argparse.Namespace) -> int:
    from repro.audit import audit_rows

    rows = audit_rows(Path(arguments.run_dir), stage=arguments.stage, reason=arguments.reason, limit=arguments.limit)
    if arguments.json:
        print(json.dumps(rows, indent=2, default=str, ensure_ascii=False))
        return 0
    for row in rows:
        console.print(
            f"== {row['candidate_id']} ({row['candidate_status']})  {row['reject_stage']} #{row['attempt']}:"
            f" {row['status']} {row['reject_reason'] or ''} {' '.join(row['taxonomy'])}".rstrip()
        )
        console.print(f"  original: {row['original_question']}")
        if row["rewritten_question"]:
            console.print(f"  rewritten: {row['rewritten_question']}")
        _print_block("statement", row["lean_statement"])
        analysis = row["analysis"]
        _print_block("judge analysis", "\n".join(analysis) if isinstance(analysis, list) else analysis)
        if not row["prover_output"]:
            for text in row["texts"]:
                _print_block("model output", text)
        _print_block("prover output", row["prover_output"])
        _print_block("checked code", row["checked_code"])
        details = row["details"]
        _print_block("details", "\n".join(map(str, details)) if isinstance(details, list) else details)
        for message in row["lean_messages"]:
            console.print(f"  lean {message['severity']} line {message['line']}: {message['text']}")
        if row["error"]:
            console.print(f"  error: {row['error']}")
    console.print(f"{len(rows)} rejected attempts" + (f" (--limit {arguments.limit})" if arguments.limit else ""))
    return 0


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


def _lean_settings(arguments: argparse.Namespace) -> Any:
    config = load_config(arguments.config) if getattr(arguments, "config", None) else RunConfig()
    lean = config.lean
    if getattr(arguments, "backend", None):
        lean = lean.model_copy(update={"backend": arguments.backend})
    return lean


CHECK_PROOF_EXIT_CODES = """\
exit status: 0 verified by real Lean; 1 rejected (statically or by Lean); 2 usage error (bad
arguments, unreadable input, a statement that is not one theorem); 3 Lean unavailable, crashed or
timed out (no verdict); 4 passed, but only a fake backend checked it (never a real verdict).
With --batch: 3 if any row had an infrastructure failure, else 1 if any was rejected, else 0 or 4."""


def command_check_proof(arguments: argparse.Namespace) -> int:
    from repro.app import check_proof, check_proof_batch
    from repro.lean.audit import BatchInputError, ExitCode, verdict_exit_code

    lean = _lean_settings(arguments)
    single = arguments.statement is not None or arguments.proof is not None
    if arguments.batch is not None:
        if single or arguments.out is None:
            errors.print("--batch IN.jsonl needs --out OUT.jsonl and takes no --statement/--proof")
            return ExitCode.usage
        try:
            with console.status("checking") as status:
                summary = asyncio.run(
                    check_proof_batch(
                        Path(arguments.batch),
                        Path(arguments.out),
                        lean,
                        progress=lambda done, total: status.update(f"checked {done}/{total}"),
                    )
                )
        except BatchInputError as error:
            errors.print(f"error: {error}", style="red")
            return ExitCode.usage
        if arguments.json:
            print(summary.model_dump_json(indent=2))
        else:
            console.print(
                f"{summary.total} rows ({summary.checked_now} checked now, {summary.kept_from_before} kept):"
                f" {summary.verified} verified, {summary.rejected} rejected,"
                f" {summary.infrastructure_failures} infrastructure failures;"
                f" {summary.static_passed} passed the static layer"
            )
            if summary.refused_by_policy:
                console.print(
                    "  refused by policy: " + ", ".join(f"{k} {v}" for k, v in summary.refused_by_policy.items())
                )
            for reason, count in sorted(summary.reasons.items(), key=lambda item: -item[1]):
                console.print(f"  {reason}: {count}")
            console.print(
                f"backend: {summary.backend}" + ("" if summary.real_lean else " (fake: never a real verdict)")
            )
        return summary.exit_code
    if arguments.statement is None or arguments.proof is None:
        errors.print("give --statement FILE and --proof FILE, or --batch IN.jsonl --out OUT.jsonl")
        return ExitCode.usage
    statement = Path(arguments.statement).read_text(encoding="utf-8")
    proof = Path(arguments.proof).read_text(encoding="utf-8")
    verdict = asyncio.run(check_proof(statement, proof, lean))
    backend = verdict.lean.backend_id if verdict.lean else str(lean.backend)
    real = verdict.lean is not None and verdict.lean.real_lean
    if arguments.json:
        payload = json.loads(verdict.model_dump_json(exclude={"lean", "lean_steps"}))
        print(json.dumps({**payload, "backend": backend, "real_lean": real}, indent=2, ensure_ascii=False))
    else:
        console.print(f"verified: {verdict.verified}" + ("" if real else "  (not by real Lean: never a real verdict)"))
        console.print(f"  backend: {backend}")
        for detail in verdict.details:
            console.print(f"  reason: {detail}")
        if verdict.taxonomy:
            console.print("  taxonomy: " + ", ".join(verdict.taxonomy))
        for message in verdict.messages:
            console.print(f"  lean {message.severity} line {message.line}: {message.text[:300]}")
    return verdict_exit_code(verdict)


def command_reverify(arguments: argparse.Namespace) -> int:
    from repro.release import reverify_release

    lean = _lean_settings(arguments)
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
    from repro.lean import SetupError, setup_lean_project
    from repro.lean.project import materialize_project

    try:
        if materialize_project(Path(arguments.project)):
            console.print(f"OK created {arguments.project} from the template shipped with repro")
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

    settings = RepairSettings(candidates=arguments.n, mode=arguments.mode, baseline=Baseline(arguments.baseline))
    settings.guards.graph_guard = not arguments.no_graph_guard
    settings.guards.equation_support = not arguments.no_equation_support
    settings.guards.relaxed_missing_constraint = arguments.relaxed_missing_constraint
    settings.guards.relaxed_support = not arguments.no_relaxed_support
    settings.guards.dropped_operand_guard = not arguments.no_dropped_operand_guard
    settings.trigger.meta_score = arguments.trigger_score
    if arguments.ablations:
        return _repair_ablations(arguments, settings)
    if len(arguments.traces) != 1 or len(arguments.candidates or []) > 1 or not arguments.out:
        errors.print("repair takes one --traces, at most one --candidates and --out (several only with --ablations)")
        return 2
    traces = read_traces(Path(arguments.traces[0]))
    if arguments.limit:
        traces = traces[: arguments.limit]
    out = Path(arguments.out)
    client = None
    offline = read_candidates_file(Path(arguments.candidates[0])) if arguments.candidates else None
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
    if report["undecided"]:
        errors.print(
            f"{report['undecided']} triggered example(s) could not be decided: {report['failed_calls']} model"
            " call(s) failed (see report.json undecided_ids); check the endpoint and rerun"
        )
        return 1
    return 0


def _repair_ablations(arguments: argparse.Namespace, settings: RepairSettings) -> int:
    from repro.repair import AblationDataset, read_candidates_file, read_traces, run_ablations

    candidate_files = arguments.candidates or []
    if len(candidate_files) > len(arguments.traces):
        errors.print("--ablations pairs each --candidates with the --traces in the same position")
        return 2
    datasets = []
    for index, path in enumerate(arguments.traces):
        traces = read_traces(Path(path))
        if arguments.limit:
            traces = traces[: arguments.limit]
        saved = read_candidates_file(Path(candidate_files[index])) if index < len(candidate_files) else None
        datasets.append(AblationDataset(name=Path(path).stem, traces=traces, candidates=saved))
    rows = asyncio.run(run_ablations(datasets, settings))
    header = f"{'dataset':<36} {'cands':<6} {'variant':<31} {'mode':<6} {'init':>5} {'trig':>5} {'acc':>4}"
    console.print(header + f" {'fixed':>5} {'broken':>6} {'final':>5}", soft_wrap=True)
    for row in rows:
        console.print(
            f"{row.dataset:<36} {row.candidates:<6} {row.variant:<31} {row.mode:<6} {row.initial_correct:>5}"
            f" {row.triggered:>5} {row.accepted:>4} {row.fixed:>5} {row.broken:>6} {row.final_correct:>5}",
            soft_wrap=True,
        )
    if arguments.out:
        out = Path(arguments.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "ablations.json").write_text(json.dumps([row.model_dump() for row in rows], indent=2), encoding="utf-8")
        console.print(f"wrote {out / 'ablations.json'}")
    return 0


def command_evaluate(arguments: argparse.Namespace) -> int:
    from rich.progress import Progress

    from repro.evaluate import EvalStoreError, EvaluationError, EvaluationPlan, parse_model_argument, run_evaluation

    sampling = {
        key: value
        for key, value in (
            ("temperature", arguments.temperature),
            ("top_p", arguments.top_p),
            ("max_tokens", arguments.max_tokens),
            ("seed", arguments.seed),
        )
        if value is not None
    }
    models = {}
    for argument in arguments.model:
        name, settings = parse_model_argument(argument, api_key_env=arguments.api_key_env)
        if name in models:
            raise ConfigError(f"--model {argument!r}: the name {name!r} is used twice")
        models[name] = settings.model_copy(update=sampling)
    plan = EvaluationPlan(
        release_dir=Path(arguments.release_dir),
        eval_dir=Path(arguments.eval_dir),
        models=models,
        samples=arguments.samples,
        resume=arguments.resume,
        concurrency=arguments.concurrency,
        include_unverified=arguments.include_unverified,
    )
    try:
        with Progress(console=errors) as progress:
            task = progress.add_task("evaluate", total=None)
            summary = asyncio.run(
                run_evaluation(plan, progress=lambda done, total: progress.update(task, completed=done, total=total))
            )
    except (EvaluationError, EvalStoreError) as error:
        errors.print(f"error: {error}", style="red")
        return 2
    console.print(
        f"{summary.items} items ({len(models)} models x instances x 2 questions): {summary.already_done} already"
        f" done, {summary.answered} answered now, {summary.failed} failed"
    )
    if summary.excluded_unverified:
        errors.print(f"left out {summary.excluded_unverified} rows marked unverified (--include-unverified)")
    for line in summary.errors[:10]:
        errors.print(f"  {line}")
    if summary.failed:
        errors.print(
            f"resume with: repro evaluate {arguments.release_dir} ... --eval-dir {arguments.eval_dir} --resume"
        )
        return 1
    console.print(f"report: repro evaluate-report {arguments.eval_dir}")
    return 0


def _interval(low: float, high: float) -> str:
    return f"[{low:.3f}, {high:.3f}]"


def command_evaluate_report(arguments: argparse.Namespace) -> int:
    from repro.evaluate import EvalStoreError, ReportInputError, build_report, read_solutions, write_report_tables

    try:
        solutions = read_solutions(Path(arguments.solutions)) if arguments.solutions else None
        report = build_report(
            arguments.eval_dir, solutions=solutions, resamples=arguments.resamples, seed=arguments.bootstrap_seed
        )
    except (EvalStoreError, ReportInputError) as error:
        errors.print(f"error: {error}", style="red")
        return 2
    tables = write_report_tables(arguments.eval_dir, report)
    if arguments.json:
        print(report.model_dump_json(indent=2))
        return 0
    if report.unverified_instances:
        errors.print(
            f"{report.unverified_instances} evaluated rows are unverified: their new_answer is not Lean-checked"
        )
    for model in report.models:
        table = Table(
            title=f"{model.model} ({model.model_id}), {model.samples} sample(s); {model.missing_instances} missing"
        )
        for column in ("group", "n", "acc orig", "95% CI", "acc rew", "95% CI", "drop", "paired 95% CI", "McNemar p"):
            table.add_column(column)
        for row in [model.overall, *model.by_level, *model.by_type]:
            table.add_row(
                row.group,
                str(row.instances),
                f"{row.accuracy_original:.3f}",
                _interval(row.accuracy_original_interval.low, row.accuracy_original_interval.high),
                f"{row.accuracy_rewritten:.3f}",
                _interval(row.accuracy_rewritten_interval.low, row.accuracy_rewritten_interval.high),
                f"{row.drop:+.3f}",
                _interval(row.drop_interval.low, row.drop_interval.high),
                f"{row.mcnemar_p:.4g} ({row.discordant_original_only}/{row.discordant_rewritten_only})",
            )
        console.print(table)
        console.print("grading: " + ", ".join(f"{key} {value}" for key, value in model.grading_methods.items()))
    confounds = Table(
        title=f"confounds: Spearman rho with the model-averaged drop ({report.confound_instances} instances)"
    )
    for column in ("metric", "n", "rho", "p"):
        confounds.add_column(column)
    for confound in report.confounds:
        rho = "n/a" if confound.spearman_rho is None else f"{confound.spearman_rho:+.3f}"
        p_value = (confound.note or "n/a") if confound.p_value is None else f"{confound.p_value:.3g}"
        confounds.add_row(confound.metric, str(confound.instances), rho, p_value)
    console.print(confounds)
    console.print("metric definitions: README, section 'Evaluate a release' (also in --json)")
    console.print(f"wrote {tables} (tables for `repro report`)")
    return 0


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
            lean = _lean_settings(arguments)
            if arguments.lean_workers:
                lean = lean.model_copy(update={"workers": arguments.lean_workers})
            strategy = "sequential" if arguments.sequential else "parallel"
            settings = StudySettings(k=arguments.k, strategy=strategy, lean=lean)
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
    run.add_argument(
        "--reprove-with",
        metavar="STUDY_DIR",
        help="with --resume: candidates that failed only at prove/verify take a study's verified proof",
    )
    run.set_defaults(handler=command_run)

    status = commands.add_parser("status", help="funnel, generation rates, pass@k and cost of a run")
    status.add_argument("run_dir")
    status.add_argument("--json", action="store_true")
    status.set_defaults(handler=command_status)

    audit = commands.add_parser(
        "audit", help="list every rejected attempt with its texts, judge analysis, prover output and Lean messages"
    )
    audit.add_argument("run_dir")
    audit.add_argument("--stage", help="rewrite | screen | formalize | align | prove | verify | answer")
    audit.add_argument("--reason", help="a reason code (see `repro reasons`)")
    audit.add_argument("--limit", type=int, help="show at most N attempts (0 shows none)")
    audit.add_argument("--json", action="store_true")
    audit.set_defaults(handler=command_audit)

    report = commands.add_parser("report", help="one self-contained HTML report of a run, study or evaluation")
    report.add_argument("directory", help="a run, study or evaluation directory")
    report.add_argument("--out", help="the HTML file to write (default: DIRECTORY/report.html)")
    report.set_defaults(handler=command_report)

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

    check = commands.add_parser(
        "check-proof",
        help="run one proof, or a JSONL file of them, through the soundness gate",
        epilog=CHECK_PROOF_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument("--statement", help="file with the formal statement (one theorem ending := by sorry)")
    check.add_argument("--proof", help="file with the prover output")
    check.add_argument("--batch", metavar="IN.jsonl", help="rows with id, statement, output [, header, finish_reason]")
    check.add_argument("--out", metavar="OUT.jsonl", help="verdict rows (with --batch); resumable")
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
    repair.add_argument(
        "--traces",
        required=True,
        action="append",
        help="JSONL with id, problem, gold_answer, initial_reasoning (repeat with --ablations)",
    )
    repair.add_argument("--out", help="directory for report.json and examples.jsonl (ablations.json)")
    repair.add_argument(
        "--candidates",
        action="append",
        help="JSONL of pre-generated candidates per id (no model needed); with --ablations, one per --traces in order",
    )
    repair.add_argument("--config", help="config with models.repair")
    repair.add_argument("--model")
    repair.add_argument("--base-url")
    repair.add_argument("--api-key-env")
    repair.add_argument("--n", type=int, default=3, help="candidates per triggered example (default 3)")
    repair.add_argument(
        "--mode",
        choices=["auto", "strict", "strong", "weak", "relaxed"],
        default="auto",
        help="acceptance policy for a strong or weak initial reasoner (auto: from the initial traces' median"
        " meta-consistency; relaxed = weak)",
    )
    repair.add_argument(
        "--baseline", choices=["guarded", "resolve_all", "resolve_triggered", "best_of_n"], default="guarded"
    )
    repair.add_argument("--no-graph-guard", action="store_true")
    repair.add_argument("--no-equation-support", action="store_true")
    repair.add_argument("--relaxed-missing-constraint", action="store_true")
    repair.add_argument("--no-relaxed-support", action="store_true", help="disable the strong/weak relaxed paths")
    repair.add_argument("--no-dropped-operand-guard", action="store_true")
    repair.add_argument("--trigger-score", choices=["consistency", "content"], default="consistency")
    repair.add_argument(
        "--ablations", action="store_true", help="print B.18's ablation table, offline, for every --traces given"
    )
    repair.add_argument("--limit", type=int)
    repair.set_defaults(handler=command_repair)

    evaluate = commands.add_parser(
        "evaluate",
        help="ask models to solve a release's original and rewritten questions; grade with math-verify",
        description="Each model answers every released instance twice (original and rewritten question);"
        " answers are graded with math-verify and stored in --eval-dir; --resume continues a killed run.",
    )
    evaluate.add_argument("release_dir")
    evaluate.add_argument(
        "--model",
        action="append",
        required=True,
        metavar="NAME=SPEC",
        help="SPEC: MODEL@BASE_URL (OpenAI-compatible) or a YAML file of model settings; repeatable",
    )
    evaluate.add_argument("--eval-dir", required=True, help="where answers, grades and the response cache live")
    evaluate.add_argument("--resume", action="store_true", help="continue an evaluation in --eval-dir")
    evaluate.add_argument("--samples", type=int, default=1, help="samples per question (default 1)")
    evaluate.add_argument("--temperature", type=float, help="override every model's temperature (default 0)")
    evaluate.add_argument("--top-p", type=float, help="override every model's top_p (default 1)")
    evaluate.add_argument("--max-tokens", type=int, help="override every model's max_tokens (default 2048)")
    evaluate.add_argument("--seed", type=int, help="override every model's sampling seed (default 0)")
    evaluate.add_argument("--api-key-env", help="environment variable with the API key (default OPENAI_API_KEY)")
    evaluate.add_argument("--concurrency", type=int, default=16, help="questions in flight at once (default 16)")
    evaluate.add_argument(
        "--include-unverified", action="store_true", help="also evaluate rows marked unverified (no real Lean check)"
    )
    evaluate.set_defaults(handler=command_evaluate)

    evaluate_report = commands.add_parser(
        "evaluate-report", help="accuracies, paired drop, McNemar and confound table of an evaluation"
    )
    evaluate_report.add_argument("eval_dir")
    evaluate_report.add_argument("--json", action="store_true")
    evaluate_report.add_argument(
        "--solutions", help="JSONL {instance_id, original_solution, rewritten_solution} for the solution metrics"
    )
    evaluate_report.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples (default 10000)")
    evaluate_report.add_argument("--bootstrap-seed", type=int, default=0, help="bootstrap seed (default 0)")
    evaluate_report.set_defaults(handler=command_evaluate_report)

    statements = commands.add_parser("statements", help="export a run's aligned statements for a coverage study")
    statements.add_argument("run_dir")
    statements.add_argument("--out", required=True, help="statement file to write (JSONL)")
    statements.set_defaults(handler=command_statements)

    study = commands.add_parser(
        "prove-study",
        help="re-prove a statement set with several provers (coverage study)",
        description="Run each prover on every statement with up to k samples, every sample through the"
        " soundness gate; resumable. SPEC is MODEL@BASE_URL (OpenAI-compatible) or a YAML file of model settings.",
    )
    study.add_argument("statements", nargs="?", help="statement file (JSONL; `repro statements` writes one)")
    study.add_argument("--prover", action="append", metavar="NAME=SPEC", help="a prover; repeat for several")
    study.add_argument("--k", type=int, default=8, help="samples per (prover, statement) (default 8)")
    study.add_argument("--study-dir", required=True)
    study.add_argument("--resume", action="store_true", help="continue a killed study, repeating nothing")
    study.add_argument("--sequential", action="store_true", help="stop a pair at its first verified sample")
    study.add_argument("--lean-backend", dest="backend", choices=["repl", "kimina", "fake"])
    study.add_argument("--lean-workers", type=int, help="Lean worker processes")
    study.add_argument("--config", help="config whose lean: section to use")
    study.add_argument("--api-key-env", default="OPENAI_API_KEY", help="variable holding the endpoints' API key")
    study.set_defaults(handler=command_prove_study)

    study_report = commands.add_parser("study-report", help="coverage, pass@j, overlap, taxonomy and cost of a study")
    study_report.add_argument("study_dir")
    study_report.add_argument("--json", action="store_true")
    study_report.set_defaults(handler=command_study_report)
    return parser


def _user_errors() -> tuple[type[BaseException], ...]:
    """Errors that mean bad input or setup, reported in one line. Evaluated only when an exception
    is raised, so no command imports a module (the repair package pulls in scipy) just to catch it."""
    from repro.app import RunError
    from repro.audit import AuditError
    from repro.llm.preflight import EndpointPreflightError
    from repro.release import ReleaseError
    from repro.store import StoreError

    found: list[type[BaseException]] = [ConfigError, DataError, RunError, ReleaseError, StoreError, FileNotFoundError]
    found += [EndpointPreflightError, AuditError]
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
    except BrokenPipeError:
        # the reader went away (`repro audit --json | head`): stop quietly, as other Unix tools do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        errors.print("interrupted; resume with: repro run --resume --run-dir DIR")
        return 130


if __name__ == "__main__":
    sys.exit(main())
