"""A synthetic 50-instance release and two scripted models whose correctness is known in advance.

Instance i asks ``[q{i}] Add a and b.`` (original) and ``[q{i}] Find the sum of a2 and b2, then add
0 ...`` (rewritten, with ``i % 4`` extra literals). The steady model answers every original right
(in varied but equivalent forms: thousands separators, decimals) and misses exactly the rewrites in
``STEADY_FAILS``; the noisy model is right where ``noisy_correct`` says so.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from repro.llm.protocol import ModelRequest
from repro.records import Provenance, ReleasedInstance, StageModel

INSTANCES = 50
STEADY_FAILS = frozenset({2, 5, 9, 14, 20, 27, 33, 41, 48})
LEVELS = [f"Level {n}" for n in range(1, 6)]
TYPES = ["Algebra", "Prealgebra"]


def operands(index: int) -> tuple[int, int, int, int]:
    first = 1000 * index + 5 if index % 6 == 0 else index + 3
    return first, 2 * index + 1, index + 11, 3 * index + 2


def level_of(index: int) -> str:
    return LEVELS[index % 5]


def type_of(index: int) -> str:
    return TYPES[index % 2]


def original_answer(index: int) -> int:
    a, b, _, _ = operands(index)
    return a + b


def rewritten_answer(index: int) -> int:
    _, _, c, d = operands(index)
    return c + d


def extra_literals(index: int) -> int:
    return index % 4


def instance(index: int) -> ReleasedInstance:
    a, b, c, d = operands(index)
    proof = "norm_num" + " <;> simp" * (index % 3)
    return ReleasedInstance(
        instance_id=f"synthetic:{index}#r0",
        source_dataset="synthetic",
        source_id=str(index),
        level=level_of(index),
        type=type_of(index),
        original_question=f"[q{index}] Add {a} and {b}.",
        original_answer=str(a + b),
        rewritten_question=f"[q{index}] Find the sum of {c} and {d}" + ", then add 0" * extra_literals(index) + ".",
        new_answer=str(c + d),
        lean_statement=f"theorem t{index} : ({c} : ℕ) + {d} = {c + d} := by sorry",
        lean_proof=f"theorem t{index} : ({c} : ℕ) + {d} = {c + d} := by\n  {proof}",
        verified_code=f"theorem t{index} : ({c} : ℕ) + {d} = {c + d} := by\n  {proof}",
        lean_header="import Mathlib\n",
        theorem_name=f"t{index}",
        provenance=Provenance(
            models=[StageModel(stage="prove", model="prover", backend="scripted")],
            lean_toolchain="leanprover/lean4:v4.15.0",
            mathlib_revision="v4.15.0",
            verifier_backend="lean-interact-repl",
            verified_by_real_lean=True,
            proof_hash="0" * 64,
            repro_version="0.1.0",
            released_at="2026-01-01T00:00:00Z",
        ),
    )


def write_release(directory: Path, count: int = INSTANCES) -> Path:
    (directory / "data").mkdir(parents=True, exist_ok=True)
    with (directory / "data" / "test.jsonl").open("w", encoding="utf-8") as handle:
        for index in range(count):
            handle.write(json.dumps(instance(index).model_dump(mode="json"), ensure_ascii=False) + "\n")
    return directory


def noisy_correct(index: int, rewritten: bool) -> bool:
    return (index * 3 + 1) % 10 < 6 if rewritten else (index * 7) % 10 < 7


def steady_correct(index: int, rewritten: bool) -> bool:
    return not (rewritten and index in STEADY_FAILS)


def _question(prompt: str) -> tuple[int, bool]:
    match = re.search(r"\[q(\d+)\] (Add|Find the sum)", prompt)
    if not match:
        raise LookupError("not an evaluation prompt of the synthetic release")
    return int(match.group(1)), match.group(2) == "Find the sum"


def reply(model: str, prompt: str) -> str:
    """The scripted reply of ``steady`` or ``noisy`` to an evaluation prompt."""
    index, rewritten = _question(prompt)
    answer = rewritten_answer(index) if rewritten else original_answer(index)
    correct = steady_correct(index, rewritten) if model == "steady" else noisy_correct(index, rewritten)
    if not correct:
        if model == "noisy" and index % 3 == 0:
            return "I cannot decide."
        return f"Adding gives {answer + 1}, so the answer is $\\boxed{{{answer + 1}}}$."
    if answer >= 1000:
        shown = f"{answer:,}"
    elif index % 5 == 1:
        shown = f"{answer}.0"
    else:
        shown = str(answer)
    return f"We add the numbers. The sum is {answer}. Final answer: \\boxed{{{shown}}}"


def steady(request: ModelRequest, sample_index: int) -> str:
    return reply("steady", request.prompt_text())


def noisy(request: ModelRequest, sample_index: int) -> str:
    return reply("noisy", request.prompt_text())


def http_responder(body: dict[str, Any], index: int) -> str:
    """The same two models behind an OpenAI-compatible test server (chosen by the wire model id)."""
    return reply(str(body["model"]), str(body["messages"][-1]["content"]))


def model_file(directory: Path, name: str) -> Path:
    path = directory / f"{name}.yaml"
    path.write_text(f"backend: scripted\nmodel: {name}\nscript: tests.evaluate_world:{name}\n", encoding="utf-8")
    return path
