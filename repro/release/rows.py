"""The one definition of a released row: where each column of :class:`ReleasedInstance` comes from.

:data:`COLUMNS` names, for every column the store supplies, the stored field it is read from. The
bulk writer (:mod:`repro.release.writer`) hands that table to the store, which reads every row in one
SQL pass; :func:`instance_from_candidate` reads the same table from records already parsed. The
provenance is built by one function (:func:`row_provenance`) from the same packed fields in both
paths, and the Parquet/`datasets` schema is derived from the record itself. A new column is one
field on :class:`ReleasedInstance` and one line here (an import-time check refuses anything else).
"""

from __future__ import annotations

import hashlib
import json
import types
import typing
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from repro import __version__
from repro.records import RECORD_SCHEMA_VERSION, Candidate, Provenance, ReleasedInstance, SourceProblem, StageModel
from repro.release.errors import ReleaseError
from repro.store.fields import StoredField, candidate_field, parameter, problem_field

SPLIT = "test"
NO_LEVER = "none"  # a released proof that is the prover's own sample, as sampled


@dataclass(frozen=True)
class Column:
    """A released column read from the store; ``required``: a retained candidate must have it."""

    name: str
    field: StoredField
    required: bool = False


COLUMNS: tuple[Column, ...] = (
    Column("instance_id", candidate_field("candidate_id")),
    Column("source_dataset", problem_field("source")),
    Column("source_id", problem_field("source_id")),
    Column("level", problem_field("level")),
    Column("type", problem_field("type")),
    Column("original_question", problem_field("question")),
    Column("original_answer", problem_field("answer")),
    Column("rewritten_question", candidate_field("rewritten_question"), required=True),
    Column("new_answer", candidate_field("new_answer"), required=True),
    Column("answer_type", candidate_field("answer_form")),
    Column("answer_lean_type", candidate_field("answer_lean_type")),
    Column("answer_lean", candidate_field("answer_lean")),
    Column("answer_variables", candidate_field("answer_variables")),
    Column("lean_statement", candidate_field("lean_statement"), required=True),
    Column("lean_proof", candidate_field("lean_proof"), required=True),
    Column("verified_code", candidate_field("verified_code"), required=True),
    Column("lean_header", parameter("header")),  # the run's configured header, never prover text
    Column("theorem_name", candidate_field("theorem_name", default="")),
    Column("screener_answer", candidate_field("screener_answer")),
    Column("answer_disagrees_with_screener", candidate_field("answer_disagrees_with_screener", boolean=True)),
)
# Columns that follow from the others rather than from one stored field (see row_provenance).
DERIVED = ("schema_version", "unverified", "provenance")

# What the rest of a row (``unverified`` and ``provenance`` but for the proof hash) is made of: the
# same for every row of a run, or nearly, so the bulk path reads them as one JSON array per row and
# builds each distinct array once.
PROVENANCE_SOURCES: tuple[StoredField, ...] = tuple(
    candidate_field(name)
    for name in (
        "models",
        "backends",
        "lean_toolchain",
        "mathlib_revision",
        "verifier_backend",
        "verifier_is_real_lean",
        "statement_check",
        "proof_lever",
        "judge_tool",
        "judge_revision",
        "judge_toolchain",
        "judge_real",
        "judge_confinement",
        "judge_checks",
    )
)
# a row is verified only when both fields are true and the run is not a demonstration: real Lean screened
# it and a real kernel judge passed it
REAL_LEAN = candidate_field("verifier_is_real_lean", boolean=True)
REAL_JUDGE = candidate_field("judge_real", boolean=True)

REQUIRED = tuple(column.name for column in COLUMNS if column.required)


def _check_columns() -> None:
    """Every field of the record is a column here or derived, in the record's order (Parquet's)."""
    declared = [name for name in ReleasedInstance.model_fields if name not in DERIVED]
    named = [column.name for column in COLUMNS]
    if declared != named:
        raise RuntimeError(f"repro.release.rows.COLUMNS {named} do not follow ReleasedInstance {declared}")
    if list(ReleasedInstance.model_fields)[-2:] != ["unverified", "provenance"]:
        raise RuntimeError("ReleasedInstance must end with unverified and provenance (the JSONL lines are built so)")


_check_columns()


def never_judged(candidate_id: str) -> str:
    return (
        f"candidate {candidate_id} is retained but no kernel judge passed it (a store written before the judge"
        " stage?); nothing was written. Open the run with this repro (`repro status`), then `repro run --resume`"
        " judges it"
    )


def proof_hash(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8")).hexdigest()


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True)
class RowProvenance:
    """What a row's provenance fields make of it: its Parquet values and its JSONL text up to the hash."""

    unverified: bool
    models: list[dict[str, Any]]
    lean_toolchain: str | None
    mathlib_revision: str | None
    verifier_backend: str | None
    verified_by_real_lean: bool
    statement_check: str | None
    proof_lever: str
    judge_tool: str | None
    judge_revision: str | None
    judge_toolchain: str | None
    judge_checks: int | None
    judge_confinement: str | None
    verified_by_real_judge: bool
    jsonl_head: bytes
    # why the judge that passed the row is not today's (repro.judge.currency), or None: such a row is unverified
    judge_outdated: str | None = None


def row_provenance(values: list[Any], *, demonstration: bool) -> RowProvenance:
    """The provenance of a row from its :data:`PROVENANCE_SOURCES` values, as stored."""
    models, backends, toolchain, mathlib, verifier, real_lean, statement_check, lever, *judge = values
    judge_tool, judge_revision, judge_toolchain, judge_real, judge_confinement, judge_checks = judge
    proof_lever = lever or NO_LEVER
    stage_models = [
        {
            "schema_version": RECORD_SCHEMA_VERSION,
            "stage": stage,
            "model": model,
            "backend": (backends or {}).get(stage, "unknown"),
        }
        for stage, model in sorted((models or {}).items())
    ]
    from repro.judge.currency import judge_outdated  # the pins, and what the judge's modules import, only here

    # a pass of another revision or checks version than today's says nothing about what today's judge says
    outdated = judge_outdated(judge_tool, judge_revision, judge_toolchain, judge_checks) if judge_real else None
    unverified = demonstration or not real_lean or not judge_real or outdated is not None
    head = {
        "schema_version": RECORD_SCHEMA_VERSION,
        "models": stage_models,
        "lean_toolchain": toolchain,
        "mathlib_revision": mathlib,
        "verifier_backend": verifier,
        "verified_by_real_lean": bool(real_lean),
        "statement_check": statement_check,
        "proof_lever": proof_lever,
        "judge_tool": judge_tool,
        "judge_revision": judge_revision,
        "judge_toolchain": judge_toolchain,
        "judge_checks": judge_checks,
        "judge_confinement": judge_confinement,
        "verified_by_real_judge": bool(judge_real),
    }
    jsonl_head = f'"unverified":{compact_json(unverified)},"provenance":{compact_json(head)[:-1]},"proof_hash":"'
    return RowProvenance(
        unverified=unverified,
        models=stage_models,
        lean_toolchain=toolchain,
        mathlib_revision=mathlib,
        verifier_backend=verifier,
        verified_by_real_lean=bool(real_lean),
        statement_check=statement_check,
        proof_lever=proof_lever,
        judge_tool=judge_tool,
        judge_revision=judge_revision,
        judge_toolchain=judge_toolchain,
        judge_checks=judge_checks,
        judge_confinement=judge_confinement,
        verified_by_real_judge=bool(judge_real),
        jsonl_head=jsonl_head.encode(),
        judge_outdated=outdated,
    )


def instance_from_candidate(
    candidate: Candidate,
    problem: SourceProblem,
    header: str,
    *,
    released_at: str,
    demonstration: bool = False,
) -> ReleasedInstance:
    """One released row from parsed records, read through the same :data:`COLUMNS` as the bulk path."""
    records = {"problem": problem, "candidate": candidate}
    parameters = {"header": header}
    values = {column.name: column.field.read(records, parameters) for column in COLUMNS}
    missing = [name for name in REQUIRED if not values[name]]
    if missing:
        raise ReleaseError(f"candidate {candidate.candidate_id} is retained but lacks {missing}")
    if candidate.judge_tool is None:
        raise ReleaseError(never_judged(candidate.candidate_id))
    provenance = row_provenance(
        [field.read(records, parameters) for field in PROVENANCE_SOURCES], demonstration=demonstration
    )
    return ReleasedInstance(
        **values,
        unverified=provenance.unverified,
        provenance=Provenance(
            models=[StageModel.model_validate(model) for model in provenance.models],
            lean_toolchain=provenance.lean_toolchain,
            mathlib_revision=provenance.mathlib_revision,
            verifier_backend=provenance.verifier_backend,
            verified_by_real_lean=provenance.verified_by_real_lean,
            statement_check=provenance.statement_check,
            proof_lever=provenance.proof_lever,
            judge_tool=provenance.judge_tool,
            judge_revision=provenance.judge_revision,
            judge_toolchain=provenance.judge_toolchain,
            judge_checks=provenance.judge_checks,
            judge_confinement=provenance.judge_confinement,
            verified_by_real_judge=provenance.verified_by_real_judge,
            proof_hash=proof_hash(values["verified_code"]),
            repro_version=__version__,
            released_at=released_at,
        ),
    )


# -- the schema, derived from the record ----------------------------------------------------------
# The released row's columns as Parquet stores them and as `datasets` describes them (the card's
# ``dataset_info`` and the ``huggingface`` schema metadata ``datasets.Dataset.to_parquet`` writes).
# Derived here so writing needs neither `datasets` (seconds of imports) nor per-row encoding; tests
# check both descriptions against `datasets.Features` itself.
STRING, INT64, BOOL = "string", "int64", "bool"


def _kind(annotation: Any) -> Any:
    """``str``/``int``/``bool`` (optional or not), a record (a struct) or a list of records."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        inner = [arm for arm in typing.get_args(annotation) if arm is not type(None)]
        if len(inner) != 1:
            raise TypeError(f"a released column holds one type, not {annotation}")
        return _kind(inner[0])
    if typing.get_origin(annotation) is list:
        return [_kind(typing.get_args(annotation)[0])]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return {name: _kind(info.annotation) for name, info in annotation.model_fields.items()}
    kinds = {str: STRING, int: INT64, bool: BOOL}
    if annotation not in kinds:
        raise TypeError(f"no Parquet type for a released column of type {annotation}")
    return kinds[annotation]


ROW_FIELDS: dict[str, Any] = _kind(ReleasedInstance)


def feature_dict(fields: dict[str, Any]) -> dict[str, Any]:
    """``datasets.Features.to_dict()`` of these fields (the ``huggingface`` Parquet metadata)."""

    def feature(kind: Any) -> Any:
        if isinstance(kind, dict):
            return feature_dict(kind)
        if isinstance(kind, list):
            return {"feature": feature(kind[0]), "_type": "List"}
        return {"dtype": kind, "_type": "Value"}

    return {name: feature(kind) for name, kind in fields.items()}


def feature_yaml(fields: dict[str, Any]) -> list[dict[str, Any]]:
    """``datasets.Features._to_yaml_list()`` of these fields (the card's ``dataset_info.features``)."""

    def entry(name: str, kind: Any) -> dict[str, Any]:
        if isinstance(kind, dict):
            return {"name": name, "struct": feature_yaml(kind)}
        if isinstance(kind, list):
            return {"name": name, "list": feature_yaml(kind[0])}
        return {"name": name, "dtype": kind}

    return [entry(name, kind) for name, kind in fields.items()]


def arrow_schema() -> Any:
    import pyarrow

    def arrow_type(kind: Any) -> Any:
        if isinstance(kind, dict):
            return pyarrow.struct([(name, arrow_type(inner)) for name, inner in kind.items()])
        if isinstance(kind, list):
            return pyarrow.list_(arrow_type(kind[0]))
        return {STRING: pyarrow.string(), INT64: pyarrow.int64(), BOOL: pyarrow.bool_()}[kind]

    metadata = {"huggingface": json.dumps({"info": {"features": feature_dict(ROW_FIELDS)}})}
    return pyarrow.schema([(name, arrow_type(kind)) for name, kind in ROW_FIELDS.items()], metadata=metadata)
