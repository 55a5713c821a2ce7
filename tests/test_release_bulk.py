"""The release's bulk write path (one SQL pass, pyarrow, no `datasets`) against the per-row reference.

`write_release` no longer builds a record per row; these tests hold it to what
`instance_from_candidate` (the reference) and `datasets` itself would have written.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import datasets
import pyarrow.parquet as parquet
import pytest

from repro import __version__
from repro.config import RunConfig, dump_config
from repro.judge.kernel import JUDGE_CHECKS
from repro.natural import natural_key
from repro.records import Candidate, CandidateStatus, SourceProblem
from repro.release import ReleaseError, instance_from_candidate, read_release, write_release
from repro.release.rows import ROW_FIELDS, arrow_schema, feature_dict, feature_yaml
from repro.stages.answer import ANSWER_EVIDENCE
from repro.store import RunStore, StoreError


def _datasets_features() -> datasets.Features:
    text = datasets.Value("string")
    return datasets.Features(
        {
            "schema_version": datasets.Value("int64"),
            **{
                name: text
                for name in (
                    "instance_id",
                    "source_dataset",
                    "source_id",
                    "level",
                    "type",
                    "original_question",
                    "original_answer",
                    "rewritten_question",
                    "new_answer",
                    "answer_type",
                    "answer_lean_type",
                    "answer_lean",
                    "answer_variables",
                    "lean_statement",
                    "lean_proof",
                    "verified_code",
                    "lean_header",
                    "theorem_name",
                    "screener_answer",
                )
            },
            "answer_disagrees_with_screener": datasets.Value("bool"),
            "unverified": datasets.Value("bool"),
            "provenance": {
                "schema_version": datasets.Value("int64"),
                "models": [{"schema_version": datasets.Value("int64"), "stage": text, "model": text, "backend": text}],
                "lean_toolchain": text,
                "mathlib_revision": text,
                "verifier_backend": text,
                "verified_by_real_lean": datasets.Value("bool"),
                "statement_check": text,
                "proof_lever": text,
                "judge_tool": text,
                "judge_revision": text,
                "judge_toolchain": text,
                "judge_checks": datasets.Value("int64"),
                "judge_confinement": text,
                "verified_by_real_judge": datasets.Value("bool"),
                "proof_hash": text,
                "repro_version": text,
                "released_at": text,
            },
        }
    )


def test_the_declared_schema_is_what_datasets_writes_and_describes() -> None:
    features = _datasets_features()
    assert feature_dict(ROW_FIELDS) == features.to_dict()
    assert feature_yaml(ROW_FIELDS) == features._to_yaml_list()
    assert arrow_schema().equals(features.arrow_schema, check_metadata=True)


def _candidate(problem_id: str, index: int, **changes: object) -> Candidate:
    statement = f"theorem t{index} (h₀ : x = {index}) : x * 2 = {2 * index} := by"
    fields: dict[str, object] = {
        "candidate_id": f"{problem_id}#r{index}",
        "problem_id": problem_id,
        "rewrite_index": index,
        "status": CandidateStatus.retained,
        "rewritten_question": f'Ein Zug fährt {index} km — wie weit? "quoted" \\ back\tslash',
        "new_answer": str(2 * index),
        "lean_statement": statement,
        "theorem_name": f"t{index}",
        "lean_proof": "  subst h₀\n  norm_num",
        "verified_code": f"{statement}\n  subst h₀\n  norm_num\n",
        "verifier_backend": "lean-interact-repl",
        "verifier_is_real_lean": True,
        "lean_toolchain": "leanprover/lean4:v4.15.0",
        "mathlib_revision": "v4.15.0",
        "judge_tool": "SafeVerify",
        "judge_revision": "577e95319a2bb1bb8df541f0c645811f6577a0ae",
        "judge_toolchain": "v4.15.0",
        "judge_checks": JUDGE_CHECKS,
        "judge_real": True,
        "judge_confinement": "bubblewrap: network off, writes confined",
        "models": {"rewrite": "gpt-4o-mini", "prove": "Goedel-Prover-V2-32B", "align": "qwen"},
        "backends": {"prove": "openai:http://127.0.0.1:8001/v1", "rewrite": "openai:https://api"},
    }
    fields.update(changes)
    # what today's pipeline stores with a retained row (red2 R2-2, R2-9), unless the test says otherwise
    fields.setdefault("statement_check", "satisfiable")
    fields.setdefault("answer_confirmed", fields["new_answer"])
    fields.setdefault("answer_evidence", ANSWER_EVIDENCE)
    return Candidate.model_validate(fields)


def _mixed_run(run_dir: Path, *, demonstration: bool = False) -> None:
    """Problems drawn out of id order, several candidates each, nulls, non-ASCII, missing backends."""
    config = RunConfig.model_validate({"demonstration": demonstration}) if demonstration else RunConfig()
    run_dir.mkdir(parents=True)
    (run_dir / "config.yaml").write_text(dump_config(config), encoding="utf-8")
    with RunStore(run_dir) as store:
        store.add_problems(
            [
                SourceProblem(problem_id="gsm8k:9", source="gsm8k", source_id="9", question="Zweite? ℕ", answer="2"),
                SourceProblem(
                    problem_id="gsm8k:1", source="gsm8k", source_id="1", question="First?", answer="1", level="Level 3"
                ),
                SourceProblem(problem_id="gsm8k:5", source="gsm8k", source_id="5", question="Third?", answer="3"),
            ]
        )
        store.save_candidate(
            _candidate(
                "gsm8k:9", 2, screener_answer="4", answer_disagrees_with_screener=True, statement_check="satisfiable"
            )
        )
        store.save_candidate(
            _candidate("gsm8k:9", 1, verifier_is_real_lean=False, theorem_name=None, judge_real=False, judge_tool="x")
        )
        store.save_candidate(_candidate("gsm8k:1", 3, backends={}, mathlib_revision=None, statement_check="flagged"))
        store.save_candidate(_candidate("gsm8k:1", 4, status=CandidateStatus.rejected))
        store.save_candidate(_candidate("gsm8k:5", 5, models={}, answer_disagrees_with_screener=None))


def _reference_rows(run_dir: Path, *, header: str, demonstration: bool = False) -> list[dict[str, object]]:
    with RunStore(run_dir, create=False) as store:
        retained = sorted(
            store.candidates(CandidateStatus.retained),
            key=lambda c: (natural_key(c.problem_id), c.problem_id, natural_key(c.candidate_id), c.candidate_id),
        )
        return [
            instance_from_candidate(
                candidate, store.problem(candidate.problem_id), header, released_at="then", demonstration=demonstration
            ).model_dump(mode="json")
            for candidate in retained
        ]


def _released_rows(out: Path) -> list[dict[str, object]]:
    rows = [instance.model_dump(mode="json") for instance in read_release(out)]
    for row in rows:
        row["provenance"]["released_at"] = "then"  # type: ignore[index]
    return rows


@pytest.mark.parametrize("demonstration", [False, True])
def test_bulk_rows_are_the_reference_rows_in_natural_order(tmp_path: Path, demonstration: bool) -> None:
    _mixed_run(tmp_path / "run", demonstration=demonstration)
    summary = write_release(tmp_path / "run", tmp_path / "out", allow_unverified=True, include_flagged=True)
    header = RunConfig().lean.header
    expected = _reference_rows(tmp_path / "run", header=header, demonstration=demonstration)
    assert [row["instance_id"] for row in expected] == [
        "gsm8k:1#r3",
        "gsm8k:5#r5",
        "gsm8k:9#r1",
        "gsm8k:9#r2",
    ], "natural order of problem id, then of candidate id, whatever the draw order"
    released = _released_rows(tmp_path / "out")
    assert released == expected
    parquet_rows = parquet.read_table(tmp_path / "out" / "data" / "test.parquet").to_pylist()
    for row in parquet_rows:
        row["provenance"]["released_at"] = "then"
    assert parquet_rows == expected
    assert summary.written == 4 and summary.unverified == (4 if demonstration else 1)
    by_id = {row["instance_id"]: row for row in released}
    assert [model["backend"] for model in by_id["gsm8k:1#r3"]["provenance"]["models"]] == ["unknown"] * 3  # type: ignore[index]
    assert by_id["gsm8k:5#r5"]["provenance"]["models"] == []  # type: ignore[index]


def test_a_released_row_is_what_its_records_say(tmp_path: Path) -> None:
    """An oracle apart from the code's column table: one row spelled out field by field."""
    _mixed_run(tmp_path / "run")
    write_release(tmp_path / "run", tmp_path / "out", allow_unverified=True, include_flagged=True)
    row = next(row for row in _released_rows(tmp_path / "out") if row["instance_id"] == "gsm8k:9#r2")
    statement = "theorem t2 (h₀ : x = 2) : x * 2 = 4 := by"
    assert row == {
        "schema_version": 1,
        "instance_id": "gsm8k:9#r2",
        "source_dataset": "gsm8k",
        "source_id": "9",
        "level": None,
        "type": None,
        "original_question": "Zweite? ℕ",
        "original_answer": "2",
        "rewritten_question": 'Ein Zug fährt 2 km — wie weit? "quoted" \\ back\tslash',
        "new_answer": "4",
        "answer_type": None,
        "answer_lean_type": None,
        "answer_lean": None,
        "answer_variables": None,
        "lean_statement": statement,
        "lean_proof": "  subst h₀\n  norm_num",
        "verified_code": f"{statement}\n  subst h₀\n  norm_num\n",
        "lean_header": RunConfig().lean.header,
        "theorem_name": "t2",
        "screener_answer": "4",
        "answer_disagrees_with_screener": True,
        "unverified": False,
        "provenance": {
            "schema_version": 1,
            "models": [
                {"schema_version": 1, "stage": "align", "model": "qwen", "backend": "unknown"},
                {
                    "schema_version": 1,
                    "stage": "prove",
                    "model": "Goedel-Prover-V2-32B",
                    "backend": "openai:http://127.0.0.1:8001/v1",
                },
                {"schema_version": 1, "stage": "rewrite", "model": "gpt-4o-mini", "backend": "openai:https://api"},
            ],
            "lean_toolchain": "leanprover/lean4:v4.15.0",
            "mathlib_revision": "v4.15.0",
            "verifier_backend": "lean-interact-repl",
            "verified_by_real_lean": True,
            "statement_check": "satisfiable",
            "proof_lever": "none",
            "judge_tool": "SafeVerify",
            "judge_revision": "577e95319a2bb1bb8df541f0c645811f6577a0ae",
            "judge_toolchain": "v4.15.0",
            "judge_checks": JUDGE_CHECKS,
            "judge_confinement": "bubblewrap: network off, writes confined",
            "verified_by_real_judge": True,
            "proof_hash": hashlib.sha256(f"{statement}\n  subst h₀\n  norm_num\n".encode()).hexdigest(),
            "repro_version": __version__,
            "released_at": "then",
        },
    }


def test_withheld_rows_are_left_out_and_counted(tmp_path: Path) -> None:
    """Unverified rows and, by default, rows whose statement is flagged (issue 29) are withheld, and counted."""
    _mixed_run(tmp_path / "run")
    summary = write_release(tmp_path / "run", tmp_path / "out")
    assert (summary.written, summary.withheld_unverified, summary.withheld_flagged, summary.unverified) == (2, 1, 1, 0)
    reference = _reference_rows(tmp_path / "run", header=RunConfig().lean.header)
    expected = [row for row in reference if not row["unverified"] and row["provenance"]["statement_check"] != "flagged"]
    assert _released_rows(tmp_path / "out") == expected
    card = (tmp_path / "out" / "README.md").read_text()
    assert "1 verified rows whose statement was neither found vacuous nor shown satisfiable" in card
    summary = write_release(tmp_path / "run", tmp_path / "all", include_flagged=True)
    assert (summary.written, summary.withheld_unverified, summary.withheld_flagged) == (3, 1, 0)
    assert _released_rows(tmp_path / "all") == [row for row in reference if not row["unverified"]]
    assert "Released with `--include-flagged`" in (tmp_path / "all" / "README.md").read_text()


def test_a_row_a_stand_in_judge_passed_is_unverified_and_one_no_judge_passed_is_never_released(
    tmp_path: Path,
) -> None:
    _mixed_run(tmp_path / "run")
    with RunStore(tmp_path / "run") as store:  # real Lean screened it; only a stand-in judge passed it
        store.save_candidate(_candidate("gsm8k:5", 5, judge_tool="stand-in judge", judge_real=False))
    summary = write_release(tmp_path / "run", tmp_path / "strict", include_flagged=True)  # gsm8k:1#r3 is flagged
    assert (summary.written, summary.withheld_unverified) == (2, 2)
    assert "gsm8k:5#r5" not in {row["instance_id"] for row in _released_rows(tmp_path / "strict")}
    write_release(tmp_path / "run", tmp_path / "loose", allow_unverified=True)
    row = next(row for row in _released_rows(tmp_path / "loose") if row["instance_id"] == "gsm8k:5#r5")
    assert row["unverified"] and row["provenance"]["verified_by_real_lean"]  # type: ignore[index]
    assert not row["provenance"]["verified_by_real_judge"]  # type: ignore[index]
    card = (tmp_path / "loose" / "README.md").read_text(encoding="utf-8")
    assert "## Kernel judge" in card and "stand-in judge at 577e95319a2b" in card
    assert "(a stand-in, not Lean's kernel: these rows verify nothing)" in card
    with RunStore(tmp_path / "run") as store:  # retained, but no judge passed it (what a forged store holds)
        store.save_candidate(_candidate("gsm8k:5", 5, judge_tool=None, judge_real=False))
    for out, unverified in ((tmp_path / "never", False), (tmp_path / "never-loose", True)):
        with pytest.raises(ReleaseError, match="no kernel judge passed it"):
            write_release(tmp_path / "run", out, allow_unverified=unverified)
        assert not out.exists(), "nothing is written"


def test_a_failed_release_leaves_no_files(tmp_path: Path) -> None:
    _mixed_run(tmp_path / "run")
    with RunStore(tmp_path / "run") as store:
        store.add_problems([SourceProblem(problem_id="own:1", source="own", source_id="1", question="Q", answer="1")])
        store.save_candidate(_candidate("own:1", 7))
    with pytest.raises(ReleaseError, match="license and attribution"):
        write_release(tmp_path / "run", tmp_path / "out")
    assert not (tmp_path / "out").exists(), "an unknown license stops the release before anything is kept"
    (tmp_path / "existing").mkdir()
    with RunStore(tmp_path / "run") as store:
        store.save_candidate(_candidate("own:1", 7, lean_proof=""))
    with pytest.raises(ReleaseError, match=r"own:1#r7 is retained but lacks \['lean_proof'\]"):
        write_release(tmp_path / "run", tmp_path / "existing", license="mit", attribution="me")
    assert list((tmp_path / "existing").iterdir()) == [], "a directory that existed is left as it was"


def test_the_jsonl_lines_are_plain_json_objects(tmp_path: Path) -> None:
    _mixed_run(tmp_path / "run")
    write_release(tmp_path / "run", tmp_path / "out", allow_unverified=True)
    lines = (tmp_path / "out" / "data" / "test.jsonl").read_text(encoding="utf-8").splitlines()
    rows = [json.loads(line) for line in lines]
    assert all(isinstance(row, dict) and list(row)[0] == "schema_version" for row in rows)
    assert "fährt" in lines[0] and "\\u" not in lines[0], "non-ASCII text is written as UTF-8, not escaped"


@pytest.mark.parametrize("allow_unverified", [False, True])
def test_a_retained_candidate_without_its_problem_is_an_error(tmp_path: Path, allow_unverified: bool) -> None:
    _mixed_run(tmp_path / "run")
    with RunStore(tmp_path / "run") as store:
        store.save_candidate(_candidate("gsm8k:404", 8))
    with pytest.raises(StoreError, match="gsm8k:404"):
        write_release(tmp_path / "run", tmp_path / "out", allow_unverified=allow_unverified)
    assert not (tmp_path / "out").exists()
