"""Red team round 5: what it showed the gate let through or could not bound, each pinned.

R5-01 (``with_panel_widgets [W with e]`` evaluates the prover's term through ``evalWidgetInstance``),
R5-03 (``sleep`` holds a worker outside heartbeats), R5-07 (``?`` forms the search list forgot),
R5-02 (``instance(`` repeated made the instance scan quadratic), R5-06 (one refusal per repeated
fragment made a verdict 37 times the reply).
"""

from __future__ import annotations

import pytest

from repro.config import StaticLimits
from repro.judge import verify_proof
from repro.judge.policy import MAX_LISTED_REFUSALS, scan
from repro.records import ReasonCode
from tests._gate_helpers import HEADER, MAIN, THEOREM, refusals

STATEMENT = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry"
HELPER = "def spin (n : ℕ) : ℕ := (List.range n).foldl (· + ·) 0\n"


def with_tactic(line: str) -> str:
    return THEOREM.replace("  subst h₀\n", f"  subst h₀\n  {line}\n")


@pytest.mark.parametrize(
    ("code", "word"),
    [
        (HELPER + with_tactic("with_panel_widgets [CalcPanel with (spin 1000000)]\n    skip"), "with_panel_widgets"),
        (HELPER + with_tactic("with_panel_widgets [CalcPanel]\n    skip"), "with_panel_widgets"),
        ("show_panel_widgets [CalcPanel]\n" + THEOREM, "show_panel_widgets"),
        ("#widget CalcPanel\n" + THEOREM, "#widget"),
        (with_tactic("sleep 4294967295"), "sleep"),
    ],
)
def test_syntax_that_runs_code_or_holds_the_worker_is_refused(code: str, word: str) -> None:
    found = refusals(code)
    assert any(word in label for label in found), found


@pytest.mark.parametrize("form", ["continuity?", "gcongr?", "have? using h₀", "nlinarith?", "measurability?"])
def test_every_question_mark_form_of_a_keyword_is_a_search_tactic(form: str) -> None:
    result = scan(with_tactic(form), header=HEADER, main_name=MAIN)
    assert any("search tactic" in label for label in result.forbidden), result.forbidden
    assert result.uses_search_tactic  # reported as policy, not as a failed proof


def test_by_question_mark_is_a_search_form() -> None:
    found = refusals(THEOREM.replace(":= by\n", ":= by?\n"))
    assert any("search tactic by?" in label for label in found), found


@pytest.mark.parametrize("call", ["List.head? [1, 2]", "Nat.find? (fun n => n = 2) [1, 2]", "(List.head? [1]).isSome"])
def test_functions_whose_names_end_in_a_question_mark_pass(call: str) -> None:
    assert refusals(with_tactic(f"have _x := {call}")) == []


def test_a_prop_instance_still_passes_after_the_linear_instance_scan() -> None:
    code = "instance : Fact (Nat.Prime 7) := ⟨by norm_num⟩\n" + THEOREM
    assert refusals(code) == []


@pytest.mark.parametrize("fragment", ["instance(", "instance : Fact ("])
async def test_repeated_unclosed_instances_get_a_verdict_within_the_default_time_limit(fragment: str) -> None:
    """8,000 repetitions took 35 s (``instance(``) when each instance scanned the rest of the reply: past the
    30 s limit, so no verdict at all; the scan now ends at the next command keyword."""
    reply = f"```lean4\n{fragment * 8_000}\n```"
    verdict = await verify_proof(STATEMENT, reply, None, header=HEADER, limits=StaticLimits())
    assert ReasonCode.forbidden_construct in verdict.reasons, verdict.details[:3]
    assert ReasonCode.static_timeout not in verdict.reasons


async def test_a_reply_of_many_refusals_lists_a_bounded_number_and_counts_the_rest() -> None:
    reply = "```lean4\n" + THEOREM + "".join(f"  simp (a{i}:=b{i})\n" for i in range(400)) + "```"
    verdict = await verify_proof(STATEMENT, reply, None, header=HEADER)
    assert verdict.reasons == [ReasonCode.forbidden_construct]
    assert len(verdict.details) == MAX_LISTED_REFUSALS + 1, len(verdict.details)
    assert verdict.details[-1].startswith("and ") and "not listed" in verdict.details[-1]
    assert int(verdict.details[-1].split()[1]) >= 400 - MAX_LISTED_REFUSALS


# R5-05: a configuration dressed as a term's named argument, where a tactic may stand
@pytest.mark.parametrize(
    "line",
    [
        "map_tacs [simp_all_arith (maxSteps := spin 5)]",
        "simp (discharger := simp_all_arith (maxSteps := spin 5)) at h₀",
        "field_simp (disch := simp_all_arith (maxSteps := spin 5))",
        "linear_combination (norm := simp_all_arith (maxSteps := spin 5)) h₀",
    ],
)
def test_a_configuration_where_a_tactic_may_stand_keeps_the_literal_rule(line: str) -> None:
    found = refusals(HELPER + with_tactic(line))
    assert any("configuration (maxSteps := ...)" in label for label in found), found


def test_a_configuration_after_decreasing_by_keeps_the_literal_rule() -> None:
    code = (
        HELPER
        + "def g (n : ℕ) : ℕ := dite (n = 0) (fun _ => 0) (fun _ => g (n - 1))"
        + " decreasing_by simp_all_arith (maxSteps := spin 5)\n"
        + THEOREM
    )
    assert any("configuration (maxSteps := ...)" in label for label in refusals(code))


@pytest.mark.parametrize(
    "line",
    [
        "have h₁ := mul_le_mul (a := 1) le_rfl le_rfl (by norm_num) (by norm_num)",
        "rw [mul_comm (a := x)]",
        "nth_rw 1 [mul_comm (a := x)]",
        "simp only [mul_comm (a := x)]",
        "exact le_of_eq (a := x) rfl",
    ],
)
def test_a_named_argument_in_term_position_may_hold_any_term(line: str) -> None:
    assert refusals(with_tactic(line)) == []


def test_an_instance_without_a_type_is_refused_even_when_its_value_has_a_prop_class_after_a_colon() -> None:
    """Lean's ``instance`` needs ``: type`` (``declSig``); the type search stops at ``:=`` at depth 0, so a
    ``have h : Fact ...`` in the value is never read as the instance's type."""
    code = "instance foo := have h : Fact (Nat.Prime 7) := ⟨by norm_num⟩\n  h\n" + THEOREM
    assert any("instance of nothing" in label for label in refusals(code)), refusals(code)


# red team round 6: a bare ``rcases`` (zero targets allowed) ends its tactic, so the next line is a tactic
@pytest.mark.parametrize(
    "lines",
    [
        "rcases\n  simp_all_arith (maxSteps := spin 5)",
        "rcases -- nothing to split\n  simp_all_arith (maxSteps := spin 5)",
        "exact\n  simp_all_arith (maxSteps := spin 5)",
    ],
)
def test_a_configuration_on_the_line_after_a_term_word_keeps_the_literal_rule(lines: str) -> None:
    found = refusals(HELPER + with_tactic(lines))
    assert any("configuration (maxSteps := ...)" in label for label in found), found


async def test_a_refusal_of_a_new_kind_is_listed_past_the_limit() -> None:
    """Sixty refused ``native_decide`` lines (policy) must not hide the ``sorry`` after them."""
    lines = "".join(f"  try native_decide -- {i}\n" for i in range(60))
    reply = "```lean4\n" + THEOREM.replace("  norm_num\n", lines + "  all_goals sorry\n") + "```"
    verdict = await verify_proof(STATEMENT, reply, None, header=HEADER)
    assert any("sorry" in detail for detail in verdict.details), verdict.details[-3:]
    assert verdict.details[-1].startswith("and ")
