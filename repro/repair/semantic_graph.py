"""Surface semantic-risk graph: number mentions, the relations around them, and the risks they pose.

Nodes are number mentions with a unit (the next noun), an entity (the nearest preceding name) and
a nearby predicate. Edges are aggregation, comparison, rate, change-event and part-whole relations
triggered by keywords. Risks compare those relations with the operations the trace performs.
"""

from __future__ import annotations

import re
from enum import StrEnum
from fractions import Fraction

from pydantic import BaseModel

from repro.repair.answers import answers_equivalent, extract_answer, to_number
from repro.repair.arithmetic import check_arithmetic
from repro.repair.quantities import problem_quantities


class Risk(StrEnum):
    quantity_binding = "quantity_binding"
    comparison_warning = "comparison_warning"
    per_entity_rate_missing = "per_entity_rate_missing"
    change_event_misinterpretation = "change_event_misinterpretation"
    answer_format_warning = "answer_format_warning"
    times_more_interpretation = "times_more_interpretation"
    equal_split_interpretation = "equal_split_interpretation"
    generation_failure = "generation_failure"


HIGH_RISK = frozenset(
    {
        Risk.times_more_interpretation,
        Risk.per_entity_rate_missing,
        Risk.equal_split_interpretation,
        Risk.change_event_misinterpretation,
    }
)
_PENALTY = {
    Risk.quantity_binding: 0.15,
    Risk.comparison_warning: 0.25,
    Risk.per_entity_rate_missing: 0.3,
    Risk.change_event_misinterpretation: 0.3,
    Risk.answer_format_warning: 0.2,
    Risk.times_more_interpretation: 0.2,
    Risk.equal_split_interpretation: 0.3,
    Risk.generation_failure: 1.0,
}

_RELATIONS = {
    "aggregation": r"\b(total|together|in all|altogether|combined|sum)\b",
    "comparison": r"\b(more|fewer|less|older|younger|taller|shorter|longer)\s+(?:\w+\s+){0,2}than\b",
    "rate": r"\b(each|per|every|an hour|a day|a week|apiece)\b",
    "change_loss": r"\b(gave|gives|give away|lost|loses|spent|spends|ate|eats|sold|sells|used|uses|donated|"
    r"removed|paid|pays|broke|took away|threw)\b",
    "change_gain": r"\b(received|receives|got|gets|found|finds|earned|earns|collected|added|won|picked)\b",
    "part_whole": r"\b(half|third|quarter|fraction|percent|%|of the|of them|remaining|rest)\b",
    "times_more": r"\btimes\s+(?:more|as\s+many|as\s+much|longer|larger|bigger)\b",
    "equal_split": r"\b(equally|evenly|split|shared equally|divided equally|each get|same number)\b",
}
_RATE_AFTER = re.compile(r"\s*(?:[a-zA-Z]+\s+){0,2}(each|per|every|apiece|an hour|a day|a week)\b", re.I)
_RATE_BEFORE = re.compile(
    r"\b(each|every|per)\s+[a-z]+\s+(?:[a-z]+\s+)?(holds?|has|contains?|costs?|is|gets?|weighs?|needs?|"
    r"takes?|makes?|earns?|pays?)\s+\$?$",
    re.I,
)
_ENTITY = re.compile(r"\b([A-Z][a-z]+)\b")
_UNIT = re.compile(r"\s*([a-zA-Z]+)")
_STOPWORDS = {"The", "If", "How", "What", "She", "He", "They", "Then", "After", "Each", "In", "On", "A", "An"}


class NumberMention(BaseModel):
    value: str
    unit: str | None
    entity: str | None
    predicate: str | None
    relations: list[str]


class SemanticReport(BaseModel):
    mentions: list[NumberMention]
    relations: list[str]
    risks: list[Risk]
    details: list[str]
    score: float

    @property
    def high_risk(self) -> list[Risk]:
        return [risk for risk in self.risks if risk in HIGH_RISK]


def _window_relations(text: str, start: int, end: int, width: int = 40) -> list[str]:
    window = text[max(0, start - width) : end + width]
    return [name for name, pattern in _RELATIONS.items() if re.search(pattern, window, re.IGNORECASE)]


def _operands(trace: str, op: str) -> set[Fraction]:
    """Numbers that appear directly next to operator ``op`` in the trace."""
    symbols = {"*": r"[*×x·]|\\times", "/": r"[/÷]|\\div", "+": r"\+", "-": r"-|−"}[op]
    found: set[Fraction] = set()
    number = r"\$?(\d[\d,]*(?:\.\d+)?)"
    # lookaheads, so that in "4 + 30 + 20" every operand is seen, not only the first pair
    for match in re.finditer(rf"(?<![\d.,]){number}(?=\s*(?:{symbols})\s*\$?\d)", trace):
        found.add(Fraction(match.group(1).replace(",", "")))
    for match in re.finditer(rf"(?<=\d)\s*(?:{symbols})\s*{number}", trace):
        found.add(Fraction(match.group(1).replace(",", "")))
    return found


_TIME_UNITS = r"\b(day|daily|week|month|year|hour|minute|morning|night|evening)"


def _question_sentence(problem: str) -> str:
    sentences = re.split(r"(?<=[.!?])\s+", problem.strip())
    questions = [s for s in sentences if "?" in s]
    return questions[-1] if questions else sentences[-1]


def _multiplicative_mentions(trace: str) -> set[Fraction]:
    """Numbers used with a multiplicative word or sign, even with a unit in between."""
    number = r"\$?(\d[\d,]*(?:\.\d+)?)"
    found: set[Fraction] = set()
    patterns = (
        rf"{number}\s*(?:[a-zA-Z$/]+\s*){{0,3}}(?:[×*÷/·]|\\times|\\div|times\b|multipl)",
        rf"(?:[×*÷/·]|\\times|\\div|times|multiplied by|divided by|per)\s*(?:\()?\s*{number}",
    )
    for pattern in patterns:
        for match in re.finditer(pattern, trace, re.IGNORECASE):
            found.add(Fraction(match.group(1).replace(",", "")))
    return found


def _subtracted(trace: str) -> set[Fraction]:
    return {Fraction(m.group(1).replace(",", "")) for m in re.finditer(r"(?:-|−)\s*\$?(\d[\d,]*(?:\.\d+)?)", trace)}


def _added(trace: str) -> set[Fraction]:
    return {Fraction(m.group(1).replace(",", "")) for m in re.finditer(r"\+\s*\$?(\d[\d,]*(?:\.\d+)?)", trace)} | {
        Fraction(m.group(1).replace(",", "")) for m in re.finditer(r"\$?(\d[\d,]*(?:\.\d+)?)\s*\+", trace)
    }


def _flows_into(trace: str, used: set[Fraction], operator: str) -> set[Fraction]:
    """Numbers summed first and then used with ``operator``: ``(5 + 3) × 4`` or ``5 + 3 = 8`` then
    ``8 × 4`` (a rate combined before it multiplies is still used as a rate); ``40 + 80 = 120`` then
    ``200 - 120`` (losses added up before they are removed are still removed)."""
    number = r"\$?(\d[\d,]*(?:\.\d+)?)"
    found: set[Fraction] = set()
    for group in re.finditer(rf"\(([^()]*)\)\s*(?:{operator})|(?:{operator})\s*\(([^()]*)\)", trace):
        inside = group.group(1) or group.group(2) or ""
        found |= {Fraction(m.group(1).replace(",", "")) for m in re.finditer(number, inside)}
    sums = [s for s in check_arithmetic(trace) if s.correct and re.search(r"[+\-−]", s.text.split("=")[0])]
    targets = set(used)
    changed = True
    while changed:
        changed = False
        for statement in sums:
            result = to_number(statement.stated.replace("$", "").replace(",", ""))
            if result is None or result not in targets:
                continue
            for match in re.finditer(number, statement.text.split("=")[0]):
                value = Fraction(match.group(1).replace(",", ""))
                if value not in found:
                    found.add(value)
                    targets.add(value)
                    changed = True
    return found


_EXPRESSION_NUMBER = r"\(?\s*\$?\d[\d,]*(?:\.\d+)?%?\s*\)?"
_EXPRESSION = re.compile(rf"{_EXPRESSION_NUMBER}(?:\s*(?:[-+*/×÷·x−]|\\times|\\div|\\cdot)\s*{_EXPRESSION_NUMBER})+")


def computed_numbers(trace: str) -> set[Fraction]:
    """Numbers that take part in a written computation (operands of an expression), as opposed to
    numbers only mentioned in prose."""
    found: set[Fraction] = set()
    for expression in _EXPRESSION.finditer(trace):
        for match in re.finditer(r"\$?(\d[\d,]*(?:\.\d+)?)", expression.group(0)):
            found.add(Fraction(match.group(1).replace(",", "")))
    return found


def arithmetic_expressions(trace: str) -> list[str]:
    return [match.group(0) for match in _EXPRESSION.finditer(trace)]


def derives_answer(trace: str, answer: str | None) -> bool:
    """A correct computation in the trace has the answer as its result."""
    return answer is not None and any(
        s.correct and answers_equivalent(s.stated.replace("$", "").replace(",", "").rstrip(",."), answer)
        for s in check_arithmetic(trace)
    )


def analyze_semantics(problem: str, trace: str) -> SemanticReport:
    if not trace or not trace.strip():
        return SemanticReport(
            mentions=[], relations=[], risks=[Risk.generation_failure], details=["empty trace"], score=0.0
        )
    mentions: list[NumberMention] = []
    all_relations: set[str] = set()
    for quantity in problem_quantities(problem):
        unit_match = _UNIT.match(problem[quantity.end :])
        entities = [e for e in _ENTITY.findall(problem[: quantity.start]) if e not in _STOPWORDS]
        before = problem[max(0, quantity.start - 30) : quantity.start].split()
        relations = _window_relations(problem, quantity.start, quantity.end)
        all_relations.update(relations)
        mentions.append(
            NumberMention(
                value=quantity.value,
                unit=unit_match.group(1).lower() if unit_match else None,
                entity=entities[-1] if entities else None,
                predicate=before[-1].lower() if before else None,
                relations=relations,
            )
        )
    risks: list[Risk] = []
    details: list[str] = []
    answer = extract_answer(trace, problem)
    answer_value = to_number(answer)
    multiplied = _operands(trace, "*") | _operands(trace, "/")
    multiplicative = multiplied | _multiplicative_mentions(trace)
    multiplicative |= _flows_into(trace, multiplicative, r"[*×x·/÷]|\\times")
    derived = derives_answer(trace, answer)
    given_values = {Fraction(q.value) for q in problem_quantities(problem)}
    backwards = re.search(
        r"\b(in the beginning|at first|at the start|originally|initially|to begin with|to start with|before)\b",
        _question_sentence(problem),
        re.IGNORECASE,
    )
    # a change event has a direction only in a state question ("how many are left now?"); in a
    # question about a total ("how much did she pay?") the events accumulate
    state_question = re.search(
        r"\b(left|remain\w*|now|still|at the end|in the end|end up|ends up|after)\b",
        _question_sentence(problem),
        re.IGNORECASE,
    )
    additive = _operands(trace, "+") | _operands(trace, "-")
    subtracted, added = _subtracted(trace), _added(trace)
    subtracted |= _flows_into(trace, subtracted, r"-|−")

    def flag(risk: Risk, detail: str) -> None:
        if risk not in risks:
            risks.append(risk)
        details.append(detail)

    for quantity in problem_quantities(problem):
        value = Fraction(quantity.value)
        if quantity.from_word and (
            value.denominator != 1
            or value <= 1
            or quantity.text.lower() in ("twice", "double", "triple", "thrice", "dozen")
        ):
            continue
        after = problem[quantity.end : quantity.end + 60]
        preceding = problem[max(0, quantity.start - 40) : quantity.start]
        rate_match = _RATE_AFTER.match(after) or _RATE_BEFORE.search(preceding)
        time_unit = re.search(_TIME_UNITS, (rate_match.group(0) if rate_match else "") + after[:25], re.I)
        same_period = (
            time_unit is not None
            and re.search(time_unit.group(1).lower()[:4], _question_sentence(problem), re.IGNORECASE) is not None
        )
        if (
            rate_match
            and not same_period
            and value in additive
            and value not in multiplicative
            and value != 1
            and answer_value != value
        ):
            flag(Risk.per_entity_rate_missing, f"rate {quantity.text} ({after[:30].strip()}...) never multiplies")
        if (
            re.search(r"\bmore\s+(?:\w+\s+){0,2}than\b", after[:40], re.IGNORECASE)
            and value in subtracted
            and value not in added
            and not re.search(r"\bhow many more|\bhow much more", problem, re.I)
        ):
            flag(Risk.comparison_warning, f"'{quantity.text} more than' is subtracted")
        if (
            re.search(r"\b(fewer|less)\s+(?:\w+\s+){0,2}than\b", after[:40], re.IGNORECASE)
            and value in added
            and value not in subtracted
            and not re.search(r"\bhow many (fewer|less)", problem, re.I)
        ):
            flag(Risk.comparison_warning, f"'{quantity.text} fewer/less than' is added")
        lead = problem[max(0, quantity.start - 25) : quantity.start]
        loss = re.search(_RELATIONS["change_loss"], lead, re.IGNORECASE)
        gain = re.search(_RELATIONS["change_gain"], lead, re.IGNORECASE)
        if backwards or not state_question:
            loss = gain = None  # "how many did she have at first": events are undone, so signs flip
        if loss and re.match(r"\s*(?:him|her|them|me|us|[A-Z][a-z]+)\b", lead[loss.end() :]):
            loss = None  # "gives him 5", "gives Erin 10": someone else gives to the subject
        if gain and re.match(r"\s*(?:\S+\s+){0,2}off\b", problem[quantity.end : quantity.end + 20]):
            gain = None  # "got $2 off" is a discount, not a gain
        if (
            loss
            and value in added
            and value not in subtracted
            and value not in multiplied
            and not re.search(
                r"\bhow (many|much)\b[^?]*\b(spend|spent|give|gave|lose|lost|use|used|sell|sold)",
                problem,
                re.IGNORECASE,
            )
        ):
            flag(Risk.change_event_misinterpretation, f"'{loss.group(0)} {quantity.text}' is added, not removed")
        if gain and value in subtracted and value not in added and value not in multiplied:
            flag(Risk.change_event_misinterpretation, f"'{gain.group(0)} {quantity.text}' is removed, not added")
        if re.match(r"\s*times\s+more\b", problem[quantity.end :], re.IGNORECASE) and not (
            value in multiplicative and (value + 1 not in multiplicative or value + 1 in given_values)
        ):
            flag(
                Risk.times_more_interpretation,
                f"'{quantity.text} times more' is ambiguous (x{quantity.text} or"
                f" x{int(value) + 1 if value.denominator == 1 else value + 1})",
            )
        if (
            answer_value is not None
            and answer_value == value
            and len(problem_quantities(problem)) > 1
            and not derived
            and not re.search(r"\b(how many|what)\b[^?]*\b(left|remain)", problem, re.I)
        ):
            flag(Risk.quantity_binding, f"the answer {answer} copies the given quantity {quantity.text}")
    if (
        re.search(_RELATIONS["equal_split"], problem, re.IGNORECASE)
        and not _operands(trace, "/")
        and not re.search(r"divid|÷|/", trace)
        and not any(Fraction(q.value) in multiplied for q in problem_quantities(problem))
    ):
        flag(Risk.equal_split_interpretation, "an equal split is described but the trace never divides")
    if answer_value is not None and re.search(r"\bhow many\b", problem, re.IGNORECASE):
        if answer_value.denominator != 1 and not re.search(
            r"\b(hours?|miles?|pounds?|kg|liters?|gallons?|"
            r"feet|meters?|cups?|dollars?|\$)\b",
            problem,
            re.I,
        ):
            flag(Risk.answer_format_warning, f"'how many' asks for a count but the answer is {answer}")
        if answer_value < 0:
            flag(Risk.answer_format_warning, f"'how many' asks for a count but the answer is {answer}")
    if (
        answer is not None
        and answer.lower() in ("yes", "no")
        and not re.search(
            r"^\s*(is|are|can|does|do|will|was|were|should)\b", problem.split(".")[-1].strip(), re.IGNORECASE
        )
    ):
        flag(Risk.answer_format_warning, "yes/no answer to a question that asks for a value")
    score = 1.0 - sum(_PENALTY[risk] for risk in risks)
    return SemanticReport(
        mentions=mentions,
        relations=sorted(all_relations),
        risks=risks,
        details=details,
        score=round(max(0.0, min(1.0, score)), 4),
    )
