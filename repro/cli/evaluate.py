"""`repro evaluate` and `repro evaluate-report`: models on a release's original and rewritten questions."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table

from repro.cli._common import ExitCode, console, errors, quoted
from repro.config import ConfigError

if TYPE_CHECKING:
    from repro.cli._common import Commands


def command_evaluate(arguments: argparse.Namespace) -> int:
    from rich.progress import Progress

    from repro.evaluate import EvaluationPlan, parse_model_argument, run_evaluation

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
    if sampling and not arguments.model:
        errors.print("error: sampling options apply to the --model arguments they come with; give --model too")
        return ExitCode.usage
    models = {}
    for argument in arguments.model or []:
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
    # the bar starts with the first item, so an early refusal is printed alone (no empty bar before it)
    progress = Progress(console=errors)
    task = progress.add_task("evaluate", total=None, start=False)

    def advance(done: int, total: int) -> None:
        if not progress.live.is_started:
            progress.start()
            progress.start_task(task)
        progress.update(task, completed=done, total=total)

    try:
        summary = asyncio.run(run_evaluation(plan, progress=advance))
    finally:
        progress.stop()
    console.print(
        f"{summary.items} items (models x instances x 2 questions): {summary.already_done} already"
        f" done, {summary.answered} answered now, {summary.failed} failed"
    )
    if summary.excluded_unverified:
        errors.print(f"left out {summary.excluded_unverified} rows marked unverified (--include-unverified)")
    for line in summary.errors[:10]:
        errors.print(f"  {line}")
    if summary.failed:
        errors.print(f"{summary.failed} items are unfinished; {_resume_command(arguments)}", soft_wrap=True)
        return ExitCode.unfinished
    console.print(f"report: repro evaluate-report {quoted(arguments.eval_dir)}")
    return ExitCode.ok


def _resume_command(arguments: argparse.Namespace) -> str:
    """Resuming needs no --model: the evaluation directory stores its models."""
    unverified = " --include-unverified" if arguments.include_unverified else ""
    return (
        f"resume with: repro evaluate {quoted(arguments.release_dir)} --eval-dir {quoted(arguments.eval_dir)}"
        f" --resume{unverified}"
    )


def _on_interrupt(arguments: argparse.Namespace) -> str:
    from repro.evaluate.store import EVAL_STORE_FILENAME

    if not (Path(arguments.eval_dir) / EVAL_STORE_FILENAME).exists():
        return "nothing was stored yet; start again with the same command"
    return _resume_command(arguments)


def _interval(low: float, high: float) -> str:
    return f"[{low:.3f}, {high:.3f}]"


def command_evaluate_report(arguments: argparse.Namespace) -> int:
    from repro.evaluate import build_report, read_solutions, write_report_tables

    solutions = read_solutions(Path(arguments.solutions)) if arguments.solutions else None
    report = build_report(
        arguments.eval_dir, solutions=solutions, resamples=arguments.resamples, seed=arguments.bootstrap_seed
    )
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
    console.print("metric definitions: docs/evaluate.md (also in --json)")
    console.print(f"wrote {tables} (tables for `repro report`)")
    return 0


def register(commands: Commands) -> None:
    evaluate = commands.add_parser(
        "evaluate",
        help="ask models to solve a release's original and rewritten questions; grade with math-verify",
        description="Each model answers every released instance twice (original and rewritten question);"
        " answers are graded with math-verify and stored in --eval-dir; --resume continues a killed run.",
    )
    evaluate.add_argument("release_dir", help="a directory written by repro release")
    evaluate.add_argument(
        "--model",
        action="append",
        metavar="NAME=SPEC",
        help="SPEC: MODEL@BASE_URL (OpenAI-compatible) or a YAML file of model settings; repeatable;"
        " required for a new evaluation, optional with --resume (the stored models, with new endpoints if given)",
    )
    evaluate.add_argument("--eval-dir", required=True, help="where answers, grades and the response cache live")
    evaluate.add_argument("--resume", action="store_true", help="continue an evaluation in --eval-dir")
    evaluate.add_argument(
        "--samples", type=int, help="samples per question (default 1; a resume keeps the stored count)"
    )
    evaluate.add_argument("--temperature", type=float, help="override every model's temperature (default 0)")
    evaluate.add_argument("--top-p", type=float, help="override every model's top_p (default 1)")
    evaluate.add_argument("--max-tokens", type=int, help="override every model's max_tokens (default 2048)")
    evaluate.add_argument("--seed", type=int, help="override every model's sampling seed (default 0)")
    evaluate.add_argument("--api-key-env", help="environment variable with the API key (default OPENAI_API_KEY)")
    evaluate.add_argument("--concurrency", type=int, default=16, help="questions in flight at once (default 16)")
    evaluate.add_argument(
        "--include-unverified", action="store_true", help="also evaluate rows marked unverified (no real Lean check)"
    )
    evaluate.set_defaults(handler=command_evaluate, on_interrupt=_on_interrupt, heartbeat=True)

    evaluate_report = commands.add_parser(
        "evaluate-report", help="accuracies, paired drop, McNemar and confound table of an evaluation"
    )
    evaluate_report.add_argument("eval_dir", help="a directory written by repro evaluate")
    evaluate_report.add_argument("--json", action="store_true", help="the report as one JSON object")
    evaluate_report.add_argument(
        "--solutions", help="JSONL {instance_id, original_solution, rewritten_solution} for the solution metrics"
    )
    evaluate_report.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples (default 10000)")
    evaluate_report.add_argument("--bootstrap-seed", type=int, default=0, help="bootstrap seed (default 0)")
    evaluate_report.set_defaults(handler=command_evaluate_report)
