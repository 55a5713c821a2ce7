"""A scripted world for pipeline tests: every stage's reply depends on a case tag in the problem.

Problems carry ``[[case:NAME]]``; the rewrite keeps the tag, so every later prompt shows it.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from repro.llm.protocol import ModelRequest
from tests.doubles.fake_lean import fake_lean_section

GOOD_STATEMENT = "theorem {name} (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry"
GOOD_PROOF = "Plan.\n```lean4\ntheorem {name} (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num\n```"
SORRY_PROOF = "```lean4\ntheorem {name} (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  sorry\n```"
RESTATED_PROOF = "```lean4\ntheorem {name} (x : ℕ) (h₀ : x = 3600) : x / 12 = 3600 / 12 := by\n  subst h₀\n  rfl\n```"
SET_STATEMENT = "theorem {name} (x : ℕ) (h₀ : x = 3600) : x / 12 ∈ ({{300}} : Set ℕ) := by sorry"
SET_PROOF = (
    "```lean4\ntheorem {name} (x : ℕ) (h₀ : x = 3600) : x / 12 ∈ ({{300}} : Set ℕ) := by\n  subst h₀\n  simp\n```"
)
# contradictory hypotheses (3600 / 12 is 300): the prover proves it, our vacuity check refuses it first
VACUOUS_STATEMENT = "theorem {name} (x : ℕ) (h₀ : x = 3600) (h₁ : x / 12 = 299) : x = 7 := by sorry"
VACUOUS_PROOF = "```lean4\ntheorem {name} (x : ℕ) (h₀ : x = 3600) (h₁ : x / 12 = 299) : x = 7 := by\n  omega\n```"
# false: 3600 / 12 is 300; every sample fails, our refutation proves the negation
REFUTED_STATEMENT = "theorem {name} (x : ℕ) (h₀ : x = 3600) : x / 12 = 301 := by sorry"
UNEVALUATED_STATEMENT = "theorem {name} (x : ℝ) (h₀ : x = 3600) : x / 12 = 3600 / 12 := by sorry"
UNEVALUATED_PROOF = (
    "```lean4\ntheorem {name} (x : ℝ) (h₀ : x = 3600) : x / 12 = 3600 / 12 := by\n  subst h₀\n  rfl\n```"
)

# Near misses (RePro App. J) and what salvage or a feedback round does with them
CORRUPTED_HEADER_PROOF = (
    "```lean4\ntheorem {name} (x : ℕ) (h₀ : x = 3600) : x / 12 = 300<|Assistant|>3 := by\n  subst h₀\n  norm_num\n```"
)
REPEATED_TO_LIMIT_PROOF = (
    "```lean4\ntheorem {name} (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num\n"
    + "  <;> simp\n" * 6
    + "  <;> si"
)
# nothing may rescue these: the body assumes the conclusion under its own hypothesis, or never reads h₀
ASSUMES_CONCLUSION_PROOF = "```lean4\ntheorem {name} (x : ℕ) (h₁ : x / 12 = 300) : x / 12 = 300 := by\n  exact h₁\n```"
CORRUPTED_WRONG_MATH_PROOF = (
    "```lean4\ntheorem {name} (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by<|im_end|>\n  norm_num\n```"
)
# the screen passes it, the stand-in kernel judge (tests/doubles/judge.py) rejects it: the world's stand-in for
# a proof whose statement the bridge accepts by definitional unfolding and the kernel judge, comparing
# types structurally, does not
JUDGE_OVERRULED_PROOF = (
    "```lean4\ntheorem {name} (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n"
    "  norm_num [judge_rejects_this]\n```"
)
# a first attempt that Lean rejects (the world's fake rules answer BADLEMMA with an error)
FEEDBACK_FIRST_PROOF = (
    "```lean4\ntheorem {name} (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num [BADLEMMA]\n```"
)


def case_of(text: str) -> str:
    match = re.search(r"\[\[case:(\w+)\]\]", text)
    return match.group(1) if match else "retained"


def _name(prompt: str) -> str:
    match = re.search(r"theorem name: (\S+)", prompt) or re.search(r"theorem (repro_\w+)", prompt)
    return match.group(1) if match else "unknown"


# names a file; while it exists, the screen endpoint is down (see screen_outage)
_OUTAGE_FLAG = "WORLD_SCREEN_OUTAGE_FLAG"


def write_problems(path: Path, cases: list[str]) -> Path:
    """A GSM8K-style problem file of this world: one problem per case, in order."""
    rows = [
        {
            "question": f"Problem {i} [[case:{case}]]: a robe needs 3600 threads in 12 bolts. How many per bolt?",
            "answer": "#### 300",
        }
        for i, case in enumerate(cases)
    ]
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    return path


def screen_outage(monkeypatch: pytest.MonkeyPatch, directory: Path) -> Path:
    """Take this world's screen endpoint down (every screen call fails) until the returned file is deleted:
    an outage a resumed run outlives."""
    flag = directory / "outage"
    flag.touch()
    monkeypatch.setenv(_OUTAGE_FLAG, str(flag))
    return flag


def responder(request: ModelRequest, sample_index: int) -> str | tuple[str, str]:
    prompt = request.prompt_text()
    outage = os.environ.get(_OUTAGE_FLAG)
    if outage and os.path.exists(outage) and "strict reviewer" in prompt:
        raise LookupError("screen endpoint down (simulated outage)")
    case = case_of(prompt)
    if "You rewrite math problems" in prompt:
        if case == "rewrite_invalid_json":
            return "I would rather not."
        question = prompt.split("Original problem:\n", 1)[1].split("\n\nReply", 1)[0]
        return json.dumps({"rewritten_question": f"Rewritten ({sample_index}): {question}"})
    if "strict reviewer" in prompt:
        verdict = "no" if case == "infeasible" else "yes"
        return json.dumps({"problem_kind": "applied", "analysis": "ok", "verdict": verdict, "answer": "300"})
    if "autoformalize" in prompt:
        name = _name(prompt)
        if case == "no_lean_block":
            return "I think the statement is about division."
        statement = {
            "extraction_not_in_proof": SET_STATEMENT,
            "intermediate": UNEVALUATED_STATEMENT,
            "vacuous": VACUOUS_STATEMENT,
            "refuted": REFUTED_STATEMENT,
        }.get(case, GOOD_STATEMENT)
        if case == "refuted" and "Lean proved its negation" in prompt:
            statement = GOOD_STATEMENT  # told why, the formalizer corrects the quantity
        statement = statement.format(name=name)
        if case == "compile_error":
            statement = statement.replace("(x : ℕ)", "(x : ℕ) (BADSTMT : ℕ)")
        # the tag rides along in a comment so the prover's prompt shows the case too
        return f"<think>...</think>\n```lean4\n-- [[case:{case}]]\n{statement}\n```"
    if "faithfully encodes" in prompt:
        mismatch = case == "semantic_mismatch" or (case == "mismatch_then_regenerated" and sample_index < 3)
        return json.dumps({"analysis": "compared", "verdict": "Inconsistent" if mismatch else "Consistent"})
    if "rejected by Lean" in prompt or "is not correct. Following is the compilation error" in prompt:
        # a Lean-feedback round: the prover fixes its proof when Lean's message names the bad lemma
        name = _name(prompt)
        return GOOD_PROOF.format(name=name) if "BADLEMMA" in prompt else FEEDBACK_FIRST_PROOF.format(name=name)
    if "Complete the following Lean 4 code" in prompt:
        name = _name(prompt)
        near_misses = {
            "special_token_header": CORRUPTED_HEADER_PROOF,
            "restated_assumes_conclusion": ASSUMES_CONCLUSION_PROOF,
            "corrupted_wrong_math": CORRUPTED_WRONG_MATH_PROOF,
            "feedback_fixes": FEEDBACK_FIRST_PROOF,
            "judge_overrules": JUDGE_OVERRULED_PROOF,
        }
        if case == "repetition_to_limit":
            return REPEATED_TO_LIMIT_PROOF.format(name=name), "length"
        if case in near_misses:
            return near_misses[case].format(name=name)
        if case == "second_attempt":
            template = SORRY_PROOF if sample_index % 3 == 0 else GOOD_PROOF
        elif case == "judge_overrules_first":  # the first screened sample is overruled, the second is not
            template = JUDGE_OVERRULED_PROOF if sample_index % 3 == 0 else GOOD_PROOF
        elif case == "restated_target":
            template = RESTATED_PROOF
        elif case == "extraction_not_in_proof":
            template = SET_PROOF
        elif case == "intermediate":
            template = UNEVALUATED_PROOF
        elif case == "vacuous":
            template = VACUOUS_PROOF
        elif case == "refuted" and "301" in prompt:
            template = SORRY_PROOF
        else:
            template = GOOD_PROOF
        return template.format(name=name)
    if "Read off the answer" in prompt:
        return json.dumps({"answer": "310" if case == "extraction_not_in_proof" else "300"})
    if "Classify the candidate" in prompt:
        return json.dumps({"class": "final", "reason": "it is the asked quantity"})
    if "Rewrite ONLY that output" in prompt:
        return "still not JSON"
    raise LookupError("no scripted reply")


def world_config(dataset: str, **overrides: Any) -> dict[str, Any]:
    scripted = {
        "backend": "scripted",
        "model": "world",
        "script": "tests.pipeline_world:responder",
        "base_url": None,
        "api_key_env": None,
    }
    config: dict[str, Any] = {
        "name": "world",
        "dataset": {"name": "world", "path": dataset, "license": "cc0-1.0", "attribution": "synthetic test problems"},
        "models": {
            stage: dict(scripted)
            for stage in ("rewrite", "screen", "formalize", "align", "prove", "extract", "classify")
        },
        "prove": {"k": 3, "strategy": "parallel"},
        "retries": {"rewrites_per_problem": 1, "formalizations_per_rewrite": 2},
        "lean": fake_lean_section(workers=2, timeout_s=20),
        # the stand-in kernel judge (tests/doubles/judge.py): never real, so nothing here is verified
        "judge": {"backend": "factory", "factory": "tests.doubles.judge:stand_in_judge"},
        "problems_in_flight": 8,
    }
    for key, value in overrides.items():
        config[key] = value
    return config
