from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from repro.judge import reserved_name, verify_proof
from repro.lean.protocol import InfraStatus, LeanMessage, LeanResult, axioms_reported
from repro.records import ReasonCode
from tests.doubles.fake_backend import fake_repl_verifier

STATEMENT = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry"
HEADER = "import Mathlib\nimport Aesop\nset_option maxHeartbeats 400000\nopen BigOperators Real Nat Topology Rat\n"
CORPUS: list[dict[str, Any]] = yaml.safe_load((Path(__file__).parent / "fixtures" / "gate_corpus.yaml").read_text())


class RecordingVerifier:
    """Wraps a verifier and remembers every command sequence it was asked to check."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.sequences: list[list[str]] = []
        self.backend_id, self.real_lean = inner.backend_id, inner.real_lean
        self.toolchain, self.mathlib_revision = inner.toolchain, inner.mathlib_revision

    async def check(self, code: str, header: str) -> Any:
        self.sequences.append([code])
        return await self.inner.check(code, header)

    async def check_sequence(self, commands: list[str], header: str) -> Any:
        self.sequences.append(list(commands))
        return await self.inner.check_sequence(commands, header)

    async def close(self) -> None:
        await self.inner.close()


def test_every_hole_class_has_at_least_three_refused_variants() -> None:
    refused = Counter(str(case["class"]) for case in CORPUS if not case["verified"] and str(case["class"]) != "8")
    passing = Counter(str(case["class"]) for case in CORPUS if case["verified"])
    # 1-7: issue 9's classes; 9 literals as vehicles, 10 metaprogramming and commands anywhere,
    # 11 line-break and control characters, 12 the reserved prefix (the follow-up's classes)
    # 13 syntax that evaluates code, from the generated tables (issue 19, section 2)
    # 14 a comment opener glued to a symbol token (`//-`, `\/-`: code to Lean, a comment to a naive scanner)
    for hole in ["1", "2", "3", "4", "5", "6", "7", "9", "10", "11", "12", "13", "14"]:
        assert refused[hole] >= 3, f"class {hole} has only {refused[hole]} cheating variants"
    assert passing["8"] >= 3
    # issue 19 §3: one rule for search tactics, every kind of them refused
    assert refused["search_tactic"] >= 3
    # issue 19 §3: five relaxations, three honest variants each, and the cheats each must still refuse
    assert passing["honest_style"] >= 15 and refused["honest_style_attack"] >= 15
    # issue 19 §3, second half: the prover's own sections, opens, Prop-valued instances, `Matrix.trace`
    for relaxation in ["scope", "open_namespace", "prop_instance", "math_field"]:
        assert passing[relaxation] >= 3, f"{relaxation} has only {passing[relaxation]} honest variants"
        assert refused[f"{relaxation}_attack"] >= 3, f"{relaxation} has only {refused[relaxation + '_attack']} cheats"
    # issue 19 §3: column-0 tactic blocks and declaration suffixes; kernel reduction refused as policy
    assert passing["layout"] >= 3 and refused["layout_attack"] >= 3
    assert passing["declaration_suffix"] >= 3 and refused["declaration_suffix_attack"] >= 3
    assert refused["kernel_decide"] >= 3
    # adversary round 4, A2: literal tactic configurations pass, any term in one (and I/O names) refused
    assert passing["config"] >= 3 and refused["config_attack"] >= 3
    # issue 19 §3 (false refusals of round 4): each relaxation with its honest forms and its cheats
    for relaxation in ["wf_tactic", "kernel_name", "quote_symbol", "dedent", "named_argument", "modifier"]:
        assert passing[relaxation] >= 3, f"{relaxation} has only {passing[relaxation]} honest variants"
        assert refused[f"{relaxation}_attack"] >= 3, f"{relaxation} has only {refused[relaxation + '_attack']} cheats"
    # issue 27 §4: Aesop rule clauses refused in every frontend (a literal configuration still passes), and
    # the screen's false refusals fixed as classes, each with its honest forms and its nearest cheats
    assert refused["aesop_clause_attack"] >= 3 and passing["aesop_clause"] >= 3
    screen_classes = ["named_argument", "option", "braces", "simp_suggestion", "column_zero"]
    for relaxation in [f"screen_{name}" for name in screen_classes]:
        assert passing[relaxation] >= 3, f"{relaxation} has only {passing[relaxation]} honest variants"
        assert refused[f"{relaxation}_attack"] >= 3, f"{relaxation} has only {refused[relaxation + '_attack']} cheats"


@pytest.mark.parametrize("case", CORPUS, ids=[case["name"] for case in CORPUS])
async def test_gate_corpus(case: dict[str, Any]) -> None:
    statement = case.get("statement", STATEMENT)
    verifier = RecordingVerifier(fake_repl_verifier(case.get("lean_rules"), workers=1))
    try:
        verdict = await verify_proof(
            statement, case["output"], verifier, header=HEADER, finish_reason=case.get("finish_reason", "stop")
        )
    finally:
        await verifier.close()
    assert verdict.verified is case["verified"], verdict.details
    for reason in case["reasons"]:
        assert ReasonCode(reason) in verdict.reasons, verdict.details
    if not case["reasons"]:
        assert verdict.reasons == []
    for fact in case.get("taxonomy", []):
        assert fact in verdict.taxonomy, verdict.taxonomy
    assert bool(verifier.sequences) is case["lean"], verdict.details
    for commands in verifier.sequences:
        # our statement first, under the reserved name, opening our section; then the prover's code;
        # then our two commands, the first closing the prover's open scopes and our section
        reserved = reserved_name(statement)
        signature = statement.split(" ", 2)[2].rsplit(":=", 1)[0].strip()
        name = statement.split()[1]
        assert commands[0] == f"theorem {reserved} {signature}\n    := by sorry\n\nsection {reserved}"
        closing, bridge = commands[2].rsplit("\n", 1)
        assert closing.endswith(f"end {reserved}") and set(closing.splitlines()[:-1]) <= {"end"}
        assert bridge == f"theorem {reserved}_bridge : type_of% @{reserved} := @_root_.{name}"
        assert commands[3] == f"#print axioms _root_.{name}"
        assert len(commands) == 4


async def test_fake_lean_verdicts_are_marked_not_real() -> None:
    verifier = fake_repl_verifier(workers=1)
    try:
        verdict = await verify_proof(STATEMENT, CORPUS[0]["output"], verifier, header=HEADER)
    finally:
        await verifier.close()
    assert verdict.verified and verdict.lean is not None and verdict.lean.real_lean is False
    assert verdict.axioms == ["propext", "Classical.choice", "Quot.sound"]
    assert verdict.prover_statement_matches is True


async def test_native_decide_is_allowed_only_when_configured() -> None:
    output = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  native_decide"
    verifier = fake_repl_verifier(workers=1)
    try:
        allowed = await verify_proof(STATEMENT, output, verifier, header=HEADER, allow_native_decide=True)
    finally:
        await verifier.close()
    # allowed past the static layer, but the fake (like Lean) lists Lean.ofReduceBool, which is rejected
    assert ReasonCode.forbidden_construct not in allowed.reasons
    assert ReasonCode.axiom_violation in allowed.reasons


@pytest.mark.parametrize("tactic", ["decide +kernel", "decide!", "decide (config := {kernel := true})"])
async def test_kernel_decide_is_refused_as_policy_even_where_native_decide_is_allowed(tactic: str) -> None:
    """Kernel reduction reaches the v4.15 kernel's ``Nat.pow`` bug (leanprover/lean4#8060): never sent to Lean."""
    output = f"theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  {tactic}"
    verifier = RecordingVerifier(fake_repl_verifier(workers=1))
    try:
        verdict = await verify_proof(STATEMENT, output, verifier, header=HEADER, allow_native_decide=True)
    finally:
        await verifier.close()
    assert not verdict.verified and verdict.policy == ["kernel_decide"]
    assert ReasonCode.forbidden_construct in verdict.reasons and not verifier.sequences


async def test_no_backend_is_never_verified() -> None:
    verdict = await verify_proof(STATEMENT, CORPUS[0]["output"], None, header=HEADER)
    assert not verdict.verified and ReasonCode.lean_unavailable in verdict.reasons


async def test_a_statement_not_at_column_zero_is_read_not_crashed_on() -> None:
    verifier = fake_repl_verifier(workers=1)
    try:
        verdict = await verify_proof("  /-- robe -/\n  " + STATEMENT, CORPUS[0]["output"], verifier, header=HEADER)
    finally:
        await verifier.close()
    assert verdict.verified, verdict.details


async def test_checked_code_is_the_provers_code_and_rechecks_identically() -> None:
    """The released code is what Lean checked; re-verifying it gives the same code (reverify relies on it)."""
    verifier = fake_repl_verifier(workers=1)
    try:
        first = await verify_proof(STATEMENT, CORPUS[1]["output"], verifier, header=HEADER)
        assert first.verified and first.checked_code is not None
        again = await verify_proof(STATEMENT, first.checked_code, verifier, header=HEADER)
    finally:
        await verifier.close()
    assert again.verified and again.checked_code == first.checked_code
    assert "lemma div_helper" in first.checked_code


async def test_infrastructure_failure_at_any_step_is_never_verified() -> None:
    rules = [{"match": r"(?m)^theorem repro_target_\w+_bridge : type_of%", "action": "crash"}]
    verifier = fake_repl_verifier(rules, workers=1)
    try:
        verdict = await verify_proof(STATEMENT, CORPUS[0]["output"], verifier, header=HEADER)
    finally:
        await verifier.close()
    # it crashes on every fresh worker while a known-good probe runs: the code crashes Lean, a rejection (R6)
    assert not verdict.verified and verdict.reasons == [ReasonCode.lean_crash]
    # a backend that crashes on everything (the probe too) gives no verdict
    verifier = fake_repl_verifier([{"match": "theorem", "action": "crash"}], workers=1)
    try:
        verdict = await verify_proof(STATEMENT, CORPUS[0]["output"], verifier, header=HEADER)
    finally:
        await verifier.close()
    assert not verdict.verified and verdict.reasons == [ReasonCode.lean_unavailable]


def _axiom_result(*texts: str, severity: str = "info") -> LeanResult:
    return LeanResult(
        infra_status=InfraStatus.ok,
        messages=[LeanMessage(severity=severity, text=text) for text in texts],
        backend_id="t",
        real_lean=False,
    )


def test_axiom_report_is_read_only_when_it_is_the_single_exact_answer() -> None:
    clean = "'robe_total' depends on axioms: [propext, Classical.choice, Quot.sound]"
    assert axioms_reported(_axiom_result(clean), "robe_total") == ["propext", "Classical.choice", "Quot.sound"]
    assert axioms_reported(_axiom_result("'robe_total' does not depend on any axioms"), "robe_total") == []
    assert axioms_reported(_axiom_result(clean, clean), "robe_total") is None
    assert axioms_reported(_axiom_result(clean, severity="error"), "robe_total") is None
    assert axioms_reported(_axiom_result("'x.robe_total' does not depend on any axioms"), "robe_total") is None
    assert axioms_reported(_axiom_result("note: " + clean), "robe_total") is None
    assert axioms_reported(_axiom_result(), "robe_total") is None


def test_axiom_report_reads_names_with_primes_guillemets_and_root() -> None:
    """Lean prints ``'amc_p5'' depends on ...``: a name with a prime must not end in axiom_violation."""
    primed = "'amc_p5'' depends on axioms: [propext]"
    assert axioms_reported(_axiom_result(primed), "amc_p5'") == ["propext"]
    assert axioms_reported(_axiom_result("'foo' does not depend on any axioms"), "_root_.«foo»") == []
    assert axioms_reported(_axiom_result(primed), "amc_p5") is None


async def test_a_statement_continued_at_column_zero_is_accepted() -> None:
    statement = "theorem cont (x : ℕ) (h : x = 2) :\nx + 1 = 3 := by sorry"
    output = "theorem cont (x : ℕ) (h : x = 2) :\n    x + 1 = 3 := by\n  subst h\n  rfl"
    verdict = await verify_proof(statement, output, None, header=HEADER)
    assert verdict.static_passed and verdict.reasons == [ReasonCode.lean_unavailable]


async def test_a_signature_continued_at_column_zero_in_prover_code_is_not_a_command() -> None:
    output = "theorem robe_total (x : ℕ)\n(h₀ : x = 3600) :\nx / 12 = 300 := by\n  subst h₀\n  norm_num"
    verdict = await verify_proof(STATEMENT, output, None, header=HEADER)
    assert verdict.static_passed and verdict.reasons == [ReasonCode.lean_unavailable]
    unknown = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num\nfoo_command 3"
    refused = await verify_proof(STATEMENT, unknown, None, header=HEADER)
    assert not refused.static_passed and any("foo_command" in d for d in refused.details)


def _python_line_breaks() -> list[str]:
    """Every character other than \\n that str.splitlines (the Kimina server's split) breaks a line at."""
    return [chr(code) for code in range(0x3000) if chr(code) != "\n" and len(f"a{chr(code)}b".splitlines()) == 2]


@pytest.mark.parametrize("line_break", _python_line_breaks())
async def test_every_line_break_other_than_newline_is_refused(line_break: str) -> None:
    output = f"theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀; norm_num -- ok{line_break}"
    verdict = await verify_proof(STATEMENT, output, None, header=HEADER)
    assert not verdict.static_passed and ReasonCode.forbidden_construct in verdict.reasons
    assert any(f"U+{ord(line_break):04X}" in detail for detail in verdict.details)


async def test_a_statement_whose_signature_ends_in_a_line_comment_is_still_our_statement() -> None:
    """Our target command continued ``:= by sorry`` on the signature's own line, so a formalizer's trailing
    ``-- comment`` turned it into a comment: the target failed to elaborate and every honest proof was refused."""
    statement = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 -- the robe costs 300\n  := by sorry"
    output = "```lean4\ntheorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num\n```"
    verifier = RecordingVerifier(fake_repl_verifier(workers=1))
    try:
        verdict = await verify_proof(statement, output, verifier, header=HEADER)
    finally:
        await verifier.close()
    target = verifier.sequences[0][0]
    assert "-- the robe costs 300\n" in target and target.split("\n")[1].lstrip().startswith(":= by sorry")
    assert verdict.verified, verdict.details
