"""Settings for one run, loadable from YAML or TOML and overridable with ``--set key=value``.

A run directory keeps the resolved config (``config.yaml``) so a run can always be explained and
resumed with exactly the settings that produced it.
"""

from __future__ import annotations

import tomllib
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator


class ConfigError(ValueError):
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


class ModelSettings(_Strict):
    """How one stage reaches its model. Every sampling parameter is sent explicitly on the wire."""

    backend: ModelBackendName = ModelBackendName.openai
    model: str = "gpt-4o-mini"
    base_url: str | None = "https://api.openai.com/v1"
    api_key_env: str | None = "OPENAI_API_KEY"
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    top_k: int | None = Field(None, ge=-1)
    max_tokens: int = Field(2048, ge=1)
    seed: int | None = 0
    json_mode: bool = False
    max_concurrency: int = Field(8, ge=1)
    timeout_s: float = Field(300.0, gt=0)
    max_retries: int = Field(5, ge=0)
    prompt_format: Literal["chat", "completion"] = "chat"
    # scripted backend only: a JSONL/YAML file of scripted rules (see repro.llm.scripted)
    script: str | None = None


class ProveSettings(_Strict):
    k: int = Field(3, ge=1)
    strategy: Literal["parallel", "sequential"] = "parallel"


class RetrySettings(_Strict):
    rewrites_per_problem: int = Field(2, ge=1)
    formalizations_per_rewrite: int = Field(2, ge=1)
    regenerate_formalization_after_proof_failure: bool = True


class AlignSettings(_Strict):
    asks: int = Field(3, ge=1)


class LeanBackendName(StrEnum):
    repl = "repl"
    kimina = "kimina"
    fake = "fake"


DEFAULT_HEADER = (
    "import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 400000\n\nopen BigOperators Real Nat Topology Rat\n"
)


class LeanSettings(_Strict):
    backend: LeanBackendName = LeanBackendName.repl
    project_path: str = "lean_project"
    header: str = DEFAULT_HEADER
    timeout_s: float = Field(120.0, gt=0)
    memory_limit_mb: int | None = Field(12288, ge=256)
    workers: int = Field(2, ge=1)
    recycle_after: int = Field(200, ge=1)
    kimina_url: str = "http://127.0.0.1:8000"
    kimina_api_key_env: str | None = None
    allow_native_decide: bool = False
    mathlib_revision: str = "v4.15.0"
    # fake backend only: JSON rules for the fake REPL (see repro.lean.fake_repl)
    fake_rules: str | None = None


class DatasetSettings(_Strict):
    name: str = "gsm8k"
    path: str | None = None
    split: str = "test"
    question_field: str | None = None
    answer_field: str | None = None
    id_field: str | None = None
    limit: int | None = Field(None, ge=1)
    levels: list[str] = Field(default_factory=list)
    types: list[str] = Field(default_factory=list)
    ids: list[str] = Field(default_factory=list)
    sample: int | None = Field(None, ge=1)
    seed: int = 0
    skip_bad_rows: bool = False


class RunConfig(_Strict):
    """Everything that decides what a run does. Stored resolved in the run directory."""

    name: str = "run"
    demonstration: bool = False
    dataset: DatasetSettings = Field(default_factory=DatasetSettings)
    models: dict[str, ModelSettings] = Field(default_factory=dict)
    prove: ProveSettings = Field(default_factory=ProveSettings)
    retries: RetrySettings = Field(default_factory=RetrySettings)
    align: AlignSettings = Field(default_factory=AlignSettings)
    lean: LeanSettings = Field(default_factory=LeanSettings)
    cache: CacheMode = CacheMode.read_write
    problems_in_flight: int = Field(16, ge=1)
    target: int | None = Field(None, ge=1)

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


def _explain(error: ValidationError, data: dict[str, Any]) -> str:
    lines = []
    for item in error.errors():
        key = ".".join(str(part) for part in item["loc"]) or "(top level)"
        value = item.get("input")
        shown = value if not isinstance(value, dict) else "{...}"
        lines.append(f"{key}: got {shown!r}; expected {item['msg'].removeprefix('Value error, ')}")
    return "invalid config:\n  " + "\n  ".join(lines)


def build_config(data: dict[str, Any]) -> RunConfig:
    try:
        return RunConfig.model_validate(data)
    except ValidationError as error:
        raise ConfigError(_explain(error, data)) from None


def load_config(path: str | Path | None, overrides: list[str] | None = None) -> RunConfig:
    data = _read_file(Path(path)) if path else {}
    for assignment in overrides or []:
        apply_override(data, assignment)
    return build_config(data)


def dump_config(config: RunConfig) -> str:
    return yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False, allow_unicode=True)
