"""Lean confirms the answer our statement gives: its equation's type and the literal's value.

Python proposes (:mod:`repro.stages.answer_shape`); these trusted commands of ours decide. For each
proposed type α (one per equation; a tuple names one per conjunct), after our statement is declared as
the gate declares it (``theorem repro_target_<hash> ... := by sorry``):

1. ``theorem repro_target_<hash>_answer_<i> <the same signature, each equation written @Eq α (L) (R)> :=
   by sorry``: the statement with the equation's type named, both sides elaborated against α;
2. ``example : type_of% @repro_target_<hash> = type_of% @repro_target_<hash>_answer_<i> := rfl``: Lean
   accepts only if the two are the same proposition (definitionally), so our equation *is* at type α
   and its right side is the literal as α reads it. Where ours was elaborated at another type (ℕ by
   default, ``ZMod 7``, behind a cast) the Eq types differ and the check fails;
3. per equation, ``example : ((R) : α) = (N) := by norm_num`` in the header's context, with R the
   statement's own literal text and N the normal form Python read (``16``, ``-1 / 4``, a closed form
   fully parenthesised): Lean confirms the value we release is the literal's value in α.

An answer is confirmed only when our statement elaborated, exactly one proposal passed all three, and
every command was answered without error; a proposal that fails is no answer, never a wrong one, and
an infrastructure failure is ``undecided`` (the candidate stays unfinished). Nothing here reads the
prover's text: R and L are our statement's own text, admitted only through the literal grammar
(:mod:`repro.lean.text.answer_literal`) and the statement reader.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from repro.lean.protocol import InfraStatus, LeanResult, Verifier
from repro.lean.statement_checks import (
    CheckOutcome,
    StatementCheck,
    check_outcome,
    declaration_command,
    elaborated_ok,
    statement_name,
)
from repro.lean.text.statement import Statement


class Proposal(BaseModel):
    """One typed reading of our statement: the declaration and the literal checks Lean must accept."""

    types: list[str]  # one per equation
    declaration: str
    literals: list[tuple[str, str, str]] = Field(default_factory=list)  # (right text, α, normal form)


class AnswerConfirmation(BaseModel):
    outcome: CheckOutcome  # proved: exactly one proposal confirmed; failed: none; undecided: no verdict
    types: list[str] | None = None  # the confirmed type of each equation
    checks: list[StatementCheck] = Field(default_factory=list)
    detail: str = ""


def bridge_command(name: str, typed_name: str) -> str:
    return f"example : type_of% @{name} = type_of% @{typed_name} := rfl"


def literal_command(right: str, kind: str, normal: str) -> str:
    return f"example : (({right}) : {kind}) = ({normal}) := by norm_num"


def typed_name(statement: str, index: int) -> str:
    return f"{statement_name(statement)}_answer_{index}"


async def confirm_answer(
    parsed: Statement, statement: str, proposals: list[Proposal], verifier: Verifier, *, header: str
) -> AnswerConfirmation:
    """Run every proposal's commands after our statement; the one proposal Lean confirms, if any."""
    name = statement_name(statement)
    commands: list[tuple[int, str, str, str]] = []  # (proposal, kind, tactic, command)
    for index, proposal in enumerate(proposals):
        commands.append((index, "answer_statement", "", proposal.declaration))
        commands.append((index, "answer_bridge", "rfl", bridge_command(name, typed_name(statement, index))))
        for right, kind, normal in proposal.literals:
            commands.append((index, "answer_literal", "norm_num", literal_command(right, kind, normal)))
    results = await verifier.check_sequence(
        [declaration_command(parsed, name), *(command for _, _, _, command in commands)], header
    )
    statement_ok = bool(results) and elaborated_ok(results[0])
    checks: list[StatementCheck] = []
    passed = [True] * len(proposals)
    undecided = not results or results[0].infra_status != InfraStatus.ok
    for position, (index, kind, tactic, command) in enumerate(commands, start=1):
        result = results[position] if position < len(results) else None
        if result is None:
            outcome, messages = CheckOutcome.undecided, ["no result: the Lean sequence ended early"]
        else:
            outcome, messages = _command_outcome(kind, result, statement_ok), _messages(result)
        undecided |= outcome == CheckOutcome.undecided
        passed[index] &= outcome == CheckOutcome.proved
        checks.append(StatementCheck(kind=kind, tactic=tactic, command=command, outcome=outcome, messages=messages))
    if undecided:
        failure = next((r for r in results if r.infra_status != InfraStatus.ok), None)
        detail = f"Lean gave no verdict ({failure.infra_status}: {failure.detail or ''})" if failure else ""
        return AnswerConfirmation(
            outcome=CheckOutcome.undecided, checks=checks, detail=detail or "Lean gave no verdict"
        )
    if not statement_ok:
        errors = [m.text.splitlines()[0] for m in results[0].messages if m.severity == "error"][:2]
        return AnswerConfirmation(
            outcome=CheckOutcome.failed, checks=checks, detail=f"our statement did not elaborate: {errors}"
        )
    confirmed = [proposals[index] for index, ok in enumerate(passed) if ok]
    if len(confirmed) != 1:
        detail = (
            "Lean confirmed none of the proposed types"
            if not confirmed
            else f"Lean confirmed {len(confirmed)} readings at once: none is released"
        )
        return AnswerConfirmation(outcome=CheckOutcome.failed, checks=checks, detail=detail)
    return AnswerConfirmation(outcome=CheckOutcome.proved, types=confirmed[0].types, checks=checks)


def _command_outcome(kind: str, result: LeanResult, statement_ok: bool) -> CheckOutcome:
    if kind != "answer_statement":
        return check_outcome(result, statement_ok)
    # our typed statement ends in sorry on purpose: it must elaborate with nothing worse than that warning
    if result.infra_status != InfraStatus.ok:
        return CheckOutcome.undecided
    return CheckOutcome.failed if result.has_error or not statement_ok else CheckOutcome.proved


def _messages(result: LeanResult) -> list[str]:
    messages = [m.text.splitlines()[0] if m.text else "" for m in result.messages][:3]
    if result.infra_status != InfraStatus.ok:
        messages.append(f"{result.infra_status}: {result.detail or ''}")
    return messages
