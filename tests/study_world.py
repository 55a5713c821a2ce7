"""A scripted world for coverage studies: 60 statements and three provers with known outcomes.

Which samples of which prover pass is fixed here by set membership, so every figure of a study
report can be computed by hand (the tests do so in comments and literals):

- ``corrupt`` (boundary corruption): statements CORRUPT_PROVES get one good sample (index 2) out of 4,
  the other samples carry a special token; elsewhere every sample carries a special token and ten
  repeated ``<;> omega`` lines.
- ``restate`` (restated targets): statements RESTATE_PROVES get 2 good samples (0 and 1), the other
  samples restate the target; elsewhere all 4 restate it.
- ``slow`` (good but slow): statements SLOW_PROVES get 4 good samples; elsewhere 4 samples that Lean
  rejects (``linarith failed``, by a fake REPL rule); every request waits SLOW_LATENCY_S.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

from repro.config import DEFAULT_HEADER
from tests.doubles.fake_lean import fake_lean_section
from tests.doubles.judge import STAND_IN_CONFIG

STATEMENTS = 60
K = 4
SLOW_LATENCY_S = 0.05
CORRUPT_PROVES = set(range(0, 15)) | set(range(55, 60))
RESTATE_PROVES = set(range(0, 10)) | set(range(20, 35)) | set(range(50, 55))
SLOW_PROVES = set(range(5, 45))

LEAN_RULES = [
    {
        "match": "nlinarith",
        "action": "reply",
        "messages": [
            {
                "severity": "error",
                "pos": {"line": 2, "column": 2},
                "endPos": {"line": 2, "column": 11},
                "data": "linarith failed to find a contradiction",
            }
        ],
    }
]


def statement_text(i: int) -> str:
    return f"theorem study_{i:02d} (x : ℕ) (h₀ : x = {i}) : x + 1 = {i + 1} := by sorry"


def statement_rows(count: int = STATEMENTS) -> list[dict[str, Any]]:
    """``count`` statements; beyond the first 60, statement i behaves as statement i % 60 for every prover."""
    return [
        {
            "id": f"s{i:02d}",
            "statement": statement_text(i),
            "header": DEFAULT_HEADER,
            "theorem_name": f"study_{i:02d}",
            "source_dataset": "world",
            "source_id": str(i),
            "level": f"Level {i % 3 + 1}",
            "type": "Algebra" if i % STATEMENTS < 30 else "Number Theory",
            "question": f"What is {i} + 1?",
        }
        for i in range(count)
    ]


def write_statement_file(path: Path, count: int = STATEMENTS) -> Path:
    path.write_text("\n".join(json.dumps(row, ensure_ascii=False) for row in statement_rows(count)) + "\n")
    return path


def write_lean_config(directory: Path, workers: int = 2) -> Path:
    rules = directory / "lean_rules.json"
    rules.write_text(json.dumps(LEAN_RULES))
    config = directory / "lean.yaml"
    lean = fake_lean_section(str(rules), workers=workers)
    config.write_text(json.dumps({"lean": lean, "judge": STAND_IN_CONFIG}))
    return config


def _good(i: int) -> str:
    return (
        f"```lean4\ntheorem study_{i:02d} (x : ℕ) (h₀ : x = {i}) : x + 1 = {i + 1} := by\n  subst h₀\n  norm_num\n```"
    )


def _corrupt(i: int, repeat: bool) -> str:
    tail = "\n" + "\n".join("  <;> omega" for _ in range(10)) if repeat else ""
    return (
        f"```lean4\ntheorem study_{i:02d} (x : ℕ) (h₀ : x = {i}) : x + 1 = {i + 1} := by\n"
        f"  subst h₀\n  norm_num <|Assistant|> rfl{tail}\n```"
    )


def _restated(i: int) -> str:
    return f"```lean4\ntheorem study_{i:02d} (x : ℕ) (h₀ : x = {i}) : x + 1 = {i} + 1 := by\n  subst h₀\n  rfl\n```"


def _lean_rejected(i: int) -> str:
    return (
        f"```lean4\ntheorem study_{i:02d} (x : ℕ) (h₀ : x = {i}) : x + 1 = {i + 1} := by\n"
        "  nlinarith [sq_nonneg (x - 1)]\n```"
    )


def proof_for(prover: str, i: int, sample: int) -> str:
    kind = i % STATEMENTS
    if prover == "corrupt":
        if kind in CORRUPT_PROVES:
            return _good(i) if sample == 2 else _corrupt(i, repeat=False)
        return _corrupt(i, repeat=True)
    if prover == "restate":
        return _good(i) if kind in RESTATE_PROVES and sample < 2 else _restated(i)
    if prover == "slow":
        return _good(i) if kind in SLOW_PROVES else _lean_rejected(i)
    raise LookupError(f"no scripted prover {prover!r}")


def http_responder(body: dict[str, Any], index: int) -> str:
    """For the OpenAI-compatible test server: the model name picks the prover, seed numbers the sample."""
    prompt = body["messages"][-1]["content"]
    match = re.search(r"theorem study_(\d+)", prompt)
    if match is None:
        raise LookupError("not a study prompt")
    if body["model"] == "slow" and index == 0:
        time.sleep(SLOW_LATENCY_S)
    # chat_request sends seed = settings.seed (0) + the sample offset of the request
    return proof_for(body["model"], int(match.group(1)), int(body.get("seed") or 0) + index)


def statement_prover(request: Any, sample_index: int) -> str:
    """A scripted prover (ScriptedBackend script) that proves whatever x / 12 statement it is shown."""
    prompt = request.prompt_text()
    match = re.search(r"^(theorem \S+ .*?) := by sorry", prompt, re.MULTILINE)
    if match is None:
        raise LookupError("no statement in the prompt")
    return f"```lean4\n{match.group(1)} := by\n  subst h₀\n  norm_num\n```"
