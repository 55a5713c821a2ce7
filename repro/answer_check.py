"""``repro check-proof --answer-only``: the answer each statement would release, before any prover runs.

For our statement alone, through the configured Lean backend, the value Lean confirms (its type and
form) or the reason there is none (:func:`repro.stages.answer.statement_answer`); no model is asked, so
an ``∃`` statement is reported as needing a witness. Our statement checks run first, as in the pipeline
(red2 R2-8): a statement found vacuous, flagged or undecided reports no answer with that outcome as its
reason, since the release would never publish one; so the answer reported is exactly what a release holds.
A batch reads JSONL rows with ``statement`` (and ``id``; the line number otherwise), names every bad row
before any Lean check, and writes one result row per input row, with a summary per form and per reason
(what ``benchmarks/answers_mathd.py`` measures).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from repro.exit_codes import ExitCode, ReproError
from repro.lean.protocol import Verifier
from repro.lean.statement_checks import check_statement
from repro.lean.text import without_header
from repro.stages.answer import StatementAnswer, statement_answer

# why a statement whose checks did not show it satisfiable gives no answer (the release withholds it)
_CHECK_DETAIL = {
    "vacuous": "our Lean commands derived False from the hypotheses: any answer would follow",
    "flagged": "our statement checks neither found it vacuous nor showed its hypotheses can hold: withheld",
    "undecided": "Lean gave no verdict on our statement checks: withheld",
}


class AnswerInputError(ReproError, ValueError):
    """A batch input file or row is unusable; the message names file, line and field."""


class AnswerRow(BaseModel):
    id: str
    statement: str


class AnswerResult(BaseModel):
    """One statement's answer as ``--answer-only`` reports it."""

    id: str
    answer: str | None = None
    form: str | None = None
    lean_types: list[str] = Field(default_factory=list)
    lean_text: str | None = None
    latex: str | None = None
    variables: list[str] = Field(default_factory=list)
    reason: str | None = None
    detail: str = ""
    undecided: bool = False
    # our statement checks' outcome (satisfiable | vacuous | flagged | undecided): only satisfiable releases
    statement_check: str | None = None
    backend: str
    real_lean: bool

    @classmethod
    def of(cls, row_id: str, found: StatementAnswer, verifier: Verifier) -> AnswerResult:
        return cls(
            id=row_id,
            answer=found.answer if found.found else None,
            form=found.form.value if found.form and found.found else None,
            lean_types=found.lean_types,
            lean_text=found.lean_text,
            latex=found.latex if found.found else None,
            variables=found.variables,
            reason=found.reason.value if found.reason else None,
            detail=found.detail,
            undecided=found.undecided,
            backend=verifier.backend_id,
            real_lean=verifier.real_lean,
        )


class AnswerSummary(BaseModel):
    total: int
    answered: int
    by_form: dict[str, int]
    no_answer: dict[str, int]
    undecided: int
    backend: str
    real_lean: bool

    @property
    def exit_code(self) -> int:
        if self.undecided:
            return int(ExitCode.unfinished)
        return int(ExitCode.ok if self.real_lean else ExitCode.fake_backend)


def read_answer_rows(path: Path) -> list[AnswerRow]:
    """Every row, or :class:`AnswerInputError` naming the first bad line and field (nothing is checked)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise AnswerInputError(f"{path}: cannot read it ({error})") from None
    rows: list[AnswerRow] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as error:
            raise AnswerInputError(f"{path}:{number}: not a JSON object ({error.msg})") from None
        if not isinstance(data, dict):
            raise AnswerInputError(f"{path}:{number}: not a JSON object")
        data.setdefault("id", str(number))
        try:
            row = AnswerRow.model_validate({"id": str(data["id"]), "statement": data.get("statement")})
        except ValidationError:
            raise AnswerInputError(f"{path}:{number}: field 'statement': missing or not a string") from None
        if row.id in seen:
            raise AnswerInputError(f"{path}:{number}: field 'id': {row.id!r} appears twice")
        seen.add(row.id)
        rows.append(row)
    return rows


async def answer_rows(
    rows: list[AnswerRow],
    verifier: Verifier,
    *,
    header: str,
    progress: Callable[[int, int], None] | None = None,
) -> list[AnswerResult]:
    results = []
    for index, row in enumerate(rows, start=1):
        statement = without_header(row.statement)
        facts = await check_statement(statement, verifier, header=header)
        found = await statement_answer(statement, verifier, header=header)
        result = AnswerResult.of(row.id, found, verifier).model_copy(update={"statement_check": facts.status})
        if facts.status != "satisfiable" and found.found:  # else the statement's own reason says more
            result = result.model_copy(
                update={
                    "answer": None,
                    "form": None,
                    "latex": None,
                    "reason": f"statement_{facts.status}",
                    "detail": _CHECK_DETAIL.get(facts.status, f"statement check: {facts.status}")
                    + f" (the statement alone would give {found.answer})",
                    "undecided": result.undecided or bool(facts.status == "undecided" and facts.infrastructure_failure),
                }
            )
        results.append(result)
        if progress is not None:
            progress(index, len(rows))
    return results


def summarize(results: list[AnswerResult], verifier: Verifier) -> AnswerSummary:
    forms = Counter(result.form for result in results if result.answer is not None and result.form)
    reasons = Counter(result.reason or "unknown" for result in results if result.answer is None)
    return AnswerSummary(
        total=len(results),
        answered=sum(forms.values()),
        by_form=dict(forms.most_common()),
        no_answer=dict(reasons.most_common()),
        undecided=sum(result.undecided for result in results),
        backend=verifier.backend_id,
        real_lean=verifier.real_lean,
    )
