"""A Kimina server that moves line numbers can never make a message land in the wrong command.

The stub below answers as Lean would on the code *the server* built: an older server strips import
lines without adding their count back; every server splits lines with ``str.splitlines`` and joins
them with ``\\n``. Our sentinels then sit where we did not put them, and the verdict is an
infrastructure failure, never verified.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from repro.judge import verify_proof
from repro.lean import InfraStatus, KiminaVerifier
from repro.records import ReasonCode
from tests.test_lean_pool import KiminaStub

HEADER = "import Mathlib\nimport Aesop\n"
STATEMENT = "theorem k : 1 + 1 = 2 := by sorry"


def _lean_like(transform: Callable[[str], str]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """Answer for the code after the server's ``transform``: sentinels echo, a clean axiom report."""

    def answer(snippet: dict[str, Any]) -> dict[str, Any]:
        code = transform(snippet["code"])
        messages: list[dict[str, Any]] = []
        for number, text in enumerate(code.split("\n"), start=1):
            if text.startswith('#print "'):
                messages.append({"severity": "info", "pos": {"line": number, "column": 0}, "data": text[8:-1]})
            elif text == "#eval Lean.versionString":
                messages.append({"severity": "info", "pos": {"line": number, "column": 0}, "data": '"4.15.0"'})
            elif text.startswith("#print axioms "):
                name = text.removeprefix("#print axioms ").strip().removeprefix("_root_.")
                data = f"'{name}' depends on axioms: [propext]"
                messages.append({"severity": "info", "pos": {"line": number, "column": 0}, "data": data})
            elif text.startswith("theorem repro_target_"):
                data = "declaration uses 'sorry'"
                messages.append({"severity": "warning", "pos": {"line": number, "column": 8}, "data": data})
        return {"error": None, "response": {"messages": messages, "env": 0}}

    return answer


def _strip_imports(code: str) -> str:
    return "\n".join(line for line in code.split("\n") if not line.startswith("import "))


def _split_like_the_server(code: str) -> str:
    return "\n".join(code.splitlines())


@pytest.fixture
def stub_factory() -> Iterator[Callable[[Callable[[str], str]], KiminaStub]]:
    stubs: list[KiminaStub] = []

    def make(transform: Callable[[str], str]) -> KiminaStub:
        stubs.append(KiminaStub(_lean_like(transform)))
        return stubs[-1]

    yield make
    for stub in stubs:
        stub.server.shutdown()


async def test_a_faithful_server_verifies(stub_factory: Callable[[Callable[[str], str]], KiminaStub]) -> None:
    verifier = KiminaVerifier(url=stub_factory(lambda code: code).url, timeout_s=5)
    try:
        verdict = await verify_proof(STATEMENT, "theorem k : 1 + 1 = 2 := by\n  norm_num", verifier, header=HEADER)
    finally:
        await verifier.close()
    assert verdict.verified, verdict.details
    assert not any(m.text.startswith("repro_sentinel_") for m in verdict.messages), "sentinels are ours, not Lean's"


async def test_a_server_that_strips_imports_gives_no_verdict(
    stub_factory: Callable[[Callable[[str], str]], KiminaStub],
) -> None:
    verifier = KiminaVerifier(url=stub_factory(_strip_imports).url, timeout_s=5)
    try:
        verdict = await verify_proof(STATEMENT, "theorem k : 1 + 1 = 2 := by\n  norm_num", verifier, header=HEADER)
    finally:
        await verifier.close()
    assert not verdict.verified
    assert ReasonCode.lean_unavailable in verdict.reasons
    assert any("moved message positions" in detail for detail in verdict.details), verdict.details


@pytest.mark.parametrize("line_break", ["\u2028", "\x0b", "\x0c", "\x1c", "\x85", "\r", "\u2029"])
async def test_a_line_split_inside_the_provers_code_gives_no_verdict(
    stub_factory: Callable[[Callable[[str], str]], KiminaStub], line_break: str
) -> None:
    """Even past the static layer (which refuses these characters), the sentinels catch the split."""
    verifier = KiminaVerifier(url=stub_factory(_split_like_the_server).url, timeout_s=5)
    proof = f"theorem k : 1 + 1 = 2 := by norm_num -- x{line_break}#print axioms k"
    try:
        results = await verifier.check_sequence(
            ["theorem repro_target_0 : 1 + 1 = 2 := by sorry", proof, "example : True := trivial", "#print axioms k"],
            HEADER,
        )
        verdict = await verify_proof(STATEMENT, proof, verifier, header=HEADER)
    finally:
        await verifier.close()
    assert len(results) == 1 and results[0].infra_status == InfraStatus.crash
    assert "moved message positions" in (results[0].detail or "")
    assert not verdict.verified and ReasonCode.forbidden_construct in verdict.reasons
