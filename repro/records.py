"""Typed records that flow between stages and into the run store.

Every record carries ``schema_version`` so a store written by an older repro can be read and migrated
instead of silently misread. Reason codes live here, in one place, with the sentence that explains
each of them to someone auditing a run.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

RECORD_SCHEMA_VERSION = 1


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class Stage(StrEnum):
    rewrite = "rewrite"
    screen = "screen"
    formalize = "formalize"
    align = "align"
    check = "check"  # our trusted Lean checks of the statement: vacuity, satisfiability, refutation
    prove = "prove"
    verify = "verify"
    # levers of the prove/verify stages: a failed sample's text repaired (no model call), and the
    # prover asked again with Lean's messages; both rank with verify in the funnel
    salvage = "salvage"
    feedback = "feedback"
    # the kernel judge (repro.judge): what the screen (verify, salvage, feedback) passed is replayed in
    # Lean's kernel in a sealed process; only its pass makes a proof count
    judge = "judge"
    answer = "answer"


# The pipeline's stages in order (the levers are not stages of their own in the funnel).
STAGE_ORDER: tuple[Stage, ...] = tuple(stage for stage in Stage if stage not in (Stage.salvage, Stage.feedback))
LEVER_STAGES: tuple[Stage, ...] = (Stage.salvage, Stage.feedback)
# The screens whose passes the judge judges, in the order that numbers judge attempts: the judgement of
# attempt n of JUDGED_SCREENS[i] is judge attempt n * len(JUDGED_SCREENS) + i, so the judgements of a raw
# sample, a salvaged text and a feedback reply never share one (candidate, stage, attempt number).
JUDGED_SCREENS: tuple[Stage, ...] = (Stage.verify, Stage.salvage, Stage.feedback)


def judge_attempt_number(screened_by: Stage, of_attempt: int) -> int:
    """The judge attempt that judges attempt ``of_attempt`` of the screen stage ``screened_by``."""
    return of_attempt * len(JUDGED_SCREENS) + JUDGED_SCREENS.index(screened_by)


class AttemptStatus(StrEnum):
    passed = "passed"
    rejected = "rejected"
    # The infrastructure (model endpoint, Lean worker) failed; nothing was learned about the candidate.
    error = "error"


class CandidateStatus(StrEnum):
    in_progress = "in_progress"
    retained = "retained"
    rejected = "rejected"
    # an endpoint or Lean failed: no verdict on the candidate; `--resume` takes it up again
    unfinished = "unfinished"


class ReasonCode(StrEnum):
    """Why an attempt was rejected. ``REASON_DESCRIPTIONS`` documents each one."""

    rewrite_invalid_json = "rewrite_invalid_json"
    rewrite_empty = "rewrite_empty"
    infeasible = "infeasible"
    screen_unparseable = "screen_unparseable"
    no_lean_block = "no_lean_block"
    generation_truncated = "generation_truncated"
    formalization_not_sorry = "formalization_not_sorry"
    formalization_compile_error = "formalization_compile_error"
    statement_not_single_theorem = "statement_not_single_theorem"
    statement_incompatible_toolchain = "statement_incompatible_toolchain"
    semantic_mismatch = "semantic_mismatch"
    statement_vacuous = "statement_vacuous"
    proof_not_found = "proof_not_found"
    statement_refuted = "statement_refuted"
    reply_too_long = "reply_too_long"
    too_many_fences = "too_many_fences"
    too_many_tokens = "too_many_tokens"
    static_timeout = "static_timeout"
    boundary_corruption = "boundary_corruption"
    statement_mismatch = "statement_mismatch"
    forbidden_construct = "forbidden_construct"
    lean_error = "lean_error"
    sorry = "sorry"
    axiom_violation = "axiom_violation"
    lean_timeout = "lean_timeout"
    lean_unavailable = "lean_unavailable"
    lean_crash = "lean_crash"
    judge_rejected = "judge_rejected"
    judge_unavailable = "judge_unavailable"
    answer_not_grounded = "answer_not_grounded"
    answer_not_final = "answer_not_final"
    model_call_failed = "model_call_failed"
    prompt_too_long = "prompt_too_long"


REASON_DESCRIPTIONS: dict[ReasonCode, str] = {
    ReasonCode.rewrite_invalid_json: "The rewriter's reply held no valid JSON object, even after one format retry.",
    ReasonCode.rewrite_empty: (
        "The rewriter returned an empty question, the original unchanged, or the same rewrite as before."
    ),
    ReasonCode.infeasible: "The feasibility screen judged the rewritten problem ambiguous, ill-posed or unrealistic.",
    ReasonCode.screen_unparseable: "The screen's reply could not be parsed into a verdict, even after a format retry.",
    ReasonCode.no_lean_block: "The model's reply contained no fenced Lean block after its reasoning section.",
    ReasonCode.generation_truncated: "The model hit its token limit before closing the Lean block.",
    ReasonCode.formalization_not_sorry: "The formal statement does not end in `:= by sorry`.",
    ReasonCode.formalization_compile_error: "The formal statement did not compile with only the sorry warning.",
    ReasonCode.statement_not_single_theorem: (
        "The formal statement is not exactly one theorem ending in `:= by sorry` (definitions, other commands)."
    ),
    ReasonCode.statement_incompatible_toolchain: (
        "A study statement does not elaborate under this prover's Lean toolchain: the prover was not asked, "
        "and the pair is counted apart from the prover's failures."
    ),
    ReasonCode.semantic_mismatch: "The alignment judge did not say Consistent in every ask (align.asks, 3 by default).",
    ReasonCode.statement_vacuous: (
        "Our own Lean command derived False from the statement's hypotheses alone, or its conclusion is one of"
        " its hypotheses: it is provable whatever its answer says."
    ),
    ReasonCode.proof_not_found: "None of the k proof attempts passed the soundness gate.",
    ReasonCode.statement_refuted: (
        "Every sample failed and our own Lean command proved the negation of the statement: it is false."
    ),
    ReasonCode.reply_too_long: "The prover's reply is longer than the gate reads (lean.static_limits.max_reply_chars).",
    ReasonCode.too_many_fences: "The reply has more code fences than the gate reads (lean.static_limits.max_fences).",
    ReasonCode.too_many_tokens: "The checked code has more Lean tokens than allowed (lean.static_limits.max_tokens).",
    ReasonCode.static_timeout: (
        "The gate's static reading of the reply ran past its time limit (lean.static_limits.timeout_s): no verdict."
    ),
    ReasonCode.boundary_corruption: "The prover output contains special-token strings.",
    ReasonCode.statement_mismatch: (
        "The prover's theorem is not our statement: missing or renamed, or Lean's bridge check found another type."
    ),
    ReasonCode.forbidden_construct: "The proof uses a construct the soundness gate forbids (sorry, axiom, #exit, ...).",
    ReasonCode.lean_error: "Lean reported an error for the prover's code (or our statement did not elaborate).",
    ReasonCode.sorry: "Lean reported a sorry in the prover's code.",
    ReasonCode.axiom_violation: (
        "Our own `#print axioms` lists an axiom beyond propext, Classical.choice, Quot.sound, or no clean report."
    ),
    ReasonCode.lean_timeout: "The Lean check exceeded its hard timeout.",
    ReasonCode.lean_unavailable: "No Lean backend could check the code (crash, out of memory, unavailable).",
    ReasonCode.lean_crash: (
        "Lean crashed on the prover's code on a fresh worker as well, while a known-good probe passed on one: the"
        " code crashes Lean (e.g. a stack overflow, leanprover/lean4#8273), so it is rejected, not retried."
    ),
    ReasonCode.judge_rejected: (
        "The screen passed the proof, but the kernel judge, replaying it apart from the prover's code, did not:"
        " another statement, an axiom beyond the standard three, or a Lean error. The judge wins."
    ),
    ReasonCode.judge_unavailable: (
        "The kernel judge gave no verdict (tool not built, timeout, killed, sandbox error): nothing was decided;"
        " the problem is left unfinished and `--resume` judges it."
    ),
    ReasonCode.answer_not_grounded: (
        "Our statement gives no answer Lean confirms: no equation with a literal right side whose type and value"
        " our own Lean commands confirm, and (for an existential statement) no witness Lean accepted in our own"
        " command. The attempt's `no_answer` field says why (answer_gaps in the report)."
    ),
    ReasonCode.answer_not_final: "The recovered answer is intermediate, of the wrong target, or unknown.",
    ReasonCode.model_call_failed: "A model request failed after its retries (the message names endpoint and cause).",
    ReasonCode.prompt_too_long: (
        "The prompt, counted with the model's own tokenizer and chat template, left no room for an answer in the"
        " model's context (a long feedback history, most often). A property of this request: it is not retried"
        " and never counts as the endpoint failing."
    ),
}


class AnswerForm(StrEnum):
    """The form of a released answer (the release's ``answer_type`` column)."""

    integer = "integer"  # whole, negatives included: ``16``, ``-5``
    fraction = "fraction"  # ``3 / 4``, ``-1 / 4`` in ℚ, ℝ or ℂ
    decimal = "decimal"  # ``2.5`` in ℚ, ℝ or ℂ
    closed_form = "closed_form"  # ℝ: ``3 * Real.sqrt 2``, ``π / 4`` (released as LaTeX, graded by math-verify)
    tuple = "tuple"  # ``x = 15 ∧ y = -11``: the values in the order the question asks for them


class NoAnswerReason(StrEnum):
    """Why a verified statement gave no answer (counted apart in the status, the report and the card)."""

    unreadable_statement = "unreadable_statement"
    signature = "signature"  # a binder or binding may change what numerals mean
    restated_hypothesis = "restated_hypothesis"
    existential = "existential"  # an ∃ whose witness could not be checked (see the witness check)
    premise = "premise"  # →, ∀, ¬, ↔, if at the top: nothing is entailed unconditionally
    disjunction = "disjunction"  # ∨, ∈: several values or a set
    set_or_interval = "set_or_interval"  # IsLeast, IsGreatest, a set
    inequality = "inequality"  # a bound, not a value
    symbolic = "symbolic"  # the right side mentions variables: an expression, not a value
    not_a_value = "not_a_value"  # the right side is no literal of a released form (``16 / 3`` in ℕ, a function)
    unevaluated = "unevaluated"  # ``6 / 4``, ``5 ^ 2``: a computation left undone
    constant = "constant"  # the left side does not depend on the statement's unknown
    not_evaluable = "not_evaluable"  # whether the left side depends on the unknown cannot be decided
    lean_refused = "lean_refused"  # Lean confirmed the value in none of ℕ ℤ ℚ ℝ ℂ (ZMod, Fin, a cast...)
    no_verdict = "no_verdict"  # Lean gave no verdict (unavailable, timeout): no answer yet, resumable
    other_shape = "other_shape"


NO_ANSWER_DESCRIPTIONS: dict[NoAnswerReason, str] = {
    NoAnswerReason.unreadable_statement: "the statement is not one theorem the reader reads",
    NoAnswerReason.signature: "a binder or binding may change what numerals mean, or a name is left unbound",
    NoAnswerReason.restated_hypothesis: "the conclusion gives back a hypothesis",
    NoAnswerReason.existential: "an ∃ whose witness Lean did not accept in our own command",
    NoAnswerReason.premise: "a premise, negation or binder at the top: nothing is entailed unconditionally",
    NoAnswerReason.disjunction: "a disjunction or a membership: several values, or a set",
    NoAnswerReason.set_or_interval: "a set, an interval or an extremum (IsLeast ...): counted apart",
    NoAnswerReason.inequality: "an inequality: a bound, not a value",
    NoAnswerReason.symbolic: "the right side is an expression in the variables: counted apart",
    NoAnswerReason.not_a_value: "the right side is no literal of a released form (16 / 3 in ℕ, a function)",
    NoAnswerReason.unevaluated: "the value is written as an unevaluated computation (6 / 4, 5 ^ 2)",
    NoAnswerReason.constant: "the left side does not depend on the statement's unknown",
    NoAnswerReason.not_evaluable: "whether the left side depends on the unknown cannot be decided",
    NoAnswerReason.lean_refused: "Lean confirmed the value in none of ℕ ℤ ℚ ℝ ℂ (ZMod, Fin, another reading)",
    NoAnswerReason.no_verdict: "Lean gave no verdict (unavailable, timeout): the candidate stays unfinished",
    NoAnswerReason.other_shape: "any other shape",
}


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid")
    # the record's schema version, so an older store or release is migrated instead of misread
    schema_version: int = RECORD_SCHEMA_VERSION


class SourceProblem(Record):
    """One problem of a source benchmark, normalized across loaders."""

    problem_id: str
    source: str
    source_id: str
    question: str
    answer: str
    solution: str = ""
    level: str | None = None
    type: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict)


class LeanMessageRecord(Record):
    severity: str
    line: int | None = None
    column: int | None = None
    text: str


class AttemptOutcome(Record):
    """What one stage attempt produced; stages return it, the pipeline ties it to a candidate."""

    status: AttemptStatus
    reason: ReasonCode | None = None
    input_hash: str = ""
    output: dict[str, Any] = Field(default_factory=dict)
    lean_messages: list[LeanMessageRecord] = Field(default_factory=list)
    taxonomy: list[str] = Field(default_factory=list)
    elapsed_s: float = 0.0
    lean_seconds: float = 0.0
    tokens_in: int = 0
    tokens_out: int = 0
    model_calls: int = 0
    model_id: str | None = None
    backend_id: str | None = None

    @property
    def passed(self) -> bool:
        return self.status == AttemptStatus.passed


class StageAttempt(AttemptOutcome):
    """One try of one stage for one candidate: the unit of work that is written transactionally."""

    candidate_id: str
    problem_id: str
    stage: Stage
    attempt_number: int
    # the attempts whose products this one worked on, by stage: {"formalize": 1} is the statement of
    # formalize attempt 1 (what an align, check, prove, verify, salvage, feedback, judge or answer
    # attempt judged, checked or proved), {"rewrite": 0} the rewritten question, {"check": 1} the
    # refutation a formalization was told about. Views read inputs through it, never from the
    # candidate's latest state (which a later round replaces). Empty in stores written before it.
    inputs: dict[str, int] = Field(default_factory=dict)
    started_at: str = Field(default_factory=utc_now)


class Candidate(Record):
    """A rewrite of a source problem and everything derived from it on its way to release."""

    candidate_id: str
    problem_id: str
    rewrite_index: int
    status: CandidateStatus = CandidateStatus.in_progress
    reject_stage: Stage | None = None
    reject_reason: ReasonCode | None = None
    rewritten_question: str | None = None
    screener_answer: str | None = None
    lean_statement: str | None = None
    theorem_name: str | None = None
    lean_proof: str | None = None
    verified_code: str | None = None
    new_answer: str | None = None
    answer_class: str | None = None
    # the answer as Lean confirmed it from our statement: its form, Lean type(s), the statement's own text
    # of the value(s), and a tuple's variables in the released order (None before these existed)
    answer_form: str | None = None
    answer_lean_type: str | None = None
    answer_lean: str | None = None
    answer_variables: str | None = None
    answer_disagrees_with_screener: bool | None = None
    # what our trusted Lean checks established before proving: satisfiable | flagged | undecided
    # (None: no check ran; such a row is never released)
    statement_check: str | None = None
    # the evidence that today's answer stage produced ``new_answer`` (red2 R2-9): the answer text it confirmed
    # with our Lean commands and the version of those confirmations (``repro.stages.answer.ANSWER_EVIDENCE``),
    # put here only from a passed answer attempt that stores them. None in stores written before it: the
    # release withholds such a row (its answer may be read from proof text, or edited by hand)
    answer_confirmed: str | None = None
    answer_evidence: str | None = None
    proof_attempt_number: int | None = None
    # how the verified proof was obtained: None (a raw prover sample), "salvage", "feedback" or "study"
    # (a study's proof taken by ``--reprove-with``)
    proof_lever: str | None = None
    verifier_backend: str | None = None
    verifier_is_real_lean: bool = False
    lean_toolchain: str | None = None
    mathlib_revision: str | None = None
    # the kernel judge that passed the proof (repro.judge): its tool, revision and toolchain, whether it
    # is a real judge (a stand-in's pass never makes anything verified) and how it confined the compiles.
    # None on a candidate no judge passed (and on every candidate stored before the judge stage).
    judge_tool: str | None = None
    judge_revision: str | None = None
    judge_toolchain: str | None = None
    judge_real: bool = False
    judge_confinement: str | None = None
    # the version of repro's own checks around the tool (repro.judge.kernel.JUDGE_CHECKS) that passed it: with
    # the revision, what says whether today's judge gave the pass (repro.judge.currency); None before recorded
    judge_checks: int | None = None
    models: dict[str, str] = Field(default_factory=dict)
    backends: dict[str, str] = Field(default_factory=dict)

    @property
    def verified(self) -> bool:
        """Retained on a pass of a real kernel judge: the only way a candidate is ever reported verified."""
        return self.status == CandidateStatus.retained and self.judge_tool is not None and self.judge_real


class ModelCallRecord(Record):
    """Accounting for one request to a model (or one cache hit that replaced it)."""

    stage: str
    model_id: str
    backend_id: str
    cache_key: str
    cache_hit: bool
    samples: int
    tokens_in: int = 0
    tokens_out: int = 0
    latency_s: float = 0.0
    retries: int = 0
    error: str | None = None
    created_at: str = Field(default_factory=utc_now)


class StageModel(Record):
    # a pipeline stage (rewrite, screen, formalize, align, prove, extract, classify)
    stage: str
    # the model id that stage used
    model: str
    # the backend that served it (`openai:<base_url>`, `vllm`, `scripted`, ...; `study:NAME` for a proof taken
    # from a prove-study by `--reprove-with`)
    backend: str


class Provenance(Record):
    # the model and backend of every stage that produced this row
    models: list[StageModel]
    # the Lean toolchain the proof was checked under (e.g. v4.15.0)
    lean_toolchain: str | None
    # the Mathlib revision of that project
    mathlib_revision: str | None
    # the Lean backend that checked the proof (`kimina:<url>`, the local REPL pool's id, ...)
    verifier_backend: str | None
    # whether a real Lean backend (not the fake or recorded stand-ins) checked it
    verified_by_real_lean: bool
    # our trusted Lean check of the statement before proving (satisfiable / flagged / undecided);
    # None in releases written before the checks existed
    statement_check: str | None = None
    # how the released proof was found: "none" (the prover's own sample, as sampled), "salvage" (a
    # repaired text of a sample, repro.salvage), "feedback" (a later feedback round's reply) or "study"
    # (another prover's proof from a prove-study, ``--reprove-with``), so a user can filter them out;
    # None in releases written before this field
    proof_lever: str | None = None
    # the kernel judge that passed the proof (SafeVerify, comparator, or a stand-in's name); None in releases
    # written before the judge stage
    judge_tool: str | None = None
    # the judge tool's pinned revision (a commit)
    judge_revision: str | None = None
    # the Lean toolchain the judge compiled and replayed the proof under
    judge_toolchain: str | None = None
    # the version of repro's own checks around the tool when it passed the proof (repro.judge.kernel.JUDGE_CHECKS);
    # a row passed by another revision or checks version than today's is never released as verified
    judge_checks: int | None = None
    # how the judge confined its compiles and the replay (the sandbox's own description)
    judge_confinement: str | None = None
    # whether a real kernel judge (not a stand-in) passed it: a row is verified only when this is true
    verified_by_real_judge: bool = False
    # SHA-256 of `verified_code`
    proof_hash: str
    # the repro version that wrote the release
    repro_version: str
    # when the release was written (UTC, ISO 8601)
    released_at: str


class ReleasedInstance(Record):
    """One row of a released dataset; every field is flat enough for Parquet and `datasets`."""

    # the candidate's id in the run: `<problem id>#r<rewrite index>`
    instance_id: str
    # the source benchmark (gsm8k, math, or the local file's name)
    source_dataset: str
    # the problem's id in that benchmark
    source_id: str
    # the source's level (MATH: `Level 1` ... `Level 5`), where it has one
    level: str | None = None
    # the source's type (MATH: its subject, e.g. Algebra), where it has one
    type: str | None = None
    # the source problem, as the source gives it
    original_question: str
    # the source's reference answer (GSM8K: the number after `####`; MATH: the last `\boxed{}`)
    original_answer: str
    # the rewritten problem the model wrote
    rewritten_question: str
    # the reference answer of the rewritten problem, read from our Lean statement and confirmed by Lean,
    # never from the prover's text: `16`, `-1 / 4`, `2.5`; a closed form as LaTeX (`3 \cdot \sqrt{2}`,
    # graded by math-verify); a tuple `(a, b)` in the order of `answer_variables` (graded in order)
    new_answer: str
    # the answer's form: integer, fraction, decimal, closed_form or tuple (null in older releases)
    answer_type: str | None = None
    # the answer's Lean type as Lean confirmed it, one per value: ℕ, ℤ, ℚ, ℝ or ℂ (`ℝ, ℝ` for a pair)
    answer_lean_type: str | None = None
    # our statement's own text of the value(s) (`3 * Real.sqrt 2`), as Lean checked it
    answer_lean: str | None = None
    # a tuple's variables in the order of `new_answer` (the order the question asks for them)
    answer_variables: str | None = None
    # our formal statement, ending `:= by sorry`
    lean_statement: str
    # the prover's output (or the repaired text) whose code was checked
    lean_proof: str
    # exactly the code Lean checked after `lean_header`
    verified_code: str
    # the Lean header (imports, options) the proof was checked under
    lean_header: str
    # the statement's theorem name
    theorem_name: str
    # the feasibility screen's own answer to the rewritten question (for audit only; never the reference)
    screener_answer: str | None = None
    # the screen's answer differs from new_answer (a flag for audit: the answer comes from Lean)
    answer_disagrees_with_screener: bool = False
    # true when no real Lean backend screened the proof or no real kernel judge passed it (or the run was a
    # demonstration): never use such a row as a verified reference; released only with
    # `repro release --allow-unverified`
    unverified: bool = False
    # models, toolchain, verifier and kernel judge behind this row
    provenance: Provenance
