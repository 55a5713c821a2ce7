"""Typed records of a coverage study: the statements it proves, the provers, and every sample's outcome."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from repro.config import JudgeSettings, LeanSettings, ModelSettings
from repro.judge.verdict import JudgeVerdict
from repro.records import LeanMessageRecord

STUDY_RECORD_VERSION = 1


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")
    schema_version: int = STUDY_RECORD_VERSION


class StudyStatement(_Record):
    """One formal statement of a statement set (exported from a run, or brought from elsewhere)."""

    id: str = Field(min_length=1)
    statement: str = Field(min_length=1)
    header: str
    theorem_name: str = Field(min_length=1)
    source_dataset: str | None = None
    source_id: str | None = None
    level: str | None = None
    type: str | None = None
    run: str | None = None
    question: str | None = None
    # what our trusted Lean checks found in the run: vacuous | refuted | satisfiable | flagged | undecided.
    # A proof of a vacuous statement proves nothing about its answer.
    statement_check: str | None = None


class ProverEntry(_Record):
    """A named prover of a study: the model settings every request to it is built from."""

    name: str
    settings: ModelSettings


class StudySettings(_Record):
    """What a study does, stored once so ``--resume`` needs nothing but the study directory."""

    k: int = Field(ge=1)
    strategy: Literal["parallel", "sequential"] = "parallel"
    allow_native_decide: bool = False
    # repair near-miss samples as text and let the gate judge each repair (no model call)
    salvage: bool = True
    salvage_variants: int = Field(4, ge=1, le=16)
    # Lean-feedback rounds (the run's prove.feedback_rounds) are not run in studies: pass@j and
    # coverage compare the provers' own samples. Recorded so a study's figures say so; prove-study
    # refuses a config that asks for rounds (repro.study.app.refuse_feedback_rounds).
    feedback_rounds: Literal[0] = 0
    lean: LeanSettings = Field(default_factory=LeanSettings)
    # the kernel judge every sample the screen passes goes to (a study stored before the judge has none:
    # the defaults, the judge chosen by each prover's toolchain)
    judge: JudgeSettings = Field(default_factory=JudgeSettings)


class SampleOutcome(_Record):
    """One prover sample for one statement, what the screen said about it and, where the screen passed it,
    what the kernel judge said.

    ``verified`` (what coverage and pass@j count) means the screen passed the text and the judge passed it;
    ``judged`` means the sample has its verdict: the screen's refusal, or the judge's pass or rejection. A
    sample whose screen or judge gave no verdict is not judged, and ``prove-study --resume`` judges it.
    """

    prover: str
    statement_id: str
    sample_index: int
    text: str
    finish_reason: str
    judged: bool = False
    verified: bool = False
    real_lean: bool = False
    # the screen's "yes" (only a candidate for the judge), and the judge's verdict on it (None: not asked)
    screened: bool = False
    judge: JudgeVerdict | None = None
    reasons: list[str] = Field(default_factory=list)
    taxonomy: list[str] = Field(default_factory=list)
    lean_error_classes: list[str] = Field(default_factory=list)
    checked_code: str | None = None
    # what the gate said and what Lean said, so a report can open a sample without re-checking it
    details: list[str] = Field(default_factory=list)
    lean_messages: list[LeanMessageRecord] = Field(default_factory=list)
    lean_backend: str | None = None
    toolchain: str | None = None
    mathlib_revision: str | None = None
    # request accounting rides on the first sample of each request (the others carry zero)
    tokens_in: int = 0
    tokens_out: int = 0
    model_seconds: float = 0.0
    lean_seconds: float = 0.0
    # salvage of this sample (when the raw text failed): checks made, and the variant the gate verified
    salvage_checks: int = 0
    salvage_verified: bool = False
    salvage_kinds: list[str] = Field(default_factory=list)
    salvage_code: str | None = None
    salvage_lean_seconds: float = 0.0
    # the judge's verdict on the salvaged text it passed (``salvage_verified`` needs it passed), and the
    # salvaged texts the screen passed but the judge rejected
    salvage_judge: JudgeVerdict | None = None
    salvage_judge_rejected: int = 0

    @property
    def judge_status(self) -> str | None:
        return self.judge.status.value if self.judge is not None else None

    @property
    def judge_real(self) -> bool:
        """Whether a real judge passed this sample: a stand-in's pass counts in a study, never as verified."""
        return self.judge is not None and self.judge.passed and self.judge.real
