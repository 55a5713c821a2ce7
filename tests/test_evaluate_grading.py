from __future__ import annotations

import pytest

from repro.evaluate import grade_response, last_boxed
from repro.evaluate.confounds import numeric_literals, proof_body, token_count
from repro.evaluate.grading import (
    METHOD_MATH_VERIFY,
    METHOD_NO_ANSWER,
    METHOD_STRING_FALLBACK,
    normalize_answer,
)


@pytest.mark.parametrize(
    ("boxed", "reference"),
    [
        (r"\frac{3}{4}", "0.75"),
        ("0.75", r"\frac{3}{4}"),
        ("1,000", "1000"),
        ("1000", "1,000"),
        ("[1,3)", "[1,3)"),
        (r"\{3,2,1\}", r"\{1,2,3\}"),
        (r"\sqrt{2}/2", r"1/\sqrt{2}"),
        (r"\frac{\sqrt{2}}{2}", r"\frac{1}{\sqrt{2}}"),
        (r"5 \text{ cm}", "5"),
        ("12", "12 apples"),
        (r"\$5", "5"),
        ("x=5", "5"),
    ],
)
def test_equivalent_answers_are_correct(boxed: str, reference: str) -> None:
    grade = grade_response(f"Working... so the answer is $\\boxed{{{boxed}}}$.", reference)
    assert grade.correct, (boxed, reference, grade)
    assert grade.method == METHOD_MATH_VERIFY and grade.extracted == boxed


@pytest.mark.parametrize(
    ("boxed", "reference"),
    [
        ("(1,3]", "[1,3)"),  # same endpoints, other interval
        ("[1,3]", "[1,3)"),
        (r"\{1,2\}", r"\{1,2,3\}"),
        (r"\sqrt{2}", r"1/\sqrt{2}"),
        ("0.76", r"\frac{3}{4}"),
        ("100", "1,000"),
        ("13", "12 apples"),
    ],
)
def test_different_answers_are_wrong(boxed: str, reference: str) -> None:
    assert not grade_response(f"\\boxed{{{boxed}}}", reference).correct, (boxed, reference)


def test_only_the_last_boxed_answer_counts() -> None:
    assert grade_response(r"first \boxed{7}, on reflection \boxed{8}", "8").correct
    assert not grade_response(r"\boxed{8} hmm, no: \boxed{7}", "8").correct
    assert last_boxed(r"\boxed{\frac{1}{\sqrt{2}}} end") == r"\frac{1}{\sqrt{2}}"
    assert last_boxed(r"so \boxed 7.") == "7"


def test_no_boxed_answer_is_wrong_and_says_why() -> None:
    grade = grade_response("The answer is 5.", "5")
    assert (grade.correct, grade.method, grade.extracted) == (False, METHOD_NO_ANSWER, None)
    unclosed = grade_response(r"\boxed{\frac{3}{4}", "0.75")
    assert (unclosed.correct, unclosed.method) == (False, METHOD_NO_ANSWER)


def test_what_math_verify_cannot_parse_falls_back_to_a_recorded_string_comparison() -> None:
    same = grade_response(r"\boxed{'}", "'")
    assert (same.correct, same.method) == (True, METHOD_STRING_FALLBACK)
    other = grade_response(r"\boxed{'}", '"')
    assert (other.correct, other.method) == (False, METHOD_STRING_FALLBACK)
    assert normalize_answer(r"$\text{1,000 } \left( x \right).$") == "1000(x)"


def test_an_oversized_answer_is_not_parsed_and_is_wrong() -> None:
    grade = grade_response("\\boxed{" + "1+" * 5000 + "1}", "5001")
    assert not grade.correct and grade.method == METHOD_STRING_FALLBACK


def test_confound_primitives() -> None:
    assert token_count("Add 3 and 4.") == 5
    assert numeric_literals("From 1,000 to 2.5 and .5, not x2") == [1000.0, 2.5, 0.5, 2.0]
    assert proof_body("theorem t : 1 = 1 := by\n  rfl") == "\n  rfl"


def test_fractional_scores_get_a_bootstrap_interval_and_degenerate_cases_are_explicit() -> None:
    import numpy as np

    from repro.evaluate import mcnemar_exact
    from repro.evaluate.statistics import accuracy_interval, spearman

    scores = np.array([1 / 3, 2 / 3, 1.0, 0.0, 1 / 3, 1.0, 2 / 3, 2 / 3, 0.0, 1.0] * 3)
    interval = accuracy_interval(scores, confidence=0.95, resamples=10_000, seed=0)
    means = scores[np.random.default_rng(7).integers(0, scores.size, size=(40_000, scores.size))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    assert interval.low == pytest.approx(low, abs=0.02) and interval.high == pytest.approx(high, abs=0.02)
    assert mcnemar_exact(0, 0) == 1.0 and mcnemar_exact(3, 3) == 1.0
    assert mcnemar_exact(5, 0) == pytest.approx(2 / 32)
    assert spearman([1.0, 1.0, 1.0], [0.0, 1.0, 0.5]) == (None, None, "the metric is constant over the instances")
    assert spearman([1.0, 2.0], [0.0, 1.0])[2] == "fewer than 3 instances"
