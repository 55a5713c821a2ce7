"""Failure taxonomy: facts about a rejected proof, several of which can hold at once."""

from __future__ import annotations

import re
from collections import Counter
from enum import StrEnum

from repro.lean.protocol import InfraStatus, LeanResult
from repro.lean.text import LeanCode, ProverOutput, lean_code, read_output
from repro.records import ReasonCode


class TaxonomyFact(StrEnum):
    boundary_corruption = "boundary_corruption"
    natural_language_intrusion = "natural_language_intrusion"
    repetitive_tactics = "repetitive_tactics"
    target_corruption = "target_corruption"
    truncation = "truncation"
    compile_error = "compile_error"
    timeout = "timeout"
    sorry = "sorry"
    axiom_violation = "axiom_violation"
    forbidden_construct = "forbidden_construct"


# What each failure-taxonomy tag (RePro App. J) says about a rejected sample, for `repro reasons` (n6)
FACT_DESCRIPTIONS: dict[TaxonomyFact, str] = {
    TaxonomyFact.boundary_corruption: "the output holds a model's special-token string (<|im_end|>, <｜Assistant｜>)",
    TaxonomyFact.natural_language_intrusion: "prose lines stand where Lean tactics should be",
    TaxonomyFact.repetitive_tactics: "the same tactic repeated many times (a prover stuck in a loop)",
    TaxonomyFact.target_corruption: "the prover's theorem states another target than our statement",
    TaxonomyFact.truncation: "the output stopped at the token limit, or mid-construct",
    TaxonomyFact.compile_error: "Lean reported an error for the code",
    TaxonomyFact.timeout: "the Lean check ran out of time",
    TaxonomyFact.sorry: "the proof leaves a sorry",
    TaxonomyFact.axiom_violation: "the proof depends on an axiom beyond propext, Classical.choice, Quot.sound",
    TaxonomyFact.forbidden_construct: "the code uses a construct the screen refuses",
}

_PAIRS = {"(": ")", "[": "]", "{": "}", "⟨": "⟩"}
# A capitalised word, three lowercase words, then no code characters. Possessive quantifiers and
# exactly three words (more are absorbed by the tail, which allows them) leave the engine nothing to
# backtrack over: a long line of words costs linear time (``{3,}`` with a greedy tail was quadratic).
_PROSE_LINE = re.compile(r"^\s*+[A-Z][a-z]++(?:\s++[a-z][a-z',]*+){3}[^:=\[\]()←→⊢_<>]*+[.:!?]?\s*$")


def _unbalanced(code: str) -> bool:
    stack: list[str] = []
    for char in code:
        if char in _PAIRS:
            stack.append(_PAIRS[char])
        elif char in _PAIRS.values() and (not stack or stack.pop() != char):
            return True
    return bool(stack)


def is_truncated(code: str | LeanCode, finish_reason: str = "stop") -> bool:
    if finish_reason == "length":
        return True
    clean = lean_code(code).without_comments.rstrip()
    return clean.endswith(("<;", "<;>", "·", "by", ":=", ",", "<|")) or _unbalanced(clean)


def repeated_tactic(code: str | LeanCode, threshold: int) -> str | None:
    lines = [line.strip() for line in lean_code(code).without_comments.splitlines() if line.strip()]
    if not lines:
        return None
    line, count = Counter(lines).most_common(1)[0]
    return line if count >= threshold else None


def natural_language_intrusion(code: str | LeanCode) -> bool:
    """Comment-heavy or prose-bearing output whose tactic part is thin."""
    source = lean_code(code)
    stripped = source.comment_free
    total = len(source.text.strip()) or 1
    comment_share = 1 - len(stripped.strip()) / total
    tactic_lines = [line for line in stripped.splitlines() if line.strip()]
    prose = any(_PROSE_LINE.match(line) for line in tactic_lines)
    return prose or (comment_share > 0.6 and len(tactic_lines) <= 3)


def taxonomy_facts(
    *,
    output: ProverOutput | str,
    verdict_reasons: list[ReasonCode],
    lean: LeanResult | None,
    finish_reason: str,
    repeat_threshold: int,
    statement_matches: bool | None,
) -> list[TaxonomyFact]:
    """Facts about one reply, read from the same :class:`ProverOutput` the gate judged."""
    reply = output if isinstance(output, ProverOutput) else read_output(output, finish_reason)
    code = reply.code
    facts: list[TaxonomyFact] = []
    if reply.special_tokens:
        facts.append(TaxonomyFact.boundary_corruption)
    if code.text and natural_language_intrusion(code):
        facts.append(TaxonomyFact.natural_language_intrusion)
    if code.text and repeated_tactic(code, repeat_threshold):
        facts.append(TaxonomyFact.repetitive_tactics)
    if statement_matches is False or (ReasonCode.statement_mismatch in verdict_reasons and statement_matches is None):
        facts.append(TaxonomyFact.target_corruption)
    if not code.text or is_truncated(code, finish_reason):
        facts.append(TaxonomyFact.truncation)
    mapping = {
        ReasonCode.lean_error: TaxonomyFact.compile_error,
        ReasonCode.lean_timeout: TaxonomyFact.timeout,
        ReasonCode.sorry: TaxonomyFact.sorry,
        ReasonCode.axiom_violation: TaxonomyFact.axiom_violation,
        ReasonCode.forbidden_construct: TaxonomyFact.forbidden_construct,
    }
    for reason, fact in mapping.items():
        if reason in verdict_reasons and fact not in facts:
            facts.append(fact)
    if lean is not None and lean.infra_status == InfraStatus.timeout and TaxonomyFact.timeout not in facts:
        facts.append(TaxonomyFact.timeout)
    return facts
