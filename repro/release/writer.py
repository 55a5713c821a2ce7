"""``repro release``: retained instances streamed from one SQL pass into Parquet and JSONL, then the card.

An instance whose proof was not screened by real Lean and passed by a real kernel judge is never written
unless the caller asks for it (``allow_unverified``), and then every such row says ``unverified: true``; a
retained instance that no judge passed at all (a store older than the judge stage) is never written. Rows are read
as :data:`repro.release.rows.COLUMNS` defines them; no row is parsed into records, so time and
memory do not depend on the number of candidates (a 100k-problem run releases in seconds).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from contextlib import closing
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from pathlib import Path
from typing import Any

import yaml

from repro import __version__
from repro.config import RunConfig
from repro.metrics import answer_metrics
from repro.records import RECORD_SCHEMA_VERSION, utc_now
from repro.release.card import JudgeKey, card, combined_terms
from repro.release.errors import ReleaseError
from repro.release.files import MANIFEST, release_files, write_manifest
from repro.release.rows import (
    COLUMNS,
    PROVENANCE_SOURCES,
    REAL_JUDGE,
    REAL_LEAN,
    REQUIRED,
    SPLIT,
    RowProvenance,
    arrow_schema,
    compact_json,
    never_judged,
    row_provenance,
)
from repro.stages.answer import ANSWER_EVIDENCE
from repro.store import RunReader
from repro.store.fields import candidate_among, candidate_same, parameter

# statement check outcomes withheld unless ``include_flagged``: neither vacuous nor shown satisfiable
WITHHELD_CHECKS = ("flagged", "undecided")
FLAGGED = candidate_among("statement_check", WITHHELD_CHECKS)
# a row whose statement no check ran on (``statement_check`` null, or an outcome this release does not know)
# is never released, flagged or not: no check is not a pass (red2 R2-2)
SATISFIABLE = candidate_among("statement_check", ("satisfiable",))
CHECKED = candidate_among("statement_check", ("satisfiable", *WITHHELD_CHECKS))
UNCHECKED = candidate_among("statement_check", ("satisfiable", *WITHHELD_CHECKS), negate=True)
# a row's answer is released only with the evidence today's answer stage produced it: the answer it confirmed
# with our Lean commands, unchanged since, and today's version of those confirmations (red2 R2-9)
ANSWER_CONFIRMED = (
    candidate_among("answer_evidence", (ANSWER_EVIDENCE,)),
    candidate_same("answer_confirmed", "new_answer"),
)

# each row's JSONL text, as far as SQLite writes it: the schema version, then every stored column
_JSON_MEMBERS = (("schema_version", parameter("schema_version")), *((c.name, c.field) for c in COLUMNS))


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
    # verified rows whose statement was neither found vacuous nor shown satisfiable (flagged, undecided),
    # withheld unless ``include_flagged``
    withheld_flagged: int = 0
    # rows whose statement no check ran on (a run with ``statement_checks.vacuity`` off, or older than the
    # checks), and rows whose answer has no evidence today's answer stage confirmed it: never released
    withheld_unchecked: int = 0
    withheld_unconfirmed: int = 0
    # of ``withheld_unverified``: rows a real judge passed, but not today's (another pin or checks version;
    # repro.judge.currency): `repro run --resume` judges them again
    withheld_outdated_judge: int = 0


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
    # released rows per answer form (None: a run that predates the forms)
    answer_forms: Counter[str | None] = dataclass_field(default_factory=Counter)
    # released rows per kernel judge that passed them: (toolchain, tool, revision, confinement, real)
    judges: Counter[JudgeKey] = dataclass_field(default_factory=Counter)


class _ReleaseWriter:
    """Streams released rows into the Parquet and JSONL files, a batch at a time.

    Both files are written under temporary names and renamed only when every row was written,
    and nothing (not even the directory) exists until the first row arrives: a release that fails
    or has nothing to release leaves the output directory as it was.
    """

    def __init__(self, out: Path, released_at: str, *, demonstration: bool, verified_only: bool = False) -> None:
        self.demonstration = demonstration
        # the store's query keeps only rows real Lean and a real judge passed; which judge is today's is known
        # here (the pins), so a row an older judge passed is dropped here, and counted
        self.verified_only = verified_only
        self.withheld_outdated = 0
        self.out = out
        self.parquet_path = out / "data" / f"{SPLIT}.parquet"
        self.jsonl_path = out / "data" / f"{SPLIT}.jsonl"
        self.schema = arrow_schema()
        self.written = _Written()
        self._sources: set[bytes] = set()
        self._created: list[Path] = []
        self._parquet: Any = None
        self._jsonl: Any = None
        # the provenance fields that are the same for every row close each JSONL line
        self._line_tail = compact_json({"repro_version": __version__, "released_at": released_at})[1:].encode()
        self._constants = {"repro_version": __version__, "released_at": released_at}
        self._provenances: dict[str, RowProvenance] = {}

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

        if self.verified_only:
            kept = [row for row in batch if self._provenance(row[len(COLUMNS)]).judge_outdated is None]
            self.withheld_outdated += len(batch) - len(kept)
            batch = kept
        if not batch:
            return
        if self._parquet is None:
            self._open()
        names = [column.name for column in COLUMNS]
        columns = list(zip(*batch, strict=True))
        values = dict(zip(names, columns, strict=False))
        lacking = [
            index for name in REQUIRED if not all(values[name]) for index, value in enumerate(values[name]) if not value
        ]
        if lacking:
            first = min(lacking)
            missing = [name for name in REQUIRED if not values[name][first]]
            raise ReleaseError(f"candidate {batch[first][0].decode()} is retained but lacks {missing}")
        provenances = [self._provenance(fields) for fields in columns[len(COLUMNS)]]
        unjudged = next((index for index, p in enumerate(provenances) if p.judge_tool is None), None)
        if unjudged is not None:
            raise ReleaseError(never_judged(batch[unjudged][0].decode()))
        hashes = [hashlib.sha256(code).hexdigest() for code in values["verified_code"]]  # as rows.proof_hash()
        self._jsonl.write(
            b"".join(
                b'%s,%s%s",%s}\n' % (line[:-1], provenance.jsonl_head, digest.encode(), self._line_tail)
                for line, provenance, digest in zip(columns[len(COLUMNS) + 1], provenances, hashes, strict=True)
            )
        )
        count = len(batch)
        arrays: dict[str, Any] = {"schema_version": pyarrow.array([RECORD_SCHEMA_VERSION] * count, pyarrow.int64())}
        for name in names:
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
        self.written.answer_forms.update(form.decode() if form else None for form in values["answer_type"])
        self.written.judges.update(
            (p.judge_toolchain, p.judge_tool, p.judge_revision, p.judge_confinement, p.verified_by_real_judge)
            for p in provenances
        )
        self.written.num_bytes += table.nbytes
        self._sources.update(values["source_dataset"])

    def _provenance(self, fields: str) -> RowProvenance:
        """:func:`repro.release.rows.row_provenance`, once per distinct ``fields`` text."""
        known = self._provenances.get(fields)
        if known is None:
            known = self._provenances[fields] = row_provenance(json.loads(fields), demonstration=self.demonstration)
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
    include_flagged: bool = False,
) -> ReleaseSummary:
    """Write the retained instances; nothing at all when none is releasable (the summary says so).

    A statement our Lean checks neither found vacuous nor showed satisfiable (``flagged``, or ``undecided``
    when Lean gave no verdict) may hold for no value at all: its rows are withheld unless
    ``include_flagged`` (the card records which).

    A non-empty ``out_dir`` is refused unless ``overwrite``: a second release into the same folder
    would silently replace the first, and a mistyped ``--out`` would write into an unrelated folder.
    """
    config_path = Path(run_dir) / "config.yaml"
    config = RunConfig.model_validate(yaml.safe_load(config_path.read_text())) if config_path.is_file() else None
    out = Path(out_dir)
    _refuse_occupied(out, overwrite=overwrite)
    demonstration = bool(config and config.demonstration)
    writer = _ReleaseWriter(out, utc_now(), demonstration=demonstration, verified_only=not allow_unverified)
    parameters = {
        "header": config.lean.header if config else "",
        "schema_version": RECORD_SCHEMA_VERSION,
        "real_run": not demonstration,  # a demonstration's rows are all unverified
    }
    store = RunReader(run_dir)
    try:
        unjudged = store.retained_unjudged()
        if unjudged is not None:
            raise ReleaseError(never_judged(unjudged))
        retained = store.retained_count()
        verified_only = () if allow_unverified else (parameter("real_run"), REAL_LEAN, REAL_JUDGE)
        flagged = store.retained_count((*verified_only, FLAGGED), parameters)
        unchecked = store.retained_count((*verified_only, UNCHECKED), parameters)
        allowed = CHECKED if include_flagged else SATISFIABLE
        eligible = store.retained_count((*verified_only, allowed), parameters)
        released_if = (*verified_only, allowed, *ANSWER_CONFIRMED)
        unconfirmed = eligible - store.retained_count(released_if, parameters)
        pages = store.retained_rows(
            [column.field for column in COLUMNS],
            packed=PROVENANCE_SOURCES,
            json_members=_JSON_MEMBERS,
            only_if=released_if,
            parameters=parameters,
        )
        with closing(pages):  # the cursor closes before the store does, however the loop ends
            for page in pages:
                writer.write(page)
        if not allow_unverified or writer.written.rows != retained:
            # every retained row was released, so every one had its problem; else check (before keeping anything)
            store.check_retained_problems()
        outcomes = store.outcome_counts()
        unfinished = outcomes.get(None, 0)
        answers = answer_metrics(store, sum(outcomes.values()) - unfinished)
        overruled = _overruled(store)
        skip_reasons = json.loads(store.get_meta("skip_reasons") or "[]")
        written = writer.written
        withheld_flagged = 0 if include_flagged else flagged
        withheld = 0 if allow_unverified else retained - written.rows - withheld_flagged - unchecked - unconfirmed
        if not written.rows:
            return ReleaseSummary(
                written=0,
                unverified=0,
                withheld_unverified=withheld,
                out_dir=out,
                unfinished_problems=unfinished,
                withheld_flagged=withheld_flagged,
                withheld_unchecked=unchecked,
                withheld_unconfirmed=unconfirmed,
                withheld_outdated_judge=writer.withheld_outdated,
            )
        terms = combined_terms(sorted(writer.sources()), config, license, attribution)
        writer.finish()
    except BaseException:
        writer.abandon()
        raise
    finally:
        store.close()
    text = card(
        written.rows,
        written.unverified,
        config,
        written.num_bytes,
        terms,
        skip_reasons,
        unfinished,
        statement_checks=written.statement_checks,
        proof_levers=written.proof_levers,
        flagged=(withheld_flagged, include_flagged),
        withheld=(unchecked, unconfirmed),
        answers=(written.answer_forms, answers),
        judges=written.judges,
        overruled=overruled,
    )
    (out / "README.md").write_text(text, encoding="utf-8")
    from repro.release.exports import write_release_exports  # inspect_ai and lm-eval tasks beside the data

    write_release_exports(out)
    write_manifest(out)
    return ReleaseSummary(
        written=written.rows,
        unverified=written.unverified,
        withheld_unverified=withheld,
        out_dir=out,
        unfinished_problems=unfinished,
        files=(*release_files(out), MANIFEST),
        withheld_flagged=withheld_flagged,
        withheld_unchecked=unchecked,
        withheld_unconfirmed=unconfirmed,
        withheld_outdated_judge=writer.withheld_outdated,
    )


def _overruled(store: RunReader) -> int:
    """Texts the run's screen passed and its kernel judge rejected (the judge won), from the running counts."""
    return sum(
        count
        for stage, _, reason, count in store.stage_status_counts()
        if stage == "judge" and reason == "judge_rejected"
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
