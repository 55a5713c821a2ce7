"""Lean-feedback rounds: show the prover its own failed proof with Lean's messages and ask again.

A repaired sample is one more prover sample: it goes through the same soundness gate, and it counts
as an extra sample in pass@j (the run reports pass@j over first-round samples and over all samples).

Two formats:

* ``goedel_v2``, Goedel-Prover-V2's self-correction format, followed from its harness
  (Goedel-LM/Goedel-Prover-V2, ``src/utils.py``: ``get_error_str`` and
  ``DeepSeekCoTHandler.generate_correction_prompt``): a multi-turn chat that keeps the original
  prompt, adds the model's own failed reply as the assistant turn, then a user turn with at most 8
  errors, each shown with up to 4 lines of code before it, the failing span wrapped in
  ``<error></error>``, one line after it, and Lean's message.
* ``generic``: one user prompt (``prompts/prove_feedback.md``) with the statement, the rejected code
  and Lean's messages, for provers not trained on a correction format.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from repro.config import ModelSettings
from repro.judge.verdict import Verdict
from repro.llm.client import ModelClient
from repro.llm.factory import request_from_settings
from repro.llm.protocol import ChatMessage, ModelCallError, PromptTooLong
from repro.prompts import neutralise_control_tokens, render_prompt
from repro.records import AttemptStatus, ReasonCode
from repro.stages.common import StageResult, account, input_hash
from repro.stages.prove import ProofSample, profile_of, prover_sample

FEEDBACK_STYLES = ("goedel_v2", "generic")
# Goedel-Prover-V2 shows at most this many errors (``error_thres``), and this many lines above each
MAX_ERRORS = 8
_LINES_BEFORE = 4
_SPAN_LINES = 6


class FeedbackThread(BaseModel):
    """One chain of attempts at a statement: the chat so far and the last failed proof."""

    messages: list[ChatMessage] = Field(default_factory=list)
    text: str  # the prover's last raw reply
    # the prover's code block for it; Lean's positions refer to it (the screen blanks, never moves, what it strips)
    checked_code: str
    errors: list[tuple[int, int, int | None, int | None, str]] = Field(default_factory=list)
    parent_attempt: int  # attempt number of the sample this chain continues


def feedback_style(settings: ModelSettings) -> str:
    """The prover profile's ``feedback_style`` (``generic`` for a prover without a profile)."""
    style = profile_of(settings).feedback_style
    return style if style in FEEDBACK_STYLES else "generic"


def lean_errors(verdict: Verdict) -> list[tuple[int, int, int | None, int | None, str]]:
    """(line, column, end line, end column, text) of Lean's errors on the prover's code, in order."""
    errors = []
    steps = verdict.lean_steps
    proof_messages = steps[1].messages if len(steps) > 1 else [m for m in verdict.messages]
    for message in proof_messages:
        if message.severity != "error" or message.line is None:
            continue
        errors.append((message.line, message.column or 0, message.end_line, message.end_column, message.text))
    return errors


def wants_feedback(verdict: Verdict) -> bool:
    """Only a proof Lean itself rejected with errors gets a round: no cheat, no static refusal, no infra."""
    return (
        not verdict.verified
        and ReasonCode.lean_error in verdict.reasons
        and not {ReasonCode.sorry, ReasonCode.axiom_violation} & set(verdict.reasons)
        and bool(lean_errors(verdict))
    )


def error_report(code: str, errors: list[tuple[int, int, int | None, int | None, str]]) -> str:
    """Goedel-Prover-V2's error listing (``get_error_str`` with ``error_thres``), re-implemented."""
    lines = code.split("\n")
    report = ""
    for number, (line, column, end_line, end_column, text) in enumerate(errors[:MAX_ERRORS], start=1):
        start = min(max(line - 1, 0), max(len(lines) - 1, 0))
        end = start if end_line is None else min(max(end_line - 1, start), len(lines) - 1)
        end_col = len(lines[end]) if end_line is None or end_column is None else end_column
        shown = "".join(f"{lines[start + back]}\n" for back in range(-_LINES_BEFORE, 0) if start + back >= 0)
        if start != end:
            shown += lines[start][:column] + "<error>" + lines[start][column:] + "\n"
            for middle in range(start + 1, min(end, start + _SPAN_LINES)):
                shown += lines[middle] + "\n"
            if end > start + _SPAN_LINES:
                middle_line = lines[min(end, start + _SPAN_LINES) - 1]
                indent = len(middle_line) - len(middle_line.lstrip(" "))
                shown += "\n" + " " * indent + "... --[Truncated]-- ...\n"
            shown += lines[end][:end_col] + "</error>" + lines[end][end_col:] + "\n"
        else:
            shown += lines[start][:column] + "<error>" + lines[start][column:end_col] + "</error>"
            shown += lines[start][end_col:] + "\n"
        if end + 1 < len(lines):
            shown += lines[end + 1] + "\n"
        report += f"\nError {number}:\n\nCorresponding Code:\n```lean4\n{shown}\n```\n\nError Message: {text}\n"
    if len(errors) > MAX_ERRORS:
        report += f"\n... [Omitted {len(errors) - MAX_ERRORS} more errors] ...\n"
    return report


def feedback_messages(
    settings: ModelSettings,
    style: str,
    statement: str,
    header: str,
    thread: FeedbackThread,
    round_number: int,
    problem: str | None = None,
) -> list[ChatMessage]:
    """The chat for round ``round_number`` (1 = the first feedback round) of one thread."""
    report = error_report(thread.checked_code, thread.errors)
    if style == "goedel_v2":
        # the harness's own first-round messages, then each failed reply and Lean's answer to it
        history = thread.messages or profile_of(settings).messages(statement, header, problem)
        turn = render_prompt("prove_feedback_goedel_v2", previous_round=round_number - 1, errors=report)
        return [
            *history,
            # the prover's failed reply as the harness replays it; a control string in it would end the turn early
            ChatMessage(role="assistant", content=neutralise_control_tokens(thread.text)),
            ChatMessage(role="user", content=turn.rstrip("\n")),
        ]
    prompt = render_prompt(
        "prove_feedback", header=header.strip(), statement=statement.strip(), proof=thread.checked_code, errors=report
    )
    return [ChatMessage(role="user", content=prompt)]


async def ask_again(
    statement: str,
    header: str,
    client: ModelClient,
    settings: ModelSettings,
    thread: FeedbackThread,
    *,
    style: str,
    round_number: int,
    sample_offset: int,
    problem: str | None = None,
) -> tuple[ProofSample | None, list[ChatMessage], StageResult]:
    """One repaired sample for one thread (one model request), with its cost."""
    messages = feedback_messages(settings, style, statement, header, thread, round_number, problem)
    seed = None if settings.seed is None else settings.seed + sample_offset
    request = request_from_settings(settings, messages=messages, n=1, sample_offset=sample_offset, seed=seed)
    result = StageResult(
        status=AttemptStatus.passed,
        input_hash=input_hash("feedback", style, [m.content for m in messages], sample_offset),
        output={"feedback_round": round_number, "feedback_style": style, "of_attempt": thread.parent_attempt},
    )
    try:
        response = await client.generate(request)
    except PromptTooLong as error:  # the history outgrew the context: this thread ends here, nothing is down
        result.status, result.reason = AttemptStatus.rejected, ReasonCode.prompt_too_long
        result.output["error"] = str(error)
        return None, messages, result
    except ModelCallError as error:
        result.status, result.reason = AttemptStatus.error, ReasonCode.model_call_failed
        result.output["error"] = str(error)
        return None, messages, result
    account(result, client, [response])
    sample = prover_sample(settings, statement, sample_offset, response.texts[0], response.finish_reasons[0])
    return sample, messages, result
