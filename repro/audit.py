"""What a user reads to see why work was rejected: every rejected attempt with its evidence.

Rejections of candidates that were finally retained count too (a forbidden construct in the
first proof sample is evidence even when the third sample verified). Each row carries the stored
texts, the alignment judge's analysis, the prover output, the code Lean checked (for a kernel-judge
attempt: the submission it compiled and what the tool answered), Lean's messages and the error
message. Rows come from one SQL query with LIMIT, so auditing a 100k-problem run reads only the rows
it shows.
"""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

from repro.exit_codes import ReproError
from repro.records import Candidate, ReasonCode, SourceProblem, Stage, StageAttempt
from repro.store import RunReader

STAGES = tuple(stage.value for stage in Stage)
REASONS = tuple(reason.value for reason in ReasonCode)


class AuditError(ReproError, ValueError):
    """An audit filter that can never match (a stage or reason that does not exist)."""


def _close(value: str, known: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(value, known, n=1)
    return f"did you mean {close[0]!r}? " if close else ""


def validate_filters(stage: str | None, reason: str | None, limit: int | None) -> None:
    if stage is not None and stage not in STAGES:
        raise AuditError(
            f"--stage {stage!r}: unknown stage; {_close(stage, STAGES)}expected one of {', '.join(STAGES)}"
        )
    if reason is not None and reason not in REASONS:
        raise AuditError(
            f"--reason {reason!r}: unknown reason code; {_close(reason, REASONS)}see `repro reasons` for the"
            f" {len(REASONS)} codes"
        )
    if limit is not None and limit < 0:
        raise AuditError(f"--limit {limit}: expected 0 or more")


def _texts(output: dict[str, Any]) -> list[str]:
    """The model's own words stored for the attempt, whatever the stage called them."""
    texts: list[str] = []
    for key in ("text", "reply"):
        value = output.get(key)
        if isinstance(value, str) and value:
            texts.append(value)
    replies = output.get("replies")
    if isinstance(replies, list):
        texts.extend(str(reply) for reply in replies)
    return texts


def judge_details(output: dict[str, Any]) -> list[str]:
    """What a judge attempt's evidence says: who judged, on what, and what the tool answered."""
    verdict = output.get("judge") or {}
    lines = []
    if output.get("overrules_screen"):
        lines.append(
            f"the screen ({output.get('screened_by')} #{output.get('of_attempt')}) passed this text and the kernel"
            " judge rejected it: the judge wins"
        )
    lines.append(
        f"judge {verdict.get('tool')} {verdict.get('tool_revision') or ''} on {verdict.get('toolchain')},"
        f" real {bool(verdict.get('real'))}, confinement {verdict.get('confinement') or 'not recorded'}"
    )
    if verdict.get("cause"):
        lines.append(f"no verdict ({verdict['cause']})")
    if verdict.get("detail"):
        lines.append(str(verdict["detail"]))
    return lines


def _statement(attempt: StageAttempt, pointed: str | None) -> dict[str, Any]:
    """The statement this attempt wrote (formalize) or worked on (its ``inputs``), never the candidate's
    latest one: a later round replaces that, and a judge's reason must sit beside what it judged."""
    if attempt.stage == Stage.formalize:
        return {"lean_statement": attempt.output.get("statement"), "statement_from": None}
    number = attempt.inputs.get(Stage.formalize.value)
    if number is None:  # before any statement (rewrite, screen), or a store older than attempt inputs
        return {"lean_statement": None, "statement_from": None}
    return {"lean_statement": pointed, "statement_from": {"stage": Stage.formalize.value, "attempt": number}}


def audit_rows(
    run_dir: Path,
    *,
    stage: str | None = None,
    reason: str | None = None,
    limit: int | None = None,
    candidate_id: str | None = None,
) -> list[dict[str, Any]]:
    """Rejected (and infrastructure-failed) attempts, oldest first, each with its evidence; ``candidate_id``
    keeps one candidate's (or, given a problem id, its candidates')."""
    validate_filters(stage, reason, limit)
    if limit == 0:
        return []
    store = RunReader(run_dir)
    try:
        rows = store.rejected_attempt_rows(stage=stage, reason=reason, limit=limit, candidate=candidate_id)
    finally:
        store.close()
    result = []
    for row in rows:
        attempt = StageAttempt.model_validate_json(row["attempt"])
        candidate = Candidate.model_validate_json(row["candidate"])
        problem = SourceProblem.model_validate_json(row["problem"])
        output = dict(attempt.output)
        prover_output = None
        if row["prove_attempt"]:
            prover_output = StageAttempt.model_validate_json(row["prove_attempt"]).output.get("text")
        elif attempt.stage == Stage.prove:
            prover_output = output.get("text")
        checked_code, details = output.get("checked_code"), output.get("details") or output.get("problem")
        if attempt.stage == Stage.judge:
            checked_code, details = output.get("submission"), judge_details(output)
        result.append(
            {
                "candidate_id": candidate.candidate_id,
                "candidate_status": candidate.status.value,
                "reject_stage": attempt.stage.value,
                "reject_reason": attempt.reason.value if attempt.reason else None,
                "attempt": attempt.attempt_number,
                "status": attempt.status.value,
                "taxonomy": attempt.taxonomy,
                "original_question": problem.question,
                "rewritten_question": candidate.rewritten_question,
                **_statement(attempt, row["input_statement"]),
                "texts": _texts(output),
                "analysis": output.get("analysis") or output.get("analyses"),
                "prover_output": prover_output,
                "checked_code": checked_code,
                "details": details or output.get("lean_detail"),
                "lean_messages": [message.model_dump() for message in attempt.lean_messages],
                "error": output.get("error"),
                "output": output,
            }
        )
    return result
