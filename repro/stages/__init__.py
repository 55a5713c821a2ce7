"""One module per pipeline stage: pure logic over (record in) -> (record out), given backends."""

from repro.stages.align import check_alignment
from repro.stages.answer import deterministic_answer, grounded, literal_text, recover_answer, screener_disagrees
from repro.stages.common import StageResult
from repro.stages.formalize import formalize, normalize_statement
from repro.stages.prove import ProofSample, prover_prompt, sample_proofs, verify_sample
from repro.stages.rewrite import rewrite_problem
from repro.stages.screen import screen_problem

__all__ = [
    "ProofSample",
    "StageResult",
    "check_alignment",
    "deterministic_answer",
    "formalize",
    "grounded",
    "literal_text",
    "normalize_statement",
    "prover_prompt",
    "recover_answer",
    "rewrite_problem",
    "sample_proofs",
    "screen_problem",
    "screener_disagrees",
    "verify_sample",
]
