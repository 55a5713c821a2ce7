"""Our trusted Lean checks of a statement: vacuity, satisfiability, refutation, witnesses (issue 21 §1-2,
issue 19 §4), against the fake REPL's per-tactic evaluator, in the pipeline, and the answer stage."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from repro.app import run
from repro.config import build_config
from repro.lean.repl_pool import ReplPoolVerifier
from repro.lean.statement_checks import (
    CheckOutcome,
    check_statement,
    check_witness,
    is_numeric_literal,
    pinned_values,
    refute_statement,
    restated_hypothesis,
)
from repro.lean.text.statement import read_statement
from repro.records import CandidateStatus, ReasonCode, Stage
from repro.store import RunStore
from tests.doubles.fake_backend import fake_repl_verifier
from tests.doubles.fake_semantics import parse_proposition, proves
from tests.pipeline_world import world_config, write_problems

HEADER = "import Mathlib"
CONTRADICTORY = "theorem t (x : ℕ) (h₀ : x = 3600) (h₁ : x / 12 = 299) : x = 7 := by sorry"
WORD_PROBLEM = "theorem t (x y : ℕ) (h₀ : x = 3600) (h₁ : y = x / 12) : let z := y * 2\n  z = 600 := by sorry"
FALSE_ANSWER = "theorem t (x y : ℕ) (h₀ : x = 3600) (h₁ : y = x / 12) : let z := y * 2\n  z = 601 := by sorry"


@pytest.fixture(scope="module")
def verifier() -> Iterator[ReplPoolVerifier]:
    pool = fake_repl_verifier(workers=1)
    yield pool
    asyncio.run(pool.close())


def _check(statement: str, verifier: ReplPoolVerifier) -> Any:
    return asyncio.run(check_statement(statement, verifier, header=HEADER))


def _refute(statement: str, verifier: ReplPoolVerifier) -> Any:
    return asyncio.run(refute_statement(statement, verifier, header=HEADER))


# -- the commands, without Lean ------------------------------------------------------------------------


def test_a_conclusion_that_restates_a_hypothesis_is_vacuous_but_a_shadowing_binder_is_not() -> None:
    restated = read_statement("theorem t (x : ℕ) (h₀ : x = 3600) (h₁ : x / 12 = 299) : x / 12 = 299 := by sorry")
    assert restated_hypothesis(restated) == "h₁"
    # the conclusion's x is a new variable: equal text, another proposition (and a false statement)
    shadowed = read_statement("theorem t (x : ℕ) (h : x = 5) : ∀ x : ℕ, x = 5 := by sorry")
    assert restated_hypothesis(shadowed) is None
    computed = read_statement("theorem t (total : ℕ) (h : total = 3 * 4) : total = 12 := by sorry")
    assert restated_hypothesis(computed) is None  # `assumption` would close it by defeq; it is honest


def test_values_are_proposed_only_where_every_variable_is_pinned_and_the_conclusion_has_no_premises() -> None:
    arguments, values = pinned_values(read_statement(WORD_PROBLEM)) or ([], {})
    assert [kind for kind, _ in arguments] == ["variable", "variable", "hypothesis", "hypothesis"]
    assert values == {"x": "3600", "y": "(3600) / 12"}
    assert pinned_values(read_statement("theorem t (x y : ℕ) (h : x + y = 3) : x = 1 := by sorry")) is None
    # premises in the conclusion would not be covered by applying the signature's arguments
    assert pinned_values(read_statement("theorem t (x : ℕ) (h : x = 3) : x = 4 → x = 5 := by sorry")) is None
    # ↔ binds looser than →: the conclusion's grouping is not read from the arrows
    assert pinned_values(read_statement("theorem t (x : ℕ) (h : x = 3) : x = 3 ↔ x = 4 → x = 5 := by sorry")) is None
    assert pinned_values(read_statement("theorem t {x : ℕ} (h : x = 3) : x = 3 := by sorry")) is None
    # parentheses do not hide a premise: `(A → B)` elaborates to the same pi type
    assert pinned_values(read_statement("theorem t (x : ℕ) (h : x = 3) : (x = 4 → x = 5) := by sorry")) is None


@pytest.mark.parametrize("text", ["42", "(3 : ℚ) / 4", "-7", "2.5"])
def test_numeric_witnesses_are_accepted(text: str) -> None:
    assert is_numeric_literal(text)


@pytest.mark.parametrize("text", ["0⟩, by sorry⟩ --", "x", "by decide", "(1)) (sorry", "1\n#exit", "Classical.choice"])
def test_a_witness_that_is_not_a_numeral_never_reaches_lean(text: str, verifier: ReplPoolVerifier) -> None:
    assert not is_numeric_literal(text)
    with pytest.raises(ValueError, match="numeric literals"):
        asyncio.run(check_witness("theorem t : ∃ n : ℕ, n = 1 := by sorry", [text], verifier, header=HEADER))


# -- the fake's tactic semantics ---------------------------------------------------------------------


def test_the_fake_decides_as_each_tactic_would() -> None:
    rational = {"x": 2}
    half = [parse_proposition("2 * x = 1"), parse_proposition("x > 1")]
    assert proves("linarith", None, half, rational, {})
    assert not proves("omega", None, half, rational, {}), "omega ignores facts over ℚ"
    natural = {"n": 0}
    bounds = [parse_proposition("n < 3"), parse_proposition("n > 5")]
    assert proves("omega", None, bounds, natural, {}) and proves("linarith", None, bounds, natural, {})
    assert not proves("norm_num at *", None, bounds, natural, {}), "norm_num does not combine hypotheses"
    parity = [parse_proposition("2 * n = 7")]
    assert proves("omega", None, parity, natural, {}), "omega knows n is an integer"
    assert not proves("linarith", None, parity, natural, {}), "linarith works in the rational relaxation"
    assert not proves("decide", None, bounds, natural, {}), "decide ignores hypotheses"
    closed = parse_proposition("¬ (3600 / 12 = 301)")
    assert proves("decide", closed, [], {}, {}) and proves("norm_num", closed, [], {}, {})
    assert not proves("linarith", closed, [], {}, {}), "linarith proves no ≠ goal"
    truncated = parse_proposition("(3 : ℕ) - 5 = 0")
    assert proves("decide", truncated, [], {}, {}), "ℕ subtraction truncates"


# -- the checks through the fake REPL ---------------------------------------------------------------


def test_contradictory_hypotheses_are_vacuous_with_the_derivation_kept(verifier: ReplPoolVerifier) -> None:
    facts = _check(CONTRADICTORY, verifier)
    assert facts.status == "vacuous" and facts.real_lean is False
    assert "exfalso" in (facts.derivation or "") and "simp_all" in (facts.derivation or "")
    assert {c.tactic: c.outcome for c in facts.checks}["omega"] == CheckOutcome.failed  # modelled: x / 12 atom


def test_only_linarith_derives_false_over_the_rationals(verifier: ReplPoolVerifier) -> None:
    facts = _check("theorem t (x : ℚ) (h₀ : 2 * x = 1) (h₁ : x > 1) : x = 7 := by sorry", verifier)
    outcomes = {c.tactic: c.outcome for c in facts.checks if c.kind == "vacuity"}
    assert facts.status == "vacuous" and outcomes["linarith"] == CheckOutcome.proved
    assert outcomes["omega"] == CheckOutcome.failed


def test_a_pinned_word_problem_is_shown_satisfiable(verifier: ReplPoolVerifier) -> None:
    facts = _check(WORD_PROBLEM, verifier)
    assert facts.status == "satisfiable" and facts.witness == {"x": "3600", "y": "(3600) / 12"}
    assert all(c.outcome == CheckOutcome.failed for c in facts.checks if c.kind == "vacuity")


def test_a_let_chain_without_hypotheses_is_satisfiable_as_lean_accepts_it(verifier: ReplPoolVerifier) -> None:
    facts = _check("theorem t : let a : ℕ := 6\n  let b := a / 3\n  b = 2 := by sorry", verifier)
    assert facts.status == "satisfiable" and facts.witness == {}
    assert [c.command for c in facts.checks if c.kind == "satisfiability"][0].endswith("_pinned")


def test_an_unpinned_statement_is_flagged_not_refused(verifier: ReplPoolVerifier) -> None:
    assert _check("theorem t (n : ℕ) (h₀ : n > 3) : n + 1 > 4 := by sorry", verifier).status == "flagged"


def test_a_statement_that_does_not_elaborate_is_undecided_never_satisfiable(verifier: ReplPoolVerifier) -> None:
    rules = [{"match": "^theorem repro_target", "action": "reply", "messages": [{"severity": "error", "data": "bad"}]}]
    broken = fake_repl_verifier(rules, workers=1)
    try:
        facts = asyncio.run(check_statement(WORD_PROBLEM, broken, header=HEADER))
    finally:
        asyncio.run(broken.close())
    assert facts.status == "undecided"
    assert all(c.outcome == CheckOutcome.undecided for c in facts.checks)


def test_a_false_statement_is_refuted_and_a_true_one_is_not(verifier: ReplPoolVerifier) -> None:
    refuted = _refute(FALSE_ANSWER, verifier)
    assert refuted.status == "refuted" and "absurd (h (3600)" in (refuted.derivation or "")
    assert _refute(WORD_PROBLEM, verifier).status == "not_refuted"
    closed = _refute("theorem t : (2 : ℕ) + 2 = 5 := by sorry", verifier)
    assert closed.status == "refuted" and "by\n  decide" in (closed.derivation or "")


def test_a_witness_is_checked_by_our_own_command(verifier: ReplPoolVerifier) -> None:
    statement = "theorem t (x : ℕ) (h₀ : x = 10) : ∃ y : ℕ, y * 2 = x := by sorry"
    assert asyncio.run(check_witness(statement, ["5"], verifier, header=HEADER)).outcome == CheckOutcome.proved
    assert asyncio.run(check_witness(statement, ["4"], verifier, header=HEADER)).outcome == CheckOutcome.failed


# -- the pipeline -------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def checked_world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp_path = tmp_path_factory.mktemp("checked")
    cases = ["retained", "vacuous", "refuted"]
    dataset = write_problems(tmp_path / "problems.jsonl", cases)
    run(build_config(world_config(str(dataset))), tmp_path / "run")
    with RunStore(tmp_path / "run", create=False) as store:
        world: dict[str, Any] = {
            cases[int(c.problem_id.split(":")[1])]: (c, store.attempts(candidate_id=c.candidate_id))
            for c in store.candidates()
        }
    world["run_dir"] = tmp_path / "run"
    return world


def test_a_vacuous_statement_the_prover_would_prove_is_never_retained(checked_world: dict[str, Any]) -> None:
    candidate, attempts = checked_world["vacuous"]
    assert candidate.status == CandidateStatus.rejected
    assert (candidate.reject_stage, candidate.reject_reason) == (Stage.check, ReasonCode.statement_vacuous)
    checks = [a for a in attempts if a.stage == Stage.check]
    assert checks and all(a.reason == ReasonCode.statement_vacuous for a in checks)
    assert "exfalso" in checks[0].output["derivation"]
    assert not [a for a in attempts if a.stage == Stage.prove], "no prover call is spent on it"


def test_a_refuted_statement_goes_back_to_formalization_with_the_refutation(checked_world: dict[str, Any]) -> None:
    candidate, attempts = checked_world["refuted"]
    refutations = [a for a in attempts if a.stage == Stage.check and a.reason == ReasonCode.statement_refuted]
    assert len(refutations) == 1 and refutations[0].output["status"] == "refuted"
    assert refutations[0].output["statement_answer"] == "301" and refutations[0].output["screen_disagrees"] is True
    # the world's formalizer corrects the statement only when the prompt carries Lean's refutation
    assert candidate.status == CandidateStatus.retained and candidate.new_answer == "300"


def test_a_retained_candidate_records_that_its_statement_is_satisfiable(checked_world: dict[str, Any]) -> None:
    candidate, _ = checked_world["retained"]
    assert candidate.status == CandidateStatus.retained and candidate.statement_check == "satisfiable"


def test_the_prompt_template_reaches_the_formalizer() -> None:
    from repro.prompts import render_prompt

    assert "refuted!" in render_prompt("formalize", question="q", theorem_name="t", feedback="refuted!")
    assert Path(__file__).resolve().parents[1].joinpath("prompts", "formalize.md").read_text().count("$feedback") == 1


def test_status_and_the_study_report_count_vacuous_and_refuted_statements(checked_world: dict[str, Any]) -> None:
    from repro.app import status
    from repro.study.report import build_report
    from repro.study.statements import statements_from_run

    checks = status(checked_world["run_dir"])["statement_checks"]
    assert (checks["vacuous"], checks["refuted"]) == (1, 1)
    exported = statements_from_run(checked_world["run_dir"])
    found = sorted(row.statement_check or "" for row in exported)
    assert found.count("vacuous") == 1 and found.count("refuted") == 1 and "satisfiable" in found
    for row in exported:
        row.level, row.type = "Level 1", "Algebra"
    report = build_report(exported, [], [], k=1, strategy="parallel")
    assert report.statement_checks["by_level"] == {"Level 1": {"vacuous": 1, "refuted": 1}}
    assert report.statement_checks["by_type"] == {"Algebra": {"vacuous": 1, "refuted": 1}}


def test_pinned_values_that_double_per_variable_pin_nothing_instead_of_growing_without_bound() -> None:
    # adversary round 3: x_{i+1} = x_i + x_i wrote each value out twice per step (26 variables ~ 540 MB)
    from repro.lean.statement_checks import MAX_PINNED_VALUE_CHARS, pinned_values
    from repro.lean.text import read_statement

    binders = ["(x0 : ℕ) (h0 : x0 = 1)"] + [f"(x{i} : ℕ) (h{i} : x{i} = x{i - 1} + x{i - 1})" for i in range(1, 27)]
    chain = read_statement(f"theorem blowup {' '.join(binders)} : x26 = 67108864 := by sorry")
    assert pinned_values(chain) is None
    short = read_statement("theorem fine (x0 : ℕ) (h0 : x0 = 1) (x1 : ℕ) (h1 : x1 = x0 + x0) : x1 = 2 := by sorry")
    pins = pinned_values(short)
    assert pins is not None and pins[1] == {"x0": "1", "x1": "(1) + (1)"}
    assert all(len(value) <= MAX_PINNED_VALUE_CHARS for value in pins[1].values())
