"""The whole gate corpus through the gate, with the fake REPL served in this process: seconds, not minutes.

``tests/test_gate.py`` runs each corpus case through the fake REPL in a subprocess behind the real
worker pool (about a second per case). This file runs the same cases, with the same expectations,
through :func:`tests.doubles.fake_repl.serve` over in-memory streams: the same JSON-lines protocol and
the same rules, only no process. It is the corpus half of the quick kill suite of the mutation
benchmark (``benchmarks/gate_mutation.py``), which runs it against every mutant before the slow tests.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from repro.judge import reserved_name, verify_proof
from repro.lean.protocol import LeanResult, result_from_repl_json
from repro.records import ReasonCode
from tests.doubles.fake_repl import serve
from tests.test_gate import CORPUS, HEADER, STATEMENT


class InProcessFakeRepl:
    """The fake REPL of :mod:`tests.doubles.fake_repl` spoken to without a subprocess.

    Follows the worker pool's conversation (``repro/lean/repl_pool.py``, itself after
    leanprover-community/repl ``REPL/Main.lean``): the header first, without ``env``; then each
    command in the environment the previous reply named; stop at a reply without ``env``.
    """

    backend_id, real_lean, toolchain, mathlib_revision = "fake-repl-in-process", False, "fake", "fake"

    def __init__(self, rules: list[dict[str, Any]] | None) -> None:
        self.rules = rules or []
        self.sequences: list[list[str]] = []

    async def check(self, code: str, header: str) -> LeanResult:
        return (await self.check_sequence([code], header))[0]

    async def check_sequence(self, commands: list[str], header: str) -> list[LeanResult]:
        self.sequences.append(list(commands))
        # the fake numbers environments 0, 1, 2, ... in order, so each request can name the one before
        requests = [{"cmd": header}] + [{"cmd": code, "env": index} for index, code in enumerate(commands)]
        stdout = io.StringIO()
        serve(self.rules, io.StringIO("".join(json.dumps(r) + "\n\n" for r in requests)), stdout)
        replies = [json.loads(block) for block in stdout.getvalue().split("\n\n") if block.strip()]
        assert replies and replies[0].get("env") == 0, replies[:1]
        results: list[LeanResult] = []
        for reply in replies[1:]:
            results.append(
                result_from_repl_json(
                    reply,
                    backend_id=self.backend_id,
                    real_lean=False,
                    elapsed_s=0.0,
                    toolchain="fake",
                    mathlib_revision="fake",
                )
            )
            if not isinstance(reply.get("env"), int):
                break
        return results

    async def close(self) -> None:
        return None


@pytest.mark.parametrize("case", CORPUS, ids=[case["name"] for case in CORPUS])
async def test_gate_corpus_in_process(case: dict[str, Any]) -> None:
    statement = case.get("statement", STATEMENT)
    verifier = InProcessFakeRepl(case.get("lean_rules"))
    verdict = await verify_proof(
        statement, case["output"], verifier, header=HEADER, finish_reason=case.get("finish_reason", "stop")
    )
    assert verdict.verified is case["verified"], verdict.details
    for reason in case["reasons"]:
        assert ReasonCode(reason) in verdict.reasons, verdict.details
    if not case["reasons"]:
        assert verdict.reasons == []
    for fact in case.get("taxonomy", []):
        assert fact in verdict.taxonomy, verdict.taxonomy
    assert bool(verifier.sequences) is case["lean"], verdict.details
    assert bool(verdict.static_passed) is case["lean"], verdict.details
    for commands in verifier.sequences:
        # as in tests/test_gate.py: our statement opening our section, the prover's code, then our two
        # commands, the first closing the prover's open scopes and our section
        reserved, name = reserved_name(statement), statement.split()[1]
        assert commands[0].startswith(f"theorem {reserved} ")
        assert commands[0].endswith(f"\n    := by sorry\n\nsection {reserved}")
        closing, bridge = commands[2].rsplit("\n", 1)
        assert closing.endswith(f"end {reserved}") and set(closing.splitlines()[:-1]) <= {"end"}
        assert bridge == f"theorem {reserved}_bridge : type_of% @{reserved} := @_root_.{name}"
        assert commands[3:] == [f"#print axioms _root_.{name}"]
