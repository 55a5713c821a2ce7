"""Arithmetic checker: find ``a op b (op c ...) = c`` statements in a trace and flag wrong ones."""

from __future__ import annotations

import ast
import operator
import re
from fractions import Fraction

from pydantic import BaseModel

_NUMBER = r"\$?\s?\d[\d,]*(?:\.\d+)?%?"
_OPERATOR = r"\s*(?:[+\-*/×÷x·]|\\times|\\div|\\cdot)\s*"
_OPERAND = rf"\(?\s*{_NUMBER}(?:\s+(?!x\b)[a-zA-Z]{{2,}}){{0,2}}\s*\)?"
_STATEMENT = re.compile(
    rf"(?P<lhs>{_OPERAND}(?:{_OPERATOR}{_OPERAND})+)\s*=\s*(?P<rhs>-?{_NUMBER})(?![\d.,]*\d)(?!\s*/\s*\d)(?!\s*(?:[+\-*/×÷x·(^]|\\times|\\div|\\cdot|\\frac)(?!\w\w))"
)
_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}


class ArithmeticStatement(BaseModel):
    text: str
    computed: str
    stated: str
    correct: bool


def _to_python(expression: str) -> str:
    text = re.sub(r"(?<=[\d)])\s+(?!x\b)[a-zA-Z]{2,}(?:\s+[a-zA-Z]{2,})?", " ", expression)
    text = text.replace("\\times", "*").replace("\\cdot", "*").replace("\\div", "/")
    text = text.replace("×", "*").replace("÷", "/").replace("·", "*").replace("$", "")
    text = re.sub(r"(?<=\d)\s*x\s*(?=[\d(])", "*", text)
    text = re.sub(r"(\d),(?=\d{3})", r"\1", text)
    text = re.sub(r"(\d+(?:\.\d+)?)%", r"(\1/100)", text)
    return text


def _evaluate(node: ast.AST) -> Fraction:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return Fraction(str(node.value))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_evaluate(node.operand)
    raise ValueError("unsupported expression")


def evaluate_expression(expression: str) -> Fraction | None:
    try:
        return _evaluate(ast.parse(_to_python(expression).strip(), mode="eval"))
    except (SyntaxError, ValueError, ZeroDivisionError, TypeError):
        return None


def _close(computed: Fraction, stated_text: str) -> bool:
    stated = evaluate_expression(stated_text)
    if stated is None:
        return True  # unreadable: not evidence of an error
    if computed == stated:
        return True
    decimals = len(stated_text.split(".", 1)[1].rstrip("%")) if "." in stated_text else 0
    tolerance = Fraction(1, 2 * 10**decimals) if decimals else Fraction(1, 2)
    if abs(computed - stated) <= tolerance and computed.denominator != 1:
        return True  # a rounded display of a non-integer result
    if computed.denominator == 1 and stated.denominator == 1:
        return False  # two whole numbers must agree exactly ("564,237 + 495,718 = 1,060,955" is wrong)
    return abs(computed - stated) <= abs(stated) * Fraction(1, 1000)


def _labelled(before: str) -> bool:
    """``Total cost = 3 * 25 = 75``: the text before the ``=`` is a name, not part of an expression."""
    if not before.endswith("="):
        return False
    label = re.split(r"[\n.;:]\s", before[:-1])[-1]
    return bool(re.search(r"[A-Za-z]", label)) and not re.search(r"[\d+*/×÷^)]", label)


def check_arithmetic(trace: str) -> list[ArithmeticStatement]:
    statements = []
    for match in _STATEMENT.finditer(trace):
        before = trace[: match.start()].rstrip()
        tail = before and (before[-1] in "+-*/×÷(^=" or before[-1].isdigit() or before.endswith(("\\times", "\\div")))
        if tail and not _labelled(before):
            continue  # the statement is the tail of a longer expression we cannot read whole
        lhs, rhs = match.group("lhs"), match.group("rhs")
        computed = evaluate_expression(lhs)
        if computed is None:
            continue
        shown = f"{float(computed):g}" if computed.denominator != 1 else str(computed.numerator)
        statements.append(
            ArithmeticStatement(
                text=match.group(0).strip(),
                computed=shown,
                stated=rhs.strip(),
                correct=_close(computed, rhs.strip()),
            )
        )
    return statements
