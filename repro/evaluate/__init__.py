"""Evaluate models on a released benchmark: original vs rewritten questions, paired statistics,
and the confound analysis of the RePro paper (App. I)."""

from repro.evaluate.confounds import DEFINITIONS as CONFOUND_DEFINITIONS
from repro.evaluate.confounds import Solutions, confound_metrics
from repro.evaluate.grading import Grade, compare_answers, grade_response, last_boxed
from repro.evaluate.models import parse_model_argument
from repro.evaluate.records import (
    ConfoundRow,
    EvalAnswer,
    EvalModel,
    EvalReport,
    GroupStatistics,
    Interval,
    ModelReport,
    Variant,
)
from repro.evaluate.report import ReportInputError, build_report, read_solutions, report_tables, write_report_tables
from repro.evaluate.runner import (
    EvaluationError,
    EvaluationPlan,
    EvaluationSummary,
    build_request,
    run_evaluation,
)
from repro.evaluate.statistics import mcnemar_exact, paired_drop_interval, wilson_interval
from repro.evaluate.store import EvalStore, EvalStoreError

__all__ = [
    "CONFOUND_DEFINITIONS",
    "ConfoundRow",
    "EvalAnswer",
    "EvalModel",
    "EvalReport",
    "EvalStore",
    "EvalStoreError",
    "EvaluationError",
    "EvaluationPlan",
    "EvaluationSummary",
    "Grade",
    "GroupStatistics",
    "Interval",
    "ModelReport",
    "ReportInputError",
    "Solutions",
    "Variant",
    "build_report",
    "build_request",
    "compare_answers",
    "confound_metrics",
    "grade_response",
    "last_boxed",
    "mcnemar_exact",
    "paired_drop_interval",
    "parse_model_argument",
    "read_solutions",
    "report_tables",
    "run_evaluation",
    "wilson_interval",
    "write_report_tables",
]
