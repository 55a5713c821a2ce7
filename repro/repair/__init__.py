"""Guarded repair of cached reasoning traces: replace an answer only when it is safer to."""

from repro.repair.ablations import AblationDataset, AblationRow, run_ablations, stress_candidates
from repro.repair.answers import answer_values, answers_equivalent, extract_answer, normalize_answer, to_number
from repro.repair.arithmetic import ArithmeticStatement, check_arithmetic
from repro.repair.candidates import AttemptStyle, RepairAnswer, generate_candidate, render_candidate
from repro.repair.diagnosis import Diagnosis, TriggerSettings, diagnose
from repro.repair.guards import AcceptancePath, CandidateVerdict, GuardSettings, PolicyMode, judge_candidate
from repro.repair.meta import MetaDiagnosis, MetaError, diagnose_meta
from repro.repair.quantities import Coverage, constraint_coverage
from repro.repair.report import CandidateOutcome, ExampleResult, build_report
from repro.repair.runner import (
    Baseline,
    RepairInputError,
    RepairSettings,
    TraceRecord,
    read_candidates_file,
    read_traces,
    run_repair,
    write_outputs,
)
from repro.repair.semantic_graph import HIGH_RISK, Risk, SemanticReport, analyze_semantics
from repro.repair.stress import supported_wrong_candidates

__all__ = [
    "AblationDataset",
    "AblationRow",
    "run_ablations",
    "stress_candidates",
    "supported_wrong_candidates",
    "HIGH_RISK",
    "AcceptancePath",
    "ArithmeticStatement",
    "AttemptStyle",
    "Baseline",
    "CandidateOutcome",
    "CandidateVerdict",
    "Coverage",
    "Diagnosis",
    "ExampleResult",
    "GuardSettings",
    "MetaDiagnosis",
    "MetaError",
    "PolicyMode",
    "RepairAnswer",
    "RepairInputError",
    "RepairSettings",
    "Risk",
    "SemanticReport",
    "TraceRecord",
    "TriggerSettings",
    "analyze_semantics",
    "answer_values",
    "answers_equivalent",
    "build_report",
    "check_arithmetic",
    "constraint_coverage",
    "diagnose",
    "diagnose_meta",
    "extract_answer",
    "generate_candidate",
    "judge_candidate",
    "normalize_answer",
    "read_candidates_file",
    "read_traces",
    "render_candidate",
    "run_repair",
    "to_number",
    "write_outputs",
]
