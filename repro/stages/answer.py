"""Stage 7: recover the answer from OUR verified statement, never from the prover's text.

Sound before complete (adversary findings 3, 4 and S3): an answer is released only where the
statement itself pins it down.

- Deterministic: the conclusion (after leading ``let``/``have`` bindings, nothing else) is a single
  top-level ``=`` whose type our binders and ascriptions show to be ℕ, ℤ, ℚ, ℝ or ℂ, and whose right
  side is a plain numeral of that type (ℕ: digits; ℤ: a sign allowed; ℚ/ℝ/ℂ: also ``a/b`` or a
  decimal). A premise, disjunction, negation or ``∀`` at depth 0, an unknown type (a library function,
  ``ZMod``, ``Fin``, a cast) or an operator on the right means no deterministic answer. The equation
  must be about the statement's unknown (round 4, A4): numerals and type names keep their meaning
  (:mod:`repro.lean.text.answer_scope`) and the left side depends on the signature's variables
  (:mod:`repro.stages.answer_probe`) or, with none, computes something.
- Witness: for a conclusion ``∃ x : T, P x`` (T ℕ, ℤ, ℚ or ℝ, written in our statement) whose body has
  no depth-0 premise or disjunction, the extraction model (shown the question and our statement, never
  the prover's code) proposes literals of those types (A5: no ``7/2`` for an ℕ variable) and our own
  Lean command must prove the statement with their normal forms, which are what is released
  (:func:`repro.lean.statement_checks.check_witness`).
- Anything else (``IsLeast S 5``, ``x = 3 ∨ x = 7``, ``P → x = 5``) is rejected as
  ``answer_not_grounded``: a token of the statement is not an answer the statement entails.

The candidate is then classified; only ``final`` is retained.
"""

from __future__ import annotations

import math
import re
from typing import Literal

from pydantic import BaseModel, field_validator, model_validator

from repro.config import ModelSettings
from repro.lean.protocol import Verifier
from repro.lean.statement_checks import (
    CheckOutcome,
    check_witness,
    normal_witness,
    restated_hypothesis,
    witness_variables,
)
from repro.lean.text import (
    LeanCode,
    StatementError,
    lean_code,
    read_statement,
    strip_comments,
    top_level_equation,
)
from repro.lean.text.answer_scope import (
    NUMERIC_TYPE_NAMES,
    AnswerScope,
    answer_scope,
    expand_lets,
    unwrapped,
)
from repro.lean.text.lexer import Kind, Token, lex, significant
from repro.lean.text.statement import depths
from repro.llm.client import ModelClient
from repro.llm.json_answers import ask_json
from repro.llm.protocol import ModelCallError
from repro.prompts import render_prompt
from repro.records import AttemptStatus, ReasonCode
from repro.stages.answer_probe import depends_on_variables
from repro.stages.common import StageResult, Stopwatch, account, chat_request, input_hash

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
    """The numeral on the right of the conclusion's single top-level ``=``, read in the equation's type.

    Fail closed (adversary findings 3 and 4): a literal is read only when the conclusion itself is
    that equation (no premise, disjunction, negation or binder at depth 0 to read it through), the
    equation's type is known from our binders and ascriptions to be one of ℕ, ℤ, ℚ, ℝ, ℂ, and the
    right side is a plain numeral in that type. ``(3 + 4 + 8 : ℕ) / 3 = 16 / 3`` (ℕ division: 5) and
    ``(2 : ZMod 7) ^ 10 = 9`` (9 = 2) have no deterministic answer.

    And the equation must be about the statement's unknown (round 4, A4): the signature and the
    conclusion's bindings must leave numerals and type names their usual meaning
    (:func:`repro.lean.text.answer_scope.answer_scope`), and the left side, with ``let`` values
    substituted (so a ``let x := 5`` shadowing the signature's x is seen), must depend on the
    signature's variables (:func:`repro.stages.answer_probe.depends_on_variables`). A statement with no
    variables (a ``let`` chain, a closed computation) must at least compute something: a bare numeral
    on the left (``(7 : ℕ) = 7``, ``let x : ℝ := 5; x = 5``) is a constant equation and gives nothing,
    and so does a conclusion that restates a hypothesis token for token.
    """
    try:
        parsed = read_statement(statement)
    except StatementError:
        return None
    scope = answer_scope(parsed.binders, parsed.conclusion)
    if scope is None or restated_hypothesis(parsed) is not None:
        return None  # ``(h₁ : y = 9) : y = 9`` gives back a number of the problem, not its unknown
    types = dict(scope.variables) | {b.name: b.type_name for b in scope.lets}
    equation = top_level_equation(unwrapped(scope.proposition))
    if equation is None:
        return None
    left, right = equation
    kind = _equation_type(left, right, types)
    if kind is None:
        return None
    value = _plain_numeral(right)
    if value is None or not _NUMERAL_FORMS[kind].match(value.replace(" ", "")):
        return None
    return value if _about_the_unknown(left, right, kind, scope) else None


def _about_the_unknown(left: str, right: str, kind: str, scope: AnswerScope) -> bool:
    """The left side depends on the signature's variables, or, with none, computes something."""
    expanded = expand_lets(significant(lex(left)), scope.lets)
    if expanded is None:
        return False
    if scope.variables:
        return depends_on_variables(expanded, kind, scope.variables)
    return not _restates_a_numeral([token for token, _ in expanded], right, kind)


def _restates_a_numeral(tokens: list[Token], right: str, kind: str) -> bool:
    """Whether the left side is only a numeral: ``(7 : ℕ)``, ``((5))``, ``2.5``, or the right's fraction.

    Brackets and ascriptions aside. A fraction is a numeral only in ℚ ℝ ℂ, and only as the right side
    writes it: ``(10 : ℕ) / 2`` is a division and ``(6 : ℚ) / 4 = 3 / 2`` reduces a fraction.
    """
    kept = "".join(t.text for t in tokens if t.text not in ("(", ")", ":") and t.name not in NUMERIC_TYPE_NAMES)
    if re.fullmatch(r"-?\d+(?:\.\d+)?", kept):
        return True
    fraction = kind in ("ℚ", "ℝ", "ℂ") and re.fullmatch(r"-?\d+/\d+", kept) is not None
    return fraction and kept == "".join(literal_text(right).split())


_NUMERIC_TYPES = {"ℕ": "ℕ", "Nat": "ℕ", "ℤ": "ℤ", "Int": "ℤ", "ℚ": "ℚ", "Rat": "ℚ", "ℝ": "ℝ", "Real": "ℝ"}
_NUMERIC_TYPES |= {"ℂ": "ℂ", "Complex": "ℂ"}
_NUMERAL_FORMS = {
    "ℕ": re.compile(r"^\d+$"),
    "ℤ": re.compile(r"^-?\d+$"),
    **dict.fromkeys(("ℚ", "ℝ", "ℂ"), re.compile(r"^-?\d+(?:/\d+|\.\d+)?$")),
}
_ASCRIBED_NUMERAL = re.compile(r"\(\s*(-?\s*\d+(?:\.\d+)?)\s*:\s*(ℕ|ℤ|ℚ|ℝ|ℂ|Nat|Int|Rat|Real|Complex)\s*\)")


# symbols whose result has the type of their operands (or is the ascription/equation itself)
_SAME_TYPE_SYMBOLS = frozenset({"+", "-", "*", "/", "%", "^", "(", ")", "|", "!", ":", "="})


def _equation_type(left: str, right: str, binders: dict[str, str]) -> str | None:
    """The equation's type when every identifier and ascription in it says the same numeric type.

    An identifier that is not one of our typed binders (a library function, a ``let`` name, a ``∑``
    variable), a cast (``↑``), a second type or any other type name makes the type unknown: None.
    """
    tokens = significant(lex(f"{left} = {right}"))
    level = depths(tokens)
    seen: set[str] = set()
    for index, token in enumerate(tokens):
        if token.kind == Kind.symbol and token.text not in _SAME_TYPE_SYMBOLS:
            return None  # ``↑``, ``⌊x⌋`` (ℤ), ``⌊x⌋₊`` (ℕ), ``√``, ``∑``, ``•``, ``.field``: the type may change
        if token.kind not in (Kind.identifier, Kind.number, Kind.symbol):
            return None
        if token.kind != Kind.identifier:
            continue
        previous = tokens[index - 1].text if index else ""
        if previous == ":":  # an ascription: ``(e : T)`` with T a single numeric type name
            closes = index + 1 < len(tokens) and tokens[index + 1].text == ")" and level[index + 1] < level[index]
            if token.text not in _NUMERIC_TYPES or not closes:
                return None
            seen.add(_NUMERIC_TYPES[token.text])
            continue
        type_text = binders.get(token.text)
        if type_text is None:
            return None
        parts = [part.strip() for part in type_text.split("→")]
        if any(part not in _NUMERIC_TYPES for part in parts):
            return None
        if len(parts) > 1:  # a function counts only applied to an argument
            following = tokens[index + 1] if index + 1 < len(tokens) else None
            if following is None or not (following.kind in (Kind.identifier, Kind.number) or following.text == "("):
                return None
        seen.add(_NUMERIC_TYPES[parts[-1]])
    return seen.pop() if len(seen) == 1 else None


def _plain_numeral(right: str) -> str | None:
    """The right side as ``-12``, ``3/4`` or ``2.5`` (type ascriptions dropped), or None."""
    text = " ".join(strip_comments(right, keep_layout=False).split())
    text = unwrapped(_ASCRIBED_NUMERAL.sub(r"\1", text))
    compact = text.replace(" ", "")
    return text if re.fullmatch(r"-?\d+(?:/\d+|\.\d+)?", compact) else None


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
    """Whether the conclusion is ``∃ x : T, P x`` whose witness our Lean command can check.

    Fail closed (adversary S3, round 4 A5): see :func:`repro.lean.statement_checks.witness_variables`.
    """
    return witness_variables(statement) is not None


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
        if candidate is None and not is_existential(statement):
            # nothing Lean could check a proposed answer against: a token of the statement (``7`` of
            # ``x = 3 ∨ x = 7``) is not entailed by it, so no model is asked (adversary finding 4, S3)
            result.output = {"candidate": None, "method": "none", "why": "no deterministic answer and no ∃ to witness"}
            result.status, result.reason = AttemptStatus.rejected, ReasonCode.answer_not_grounded
            result.elapsed_s = clock.elapsed()
            return result
        if candidate is None:
            method = "witness"
            prompt = render_prompt("answer_extract", question=question, statement=code_without_prose(statement))
            extraction = await ask_json(
                extract_client,
                chat_request(extract_settings, prompt, sample_offset=attempt, json_answer=True),
                ExtractAnswer,
            )
            account(result, extract_client, extraction.responses)
            candidate = extraction.value.answer if extraction.value else None
        result.output = {"candidate": candidate, "method": method}
        if method == "witness":
            accepted = bool(candidate) and await _witness_accepted(result, statement, candidate or "", verifier, header)
            candidate = str(result.output["candidate"]) if accepted else candidate
        else:
            accepted = bool(candidate)
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


async def _witness_accepted(
    result: StageResult, statement: str, candidate: str, verifier: Verifier | None, header: str
) -> bool:
    """Our Lean command proves the statement with the proposed witness; the check goes to the audit.

    On success the output's candidate becomes the witness's normal form (what Lean was given and what
    is released); the model's text stays in ``proposed``.
    """
    witness = witness_parts(candidate, statement)
    if witness is None:
        result.output["witness_check"] = "refused: a witness must be numeric literals of the ∃ variables' types"
        return False
    if verifier is None:
        result.status, result.reason = AttemptStatus.error, ReasonCode.lean_unavailable
        result.output["witness_check"] = "no Lean backend to check the witness"
        return False
    check = await check_witness(statement, witness, verifier, header=header)
    result.output["witness_check"] = check.model_dump(mode="json")
    if check.outcome == CheckOutcome.undecided:
        result.status, result.reason = AttemptStatus.error, ReasonCode.lean_unavailable
    if check.outcome == CheckOutcome.proved:
        result.output.update({"proposed": candidate, "candidate": ", ".join(witness)})
        return True
    return False


class AnswerRecheck(BaseModel):
    """Whether a recorded answer is the one our statement gives, judged as the answer stage judged it."""

    method: Literal["deterministic", "none", "witness"]
    grounded: bool
    # Lean gave no verdict on the witness (timeout, unavailable): neither grounded nor refused
    no_verdict: bool = False
    detail: str = ""


async def recheck_answer(statement: str, answer: str, verifier: Verifier, *, header: str) -> AnswerRecheck:
    """Re-check a recorded answer (``repro reverify``) from our statement alone, never from proof text.

    A deterministic answer must be the statement's literal; an ``∃`` answer is a witness our Lean
    command must prove again (:func:`repro.lean.statement_checks.check_witness`, trusted ``header``);
    any other answer is not grounded (a token run of the conclusion, ``7`` of ``x = 3 ∨ x = 7``, is
    not entailed).
    """
    literal = deterministic_answer(statement)
    if literal is not None:
        same = literal_text(literal) == answer
        return AnswerRecheck(
            method="deterministic", grounded=same, detail="" if same else f"the statement gives {literal!r}"
        )
    if not is_existential(statement):
        # as the answer stage now decides (adversary finding 4, S3): a token of the statement is no
        # answer it entails, so such a recorded answer is not grounded
        return AnswerRecheck(
            method="none", grounded=False, detail="no deterministic answer and no ∃ witness: nothing entails it"
        )
    witness = witness_parts(answer, statement)
    if witness is None:
        return AnswerRecheck(
            method="witness", grounded=False, detail="a witness must be numeric literals of the ∃ variables' types"
        )
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
