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


@dataclass
class ReleaseSummary:
    written: int
    unverified: int
    withheld_unverified: int
    out_dir: Path


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


def _card(features: Any, rows: int, unverified: int, config: RunConfig | None, num_bytes: int) -> str:
    front = {
        "license": "mit",
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
    return (
        "---\n" + yaml.safe_dump(front, sort_keys=False, allow_unicode=True) + "---\n\n"
        f"# repro rewritten benchmark\n{warning}\n"
        "Each row is a rewritten problem whose reference answer (`new_answer`) was read from a Lean 4 proof\n"
        "that passed repro's soundness gate. `verified_code` is exactly what Lean checked after `lean_header`;\n"
        "`provenance` records models per stage, the Lean toolchain, the Mathlib revision, the verifier and the\n"
        f"proof hash. Files: `data/{SPLIT}.parquet` and `data/{SPLIT}.jsonl` (same rows).\n\n"
        "Re-verify with `repro reverify DIR`.\n"
    )


def write_release(run_dir: str | Path, out_dir: str | Path, *, allow_unverified: bool = False) -> ReleaseSummary:
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
    finally:
        store.close()
    withheld = sum(1 for instance in instances if instance.unverified) if not allow_unverified else 0
    if not allow_unverified:
        instances = [instance for instance in instances if not instance.unverified]
    out = Path(out_dir)
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
    (out / "README.md").write_text(_card(features, len(rows), unverified, config, num_bytes), encoding="utf-8")
    return ReleaseSummary(written=len(rows), unverified=unverified, withheld_unverified=withheld, out_dir=out)


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


async def reverify_release(out_dir: str | Path, lean: LeanSettings) -> list[ReverifyResult]:
    """Re-check every released proof from the release's own files, through the same soundness gate.

    An instance passes only if the gate verifies it again and the code Lean checked is byte-for-byte
    the ``verified_code`` that was released.
    """
    from repro.lean import build_verifier, verify_proof

    instances = read_release(out_dir)
    verifier = build_verifier(lean)
    results = []
    try:
        for instance in instances:
            verdict = await verify_proof(
                instance.lean_statement,
                instance.lean_proof,
                verifier,
                header=instance.lean_header,
                allow_native_decide=lean.allow_native_decide,
            )
            reasons = [reason.value for reason in verdict.reasons]
            same = verdict.checked_code == instance.verified_code
            if not same:
                reasons.append("checked code differs from the released verified_code")
            results.append(
                ReverifyResult(
                    instance_id=instance.instance_id,
                    passed_gate=verdict.verified and same,
                    real_lean=bool(verdict.lean and verdict.lean.real_lean),
                    reasons=reasons,
                )
            )
    finally:
        await verifier.close()
    return results
