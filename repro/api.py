"""The library entry points a notebook needs, re-exported from :mod:`repro` itself.

Each is what a ``repro`` command calls, with plain arguments (paths as ``str`` or ``Path``, settings
as records or config files) and a typed result; none prints. Errors a user acts on are
:class:`repro.ReproError` (``exit_code`` says what the CLI would exit with); nothing here is verified
unless Lean's kernel judged it on a real backend, exactly as on the command line.

    import repro
    outcome = repro.run()                        # the offline demonstration, into runs/demo
    view = repro.load_run("runs/demo")
    view.status()["rates"]["generation_rate"]
    repro.release("runs/demo", "release/demo", allow_unverified=True)
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from repro.config import JudgeSettings, LeanSettings, RunConfig, apply_override, build_config, load_config
from repro.judge.proof import ProofCheck
from repro.records import Candidate, CandidateStatus, SourceProblem, StageAttempt
from repro.release.reverify import ReverifyResult
from repro.release.writer import ReleaseSummary

if TYPE_CHECKING:
    from repro.app import RunOutcome

DEMO_CONFIG = "configs/demo.yaml"


def demo_config() -> RunConfig:
    """The offline demonstration's config (scripted models, a fake Lean): what ``repro run`` runs bare."""
    from repro.prompts import bundled_path

    config = load_config(bundled_path(DEMO_CONFIG))
    dataset = config.dataset
    if dataset.path and not Path(dataset.path).exists() and bundled_path(dataset.path).exists():
        config = config.model_copy(
            update={"dataset": dataset.model_copy(update={"path": str(bundled_path(dataset.path))})}
        )
    return config


def _config(config: RunConfig | str | Path | None, overrides: list[str] | None) -> RunConfig:
    if isinstance(config, RunConfig) and not overrides:
        return config
    if isinstance(config, str | Path):
        return load_config(config, overrides)
    data = (config or demo_config()).model_dump(mode="json")
    for assignment in overrides or []:
        apply_override(data, assignment)
    return build_config(data, where="config with " + " ".join(f"--set {item}" for item in overrides or []))


def run(
    config: RunConfig | str | Path | None = None,
    run_dir: str | Path = "runs/demo",
    *,
    resume: bool = False,
    overrides: list[str] | None = None,
) -> RunOutcome:
    """Build (or, with ``resume``, continue) a rewritten benchmark in ``run_dir``: ``repro run``.

    ``config``: a :class:`RunConfig`, a YAML/TOML file, or None for the offline demonstration;
    ``overrides`` are ``--set KEY=VALUE`` assignments. Returns the :class:`RunOutcome` (summary,
    metrics, unfinished problems). A resume without a config reads the run's stored one.
    """
    from repro.app import run as run_pipeline

    resolved = None if resume and config is None else _config(config, overrides)
    return run_pipeline(resolved, Path(run_dir), resume=resume)


def check_proof(
    statement: str, proof: str, *, lean: LeanSettings | None = None, judge: JudgeSettings | None = None
) -> ProofCheck:
    """One prover output through the screen on ``lean``'s backend and then, if the screen passed it, the
    kernel judge ``judge`` names (``repro check-proof``; default: the tool pinned for the toolchain).

    ``check.verified`` only when a real screen and a real judge passed it; ``check.passed`` whichever they
    were; ``check.screen`` is the screen's verdict, ``check.judge`` the judge's. ``LeanSettings(backend="recorded")``
    with ``JudgeSettings(backend="recorded")`` answers the offline demo's examples and verifies nothing
    (``check.exit_code`` 4).
    """
    from repro.app import check_proof as check

    return asyncio.run(check(statement, proof, lean or LeanSettings(), judge))


def release(
    run_dir: str | Path,
    out_dir: str | Path,
    *,
    allow_unverified: bool = False,
    include_flagged: bool = False,
    license: str | None = None,
    attribution: str | None = None,
    overwrite: bool = False,
) -> ReleaseSummary:
    """Write a run's retained instances as a Hugging Face dataset directory (``repro release``)."""
    from repro.release.writer import write_release

    return write_release(
        run_dir,
        out_dir,
        allow_unverified=allow_unverified,
        include_flagged=include_flagged,
        license=license,
        attribution=attribution,
        overwrite=overwrite,
    )


def reverify(
    release_dir: str | Path, *, lean: LeanSettings | None = None, judge: JudgeSettings | None = None
) -> list[ReverifyResult]:
    """Re-check every released proof from the release's own files (``repro reverify``): the kernel judge
    ``judge`` names (default: the tool pinned per toolchain) judges each row again, then the screen."""
    from repro.release.reverify import reverify_release

    return asyncio.run(reverify_release(release_dir, lean or LeanSettings(), judge_settings=judge))


@dataclass(frozen=True)
class RunView:
    """A run directory, read-only: safe on a live run and on an archived, read-only copy."""

    run_dir: Path

    @property
    def config(self) -> RunConfig:
        """The resolved config the run was started (or last resumed) with."""
        return load_config(self.run_dir / "config.yaml")

    def status(self) -> dict[str, Any]:
        """What ``repro status --json`` prints: funnel, rates, pass@j, accounting, unfinished problems."""
        from repro.app import status

        return status(self.run_dir)

    def audit(
        self, *, stage: str | None = None, reason: str | None = None, limit: int | None = None
    ) -> list[dict[str, Any]]:
        """What ``repro audit --json`` prints: every rejected attempt with its evidence."""
        from repro.app import audit

        return audit(self.run_dir, stage=stage, reason=reason, limit=limit)

    def problems(self) -> list[SourceProblem]:
        return self._read(lambda store: store.problems())

    def candidates(self, status: CandidateStatus | str | None = None) -> list[Candidate]:
        chosen = CandidateStatus(status) if status is not None else None
        return self._read(lambda store: store.candidates(chosen))

    def attempts(
        self, *, candidate_id: str | None = None, stage: str | None = None, reason: str | None = None
    ) -> list[StageAttempt]:
        return self._read(lambda store: store.attempts(candidate_id=candidate_id, stage=stage, reason=reason))

    def _read(self, query: Any) -> Any:
        from repro.store import RunReader

        with RunReader(self.run_dir) as store:
            return query(store)

    def __iter__(self) -> Iterator[Candidate]:
        return iter(self.candidates())


def load_run(run_dir: str | Path) -> RunView:
    """A run directory to read from Python; :class:`repro.store.StoreError` if none is there."""
    from repro.store import RunReader

    RunReader(run_dir).close()  # refuses a directory that holds no run, now rather than at first use
    return RunView(Path(run_dir))
