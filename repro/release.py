"""Dataset export: JSONL and Parquet plus a dataset card that ``datasets.load_dataset(DIR)`` reads.

An instance whose proof was not checked by a real Lean backend is never written unless the caller
asks for it (``allow_unverified``), and then every such row says ``unverified: true``.
"""

from __future__ import annotations

import hashlib
import json
import secrets
from collections import Counter
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from pathlib import Path
from typing import Any

import yaml

from repro import __version__
from repro.config import LeanSettings, RunConfig
from repro.records import (
    RECORD_SCHEMA_VERSION,
    Candidate,
    Provenance,
    ReleasedInstance,
    StageModel,
    utc_now,
)
from repro.store import RunReader
from repro.waiting import about

SPLIT = "test"


class ReleaseError(RuntimeError):
    pass


MANIFEST = "SHA256SUMS"


@dataclass
class ReleaseSummary:
    written: int
    unverified: int
    withheld_unverified: int
    out_dir: Path
    # problems the run never finished (unfinished runs can be released, but the user is told)
    unfinished_problems: int = 0
    # every file written, relative to out_dir (the manifest last)
    files: tuple[str, ...] = ()
    # rows the ``keep`` hook held back (``release --replay``: not replayed by SafeVerify)
    withheld_by_keep: int = 0


@dataclass(frozen=True)
class SourceLicense:
    license: str
    attribution: str
    note: str = ""


# Only sources whose terms are known are described without the user's word; never guess the rest.
KNOWN_SOURCES: dict[str, SourceLicense] = {
    "gsm8k": SourceLicense(
        license="mit",
        attribution="GSM8K: Cobbe et al., 2021, Training Verifiers to Solve Math Word Problems (openai/gsm8k), MIT",
    ),
    "math": SourceLicense(
        license="mit",
        attribution="MATH: Hendrycks et al., 2021, Measuring Mathematical Problem Solving With the MATH Dataset",
        note=(
            "The MATH problems come from competitions (AMC 10, AMC 12, AIME and others) via AoPS; although the"
            " dataset is published under MIT, the redistribution of these problems is disputed. Check that you"
            " may redistribute derived problems before publishing this dataset."
        ),
    ),
}


def source_license(
    source: str, config: RunConfig | None, *, license: str | None, attribution: str | None
) -> SourceLicense:
    """The license and attribution the card states: the user's, else a known source's, else an error."""
    license = license or (config.dataset.license if config else None)
    attribution = attribution or (config.dataset.attribution if config else None)
    known = KNOWN_SOURCES.get(source)
    if license and attribution:
        return SourceLicense(license=license, attribution=attribution, note=known.note if known else "")
    if known is not None and not license and not attribution:
        return known
    raise ReleaseError(
        f"source {source!r}: its license and attribution are not known to repro, and it will not guess them."
        " Pass --license SPDX-ID --attribution TEXT (or set dataset.license and dataset.attribution in the config)"
    )


def proof_hash(code: str) -> str:
    return hashlib.sha256(code.encode("utf-8")).hexdigest()


def instance_from_candidate(
    candidate: Candidate, store: RunReader, header: str, *, released_at: str, demonstration: bool = False
) -> ReleasedInstance:
    problem = store.problem(candidate.problem_id)
    missing = [
        name
        for name in ("rewritten_question", "new_answer", "lean_statement", "lean_proof", "verified_code")
        if not getattr(candidate, name)
    ]
    if missing:
        raise ReleaseError(f"candidate {candidate.candidate_id} is retained but lacks {missing}")
    verified_code = candidate.verified_code or ""
    return ReleasedInstance(
        instance_id=candidate.candidate_id,
        source_dataset=problem.source,
        source_id=problem.source_id,
        level=problem.level,
        type=problem.type,
        original_question=problem.question,
        original_answer=problem.answer,
        rewritten_question=candidate.rewritten_question or "",
        new_answer=candidate.new_answer or "",
        lean_statement=candidate.lean_statement or "",
        lean_proof=candidate.lean_proof or "",
        verified_code=verified_code,
        lean_header=header,
        theorem_name=candidate.theorem_name or "",
        screener_answer=candidate.screener_answer,
        answer_disagrees_with_screener=bool(candidate.answer_disagrees_with_screener),
        unverified=demonstration or not candidate.verifier_is_real_lean,
        provenance=Provenance(
            models=[
                StageModel(stage=stage, model=model, backend=candidate.backends.get(stage, "unknown"))
                for stage, model in sorted(candidate.models.items())
            ],
            lean_toolchain=candidate.lean_toolchain,
            mathlib_revision=candidate.mathlib_revision,
            verifier_backend=candidate.verifier_backend,
            verified_by_real_lean=candidate.verifier_is_real_lean,
            statement_check=candidate.statement_check,
            proof_lever=candidate.proof_lever or NO_LEVER,
            proof_hash=proof_hash(verified_code),
            repro_version=__version__,
            released_at=released_at,
        ),
    )


def _combined_terms(
    sources: list[str], config: RunConfig | None, license: str | None, attribution: str | None
) -> SourceLicense:
    parts = [source_license(source, config, license=license, attribution=attribution) for source in sources]
    licenses = sorted({part.license for part in parts})
    return SourceLicense(
        license=licenses[0] if len(licenses) == 1 else "other",
        attribution="; ".join(dict.fromkeys(part.attribution for part in parts)),
        note=" ".join(dict.fromkeys(part.note for part in parts if part.note)),
    )


# The released row's columns, as Parquet stores them and as `datasets` describes them (the card's
# ``dataset_info`` and the ``huggingface`` schema metadata ``datasets.Dataset.to_parquet`` writes).
# Declared once here so writing needs neither `datasets` (seconds of imports) nor per-row encoding;
# tests check both descriptions against `datasets.Features` itself.
_STRING, _INT64, _BOOL = "string", "int64", "bool"
_MODEL_FIELDS: dict[str, Any] = {"schema_version": _INT64, "stage": _STRING, "model": _STRING, "backend": _STRING}
_PROVENANCE_FIELDS: dict[str, Any] = {
    "schema_version": _INT64,
    "models": [_MODEL_FIELDS],
    "lean_toolchain": _STRING,
    "mathlib_revision": _STRING,
    "verifier_backend": _STRING,
    "verified_by_real_lean": _BOOL,
    "statement_check": _STRING,
    "proof_lever": _STRING,
    "proof_hash": _STRING,
    "repro_version": _STRING,
    "released_at": _STRING,
}
_ROW_FIELDS: dict[str, Any] = {
    "schema_version": _INT64,
    **dict.fromkeys(
        (
            "instance_id",
            "source_dataset",
            "source_id",
            "level",
            "type",
            "original_question",
            "original_answer",
            "rewritten_question",
            "new_answer",
            "lean_statement",
            "lean_proof",
            "verified_code",
            "lean_header",
            "theorem_name",
            "screener_answer",
        ),
        _STRING,
    ),
    "answer_disagrees_with_screener": _BOOL,
    "unverified": _BOOL,
    "provenance": _PROVENANCE_FIELDS,
}


def _feature_dict(fields: dict[str, Any]) -> dict[str, Any]:
    """``datasets.Features.to_dict()`` of these fields (the ``huggingface`` Parquet metadata)."""

    def feature(kind: Any) -> Any:
        if isinstance(kind, dict):
            return _feature_dict(kind)
        if isinstance(kind, list):
            return {"feature": feature(kind[0]), "_type": "List"}
        return {"dtype": kind, "_type": "Value"}

    return {name: feature(kind) for name, kind in fields.items()}


def _feature_yaml(fields: dict[str, Any]) -> list[dict[str, Any]]:
    """``datasets.Features._to_yaml_list()`` of these fields (the card's ``dataset_info.features``)."""

    def entry(name: str, kind: Any) -> dict[str, Any]:
        if isinstance(kind, dict):
            return {"name": name, "struct": _feature_yaml(kind)}
        if isinstance(kind, list):
            return {"name": name, "list": _feature_yaml(kind[0])}
        return {"name": name, "dtype": kind}

    return [entry(name, kind) for name, kind in fields.items()]


def _arrow_schema() -> Any:
    import pyarrow

    def arrow_type(kind: Any) -> Any:
        if isinstance(kind, dict):
            return pyarrow.struct([(name, arrow_type(inner)) for name, inner in kind.items()])
        if isinstance(kind, list):
            return pyarrow.list_(arrow_type(kind[0]))
        return {_STRING: pyarrow.string(), _INT64: pyarrow.int64(), _BOOL: pyarrow.bool_()}[kind]

    metadata = {"huggingface": json.dumps({"info": {"features": _feature_dict(_ROW_FIELDS)}})}
    return pyarrow.schema([(name, arrow_type(kind)) for name, kind in _ROW_FIELDS.items()], metadata=metadata)


def _prover_section(config: RunConfig | None) -> str:
    """The prover profile the proofs were sampled with, its harness files, and any departure from them."""
    from repro.provers import profile_provenance

    prove = config.models.get("prove") if config is not None else None
    recorded = profile_provenance(prove.model_dump(mode="json")) if prove is not None else None
    if recorded is None:
        return ""
    lines = [
        f"\n## Prover\n\nProofs were sampled with the `{recorded['profile']}` profile ({prove.model if prove else ''})"
    ]
    lines[0] += ", following " + "; ".join(recorded["sources"]) + ".\n"
    for key, value in recorded["overrides"].items():
        lines.append(f"- `{key}`: {value['config']!r} (the harness uses {value['profile']!r})\n")
    return "".join(lines)


_CHECK_MEANINGS = {
    "satisfiable": "Lean proved the statement's hypotheses can hold (every variable pinned to a value)",
    "flagged": "no such values were found and nothing was derived from the hypotheses: audit these",
    "undecided": "Lean gave no verdict on the check (timeout or infrastructure)",
}


def _statement_check_section(counts: Counter[str | None], rows: int) -> str:
    """How many released rows each statement check outcome covers (``provenance.statement_check``)."""
    if not rows:
        return ""
    lines = ["\n## Statement checks\n\n"]
    lines.append(
        "Before proving, repro checks each statement with its own Lean commands (never the prover's text);"
        " `provenance.statement_check` records the outcome per row.\n\n"
    )
    for outcome, meaning in _CHECK_MEANINGS.items():
        lines.append(f"- {outcome}: {counts.get(outcome, 0)} of {rows} rows ({meaning})\n")
    others = {key: count for key, count in counts.items() if key not in _CHECK_MEANINGS}
    for other, count in sorted(others.items(), key=lambda item: str(item[0])):
        lines.append(f"- {'not recorded' if other is None else other}: {count} of {rows} rows\n")
    return "".join(lines)


NO_LEVER = "none"  # a released proof that is the prover's own sample, as sampled
_LEVER_MEANINGS = {
    NO_LEVER: "the prover's own sample, checked as it was sampled",
    "salvage": "a repaired text of a prover sample (special tokens removed, a fence closed, trailing text cut,"
    " or our statement re-spliced onto the prover's proof), checked through the same gate",
    "feedback": "the prover's reply in a later feedback round, after it was shown Lean's errors",
    "study": "a proof another prover found for the same statement in a prove-study (`repro run --reprove-with`),"
    " checked through the same gate",
}


def _proof_lever_section(counts: Counter[str], rows: int) -> str:
    """How many released proofs each lever found (``provenance.proof_lever``), and how to keep only raw ones."""
    if not rows:
        return ""
    lines = [
        "\n## How the proofs were found\n\n",
        "`provenance.proof_lever` records, per row, whether the verified proof is the prover's own sample or"
        " came from a lever. Every one was checked by the same soundness gate. To keep only raw samples:"
        ' `ds.filter(lambda row: row["provenance"]["proof_lever"] == "none")`.\n\n',
    ]
    for lever, meaning in _LEVER_MEANINGS.items():
        lines.append(f"- {lever}: {counts.get(lever, 0)} of {rows} rows ({meaning})\n")
    for other, count in sorted((key, n) for key, n in counts.items() if key not in _LEVER_MEANINGS):
        lines.append(f"- {other}: {count} of {rows} rows\n")
    return "".join(lines)


def _card(
    rows: int,
    unverified: int,
    config: RunConfig | None,
    num_bytes: int,
    terms: SourceLicense,
    skip_reasons: list[str],
    unfinished: int = 0,
    *,
    statement_checks: Counter[str | None] | None = None,
    proof_levers: Counter[str] | None = None,
) -> str:
    front = {
        "license": terms.license,
        "pretty_name": f"repro rewritten benchmark ({config.name if config else 'run'})",
        "task_categories": ["question-answering"],
        "tags": ["math", "lean4", "formal-verification", "contamination-resistant"],
        "configs": [{"config_name": "default", "data_files": [{"split": SPLIT, "path": f"data/{SPLIT}.parquet"}]}],
        "dataset_info": {
            "features": _feature_yaml(_ROW_FIELDS),
            "splits": [{"name": SPLIT, "num_bytes": num_bytes, "num_examples": rows}],
        },
    }
    warning = ""
    if unverified:
        warning = (
            f"\n> **Warning:** {unverified} of {rows} rows were NOT checked by a real Lean backend "
            "(`unverified: true`). Do not use them as verified references.\n"
        )
    if unfinished:
        warning += (
            f"\n> **Unfinished run:** {unfinished} drawn problems were never finished (an endpoint or Lean failed,"
            " or the run was stopped); this release holds only what was finished, so its figures are not those of"
            " the whole selection.\n"
        )
    source = _statement_check_section(statement_checks or Counter(), rows)
    source += _proof_lever_section(proof_levers or Counter(), rows)
    source += f"\n## Source\n\n{terms.attribution}. License: {terms.license}.\n"
    source += _prover_section(config)
    if terms.note:
        source += f"\n> **Redistribution:** {terms.note}\n"
    if skip_reasons:
        source += f"\n## Skipped source rows ({len(skip_reasons)})\n\n" + "".join(
            f"- {reason}\n" for reason in skip_reasons
        )
    return (
        "---\n" + yaml.safe_dump(front, sort_keys=False, allow_unicode=True) + "---\n\n"
        f"# repro rewritten benchmark\n{warning}\n"
        "Each row is a rewritten problem whose reference answer (`new_answer`) was read from a Lean 4 proof\n"
        "that passed repro's soundness gate. `verified_code` is exactly what Lean checked after `lean_header`;\n"
        "`provenance` records models per stage, the Lean toolchain, the Mathlib revision, the verifier and the\n"
        f"proof hash. Files: `data/{SPLIT}.parquet` and `data/{SPLIT}.jsonl` (same rows).\n\n"
        f"Re-verify with `repro reverify DIR` (it also checks every file against `{MANIFEST}`).\n" + source
    )


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def release_files(out: Path) -> list[str]:
    """Every file the manifest covers: the data, the card and the exported evaluation tasks."""
    from repro.release_exports import exported_file_names

    return [f"data/{SPLIT}.parquet", f"data/{SPLIT}.jsonl", "README.md", *exported_file_names()]


def _payload(table: str, field: str) -> str:
    return f"json_extract({table}.payload, '$.{field}')"


# What one released row is made of, read by SQLite from the stored payloads in one pass (the
# equivalent of :func:`instance_from_candidate`, which stays the reference for a single row).
_UNVERIFIED = f"(:demonstration OR NOT COALESCE({_payload('c', 'verifier_is_real_lean')}, 0))"
_COLUMNS: dict[str, str] = {
    "instance_id": "c.candidate_id",
    "source_dataset": _payload("p", "source"),
    "source_id": _payload("p", "source_id"),
    "level": "p.level",  # the store keeps level and type as columns beside the payload
    "type": "p.type",
    "original_question": _payload("p", "question"),
    "original_answer": _payload("p", "answer"),
    "rewritten_question": _payload("c", "rewritten_question"),
    "new_answer": _payload("c", "new_answer"),
    "lean_statement": _payload("c", "lean_statement"),
    "lean_proof": _payload("c", "lean_proof"),
    "verified_code": _payload("c", "verified_code"),
    "lean_header": ":header",
    "theorem_name": f"COALESCE({_payload('c', 'theorem_name')}, '')",
    "screener_answer": _payload("c", "screener_answer"),
    "answer_disagrees_with_screener": f"COALESCE({_payload('c', 'answer_disagrees_with_screener')}, 0) != 0",
}
# The rest of a row (whether it is unverified, and its provenance but for the proof hash) follows from
# fields that are the same for every row of a run, or nearly: SQLite hands them over as one JSON
# array per row, and each distinct array is turned into columns and JSONL text once, in Python.
_PROVENANCE_FIELDS_SQL = (
    "json_extract(c.payload, '$.models', '$.backends', '$.lean_toolchain', '$.mathlib_revision',"
    " '$.verifier_backend', '$.verifier_is_real_lean', '$.statement_check', '$.proof_lever')"
)
_BOOLEAN_COLUMNS = ("answer_disagrees_with_screener",)  # SQLite answers 0 or 1; JSON wants true or false
_REQUIRED = ("rewritten_question", "new_answer", "lean_statement", "lean_proof", "verified_code")


def _select() -> str:
    """The columns, the provenance fields, then each row's JSONL text as far as SQLite writes it.

    Text comes back as UTF-8 bytes (``CAST AS BLOB``): it goes to files and to Arrow as UTF-8, so
    decoding it into Python strings only to encode it again would be wasted work.
    """
    members = ["'schema_version', :schema_version"]
    columns = []
    for name, expression in _COLUMNS.items():
        if name in _BOOLEAN_COLUMNS:
            members.append(f"'{name}', json(CASE WHEN {expression} THEN 'true' ELSE 'false' END)")
            columns.append(expression)
        else:
            members.append(f"'{name}', {expression}")
            columns.append(f"CAST({expression} AS BLOB)")
    return ", ".join([*columns, _PROVENANCE_FIELDS_SQL, f"CAST(json_object({', '.join(members)}) AS BLOB)"])


@dataclass(frozen=True)
class _RowProvenance:
    """What a row's provenance fields make of it: its Parquet values and its JSONL text up to the hash."""

    unverified: bool
    models: list[dict[str, Any]]
    lean_toolchain: str | None
    mathlib_revision: str | None
    verifier_backend: str | None
    verified_by_real_lean: bool
    statement_check: str | None
    proof_lever: str
    jsonl_head: bytes


def _compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _arrow_column(values: Any, kind: Any) -> Any:
    """An Arrow column of ``kind`` from SQLite's answers (0 or 1 for booleans, UTF-8 bytes for text)."""
    import pyarrow

    if kind == pyarrow.bool_():
        return pyarrow.array(values, pyarrow.int8()).cast(kind)
    if kind == pyarrow.string():
        return pyarrow.array(values, pyarrow.binary()).cast(kind)  # the cast checks the bytes are UTF-8
    return pyarrow.array(values, kind)


@dataclass
class _Written:
    rows: int = 0
    unverified: int = 0
    num_bytes: int = 0
    # released rows per statement check outcome (None: the run predates the checks)
    statement_checks: Counter[str | None] = dataclass_field(default_factory=Counter)
    # released rows per proof lever ("none", "salvage", "feedback", "study")
    proof_levers: Counter[str] = dataclass_field(default_factory=Counter)


class _ReleaseWriter:
    """Streams released rows into the Parquet and JSONL files, a batch at a time.

    Both files are written under temporary names and renamed only when every row was written,
    and nothing (not even the directory) exists until the first row arrives: a release that fails
    or has nothing to release leaves the output directory as it was.
    """

    def __init__(self, out: Path, released_at: str, *, demonstration: bool) -> None:
        self.demonstration = demonstration
        self.out = out
        self.parquet_path = out / "data" / f"{SPLIT}.parquet"
        self.jsonl_path = out / "data" / f"{SPLIT}.jsonl"
        self.schema = _arrow_schema()
        self.written = _Written()
        self._sources: set[bytes] = set()
        self._created: list[Path] = []
        self._parquet: Any = None
        self._jsonl: Any = None
        # the provenance fields that are the same for every row close each JSONL line
        self._line_tail = _compact_json({"repro_version": __version__, "released_at": released_at})[1:].encode()
        self._constants = {"repro_version": __version__, "released_at": released_at}
        self._provenances: dict[str, _RowProvenance] = {}

    def _partial(self, path: Path) -> Path:
        return path.with_name(path.name + ".partial")

    def _open(self) -> None:
        import pyarrow.parquet as parquet

        for directory in (self.out, self.out / "data"):
            if not directory.exists():
                directory.mkdir(parents=True)
                self._created.append(directory)
        self._parquet = parquet.ParquetWriter(self._partial(self.parquet_path), self.schema)
        self._jsonl = self._partial(self.jsonl_path).open("wb")

    def write(self, batch: list[Any]) -> None:
        import pyarrow

        if not batch:
            return
        if self._parquet is None:
            self._open()
        columns = list(zip(*batch, strict=True))
        values = dict(zip(_COLUMNS, columns, strict=False))
        lacking = [
            index
            for name in _REQUIRED
            if not all(values[name])
            for index, value in enumerate(values[name])
            if not value
        ]
        if lacking:
            first = min(lacking)
            missing = [name for name in _REQUIRED if not values[name][first]]
            raise ReleaseError(f"candidate {batch[first][0].decode()} is retained but lacks {missing}")
        provenances = [self._provenance(fields) for fields in columns[len(_COLUMNS)]]
        hashes = [hashlib.sha256(code).hexdigest() for code in values["verified_code"]]  # as proof_hash()
        self._jsonl.write(
            b"".join(
                b'%s,%s%s",%s}\n' % (line[:-1], provenance.jsonl_head, digest.encode(), self._line_tail)
                for line, provenance, digest in zip(columns[len(_COLUMNS) + 1], provenances, hashes, strict=True)
            )
        )
        count = len(batch)
        arrays: dict[str, Any] = {"schema_version": pyarrow.array([RECORD_SCHEMA_VERSION] * count, pyarrow.int64())}
        for name in _COLUMNS:
            arrays[name] = _arrow_column(values[name], self.schema.field(name).type)
        unverified = [provenance.unverified for provenance in provenances]
        arrays["unverified"] = pyarrow.array(unverified, pyarrow.bool_())
        provenance_type = self.schema.field("provenance").type
        provenance_values: dict[str, list[Any]] = {
            "schema_version": [RECORD_SCHEMA_VERSION] * count,
            "proof_hash": hashes,
            **{name: [value] * count for name, value in self._constants.items()},
        }
        for field in provenance_type:
            if field.name not in provenance_values:
                provenance_values[field.name] = [getattr(provenance, field.name) for provenance in provenances]
        arrays["provenance"] = pyarrow.StructArray.from_arrays(
            [pyarrow.array(provenance_values[field.name], field.type) for field in provenance_type],
            fields=list(provenance_type),
        )
        table = pyarrow.Table.from_pydict(arrays, schema=self.schema)
        self._parquet.write_table(table)
        self.written.rows += count
        self.written.unverified += sum(unverified)
        self.written.statement_checks.update(provenance.statement_check for provenance in provenances)
        self.written.proof_levers.update(provenance.proof_lever for provenance in provenances)
        self.written.num_bytes += table.nbytes
        self._sources.update(values["source_dataset"])

    def _provenance(self, fields: str) -> _RowProvenance:
        """Built as :func:`instance_from_candidate` builds it, once per distinct ``fields`` text."""
        known = self._provenances.get(fields)
        if known is not None:
            return known
        models, backends, toolchain, mathlib, verifier, real_lean, statement_check, lever = json.loads(fields)
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
        unverified = self.demonstration or not real_lean
        head = {
            "schema_version": RECORD_SCHEMA_VERSION,
            "models": stage_models,
            "lean_toolchain": toolchain,
            "mathlib_revision": mathlib,
            "verifier_backend": verifier,
            "verified_by_real_lean": bool(real_lean),
            "statement_check": statement_check,
            "proof_lever": proof_lever,
        }
        jsonl_head = f'"unverified":{_compact_json(unverified)},"provenance":{_compact_json(head)[:-1]},"proof_hash":"'
        known = self._provenances[fields] = _RowProvenance(
            unverified=unverified,
            models=stage_models,
            lean_toolchain=toolchain,
            mathlib_revision=mathlib,
            verifier_backend=verifier,
            verified_by_real_lean=bool(real_lean),
            statement_check=statement_check,
            proof_lever=proof_lever,
            jsonl_head=jsonl_head.encode(),
        )
        return known

    def sources(self) -> set[str]:
        return {source.decode("utf-8") for source in self._sources}

    def finish(self) -> None:
        self._close()
        self._partial(self.parquet_path).replace(self.parquet_path)
        self._partial(self.jsonl_path).replace(self.jsonl_path)

    def _close(self) -> None:
        if self._parquet is not None:
            self._parquet.close()
            self._jsonl.close()

    def abandon(self) -> None:
        self._close()
        for path in (self.parquet_path, self.jsonl_path):
            self._partial(path).unlink(missing_ok=True)
        for directory in reversed(self._created):
            directory.rmdir()


def write_release(
    run_dir: str | Path,
    out_dir: str | Path,
    *,
    allow_unverified: bool = False,
    license: str | None = None,
    attribution: str | None = None,
    overwrite: bool = False,
    keep: Callable[[list[Any]], list[Any]] | None = None,
) -> ReleaseSummary:
    """Write the retained instances; nothing at all when none is releasable (the summary says so).

    A non-empty ``out_dir`` is refused unless ``overwrite``: a second release into the same folder
    would silently replace the first, and a mistyped ``--out`` would write into an unrelated folder.

    Rows stream from one SQL pass over the store straight into both files, so time and memory do
    not depend on parsing each candidate into records (a 100k-problem run releases in seconds).
    ``keep`` sees each page of rows (tuples in :func:`release_columns` order, then the provenance
    fields) and returns the rows to write (``release --replay`` drops those SafeVerify did not replay).
    """
    config_path = Path(run_dir) / "config.yaml"
    config = RunConfig.model_validate(yaml.safe_load(config_path.read_text())) if config_path.is_file() else None
    out = Path(out_dir)
    _refuse_occupied(out, overwrite=overwrite)
    demonstration = bool(config and config.demonstration)
    writer = _ReleaseWriter(out, utc_now(), demonstration=demonstration)
    parameters = {
        "demonstration": demonstration,
        "header": config.lean.header if config else "",
        "schema_version": RECORD_SCHEMA_VERSION,
    }
    store = RunReader(run_dir)
    try:
        retained = store.retained_count()
        pages = store.retained_rows(
            _select(), where="" if allow_unverified else f"NOT {_UNVERIFIED}", parameters=parameters
        )
        dropped = 0
        with closing(pages):  # the cursor closes before the store does, however the loop ends
            for page in pages:
                if keep is not None:
                    kept = keep(page)
                    dropped += len(page) - len(kept)
                    page = kept
                writer.write(page)
        if not allow_unverified or writer.written.rows != retained:
            # every retained row was released, so every one had its problem; else check (before keeping anything)
            store.check_retained_problems()
        unfinished = store.outcome_counts().get(None, 0)
        skip_reasons = json.loads(store.get_meta("skip_reasons") or "[]")
        written = writer.written
        withheld = 0 if allow_unverified else retained - written.rows - dropped
        if not written.rows:
            return ReleaseSummary(
                written=0,
                unverified=0,
                withheld_unverified=withheld,
                out_dir=out,
                unfinished_problems=unfinished,
                withheld_by_keep=dropped,
            )
        terms = _combined_terms(sorted(writer.sources()), config, license, attribution)
        writer.finish()
    except BaseException:
        writer.abandon()
        raise
    finally:
        store.close()
    card = _card(
        written.rows,
        written.unverified,
        config,
        written.num_bytes,
        terms,
        skip_reasons,
        unfinished,
        statement_checks=written.statement_checks,
        proof_levers=written.proof_levers,
    )
    (out / "README.md").write_text(card, encoding="utf-8")
    from repro.release_exports import write_release_exports  # inspect_ai and lm-eval tasks beside the data

    write_release_exports(out)
    manifest = "".join(f"{_sha256(out / name)}  {name}\n" for name in release_files(out))
    (out / MANIFEST).write_text(manifest, encoding="utf-8")
    return ReleaseSummary(
        written=written.rows,
        unverified=written.unverified,
        withheld_unverified=withheld,
        out_dir=out,
        unfinished_problems=unfinished,
        files=(*release_files(out), MANIFEST),
        withheld_by_keep=dropped,
    )


def _refuse_occupied(out: Path, *, overwrite: bool) -> None:
    if out.exists() and not out.is_dir():
        raise ReleaseError(f"--out {out}: a file is there, not a directory; choose another --out")
    if overwrite or not out.is_dir():
        return
    present = sorted(entry.name for entry in out.iterdir())
    if present:
        shown = ", ".join(present[:5]) + (f" and {len(present) - 5} more" if len(present) > 5 else "")
        raise ReleaseError(
            f"--out {out} is not empty ({shown}); nothing was written. Choose an empty or new --out, or pass"
            " --overwrite to replace the release files there"
        )


def release_columns() -> list[str]:
    """The columns of the rows :func:`write_release` hands to its ``keep`` hook, in order."""
    return list(_COLUMNS)


def check_release_files(out_dir: str | Path) -> list[str]:
    """Every way the release's files disagree with their manifest or with each other.

    ``datasets.load_dataset`` reads the Parquet file, so that is the file that must hold the
    verified rows; the JSONL twin must match it row by row.
    """
    import pyarrow.parquet as parquet

    out = Path(out_dir)
    problems = []
    manifest = out / MANIFEST
    if not manifest.is_file():
        problems.append(f"{MANIFEST} missing: the files cannot be checked against what was released")
    else:
        listed = {}
        for line in manifest.read_text(encoding="utf-8").splitlines():
            digest, _, name = line.partition("  ")
            listed[name] = digest
        for name in release_files(out):
            path = out / name
            if name not in listed:
                problems.append(f"{name}: not in {MANIFEST}")
            elif not path.is_file():
                problems.append(f"{name}: missing")
            elif _sha256(path) != listed[name]:
                problems.append(f"{name}: SHA-256 differs from {MANIFEST} (the file was changed after release)")
    parquet_path = out / "data" / f"{SPLIT}.parquet"
    if not parquet_path.is_file():
        return [*problems, f"data/{SPLIT}.parquet missing"]
    parquet_rows = parquet.read_table(parquet_path).to_pylist()
    jsonl_rows = [instance.model_dump(mode="json") for instance in read_release(out)]
    if len(parquet_rows) != len(jsonl_rows):
        problems.append(f"data/{SPLIT}.parquet has {len(parquet_rows)} rows, data/{SPLIT}.jsonl {len(jsonl_rows)}")
    for index, (from_parquet, from_jsonl) in enumerate(zip(parquet_rows, jsonl_rows, strict=False), start=1):
        if from_parquet != from_jsonl:
            fields = sorted(key for key in from_jsonl if from_parquet.get(key) != from_jsonl.get(key))
            problems.append(
                f"row {index} ({from_jsonl.get('instance_id')}): Parquet and JSONL differ in {', '.join(fields)}"
            )
    return problems


def read_parquet_release(out_dir: str | Path) -> list[ReleasedInstance]:
    """The rows users load (``datasets.load_dataset`` reads the Parquet file)."""
    import pyarrow.parquet as parquet

    path = Path(out_dir) / "data" / f"{SPLIT}.parquet"
    if not path.is_file():
        raise ReleaseError(f"{out_dir}: no data/{SPLIT}.parquet; is this a repro release?")
    instances = []
    for index, row in enumerate(parquet.read_table(path).to_pylist(), start=1):
        try:
            instances.append(ReleasedInstance.model_validate(row))
        except ValueError as error:
            raise ReleaseError(f"{path}: row {index}: not a released instance: {error}") from error
    return instances


def read_release(out_dir: str | Path) -> list[ReleasedInstance]:
    path = Path(out_dir) / "data" / f"{SPLIT}.jsonl"
    if not path.is_file():
        raise ReleaseError(f"{out_dir}: no data/{SPLIT}.jsonl; is this a repro release?")
    instances = []
    for line_number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        try:
            instances.append(ReleasedInstance.model_validate_json(line))
        except ValueError as error:
            raise ReleaseError(f"{path}:{line_number}: not a released instance: {error}") from error
    return instances


@dataclass
class ReverifyResult:
    instance_id: str
    passed_gate: bool
    real_lean: bool
    reasons: list[str]
    answer_grounded: bool = True
    # Lean gave no verdict (timeout, unavailable): neither a pass nor a rejection
    infrastructure: bool = False
    # ``provenance.statement_check`` as released, and what our trusted Lean check says now
    statement_check: str | None = None
    statement_recheck: str | None = None
    statement_check_agrees: bool = True

    @property
    def passed(self) -> bool:
        return self.passed_gate and self.answer_grounded and self.statement_check_agrees


class LeanUnavailableError(RuntimeError):
    """The Lean backend cannot check trivial code: no proof of the release was checked."""


async def reverify_release(out_dir: str | Path, lean: LeanSettings) -> list[ReverifyResult]:
    """Re-check every released proof from the release's own files, through the same soundness gate.

    An instance passes only if the gate verifies it again and the code Lean checked is byte-for-byte
    the ``verified_code`` that was released. The rows checked are the Parquet rows users load; first
    the files must match their manifest and each other (else :class:`ReleaseError`).
    """
    from repro.judge import verify_proof
    from repro.judge.batch import INFRA_REASONS
    from repro.lean import build_verifier
    from repro.stages.answer import recheck_answer

    problems = check_release_files(out_dir)
    if problems:
        raise ReleaseError(f"{out_dir}: the release's files are not what was released:\n  " + "\n  ".join(problems))
    instances = read_parquet_release(out_dir)
    verifier = build_verifier(lean)
    results = []
    try:
        await _preflight(verifier, lean)
        for instance in instances:
            # the header comes from the trusted settings, never from the release: a rewritten row's
            # header could declare an axiom or a macro that spoofs ``#print axioms``
            with about(instance.instance_id):  # the heartbeat names the row whose check is in flight
                verdict = await verify_proof(
                    instance.lean_statement,
                    instance.lean_proof,
                    verifier,
                    header=lean.header,
                    allow_native_decide=lean.allow_native_decide,
                    limits=lean.static_limits,
                )
            reasons = [reason.value for reason in verdict.reasons]
            same_header = " ".join(instance.lean_header.split()) == " ".join(lean.header.split())
            if not same_header:
                reasons.append("the released lean_header differs from the trusted header (--config lean.header)")
            same = verdict.checked_code == instance.verified_code
            if not same:
                reasons.append("checked code differs from the released verified_code")
            # from our statement alone (issue 19 §4): never from the released proof text
            answer = await recheck_answer(instance.lean_statement, instance.new_answer, verifier, header=lean.header)
            answer_grounded = answer.grounded
            if not answer_grounded:
                reasons.append(
                    f"new_answer {instance.new_answer!r} is not the answer read from the verified statement"
                    f" ({answer.method}: {answer.detail})"
                )
            recheck, agrees, no_verdict = await _recheck_statement(instance, verifier, lean.header)
            if not agrees or no_verdict:
                reasons.append(
                    f"statement_check released as {instance.provenance.statement_check!r};"
                    f" our Lean check of the statement now says {recheck!r}"
                )
            results.append(
                ReverifyResult(
                    instance_id=instance.instance_id,
                    passed_gate=verdict.verified and same and same_header,
                    real_lean=bool(verdict.lean and verdict.lean.real_lean),
                    reasons=reasons,
                    answer_grounded=answer_grounded,
                    infrastructure=(bool(verdict.reasons) and set(verdict.reasons) <= INFRA_REASONS)
                    or no_verdict
                    or answer.no_verdict,
                    statement_check=instance.provenance.statement_check,
                    statement_recheck=recheck,
                    statement_check_agrees=agrees,
                )
            )
    finally:
        await verifier.close()
    return results


async def _recheck_statement(instance: ReleasedInstance, verifier: Any, header: str) -> tuple[str | None, bool, bool]:
    """Re-run the pipeline's statement check (:func:`repro.lean.statement_checks.check_statement`).

    Returns (outcome now, agrees, no verdict). A vacuous statement never agrees (it is never retained);
    a row released as satisfiable must be satisfiable again; a row released as flagged or undecided
    (or before the checks existed) only records what Lean says now. No verdict now is neither.
    """
    from repro.lean.statement_checks import check_statement

    released = instance.provenance.statement_check
    facts = await check_statement(instance.lean_statement, verifier, header=header)
    now = facts.status
    if now == "vacuous":
        return now, False, False
    if now == "undecided":
        return now, True, released in ("satisfiable", "flagged")
    if released == "satisfiable":
        return now, now == "satisfiable", False
    return now, True, False


async def _preflight(verifier: Any, lean: LeanSettings) -> None:
    """Trivial code first: without a working backend every row would read as a failed proof."""
    from repro.lean import InfraStatus

    code = f"theorem repro_preflight_{secrets.token_hex(4)} : True := trivial"
    result = await verifier.check(code, lean.header)
    if result.infra_status != InfraStatus.ok or result.has_error:
        detail = result.detail or "; ".join(message.text for message in result.messages[:2])
        raise LeanUnavailableError(
            f"the Lean backend ({lean.backend}) cannot check code: {result.infra_status}: {detail[:400]};"
            " nothing was re-verified. See `repro doctor`; `repro lean setup` installs Mathlib and the REPL"
        )
