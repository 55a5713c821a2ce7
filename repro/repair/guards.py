"""Guards on a repair candidate, and the acceptance policy that compares it with the original.

The default is always to keep the original. A candidate replaces it only when it is clean,
re-diagnoses clean, passes the semantic-graph guard, has equation support for its answer, and the
change follows one of the explicit acceptance paths.
"""

from __future__ import annotations

import math
import re
from enum import StrEnum
from fractions import Fraction

from pydantic import BaseModel, Field

from repro.repair.answers import answer_values, answers_equivalent, extract_answer, to_number
from repro.repair.arithmetic import check_arithmetic, evaluate_expression
from repro.repair.diagnosis import Diagnosis, TriggerSettings, diagnose
from repro.repair.meta import MetaError
from repro.repair.quantities import problem_quantities
from repro.repair.semantic_graph import Risk, arithmetic_expressions, computed_numbers


class PolicyMode(StrEnum):
    """``strict``: only the rescue paths. ``strong`` (a strong initial reasoner, e.g. GSM8K): adds the
    relaxed-support path and the dropped-operand guard. ``weak`` (a weak initial reasoner, e.g. a 1.5B
    model on ASDiv): adds the clean-improvement and weak-reasoner relaxed paths. ``relaxed`` is the
    earlier name of ``weak``."""

    strict = "strict"
    strong = "strong"
    weak = "weak"
    relaxed = "relaxed"


class GuardSettings(BaseModel):
    graph_guard: bool = True
    equation_support: bool = True
    relaxed_support: bool = True
    dropped_operand_guard: bool = True
    relaxed_missing_constraint: bool = False
    graph_min_score: float = 0.60
    very_low_confidence: float = 0.40
    relaxed_min_score: float = 0.85
    clean_improvement_margin: float = 0.25
    rediagnosis_missing_constraint_score: float = 0.90
    weak_missing_constraint_score: float = 0.76
    rediagnosis_low_score: float = 0.65
    max_candidate_chars: int = 1500
    max_steps: int = 6


class AcceptancePath(StrEnum):
    high_risk_semantic_repair = "high_risk_semantic_repair"
    empty_generation_rescue = "empty_generation_rescue"
    very_low_confidence_rescue = "very_low_confidence_rescue"
    restricted_clean_semantic_improvement = "restricted_clean_semantic_improvement"
    relaxed_support = "relaxed_support"
    weak_reasoner_relaxed = "weak_reasoner_relaxed"
    relaxed_missing_constraint = "relaxed_missing_constraint"


class CandidateVerdict(BaseModel):
    answer: str | None
    failures: list[str] = Field(default_factory=list)
    path: AcceptancePath | None = None

    @property
    def accepted(self) -> bool:
        return not self.failures and self.path is not None


_META_TALK = re.compile(
    r"\b(previous|prior|original|earlier|above)\s+(reasoning|answer|solution|attempt|trace|response)\b|"
    r"\b(the|this|your)\s+(hint|prompt|instructions?|diagnostic)\b|\bas instructed\b|\bI was (told|asked)\b",
    re.IGNORECASE,
)
_FINAL_LINE = re.compile(r"^\s*final\s+answer\s*:", re.IGNORECASE | re.MULTILINE)
_LCM_GCD = re.compile(
    r"\b(lcm|gcd|gcf|hcf|least common multiple|lowest common multiple|greatest common (?:divisor|factor)|"
    r"highest common factor)\s*(?:\(|of\s+)?\s*((?:\d+\s*(?:,|and)?\s*)+?)\s*\)?\s*(?:is|=)\s*(\d+)",
    re.IGNORECASE,
)
_LINEAR = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*\*?\s*([a-zA-Z])\s*=\s*(\d+(?:\.\d+)?)(?![\d.]*\d)")


def cleanliness_failures(text: str, settings: GuardSettings) -> list[str]:
    failures = []
    if not text.strip():
        return ["clean:empty"]
    if len(_FINAL_LINE.findall(text)) != 1:
        failures.append("clean:final_answer_lines")
    if extract_answer(text) is None:
        failures.append("clean:unparseable")
    final_lines = [line for line in text.splitlines() if _FINAL_LINE.match(line)]
    if final_lines and len(answer_values(_FINAL_LINE.sub("", final_lines[-1]))) > 1:
        failures.append("clean:several_answers")  # the schema asks for one number-only final answer
    steps = [line for line in text.splitlines() if line.strip() and not _FINAL_LINE.match(line)]
    if len(text) > settings.max_candidate_chars or len(steps) > settings.max_steps:
        failures.append("clean:too_long")
    if _META_TALK.search(text):
        failures.append("clean:meta_talk")
    return failures


def equation_supported(problem: str, text: str, answer: str | None) -> bool:
    """The answer is the result of an explicit, correct derivation in the candidate (B.12): an
    arithmetic equation, labelled or not (``Total cost = 3 * 25 = 75``), a written computation whose
    value is the answer (``Number of trays = 276 / 12``), an LCM/GCD statement that checks, or a one-step
    linear solve (``18r = 90`` then ``r = 5``). A bare statement of a number (``Time saved = 64``) is not
    support: it may copy a given quantity."""
    target = to_number(answer)
    if answer is None or target is None:
        return False
    for statement in check_arithmetic(text):
        if statement.correct and answers_equivalent(statement.stated.replace("$", "").replace(",", ""), answer):
            return True
    if any(evaluate_expression(expression) == target for expression in arithmetic_expressions(text)):
        return True
    for match in _LCM_GCD.finditer(text):
        numbers = [int(n) for n in re.findall(r"\d+", match.group(2))]
        if len(numbers) >= 2:
            function = math.lcm if re.match(r"l", match.group(1), re.IGNORECASE) else math.gcd
            if function(*numbers) == int(match.group(3)) and answers_equivalent(match.group(3), answer):
                return True
    for match in _LINEAR.finditer(text):
        coefficient, variable, total = Fraction(match.group(1)), match.group(2), Fraction(match.group(3))
        if (
            coefficient
            and total / coefficient == target
            and re.search(rf"(?<![\w.]){re.escape(variable)}\s*=\s*\$?{re.escape(answer)}(?![\d.]*\d)", text)
        ):
            return True
    return False


def dropped_operands(original: Diagnosis, text: str) -> list[str]:
    """Given quantities the original computed with that the candidate never computes with (a prose
    mention does not count: the candidate must put the number into a computation)."""
    used = computed_numbers(text)
    return [value for value in original.computed_quantities if Fraction(value) not in used]


def copies_a_quantity(problem: str, answer: str | None) -> bool:
    value = to_number(answer)
    return value is not None and any(
        to_number(q.value) == value for q in problem_quantities(problem) if not q.from_word
    )


def _weak(mode: PolicyMode) -> bool:
    return mode in (PolicyMode.weak, PolicyMode.relaxed)


def judge_candidate(
    problem: str,
    original: Diagnosis,
    original_answer: str | None,
    text: str,
    *,
    mode: PolicyMode,
    settings: GuardSettings,
    trigger: TriggerSettings | None = None,
) -> CandidateVerdict:
    answer = extract_answer(text, problem) if text else None
    verdict = CandidateVerdict(answer=answer)
    verdict.failures += cleanliness_failures(text, settings)
    if verdict.failures:
        return verdict
    rediagnosis = diagnose(problem, text, settings=trigger)
    meta = rediagnosis.meta
    if meta.error_type in (MetaError.generation_failure, MetaError.arithmetic_error, MetaError.logical_contradiction):
        verdict.failures.append(f"rediagnosis:{meta.error_type.value}")
    elif meta.error_type == MetaError.missing_constraint and meta.score < settings.rediagnosis_missing_constraint_score:
        # a weak reasoner's candidate may leave out a distractor; so may a rescue of a failed generation
        # when the failed trace never computed with the left-out quantities either
        plain = (text.replace(",", "").strip("$%") for text in meta.coverage.missing)
        unused = {str(Fraction(value)) for value in plain if re.fullmatch(r"\d+(?:\.\d+)?", value)}
        rescue = original.meta.error_type == MetaError.generation_failure and not unused & set(
            original.computed_quantities
        )
        weak_tolerated = (
            (_weak(mode) or rescue)
            and meta.score >= settings.weak_missing_constraint_score
            and not rediagnosis.semantics.risks
        )
        if not weak_tolerated and not (
            settings.relaxed_missing_constraint and original.meta.error_type == MetaError.missing_constraint
        ):
            verdict.failures.append("rediagnosis:missing_constraint")  # e.g. "x + 1 = y" ignoring the problem
    elif meta.score < settings.rediagnosis_low_score:
        verdict.failures.append("rediagnosis:low_meta_score")
    if settings.graph_guard:
        semantics = rediagnosis.semantics
        if semantics.high_risk or "generation_failure" in semantics.risks:
            verdict.failures.append("graph:high_risk")
        elif semantics.score < settings.graph_min_score:
            verdict.failures.append("graph:low_score")
    supported = equation_supported(problem, text, answer)
    if settings.equation_support and not supported:
        verdict.failures.append("support:no_equation")
    if original_answer is not None and answers_equivalent(answer, original_answer):
        verdict.failures.append("policy:no_op")
    elif len(original.final_line_values) > 1 and any(
        answers_equivalent(answer, value) for value in original.final_line_values
    ):
        verdict.failures.append("policy:other_stated_part")  # picks another value the original already stated
    if (
        mode == PolicyMode.strong
        and settings.dropped_operand_guard
        and original.meta.error_type != MetaError.generation_failure
        and (dropped := dropped_operands(original, text))
    ):
        verdict.failures.append(f"guard:dropped_operand:{','.join(dropped)}")
    if verdict.failures:
        return verdict
    verdict.path = _acceptance_path(
        original,
        rediagnosis,
        mode=mode,
        settings=settings,
        supported=supported or not settings.equation_support,
        copied=copies_a_quantity(problem, answer) and not supported,
    )
    if verdict.path is None:
        verdict.failures.append("policy:no_path")
    return verdict


def original_is_doubtful(original: Diagnosis) -> bool:
    """Deterministic evidence against the cached trace beyond a low score: a detected error or a
    semantic risk. A low meta-consistency score alone describes the writing, not the answer, and a
    strong reasoner's correct trace must not be replaceable by any clean-looking candidate."""
    return original.meta.error_type not in (MetaError.none, MetaError.low_symbolic_coverage) or bool(
        original.semantics.risks
    )


def _acceptance_path(
    original: Diagnosis,
    candidate: Diagnosis,
    *,
    mode: PolicyMode,
    settings: GuardSettings,
    supported: bool,
    copied: bool,
) -> AcceptancePath | None:
    if original.meta.error_type == MetaError.generation_failure:
        return AcceptancePath.empty_generation_rescue
    if original.semantics.high_risk and not candidate.semantics.high_risk and supported:
        return AcceptancePath.high_risk_semantic_repair
    if original.meta.score < settings.very_low_confidence and supported and not copied:
        return AcceptancePath.very_low_confidence_rescue
    candidate_clean = candidate.meta.error_type in (MetaError.none, MetaError.low_symbolic_coverage)
    if mode == PolicyMode.strong:
        if (
            settings.relaxed_support
            and candidate_clean
            and candidate.meta.score >= settings.relaxed_min_score
            and not candidate.semantics.risks
            and supported
            and original_is_doubtful(original)
        ):
            return AcceptancePath.relaxed_support
        if (
            settings.relaxed_missing_constraint
            and original.meta.error_type == MetaError.missing_constraint
            and supported
            and not candidate.semantics.high_risk
        ):
            return AcceptancePath.relaxed_missing_constraint
        return None
    if not _weak(mode):
        return None
    clean = candidate.meta.error_type == MetaError.none and supported
    flawed = original.meta.error_type in (MetaError.arithmetic_error, MetaError.logical_contradiction)
    improved = candidate.semantics.score >= original.semantics.score + settings.clean_improvement_margin
    if clean and (improved or (flawed and candidate.semantics.score >= original.semantics.score)):
        return AcceptancePath.restricted_clean_semantic_improvement
    if (
        settings.relaxed_support
        and (candidate_clean or candidate.meta.error_type == MetaError.missing_constraint)
        and supported
        and not candidate.semantics.high_risk
        and Risk.answer_format_warning not in candidate.semantics.risks
        and candidate.meta.score >= settings.weak_missing_constraint_score
    ):
        return AcceptancePath.weak_reasoner_relaxed
    if (
        settings.relaxed_missing_constraint
        and original.meta.error_type == MetaError.missing_constraint
        and candidate.meta.coverage.ratio > original.meta.coverage.ratio
        and not copied
    ):
        return AcceptancePath.relaxed_missing_constraint
    return None
