"""Stage 7: recover the answer from OUR verified statement, never from the prover's text.

A literal on the right of the conclusion's top-level ``=`` (or a set literal) is read
deterministically: the statement reader works on lexed tokens, strips leading ``let``/``have``
bindings, ``∀`` binders and hypotheses, and never cuts the signature at "the first ``:=``".
Otherwise the extraction model is shown the question and our statement (never the prover's code:
a proven irrelevant helper such as ``lemma final_answer_value : (8:ℕ) = 8`` must not steer it) and
proposes an answer:

- for an existential statement (``∃ x, P x``) the proposal is a witness: it must be numeric literals,
  and our own Lean command must prove the statement with it
  (:func:`repro.lean.statement_checks.check_witness`);
- otherwise (``IsLeast S 5``, disjunctions, ...) each comma-separated part must be a token sequence of
  our statement's conclusion: ``4`` is not grounded by ``maxHeartbeats 400000`` or by ``x₄``.

The candidate is then classified; only ``final`` is retained.
"""

from __future__ import annotations

import math
import re
from typing import Literal

from pydantic import BaseModel, field_validator, model_validator

from repro.config import ModelSettings
from repro.lean.protocol import Verifier
from repro.lean.statement_checks import CheckOutcome, check_witness, is_numeric_literal
from repro.lean.text import (
    LeanCode,
    StatementError,
    final_proposition,
    lean_code,
    read_statement,
    strip_comments,
    top_level_equation,
)
from repro.lean.text.lexer import lex, significant
from repro.llm.client import ModelClient
from repro.llm.json_answers import ask_json
from repro.llm.protocol import ModelCallError
from repro.prompts import render_prompt
from repro.records import AttemptStatus, ReasonCode
from repro.stages.common import StageResult, Stopwatch, account, chat_request, input_hash

_NUMERIC_LITERAL = re.compile(
    r"^\(?\s*-?\s*\d+(?:\.\d+)?\s*(?::\s*[ℕℤℚℝ]\w*)?\s*\)?(?:\s*/\s*\(?\s*\d+(?:\.\d+)?\s*(?::\s*[ℕℤℚℝ]\w*)?\s*\)?)?$"
)
_SET_LITERAL = re.compile(r"^\{\s*[^{}|]*\}$")
_UNEVALUATED = re.compile(r"\d\s*[+*^]\s*\d|\d\s*-\s*\d|\d\s*/\s*\d|√|Real\.sqrt|\bsqrt\b|π|Real\.pi|\.log|\bexp\b")
_META_COMMANDS = re.compile(r"^\s*#(eval|reduce|check|print)\b.*$", re.MULTILINE)


class ExtractAnswer(BaseModel):
    answer: str

    @field_validator("answer", mode="before")
    @classmethod
    def _text(cls, value: object) -> str:
        return str(value).strip()


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


def conclusion(statement: str) -> str:
    """The type after the binders' colon (``let``/``have`` bindings included)."""
    return read_statement(statement).conclusion


def deterministic_answer(statement: str) -> str | None:
    """The literal on the right of the final proposition's single top-level ``=``, if there is one."""
    try:
        target = conclusion(statement)
    except StatementError:
        return None
    proposition, existential = final_proposition(target)
    if existential:
        return None  # the answer is a witness, not the right side of an equation
    equation = top_level_equation(proposition)
    if equation is None:
        return None
    right = " ".join(strip_comments(equation[1], keep_layout=False).split())
    if _NUMERIC_LITERAL.match(right) or _SET_LITERAL.match(right):
        return right
    return None


_FRACTION = re.compile(r"^\(?\s*(-?\d+)\s*\)?\s*/\s*\(?\s*(\d+)\s*\)?$")


def has_unevaluated_operation(candidate: str) -> bool:
    """``3600 / 12`` or ``2 + 5`` are unevaluated; a reduced fraction such as ``3 / 4`` is a value."""
    plain = literal_text(candidate)
    fraction = _FRACTION.match(plain)
    if fraction:
        numerator, denominator = int(fraction.group(1)), int(fraction.group(2))
        return denominator in (0, 1) or math.gcd(numerator, denominator) != 1
    return _UNEVALUATED.search(plain) is not None


def code_without_prose(code: str | LeanCode) -> str:
    """``code`` with comments and string literals blanked: text there is the prover's say-so, not Lean's.

    A ``-- the answer is 42`` comment must neither ground an answer nor steer the extraction model.
    """
    return lean_code(code).without_prose


def grounded(candidate: str, verified_code: str | LeanCode) -> bool:
    """Every comma-separated part appears verbatim in the code, outside comments, strings and meta commands."""
    outside_meta = _META_COMMANDS.sub("", lean_code(verified_code).without_prose)
    parts = [candidate] if candidate.startswith("{") else [p.strip() for p in candidate.split(",")]
    return all(part and part in outside_meta for part in parts)


_SPELLED = {"Nat": "ℕ", "Int": "ℤ", "Rat": "ℚ", "Real": "ℝ"}


def _token_texts(text: str) -> list[str]:
    return [_SPELLED.get(t.text, t.text) for t in significant(lex(text))]


def grounded_in_statement(candidate: str, statement: str) -> bool:
    """Every comma-separated part is a contiguous run of tokens of our statement's conclusion.

    Tokens, not substrings: ``4`` is not in ``400000``, ``x₄`` or a comment, and the prover's text is
    never consulted.
    """
    try:
        tokens = _token_texts(read_statement(statement).conclusion)
    except StatementError:
        return False
    parts = [candidate] if candidate.strip().startswith("{") else [p.strip() for p in candidate.split(",")]
    for part in parts:
        needle = _token_texts(part)
        if not needle or not any(tokens[i : i + len(needle)] == needle for i in range(len(tokens) - len(needle) + 1)):
            return False
    return True


def is_existential(statement: str) -> bool:
    try:
        return final_proposition(read_statement(statement).conclusion)[1]
    except StatementError:
        return False


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
    result = StageResult(status=AttemptStatus.passed, input_hash=input_hash("answer", statement, verified_text))
    candidate = deterministic_answer(statement)
    method = "deterministic"
    try:
        if candidate is None:
            method = "model"
            prompt = render_prompt("answer_extract", question=question, statement=code_without_prose(statement))
            extraction = await ask_json(
                extract_client,
                chat_request(extract_settings, prompt, sample_offset=attempt, json_answer=True),
                ExtractAnswer,
            )
            account(result, extract_client, extraction.responses)
            candidate = extraction.value.answer if extraction.value else None
        result.output = {"candidate": candidate, "method": method}
        if method == "model" and candidate and is_existential(statement):
            result.output["method"] = "witness"
            accepted = await _witness_accepted(result, statement, candidate, verifier, header)
        else:
            accepted = bool(candidate) and (
                method == "deterministic" or grounded_in_statement(candidate or "", statement)
            )
        if not candidate or not accepted:
            if result.status == AttemptStatus.passed:
                result.status, result.reason = AttemptStatus.rejected, ReasonCode.answer_not_grounded
            result.elapsed_s = clock.elapsed()
            return result
        if has_unevaluated_operation(candidate):
            answer_class, why = "intermediate", "the candidate contains an unevaluated operation"
        else:
            prompt = render_prompt("answer_classify", question=question, statement=statement, candidate=candidate)
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
    result.elapsed_s = clock.elapsed()
    return result


def witness_parts(candidate: str) -> list[str] | None:
    """The comma-separated parts of a proposed witness, or None when one is not a numeric literal."""
    witness = [part.strip() for part in candidate.split(",")]
    return witness if all(is_numeric_literal(part) for part in witness) else None


async def _witness_accepted(
    result: StageResult, statement: str, candidate: str, verifier: Verifier | None, header: str
) -> bool:
    """Our Lean command proves the statement with the proposed witness; the check goes to the audit."""
    witness = witness_parts(candidate)
    if witness is None:
        result.output["witness_check"] = "refused: a witness must be numeric literals"
        return False
    if verifier is None:
        result.status, result.reason = AttemptStatus.error, ReasonCode.lean_unavailable
        result.output["witness_check"] = "no Lean backend to check the witness"
        return False
    check = await check_witness(statement, witness, verifier, header=header)
    result.output["witness_check"] = check.model_dump(mode="json")
    if check.outcome == CheckOutcome.undecided:
        result.status, result.reason = AttemptStatus.error, ReasonCode.lean_unavailable
    return check.outcome == CheckOutcome.proved


class AnswerRecheck(BaseModel):
    """Whether a recorded answer is the one our statement gives, judged as the answer stage judged it."""

    method: Literal["deterministic", "statement_tokens", "witness"]
    grounded: bool
    # Lean gave no verdict on the witness (timeout, unavailable): neither grounded nor refused
    no_verdict: bool = False
    detail: str = ""


async def recheck_answer(statement: str, answer: str, verifier: Verifier, *, header: str) -> AnswerRecheck:
    """Re-check a recorded answer (``repro reverify``) from our statement alone, never from proof text.

    A deterministic answer must be the statement's literal; an ``∃`` answer is a witness our Lean
    command must prove again (:func:`repro.lean.statement_checks.check_witness`, trusted ``header``);
    any other answer must be a token run of the statement's conclusion (:func:`grounded_in_statement`).
    """
    literal = deterministic_answer(statement)
    if literal is not None:
        same = literal_text(literal) == answer
        return AnswerRecheck(
            method="deterministic", grounded=same, detail="" if same else f"the statement gives {literal!r}"
        )
    if not is_existential(statement):
        found = grounded_in_statement(answer, statement)
        return AnswerRecheck(
            method="statement_tokens",
            grounded=found,
            detail="" if found else "not a token run of the statement's conclusion",
        )
    witness = witness_parts(answer)
    if witness is None:
        return AnswerRecheck(method="witness", grounded=False, detail="a witness must be numeric literals")
    check = await check_witness(statement, witness, verifier, header=header)
    if check.outcome == CheckOutcome.undecided:
        return AnswerRecheck(
            method="witness", grounded=False, no_verdict=True, detail="Lean gave no verdict on the witness"
        )
    proved = check.outcome == CheckOutcome.proved
    return AnswerRecheck(
        method="witness",
        grounded=proved,
        detail=f"witness proved by {check.tactic}"
        if proved
        else "our Lean command does not prove the statement with it",
    )


def literal_text(candidate: str) -> str:
    """A released answer without Lean type ascriptions: ``(3 : ℚ) / 4`` becomes ``3 / 4``."""
    return re.sub(r"\(\s*(-?\s*\d+(?:\.\d+)?)\s*:\s*[ℕℤℚℝ]\w*\s*\)", r"\1", candidate).strip()


def screener_disagrees(screener: str | None, retained: str | None) -> bool | None:
    """Whether the screen's independent answer differs from the retained one (None if either is missing).

    A flag for audit only: the retained answer comes from the verified Lean text, never from the screen.
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
