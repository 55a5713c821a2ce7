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
    # The text the screen's Lean check compiled (after the trusted header): the prover's code block with its
    # leading imports (within the header's) and informational ``#`` commands blanked to spaces, so Lean's
    # positions in it are the prover's. It is what a candidate stores as ``verified_code`` and what the
    # kernel judge compiles after the header (audit B2). None when the static layer could not read the code.
    checked_code: str | None = None
    # the prover's code block as it wrote it (its imports included): what reports show beside its output
    prover_code: str | None = None
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


class JudgeCause(StrEnum):
    """Why there is no verdict (``unavailable``): each is infrastructure, never the proof's fault."""

    missing = "missing"  # no pinned tool for the toolchain, the tool not set up or never built, no Lean
    unconfined = "unconfined"  # writes would not be confined and the operator did not opt in by name
    sandbox = "sandbox"  # the sandbox failed to start, or our target's output changed under it
    timeout = "timeout"  # past judge.timeout_s: the whole process group was killed
    killed = "killed"  # ended by a signal (an out-of-memory kill is SIGKILL)
    crashed = "crashed"  # could not start, or failed without a Lean error or a refusal of the tool
    no_output = "no_output"  # ended without printing anything
    unreadable = "unreadable"  # printed something that is neither a pass nor one of the tool's refusals
    target = "target"  # our own target (header + statement) did not compile: the trusted side failed
    not_recorded = "not_recorded"  # the recorded judge (the offline demo's) holds no verdict for this text


class JudgeRefusal(StrEnum):
    """What kind of ``rejected``: the tool's own refusal, or a Lean error in the submission's compile."""

    compile_error = "compile_error"  # ``Submission.lean:l:c: error: ...``
    type_mismatch = "type_mismatch"  # same name, another type: the judge compares types structurally (audit M3)
    not_found = "not_found"  # our theorem's name is not in the submission
    kind_mismatch = "kind_mismatch"  # declared as another kind (a def, an axiom)
    axiom = "axiom"  # depends on an axiom outside propext, Classical.choice, Quot.sound (sorryAx, ofReduceBool, ...)
    unsafe = "unsafe"  # an unsafe or partial definition (repro's own check: the pinned SafeVerify never refuses one)
    definition_mismatch = "definition_mismatch"
    kernel = "kernel"  # the kernel refused a declaration on replay (SafeVerify's, or our rebuilt one)
    # the compiled module holds an object Lean does not write from text (a number that is not the numeral it
    # prints as, two constants of one name): prover code made it while the submission was elaborated
    corrupted = "corrupted"
    # compiling the submission crashed Lean (SIGABRT, SIGSEGV, ...) twice in fresh directories while our target,
    # compiled afresh under the same tool, compiled cleanly: the code crashes Lean, not the node (red1 R6)
    crash = "crash"


# What the verdict's detail says when the judge refused a type the screen's bridge accepted: the bridge
# (``type_of% @target := @name``) accepts a definitionally equal restatement, the judge does not.
STRUCTURAL_NOTE = (
    "the judge compares the theorem's type with our target's structurally; the screen's bridge accepts a"
    " definitionally equal restatement (such as `3 ≤ x` for `x ≥ 3`), the judge does not, and the judge decides"
)


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
    # the version of repro's own checks around the tool (repro.judge.kernel.JUDGE_CHECKS) that gave this verdict;
    # None for a stand-in that has none, and for every verdict stored before it was recorded
    checks: int | None = None
    toolchain: str | None = None
    real: bool  # False for every stand-in (a fake tool, a recording): such a pass never makes a row verified
    confinement: str = ""  # how the compiles and the replay were confined (the sandbox's own description)
    detail: str = ""  # the tool's own words for a refusal, or why there is no verdict
    cause: str | None = None  # for ``unavailable``: a :class:`JudgeCause`
    # for ``rejected``: a :class:`JudgeRefusal`; ``type_mismatch`` where the screen passed is the case the
    # screen's definitional bridge and the judge's structural comparison disagree on (the judge wins)
    refusal: str | None = None
    elapsed_s: float = 0.0
    cached: bool = False

    @property
    def passed(self) -> bool:
        return self.status == JudgeStatus.passed


@runtime_checkable
class Judge(Protocol):
    """A kernel judge: compiles our target and the submission apart, each sandboxed, and replays the
    submission in Lean's kernel in a process that shares nothing with prover code."""

    # read-only for whoever holds a judge: a class attribute satisfies them, and so does a wrapper's property
    # (CachedJudge answers with the judge inside it)
    @property
    def name(self) -> str: ...

    @property
    def real(self) -> bool: ...

    def revision(self, toolchain: str) -> str | None:
        """The tool revision that judges ``toolchain`` (part of the cache key and of provenance)."""
        ...

    async def judge(self, request: JudgeRequest) -> JudgeVerdict:
        """Never raises for a bad proof or a broken tool: every outcome is a verdict."""
        ...
