"""Dataset export: JSONL and Parquet plus a dataset card that ``datasets.load_dataset(DIR)`` reads.

An instance whose proof was not checked by a real Lean backend is never written unless the caller
asks for it (``allow_unverified``), and then every such row says ``unverified: true``.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from repro import __version__
from repro.config import LeanSettings, RunConfig
from repro.records import Candidate, CandidateStatus, Provenance, ReleasedInstance, StageModel, utc_now
from repro.store import RunStore

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
    candidate: Candidate, store: RunStore, header: str, *, released_at: str, demonstration: bool = False
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


def _features() -> Any:
    import datasets

    text = datasets.Value("string")
    return datasets.Features(
        {
            "schema_version": datasets.Value("int64"),
            "instance_id": text,
            "source_dataset": text,
            "source_id": text,
            "level": text,
            "type": text,
            "original_question": text,
            "original_answer": text,
            "rewritten_question": text,
            "new_answer": text,
            "lean_statement": text,
            "lean_proof": text,
            "verified_code": text,
            "lean_header": text,
            "theorem_name": text,
            "screener_answer": text,
            "answer_disagrees_with_screener": datasets.Value("bool"),
            "unverified": datasets.Value("bool"),
            "provenance": {
                "schema_version": datasets.Value("int64"),
                "models": [{"schema_version": datasets.Value("int64"), "stage": text, "model": text, "backend": text}],
                "lean_toolchain": text,
                "mathlib_revision": text,
                "verifier_backend": text,
                "verified_by_real_lean": datasets.Value("bool"),
                "proof_hash": text,
                "repro_version": text,
                "released_at": text,
            },
        }
    )


def _card(
    features: Any,
    rows: int,
    unverified: int,
    config: RunConfig | None,
    num_bytes: int,
    terms: SourceLicense,
    skip_reasons: list[str],
) -> str:
    front = {
        "license": terms.license,
        "pretty_name": f"repro rewritten benchmark ({config.name if config else 'run'})",
        "task_categories": ["question-answering"],
        "tags": ["math", "lean4", "formal-verification", "contamination-resistant"],
        "configs": [{"config_name": "default", "data_files": [{"split": SPLIT, "path": f"data/{SPLIT}.parquet"}]}],
        "dataset_info": {
            "features": features._to_yaml_list(),
            "splits": [{"name": SPLIT, "num_bytes": num_bytes, "num_examples": rows}],
        },
    }
    warning = ""
    if unverified:
        warning = (
            f"\n> **Warning:** {unverified} of {rows} rows were NOT checked by a real Lean backend "
            "(`unverified: true`). Do not use them as verified references.\n"
        )
    source = f"\n## Source\n\n{terms.attribution}. License: {terms.license}.\n"
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


def write_release(
    run_dir: str | Path,
    out_dir: str | Path,
    *,
    allow_unverified: bool = False,
    license: str | None = None,
    attribution: str | None = None,
) -> ReleaseSummary:
    """Write the retained instances; nothing at all when none is releasable (the summary says so)."""
    import datasets

    datasets.disable_progress_bars()
    store = RunStore(run_dir, create=False)
    try:
        config_path = Path(run_dir) / "config.yaml"
        config = RunConfig.model_validate(yaml.safe_load(config_path.read_text())) if config_path.is_file() else None
        header = config.lean.header if config else ""
        released_at = utc_now()
        order = store.draw_orders()
        retained = sorted(
            store.candidates(CandidateStatus.retained), key=lambda c: (order.get(c.problem_id, 0), c.candidate_id)
        )
        instances = [
            instance_from_candidate(
                c, store, header, released_at=released_at, demonstration=bool(config and config.demonstration)
            )
            for c in retained
        ]
        unfinished = sum(1 for outcome in store.problem_outcomes().values() if outcome is None)
        skip_reasons = json.loads(store.get_meta("skip_reasons") or "[]")
    finally:
        store.close()
    withheld = sum(1 for instance in instances if instance.unverified) if not allow_unverified else 0
    if not allow_unverified:
        instances = [instance for instance in instances if not instance.unverified]
    out = Path(out_dir)
    if not instances:
        return ReleaseSummary(
            written=0, unverified=0, withheld_unverified=withheld, out_dir=out, unfinished_problems=unfinished
        )
    terms = _combined_terms(sorted({i.source_dataset for i in instances}), config, license, attribution)
    (out / "data").mkdir(parents=True, exist_ok=True)
    rows = [instance.model_dump(mode="json") for instance in instances]
    features = _features()
    dataset = (
        datasets.Dataset.from_list(rows, features=features)
        if rows
        else datasets.Dataset.from_dict({name: [] for name in features}, features=features)
    )
    num_bytes = int(dataset.data.nbytes)
    dataset.to_parquet(str(out / "data" / f"{SPLIT}.parquet"))
    with (out / "data" / f"{SPLIT}.jsonl").open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    unverified = sum(1 for instance in instances if instance.unverified)
    card = _card(features, len(rows), unverified, config, num_bytes, terms, skip_reasons)
    (out / "README.md").write_text(card, encoding="utf-8")
    from repro.release_exports import write_release_exports  # inspect_ai and lm-eval tasks beside the data

    write_release_exports(out)
    manifest = "".join(f"{_sha256(out / name)}  {name}\n" for name in release_files(out))
    (out / MANIFEST).write_text(manifest, encoding="utf-8")
    return ReleaseSummary(
        written=len(rows),
        unverified=unverified,
        withheld_unverified=withheld,
        out_dir=out,
        unfinished_problems=unfinished,
    )


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


def answer_is_grounded(instance: ReleasedInstance) -> bool:
    """The released answer is the one read from the verified statement (or found verbatim in the code)."""
    from repro.stages.answer import deterministic_answer, grounded, literal_text

    literal = deterministic_answer(instance.lean_statement)
    if literal is not None:
        return literal_text(literal) == instance.new_answer
    return grounded(instance.new_answer, instance.verified_code)


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


async def reverify_release(out_dir: str | Path, lean: LeanSettings) -> list[ReverifyResult]:
    """Re-check every released proof from the release's own files, through the same soundness gate.

    An instance passes only if the gate verifies it again and the code Lean checked is byte-for-byte
    the ``verified_code`` that was released. The rows checked are the Parquet rows users load; first
    the files must match their manifest and each other (else :class:`ReleaseError`).
    """
    from repro.lean import build_verifier, verify_proof

    problems = check_release_files(out_dir)
    if problems:
        raise ReleaseError(f"{out_dir}: the release's files are not what was released:\n  " + "\n  ".join(problems))
    instances = read_parquet_release(out_dir)
    verifier = build_verifier(lean)
    results = []
    try:
        for instance in instances:
            # the header comes from the trusted settings, never from the release: a rewritten row's
            # header could declare an axiom or a macro that spoofs ``#print axioms``
            verdict = await verify_proof(
                instance.lean_statement,
                instance.lean_proof,
                verifier,
                header=lean.header,
                allow_native_decide=lean.allow_native_decide,
            )
            reasons = [reason.value for reason in verdict.reasons]
            same_header = " ".join(instance.lean_header.split()) == " ".join(lean.header.split())
            if not same_header:
                reasons.append("the released lean_header differs from the trusted header (--config lean.header)")
            same = verdict.checked_code == instance.verified_code
            if not same:
                reasons.append("checked code differs from the released verified_code")
            answer_grounded = answer_is_grounded(instance)
            if not answer_grounded:
                reasons.append(f"new_answer {instance.new_answer!r} is not the answer read from the verified statement")
            results.append(
                ReverifyResult(
                    instance_id=instance.instance_id,
                    passed_gate=verdict.verified and same and same_header,
                    real_lean=bool(verdict.lean and verdict.lean.real_lean),
                    reasons=reasons,
                    answer_grounded=answer_grounded,
                )
            )
    finally:
        await verifier.close()
    return results
