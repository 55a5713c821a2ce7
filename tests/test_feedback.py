"""Lean-feedback rounds: the prompt formats a prover sees when asked again with Lean's messages."""

from __future__ import annotations

from repro.config import ModelSettings
from repro.judge.verdict import Verdict
from repro.lean.protocol import InfraStatus, LeanMessage, LeanResult
from repro.records import ReasonCode
from repro.stages.feedback import (
    FeedbackThread,
    error_report,
    feedback_messages,
    feedback_style,
    lean_errors,
    wants_feedback,
)

STATEMENT = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry"
HEADER = "import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 400000\n\nopen BigOperators Real Nat Topology Rat\n"
CODE = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num [BADLEMMA]\n  done"


def _settings(profile: str | None) -> ModelSettings:
    return ModelSettings(model="prover", profile=profile) if profile else ModelSettings(model="prover")


def test_the_error_report_follows_goedel_prover_v2s_harness() -> None:
    """Expected text written out from Goedel-LM/Goedel-Prover-V2 src/utils.py get_error_str."""
    report = error_report(CODE, [(3, 12, 3, 20, "unknown identifier 'BADLEMMA'")])
    assert report == (
        "\nError 1:\n\nCorresponding Code:\n```lean4\n"
        "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n"
        "  subst h₀\n"
        "  norm_num [<error>BADLEMMA</error>]\n"
        "  done\n"
        "\n```\n\nError Message: unknown identifier 'BADLEMMA'\n"
    )
    many = error_report(CODE, [(1, 0, None, None, f"e{i}") for i in range(10)])
    assert many.count("Error Message:") == 8 and many.endswith("\n... [Omitted 2 more errors] ...\n")


def test_goedel_v2_asks_again_in_its_own_chat_with_the_failed_reply_as_the_assistant_turn() -> None:
    settings = _settings("goedel-prover-v2-8b")
    assert feedback_style(settings) == "goedel_v2"
    thread = FeedbackThread(
        text="Plan...\n```lean4\n" + CODE + "\n```",
        checked_code=CODE,
        errors=[(3, 12, 3, 20, "unknown identifier 'BADLEMMA'")],
        parent_attempt=0,
    )
    messages = feedback_messages(settings, "goedel_v2", STATEMENT, HEADER, thread, 1)
    assert [m.role for m in messages] == ["user", "assistant", "user"]
    assert "robe_total" in messages[0].content and messages[1].content == thread.text
    last = messages[-1].content
    assert last.startswith(
        "The proof (Round 0) is not correct. Following is the compilation error message, where we use "
        "<error></error> to signal the position of the error.\n\n\nError 1:"
    )
    assert last.endswith(
        "\n\nBefore producing the Lean 4 code to formally prove the given theorem, provide a detailed analysis"
        " of the error message."
    )
    # round 2 continues the same chat
    second = FeedbackThread(**{**thread.model_dump(), "messages": messages})
    assert [m.role for m in feedback_messages(settings, "goedel_v2", STATEMENT, HEADER, second, 2)] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]


def test_other_provers_get_one_generic_prompt_with_code_and_messages() -> None:
    settings = _settings(None)
    assert feedback_style(settings) == "generic"
    thread = FeedbackThread(text="x", checked_code=CODE, errors=[(3, 12, 3, 20, "boom")], parent_attempt=0)
    messages = feedback_messages(settings, "generic", STATEMENT, HEADER, thread, 1)
    assert len(messages) == 1 and messages[0].role == "user"
    assert STATEMENT in messages[0].content and "<error>BADLEMMA</error>" in messages[0].content
    assert "Error Message: boom" in messages[0].content


def _verdict(reasons: list[ReasonCode], *, error: bool = True) -> Verdict:
    message = LeanMessage(severity="error" if error else "info", line=3, column=12, text="boom")
    steps = [
        LeanResult(infra_status=InfraStatus.ok, backend_id="fake", real_lean=False),
        LeanResult(infra_status=InfraStatus.ok, messages=[message], backend_id="fake", real_lean=False),
    ]
    return Verdict(verified=False, reasons=reasons, lean_steps=steps, messages=[message])


def test_only_proofs_lean_rejected_with_errors_get_a_round() -> None:
    assert wants_feedback(_verdict([ReasonCode.lean_error]))
    assert lean_errors(_verdict([ReasonCode.lean_error])) == [(3, 12, None, None, "boom")]
    assert not wants_feedback(_verdict([ReasonCode.lean_error], error=False))
    assert not wants_feedback(_verdict([ReasonCode.lean_error, ReasonCode.sorry]))
    assert not wants_feedback(_verdict([ReasonCode.forbidden_construct]))
    assert not wants_feedback(_verdict([ReasonCode.lean_timeout]))
