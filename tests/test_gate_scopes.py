"""The prover's code runs inside our own section (issue 19 §3): its scopes end before our trusted commands.

Real Lean is not here, so the fake REPL applies Lean's ``section``/``end`` rules (``elabEnd``: drop
the scopes, then err on a name that does not match) and the Kimina stand-in places messages by line.
What these tests hold: the prover's text and its positions are unchanged; whatever it leaves open is
closed before ours; an ``end`` that reaches our section, or one too few, is an error, never verified.
"""

from __future__ import annotations

from repro.judge import reserved_name, verify_proof
from repro.judge.scopes import closers
from repro.judge.screen import _judge_lean, _our_statement, lean_commands
from repro.judge.verdict import Verdict
from repro.lean import KiminaVerifier
from repro.lean.text import LeanCode, Statement
from repro.records import ReasonCode
from tests.doubles.fake_backend import fake_repl_verifier
from tests.doubles.kimina_server import KiminaTestServer

STATEMENT = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry"
HEADER = "import Mathlib\nimport Aesop\nset_option maxHeartbeats 400000\nopen BigOperators Real Nat Topology Rat\n"
THEOREM = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num\n"
RESERVED = reserved_name(STATEMENT)


async def _verify(code: str) -> Verdict:
    verifier = fake_repl_verifier(workers=1)
    try:
        return await verify_proof(STATEMENT, f"```lean4\n{code}```", verifier, header=HEADER)
    finally:
        await verifier.close()


def test_closers_close_what_the_code_leaves_open_innermost_first() -> None:
    assert closers(LeanCode.of("noncomputable section\n" + THEOREM)) == ["end"]
    assert closers(LeanCode.of("section\n" + THEOREM + "end\n")) == []
    assert closers(LeanCode.of("section\nsection\n" + THEOREM + "end\n")) == ["end"]
    # named scopes (refused by the static layer today) are closed by name, one per component
    assert closers(LeanCode.of("namespace A.B\nsection C\n" + THEOREM)) == ["end C", "end B", "end A"]
    # one ``end`` too many closes nothing of the prover's: Lean itself must refuse it
    assert closers(LeanCode.of(THEOREM + "end\n")) == []


async def test_our_section_wraps_the_prover_code_which_is_sent_verbatim() -> None:
    code = "noncomputable section\nopen Finset in\n" + THEOREM
    verdict = await _verify(code)
    assert verdict.verified, verdict.details
    statement, prover, bridge, axioms = verdict.lean_commands
    assert statement.endswith(f":= by sorry\n\nsection {RESERVED}")
    assert prover == code.rstrip("\n")  # the text the gate checked: Lean's positions in it are the prover's
    assert bridge.startswith(f"end\nend {RESERVED}\ntheorem {RESERVED}_bridge : type_of% @{RESERVED}")
    assert axioms == "#print axioms _root_.robe_total"


async def test_a_balanced_anonymous_section_passes() -> None:
    verdict = await _verify("section\nopen Finset\n" + THEOREM + "end\n")
    assert verdict.verified, verdict.details


async def test_an_end_that_closes_our_section_is_a_lean_error_at_its_own_line() -> None:
    verdict = await _verify(THEOREM + "end\n")
    assert not verdict.verified
    assert ReasonCode.lean_error in verdict.reasons
    proof_errors = [m for m in verdict.lean_steps[1].messages if m.severity == "error"]
    assert [(m.line, m.text) for m in proof_errors] == [(4, "invalid 'end', name is missing")]


async def test_closing_ours_and_reopening_one_to_balance_the_count_still_fails() -> None:
    # the static count sees one ``end`` and one ``section``; Lean sees our section closed (an error)
    verdict = await _verify(THEOREM + "end\nsection\n")
    assert not verdict.verified
    assert ReasonCode.lean_error in verdict.reasons


async def test_a_scope_error_in_the_bridge_command_is_named_as_such_not_as_a_mismatch() -> None:
    parsed, _ = _our_statement(STATEMENT, HEADER)
    assert isinstance(parsed, Statement)
    # a prover scope our count missed leaves our closers one short: Lean errs on our own ``end``
    commands = lean_commands(parsed, RESERVED, "section\n" + THEOREM, prover_closers=[])
    verifier = fake_repl_verifier(workers=1)
    try:
        results = await verifier.check_sequence(commands, HEADER)
    finally:
        await verifier.close()
    verdict = Verdict(verified=False)
    _judge_lean(verdict, results, "robe_total", scope_lines=1)
    assert ReasonCode.lean_error in verdict.reasons and ReasonCode.statement_mismatch not in verdict.reasons
    assert any("leaves a section or namespace open" in d for d in verdict.details)


async def test_kimina_sees_our_section_around_the_prover_code_and_keeps_its_line_numbers() -> None:
    code = "noncomputable section\n" + THEOREM.replace("  norm_num\n", "  bad\n")
    with KiminaTestServer() as server:
        verifier = KiminaVerifier(url=server.url, toolchain="leanprover/lean4:v4.15.0")
        try:
            verdict = await verify_proof(STATEMENT, f"```lean4\n{code}```", verifier, header=HEADER)
        finally:
            await verifier.close()
        joined = server.bodies[-1]["snippets"][0]["code"]
    assert joined.index(f"section {RESERVED}") < joined.index(code) < joined.index(f"end\nend {RESERVED}")
    assert not verdict.verified and ReasonCode.lean_error in verdict.reasons
    errors = [m for m in verdict.lean_steps[1].messages if m.severity == "error"]
    assert [m.line for m in errors] == [4]  # the ``  bad`` line of the prover's code
