"""One module per pipeline stage: pure logic over (record in) -> (record out), given backends."""

from repro.stages.align import check_alignment
from repro.stages.answer import (
    StatementAnswer,
    apply_answer,
    literal_text,
    proposed_answer,
    recover_answer,
    screener_disagrees,
    statement_answer,
)
from repro.stages.common import StageResult
from repro.stages.formalize import formalize, normalize_statement
from repro.stages.prove import ProofSample, prover_prompt, sample_proofs, verify_sample
from repro.stages.rewrite import rewrite_problem
from repro.stages.screen import screen_problem

__all__ = [
    "ProofSample",
    "StageResult",
    "StatementAnswer",
    "apply_answer",
    "check_alignment",
    "formalize",
    "literal_text",
    "normalize_statement",
    "proposed_answer",
    "prover_prompt",
    "recover_answer",
    "rewrite_problem",
    "sample_proofs",
    "screen_problem",
    "screener_disagrees",
    "statement_answer",
    "verify_sample",
]
