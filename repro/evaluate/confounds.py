"""Per-instance confound metrics of App. I of the RePro paper, defined once here and in docs/evaluate.md.

Tokens are regex tokens (runs of word characters, or single other non-space characters); numeric
literals are digit runs with optional thousands separators and decimals; logs are natural.
"""

from __future__ import annotations

import difflib
import math
import re

from pydantic import BaseModel

from repro.records import ReleasedInstance

_TOKEN = re.compile(r"\w+|[^\w\s]")
_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+")


class Solutions(BaseModel):
    """Natural-language solutions of an instance, which a release does not carry; given by file."""

    original: str
    rewritten: str


DEFINITIONS: dict[str, str] = {
    "problem_length_change": "log((L_rew + 1) / (L_ori + 1)), L = token count of the question",
    "abs_problem_length_change": "|problem_length_change|",
    "surface_form_distance": (
        "1 - difflib.SequenceMatcher(autojunk=False) ratio of the lowercased, whitespace-collapsed questions"
    ),
    "numeric_range_change": "log(1 + A_rew) - log(1 + A_ori), A = largest absolute numeric literal (0 if none)",
    "abs_numeric_range_change": "|numeric_range_change|",
    "numeric_count_change": "N_rew - N_ori, N = number of numeric literals in the question",
    "abs_numeric_count_change": "|numeric_count_change|",
    "lean_proof_length": "log(1 + token count of the verified proof: verified_code after its first ':= by')",
    "solution_length_change": "log((S_rew + 1) / (S_ori + 1)), S = token count of the solution (--solutions)",
    "abs_solution_length_change": "|solution_length_change| (--solutions)",
    "rewritten_solution_length": "log(1 + S_rew) (--solutions)",
}

SOLUTION_METRICS = ("solution_length_change", "abs_solution_length_change", "rewritten_solution_length")


def token_count(text: str) -> int:
    return len(_TOKEN.findall(text))


def numeric_literals(text: str) -> list[float]:
    return [float(match.replace(",", "")) for match in _NUMBER.findall(text)]


def _surface(text: str) -> str:
    return re.sub(r"\s+", " ", text.lower()).strip()


def proof_body(verified_code: str) -> str:
    marker = verified_code.find(":= by")
    return verified_code[marker + len(":= by") :] if marker >= 0 else verified_code


def confound_metrics(instance: ReleasedInstance, solutions: Solutions | None = None) -> dict[str, float]:
    original, rewritten = instance.original_question, instance.rewritten_question
    length_change = math.log((token_count(rewritten) + 1) / (token_count(original) + 1))
    numbers_original, numbers_rewritten = numeric_literals(original), numeric_literals(rewritten)
    range_original = max(numbers_original, default=0.0)
    range_rewritten = max(numbers_rewritten, default=0.0)
    range_change = math.log1p(range_rewritten) - math.log1p(range_original)
    count_change = float(len(numbers_rewritten) - len(numbers_original))
    metrics = {
        "problem_length_change": length_change,
        "abs_problem_length_change": abs(length_change),
        "surface_form_distance": 1.0
        - difflib.SequenceMatcher(None, _surface(original), _surface(rewritten), autojunk=False).ratio(),
        "numeric_range_change": range_change,
        "abs_numeric_range_change": abs(range_change),
        "numeric_count_change": count_change,
        "abs_numeric_count_change": abs(count_change),
        "lean_proof_length": math.log1p(token_count(proof_body(instance.verified_code))),
    }
    if solutions is not None:
        solution_change = math.log((token_count(solutions.rewritten) + 1) / (token_count(solutions.original) + 1))
        metrics["solution_length_change"] = solution_change
        metrics["abs_solution_length_change"] = abs(solution_change)
        metrics["rewritten_solution_length"] = math.log1p(token_count(solutions.rewritten))
    return metrics
