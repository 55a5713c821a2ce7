"""Prover-swap coverage studies: re-prove a run's statements with other provers and compare them."""

from repro.study.app import StudyError, feedback_rounds_refusal, open_study, prove_study, run_study, study_size
from repro.study.estimators import (
    FIRST_SUCCESS,
    UNBIASED,
    best_budget_split,
    bootstrap_interval,
    failure_probability,
    first_success_pass_at,
    pass_at,
)
from repro.study.lean_cache import StoredLeanResults
from repro.study.provers import ProverSpecError, parse_prover_spec
from repro.study.records import ProverEntry, SampleOutcome, StudySettings, StudyStatement
from repro.study.report import StudyReport, build_report, study_report
from repro.study.reprove import ReproveSummary, reprove_with_study, reusable, study_proofs
from repro.study.runner import StudyRunner, StudySummary, lean_error_classes
from repro.study.statements import (
    StatementSetError,
    export_statements,
    read_statements,
    statements_from_run,
    write_statements,
)
from repro.study.store import StudyStore, StudyStoreError

__all__ = [
    "FIRST_SUCCESS",
    "UNBIASED",
    "ProverEntry",
    "ProverSpecError",
    "ReproveSummary",
    "SampleOutcome",
    "StatementSetError",
    "StoredLeanResults",
    "StudyError",
    "StudyReport",
    "StudyRunner",
    "StudySettings",
    "StudyStatement",
    "StudyStore",
    "StudyStoreError",
    "StudySummary",
    "best_budget_split",
    "bootstrap_interval",
    "build_report",
    "export_statements",
    "failure_probability",
    "feedback_rounds_refusal",
    "first_success_pass_at",
    "lean_error_classes",
    "open_study",
    "parse_prover_spec",
    "pass_at",
    "prove_study",
    "read_statements",
    "reprove_with_study",
    "reusable",
    "run_study",
    "statements_from_run",
    "study_report",
    "study_proofs",
    "study_size",
    "write_statements",
]
