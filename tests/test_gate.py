from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from repro.lean import fake_repl_verifier, verify_proof
from repro.lean.gate import graft
from repro.records import ReasonCode

STATEMENT = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry"
HEADER = "import Mathlib\nopen BigOperators Real Nat Topology Rat\n"
CORPUS: list[dict[str, Any]] = yaml.safe_load((Path(__file__).parent / "fixtures" / "gate_corpus.yaml").read_text())


class RecordingVerifier:
    """Wraps a verifier and remembers every code it was asked to check."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.checked: list[str] = []
        self.backend_id, self.real_lean = inner.backend_id, inner.real_lean
        self.toolchain, self.mathlib_revision = inner.toolchain, inner.mathlib_revision

    async def check(self, code: str, header: str) -> Any:
        self.checked.append(code)
        return await self.inner.check(code, header)

    async def close(self) -> None:
        await self.inner.close()


@pytest.mark.parametrize("case", CORPUS, ids=[case["name"] for case in CORPUS])
async def test_gate_corpus(case: dict[str, Any]) -> None:
    verifier = RecordingVerifier(fake_repl_verifier(case.get("lean_rules"), workers=1))
    try:
        verdict = await verify_proof(STATEMENT, case["output"], verifier, header=HEADER)
    finally:
        await verifier.close()
    assert verdict.verified is case["verified"], verdict.details
    for reason in case["reasons"]:
        assert ReasonCode(reason) in verdict.reasons, verdict.details
    if not case["reasons"]:
        assert verdict.reasons == []
    for fact in case.get("taxonomy", []):
        assert fact in verdict.taxonomy, verdict.taxonomy
    assert bool(verifier.checked) is case["lean"]
    for code in verifier.checked:  # only our statement is ever checked
        assert "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 :=" in code
        assert "= 3600 / 12" not in code and "robe_total'" not in code
        assert code.rstrip().endswith("#print axioms robe_total")


async def test_fake_lean_verdicts_are_marked_not_real() -> None:
    verifier = fake_repl_verifier(workers=1)
    try:
        verdict = await verify_proof(STATEMENT, CORPUS[0]["output"], verifier, header=HEADER)
    finally:
        await verifier.close()
    assert verdict.verified and verdict.lean is not None and verdict.lean.real_lean is False


def test_graft_keeps_helpers_and_drops_the_provers_header() -> None:
    output = "import Mathlib\nopen Nat\n\nlemma aux : 1 = 1 := rfl\n\ntheorem robe_total (x : ℕ) : x = x := by\n  rfl\n"
    grafted = graft(STATEMENT, output, "robe_total")
    assert grafted is not None
    code, theirs, matches = grafted
    assert "import" not in code and "lemma aux" in code
    assert "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  rfl" in code
    assert not matches and theirs.startswith("theorem robe_total (x : ℕ) : x = x")


def test_comments_and_whitespace_do_not_count_as_a_restatement() -> None:
    output = "theorem robe_total (x : ℕ)   -- the count\n    (h₀ : x = 3600) :\n  x / 12 = 300 := by\n  simp [h₀]"
    grafted = graft(STATEMENT, output, "robe_total")
    assert grafted is not None and grafted[2] is True


async def test_native_decide_is_allowed_only_when_configured() -> None:
    output = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  native_decide"
    verifier = fake_repl_verifier(workers=1)
    try:
        allowed = await verify_proof(STATEMENT, output, verifier, header=HEADER, allow_native_decide=True)
    finally:
        await verifier.close()
    # allowed past the source scan, but the fake (like Lean) lists Lean.ofReduceBool, which is rejected
    assert ReasonCode.forbidden_construct not in allowed.reasons
    assert ReasonCode.axiom_violation in allowed.reasons


async def test_no_backend_is_never_verified() -> None:
    verdict = await verify_proof(STATEMENT, CORPUS[0]["output"], None, header=HEADER)
    assert not verdict.verified and ReasonCode.lean_unavailable in verdict.reasons
