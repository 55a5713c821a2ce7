"""Library entry points behind the CLI: start or resume a run, report on it, audit it, check the setup.

Reporting (`status`, `audit`) imports only the store and the metrics; model clients, Lean
backends, data loaders and progress bars are imported by the functions that run things, so a
report on a finished run starts in a fraction of a second.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import shlex
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from repro import __version__
from repro.config import (
    ConfigError,
    JudgeSettings,
    LeanBackendName,
    LeanSettings,
    ModelBackendName,
    RunConfig,
    dump_config,
    resume_changes,
)
from repro.data import LoadReport, iter_problems, iter_seeded_order, scan_source
from repro.dirlock import held_by, hold_directory
from repro.exit_codes import ExitCode, ReproError
from repro.judge.batch import BatchSummary, check_batch, read_rows
from repro.judge.proof import ProofCheck, check_proof_text
from repro.judge.verdict import Judge
from repro.lean.factory import build_verifier
from repro.lean.protocol import InfraStatus, Verifier, preflight_check
from repro.lean.text import without_header
from repro.lean.toolchains import get_toolchain
from repro.llm.breaker import EndpointBreaker
from repro.llm.client import ModelClient
from repro.llm.factory import build_backend
from repro.llm.preflight import preflight_endpoints
from repro.metrics import run_metrics
from repro.pipeline import Pipeline, RunSummary
from repro.provers import profile_provenance
from repro.records import SourceProblem, utc_now
from repro.runlog import LOG_FILENAME, PlainProgress, RunLog, sigterm_as_sigint
from repro.store import STORE_FILENAME, RunReader, RunStore

if TYPE_CHECKING:
    from rich.console import Console

    from repro.answer_check import AnswerResult, AnswerRow, AnswerSummary
    from repro.lean.protocol import Verifier
    from repro.llm.client import ModelClient
    from repro.pipeline import RunSummary

PIPELINE_STAGES = ("rewrite", "screen", "formalize", "align", "prove", "extract", "classify")


class RunError(ReproError, RuntimeError):
    pass


class RunInfrastructureError(RunError):
    """The run cannot go on now (Lean cannot check code, an endpoint keeps failing); stored work is kept."""

    exit_code = ExitCode.unfinished


class LeanPreflightError(RunInfrastructureError):
    """Lean could not check trivial code before the first model call."""


@dataclass
class RunOutcome:
    run_dir: Path
    summary: RunSummary
    metrics: dict[str, Any]
    # problems left for --resume: how many, and the first few with the cause recorded for each
    unfinished: int = 0
    unfinished_examples: list[tuple[str, str | None]] = field(default_factory=list)

    @property
    def resume_command(self) -> str:
        return f"repro run --resume --run-dir {shlex.quote(str(self.run_dir))}"


def build_clients(config: RunConfig, store: RunStore, breaker: EndpointBreaker | None = None) -> dict[str, ModelClient]:
    clients = {}
    for stage in PIPELINE_STAGES:
        settings = config.model_for(stage)
        clients[stage] = ModelClient(
            build_backend(settings), store=store, stage=stage, cache_mode=config.cache, breaker=breaker
        )
    return clients


def describe_resume(stored: RunConfig, changes: dict[str, tuple[Any, Any]]) -> str:
    """One line a resume prints: what it changed, or that it keeps the run's own bounds."""
    if changes:
        shown = ", ".join(f"{key} {_plain(old)} -> {_plain(new)}" for key, (old, new) in changes.items())
        return f"resume changes: {shown}"
    return (
        f"resume keeps the run's settings (limit {_plain(stored.dataset.limit)}, target {_plain(stored.target)});"
        " give --limit or --target to change them"
    )


def _plain(value: Any) -> str:
    return "none" if value is None else str(value)


def open_run(
    config: RunConfig | None, run_dir: Path, *, resume: bool, on_note: Callable[[str], None] | None = None
) -> tuple[RunConfig, RunStore]:
    """Create a run directory (storing the resolved config), or reopen one to resume (``on_note`` hears
    what the resume changed)."""
    stored_config = run_dir / "config.yaml"
    if resume:
        if not (run_dir / STORE_FILENAME).exists():
            raise RunError(f"{run_dir}: nothing to resume (no {STORE_FILENAME})")
        resolved = RunConfig.model_validate(yaml.safe_load(stored_config.read_text(encoding="utf-8")))
        if config is None:
            if on_note is not None:
                on_note(describe_resume(resolved, {}))
            return resolved, RunStore(run_dir)
        changes = resume_changes(resolved, config)  # refuses loudly what a resume may not change
        store = RunStore(run_dir)
        if on_note is not None:
            on_note(describe_resume(resolved, changes))
        if changes:
            stored_config.write_text(dump_config(config), encoding="utf-8")
            store.set_meta(
                f"resume_changes:{utc_now()}",
                json.dumps({key: {"from": old, "to": new} for key, (old, new) in changes.items()}),
            )
        return config, store
    if config is None:
        raise RunError("a config is needed to start a run: --config FILE")
    if (run_dir / STORE_FILENAME).exists():
        raise RunError(f"{run_dir} already holds a run; pass --resume to continue it, or choose another --run-dir")
    run_dir.mkdir(parents=True, exist_ok=True)
    stored_config.write_text(dump_config(config), encoding="utf-8")
    store = RunStore(run_dir)
    store.set_meta("repro_version", __version__)
    prove = config.models.get("prove")
    recorded = profile_provenance(prove.model_dump(mode="json")) if prove is not None else None
    if recorded is not None:
        store.set_meta("prover_profile", json.dumps(recorded))
    return config, store


async def preflight_lean(verifier: Verifier, config: RunConfig) -> None:
    """Check trivial code on the Lean backend itself, before any model call, on every start and resume.

    The check bypasses the result cache and names a fresh theorem each time: a resume must learn
    whether Lean works now, not whether it worked when the run began. A backend that claims real Lean
    then passes the self-test battery once per backend + toolchain (repro.judge.selftest; cached).
    """

    backend: Verifier = getattr(verifier, "inner", verifier)
    preflight = await preflight_check(backend, config.lean.header)
    if preflight.infra_status != InfraStatus.ok or preflight.has_error:
        problem = preflight.detail or "; ".join(m.text for m in preflight.messages[:2])
        raise LeanPreflightError(
            f"the Lean backend ({config.lean.backend}) cannot check code: {preflight.infra_status}: {problem[:400]}."
            " Nothing was run (no model was called). See `repro doctor`; `repro lean setup` installs Mathlib and"
            " the REPL."
        )
    if backend.real_lean and config.lean.selftest:
        from repro.judge.selftest import SelfTestFailed, ensure_selftest

        try:
            await ensure_selftest(config.lean, verifier=backend)
        except SelfTestFailed as failure:
            raise LeanPreflightError(f"{failure} No model was called.") from None


def _selected_count(config: RunConfig, report: LoadReport) -> int:
    count = report.matching
    for bound in (config.dataset.sample, config.dataset.limit):
        if bound is not None:
            count = min(count, bound)
    return count


async def _execute(
    config: RunConfig,
    store: RunStore,
    console: Console | None,
    report: LoadReport,
    log: RunLog,
    reprove_with: Path | None = None,
) -> RunSummary:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    if report.skipped:
        store.set_meta("skipped_rows", str(report.skipped))
        store.set_meta("skip_reasons", json.dumps(report.skip_reasons, ensure_ascii=False))
        log.write(f"skipped {report.skipped} bad rows")
        if console:
            console.print(
                f"skipped {report.skipped} malformed rows (first: {report.skip_reasons[0]}); all in `repro status`",
                style="yellow",
                markup=False,
            )
    breaker = EndpointBreaker(threshold=config.stop_after_failed_calls)
    if config.target is not None:
        stream = iter_seeded_order(config.dataset, _selected_count(config, report), matching=report.matching)
    else:
        stream = iter_problems(config.dataset, matching=report.matching)

    def problems_until_an_endpoint_is_down() -> Iterator[SourceProblem]:
        for problem in stream:
            if breaker.reason() is not None:
                return
            yield problem

    problems = problems_until_an_endpoint_is_down()
    verifier = build_verifier(config.lean, store)
    try:
        await preflight_lean(verifier, config)
    except BaseException:
        await verifier.close()
        raise
    clients = build_clients(config, store, breaker)
    judge = _run_judge(config, store)
    counts: Counter[str] = Counter()
    started = time.monotonic()
    total = config.target or _selected_count(config, report)
    # a resume counts on from what the run already finished, so its figures are the run's, not the session's
    before = store.outcome_counts()
    earlier = Counter({outcome: count for outcome, count in before.items() if outcome is not None})
    plain = PlainProgress(console, log, total=None if config.target else total, finished=earlier)
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[funnel]}"),
        console=console or Console(quiet=True),
        transient=False,
        disable=console is None or not console.is_terminal,
    )
    done_before = earlier["retained"] if config.target else sum(earlier.values())
    task = progress.add_task("retained" if config.target else "problems", total=total, completed=done_before, funnel="")

    def on_event(event: str, stage: str, reason: str | None) -> None:
        plain.on_event(event, stage, reason)
        if event == "rejected":
            counts[f"{stage}:{reason}"] += 1
        elif event == "retained":
            counts["retained"] += 1
        if event == "problem_done" and not config.target:
            progress.advance(task)
        if event in ("rejected", "retained"):
            top = ", ".join(f"{k} {v}" for k, v in counts.most_common(4) if k != "retained")
            minutes = max(time.monotonic() - started, 1e-9) / 60
            progress.update(task, funnel=f"kept {counts['retained']} ({counts['retained'] / minutes:.1f}/min) | {top}")
            if config.target and event == "retained":
                progress.advance(task)

    pipeline = Pipeline(config, store, clients, verifier, judge, on_event=on_event)
    heartbeat = asyncio.create_task(plain.beat())
    with progress:
        try:
            summary = await pipeline.run(problems, target=config.target)
            if reprove_with is not None:
                summary = await _reprove_with(config, store, clients, verifier, judge, reprove_with, summary, console)
        finally:
            heartbeat.cancel()
            await verifier.close()
    plain.emit()
    stopped = breaker.reason()
    if stopped is not None:
        log.write(f"stopped: {stopped}")
        raise RunInfrastructureError(
            f"stopped drawing problems: an endpoint keeps failing ({stopped}). Stored work is kept;"
            f" fix the endpoint, then: repro run --resume --run-dir {store.run_dir}"
        )
    return summary


def _run_judge(config: RunConfig, store: RunStore) -> Judge:
    """The run's kernel judge (``judge:``), its verdicts kept in the run store: identical code is judged once,
    across resumes. Confined as ``lean.sandbox`` names (``unshare``/``none`` there is the opt-in to run so)."""
    from repro.judge.cached import CachedJudge
    from repro.judge.kernel import build_judge

    return CachedJudge(build_judge(config.judge, sandbox=config.lean.sandbox), store)


def validate_inputs(config: RunConfig) -> LoadReport:
    """Everything a run can check before it writes anything: endpoints and keys, then the dataset.

    Raises ``EndpointPreflightError`` or ``DataError`` with the cause; nothing is created.
    """
    preflight_endpoints(config)
    return scan_source(config.dataset)


async def _reprove_with(
    config: RunConfig,
    store: RunStore,
    clients: dict[str, ModelClient],
    verifier: Verifier,
    judge: Judge,
    study_dir: Path,
    summary: RunSummary,
    console: Console | None,
) -> RunSummary:
    """``--reprove-with``: candidates that failed only at proving take a study's judged proof, once the
    run's own screen and judge pass it too."""
    from repro.study import reprove_with_study

    reused = await reprove_with_study(config, store, clients, verifier, judge, study_dir)
    summary.retained += reused.retained
    summary.rejected = max(summary.rejected - reused.retained, 0)
    summary.reprove_unjudged = reused.judge_unavailable
    if console:
        console.print(
            f"--reprove-with {study_dir}: {reused.considered} candidates failed only at prove/verify/judge;"
            f" {len(reused.reused)} took a study proof, {reused.retained} retained,"
            f" {reused.without_study_proof} had no judged study proof for their exact statement and header"
            + (f", {reused.judge_rejected} whose study proof the run's judge rejected" if reused.judge_rejected else "")
            + (
                f", {reused.judge_unavailable} left as they were (the judge gave no verdict; run it again)"
                if reused.judge_unavailable
                else ""
            ),
            markup=False,
        )
    return summary


def run(
    config: RunConfig | None,
    run_dir: Path,
    *,
    resume: bool = False,
    console: Console | None = None,
    reprove_with: Path | None = None,
) -> RunOutcome:
    if reprove_with is not None and not resume:
        raise RunError("--reprove-with needs --resume --run-dir RUN_DIR (it feeds an existing run)")
    if reprove_with is not None and not (reprove_with / "study.sqlite").is_file():
        raise RunError(f"--reprove-with {reprove_with}: not a study directory (no study.sqlite); see repro prove-study")
    report: LoadReport | None = None
    if resume and not (run_dir / STORE_FILENAME).exists():
        raise RunError(f"{run_dir}: nothing to resume (no {STORE_FILENAME})")
    if not resume:
        if config is None:
            raise RunError("a config is needed to start a run: --config FILE")
        _refuse_a_run_there(run_dir)  # before any endpoint is asked (again under the lock, below)
        report = validate_inputs(config)
        if report.missing_ids and console is not None:
            console.print(f"warning: --ids not in the source: {', '.join(report.missing_ids)}", style="yellow")
    created = not run_dir.exists()
    with hold_directory(run_dir, command="repro run"):
        if not resume and (run_dir / STORE_FILENAME).exists():
            _refuse_a_run_there(run_dir)
            clear_failed_start(run_dir)  # no problem was ever drawn there: nothing to keep
        try:
            return _run_held(config, run_dir, resume, console, reprove_with, report)
        except LeanPreflightError:
            if created and not resume:
                shutil.rmtree(run_dir, ignore_errors=True)  # nothing ran: leave no half-made run behind
            elif not resume:
                clear_failed_start(run_dir)
            raise


def _refuse_a_run_there(run_dir: Path) -> None:
    if (run_dir / STORE_FILENAME).exists() and not failed_start(run_dir):
        raise RunError(f"{run_dir} already holds a run; pass --resume to continue it, or choose another --run-dir")


def failed_start(run_dir: Path) -> bool:
    """Whether the run store there holds only a start that failed before drawing any problem."""
    with RunReader(run_dir) as store:
        return not store.outcome_counts()


def clear_failed_start(run_dir: Path) -> None:
    """Remove what a start that drew no problem wrote (its store, config and log), nothing else."""
    for name in (STORE_FILENAME, f"{STORE_FILENAME}-wal", f"{STORE_FILENAME}-shm", "config.yaml", LOG_FILENAME):
        (run_dir / name).unlink(missing_ok=True)


def _run_held(
    config: RunConfig | None,
    run_dir: Path,
    resume: bool,
    console: Console | None,
    reprove_with: Path | None,
    report: LoadReport | None,
) -> RunOutcome:
    """The body of :func:`run`, with the run directory held by this process."""

    def note(text: str) -> None:
        if console is not None:
            console.print(text, markup=False, highlight=False, soft_wrap=True)

    resolved, store = open_run(config, run_dir, resume=resume, on_note=note)
    log = RunLog(run_dir)
    try:
        if report is None:
            report = validate_inputs(resolved)
        action = "resume" if resume else "start"
        log.write(f"{action}: repro {__version__}, config {resolved.name}, source {report.source}")
        if resume:
            _reopen_outdated_judgements(store, log, note)
        # Everything imported so far lives as long as the process: keep it out of the collector's
        # scans, which LeanInteract forces on every worker it kills (a full collection holds the GIL).
        gc.freeze()
        store.start_writer()
        with sigterm_as_sigint():
            summary = asyncio.run(_execute(resolved, store, console, report, log, reprove_with))
        store.stop_writer()
        unfinished = store.outcome_counts().get(None, 0)
        log.write(f"finished: retained {summary.retained}, rejected {summary.rejected}, unfinished {unfinished}")
        return RunOutcome(
            run_dir=run_dir,
            summary=summary,
            metrics=run_metrics(store, resolved.prove.k, resolved.prove.strategy, config=resolved),
            unfinished=unfinished,
            unfinished_examples=store.unfinished_problems(limit=10) if unfinished else [],
        )
    except BaseException as error:
        log.write(f"stopped: {type(error).__name__}: {error}")
        raise
    finally:
        log.close()
        store.close()
        gc.unfreeze()  # a caller that runs again in this process gets its garbage collected normally


def _reopen_outdated_judgements(store: RunStore, log: RunLog, note: Callable[[str], None]) -> None:
    """A resume judges again what a judge that is not today's passed (another pin, older checks: red1 R10)."""
    from repro.judge.currency import judge_outdated

    reopened = store.reopen_outdated_judgements(
        lambda c: judge_outdated(c.judge_tool, c.judge_revision, c.judge_toolchain, c.judge_checks)
    )
    if reopened:
        first, why = reopened[0]
        text = f"{len(reopened)} retained candidates were passed by a judge that is not today's ({first}: {why})"
        text += ": judged again"
        log.write(text)
        note(text)


def status(run_dir: Path) -> dict[str, Any]:
    """Funnel, rates, accounting and unfinished problems: aggregate queries only, whatever the run's size."""
    store = RunReader(run_dir)
    try:
        config_path = run_dir / "config.yaml"
        config = RunConfig.model_validate(yaml.safe_load(config_path.read_text())) if config_path.exists() else None
        prove = config.prove if config is not None else None
        metrics = run_metrics(store, prove.k if prove else 1, prove.strategy if prove else "parallel", config=config)
        metrics["attempts"] = [
            {"stage": stage, "status": state, "reason": reason, "count": count}
            for stage, state, reason, count in store.stage_status_counts()
        ]
        metrics["candidates"] = store.candidate_status_counts()
        unfinished = metrics["rates"]["drawn"] - metrics["rates"]["finished"]
        metrics["unfinished"] = {
            "count": unfinished,
            "first": [
                {"problem_id": problem_id, "cause": cause}
                for problem_id, cause in (store.unfinished_problems(limit=10) if unfinished else [])
            ],
        }
        metrics["unfinished"]["live"] = held_by(run_dir)  # a run in progress, not an interrupted one
        metrics["schema_version"] = store.schema_version()
        metrics["skipped_rows"] = json.loads(store.get_meta("skip_reasons") or "[]")
        return metrics
    finally:
        store.close()


def audit(
    run_dir: Path,
    *,
    stage: str | None = None,
    reason: str | None = None,
    limit: int | None = None,
    candidate_id: str | None = None,
) -> list[dict[str, Any]]:
    """Every rejected attempt with its evidence (see :mod:`repro.audit`)."""
    from repro.audit import audit_rows

    return audit_rows(run_dir, stage=stage, reason=reason, limit=limit, candidate_id=candidate_id)


@dataclass
class DoctorLine:
    ok: bool
    name: str
    detail: str
    # whether what the given config runs needs this; a missing optional item is shown, not counted
    required: bool = True


def _needed_extras(config: RunConfig | None) -> set[str]:
    if config is None:
        return set()
    backends = {settings.backend for settings in config.models.values()}
    return {
        extra
        for extra, backend in (("vllm", ModelBackendName.vllm), ("local", ModelBackendName.transformers))
        if backend in backends
    }


def doctor(config: RunConfig | None) -> list[DoctorLine]:
    """What is installed and reachable, each line marked with whether ``config`` needs it.

    Without a config only the core packages are required: Lean and the model extras are reported
    but a run of the offline demo works without them.
    """
    import importlib.util

    from repro.lean.project import lean_health
    from repro.llm.preflight import check_endpoints

    lines = []
    extras = _needed_extras(config)
    for package, extra in (
        ("pydantic", None),
        ("openai", None),
        ("lean_interact", None),
        ("datasets", None),
        ("tenacity", None),
        ("rich", None),
        ("math_verify", None),
        ("pyarrow", None),
        ("vllm", "vllm"),
        ("transformers", "local"),
    ):
        found = importlib.util.find_spec(package) is not None
        fix = f"pip install 'repro[{extra}]'" if extra else "pip install -e ."
        detail = "installed" if found else f"MISSING: {fix}"
        if found and extra is not None:
            from repro.llm.compat import library_version

            version = library_version(package)  # the in-process backends were checked against a range
            found = bool(version.inside)
            detail = ("installed " if found else "MISSING: installed ") + version.describe()
        lines.append(
            DoctorLine(
                found,
                f"python package {package}" + (f" (optional, extra {extra})" if extra else ""),
                detail,
                required=extra is None or extra in extras,
            )
        )
    project = Path(config.lean.project_dir() if config else "lean_project")
    needs_local_lean = config is not None and config.lean.backend == LeanBackendName.repl
    health = lean_health(project, get_toolchain(config.lean.toolchain) if config else None)
    # one line for the binaries a run starts: the toolchain's own lean and lake for the project (never the
    # elan shims on PATH, whose toolchain depends on the current directory)
    lines.append(
        DoctorLine(
            bool(health.lean and health.lake),
            f"Lean toolchain for {project}",
            "; ".join(binary.describe() for binary in health.binaries)
            if health.lean and health.lake
            else "MISSING: " + health.problems[0],
            required=needs_local_lean,
        )
    )
    lines.append(
        DoctorLine(
            health.mathlib_built,
            f"Mathlib project {project}" + (f" ({health.toolchain})" if health.toolchain else " (not set up)"),
            "built" if health.mathlib_built else "MISSING: run `repro lean setup` (needs network once)",
            required=needs_local_lean,
        )
    )
    lines.append(
        DoctorLine(
            shutil.which("elan") is not None,
            "elan",
            shutil.which("elan") or "MISSING: install elan, or use docker/Dockerfile",
            required=False,
        )
    )
    lines.extend(_toolchain_and_confinement_lines(config, needs_local_lean))
    # a run on real Lean (repl or kimina) needs the judge: nothing is verified without it, and it compiles here
    lines.append(_judge_doctor_line(config, config is not None and config.lean.backend != LeanBackendName.fake))
    if config is not None:
        ready = config.lean.backend == LeanBackendName.fake or (not health.problems and health.mathlib_built)
        if config.lean.backend == LeanBackendName.kimina:
            lines.append(_reachable("Kimina Lean server", config.lean.kimina_url, "/"))
            ready = lines[-1].ok
        lines.append(_selftest_line(config.lean, ready))
        for stage in PIPELINE_STAGES:
            try:
                config.model_for(stage)
            except ConfigError as error:
                lines.append(DoctorLine(False, f"model for {stage}", f"MISSING: {error}"))
        for check in asyncio.run(check_endpoints(config)):
            models = ", ".join(sorted(set(check.models)))
            lines.append(DoctorLine(check.ok, f"endpoint {check.base_url} ({models})", check.detail))
        lines.extend(_sampling_lines(config))
    return lines


def _judge_doctor_line(config: RunConfig | None, required: bool) -> DoctorLine:
    """Whether the kernel judge can judge the run's toolchain here: its pinned tool set up and built, and
    the named confinement working (a run on real Lean needs it: nothing is verified without it)."""
    from repro.config import JudgeSettings
    from repro.judge.kernel import build_judge, readiness, toolchain_key

    settings = config.judge if config else JudgeSettings()
    toolchain = toolchain_key(config.lean.toolchain if config else None)
    try:
        judge = build_judge(settings, sandbox=config.lean.sandbox if config else "bwrap")
    except ValueError as error:
        return DoctorLine(False, "kernel judge", f"MISSING: {error}", required=required)
    revision = (judge.revision(toolchain) or "no pinned revision")[:12]
    dispatch = getattr(judge, "judge_for", None)  # auto: the tool this toolchain goes to
    tool = dispatch(toolchain).name if callable(dispatch) else judge.name
    name = f"kernel judge ({tool} {revision} for {toolchain})"
    problem = readiness(judge, toolchain)
    if problem is not None:
        return DoctorLine(False, name, f"MISSING: {problem[1]}", required=required)
    confinement = getattr(judge, "confinement", "")
    detail = ("ready" if judge.real else "a stand-in: its verdicts are not real") + (
        f"; {confinement}" if isinstance(confinement, str) and confinement else ""
    )
    return DoctorLine(True, name, detail, required=required)


def _sampling_lines(config: RunConfig) -> list[DoctorLine]:
    """Per served stage: the sampling values it sends and those the server would otherwise apply (informational)."""
    from repro.llm.server_defaults import sampling_exposures

    used = []
    for stage in PIPELINE_STAGES:
        try:
            used.append((stage, config.model_for(stage)))
        except ConfigError:
            continue
    return [
        DoctorLine(True, f"sampling of {exposure.stage} ({exposure.model})", exposure.describe(), required=False)
        for exposure in asyncio.run(sampling_exposures(used))
    ]


def _toolchain_and_confinement_lines(config: RunConfig | None, needed: bool) -> list[DoctorLine]:
    """Which toolchain ``lake`` resolves to from here (informational: the project's own is the toolchain line;
    lean audit B1) and which confinement Lean processes get (issue 27 §3): the configured ``lean.sandbox``
    and whether it works."""
    from repro.lean.sandbox import SandboxUnavailable, confinement, detect_sandbox, resolve_toolchain_binary

    lines = []
    here = resolve_toolchain_binary("lake", os.getcwd())
    lines.append(
        DoctorLine(
            True,
            "lake from the current directory",
            (here.describe() if here.path else f"none: {here.problem}")
            + " (informational: repro runs the project's lake above)",
            required=False,
        )
    )
    mode = config.lean.sandbox if config is not None else "bwrap"
    try:
        status = confinement(mode)
        ok, detail = True, f"lean.sandbox {mode}: {status.describe()}"
        if not status.writes_confined:
            detail += " (weaker than bwrap, by the operator's choice)"
    except SandboxUnavailable as refused:
        ok, detail = False, f"MISSING: {refused}"
    best = detect_sandbox()
    lines.append(
        DoctorLine(
            ok,
            "confinement of Lean processes",
            f"{detail}; strongest available here: {best.kind}",
            required=needed,
        )
    )
    return lines


def _selftest_line(lean: LeanSettings, backend_ready: bool) -> DoctorLine:
    """The self-test battery on the configured backend (fresh, not the cached pass a run uses)."""
    from repro.judge.selftest import run_selftest

    name = f"Lean self-test ({lean.backend}, {lean.toolchain})"
    required = lean.backend != LeanBackendName.fake
    if not backend_ready:
        return DoctorLine(False, name, "MISSING: not run, the Lean backend above is not ready", required=required)
    try:
        report = asyncio.run(run_selftest(lean))
    except Exception as error:  # a backend that cannot even be built
        return DoctorLine(False, name, f"MISSING: {type(error).__name__}: {error}", required=required)
    if not report.passed:
        failed = ", ".join(f"{o.name} ({o.detail[:120]})" for o in report.failed)
        return DoctorLine(False, name, f"MISSING: failed {failed}; see `repro lean selftest`", required=required)
    answered = len(report.outcomes) - len(report.unanswered)
    detail = f"passed {answered} cases"
    if report.unanswered:
        detail += "; only a real backend can answer " + ", ".join(o.name for o in report.unanswered)
    return DoctorLine(True, name, detail, required=required)


def _reachable(name: str, base_url: str, path: str) -> DoctorLine:
    import httpx

    url = base_url.rstrip("/") + path
    try:
        response = httpx.get(url, timeout=5.0)
    except httpx.HTTPError as error:
        return DoctorLine(
            False,
            name,
            f"MISSING: unreachable ({type(error).__name__}); start the server or fix base_url in the config",
        )
    return DoctorLine(response.status_code < 500, name, f"reachable (HTTP {response.status_code})")


async def check_proof(
    statement: str, proof: str, lean: LeanSettings, judge: Judge | JudgeSettings | None = None
) -> ProofCheck:
    """One prover output through the screen with the backend ``lean`` names, then, if the screen passed it,
    through the kernel judge (``judge``: a judge, or the settings of one; default: the tool pinned for the
    toolchain). Only a real judge's pass after a real screen is verified.

    The statement file may repeat the header (imports, opens); the configured header is what is used.
    """
    from repro.records import ReasonCode
    from repro.stages.prove import has_no_lean

    statement = without_header(statement)
    verifier = build_verifier(lean)
    try:
        checked = await check_proof_text(
            statement,
            proof,
            verifier,
            _judge_of(judge, lean),
            key="check-proof",
            header=lean.header,
            toolchain=lean.toolchain,
            allow_native_decide=lean.allow_native_decide,
            limits=lean.static_limits,
        )
    finally:
        await verifier.close()
    verdict = checked.screen
    if not verdict.verified and ReasonCode.boundary_corruption not in verdict.reasons and has_no_lean(proof):
        # prose: the gate lexed it as code, but the first thing a user must hear is that there was no Lean
        verdict.reasons.insert(0, ReasonCode.no_lean_block)
        verdict.details.insert(0, "no Lean in the output (prose or an empty reply): no_lean_block")
    return checked


def _judge_of(judge: Judge | JudgeSettings | None, lean: LeanSettings) -> Judge:
    """The kernel judge check-proof asks: the one given, else the one its settings (or the defaults) name,
    confined as ``lean.sandbox`` names; identical code is judged once (a batch's k identical outputs)."""
    from repro.judge.cached import CachedJudge
    from repro.judge.kernel import build_judge

    if judge is None or isinstance(judge, JudgeSettings):
        judge = build_judge(judge or JudgeSettings(), sandbox=lean.sandbox)
    return judge if isinstance(judge, CachedJudge) else CachedJudge(judge)


async def check_proof_batch(
    in_path: Path,
    out_path: Path,
    lean: LeanSettings,
    progress: Callable[[int, int], None] | None = None,
    *,
    salvage: int = 0,
    judge: Judge | JudgeSettings | None = None,
) -> BatchSummary:
    """Every row of a JSONL file through the screen and, where it passed, the kernel judge; verdicts
    streamed to ``out_path``, resumable.

    ``salvage``: up to that many repaired texts per failed row, each through the same screen and judge."""
    read_rows(in_path, trusted_header=lean.header)  # bad input is reported before any Lean worker starts
    verifier = build_verifier(lean)
    try:
        return await check_batch(
            in_path,
            out_path,
            verifier,
            header=lean.header,
            judge=_judge_of(judge, lean),
            toolchain=lean.toolchain,
            allow_native_decide=lean.allow_native_decide,
            limits=lean.static_limits,
            concurrency=lean.workers,
            progress=progress,
            salvage=salvage,
        )
    finally:
        await verifier.close()


async def answer_only(
    rows: list[AnswerRow], lean: LeanSettings, progress: Callable[[int, int], None] | None = None
) -> tuple[list[AnswerResult], AnswerSummary]:
    """The answer each statement would release (``check-proof --answer-only``), through ``lean``'s backend."""
    from repro.answer_check import answer_rows, summarize

    verifier = build_verifier(lean)
    try:
        results = await answer_rows(rows, verifier, header=lean.header, progress=progress)
        return results, summarize(results, verifier)
    finally:
        await verifier.close()


def metrics_json(metrics: dict[str, Any]) -> str:
    return json.dumps(metrics, indent=2, default=str)
