"""What the screen and the kernel judge say about one proof: plain data (and the judge's protocol), importable
by stages, levers and stores without importing the judge itself."""

from __future__ import annotations

import hashlib
from enum import StrEnum
from typing import Protocol, runtime_checkable

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


class JudgeStatus(StrEnum):
    """The kernel judge's answer. Only ``passed`` lets a proof count; ``unavailable`` is no verdict at all."""

    passed = "passed"  # replayed in the kernel: our statement, standard axioms only
    rejected = "rejected"  # the tool's own refusal, or a Lean error compiling the submission
    unavailable = "unavailable"  # no verdict (tool missing, timeout, killed, sandbox error, unreadable): resumable


class JudgeRequest(BaseModel):
    """One proof for the judge. ``header`` is the trusted one (the run's configuration), never prover text;
    ``submission`` is the text the screen's Lean check saw (prover imports removed, ``#`` commands blanked)."""

    key: str  # what the request is about, for messages: a candidate, a release row, a study sample
    header: str
    statement: str  # our statement, ending ``:= by sorry``
    theorem_name: str  # the theorem of ours the submission must prove
    submission: str
    toolchain: str | None = None

    def cache_key(self, tool: str, revision: str | None, toolchain: str) -> str:
        """(statement with its header, submission, toolchain, tool and revision): identical code is judged once."""
        parts = [tool, revision or "", toolchain, self.header, self.statement, self.theorem_name, self.submission]
        return hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()


class JudgeVerdict(BaseModel):
    key: str
    status: JudgeStatus
    tool: str  # "SafeVerify", "comparator", or a stand-in's name
    tool_revision: str | None = None
    toolchain: str | None = None
    real: bool  # False for every stand-in (a fake tool, a recording): such a pass never makes a row verified
    confinement: str = ""  # how the compiles and the replay were confined (the sandbox's own description)
    detail: str = ""  # the tool's own words for a refusal, or why there is no verdict
    cause: str | None = None  # for ``unavailable``: missing, timeout, killed, sandbox, unreadable, crashed
    elapsed_s: float = 0.0
    cached: bool = False

    @property
    def passed(self) -> bool:
        return self.status == JudgeStatus.passed


@runtime_checkable
class Judge(Protocol):
    """A kernel judge: compiles our target and the submission apart, each sandboxed, and replays the
    submission in Lean's kernel in a process that shares nothing with prover code."""

    name: str
    real: bool

    def revision(self, toolchain: str) -> str | None:
        """The tool revision that judges ``toolchain`` (part of the cache key and of provenance)."""
        ...

    async def judge(self, request: JudgeRequest) -> JudgeVerdict:
        """Never raises for a bad proof or a broken tool: every outcome is a verdict."""
        ...
