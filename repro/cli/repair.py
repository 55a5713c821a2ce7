"""`repro repair`: guarded repair of cached reasoning traces."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING

from repro.cli._common import ExitCode, console, errors
from repro.config import load_config

if TYPE_CHECKING:
    from repro.cli._common import Commands
    from repro.repair import RepairSettings


def command_repair(arguments: argparse.Namespace) -> int:
    from rich.progress import Progress

    from repro.config import CacheMode, ModelSettings
    from repro.llm.client import ModelClient
    from repro.llm.factory import build_backend
    from repro.llm.preflight import preflight_models
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
        errors.print(
            "error: repair takes one --traces, at most one --candidates and --out (several only with --ablations)"
        )
        return 2
    from repro.prompts import user_or_bundled

    # the shipped demo files (data/demo_traces.jsonl, data/demo_candidates.jsonl) from any directory
    traces = read_traces(user_or_bundled(arguments.traces[0]))
    offline = read_candidates_file(user_or_bundled(arguments.candidates[0]), traces) if arguments.candidates else None
    if arguments.limit:
        traces = traces[: arguments.limit]
    out = Path(arguments.out)
    _refuse_a_finished_repair(out, overwrite=arguments.overwrite)
    client = None
    store = None
    if offline is None:
        if arguments.config:
            model = load_config(arguments.config).model_for("repair")
        elif arguments.model and arguments.base_url:
            model = ModelSettings(model=arguments.model, base_url=arguments.base_url, api_key_env=arguments.api_key_env)
        else:
            errors.print(
                "error: repair needs candidates: --candidates FILE (offline) or a model (--model and --base-url,"
                " or --config with models.repair)"
            )
            return ExitCode.usage
        preflight_models([("repair", model)])  # a dead endpoint or a missing key fails here, in seconds
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
    unreadable = sum(
        "clean:final_answer_lines" in candidate.failures for result in results for candidate in result.candidates
    )
    if unreadable:  # m12: the commonest reason a correct candidate is refused, and easy to miss
        errors.print(
            f"{unreadable} candidate(s) were refused for their Final Answer: the guard reads exactly one line that"
            " starts with 'Final Answer:' (an answer inline after other text is not read; see docs/repair.md)",
            style="yellow",
        )
    if report["undecided"]:
        errors.print(
            f"{report['undecided']} triggered example(s) could not be decided: {report['failed_calls']} model"
            " call(s) failed (see report.json undecided_ids); check the endpoint and rerun (answers already"
            " received are cached in --out)"
        )
        return ExitCode.unfinished
    return 0


def _refuse_a_finished_repair(out: Path, *, overwrite: bool) -> None:
    """A finished repair's report is not replaced unasked; an undecided one (its endpoint failed) is the
    one to run again into the same --out, where the answers it received are cached."""
    import json

    from repro.repair.runner import RepairInputError

    report = out / "report.json"
    if overwrite or not report.is_file():
        return
    try:
        undecided = int(json.loads(report.read_text(encoding="utf-8")).get("undecided") or 0)
    except (OSError, ValueError, AttributeError):
        undecided = 0
    if not undecided:
        raise RepairInputError(
            f"--out {out} holds a finished repair (report.json, examples.jsonl); nothing was done. Choose"
            " another --out, or pass --overwrite to replace it"
        )


def _interrupted(arguments: argparse.Namespace) -> str | None:
    if not arguments.out or arguments.candidates:
        return None
    return "run the same command again: the model answers received so far are cached in --out"


def _repair_ablations(arguments: argparse.Namespace, settings: RepairSettings) -> int:
    from repro.repair import AblationDataset, read_candidates_file, read_traces, run_ablations

    candidate_files = arguments.candidates or []
    if len(candidate_files) > len(arguments.traces):
        errors.print("error: --ablations pairs each --candidates with the --traces in the same position")
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


def register(commands: Commands) -> None:
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
    repair.add_argument(
        "--out",
        help="directory for report.json and examples.jsonl (ablations.json); one holding a finished repair is"
        " refused (--overwrite), one whose repair was left undecided is continued",
    )
    repair.add_argument("--overwrite", action="store_true", help="replace the finished repair in --out")
    repair.add_argument(
        "--candidates",
        action="append",
        help="JSONL of pre-generated candidates per id (no model needed); with --ablations, one per --traces in order",
    )
    repair.add_argument("--config", help="config with models.repair")
    repair.add_argument("--model", help="the repair model (with --base-url), instead of --config")
    repair.add_argument("--base-url", help="its OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1")
    repair.add_argument("--api-key-env", help="environment variable with its API key (none if unset)")
    repair.add_argument("--n", type=int, default=3, help="candidates per triggered example (default 3)")
    repair.add_argument(
        "--mode",
        choices=["auto", "strict", "strong", "weak", "relaxed"],
        default="auto",
        help="acceptance policy for a strong or weak initial reasoner (auto: from the initial traces' median"
        " meta-consistency; relaxed = weak)",
    )
    repair.add_argument(
        "--baseline",
        choices=["guarded", "resolve_all", "resolve_triggered", "best_of_n"],
        default="guarded",
        help="the policy to run: guarded repair (default) or one of the paper's baselines",
    )
    repair.add_argument("--no-graph-guard", action="store_true", help="ablation: drop the graph guard")
    repair.add_argument("--no-equation-support", action="store_true", help="ablation: drop the equation-support check")
    repair.add_argument(
        "--relaxed-missing-constraint", action="store_true", help="ablation: relax the missing-constraint guard"
    )
    repair.add_argument("--no-relaxed-support", action="store_true", help="disable the strong/weak relaxed paths")
    repair.add_argument(
        "--no-dropped-operand-guard", action="store_true", help="ablation: drop the dropped-operand guard"
    )
    repair.add_argument(
        "--trigger-score",
        choices=["consistency", "content"],
        default="consistency",
        help="score that triggers a repair (default consistency)",
    )
    repair.add_argument(
        "--ablations", action="store_true", help="print B.18's ablation table, offline, for every --traces given"
    )
    repair.add_argument("--limit", type=int, help="repair only the first N traces")
    repair.set_defaults(handler=command_repair, on_interrupt=_interrupted, heartbeat=True)
