"""What the screen and the judge say about one proof: plain data, importable by stages and levers
without importing the judge itself."""

from __future__ import annotations

from pydantic import BaseModel, Field

from repro.lean.protocol import LeanMessage, LeanResult
from repro.lean.taxonomy import TaxonomyFact
from repro.records import ReasonCode

STANDARD_AXIOMS = frozenset({"propext", "Classical.choice", "Quot.sound"})


class Verdict(BaseModel):
    verified: bool
    reasons: list[ReasonCode] = Field(default_factory=list)
    taxonomy: list[TaxonomyFact] = Field(default_factory=list)
    details: list[str] = Field(default_factory=list)
    theorem_name: str | None = None
    checked_code: str | None = None
    prover_statement_matches: bool | None = None
    axioms: list[str] | None = None
    messages: list[LeanMessage] = Field(default_factory=list)
    lean: LeanResult | None = None
    lean_commands: list[str] = Field(default_factory=list)
    lean_steps: list[LeanResult] = Field(default_factory=list)
    static_passed: bool | None = None  # whether the static layer let the code through to Lean
    policy: list[str] = Field(
        default_factory=list
    )  # refusals by policy, not unsoundness: native_decide, search, kernel_decide

    def add(self, reason: ReasonCode, detail: str) -> None:
        if reason not in self.reasons:
            self.reasons.append(reason)
        self.details.append(detail)
