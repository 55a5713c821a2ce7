"""The scripted "models" of ``configs/demo.yaml``: an offline demonstration, never a real result.

They answer each stage's prompt with hand-written outputs for the shipped GSM8K sample
(``data/demo_script.yaml``): rewrites with new numbers and stories, hypothesis-style and
``let``-chain statements, Goedel-style prover replies with a plan and a ```lean4 fence, and the
failure modes a real run shows (special-token boundary corruption, a restated target, repeated
tactics, truncation, a ``sorry`` left in a ``have``, an infeasible rewrite, a formalization the
alignment judge catches, an intermediate answer). Everything they produce is marked scripted, and the
demo's Lean backend and kernel judge are recordings (``recorded``: :mod:`repro.lean.recorded`), never real
Lean, so nothing is ever verified. A problem the script does not
cover gets a reply without JSON, which the rewrite stage rejects.
"""

from __future__ import annotations

import hashlib
import json
import re
from fractions import Fraction
from functools import cache
from typing import Any

import yaml
from pydantic import BaseModel, Field

from repro.llm.protocol import FinishReason, ModelRequest
from repro.prompts import bundled_path

SCRIPT_FILE = "data/demo_script.yaml"
# the demo config's retries.formalizations_per_rewrite: the formalizer's sample index encodes the round
FORMALIZATIONS_PER_REWRITE = 2
_SUBSCRIPTS = "₀₁₂₃₄₅₆₇₈₉"


class FormalPlan(BaseModel):
    """One formalization of a rewritten problem: quantities given, quantities derived, the target."""

    given: list[tuple[str, str]]
    steps: list[tuple[str, str]]
    answer: str = ""
    analysis: str = ""


class ScriptedRewrite(BaseModel):
    question: str
    answer: str
    feasible: bool = True
    analysis: str = ""
    style: str = "hyp"
    type: str = "ℕ"
    given: list[tuple[str, str]] = Field(default_factory=list)
    steps: list[tuple[str, str]] = Field(default_factory=list)
    target: str | None = None
    intermediate: bool = False
    mismatch: FormalPlan | None = None
    # a hypothesis that contradicts the others (a vacuous statement: our check refuses it before proving)
    contradiction: tuple[str, str] | None = None
    # a wrong answer the first formalization concludes (a false statement: refuted once every sample fails)
    claimed: str | None = None
    proofs: list[list[str]] = Field(default_factory=lambda: [["ok"]])


class ScriptedProblem(BaseModel):
    original: str
    rewrites: list[ScriptedRewrite]


def covered_problems() -> int:
    """How many problems of the shipped sample the script covers (its first ones, in order)."""
    return len(script())


def _text_key(text: str) -> str:
    return " ".join(text.split())


@cache
def script() -> tuple[ScriptedProblem, ...]:
    raw = yaml.safe_load(bundled_path(SCRIPT_FILE).read_text(encoding="utf-8"))
    problems = []
    for entry in raw:
        for rewrite in entry["rewrites"]:
            for key in ("given", "steps"):
                rewrite[key] = [(str(name), str(value)) for name, value in rewrite.get(key, [])]
            if "mismatch" in rewrite:
                mismatch = rewrite["mismatch"]
                mismatch["given"] = [(str(n), str(v)) for n, v in mismatch.get("given", rewrite["given"])]
                mismatch["steps"] = [(str(n), str(v)) for n, v in mismatch["steps"]]
        problems.append(ScriptedProblem.model_validate(entry))
    return tuple(problems)


@cache
def _rewrites_by_question() -> dict[str, ScriptedRewrite]:
    return {_text_key(r.question): r for p in script() for r in p.rewrites}


def _problem_for_original(question: str) -> ScriptedProblem | None:
    key = _text_key(question)
    return next((p for p in script() if key.startswith(_text_key(p.original))), None)


def _between(text: str, start: str, end: str) -> str:
    after = text.split(start, 1)[1] if start in text else text
    return after.split(end, 1)[0].strip()


# -- arithmetic of the scripted quantities (to write values into plans and `have` steps) ----------------
def _python_expression(expression: str) -> str:
    return re.sub(r"\bmax\s+(\w+)\s+(\w+)", r"max(\1, \2)", expression)


def _lean_expression(expression: str) -> str:
    return re.sub(r"\bmax\(\s*(\w+)\s*,\s*(\w+)\s*\)", r"max \1 \2", expression)


def values(given: list[tuple[str, str]], steps: list[tuple[str, str]], number_type: str) -> dict[str, Fraction]:
    scope: dict[str, Any] = {"max": max}
    for name, literal in given:
        scope[name] = Fraction(literal)
    for name, expression in steps:
        if number_type == "ℕ":
            # natural-number division and subtraction truncate; the script only uses exact ones
            code = re.sub(r"(?<![/])/(?![/])", "//", _python_expression(expression))
        else:
            code = _python_expression(expression)
        scope[name] = Fraction(eval(code, {"__builtins__": {}}, scope))  # noqa: S307 - our own script file
    return {name: scope[name] for name, _ in [*given, *steps]}


def lean_number(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else f"{value.numerator} / {value.denominator}"


# -- formal statements ------------------------------------------------------------------------------------
def _target(rewrite: ScriptedRewrite, steps: list[tuple[str, str]]) -> str:
    return rewrite.target or steps[-1][0]


def signature(rewrite: ScriptedRewrite, name: str, plan: FormalPlan | None = None, *, claimed: bool = False) -> str:
    """The statement without ``:= by sorry``: hypothesis style or a ``let`` chain."""
    given = plan.given if plan else rewrite.given
    steps = plan.steps if plan else rewrite.steps
    target = _target(rewrite, steps)
    result = lean_number(values(given, steps, rewrite.type)[target])
    if claimed and rewrite.claimed:
        result = rewrite.claimed
    if rewrite.style == "let":
        lines = [f"theorem {name} :"]
        lines += [f"    let {n} : {rewrite.type} := {v}" for n, v in given]
        lines += [f"    let {n} : {rewrite.type} := {_lean_expression(e)}" for n, e in steps]
        lines.append(f"    {target} = {result}")
        return "\n".join(lines)
    names = " ".join(n for n, _ in [*given, *steps])
    hypotheses = [f"(h{_subscript(i)} : {n} = {v})" for i, (n, v) in enumerate(given)]
    hypotheses += [f"(h{_subscript(len(given) + i)} : {n} = {_lean_expression(e)})" for i, (n, e) in enumerate(steps)]
    if rewrite.contradiction:
        hypotheses.append(f"(h{_subscript(len(hypotheses))} : {rewrite.contradiction[0]} = {rewrite.contradiction[1]})")
    return (
        f"theorem {name} ({names} : {rewrite.type})\n    " + "\n    ".join(hypotheses) + f" :\n    {target} = {result}"
    )


def _subscript(index: int) -> str:
    return "".join(_SUBSCRIPTS[int(digit)] for digit in str(index))


def statement(rewrite: ScriptedRewrite, name: str, plan: FormalPlan | None = None, *, claimed: bool = False) -> str:
    return signature(rewrite, name, plan, claimed=claimed) + " := by sorry"


# -- prover replies ---------------------------------------------------------------------------------------
def _plan(rewrite: ScriptedRewrite) -> str:
    numbers = values(rewrite.given, rewrite.steps, rewrite.type)
    lines = [
        "### Detailed Proof and Analysis",
        "",
        "Every quantity of the problem is fixed by the hypotheses, so the goal is a finite computation."
        " We evaluate the derived quantities in the order they are defined:",
        "",
    ]
    for name, expression in rewrite.steps:
        lines.append(f"- `{name} = {expression}` evaluates to `{lean_number(numbers[name])}`.")
    lines += [
        "",
        "### Step-by-Step Abstract Plan",
        "",
        "1. Substitute the given values.",
        "2. Establish each intermediate value as its own `have`.",
        "3. Close the goal by rewriting with the intermediate values and normalizing numerals.",
        "",
        "### Lean 4 Proof with `have` Statements",
        "",
    ]
    return "\n".join(lines)


def _hypothesis_index(rewrite: ScriptedRewrite) -> dict[str, str]:
    names = [n for n, _ in [*rewrite.given, *rewrite.steps]]
    return {name: f"h{_subscript(i)}" for i, name in enumerate(names)}


def _honest_body(rewrite: ScriptedRewrite) -> str:
    if rewrite.style == "let":
        return "  intro " + " ".join(n for n, _ in [*rewrite.given, *rewrite.steps]) + "\n  dsimp only\n  norm_num"
    numbers = values(rewrite.given, rewrite.steps, rewrite.type)
    index = _hypothesis_index(rewrite)
    given_names = {n for n, _ in rewrite.given}
    lines = []
    done: set[str] = set()
    for name, expression in rewrite.steps:
        used = [w for w in dict.fromkeys(re.findall(r"[A-Za-z_]\w*", expression)) if w in index]
        rewrites = [index[name]] + [index[w] if w in given_names else f"h_{w}" for w in used if w != name]
        lines.append(f"  have h_{name} : {name} = {lean_number(numbers[name])} := by")
        lines.append(f"    rw [{', '.join(rewrites)}] <;> norm_num")
        done.add(name)
    target = _target(rewrite, rewrite.steps)
    lines.append(f"  exact h_{target}")
    return "\n".join(lines)


def _fenced(code: str) -> str:
    return f"```lean4\n{code}\n```"


def prover_reply(kind: str, rewrite: ScriptedRewrite, name: str) -> tuple[str, FinishReason]:
    """(reply text, finish reason) of one prover sample of the given kind."""
    head = signature(rewrite, name)
    plan = _plan(rewrite)
    target = _target(rewrite, rewrite.steps)
    numbers = values(rewrite.given, rewrite.steps, rewrite.type)
    result = lean_number(numbers[target])
    if kind == "ok":
        return plan + _fenced(f"{head} := by\n{_honest_body(rewrite)}"), "stop"
    if kind == "corrupt":
        broken = head.replace(f"{target} = {result}", f"{target} = {result}<｜Assistant｜>{result[-1]}", 1)
        tactics = "\n".join(["  norm_num", *["  <;> rfl", "  <;> norm_num"] * 2])
        return plan + _fenced(f"{broken} := by\n{tactics}"), "stop"
    if kind == "restated":
        weaker = head.replace(f"{target} = {result}", f"{target} ≤ {result}", 1)
        body = _honest_body(rewrite).replace(f"  exact h_{target}", f"  rw [h_{target}]")
        if rewrite.style == "let":
            body += "\n  <;> rfl"
        return plan + _fenced(f"{weaker} := by\n{body}"), "stop"
    if kind == "repeat":
        corrupted = head.replace(f"{target} = {result}", f"{target} = {result} / {result}", 1)
        repeated = ["  norm_num [mul_comm, mul_assoc, mul_left_comm]", "  <;> simp_all"] + ["  <;> omega"] * 12
        return plan + _fenced(f"{corrupted} := by\n" + "\n".join(repeated)), "stop"
    if kind == "truncated":
        # cut inside the signature, before any `:=` of a let-chain, as a token limit does mid-declaration
        limit = head.find(":=") - 6 if ":=" in head else len(head) * 2 // 3
        cut = head[: max(limit, len("theorem ") + 1)]
        return plan + "```lean4\n" + cut, "length"
    if kind == "sorry":
        lines = _honest_body(rewrite).split("\n")
        for position, line in enumerate(lines):
            if line.startswith("  have") and position + 1 < len(lines):
                lines[position + 1] = "    sorry"
                break
        else:
            lines.insert(0, "  sorry")
        return plan + _fenced(f"{head} := by\n" + "\n".join(lines)), "stop"
    if kind == "prose":
        reasoning = "\n".join(
            f"-- Step {i + 1}: {n} is computed from {e}; we substitute and normalize, then check the"
            " arithmetic again because the previous line may have been off by one."
            for i, (n, e) in enumerate(rewrite.steps * 4)
        )
        return plan + "```lean4\n" + reasoning + "\n-- Now we restate the theorem and", "length"
    raise LookupError(f"unknown scripted proof kind {kind!r}")


# -- the responder ----------------------------------------------------------------------------------------
def _statement_key(text: str) -> str:
    return _text_key(re.sub(r"theorem\s+\S+", "theorem _", text, count=1))


def _rewrite_for_statement(text: str) -> tuple[ScriptedRewrite, bool] | None:
    """The scripted rewrite whose (correct or mismatched) statement this is, ignoring the theorem name."""
    key = _statement_key(text.replace(":= by sorry", ""))
    for problem in script():
        for rewrite in problem.rewrites:
            if not rewrite.feasible:
                continue
            if _statement_key(signature(rewrite, "_")) == key:
                return rewrite, False
            if rewrite.claimed and _statement_key(signature(rewrite, "_", claimed=True)) == key:
                return rewrite, False
            if rewrite.mismatch and _statement_key(signature(rewrite, "_", rewrite.mismatch)) == key:
                return rewrite, True
    return None


def _reply_json(payload: dict[str, Any]) -> str:
    return json.dumps(payload, ensure_ascii=False)


def responder(request: ModelRequest, sample_index: int) -> str | tuple[str, FinishReason]:
    prompt = request.prompt_text()
    if "You rewrite math problems" in prompt:
        problem = _problem_for_original(_between(prompt, "Original problem:\n", "\n\nReply"))
        if problem is None:
            return "I am the demonstration script and have no rewrite for this problem."
        rewrite = problem.rewrites[min(sample_index, len(problem.rewrites) - 1)]
        return _reply_json({"rewritten_question": rewrite.question})
    if "strict reviewer of math problems" in prompt:
        found = _rewrites_by_question().get(_text_key(_between(prompt, "Problem:\n", "\n\nReply")))
        if found is None:
            return _reply_json(
                {"problem_kind": "applied", "analysis": "unknown problem", "verdict": "no", "answer": ""}
            )
        analysis = found.analysis or "All quantities are given, consistent and realistic; the question is well posed."
        verdict = "yes" if found.feasible else "no"
        return _reply_json(
            {"problem_kind": "applied", "analysis": analysis, "verdict": verdict, "answer": found.answer}
        )
    if "autoformalize" in prompt:
        name = _between(prompt, "theorem name: ", "\n")
        found = _rewrites_by_question().get(
            _text_key(_between(prompt, "The natural language statement is:\n", "\n\nWrite a single"))
        )
        if found is None:
            raise LookupError("the demo has no formalization for this question")
        first_round = sample_index % FORMALIZATIONS_PER_REWRITE == 0
        plan = found.mismatch if found.mismatch and first_round else None
        # told by Lean that the claimed answer is false, the formalizer states the right one
        claimed = bool(found.claimed) and "Lean proved its negation" not in prompt
        thinking = (
            "<think>\nI introduce one variable per quantity of the problem, state each given value as a"
            " hypothesis (or a `let`), define the derived quantities, and conclude with the asked one.\n</think>\n"
        )
        return thinking + _fenced(statement(found, name, plan, claimed=claimed))
    if "faithfully encodes a math problem" in prompt:
        matched = _rewrite_for_statement(_between(prompt, "```lean4\n", "```"))
        if matched is not None and matched[1]:
            analysis = matched[0].mismatch.analysis if matched[0].mismatch else ""
            return _reply_json({"analysis": analysis, "verdict": "Inconsistent"})
        return _reply_json(
            {
                "analysis": "Quantities, conditions and the asked quantity all appear in the statement"
                " with matching types.",
                "verdict": "Consistent",
            }
        )
    if "Complete the following Lean 4 code" in prompt:
        code = _between(prompt, "```lean4\n", "```")
        theorem = code[code.index("theorem") :]
        name = theorem.split()[1]
        matched = _rewrite_for_statement(theorem)
        if matched is None:
            raise LookupError("the demo has no proof for this statement")
        rewrite = matched[0]
        k = max(request.n, 1)
        round_index = (request.sample_offset // k) % FORMALIZATIONS_PER_REWRITE
        kinds = rewrite.proofs[min(round_index, len(rewrite.proofs) - 1)]
        position = sample_index - request.sample_offset
        return prover_reply(kinds[min(position, len(kinds) - 1)], rewrite, name)
    if "was rejected by Lean" in prompt or "is not correct. Following is the compilation error" in prompt:
        # a feedback round (`--feedback-rounds N`): shown Lean's errors, the prover writes the honest proof
        for block in re.findall(r"```lean4\n(.*?)```", prompt, re.DOTALL):
            if "theorem" not in block:
                continue
            theorem = block[block.index("theorem") :]
            matched = _rewrite_for_statement(theorem.split(":= by", 1)[0] + ":= by sorry")
            if matched is not None and not matched[1]:
                return prover_reply("ok", matched[0], theorem.split()[1])
        raise LookupError("the demo has no corrected proof for this statement")
    if "Read off the answer" in prompt:
        found = _rewrites_by_question().get(_text_key(_between(prompt, "Problem:\n", "\n\nLean statement")))
        if found is None:
            return _reply_json({"answer": ""})
        target = _target(found, found.steps)
        return _reply_json({"answer": lean_number(values(found.given, found.steps, found.type)[target])})
    if "Classify the candidate" in prompt:
        found = _rewrites_by_question().get(_text_key(_between(prompt, "Problem:\n", "\n\nLean 4 statement")))
        if found is not None and found.intermediate:
            return _reply_json(
                {"class": "intermediate", "reason": "The statement concludes a step before the asked quantity."}
            )
        return _reply_json({"class": "final", "reason": "It is the quantity the problem asks for."})
    if "Rewrite ONLY that output" in prompt:
        return "{}"
    raise LookupError("the demo responder has no answer for this prompt")


# -- scripted models for the other offline journeys: a coverage study and an evaluation ----------------
# (configs/demo_models/*.yaml select them; like everything here they are scripted, never a result)


def _stable_bit(text: str) -> bool:
    """A fixed pseudo-random split of texts (the same on every machine and run)."""
    return int(hashlib.sha256(_text_key(text).encode("utf-8")).hexdigest(), 16) % 2 == 0


def weak_prover(request: ModelRequest, sample_index: int) -> str | tuple[str, FinishReason]:
    """A second prover for ``repro prove-study``: the demo prover on about half the statements, and a
    proof that leaves a ``sorry`` on the others (the gate refuses it), so two provers' coverage differs."""
    prompt = request.prompt_text()
    if "Complete the following Lean 4 code" in prompt:
        code = _between(prompt, "```lean4\n", "```")
        theorem = code[code.index("theorem") :] if "theorem" in code else code
        matched = _rewrite_for_statement(theorem)
        if matched is not None and _stable_bit(theorem):
            return prover_reply("sorry", matched[0], theorem.split()[1])
    return responder(request, sample_index)


@cache
def _original_answers() -> dict[str, str]:
    from repro.data.answers import parse_gsm8k_answer

    rows = [json.loads(line) for line in bundled_path("data/gsm8k_sample.jsonl").read_text("utf-8").splitlines()]
    return {_text_key(row["question"]): parse_gsm8k_answer(row["answer"]) for row in rows}


def _evaluated_answer(request: ModelRequest) -> tuple[str, bool] | None:
    """(the right answer, whether the question is a rewrite) of an evaluation prompt the demo knows."""
    question = _between(request.prompt_text(), "Problem:\n", "\u0000")
    key = _text_key(question)
    if key in _original_answers():
        return _original_answers()[key], False
    rewrite = _rewrites_by_question().get(key)
    return (rewrite.answer, True) if rewrite is not None else None


def solver(request: ModelRequest, sample_index: int) -> str:
    """A model for ``repro evaluate`` on a demo release that answers every question right."""
    known = _evaluated_answer(request)
    if known is None:
        return "I am the demonstration script and do not know this problem. \\boxed{0}"
    return f"Working through the quantities step by step gives {known[0]}.\n\\boxed{{{known[0]}}}"


def memorizer(request: ModelRequest, sample_index: int) -> str:
    """A model for ``repro evaluate`` that answers every original right and about half the rewrites wrong:
    the drop from original to rewritten questions that a model which memorized the source shows."""
    known = _evaluated_answer(request)
    if known is None:
        return "I do not know this problem. \\boxed{0}"
    answer, rewritten = known
    if rewritten and _stable_bit(request.prompt_text()):
        try:
            answer = str(Fraction(answer) + 1)
        except ValueError:
            answer = answer + "1"
    return f"I recall this one: the answer is {answer}.\n\\boxed{{{answer}}}"
