"""A release's files: which the manifest covers, checking them against it and each other, reading rows.

``datasets.load_dataset`` reads the Parquet file, so that is the file whose rows count; the JSONL twin
must match it row by row, and ``SHA256SUMS`` (``sha256sum -c`` reads it) must match every file.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from repro.records import ReleasedInstance
from repro.release.errors import ReleaseError
from repro.release.rows import SPLIT

MANIFEST = "SHA256SUMS"


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def release_files(out: Path) -> list[str]:
    """Every file the manifest covers: the data, the card and the exported evaluation tasks."""
    from repro.release.exports import exported_file_names

    return [f"data/{SPLIT}.parquet", f"data/{SPLIT}.jsonl", "README.md", *exported_file_names()]


def write_manifest(out: Path) -> None:
    manifest = "".join(f"{sha256(out / name)}  {name}\n" for name in release_files(out))
    (out / MANIFEST).write_text(manifest, encoding="utf-8")


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
            elif sha256(path) != listed[name]:
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
