"""Records of an evaluation: what each model answered, how it was graded, and the report."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from repro.config import ModelSettings

EVAL_SCHEMA_VERSION = 1


class Variant(StrEnum):
    original = "original"
    rewritten = "rewritten"


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")
    schema_version: int = EVAL_SCHEMA_VERSION


class EvalModel(_Record):
    """A model under evaluation: the name the user gave it and every setting that reaches the wire."""

    name: str
    settings: ModelSettings


class EvalAnswer(_Record):
    """One sample of one model on one question (original or rewritten) of one instance, graded."""

    model: str
    instance_id: str
    variant: Variant
    sample: int = Field(ge=0)
    response: str
    finish_reason: str
    reference: str
    extracted: str | None
    correct: bool
    grading_method: str
    cache_key: str


class Interval(BaseModel):
    low: float
    high: float


class GroupStatistics(BaseModel):
    """Paired statistics for one model over one group of instances (all, a level, a type)."""

    group: str
    instances: int
    accuracy_original: float
    accuracy_original_interval: Interval
    accuracy_rewritten: float
    accuracy_rewritten_interval: Interval
    drop: float
    drop_interval: Interval
    discordant_original_only: int
    discordant_rewritten_only: int
    mcnemar_p: float


class ModelReport(BaseModel):
    model: str
    model_id: str
    samples: int
    missing_instances: int
    overall: GroupStatistics
    by_level: list[GroupStatistics]
    by_type: list[GroupStatistics]
    grading_methods: dict[str, int]


class ConfoundRow(BaseModel):
    metric: str
    definition: str
    instances: int
    spearman_rho: float | None
    p_value: float | None
    note: str | None = None


class EvalReport(BaseModel):
    """Everything ``repro evaluate-report`` shows; deterministic for a given store and seed."""

    release_fingerprint: str
    prompt_version: str
    instances: int
    unverified_instances: int
    interval_level: float
    bootstrap_resamples: int
    bootstrap_seed: int
    models: list[ModelReport]
    confounds: list[ConfoundRow]
    confound_instances: int
