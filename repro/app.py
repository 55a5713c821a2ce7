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
import secrets
import shlex
import shutil
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from repro import __version__
from repro.config import ConfigError, LeanBackendName, ModelBackendName, RunConfig, dump_config
from repro.metrics import run_metrics
from repro.records import CandidateStatus
from repro.store import STORE_FILENAME, RunStore

if TYPE_CHECKING:
    from rich.console import Console

    from repro.lean.protocol import Verifier
    from repro.llm.client import ModelClient
    from repro.pipeline import RunSummary

PIPELINE_STAGES = ("rewrite", "screen", "formalize", "align", "prove", "extract", "classify")


class RunError(RuntimeError):
    pass


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


def build_clients(config: RunConfig, store: RunStore) -> dict[str, ModelClient]:
    from repro.llm.client import ModelClient
    from repro.llm.factory import build_backend

    clients = {}
    for stage in PIPELINE_STAGES:
        settings = config.model_for(stage)
        clients[stage] = ModelClient(build_backend(settings), store=store, stage=stage, cache_mode=config.cache)
    return clients


def open_run(config: RunConfig | None, run_dir: Path, *, resume: bool) -> tuple[RunConfig, RunStore]:
    """Create a run directory (storing the resolved config), or reopen one to resume."""
    stored_config = run_dir / "config.yaml"
    if resume:
        if not (run_dir / STORE_FILENAME).exists():
            raise RunError(f"{run_dir}: nothing to resume (no {STORE_FILENAME})")
        resolved = RunConfig.model_validate(yaml.safe_load(stored_config.read_text(encoding="utf-8")))
        return resolved, RunStore(run_dir)
    if config is None:
        raise RunError("a config is needed to start a run: --config FILE")
    if (run_dir / STORE_FILENAME).exists():
        raise RunError(f"{run_dir} already holds a run; pass --resume to continue it, or choose another --run-dir")
    run_dir.mkdir(parents=True, exist_ok=True)
    stored_config.write_text(dump_config(config), encoding="utf-8")
    store = RunStore(run_dir)
    store.set_meta("repro_version", __version__)
    return config, store


async def preflight_lean(verifier: Verifier, config: RunConfig) -> None:
    """Check trivial code on the Lean backend itself, before any model call, on every start and resume.

    The check bypasses the result cache and names a fresh theorem each time: a resume must learn
    whether Lean works now, not whether it worked when the run began.
    """
    from repro.lean.protocol import InfraStatus

    backend: Verifier = getattr(verifier, "inner", verifier)
    code = f"theorem repro_preflight_{secrets.token_hex(4)} : True := trivial"
    preflight = await backend.check(code, config.lean.header)
    if preflight.infra_status != InfraStatus.ok or preflight.has_error:
        problem = preflight.detail or "; ".join(m.text for m in preflight.messages[:2])
        raise RunError(
            f"the Lean backend ({config.lean.backend}) cannot check code: {preflight.infra_status}: {problem[:400]}."
            " Nothing was run (no model was called). See `repro doctor`; `repro lean setup` installs Mathlib and"
            " the REPL."
        )


async def _execute(config: RunConfig, store: RunStore, console: Console | None) -> RunSummary:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from repro.data import load_problems, seeded_order
    from repro.lean.factory import build_verifier
    from repro.pipeline import Pipeline

    problems, report = load_problems(config.dataset)
    if report.skipped:
        store.set_meta("skipped_rows", str(report.skipped))
        if console:
            console.print(
                f"skipped {report.skipped} malformed rows (first: {report.skip_reasons[0]})",
                style="yellow",
                markup=False,
            )
    if config.target is not None:
        problems = seeded_order(problems, config.dataset.seed)
    verifier = build_verifier(config.lean, store)
    try:
        await preflight_lean(verifier, config)
    except BaseException:
        await verifier.close()
        raise
    clients = build_clients(config, store)
    counts: Counter[str] = Counter()
    started = time.monotonic()
    total = config.target or (len(problems) if hasattr(problems, "__len__") else None)
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[funnel]}"),
        console=console or Console(quiet=True),
        transient=False,
        disable=console is None,
    )
    task = progress.add_task("retained" if config.target else "problems", total=total, funnel="")

    def on_event(event: str, stage: str, reason: str | None) -> None:
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

    pipeline = Pipeline(config, store, clients, verifier, on_event=on_event)
    with progress:
        try:
            return await pipeline.run(problems, target=config.target)
        finally:
            await verifier.close()


def run(config: RunConfig | None, run_dir: Path, *, resume: bool = False, console: Console | None = None) -> RunOutcome:
    """Start or resume a run. Store writes go through the store's writer thread while it runs."""
    resolved, store = open_run(config, run_dir, resume=resume)
    # Everything imported so far lives as long as the process: keep it out of the collector's
    # scans, which LeanInteract forces on every worker it kills (a full collection holds the GIL).
    gc.freeze()
    try:
        store.start_writer()
        summary = asyncio.run(_execute(resolved, store, console))
        store.stop_writer()
        unfinished = store.outcome_counts().get(None, 0)
        return RunOutcome(
            run_dir=run_dir,
            summary=summary,
            metrics=run_metrics(store, resolved.prove.k),
            unfinished=unfinished,
            unfinished_examples=store.unfinished_problems(limit=10) if unfinished else [],
        )
    finally:
        store.close()
        gc.unfreeze()  # a caller that runs again in this process gets its garbage collected normally


def status(run_dir: Path) -> dict[str, Any]:
    """Funnel, rates, accounting and unfinished problems: aggregate queries only, whatever the run's size."""
    store = RunStore(run_dir, create=False)
    try:
        config_path = run_dir / "config.yaml"
        k = RunConfig.model_validate(yaml.safe_load(config_path.read_text())).prove.k if config_path.exists() else 1
        metrics = run_metrics(store, k)
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
        metrics["schema_version"] = store.schema_version()
        return metrics
    finally:
        store.close()


def audit(
    run_dir: Path, *, stage: str | None = None, reason: str | None = None, limit: int | None = None
) -> list[dict[str, Any]]:
    """Rejected candidates (or rejected attempts of a stage/reason) with their texts and Lean messages."""
    store = RunStore(run_dir, create=False)
    try:
        rows = []
        for candidate in store.iter_candidates(CandidateStatus.rejected):  # stops reading at --limit
            attempts = store.attempts(candidate_id=candidate.candidate_id)
            matching = [
                a
                for a in attempts
                if a.status != "passed"
                and (stage is None or a.stage.value == stage)
                and (reason is None or a.reason == reason)
            ]
            candidate_matches = (
                stage is None or (candidate.reject_stage and candidate.reject_stage.value == stage)
            ) and (reason is None or (candidate.reject_reason and candidate.reject_reason.value == reason))
            if not matching and not candidate_matches:
                continue
            problem = store.problem(candidate.problem_id)
            rows.append(
                {
                    "candidate_id": candidate.candidate_id,
                    "reject_stage": candidate.reject_stage,
                    "reject_reason": candidate.reject_reason,
                    "original_question": problem.question,
                    "rewritten_question": candidate.rewritten_question,
                    "lean_statement": candidate.lean_statement,
                    "attempts": [
                        {
                            "stage": a.stage.value,
                            "attempt": a.attempt_number,
                            "status": a.status.value,
                            "reason": a.reason.value if a.reason else None,
                            "taxonomy": a.taxonomy,
                            "lean_messages": [m.model_dump() for m in a.lean_messages],
                            "details": a.output.get("details"),
                            "error": a.output.get("error"),
                            "text": a.output.get("text") or a.output.get("reply"),
                        }
                        for a in (matching or [a for a in attempts if a.status != "passed"])
                    ],
                }
            )
            if limit is not None and len(rows) >= limit:
                break
        return rows
    finally:
        store.close()


@dataclass
class DoctorLine:
    ok: bool
    name: str
    detail: str


def doctor(config: RunConfig | None) -> list[DoctorLine]:
    import importlib.util

    from repro.lean.project import lean_health

    lines = []
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
        lines.append(
            DoctorLine(
                found,
                f"python package {package}" + (f" (optional, extra {extra})" if extra else ""),
                "installed" if found else f"MISSING: {fix}",
            )
        )
    project = Path(config.lean.project_path if config else "lean_project")
    health = lean_health(project)
    lines.append(
        DoctorLine(
            bool(health.lean and health.lake),
            "Lean toolchain (lean, lake)",
            f"{health.lean}, {health.lake}" if health.lean and health.lake else "MISSING: " + health.problems[0],
        )
    )
    lines.append(
        DoctorLine(
            health.mathlib_built,
            f"Mathlib project {project} ({health.toolchain})",
            "built" if health.mathlib_built else "MISSING: run `repro lean setup` (needs network once)",
        )
    )
    lines.append(
        DoctorLine(
            shutil.which("elan") is not None,
            "elan",
            shutil.which("elan") or "MISSING: install elan, or use docker/Dockerfile",
        )
    )
    if config is not None:
        if config.lean.backend == LeanBackendName.kimina:
            lines.append(_reachable("Kimina Lean server", config.lean.kimina_url, "/"))
        seen = set()
        for stage in PIPELINE_STAGES:
            try:
                settings = config.model_for(stage)
            except ConfigError as error:
                lines.append(DoctorLine(False, f"model for {stage}", f"MISSING: {error}"))
                continue
            if settings.backend != ModelBackendName.openai or not settings.base_url or settings.base_url in seen:
                continue
            seen.add(settings.base_url)
            line = _reachable(f"endpoint {settings.base_url} ({settings.model})", settings.base_url, "/models")
            if line.ok and settings.api_key_env and not os.environ.get(settings.api_key_env):
                line = DoctorLine(False, line.name, f"MISSING: environment variable {settings.api_key_env} is not set")
            lines.append(line)
    return lines


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


def metrics_json(metrics: dict[str, Any]) -> str:
    return json.dumps(metrics, indent=2, default=str)
