"""Library entry points behind the CLI: start or resume a run, report on it, audit it, check the setup."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from repro import __version__
from repro.config import ConfigError, LeanBackendName, LeanSettings, ModelBackendName, RunConfig, dump_config
from repro.data import load_problems, seeded_order
from repro.lean.audit import BatchSummary, check_batch, read_rows
from repro.lean.factory import build_verifier
from repro.lean.gate import Verdict, verify_proof
from repro.lean.protocol import InfraStatus
from repro.lean.source import without_header
from repro.llm.client import ModelClient
from repro.llm.factory import build_backend
from repro.metrics import run_metrics
from repro.pipeline import Pipeline, RunSummary
from repro.records import CandidateStatus
from repro.store import STORE_FILENAME, RunStore

PIPELINE_STAGES = ("rewrite", "screen", "formalize", "align", "prove", "extract", "classify")


class RunError(RuntimeError):
    pass


@dataclass
class RunOutcome:
    run_dir: Path
    summary: RunSummary
    metrics: dict[str, Any]


def build_clients(config: RunConfig, store: RunStore) -> dict[str, ModelClient]:
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


async def _execute(config: RunConfig, store: RunStore, console: Console | None) -> RunSummary:
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
    preflight = await verifier.check("theorem repro_preflight : True := trivial", config.lean.header)
    if preflight.infra_status != InfraStatus.ok or preflight.has_error:
        await verifier.close()
        problem = preflight.detail or "; ".join(m.text for m in preflight.messages[:2])
        raise RunError(
            f"the Lean backend ({config.lean.backend}) cannot check code: {preflight.infra_status}: {problem[:400]}."
            " Nothing was run. See `repro doctor`; `repro lean setup` installs Mathlib and the REPL."
        )
    clients = build_clients(config, store)
    counts: Counter[str] = Counter()
    started = time.monotonic()
    total = config.target or len(problems)
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
    resolved, store = open_run(config, run_dir, resume=resume)
    try:
        summary = asyncio.run(_execute(resolved, store, console))
        return RunOutcome(run_dir=run_dir, summary=summary, metrics=run_metrics(store, resolved.prove.k))
    finally:
        store.close()


def status(run_dir: Path) -> dict[str, Any]:
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
        for candidate in store.candidates(CandidateStatus.rejected):
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


async def check_proof(statement: str, proof: str, lean: LeanSettings) -> Verdict:
    """One prover output through the soundness gate, with the backend ``lean`` names.

    The statement file may repeat the header (imports, opens); the configured header is what is used.
    """
    statement = without_header(statement)
    verifier = build_verifier(lean)
    try:
        return await verify_proof(
            statement, proof, verifier, header=lean.header, allow_native_decide=lean.allow_native_decide
        )
    finally:
        await verifier.close()


async def check_proof_batch(
    in_path: Path, out_path: Path, lean: LeanSettings, progress: Callable[[int, int], None] | None = None
) -> BatchSummary:
    """Every row of a JSONL file through the gate; verdicts streamed to ``out_path``, resumable."""
    read_rows(in_path)  # bad input is reported before any Lean worker starts
    verifier = build_verifier(lean)
    try:
        return await check_batch(
            in_path,
            out_path,
            verifier,
            header=lean.header,
            allow_native_decide=lean.allow_native_decide,
            concurrency=lean.workers,
            progress=progress,
        )
    finally:
        await verifier.close()


def metrics_json(metrics: dict[str, Any]) -> str:
    return json.dumps(metrics, indent=2, default=str)
