"""Settings for one run, loadable from YAML or TOML and overridable with ``--set key=value``.

A run directory keeps the resolved config (``config.yaml``) so a run can always be explained and
resumed with exactly the settings that produced it.
"""

from __future__ import annotations

import difflib
import tomllib
import typing
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from repro.exit_codes import ReproError


class ConfigError(ReproError, ValueError):
    """A config problem, phrased as key, value and what was expected."""


class ModelBackendName(StrEnum):
    openai = "openai"
    vllm = "vllm"
    transformers = "transformers"
    replay = "replay"
    scripted = "scripted"


class CacheMode(StrEnum):
    read_write = "read_write"
    read_only = "read_only"
    off = "off"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class EngineSettings(_Strict):
    """In-process engines only (``vllm``, ``transformers``): what a large prover needs to start at all.

    Names follow vLLM's ``LLM(...)`` arguments (vllm/entrypoints/llm.py); a 32B prover does not fit one
    GPU without ``tensor_parallel_size`` and a bounded ``max_model_len``.
    """

    # GPUs the one engine spreads the model over (vLLM only)
    tensor_parallel_size: int = Field(1, ge=1)
    # share of each GPU's memory vLLM may take for weights and KV cache
    gpu_memory_utilization: float = Field(0.9, gt=0.0, le=1.0)
    # vLLM reuses the KV cache of a shared prompt prefix (the k samples of one statement share theirs)
    enable_prefix_caching: bool = True
    # the engine's own seed (vLLM `LLM(seed=...)`); per-request seeds come from the stage's `seed`
    seed: int = 0
    # "auto" (bf16 where the GPU has it, else fp16; fp32 on CPU), "bfloat16", "float16" or "float32"
    dtype: Literal["auto", "bfloat16", "float16", "float32"] = "auto"
    # transformers only: "cuda", "cuda:1", "cpu"; None picks the first GPU when there is one
    device: str | None = None
    # let the model's own repository code run when it is loaded (transformers/vLLM `trust_remote_code`)
    trust_remote_code: bool = False


class ModelSettings(_Strict):
    """How one stage reaches its model. Every sampling parameter is sent explicitly on the wire.

    ``profile`` names a prover profile (``repro provers``): its harness's sampling values fill every
    sampling key the config leaves unset; keys set here override it (recorded in provenance).
    """

    # prover only: a profile of `repro provers` (prompt, statement form, sampling, context, Lean toolchain and
    # header of its own harness); explicit keys beside it override it, and `repro run` warns about each
    profile: str | None = None
    # openai: any OpenAI-compatible endpoint (vLLM's server, an API); vllm and transformers: in-process (the
    # `[vllm]` and `[local]` extras); replay: answers only from the run's response cache, a miss fails;
    # scripted: canned answers from `script` (the offline demonstration and tests)
    backend: ModelBackendName = ModelBackendName.openai
    # the model name the endpoint serves (`vllm serve /path` serves the path), or a checkpoint to load in-process
    model: str = "gpt-4o-mini"
    # openai backend: the endpoint's base URL; the run checks `GET {base_url}/models` before any other call
    base_url: str | None = "https://api.openai.com/v1"
    # the NAME of the environment variable holding the API key, never the key itself
    api_key_env: str | None = "OPENAI_API_KEY"
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    # null: not sent, so the server's default applies (vLLM >= 0.8 takes the checkpoint's generation_config.json
    # for every omitted field); a prover profile sends -1 ("off")
    top_k: int | None = Field(None, ge=-1)
    # null: not sent (the server's default); a prover profile sends 0.0 ("off")
    min_p: float | None = Field(None, ge=0.0, le=1.0)
    # null: not sent (the server's default); a prover profile sends 1.0 ("no penalty")
    repetition_penalty: float | None = Field(None, gt=0.0)
    # null: not sent (the server's default); a prover profile sends 0.0
    presence_penalty: float | None = Field(None, ge=-2.0, le=2.0)
    # null: not sent (the server's default); a prover profile sends 0.0
    frequency_penalty: float | None = Field(None, ge=-2.0, le=2.0)
    # the most tokens one reply may have; lowered per request so that prompt + max_tokens fits max_model_len
    max_tokens: int = Field(2048, ge=1)
    # the context window the model is served with (vLLM's max_model_len): prompt + max_tokens must fit
    max_model_len: int | None = Field(None, ge=1)
    # the per-request sampling seed
    seed: int | None = 0
    # ask the endpoint for JSON output (`response_format`), for the stages whose prompt asks for JSON
    json_mode: bool = False
    # requests in flight to this endpoint at once (size it to the server's KV cache: see docs/gpu-node.md)
    max_concurrency: int = Field(8, ge=1)
    # a request's time besides decoding (prefill, queueing, transfer); it gets max_tokens/min_tokens_per_s more
    timeout_s: float = Field(300.0, gt=0)
    # the slowest decode rate per sequence the timeout allows for, with the server under full load
    min_tokens_per_s: float = Field(8.0, gt=0)
    # retries of a failed request (with backoff; a 429's Retry-After is honoured) before it counts as failed
    max_retries: int = Field(5, ge=0)
    # chat: chat messages; completion: the messages rendered with the model's own chat template and sent as
    # a completion (needs the `[local]` extra for the tokenizer)
    prompt_format: Literal["chat", "completion"] = "chat"
    # in-process backends (vllm, transformers) only
    engine: EngineSettings = Field(default_factory=EngineSettings)
    # scripted backend only: a JSONL/YAML file of scripted rules, or `module:function` (see repro.llm.scripted)
    script: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _fill_from_profile(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("profile"):
            from repro.provers import ProfileError, apply_profile

            try:
                return apply_profile(data)
            except ProfileError as error:
                raise ValueError(str(error)) from None
        return data


# Each sample is a model request slot and a Lean check held in memory: a k in the millions blocks the
# event loop for minutes and exhausts memory before the first sample returns.
MAX_PROVE_K = 1024


# Salvage variants checked per failed sample: each is one more Lean check (no model call).
MAX_SALVAGE_VARIANTS = 16
# Lean-feedback rounds per candidate: each round is one more model request per failed sample.
MAX_FEEDBACK_ROUNDS = 8


class ProveSettings(_Strict):
    # proof samples per statement (pass@k); the stored attempts give pass@j for every j <= k
    k: int = Field(3, ge=1, le=MAX_PROVE_K)
    # parallel: one request with n=k; sequential: one sample at a time, stopping at the first verified proof
    strategy: Literal["parallel", "sequential"] = "parallel"
    # repair near-miss outputs as text (special tokens, restated target, repetition, unclosed fence,
    # trailing junk) and let the gate judge each repair; no model call
    salvage: bool = True
    # repaired texts checked per failed sample, most repaired first; each is one more Lean check
    salvage_variants: int = Field(4, ge=1, le=MAX_SALVAGE_VARIANTS)
    # rounds that show the prover its own failed proof with Lean's messages and ask again (0: none)
    feedback_rounds: int = Field(0, ge=0, le=MAX_FEEDBACK_ROUNDS)


class RetrySettings(_Strict):
    """A failure at formalize, align, check or prove regenerates from an earlier stage, within these bounds."""

    # rewrites tried per source problem before it is rejected
    rewrites_per_problem: int = Field(2, ge=1)
    # formalizations tried per rewrite (a compile error, a misaligned or vacuous statement asks again)
    formalizations_per_rewrite: int = Field(2, ge=1)
    # when all k samples failed, formalize the same rewrite again (within formalizations_per_rewrite)
    regenerate_formalization_after_proof_failure: bool = True


class StatementCheckSettings(_Strict):
    """Our trusted Lean checks of a statement (:mod:`repro.lean.statement_checks`); no model call."""

    # before proving: refuse a statement whose hypotheses derive False or whose conclusion is a hypothesis
    vacuity: bool = True
    # after every sample failed: try to prove the statement's negation, and say so to the formalizer
    refutation: bool = True


class AlignSettings(_Strict):
    # the alignment judge is asked this many times at temperature 0; every answer must say Consistent
    asks: int = Field(3, ge=1)


class LeanBackendName(StrEnum):
    repl = "repl"
    kimina = "kimina"
    fake = "fake"
    recorded = "recorded"  # the offline demo's stored answers (repro.lean.recorded): never real Lean
    factory = "factory"  # ``lean.factory`` names a function that builds the verifier (tests select stand-ins so)

    @property
    def stand_in(self) -> bool:
        """Not Lean at all: whatever it answers is never a real verdict (``real_lean: false``, exit code 4)."""
        return self in (LeanBackendName.fake, LeanBackendName.recorded, LeanBackendName.factory)


DEFAULT_HEADER = (
    "import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 400000\n\nopen BigOperators Real Nat Topology Rat\n"
)


class StaticLimits(_Strict):
    """Caps of the gate's static layer: a reply past one is refused, by name, before it is read in full.

    The largest of 321 real accepted replies has 76,465 characters, 214 fences and 11,992 tokens in
    its code; the defaults leave about five times that room.
    """

    # characters of one prover reply; past it: reply_too_long
    max_reply_chars: int = Field(400_000, ge=1)
    # code fences in one reply; past it: too_many_fences
    max_fences: int = Field(1_000, ge=0)
    # Lean tokens in the checked code; past it: too_many_tokens
    max_tokens: int = Field(60_000, ge=1)
    # wall-clock seconds for the static reading of one reply (off the event loop); past it: static_timeout
    timeout_s: float = Field(30.0, gt=0)


class LeanSettings(_Strict):
    # repl: local LeanInteract REPL workers; kimina: Kimina Lean Server(s) at kimina_url; recorded: the offline
    # demo's stored answers (never real Lean: `real_lean: false`, never released as verified); factory: the
    # verifier `lean.factory` builds (how tests select the fake REPL; never real either)
    backend: LeanBackendName = LeanBackendName.repl
    # a name from repro.lean.toolchains (Lean + Mathlib + REPL revisions); each prover profile names its own
    toolchain: str = "v4.15.0"
    # the pinned project of that toolchain; None: `lean_project` for v4.15.0, `lean_project_<toolchain>` otherwise
    project_path: str | None = None
    # the one header of a run: it compiles formalizations, runs the statement checks and the gate. Unset: the
    # models.prove.profile's harness header (`maxHeartbeats 0` for Goedel-Prover-V2 and DeepSeek), else this
    # default. An explicit header that departs from the profile's is warned about; `--resume` refuses a change
    header: str = DEFAULT_HEADER
    # hard wall-clock limit of one Lean check; past it the check is lean_timeout and the worker is replaced
    timeout_s: float = Field(120.0, gt=0)
    # memory of one REPL worker (each holds Mathlib: several GB); past it the worker is killed and replaced
    memory_limit_mb: int | None = Field(12288, ge=256)
    # repl: warm REPL workers (min(cores, RAM / per-worker memory)); kimina: checks in flight per server URL
    workers: int = Field(2, ge=1)
    # checks a REPL worker serves before it is replaced (recycle points are staggered across workers)
    recycle_after: int = Field(200, ge=1)
    # kimina backend: the server URL, or several comma-separated (each gets at most `workers` checks at once)
    kimina_url: str = "http://127.0.0.1:8000"
    # kimina backend: the NAME of the environment variable holding the server's API key, if it has one
    kimina_api_key_env: str | None = None
    # the server's LEAN_SERVER_MAX_WAIT (its wait for a free REPL before a 429); the client outwaits it
    kimina_max_wait_s: float = Field(60.0, ge=0)
    # let proofs use native_decide (trusts the compiler; refused by policy otherwise)
    allow_native_decide: bool = False
    static_limits: StaticLimits = Field(default_factory=StaticLimits)
    # before a run or study on real Lean: the self-test battery, once per backend + toolchain (cached)
    selftest: bool = True
    # None: the toolchain's pinned Mathlib revision
    mathlib_revision: str | None = None
    # fake backend only: JSON rules for the fake REPL (see repro.lean.fake_repl)
    fake_rules: str | None = None
    # recorded backend only: the recording to answer from; unset: the one shipped for the offline demo
    # (data/demo_recording.jsonl). A check it does not hold is answered `not_recorded`, never a pass
    recording: str | None = None
    # factory backend only: `package.module:function`, called with these settings and `factory_options` as
    # keyword arguments, returning a Verifier that is not real Lean (how the tests select a stand-in)
    factory: str | None = None
    # factory backend only: keyword arguments of `lean.factory` (e.g. a stand-in's rules file)
    factory_options: dict[str, Any] = Field(default_factory=dict)
    # the confinement of every Lean process repro starts (REPL workers; the judge's compiles), see
    # repro.lean.sandbox: bwrap (no network, writes only to a fresh scratch directory per worker, sees only
    # what Lean needs read-only: no home directory, /run or host /tmp; no UNIX socket, no capability) is
    # required unless the operator names a weaker one: unshare (network cut; writes, user files and UNIX
    # sockets NOT confined) or none (nothing). Under bwrap, the environment variable REPRO_SANDBOX_READ_ONLY
    # (colon-separated) names further directories to show read-only.
    # A named confinement that does not work here is an error, never a silent fallback. A resume may
    # tighten it, never loosen it.
    sandbox: Literal["bwrap", "unshare", "none"] = "bwrap"

    @field_validator("sandbox", mode="before")
    @classmethod
    def _sandbox_by_name(cls, value: Any) -> Any:
        """``true`` (the old default: "whatever works") is ``bwrap``; ``false`` was an explicit opt-out, ``none``."""
        if value is True:
            return "bwrap"
        if value is False:
            return "none"
        return value

    @model_validator(mode="after")
    def _factory_named(self) -> LeanSettings:
        if self.backend == LeanBackendName.factory and not self.factory:
            raise ValueError("lean.factory: required when lean.backend is factory (package.module:function)")
        if self.backend != LeanBackendName.factory and (self.factory or self.factory_options):
            raise ValueError("lean.factory, lean.factory_options: only read when lean.backend is factory")
        if self.factory and ":" not in self.factory:
            raise ValueError(f"lean.factory: {self.factory!r} is not package.module:function")
        if self.recording and self.backend != LeanBackendName.recorded:
            raise ValueError("lean.recording: only read when lean.backend is recorded")
        return self

    @field_validator("toolchain")
    @classmethod
    def _known_toolchain(cls, name: str) -> str:
        from repro.lean.toolchains import UnknownToolchain, get_toolchain

        try:
            return get_toolchain(name).name
        except UnknownToolchain as error:
            raise ValueError(str(error)) from None

    def project_dir(self) -> str:
        """The Lean project this run checks in, as an absolute path: the configured one, else the toolchain's
        default one in the current directory, else where ``repro lean setup`` built it (so a run started from
        another directory finds it: lean audit M9, LeanInteract resolves a relative project against the
        current directory and fails with "Unable to determine Lean version")."""
        from repro.lean.project import registered_projects
        from repro.lean.toolchains import default_project_path

        if self.project_path:
            return str(Path(self.project_path).expanduser().resolve())
        local = Path(default_project_path(self.toolchain)).resolve()
        if (local / "lean-toolchain").is_file():
            return str(local)
        return registered_projects().get(self.toolchain) or str(local)

    def resolved_mathlib_revision(self) -> str:
        from repro.lean.toolchains import get_toolchain

        return self.mathlib_revision or get_toolchain(self.toolchain).mathlib_rev


class JudgeBackendName(StrEnum):
    auto = "auto"  # by toolchain: SafeVerify at v4.9.0/v4.15.0, comparator from v4.21.0-rc3 on
    safeverify = "safeverify"
    comparator = "comparator"
    factory = "factory"  # ``judge.factory`` names a function that builds the judge (tests select stand-ins so)
    recorded = "recorded"  # the offline demo's stored verdicts (repro.judge.recorded): never real


class JudgeSettings(_Strict):
    """The kernel judge (:mod:`repro.judge.kernel`): what decides that a screened proof counts.

    The judge compiles our target and the text Lean checked apart, each in a fresh sandboxed directory,
    and replays the submission in Lean's kernel with the tool pinned for the toolchain. ``tools_dir``
    holds one built tool checkout per toolchain (``TOOLS_DIR/<toolchain>/``, laid out by
    ``docker/Dockerfile``); None reads ``$REPRO_SAFEVERIFY_DIR``, else ``~/.cache/repro/safeverify``, when
    the judge is built, so a stored config stays valid on another machine.
    """

    # auto: the tool pinned for each proof's toolchain (SafeVerify for v4.9.0 and v4.15.0, comparator from
    # v4.21.0-rc3 on); safeverify or comparator: that tool only; factory: the judge `judge.factory` builds;
    # recorded: the offline demo's stored verdicts (never real)
    backend: JudgeBackendName = JudgeBackendName.auto
    # backend factory only: `package.module:function`, called with these settings, returning a Judge (how the
    # tests select a stand-in; its verdicts are never real)
    factory: str | None = None
    # backend recorded only: the recording to answer from; unset: the one shipped for the offline demo
    # (data/demo_recording.jsonl). A judgement it does not hold has no verdict (`not_recorded`), never a pass
    recording: str | None = None
    # one built tool checkout per toolchain, `TOOLS_DIR/<toolchain>/`; unset: $REPRO_SAFEVERIFY_DIR, else
    # ~/.cache/repro/safeverify (docker/Dockerfile builds them in /opt/safeverify)
    tools_dir: str | None = None
    # wall-clock seconds for one judgement (target compile, submission compile and replay together); past it
    # the whole process group is killed and the proof stays unjudged (resumable)
    timeout_s: float = Field(600.0, gt=0)
    # judgements run at once (each compiles twice and replays once: about two Lean processes' memory each)
    workers: int = Field(2, ge=1)

    @model_validator(mode="after")
    def _factory_named(self) -> JudgeSettings:
        if self.backend == JudgeBackendName.factory and not self.factory:
            raise ValueError("judge.factory: required when judge.backend is factory (package.module:function)")
        if self.factory and self.backend != JudgeBackendName.factory:
            raise ValueError("judge.factory: only read when judge.backend is factory")
        if self.factory and ":" not in self.factory:
            raise ValueError(f"judge.factory: {self.factory!r} is not package.module:function")
        if self.recording and self.backend != JudgeBackendName.recorded:
            raise ValueError("judge.recording: only read when judge.backend is recorded")
        return self

    def resolved_tools_dir(self) -> Path:
        import os

        configured = self.tools_dir or os.environ.get("REPRO_SAFEVERIFY_DIR") or "~/.cache/repro/safeverify"
        return Path(configured).expanduser()


class DatasetSettings(_Strict):
    """The source benchmark and which of its problems a run draws (`--dataset`, `--limit`, `--levels`, ...)."""

    # gsm8k or math (from the Hugging Face hub), or a file path (.jsonl, .json, .csv, optionally .gz)
    name: str = "gsm8k"
    # a local file to read instead of the hub (name then labels the source)
    path: str | None = None
    # the hub split to load
    split: str = "test"
    # the field holding the problem text, when it is not `question` (or MATH's `problem`)
    question_field: str | None = None
    # the field holding the reference answer, when it is not `answer` (or MATH's `solution`)
    answer_field: str | None = None
    # the field holding the source id, when it is not `id`, `unique_id` or `idx` (default: line number - 1)
    id_field: str | None = None
    # at most this many problems, after filters and sampling
    limit: int | None = Field(None, ge=1)
    # keep only these levels (MATH: "4" or "Level 4")
    levels: list[str] = Field(default_factory=list)
    # keep only these types (MATH subjects, e.g. Algebra; case-insensitive)
    types: list[str] = Field(default_factory=list)
    # keep only these source ids (or problem ids)
    ids: list[str] = Field(default_factory=list)
    # draw a seeded random sample of this many problems (after the filters)
    sample: int | None = Field(None, ge=1)
    # the sample's seed
    seed: int = 0
    # skip bad rows (each reason listed by `repro status` and in the dataset card) instead of refusing the file
    skip_bad_rows: bool = False
    # a question longer than this is refused as a bad row: it would be sent whole as a prompt
    max_question_chars: int = Field(20_000, ge=1)
    # licence and attribution for the dataset card; required to release a run over a local file
    license: str | None = None
    attribution: str | None = None


class RunConfig(_Strict):
    """Everything that decides what a run does. Stored resolved in the run directory."""

    # the run's name (the dataset card's title)
    name: str = "run"
    # an offline demonstration: every result is shown NOT VERIFIED and every released row marked unverified
    demonstration: bool = False
    dataset: DatasetSettings = Field(default_factory=DatasetSettings)
    # one entry per stage: rewrite, screen, formalize, align, prove, extract, classify (extract and classify
    # default to screen's), repair. The same keys are accepted alone in a YAML file where a command takes one
    # model: `repro prove-study --prover NAME=FILE.yaml`, `repro evaluate --model NAME=FILE.yaml`
    models: dict[str, ModelSettings] = Field(default_factory=dict)
    prove: ProveSettings = Field(default_factory=ProveSettings)
    retries: RetrySettings = Field(default_factory=RetrySettings)
    align: AlignSettings = Field(default_factory=AlignSettings)
    statement_checks: StatementCheckSettings = Field(default_factory=StatementCheckSettings)
    lean: LeanSettings = Field(default_factory=LeanSettings)
    judge: JudgeSettings = Field(default_factory=JudgeSettings)
    # model responses cached in the run store by a hash of model id, input, sampling parameters and sample
    # index: read_write, read_only (no new entries) or off
    cache: CacheMode = CacheMode.read_write
    # problems worked on at once (cover the prover's concurrency plus the Lean workers so both stay busy)
    problems_in_flight: int = Field(16, ge=1)
    # stop drawing problems once this many are retained (`--target`); problems already in flight still finish,
    # so a run can retain up to problems_in_flight more
    target: int | None = Field(None, ge=1)
    # stop the run once one endpoint has failed this many calls in a row (each after its own retries)
    stop_after_failed_calls: int = Field(20, ge=1)

    @model_validator(mode="before")
    @classmethod
    def _header_from_profile(cls, data: Any) -> Any:
        """One header per run: the prover profile's harness header unless ``lean.header`` is set (and its
        check timeout unless ``lean.timeout_s`` is).

        It is the header the prover was evaluated with (Goedel-Prover-V2 and DeepSeek check with
        ``maxHeartbeats 0``), and the same text then compiles formalizations, runs the statement checks
        and the gate. The resolved header is what ``config.yaml`` stores, so ``--resume`` compares it.
        """
        if not isinstance(data, dict):
            return data
        prove = (data.get("models") or {}).get("prove")
        lean = data.get("lean")
        if not isinstance(prove, dict) or not prove.get("profile") or lean is not None and not isinstance(lean, dict):
            return data
        from repro.provers import ProfileError, get_profile

        try:
            profile = get_profile(str(prove["profile"]))
        except ProfileError:
            return data  # models.prove reports the unknown profile with its own message
        filled = dict(lean or {})
        filled.setdefault("header", profile.lean_header)
        # the harness's check budget (Goedel/DeepSeek 300 s, Kimina's 60 s) unless the config sets its own
        filled.setdefault("timeout_s", profile.check_timeout_s)
        return {**data, "lean": filled}

    @model_validator(mode="after")
    def _known_stages(self) -> RunConfig:
        known = {"rewrite", "screen", "formalize", "align", "prove", "extract", "classify", "repair"}
        for key in self.models:
            if key not in known:
                raise ValueError(f"unknown stage {key!r}; expected one of {sorted(known)}")
        return self

    def model_for(self, stage: str) -> ModelSettings:
        if stage in self.models:
            return self.models[stage]
        if stage in ("extract", "classify") and "screen" in self.models:
            return self.models["screen"]
        raise ConfigError(f"models.{stage}: missing; expected model settings for the {stage} stage")


def _read_file(path: Path) -> dict[str, Any]:
    from repro.prompts import user_or_bundled

    path = user_or_bundled(path)  # configs/demo.yaml works from any directory, as `repro --help` shows it
    if not path.is_file():
        raise ConfigError(f"config file {path}: not found")
    text = path.read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text) if path.suffix == ".toml" else yaml.safe_load(text)
    except (yaml.YAMLError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"config file {path}: not valid {path.suffix.lstrip('.')}: {error}") from error
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path}: expected a mapping at top level, got {type(data).__name__}")
    return data


def apply_override(data: dict[str, Any], assignment: str) -> None:
    """Apply ``a.b.c=value``; the value is parsed as YAML so numbers, booleans and lists work."""
    if "=" not in assignment:
        raise ConfigError(f"--set {assignment!r}: expected KEY=VALUE, for example prove.k=8")
    key, raw_value = assignment.split("=", 1)
    parts = [part for part in key.strip().split(".") if part]
    if not parts:
        raise ConfigError(f"--set {assignment!r}: empty key")
    try:
        value = yaml.safe_load(raw_value) if raw_value.strip() else ""
    except yaml.YAMLError:
        value = raw_value
    node = data
    for part in parts[:-1]:
        child = node.get(part)
        if child is None:
            child = {}
            node[part] = child
        if not isinstance(child, dict):
            raise ConfigError(f"--set {key}: {part!r} is a value, not a section")
        node = child
    node[parts[-1]] = value


def _section_model(model: type[BaseModel], location: tuple[Any, ...]) -> type[BaseModel] | None:
    """The settings model that holds the last key of ``location`` (``models.prove.x``: ModelSettings)."""
    current: Any = model
    keyed = False  # the part is a key of a mapping (models: {stage: ModelSettings}), not a field
    for part in location[:-1]:
        if keyed:
            keyed = False
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return None
        field = current.model_fields.get(str(part))
        if field is None:
            return None
        current = field.annotation
        if typing.get_origin(current) is dict:
            current, keyed = typing.get_args(current)[1], True
    return current if isinstance(current, type) and issubclass(current, BaseModel) and not keyed else None


def explain_validation(error: ValidationError, model: type[BaseModel] = BaseModel, *, where: str = "config") -> str:
    """Every refused key as ``key: reason``: an unknown key with the close known one (``problem_in_flight``:
    did you mean ``problems_in_flight``?), a bad value with what was given and why it was refused."""
    lines = []
    for item in error.errors():
        location = tuple(item["loc"])
        key = ".".join(str(part) for part in location) or "(top level)"
        value = item.get("input")
        shown = value if not isinstance(value, dict) else "{...}"
        if item["type"] == "extra_forbidden":
            section = _section_model(model, location)
            known = [name for name in (section.model_fields if section else {}) if name != "schema_version"]
            close = difflib.get_close_matches(str(location[-1]), known, n=1, cutoff=0.6)
            lines.append(f"{key}: unknown key" + (f"; did you mean {close[0]!r}?" if close else ""))
        elif item["type"] == "missing":
            lines.append(f"{key}: missing")
        elif item["type"] == "value_error":
            lines.append(f"{key}: {shown!r} refused: {item['msg'].removeprefix('Value error, ')}")
        else:
            lines.append(f"{key}: got {shown!r}; expected {item['msg'].removeprefix('Value error, ')}")
    return f"invalid {where}:\n  " + "\n  ".join(lines)


def build_config(data: dict[str, Any], *, where: str = "config") -> RunConfig:
    try:
        return RunConfig.model_validate(data)
    except ValidationError as error:
        raise ConfigError(explain_validation(error, RunConfig, where=where)) from None


def unshare(value: Any) -> Any:
    """A copy in which no two places share a dict or list.

    YAML anchors (``align: *judge``) load as one shared object: without this, ``--set
    models.align.model=X`` would also change every stage that reuses the anchor.
    """
    if isinstance(value, dict):
        return {key: unshare(item) for key, item in value.items()}
    if isinstance(value, list):
        return [unshare(item) for item in value]
    return value


def load_config(path: str | Path | None, overrides: list[str] | None = None) -> RunConfig:
    data = unshare(_read_file(Path(path))) if path else {}
    for assignment in overrides or []:
        apply_override(data, assignment)
    where = f"config file {path}" if path else "config"
    if overrides:
        where += " with " + " ".join(f"--set {assignment}" for assignment in overrides)
    return build_config(data, where=where)


def dump_config(config: RunConfig) -> str:
    return yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False, allow_unicode=True)


def config_warnings(config: RunConfig) -> list[str]:
    """Settings that are valid but almost certainly not what the user meant."""
    warnings = []
    prove = config.models.get("prove")
    sampled = prove is not None and prove.backend not in (ModelBackendName.scripted, ModelBackendName.replay)
    if prove is not None and sampled and config.prove.k > 1 and prove.temperature == 0:
        warnings.append(
            f"prove.k={config.prove.k} with models.prove.temperature=0: every sample is the same"
            " (greedy decoding); set a temperature > 0 (e.g. 1.0) or prove.k=1"
        )
    engines = {
        (settings.model, settings.max_model_len): settings.engine.gpu_memory_utilization
        for settings in config.models.values()
        if settings.backend == ModelBackendName.vllm
    }
    if len(engines) > 1 and sum(engines.values()) > 0.95:
        shown = ", ".join(f"{model} ({share})" for (model, _), share in engines.items())
        warnings.append(
            f"{len(engines)} in-process vLLM engines load on the same GPUs, each taking its gpu_memory_utilization"
            f" ({shown}): together they exceed the memory, so a later one fails to load. Serve all but one over HTTP"
            " (backend: openai) on GPUs of their own, or lower engine.gpu_memory_utilization so the shares fit"
        )
    if prove is not None and prove.backend == ModelBackendName.openai:
        left = [
            name
            for name in ("top_k", "min_p", "repetition_penalty", "presence_penalty", "frequency_penalty")
            if getattr(prove, name) is None
        ]
        if left:
            warnings.append(
                f"models.prove leaves {', '.join(left)} to the server: vLLM >= 0.8 fills them from the checkpoint's"
                " generation_config.json unless started with --generation-config vllm (`repro doctor --config FILE`"
                " shows what it would apply); set them, or name a prover profile, which sends its harness's values"
            )
    if prove is not None and prove.profile and prove.profile != "custom":
        from repro.provers import get_profile, profile_overrides

        profile = get_profile(prove.profile)
        if profile.toolchain != config.lean.toolchain:
            warnings.append(
                f"models.prove.profile {profile.name} was trained and evaluated on Lean {profile.toolchain}, but"
                f" lean.toolchain is {config.lean.toolchain}: renamed lemmas and changed tactics will cost coverage"
                f" that is not the prover's; set lean.toolchain: {profile.toolchain}"
            )
        departures = profile_overrides(prove.model_dump())
        if departures:
            shown = ", ".join(
                f"{key} {value['config']} (harness: {value['profile']})" for key, value in departures.items()
            )
            warnings.append(f"models.prove overrides its profile {profile.name}: {shown}")
        if " ".join(config.lean.header.split()) != " ".join(profile.lean_header.split()):
            warnings.append(
                f"lean.header departs from the profile {profile.name}'s harness header (maxHeartbeats"
                f" {profile.max_heartbeats}): the prover was evaluated under another header; remove lean.header"
                " to use the profile's"
            )
    return warnings


# What a resumed run may change: where and how fast things are reached, and how much more to draw.
# Everything else decides what a candidate is, so changing it mid-run would mix two experiments.
_RESUMABLE_MODEL_KEYS = frozenset(
    {"base_url", "api_key_env", "timeout_s", "min_tokens_per_s", "max_retries", "max_concurrency"}
)
_RESUMABLE_KEYS = frozenset(
    {
        "problems_in_flight",
        "stop_after_failed_calls",
        "lean.timeout_s",
        "lean.workers",
        "lean.recycle_after",
        "lean.memory_limit_mb",
        "lean.kimina_url",
        "lean.kimina_api_key_env",
        "lean.kimina_max_wait_s",
        "lean.selftest",
        "lean.project_path",
        # where the judge's tools are and how fast it answers; which judge it is (backend, factory) decides
        # what a candidate is and stays
        "judge.tools_dir",
        "judge.timeout_s",
        "judge.workers",
        "dataset.license",
        "dataset.attribution",
    }
)
_GROWABLE_KEYS = frozenset({"target", "dataset.limit"})


def _flatten(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            flat.update(_flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


def _may_change_on_resume(key: str, old: Any, new: Any) -> bool:
    if key in _RESUMABLE_KEYS:
        return True
    parts = key.split(".")
    if len(parts) == 3 and parts[0] == "models" and parts[2] in _RESUMABLE_MODEL_KEYS:
        return True
    if key == "lean.sandbox":
        from repro.lean.sandbox import at_least_as_strong

        # tightening the confinement only makes later checks safer; loosening it needs a new run
        return at_least_as_strong(str(new), str(old))
    if key in _GROWABLE_KEYS:
        # a larger (or removed) bound only draws more of the same seeded order
        return new is None or (old is not None and new >= old)
    return False


def resume_changes(stored: RunConfig, requested: RunConfig) -> dict[str, tuple[Any, Any]]:
    """The settings ``requested`` changes relative to the run's stored config, as key -> (old, new).

    Raises :class:`ConfigError` naming every change a resume may not make.
    """
    old = _flatten(stored.model_dump(mode="json"))
    new = _flatten(requested.model_dump(mode="json"))
    keys = sorted(old.keys() | new.keys())
    changes = {key: (old.get(key), new.get(key)) for key in keys if old.get(key) != new.get(key)}
    refused = [key for key, (before, after) in changes.items() if not _may_change_on_resume(key, before, after)]
    if refused:
        shown = "\n  ".join(f"{key}: {changes[key][0]!r} -> {changes[key][1]!r}" for key in refused)
        raise ConfigError(
            "--resume cannot change settings that decide what a candidate is (start a new run instead):\n  "
            + shown
            + "\nA resume may change endpoints, keys, timeouts, retries, concurrency, Lean workers, and raise"
            " --target or --limit."
        )
    return changes
