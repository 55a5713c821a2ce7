"""repro: contamination-resistant math benchmarks backed by Lean-checked proofs, and guarded repair.

The front door for Python: the entry points the CLI calls (:func:`run`, :func:`check_proof`,
:func:`release`, :func:`reverify`, :func:`load_run`), the records they return, and the one error
base. Names load on first use, so ``import repro`` (and every ``repro`` command) stays fast.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from repro.api import RunView, check_proof, demo_config, load_run, reverify, run
    from repro.app import RunOutcome
    from repro.config import JudgeSettings, LeanSettings, ModelSettings, RunConfig
    from repro.exit_codes import ExitCode, ReproError
    from repro.judge.proof import ProofCheck
    from repro.judge.verdict import Verdict
    from repro.records import (
        AttemptStatus,
        Candidate,
        CandidateStatus,
        Provenance,
        ReasonCode,
        ReleasedInstance,
        SourceProblem,
        Stage,
        StageAttempt,
    )
    from repro.release import ReleaseSummary, ReverifyResult

_EXPORTS = {
    "run": "repro.api",
    "check_proof": "repro.api",
    "release": "repro.release",  # the package, callable as repro.api.release (see repro/release/__init__.py)
    "reverify": "repro.api",
    "load_run": "repro.api",
    "demo_config": "repro.api",
    "RunView": "repro.api",
    "RunOutcome": "repro.app",
    "RunConfig": "repro.config",
    "LeanSettings": "repro.config",
    "JudgeSettings": "repro.config",
    "ModelSettings": "repro.config",
    "ReproError": "repro.exit_codes",
    "ExitCode": "repro.exit_codes",
    "Verdict": "repro.judge.verdict",
    "ProofCheck": "repro.judge.proof",
    "SourceProblem": "repro.records",
    "Candidate": "repro.records",
    "CandidateStatus": "repro.records",
    "StageAttempt": "repro.records",
    "AttemptStatus": "repro.records",
    "Stage": "repro.records",
    "ReasonCode": "repro.records",
    "ReleasedInstance": "repro.records",
    "Provenance": "repro.records",
    "ReleaseSummary": "repro.release",
    "ReverifyResult": "repro.release",
}

__all__ = [
    "__version__",
    "run",
    "check_proof",
    "release",
    "reverify",
    "load_run",
    "demo_config",
    "RunView",
    "RunOutcome",
    "RunConfig",
    "LeanSettings",
    "ModelSettings",
    "ReproError",
    "ExitCode",
    "Verdict",
    "ProofCheck",
    "JudgeSettings",
    "SourceProblem",
    "Candidate",
    "CandidateStatus",
    "StageAttempt",
    "AttemptStatus",
    "Stage",
    "ReasonCode",
    "ReleasedInstance",
    "Provenance",
    "ReleaseSummary",
    "ReverifyResult",
]  # the names of _EXPORTS, spelled out for readers and linters


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'repro' has no attribute {name!r}")
    value = import_module(module) if module == f"repro.{name}" else getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
