"""`repro run`: build a rewritten benchmark, or resume one."""

from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repro.cli._common import ExitCode, console, errors, quoted
from repro.config import RunConfig, build_config, load_config
from repro.prompts import bundled_path
from repro.store.schema import STORE_FILENAME

if TYPE_CHECKING:
    from repro.cli._common import Commands


def _config_from_arguments(arguments: argparse.Namespace, stored: Path | None = None) -> RunConfig:
    path = arguments.config or (str(stored) if stored else None)
    if path is None:
        path = str(bundled_path("configs/demo.yaml"))
        errors.print(
            "no --config given: running the offline DEMONSTRATION (configs/demo.yaml): scripted"
            " models and recorded Lean answers (not real Lean); its output is not verified.",
            style="yellow",
        )
    config = load_config(path, arguments.set or [])
    data = config.model_dump(mode="json")
    if stored is not None and arguments.config:
        _keep_the_runs_selection(data, stored, arguments)
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
    if arguments.no_salvage:
        data["prove"]["salvage"] = False
    if arguments.feedback_rounds is not None:
        data["prove"]["feedback_rounds"] = arguments.feedback_rounds
    if arguments.target is not None:
        data["target"] = arguments.target
        if stored is None:  # a new --target run draws from the whole source unless --limit says otherwise
            dataset["limit"] = dataset.get("limit") if arguments.limit is not None else None
    return build_config(data)


def _outside_the_demo_script(config: RunConfig) -> str | None:
    """m20: the demonstration's scripted models answer only the problems their script covers."""
    from repro.demo import covered_problems

    dataset = config.dataset
    shipped = bundled_path("data/gsm8k_sample.jsonl").resolve()
    other_source = dataset.path is None or Path(dataset.path).resolve() != shipped
    covered = covered_problems()
    drawn_past = dataset.sample is not None or config.target is not None or (dataset.limit or 10**9) > covered
    if not (other_source or drawn_past):
        return None
    return (
        f"the demonstration's scripted models know only the first {covered} problems of"
        " data/gsm8k_sample.jsonl; any other problem is rejected at rewrite (rewrite_invalid_json), so its"
        " figures describe the script, not the data. Give --config with real models for other data"
    )


# what the command line may have chosen when the run started: a resume keeps the stored value unless
# the command line gives it again (a config file given to --resume carries none of them)
_SELECTION = ("name", "path", "limit", "sample", "seed", "levels", "types", "ids", "skip_bad_rows")
_SELECTION_FLAGS = {"name": "dataset", "path": "dataset"}


def _keep_the_runs_selection(data: dict[str, Any], stored: Path, arguments: argparse.Namespace) -> None:
    kept = load_config(str(stored)).model_dump(mode="json")
    overridden = {item.split("=", 1)[0].strip() for item in arguments.set or []}
    for key in _SELECTION:
        if not getattr(arguments, _SELECTION_FLAGS.get(key, key)) and f"dataset.{key}" not in overridden:
            data["dataset"][key] = kept["dataset"][key]
    if arguments.target is None and "target" not in overridden:
        data["target"] = kept["target"]


def _changes_anything(arguments: argparse.Namespace) -> bool:
    names = ("config", "set", "dataset", "limit", "target", "levels", "types", "ids", "sample", "seed")
    levers = arguments.no_salvage or arguments.feedback_rounds is not None
    return any(getattr(arguments, name) for name in names) or arguments.skip_bad_rows or levers


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
        errors.print("error: --resume needs --run-dir DIR")
        return 2
    else:
        assert config is not None
        run_dir = Path("runs") / f"{config.name}-{datetime.now():%Y%m%d-%H%M%S}"
    arguments.run_dir = str(run_dir)  # an interrupt names the real directory
    if config is not None and config.demonstration:
        if arguments.config:  # a bare `repro run` said so already, in its one banner
            errors.print(
                "demonstration config: scripted models, recorded Lean; nothing here is verified", style="yellow"
            )
        outside = _outside_the_demo_script(config)
        if outside:
            errors.print(f"warning: {outside}", style="yellow", soft_wrap=True)
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
        return ExitCode.unfinished
    if outcome.summary.reprove_unjudged:
        errors.print(
            f"{outcome.summary.reprove_unjudged} candidates kept their rejection: the kernel judge gave no verdict on"
            " the study proof (see above); fix the judge, then run the same --reprove-with again",
            soft_wrap=True,
        )
        return ExitCode.unfinished
    resolved = config or load_config(str(run_dir / "config.yaml"))
    if resolved.target is not None and rates["retained"] < resolved.target:
        errors.print(
            f"--target {resolved.target} not reached: {rates['retained']} retained from {rates['drawn']} problems,"
            " every problem the selection allows was drawn (widen --limit or the filters, or use a larger source)",
            soft_wrap=True,
        )
    directory = quoted(outcome.run_dir)
    # a demonstration is checked by a stand-in only (recorded Lean): its release must say so to write anything
    unverified = " --allow-unverified" if resolved.demonstration else ""
    release = f"  |  repro release {directory} --out {quoted(Path('release') / outcome.run_dir.name)}{unverified}"
    console.print(  # nothing retained: a release would only say so (n13)
        f"next: repro status {directory}  |  repro audit {directory}" + (release if rates["retained"] else ""),
        soft_wrap=True,
    )
    return ExitCode.ok


def _on_interrupt(arguments: argparse.Namespace) -> str | None:
    if not arguments.run_dir:
        return None
    if not (Path(arguments.run_dir) / STORE_FILENAME).exists():
        return "nothing was stored yet; start again with the same command"
    return f"resume with: repro run --resume --run-dir {quoted(arguments.run_dir)}"


def register(commands: Commands) -> None:
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
        "--no-salvage",
        action="store_true",
        help="do not repair near-miss prover outputs (prove.salvage: false); salvage costs Lean checks, no model call",
    )
    run.add_argument(
        "--feedback-rounds",
        type=int,
        metavar="N",
        help="ask the prover again N times with Lean's messages on its failed proofs (prove.feedback_rounds)",
    )
    run.add_argument(
        "--reprove-with",
        metavar="STUDY_DIR",
        help="with --resume: candidates that failed only at prove/verify/judge take a study's judged proof",
    )
    run.set_defaults(handler=command_run, on_interrupt=_on_interrupt)
