"""Salvage of near-miss prover outputs: what each repair does, and that no repair helps a cheat.

The prover outputs follow RePro's App. J (DeepSeek-Prover-V2-7B failures: a special token inside the
theorem header, a restated target, a tactic repeated until the length limit, an unclosed fence).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from repro.judge import verify_proof
from repro.records import ReasonCode
from repro.salvage import SalvageKind, salvage_variants, worth_salvaging
from repro.stages.salvage import salvage_sample
from tests.doubles.fake_backend import fake_repl_verifier
from tests.doubles.fake_semantics import Outcome, judge_theorem

HEADER = "import Mathlib\nimport Aesop\nset_option maxHeartbeats 400000\nopen BigOperators Real Nat Topology Rat\n"
ROBE = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry"
CORPUS: list[dict[str, Any]] = yaml.safe_load((Path(__file__).parent / "fixtures" / "gate_corpus.yaml").read_text())

# App. J, example 6: a special token inside the header corrupts the stated value
CORRUPTED_HEADER = """```lean4
import Mathlib
import Aesop

set_option maxHeartbeats 200000

open BigOperators Real Nat Topology Rat

theorem square_gap : (13 + 3)^2 - (13 - 3)^2 = 156<|Assistant|>3 := by
  norm_num
  <;> rfl
  <;> norm_num
  <;> rfl
  <;> norm_num
  <;> rfl
```"""
SQUARE_GAP = "theorem square_gap : (13 + 3)^2 - (13 - 3)^2 = 156 := by sorry"
# App. J, example 8: a corrupted target and a tactic repeated until the token limit
EVALUATE = "theorem evaluate_expression :\n  let a := 5\n  let b := 7\n  35 - (3 * a - b) = 27 := by sorry"
REPEATED_TO_LIMIT = """```lean4
theorem evaluate_expression :
  let a := 5
  let b := 7
  35 - (3 * a - b) = 27 / 27 := by
  norm_num
  <;> simp_all
  <;> norm_num
  <;> omega
  <;> omega
  <;> omega
  <;> omega
  <;> om"""


def kinds_of(variants: list[Any]) -> list[list[str]]:
    return [[kind.value for kind in variant.kinds] for variant in variants]


def test_a_corrupted_header_is_re_spliced_with_our_statement_first() -> None:
    variants = salvage_variants(SQUARE_GAP, CORRUPTED_HEADER)
    assert kinds_of(variants)[0] == ["special_tokens", "respliced_statement"]
    first = variants[0].text
    assert "= 156 := by" in first and "1563" not in first and "<|" not in first
    # the header lines before the theorem are kept as the prover wrote them
    assert first.index("set_option maxHeartbeats 200000") < first.index("theorem square_gap")
    # deleting the token alone glues 156 and 3: that variant is still offered, later, for Lean to refuse
    assert any("= 1563 := by" in variant.text for variant in variants)


def test_a_repetition_until_the_length_limit_is_trimmed_and_closed() -> None:
    variants = salvage_variants(EVALUATE, REPEATED_TO_LIMIT, "length")
    first = variants[0]
    assert [k.value for k in first.kinds] == ["closed_fence", "truncated_tail", "repetition", "respliced_statement"]
    body = first.text.split(":= by", 1)[1]
    assert body.count("omega") == 1 and "om\n" not in body and "27 / 27" not in first.text
    assert first.text.startswith("```lean4\n") and first.text.endswith("\n```")


def test_junk_after_the_last_declaration_is_dropped_and_nothing_before_it_is() -> None:
    output = (
        "```lean4\nlemma helper : (3600 : ℕ) / 12 = 300 := by norm_num\n\n"
        "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  exact helper\n"
        "The proof is complete. Let me also try\ntheorem robe_total2 : True := by\n```"
    )
    verdicts = salvage_variants(ROBE, output)
    assert kinds_of(verdicts) == [["trailing_junk"]]
    assert "lemma helper" in verdicts[0].text and "complete" not in verdicts[0].text


def test_variants_are_bounded_distinct_and_never_the_original_code() -> None:
    variants = salvage_variants(SQUARE_GAP, CORRUPTED_HEADER, limit=2)
    assert len(variants) == 2
    assert len({variant.text for variant in salvage_variants(SQUARE_GAP, CORRUPTED_HEADER, limit=16)}) == len(
        salvage_variants(SQUARE_GAP, CORRUPTED_HEADER, limit=16)
    )
    honest = "```lean4\ntheorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num\n```"
    code = honest.split("\n", 1)[1].rsplit("\n", 1)[0]
    assert salvage_variants(ROBE, honest, original_code=code) == []
    assert salvage_variants(ROBE, "I cannot prove this.") == []


# -- what the fake REPL knows (so a re-spliced statement passes only when the body proves it) ---------


@pytest.mark.parametrize(
    ("declaration", "objection"),
    [
        ("theorem t (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num", None),
        ("theorem t (x : ℕ) (h₀ : x = 3600) : x / 12 = 299 := by\n  subst h₀\n  norm_num", "false"),
        ("theorem t (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  norm_num", "hypothesis"),
        ("theorem t (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  exact h₁", "unknown identifier 'h₁'"),
        ("theorem t (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀", "closes"),
        ("theorem t (x : ℕ) (h₀ : x = 3600) (h₁ : x = 7) : x = 1 := by\n  omega", None),  # vacuous: omega proves it
        ("theorem t : (13 + 3)^2 - (13 - 3)^2 = 1563 := by\n  norm_num", "false"),
        ("theorem t (x : ℝ) (h₀ : x = 2.5) : x * 2 = 5 := by\n  rw [h₀]; norm_num", None),
        ("theorem t : let p : ℕ := 12\n  p * 5 = 60 := by\n  intro p\n  exact Or.inr trivial", "type mismatch"),
        ("theorem t (x : ℕ) (h₀ : x = 3) : x = 3 := by\n  intro y hy\n  simp [hy, h₀]", None),
        # a false statement whatever the proof: the cheat of the last session's final review
        ("theorem t (x : ℕ) (h : x = 3) : x + 1 = 5 := by\n  exact absurd h (by decide +kernel)", "false"),
        ("theorem t (x : ℕ) (h : x = 3600) : x / 12 = 301 := by\n  exact absurd h (by decide +kernel)", "false"),
        # a true statement, but a proof from False while the hypotheses hold together: no such proof exists
        ("theorem t (x : ℕ) (h : x = 3) : x + 1 = 4 := by\n  exact absurd h (by decide +kernel)", "False"),
        ("theorem t (x : ℕ) (h : x = 3) : x + 1 = 4 := by\n  exfalso\n  omega", "False"),
        # derived by the modelled omega from a hypothesis that does not pin x syntactically
        ("theorem t (x : ℕ) (h : 2 * x + 1 = 7) : x = 3 := by\n  have h2 : 2 * x = 6 := by omega\n  omega", None),
        (
            "theorem t (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  have h₁ : x = 3600 := h₀\n  subst h₁; norm_num",
            None,
        ),
    ],
)
def test_the_fake_refuses_what_real_lean_would_refuse(declaration: str, objection: str | None) -> None:
    found = judge_theorem(declaration)
    if objection is None:
        assert found.outcome == Outcome.accepted, found.message
    else:
        assert found.outcome == Outcome.refused and objection in found.message


@pytest.mark.parametrize(
    "declaration",
    [
        # values not pinned: the fake cannot evaluate the statement, and does not follow this proof
        "theorem t (x : ℕ) (h : 2 * x = 7) : x = 4 := by\n  exact absurd h (by decide +kernel)",
        "theorem t (x : ℕ) (h : x > 3) : x < 2 := by\n  exact absurd h (by decide +kernel)",
        # outside the fragment: functions, real analysis, quantifiers
        "theorem t (f : ℕ → ℕ) (h : f 1 = 3) : f 1 = 4 := by\n  exact absurd h (by decide +kernel)",
        "theorem t (x : ℝ) (h₀ : Real.log x = 2) : x = Real.exp 2 := by\n  rw [← h₀, Real.exp_log]",
        "theorem t : ∀ n : ℕ, n + 0 = n := by\n  intro n\n  simp",
        # a proof from False where the fake cannot show the hypotheses consistent (2 * x = 7 has no ℕ solution)
        "theorem t (x : ℕ) (h : 2 * x = 7) : x = 4 := by\n  exact absurd h (by omega)",
    ],
)
def test_the_fake_cannot_judge_what_it_does_not_model(declaration: str) -> None:
    found = judge_theorem(declaration)
    assert found.outcome == Outcome.cannot_judge and "cannot judge" in found.message


async def test_the_fake_repl_answers_cannot_judge_as_an_error_never_a_success() -> None:
    verifier = fake_repl_verifier(workers=1)
    try:
        absurd = "```lean4\ntheorem t (x : ℕ) (h : x > 3) : x < 2 := by\n  exact absurd h (by decide)\n```"
        verdict = await verify_proof(
            "theorem t (x : ℕ) (h : x > 3) : x < 2 := by sorry", absurd, verifier, header=HEADER
        )
        assert not verdict.verified and ReasonCode.lean_error in verdict.reasons
        assert any("cannot judge" in message.text for message in verdict.messages)
    finally:
        await verifier.close()


async def test_a_re_spliced_body_is_verified_only_when_it_proves_our_statement() -> None:
    verifier = fake_repl_verifier(workers=1)
    try:
        # the prover restated the target with a wrong value; its body proves ours: rescued
        wrong_value = (
            "```lean4\ntheorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 299 := by\n  subst h₀\n  norm_num\n```"
        )
        original = await verify_proof(ROBE, wrong_value, verifier, header=HEADER)
        assert not original.verified and ReasonCode.statement_mismatch in original.reasons
        checks = await salvage_sample(
            ROBE, wrong_value, "stop", original, verifier, header=HEADER, allow_native_decide=False, limit=4
        )
        assert [check.verdict.verified for check in checks] == [True]
        assert checks[0].variant.kinds == [SalvageKind.respliced_statement]
        assert "x / 12 = 300 := by" in (checks[0].verdict.checked_code or "")

        # the prover assumed its conclusion under another hypothesis name: its body proves nothing of ours
        assumes = "```lean4\ntheorem robe_total (x : ℕ) (h₁ : x / 12 = 300) : x / 12 = 300 := by\n  exact h₁\n```"
        original = await verify_proof(ROBE, assumes, verifier, header=HEADER)
        checks = await salvage_sample(
            ROBE, assumes, "stop", original, verifier, header=HEADER, allow_native_decide=False, limit=4
        )
        assert checks and not any(check.verdict.verified for check in checks)
        assert all(ReasonCode.lean_error in check.verdict.reasons for check in checks)

        # our statement is false: no body the prover wrote can prove it, whatever it restated
        false_statement = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 299 := by sorry"
        honest_for_300 = wrong_value.replace("299", "300")
        original = await verify_proof(false_statement, honest_for_300, verifier, header=HEADER)
        checks = await salvage_sample(
            false_statement,
            honest_for_300,
            "stop",
            original,
            verifier,
            header=HEADER,
            allow_native_decide=False,
            limit=4,
        )
        assert checks and not any(check.verdict.verified for check in checks)
    finally:
        await verifier.close()


async def test_app_j_outputs_are_rescued_through_the_gate() -> None:
    verifier = fake_repl_verifier(workers=1)
    try:
        for statement, output, finish in (
            (SQUARE_GAP, CORRUPTED_HEADER, "stop"),
            (EVALUATE, REPEATED_TO_LIMIT, "length"),
        ):
            original = await verify_proof(statement, output, verifier, header=HEADER, finish_reason=finish)
            assert not original.verified
            checks = await salvage_sample(
                statement, output, finish, original, verifier, header=HEADER, allow_native_decide=False, limit=4
            )
            assert checks[-1].verdict.verified, [c.verdict.details for c in checks]
            assert checks[-1].result.output["salvage_kinds"]
    finally:
        await verifier.close()


# -- safety: the gate corpus through salvage ----------------------------------------------------------

# Corpus outputs salvage may turn into a proof, because the repaired text genuinely proves our statement
# (real Lean would accept it): defects, not cheats.
RESCUED = {
    "special_token_inside_theorem": "the token deleted, the honest proof remains",
    "fullwidth_special_token": "the token after the closing fence deleted",
    "renamed_theorem": "our statement re-spliced onto an honest body",
    "truncated_unclosed_block": "the fence closed over a complete honest proof",
    "truncated_bare_output": "the same, without a fence",
    # `intro h; trivial` proves `10 / 2 = 5` (Lean's `trivial` tries `decide`): the restatement was the
    # cheat, the body is a proof of our statement
    "have_statement_target_replaced": "our statement re-spliced; Lean decides the body proves it",
}


def _corpus_statement(case: dict[str, Any]) -> str:
    return str(case.get("statement", ROBE))


async def _salvage_corpus(*, respect_policy: bool) -> dict[str, list[str]]:
    """Verified variant labels per corpus case (every case that is not already verified)."""
    shared = fake_repl_verifier(workers=1)
    verified: dict[str, list[str]] = {}
    try:
        for case in CORPUS:
            if case["verified"]:
                continue
            statement, finish = _corpus_statement(case), case.get("finish_reason", "stop")
            verifier = fake_repl_verifier(case["lean_rules"], workers=1) if case.get("lean_rules") else shared
            try:
                original = await verify_proof(statement, case["output"], verifier, header=HEADER, finish_reason=finish)
                if respect_policy:
                    checks = await salvage_sample(
                        statement,
                        case["output"],
                        finish,
                        original,
                        verifier,
                        header=HEADER,
                        allow_native_decide=False,
                        limit=16,
                    )
                    labels = [check.variant.label for check in checks if check.verdict.verified]
                else:  # attack: every variant, whatever the original was refused for
                    labels = []
                    for variant in salvage_variants(statement, case["output"], finish, limit=16):
                        verdict = await verify_proof(statement, variant.text, verifier, header=HEADER)
                        if verdict.verified:
                            labels.append(variant.label)
            finally:
                if verifier is not shared:
                    await verifier.close()
            if labels:
                verified[case["name"]] = labels
    finally:
        await shared.close()
    return verified


async def test_every_cheating_corpus_output_is_still_refused_after_salvage() -> None:
    verified = await _salvage_corpus(respect_policy=True)
    assert set(verified) == set(RESCUED), verified


async def test_salvage_without_its_policy_unmasks_no_cheat_the_gate_refused() -> None:
    """Attack: skip the "never salvage a cheat" rule and check every variant of every refused output.

    What then passes is only what the corpus placed *after* an honest proof (a spoofed report, control
    characters): dropping it leaves a text real Lean accepts as a proof of our statement. No prefix
    cheat (axiom, instance, macro, option, variable) and no cheat inside the proof survives, because
    salvage never touches the code before the main theorem and the gate reads every variant whole.
    """
    verified = await _salvage_corpus(respect_policy=False)
    after_an_honest_proof = {
        "print_string_spoof",
        "unicode_line_separator_ends_a_comment_for_the_server",
        "form_feed_in_a_comment",
        "next_line_character",
        "bidi_override_in_a_comment",
        # issue 19 §3's cheats placed after an honest proof (an `#eval`, a late import, other `#`
        # commands); sections closed by `end` pass since the prover's code runs in our own section
        "eval_stays_refused",
        "print_other_than_axioms_is_refused",
        "check_of_a_term_is_refused",
        "import_submodule_after_a_command_is_refused",
        # layout cheats after an honest proof: a column-0 command or tactic line, a `where` clause
        "column_zero_tactic_word_outside_a_column_zero_block",
        "where_then_a_column_zero_command",
        "where_then_a_column_zero_axiom",
        "where_declares_a_sorry",
        # a `where` block declaring `true`, which the configuration above it would resolve to (A2)
        "config_attack_true_in_where_block",
        # a column-0 `simp_wf` and an unknown word after the theorem's indented block (round-4 false refusals)
        "wf_simp_wf_at_column_zero_with_no_block_open",
        # issue 27 §4: a blanked `#check by` and a column-0 command after the theorem's same-line block
        "column_zero_check_of_by_does_not_open_a_block",
    }
    assert set(verified) == set(RESCUED) | after_an_honest_proof, verified
    for name in after_an_honest_proof:
        assert all("trailing_junk" in label for label in verified[name]), verified[name]


def test_salvage_never_revisits_a_cheat_or_an_infrastructure_failure() -> None:
    from repro.judge.verdict import Verdict

    for reason in (
        ReasonCode.forbidden_construct,
        ReasonCode.sorry,
        ReasonCode.axiom_violation,
        ReasonCode.lean_unavailable,
        ReasonCode.lean_timeout,
    ):
        verdict = Verdict(verified=False, reasons=[ReasonCode.boundary_corruption, reason])
        assert not worth_salvaging(verdict)
    assert worth_salvaging(Verdict(verified=False, reasons=[ReasonCode.statement_mismatch]))
    assert not worth_salvaging(Verdict(verified=True))


async def test_deleting_special_tokens_cannot_assemble_a_cheat_the_gate_misses() -> None:
    """Attack: split a forbidden word with a special token, so only the repaired text spells it."""
    verifier = fake_repl_verifier(workers=1)
    try:
        for smuggled in ("so<|im_end|>rry", "nat<|im_end|>ive_decide", "ad<|Assistant|>mit"):
            output = (
                "```lean4\ntheorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n"
                f"  subst h₀\n  {smuggled}\n```"
            )
            original = await verify_proof(ROBE, output, verifier, header=HEADER)
            assert not original.verified
            variants = salvage_variants(ROBE, output, limit=16)
            assert variants
            for variant in variants:
                verdict = await verify_proof(ROBE, variant.text, verifier, header=HEADER)
                assert not verdict.verified, variant.label
                if variant.kinds[0] == SalvageKind.special_tokens:  # the word the token split is whole again
                    assert ReasonCode.forbidden_construct in verdict.reasons, variant.label
    finally:
        await verifier.close()


@pytest.mark.parametrize(
    "reason",
    [ReasonCode.reply_too_long, ReasonCode.too_many_fences, ReasonCode.too_many_tokens, ReasonCode.static_timeout],
)
def test_a_reply_refused_by_the_gate_s_size_caps_is_never_salvaged(reason: ReasonCode) -> None:
    """Adversary 5c: salvage re-read uncapped, on the event loop, the multi-MB replies the caps refused."""
    from repro.judge.verdict import Verdict

    verdict = Verdict.model_construct(verified=False, reasons=[reason])
    assert not worth_salvaging(verdict)
