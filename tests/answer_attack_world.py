"""An adversary's world for the released answer (red2's): the formalizer and the prover are ours, the rest is
the pipeline world's scripted replies (:mod:`tests.pipeline_world`).

Each problem carries ``[[case:NAME]]``; for a case of :data:`CASES` the formalizer writes our statement
and the prover our proof, and the extraction model answers as the prompt asks (honestly).
"""

from __future__ import annotations

import json
from pathlib import Path

from repro.llm.protocol import ModelRequest
from tests import pipeline_world

# name -> (question, statement, proof body after ``:= by``, extraction reply)
CASES: dict[str, tuple[str, str, str, str]] = {
    # contradictory hypotheses (300 ≠ 301): the prover proves anything; run with statement_checks.vacuity off
    "vacuous_unchecked": (
        "A robe needs 3600 threads in 12 bolts. How many threads per bolt?",
        "theorem {name} (x : ℕ) (h₀ : x = 300) (h₁ : x = 301) : x = 7 := by sorry",
        "omega",
        "7",
    ),
    # an honest statement: x is pinned, the checks find it satisfiable, the answer is 7
    "pinned": (
        "A robe needs 84 threads in 12 bolts. How many threads per bolt?",
        "theorem {name} (x : ℕ) (h₀ : 12 * x = 84) : x = 7 := by sorry",
        "omega",
        "7",
    ),
    # the question asks for (x, y); the statement binds y first; the answer is (3, 2)
    "witness_order": (
        "Find the ordered pair (x, y) of integers such that x + y = 5 and x - y = 1.",
        "theorem {name} : ∃ y x : ℤ, x + y = 5 ∧ x - y = 1 := by sorry",
        "exact ⟨2, 3, by norm_num⟩",
        "2, 3",
    ),
}


def case_of(text: str) -> str:
    return pipeline_world.case_of(text)


def responder(request: ModelRequest, sample_index: int) -> str | tuple[str, str]:
    prompt = request.prompt_text()
    case = case_of(prompt)
    if case not in CASES:
        return pipeline_world.responder(request, sample_index)
    _, statement, proof, extracted = CASES[case]
    name = pipeline_world._name(prompt)
    if "autoformalize" in prompt:
        return f"```lean4\n-- [[case:{case}]]\n{statement.format(name=name)}\n```"
    if "Complete the following Lean 4 code" in prompt:
        head = statement.format(name=name).removesuffix(" := by sorry")
        return f"```lean4\n{head} := by\n  {proof}\n```"
    if "Read off the answer" in prompt:
        return json.dumps({"answer": extracted})
    return pipeline_world.responder(request, sample_index)


def write_problems(path: Path, cases: list[str]) -> Path:
    rows = [{"question": f"{CASES[case][0]} [[case:{case}]]", "answer": "#### 0"} for case in cases]
    path.write_text("\n".join(json.dumps(row, ensure_ascii=False) for row in rows) + "\n", encoding="utf-8")
    return path


def rules(path: Path) -> str:
    """Fake REPL rules for what real Lean decides and the fake cannot (two-variable ∃ witnesses): real Lean
    accepts ``⟨2, 3, by norm_num⟩`` for ``∃ y x : ℤ, x + y = 5 ∧ x - y = 1`` (3 + 2 = 5, 3 - 2 = 1) and refuses
    the shifted witness ``⟨3, 4, _⟩`` (4 + 3 ≠ 5)."""
    path.write_text(
        json.dumps(
            [
                {"match": r"exact ⟨\(?2\)?, \(?3\)?, by", "action": "reply"},
                {
                    "match": r"exact ⟨\(?3\)?, \(?4\)?, by",
                    "action": "reply",
                    "messages": [
                        {
                            "severity": "error",
                            "pos": {"line": 3, "column": 2},
                            "endPos": {"line": 3, "column": 10},
                            "data": "decide failed: the proposition evaluates to false",
                        }
                    ],
                },
            ]
        ),
        encoding="utf-8",
    )
    return str(path)
