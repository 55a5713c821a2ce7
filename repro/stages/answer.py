"""Stage 9: the answer our statement gives, confirmed by Lean, never read from the prover's text.

Sound before complete: a wrong released answer is the worst outcome this project has.

- **From our statement** (:func:`statement_answer`): Python proposes where the answer is
  (:mod:`repro.stages.answer_shape`: one equation ``L = literal`` or a tuple ``x = a ∧ y = b`` after the
  conclusion's bindings) and which types the literal may be a value of
  (:mod:`repro.lean.text.answer_literal`); the left side must depend on the statement's variables
  (:mod:`repro.stages.answer_probe`, adversary A4); then our own Lean commands
  (:mod:`repro.lean.answer_checks`) confirm the equation's type and the value. What is released is the
  value Lean confirmed, in normal form, with its form (``answer_type``), its Lean type and the
  statement's own text (and, for a closed form, its LaTeX).
- **A witness**: for a conclusion ``∃ x : T, P x`` whose body has no premise, disjunction, negation or
  binder at any depth (:func:`repro.lean.statement_checks.witness_variables`), the extraction model,
  shown the question and our statement only, proposes literals of those types, and our Lean command
  proves the statement with them (:func:`repro.lean.statement_checks.check_witness`).
- Anything else gives no answer, with its reason (:class:`repro.records.NoAnswerReason`).

A tuple's values are in the statement's order; the question may ask them in another order, so the
extraction model names the order (a permutation of our variable names, nothing else is read), and
without one no answer is released. The candidate is then classified; only ``final`` is retained.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from repro.config import ModelSettings
from repro.lean.answer_checks import Proposal, confirm_answer, typed_name
from repro.lean.protocol import Verifier
from repro.lean.statement_checks import (
    CheckOutcome,
    StatementCheck,
    check_unique,
    check_witness,
    normal_witness,
    witness_variables,
)
from repro.lean.text import LeanCode
from repro.lean.text.answer_scope import NUMERIC_TYPE_NAMES, expand_lets
from repro.lean.text.lexer import Token, lex, significant
from repro.llm.client import ModelClient
from repro.llm.json_answers import ask_json
from repro.llm.protocol import ModelCallError
from repro.records import AnswerForm, AttemptStatus, Candidate, NoAnswerReason, ReasonCode
from repro.stages.answer_probe import dependence
from repro.stages.answer_shape import AnswerShape, NoShape, answer_shape
from repro.stages.common import (
    StageResult,
    Stopwatch,
    account,
    chat_request,
    input_hash,
    statement_prompt,
)

# the version of the evidence a stored answer attempt keeps of the Lean confirmations that decided it
# (red2 R2-9): a candidate's answer is released only with today's (``Candidate.answer_evidence``). 2: a
# witness is also proved unique, a tuple's order is read from the question or two agreeing model replies.
ANSWER_EVIDENCE = "answer-stage-2"

_UNEVALUATED = re.compile(r"\d\s*[+*^]\s*\d|\d\s*-\s*\d|\d\s*/\s*\d|√|Real\.sqrt|\bsqrt\b|π|Real\.pi|\.log|\bexp\b")


class ExtractAnswer(BaseModel):
    answer: str

    @field_validator("answer", mode="before")
    @classmethod
    def _text(cls, value: object) -> str:
        return str(value).strip()


class AnswerOrder(BaseModel):
    order: list[str]

    @field_validator("order", mode="before")
    @classmethod
    def _names(cls, value: object) -> list[str]:
        if isinstance(value, str):
            value = [part.strip() for part in value.split(",")]
        if not isinstance(value, list):
            raise ValueError("order must be a list of variable names")
        return [str(part).strip() for part in value]


class ClassifyAnswer(BaseModel):
    answer_class: Literal["final", "intermediate", "wrong_target", "unknown"]
    reason: str = ""

    @model_validator(mode="before")
    @classmethod
    def _class_key(cls, data: object) -> object:
        if isinstance(data, dict) and "class" in data and "answer_class" not in data:
            data = {k: v for k, v in data.items() if k != "class"} | {
                "answer_class": str(data["class"]).strip().lower()
            }
        return data


class StatementAnswer(BaseModel):
    """The answer our statement gives, as Lean confirmed it, or why there is none."""

    answer: str | None = None  # what is released (``new_answer``); for a tuple, in the statement's order
    form: AnswerForm | None = None
    lean_types: list[str] = Field(default_factory=list)  # one per value
    lean_text: str | None = None  # the statement's own text of the value(s)
    latex: str | None = None
    variables: list[str] = Field(default_factory=list)  # a tuple's variables, in the statement's order
    values: list[str] = Field(default_factory=list)  # each value's released text
    evaluated: bool = True
    method: Literal["statement", "witness", "none"] = "statement"
    reason: NoAnswerReason | None = None
    detail: str = ""
    undecided: bool = False  # Lean gave no verdict: the candidate stays unfinished
    checks: list[StatementCheck] = Field(default_factory=list)

    @property
    def found(self) -> bool:
        """An answer Lean confirmed, in a finished form (an unevaluated one is classified intermediate)."""
        return self.answer is not None and self.evaluated


def _none(reason: NoAnswerReason, detail: str, **values: object) -> StatementAnswer:
    return StatementAnswer.model_validate({"reason": reason, "detail": detail, "method": "none", **values})


def proposed_answer(statement: str) -> str | None:
    """What Python would propose from the statement alone (no Lean): for feedback and audit text only.

    Never released: only :func:`statement_answer` (Lean-confirmed) gives the released answer.
    """
    shape = answer_shape(statement)
    if isinstance(shape, NoShape):
        return None
    values = [part.literal.release for part in shape.parts]
    return tuple_text(values) if shape.kind == "tuple" else values[0]


def _proposals(shape: AnswerShape, statement: str) -> list[Proposal] | StatementAnswer:
    """The typed readings Lean is asked to confirm, or why none is proposed."""
    if shape.kind == "tuple":
        types = tuple(shape.scope.variables[part.variable or ""] for part in shape.parts)
        for part, kind in zip(shape.parts, types, strict=True):
            if kind not in part.literal.types:
                return _none(
                    NoAnswerReason.not_a_value,
                    f"{part.variable} is of type {kind} and {part.literal.text!r} is no literal of it",
                )
        return [_proposal(shape, statement, 0, types)]
    part = shape.parts[0]
    expanded = expand_lets(significant(lex(part.left)), shape.scope.lets)
    if expanded is None:
        return _none(NoAnswerReason.not_evaluable, "the let chain is too long to expand")
    kinds: list[str] = []
    why = NoAnswerReason.constant
    for kind in part.literal.types:
        if shape.scope.variables:
            depends = dependence(expanded, kind, shape.scope.variables)
            if depends is None:
                why = NoAnswerReason.not_evaluable
                continue
        else:
            depends = not _restates_a_numeral([token for token, _ in expanded], part.right, kind)
        if depends:
            kinds.append(kind)
    if not kinds:
        detail = (
            "the left side does not depend on the statement's variables: its value is no answer about them"
            if why == NoAnswerReason.constant
            else "whether the left side depends on the statement's variables cannot be decided"
        )
        return _none(why, detail)
    return [_proposal(shape, statement, index, (kind,)) for index, kind in enumerate(kinds)]


def _proposal(shape: AnswerShape, statement: str, index: int, types: tuple[str, ...]) -> Proposal:
    return Proposal(
        types=list(types),
        declaration=shape.typed_statement(typed_name(statement, index), types),
        literals=[(part.right, kind, part.literal.normal) for part, kind in zip(shape.parts, types, strict=True)],
    )


def _restates_a_numeral(tokens: list[Token], right: str, kind: str) -> bool:
    """Whether the left side is only a numeral: ``(7 : ℕ)``, ``((5))``, ``2.5``, or the right's fraction.

    Brackets and ascriptions aside. A fraction is a numeral only in ℚ ℝ ℂ, and only as the right side
    writes it: ``(10 : ℕ) / 2`` is a division and ``(6 : ℚ) / 4 = 3 / 2`` reduces a fraction.
    """
    kept = _bare(tokens)
    if re.fullmatch(r"-?[0-9]+(?:\.[0-9]+)?", kept):
        return True
    fraction = kind in ("ℚ", "ℝ", "ℂ") and re.fullmatch(r"-?[0-9]+/[0-9]+", kept) is not None
    return fraction and kept == _bare(significant(lex(right)))


def _bare(tokens: list[Token]) -> str:
    """A term's text without brackets and ascriptions: ``(15 : ℚ) / 4`` is ``15/4``."""
    return "".join(t.text for t in tokens if t.text not in ("(", ")", ":") and t.name not in NUMERIC_TYPE_NAMES)


async def statement_answer(statement: str, verifier: Verifier | None, *, header: str) -> StatementAnswer:
    """The answer our statement gives, confirmed by our own Lean commands (see the module docstring)."""
    shape = answer_shape(statement)
    if isinstance(shape, NoShape):
        return _none(shape.reason, shape.detail)
    proposals = _proposals(shape, statement)
    if isinstance(proposals, StatementAnswer):
        return proposals
    if verifier is None:
        return _none(NoAnswerReason.no_verdict, "no Lean backend to confirm the answer", undecided=True)
    confirmation = await confirm_answer(shape.statement, statement, proposals, verifier, header=header)
    if confirmation.outcome == CheckOutcome.undecided:
        return _none(NoAnswerReason.no_verdict, confirmation.detail, undecided=True, checks=confirmation.checks)
    if confirmation.outcome != CheckOutcome.proved or confirmation.types is None:
        return _none(NoAnswerReason.lean_refused, confirmation.detail, checks=confirmation.checks)
    literals = [part.literal for part in shape.parts]
    values = [literal.release for literal in literals]
    for literal in literals:
        if not denotes(literal.release, literal.exact_value):
            return _none(
                NoAnswerReason.not_a_value,
                f"the released text {literal.release!r} does not denote the value Lean confirmed when math-verify"
                " reads it",
                checks=confirmation.checks,
            )
    tuple_form = shape.kind == "tuple"
    evaluated = all(literal.evaluated for literal in literals)
    return StatementAnswer(
        answer=tuple_text(values) if tuple_form else values[0],
        form=AnswerForm.tuple if tuple_form else AnswerForm(literals[0].form),
        lean_types=confirmation.types,
        lean_text=", ".join(literal.text for literal in literals),
        latex="(" + ", ".join(literal.latex for literal in literals) + ")" if tuple_form else literals[0].latex,
        variables=[part.variable or "" for part in shape.parts] if tuple_form else [],
        values=values,
        evaluated=evaluated,
        reason=None if evaluated else NoAnswerReason.unevaluated,
        detail="" if evaluated else "the value Lean confirmed is written as an unevaluated computation",
        checks=confirmation.checks,
    )


def denotes(text: str, exact: Any) -> bool:
    """Whether math-verify, as users grade with it, reads ``text`` as exactly ``exact`` (a sympy value), and
    grades ``text`` correct against itself (red2 R2-3: every released answer round-trips)."""
    import sympy
    from math_verify import verify

    from repro.evaluate.grading import _parse_answer, compare_answers

    try:
        parsed: list[Any] = [item for item in _parse_answer(text) if not isinstance(item, str)]
        if not parsed or not compare_answers(text, text).correct:
            return False
        # math-verify reads ``i`` as a symbol (with varying assumptions): read as the imaginary unit here
        units = [item.subs({s: sympy.I for s in item.free_symbols if s.name == "i"}) for item in parsed]
        return bool(verify([sympy.sympify(exact)], units))
    except Exception:  # noqa: BLE001 - a text math-verify cannot read is one it cannot grade
        return False


def has_unevaluated_operation(candidate: str) -> bool:
    """``3600 / 12`` or ``2 + 5`` are unevaluated; a reduced fraction such as ``3 / 4`` is a value."""
    plain = literal_text(candidate)
    fraction = re.match(r"^\(?\s*(-?[0-9]+)\s*\)?\s*/\s*\(?\s*([0-9]+)\s*\)?$", plain)
    if fraction:
        numerator, denominator = int(fraction.group(1)), int(fraction.group(2))
        return denominator in (0, 1) or math.gcd(numerator, denominator) != 1
    return _UNEVALUATED.search(plain) is not None


def is_existential(statement: str) -> bool:
    """Whether the conclusion is ``∃ x : T, P x`` whose witness our Lean command can check.

    Fail closed (adversary S3, round 4 A5): see :func:`repro.lean.statement_checks.witness_variables`.
    """
    return witness_variables(statement) is not None


def _answer_output(answer: StatementAnswer) -> dict[str, object]:
    """What the stored attempt keeps of the answer (and of every Lean command that decided it)."""
    return {
        "candidate": answer.answer,
        "method": answer.method,
        "form": answer.form.value if answer.form else None,
        "lean_types": answer.lean_types,
        "lean_text": answer.lean_text,
        "latex": answer.latex,
        "variables": answer.variables,
        "no_answer": answer.reason.value if answer.reason else None,
        "why": answer.detail,
        "answer_checks": [check.model_dump(mode="json") for check in answer.checks],
        "evidence": ANSWER_EVIDENCE,
    }


async def recover_answer(
    question: str,
    statement: str,
    verified_code: str | LeanCode,
    extract_client: ModelClient,
    extract_settings: ModelSettings,
    classify_client: ModelClient,
    classify_settings: ModelSettings,
    *,
    attempt: int,
    verifier: Verifier | None = None,
    header: str = "",
) -> StageResult:
    """``verified_code`` only keys the stored attempt: nothing in it is shown to a model or read as an answer."""
    clock = Stopwatch()
    verified_text = verified_code.text if isinstance(verified_code, LeanCode) else verified_code
    result = StageResult(
        status=AttemptStatus.passed, input_hash=input_hash("answer", statement, verified_text, ANSWER_EVIDENCE)
    )
    try:
        answer = await statement_answer(statement, verifier, header=header)
        if answer.answer is None and not answer.undecided and answer.reason == NoAnswerReason.existential:
            if is_existential(statement):
                model = (extract_client, extract_settings)
                answer = await _witness_answer(result, question, statement, attempt, verifier, header, model)
            else:
                answer = _none(NoAnswerReason.existential, "an ∃ whose witness our Lean command cannot check")
        result.output = _answer_output(answer) | result.output
        if answer.undecided:
            result.status, result.reason = AttemptStatus.error, ReasonCode.lean_unavailable
            return _done(result, clock)
        if answer.answer is None:
            result.status, result.reason = AttemptStatus.rejected, ReasonCode.answer_not_grounded
            return _done(result, clock)
        if answer.form == AnswerForm.tuple:  # one rule for every tuple, a witness's and a statement's (R2-1)
            model = (extract_client, extract_settings)
            ordered = await _question_order(result, question, statement, answer, attempt, model)
            if ordered is None:
                result.status, result.reason = AttemptStatus.rejected, ReasonCode.answer_not_grounded
                result.output["no_answer"] = NoAnswerReason.other_shape.value
                return _done(result, clock)
            answer = ordered
            result.output.update(candidate=answer.answer, variables=answer.variables, latex=answer.latex)
        candidate = answer.answer or ""
        if not answer.evaluated or (answer.method == "witness" and has_unevaluated_operation(candidate)):
            answer_class, why = "intermediate", "the answer is an unevaluated computation"
            result.output["no_answer"] = NoAnswerReason.unevaluated.value
        else:
            prompt = statement_prompt("answer_classify", question=question, statement=statement, candidate=candidate)
            classification = await ask_json(
                classify_client,
                chat_request(classify_settings, prompt, sample_offset=attempt, json_answer=True),
                ClassifyAnswer,
            )
            account(result, classify_client, classification.responses)
            answer_class = classification.value.answer_class if classification.value else "unknown"
            why = classification.value.reason if classification.value else "unparseable classification"
    except ModelCallError as error:
        result.status, result.reason = AttemptStatus.error, ReasonCode.model_call_failed
        result.output["error"] = str(error)
        return result
    result.output.update({"answer_class": answer_class, "class_reason": why})
    if answer_class != "final":
        result.status, result.reason = AttemptStatus.rejected, ReasonCode.answer_not_final
    return _done(result, clock)


def apply_answer(candidate: Candidate, output: dict[str, Any]) -> None:
    """Put a passed answer attempt's answer on the candidate (the release reads it from there)."""
    candidate.new_answer = literal_text(str(output["candidate"]))
    candidate.answer_class = output.get("answer_class")
    candidate.answer_form = output.get("form")
    candidate.answer_lean_type = ", ".join(output.get("lean_types") or []) or None
    candidate.answer_lean = output.get("lean_text")
    candidate.answer_variables = ", ".join(output.get("variables") or []) or None
    confirmed = has_answer_evidence(output)
    candidate.answer_confirmed = candidate.new_answer if confirmed else None
    candidate.answer_evidence = ANSWER_EVIDENCE if confirmed else None


def has_answer_evidence(output: dict[str, Any]) -> bool:
    """Whether a stored answer attempt holds today's evidence for its answer: a statement answer with the
    Lean confirmations that proved it, a witness with its proof and its uniqueness proof (red2 R2-9)."""
    if output.get("evidence") != ANSWER_EVIDENCE or not output.get("candidate"):
        return False
    if output.get("method") == "statement":
        checks = output.get("answer_checks") or []
        return bool(checks) and any(check.get("outcome") == CheckOutcome.proved for check in checks)
    if output.get("method") == "witness":
        witness, unique = output.get("witness_check"), output.get("uniqueness_check")
        return all(isinstance(c, dict) and c.get("outcome") == CheckOutcome.proved for c in (witness, unique))
    return False


def _done(result: StageResult, clock: Stopwatch) -> StageResult:
    result.elapsed_s = clock.elapsed()
    return result


async def _witness_answer(
    result: StageResult,
    question: str,
    statement: str,
    attempt: int,
    verifier: Verifier | None,
    header: str,
    model: tuple[ModelClient, ModelSettings],
) -> StatementAnswer:
    """The extraction model proposes the ∃ witness (shown the question and our statement only); Lean checks."""
    extract_client, settings = model
    prompt = statement_prompt("answer_extract", question=question, statement=statement, literals=False)
    extraction = await ask_json(
        extract_client,
        chat_request(settings, prompt, sample_offset=attempt, json_answer=True),
        ExtractAnswer,
    )
    account(result, extract_client, extraction.responses)
    proposed = extraction.value.answer if extraction.value else ""
    result.output["proposed"] = proposed
    variables = witness_variables(statement) or []
    witness = witness_parts(proposed, statement) if proposed else None
    if witness is None:
        result.output["witness_check"] = "refused: a witness must be numeric literals of the ∃ variables' types"
        return _none(NoAnswerReason.existential, "the proposed witness is not literals of the ∃ variables' types")
    if verifier is None:
        result.output["witness_check"] = "no Lean backend to check the witness"
        return _none(NoAnswerReason.no_verdict, "no Lean backend to check the witness", undecided=True)
    check = await check_witness(statement, witness, verifier, header=header)
    result.output["witness_check"] = check.model_dump(mode="json")
    if check.outcome == CheckOutcome.undecided:
        return _none(NoAnswerReason.no_verdict, "Lean gave no verdict on the witness", undecided=True)
    if check.outcome != CheckOutcome.proved:
        return _none(NoAnswerReason.existential, "our Lean command does not prove the statement with the witness")
    unique = await check_unique(statement, witness, verifier, header=header)
    result.output["uniqueness_check"] = unique.model_dump(mode="json")
    if unique.outcome != CheckOutcome.proved:
        # a body Lean does not show to pin the witness gives no answer, whatever the reason (red2 R2-5): Lean's
        # silence is no evidence of uniqueness, and a witness Lean accepts is then *a* value, not *the* answer
        return _none(
            NoAnswerReason.existential,
            "our Lean commands do not prove the witness is the only value of the ∃ body: it pins no answer",
        )
    forms = {_witness_form(part) for part in witness}
    several = len(witness) > 1
    return StatementAnswer(
        answer=tuple_text(witness) if several else witness[0],
        form=AnswerForm.tuple if several else AnswerForm(forms.pop()),
        lean_types=[kind for _, kind in variables],
        lean_text=", ".join(witness),
        latex=tuple_text([_witness_latex(part) for part in witness]) if several else _witness_latex(witness[0]),
        variables=[name for name, _ in variables] if several else [],
        values=witness,
        method="witness",
        checks=[check],
    )


def _witness_form(part: str) -> str:
    return AnswerForm.fraction.value if "/" in part else AnswerForm.integer.value


def _witness_latex(part: str) -> str:
    if "/" not in part:
        return part
    top, bottom = (piece.strip() for piece in part.split("/"))
    sign = "-" if top.startswith("-") else ""
    return f"{sign}\\frac{{{top.lstrip('-')}}}{{{bottom}}}"


def order_in_question(question: str, variables: list[str]) -> list[str] | None:
    """The order the question writes our variables in, when it writes them out: ``(x, y)``, ``(a, b, c)``.

    Deterministic (red2 R2-6): a bracketed list in the question whose items are exactly our variable names,
    each once. None when there is none, or two such lists disagree (then the model is asked, twice).
    """
    wanted = set(variables)
    found: set[tuple[str, ...]] = set()
    for match in re.finditer(r"[(\[]\s*([^()\[\]]*?)\s*[)\]]", question):
        items = [item.strip().strip("$").strip() for item in match.group(1).split(",")]
        if len(items) == len(variables) and set(items) == wanted and len(set(items)) == len(items):
            found.add(tuple(items))
    return list(found.pop()) if len(found) == 1 else None


async def _question_order(
    result: StageResult,
    question: str,
    statement: str,
    answer: StatementAnswer,
    attempt: int,
    model: tuple[ModelClient, ModelSettings],
) -> StatementAnswer | None:
    """The tuple in the order the question asks for its values (red2 R2-1, R2-6: witness and statement
    tuples alike), or None.

    When the question writes our variables out in brackets, that is the order, with no model asked.
    Otherwise the model is asked twice, our variables listed in two different orders (the statement's,
    then reversed); each reply must be a permutation of them and the two must agree, or no answer.
    """
    written = order_in_question(question, answer.variables)
    if written is not None:
        result.output["order"] = written
        result.output["order_from"] = "question"
        return _reordered(answer, written)
    extract_client, settings = model
    replies: list[list[str]] = []
    for listing in (answer.variables, list(reversed(answer.variables))):
        prompt = statement_prompt(
            "answer_order", question=question, statement=statement, literals=False, variables=", ".join(listing)
        )
        reply = await ask_json(
            extract_client,
            chat_request(settings, prompt, sample_offset=attempt, json_answer=True),
            AnswerOrder,
        )
        account(result, extract_client, reply.responses)
        order = reply.value.order if reply.value else []
        replies.append(order)
        if sorted(order) != sorted(answer.variables) or len(set(order)) != len(order):
            result.output["order"] = order
            result.output["why"] = f"the order {json.dumps(order)} is not a permutation of {answer.variables}"
            return None
    result.output["order"] = replies[0]
    result.output["order_from"] = "model, asked twice"
    if replies[0] != replies[1]:
        result.output["why"] = (
            f"asked twice with the variables listed in two orders, the model gave {json.dumps(replies[0])} and"
            f" {json.dumps(replies[1])}: no order is established"
        )
        return None
    return _reordered(answer, replies[0])


def _reordered(answer: StatementAnswer, order: list[str]) -> StatementAnswer:
    position = {name: index for index, name in enumerate(answer.variables)}
    indices = [position[name] for name in order]
    latex_parts = (answer.latex or "").strip("()").split(", ")
    return answer.model_copy(
        update={
            "answer": tuple_text([answer.values[i] for i in indices]),
            "values": [answer.values[i] for i in indices],
            "variables": order,
            "lean_types": [answer.lean_types[i] for i in indices],
            "latex": "(" + ", ".join(latex_parts[i] for i in indices) + ")"
            if len(latex_parts) == len(indices)
            else answer.latex,
        }
    )


def witness_parts(candidate: str, statement: str) -> list[str] | None:
    """The proposed witness as normal-form literals of the ``∃`` variables' types, or None.

    Round 4, A5: a part must be a literal of its variable's type as our statement writes it (ℕ: digits,
    ℤ: a sign allowed, ℚ/ℝ: also ``a/b`` or a decimal); ``7/2`` for an ℕ variable is refused, not read
    as Lean would read it (3). None also when the statement's ∃ types cannot be read.
    """
    variables = witness_variables(statement)
    parts = [part.strip() for part in candidate.split(",")]
    if variables is None or len(parts) != len(variables):
        return None
    normal = [normal_witness(part, kind) for part, (_, kind) in zip(parts, variables, strict=True)]
    return [n for n in normal if n is not None] if all(n is not None for n in normal) else None


class AnswerRecheck(BaseModel):
    """Whether a recorded answer is the one our statement gives, judged as the answer stage judged it."""

    method: Literal["statement", "none", "witness"]
    grounded: bool
    # Lean gave no verdict (timeout, unavailable): neither grounded nor refused
    no_verdict: bool = False
    detail: str = ""


async def recheck_answer(
    statement: str, answer: str, verifier: Verifier, *, header: str, variables: list[str] | None = None
) -> AnswerRecheck:
    """Re-check a recorded answer (``repro reverify``) from our statement alone, never from proof text.

    A statement answer must be the value our Lean commands confirm again (a tuple: the same value for
    each variable, in the recorded order when ``variables`` names it); an ``∃`` answer is a witness our
    Lean command must prove again; any other answer is not grounded.
    """
    found = await statement_answer(statement, verifier, header=header)
    if found.undecided:
        return AnswerRecheck(method="statement", grounded=False, no_verdict=True, detail="Lean gave no verdict")
    if found.answer is not None:
        expected = found.answer or ""
        if found.form == AnswerForm.tuple and variables and sorted(variables) == sorted(found.variables):
            by_name = dict(zip(found.variables, found.values, strict=True))
            expected = tuple_text([by_name[name] for name in variables])
        same = literal_text(answer) == expected
        return AnswerRecheck(
            method="statement", grounded=same, detail="" if same else f"the statement gives {expected!r}"
        )
    if found.reason != NoAnswerReason.existential or not is_existential(statement):
        return AnswerRecheck(method="none", grounded=False, detail=f"our statement gives no answer: {found.detail}")
    parts = [part.strip() for part in untupled(answer).split(",")]
    names = [name for name, _ in witness_variables(statement) or []]
    if variables and len(parts) > 1 and sorted(variables) == sorted(names) and len(variables) == len(parts):
        by_name = dict(zip(variables, parts, strict=True))  # a tuple released in the question's order
        parts = [by_name[name] for name in names]
    witness = witness_parts(", ".join(parts), statement)
    if witness is None:
        return AnswerRecheck(
            method="witness", grounded=False, detail="a witness must be numeric literals of the ∃ variables' types"
        )
    check = await check_witness(statement, witness, verifier, header=header)
    if check.outcome == CheckOutcome.undecided:
        return AnswerRecheck(
            method="witness", grounded=False, no_verdict=True, detail="Lean gave no verdict on the witness"
        )
    if check.outcome == CheckOutcome.proved:
        unique = await check_unique(statement, witness, verifier, header=header)
        if unique.outcome != CheckOutcome.proved:
            return AnswerRecheck(
                method="witness",
                grounded=False,
                no_verdict=unique.outcome == CheckOutcome.undecided,
                detail="our Lean commands do not prove the witness is the only value of the ∃ body",
            )
    proved = check.outcome == CheckOutcome.proved
    return AnswerRecheck(
        method="witness",
        grounded=proved,
        detail=f"witness proved by {check.tactic}"
        if proved
        else "our Lean command does not prove the statement with it",
    )


def tuple_text(values: list[str]) -> str:
    """An ordered tuple as released: ``(-11, 15)``; math-verify grades it in order (``1, 4`` would be a set)."""
    return "(" + ", ".join(values) + ")"


def untupled(answer: str) -> str:
    """The values of a released tuple, ``, ``-separated (a single value as it is)."""
    text = answer.strip()
    return text[1:-1] if text.startswith("(") and text.endswith(")") else text


def literal_text(candidate: str) -> str:
    """A released answer without Lean type ascriptions: ``(3 : ℚ) / 4`` becomes ``3 / 4``."""
    return re.sub(r"\(\s*(-?\s*[0-9]+(?:\.[0-9]+)?)\s*:\s*[ℕℤℚℝℂ]\w*\s*\)", r"\1", candidate).strip()


def screener_disagrees(screener: str | None, retained: str | None) -> bool | None:
    """Whether the screen's independent answer differs from the retained one (None if either is missing).

    A flag for audit only: the retained answer comes from our Lean-confirmed statement, never from the screen.
    """
    if not screener or not retained:
        return None
    if " ".join(screener.split()) == " ".join(retained.split()):
        return False
    try:
        from math_verify import parse, verify

        return not verify(parse(f"${retained}$"), parse(f"${screener}$"))
    except Exception:  # math-verify raises on input it cannot parse; then only the text can be compared
        return True


__all__ = [
    "AnswerRecheck",
    "apply_answer",
    "StatementAnswer",
    "has_unevaluated_operation",
    "is_existential",
    "literal_text",
    "proposed_answer",
    "tuple_text",
    "untupled",
    "recheck_answer",
    "recover_answer",
    "screener_disagrees",
    "statement_answer",
    "witness_parts",
]
