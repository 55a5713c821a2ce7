from __future__ import annotations

import asyncio
import json
from pathlib import Path

import datasets
import pytest
import yaml

from repro.cli import main
from repro.judge.kernel import JUDGE_CHECKS
from repro.records import Candidate, CandidateStatus, SourceProblem
from repro.release import ReleaseError, read_release, reverify_release, write_release
from repro.stages.answer import ANSWER_EVIDENCE
from repro.store import RunStore
from tests.doubles.fake_lean import fake_lean_section, fake_lean_settings
from tests.doubles.judge import STAND_IN_CONFIG, StandInJudge


def stand_in_config(directory: Path) -> str:
    """A config whose judge is the stand-in (tests/doubles/judge.py) and whose Lean is the fake REPL: what reverify
    judges again with."""
    path = directory / "stand-in-judge.yaml"
    path.write_text(yaml.safe_dump({"judge": STAND_IN_CONFIG, "lean": fake_lean_section()}))
    return str(path)


def synthetic_run(run_dir: Path, *, real_lean: bool) -> None:
    with RunStore(run_dir) as store:
        store.add_problems(
            [
                SourceProblem(
                    problem_id="math:7",
                    source="math",
                    source_id="7",
                    question="What is $6 \\cdot 50$?",
                    answer="300",
                    solution="$\\boxed{300}$",
                    level="Level 2",
                    type="Prealgebra",
                ),
                SourceProblem(problem_id="gsm8k:1", source="gsm8k", source_id="1", question="Q?", answer="5"),
            ]
        )
        # closed computations: a bare `(300 : ℕ) = 300` is a constant equation and gives no answer (A4)
        rows = (("math:7", "300", "(6 : ℕ) * 50 = 300"), ("gsm8k:1", "3 / 4", "(3 : ℚ) / 2 / 2 = (3 : ℚ) / 4"))
        for problem_id, answer, equation in rows:
            statement = f"theorem t : {equation} := by sorry"
            proof = f"theorem t : {equation} := by\n  rfl"
            store.save_candidate(
                Candidate(
                    candidate_id=f"{problem_id}#r0",
                    problem_id=problem_id,
                    rewrite_index=0,
                    status=CandidateStatus.retained,
                    rewritten_question=f"Rewritten {problem_id}",
                    new_answer=answer,
                    # what today's pipeline stores with a retained row (red2 R2-2, R2-9)
                    statement_check="satisfiable",
                    answer_confirmed=answer,
                    answer_evidence=ANSWER_EVIDENCE,
                    lean_statement=statement,
                    theorem_name="t",
                    lean_proof=f"```lean4\n{proof}\n```",
                    verified_code=proof,
                    verifier_backend="lean-interact-repl",
                    verifier_is_real_lean=real_lean,
                    judge_tool="SafeVerify",
                    judge_revision="577e95319a2bb1bb8df541f0c645811f6577a0ae",
                    judge_toolchain="v4.15.0",
                    judge_checks=JUDGE_CHECKS,
                    judge_real=real_lean,
                    judge_confinement="bubblewrap",
                    lean_toolchain="leanprover/lean4:v4.15.0",
                    mathlib_revision="v4.15.0",
                    models={"prove": "Goedel-Prover-V2-32B", "rewrite": "gpt-4o-mini"},
                    backends={"prove": "openai:http://127.0.0.1:8001/v1", "rewrite": "openai:https://api"},
                )
            )
        store.save_candidate(
            Candidate(candidate_id="gsm8k:1#r1", problem_id="gsm8k:1", rewrite_index=1, status=CandidateStatus.rejected)
        )


def test_release_round_trips_through_datasets_load_dataset(tmp_path: Path) -> None:
    synthetic_run(tmp_path / "run", real_lean=True)
    summary = write_release(tmp_path / "run", tmp_path / "out")
    assert summary.written == 2 and summary.unverified == 0
    loaded = datasets.load_dataset(str(tmp_path / "out"), cache_dir=str(tmp_path / "cache"))
    assert list(loaded.keys()) == ["test"]
    rows = list(loaded["test"])
    by_id = {row["instance_id"]: row for row in rows}
    math_row = by_id["math:7#r0"]
    assert (math_row["original_question"], math_row["original_answer"]) == ("What is $6 \\cdot 50$?", "300")
    assert (math_row["level"], math_row["type"], math_row["source_dataset"]) == ("Level 2", "Prealgebra", "math")
    assert math_row["provenance"]["verified_by_real_lean"] is True
    assert {m["stage"]: m["model"] for m in math_row["provenance"]["models"]}["prove"] == "Goedel-Prover-V2-32B"
    assert math_row["provenance"]["lean_toolchain"] == "leanprover/lean4:v4.15.0"
    assert len(math_row["provenance"]["proof_hash"]) == 64
    # every field survives: the JSONL twin and the Parquet rows agree exactly
    jsonl = {instance.instance_id: instance.model_dump(mode="json") for instance in read_release(tmp_path / "out")}
    assert jsonl == by_id
    card = (tmp_path / "out" / "README.md").read_text()
    assert card.startswith("---\nlicense: mit") and "dataset_info:" in card and "splits:" in card


def test_unverified_rows_are_withheld_or_marked(tmp_path: Path) -> None:
    synthetic_run(tmp_path / "run", real_lean=False)
    strict = write_release(tmp_path / "run", tmp_path / "strict")
    assert (strict.written, strict.withheld_unverified) == (0, 2)
    assert not (tmp_path / "strict").exists(), "nothing releasable: nothing is written"
    summary = write_release(tmp_path / "run", tmp_path / "loose", allow_unverified=True)
    assert summary.written == summary.unverified == 2
    rows = list(datasets.load_dataset(str(tmp_path / "loose"), cache_dir=str(tmp_path / "cache"))["test"])
    assert all(row["unverified"] and not row["provenance"]["verified_by_real_lean"] for row in rows)
    assert "NOT checked by a real Lean backend" in (tmp_path / "loose" / "README.md").read_text()


def test_reading_a_non_release_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ReleaseError, match="no data/test.jsonl"):
        read_release(tmp_path)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "test.jsonl").write_text(json.dumps({"x": 1}) + "\n")
    with pytest.raises(ReleaseError, match="test.jsonl:1"):
        read_release(tmp_path)


def test_reverify_rechecks_released_proofs_and_catches_tampering(tmp_path: Path) -> None:
    synthetic_run(tmp_path / "run", real_lean=True)
    write_release(tmp_path / "run", tmp_path / "out")
    # the release was made under another header than the default trusted one: every row is refused (1);
    # a release whose rows all pass the gate on the fake backend exits 4 (tests/test_cli_operator.py)
    assert main(["reverify", str(tmp_path / "out"), "--config", stand_in_config(tmp_path)]) == 1
    results = asyncio.run(reverify_release(tmp_path / "out", fake_lean_settings(workers=1, header=""), StandInJudge()))
    assert [(r.passed_gate, r.answer_grounded) for r in results] == [(True, True), (True, True)]
    # a self-consistent release (files match their manifest) whose proof is bad: the gate catches it
    with RunStore(tmp_path / "run") as store:
        candidate = store.candidates(CandidateStatus.retained)[1]
        assert candidate.problem_id == "math:7"
        candidate.lean_proof = (candidate.lean_proof or "").replace("rfl", "sorry")
        store.save_candidate(candidate)
    write_release(tmp_path / "run", tmp_path / "bad")
    results = asyncio.run(reverify_release(tmp_path / "bad", fake_lean_settings(workers=1, header=""), StandInJudge()))
    # release order is natural id order: gsm8k:1#r0, then math:7#r0
    assert [r.passed_gate for r in results] == [True, False]
    assert "forbidden_construct" in results[1].reasons and not any(r.real_lean for r in results)


def test_reverify_checks_the_parquet_users_load_against_the_manifest_and_the_jsonl(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import pyarrow.parquet as parquet

    synthetic_run(tmp_path / "run", real_lean=True)
    write_release(tmp_path / "run", tmp_path / "out")
    manifest = (tmp_path / "out" / "SHA256SUMS").read_text()
    assert "data/test.parquet" in manifest and "data/test.jsonl" in manifest and "README.md" in manifest
    path = tmp_path / "out" / "data" / "test.parquet"
    table = parquet.read_table(path)
    rows = table.to_pylist()
    rows[0]["lean_proof"] = rows[0]["lean_proof"].replace("rfl", "sorry")
    parquet.write_table(type(table).from_pylist(rows, schema=table.schema), path)
    assert main(["reverify", str(tmp_path / "out"), "--config", stand_in_config(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert "data/test.parquet: SHA-256 differs" in error
    assert "row 1 (gsm8k:1#r0): Parquet and JSONL differ in lean_proof" in error  # natural order


def test_reverify_catches_a_changed_exported_evaluation_task(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The exported grader decides scores others publish: a changed copy must not pass as the release's own."""
    synthetic_run(tmp_path / "run", real_lean=True)
    write_release(tmp_path / "run", tmp_path / "out")
    assert "repro_grading.py" in (tmp_path / "out" / "SHA256SUMS").read_text()
    grader = tmp_path / "out" / "repro_grading.py"
    grader.write_text(grader.read_text() + "\ndef grade(*args, **kwargs):\n    return True\n")
    assert main(["reverify", str(tmp_path / "out"), "--config", stand_in_config(tmp_path)]) == 2
    assert "repro_grading.py: SHA-256 differs" in capsys.readouterr().err


def test_reverify_requires_the_answer_read_from_the_verified_statement(tmp_path: Path) -> None:
    synthetic_run(tmp_path / "run", real_lean=True)
    with RunStore(tmp_path / "run") as store:
        candidate = next(c for c in store.candidates(CandidateStatus.retained) if c.problem_id == "math:7")
        candidate.new_answer = "301"
        store.save_candidate(candidate)
    # an answer edited in the store has no evidence that the answer stage confirmed it: withheld (red2 R2-9)
    summary = write_release(tmp_path / "run", tmp_path / "edited")
    assert (summary.written, summary.withheld_unconfirmed) == (1, 1)
    assert (
        "1 retained rows whose `new_answer` has no stored evidence" in (tmp_path / "edited" / "README.md").read_text()
    )
    with RunStore(tmp_path / "run") as store:  # edited with its evidence too: reverify still catches it
        candidate = next(c for c in store.candidates(CandidateStatus.retained) if c.problem_id == "math:7")
        candidate.answer_confirmed = "301"
        store.save_candidate(candidate)
    write_release(tmp_path / "run", tmp_path / "out")
    results = asyncio.run(reverify_release(tmp_path / "out", fake_lean_settings(workers=1, header=""), StandInJudge()))
    assert [r.answer_grounded for r in results] == [True, False]  # gsm8k:1#r0, then math:7#r0
    assert "not the answer read from the verified statement" in results[1].reasons[-1]


def test_the_card_takes_license_and_attribution_from_the_source_and_flags_math(tmp_path: Path) -> None:
    synthetic_run(tmp_path / "run", real_lean=True)
    write_release(tmp_path / "run", tmp_path / "out")
    card = (tmp_path / "out" / "README.md").read_text()
    assert "Cobbe et al., 2021" in card and "Hendrycks et al., 2021" in card
    assert "redistribution of these problems is disputed" in card


def test_reverify_uses_the_trusted_header_not_the_one_in_the_release(tmp_path: Path) -> None:
    """Anyone who can rewrite the files can regenerate SHA256SUMS: a header declaring an axiom (or a macro
    that spoofs ``#print axioms``) in the released rows must not become the header Lean checks with."""
    import pyarrow.parquet as parquet

    from repro.release.files import MANIFEST, release_files
    from repro.release.files import sha256 as _sha256

    synthetic_run(tmp_path / "run", real_lean=True)
    out = tmp_path / "out"
    write_release(tmp_path / "run", out)
    evil = "import Mathlib\naxiom cheat {p : Prop} : p"
    table = parquet.read_table(out / "data" / "test.parquet")
    rows = [{**row, "lean_header": evil} for row in table.to_pylist()]
    parquet.write_table(type(table).from_pylist(rows, schema=table.schema), out / "data" / "test.parquet")
    jsonl = [json.loads(line) for line in (out / "data" / "test.jsonl").read_text().splitlines()]
    (out / "data" / "test.jsonl").write_text("".join(json.dumps({**row, "lean_header": evil}) + "\n" for row in jsonl))
    (out / MANIFEST).write_text("".join(f"{_sha256(out / name)}  {name}\n" for name in release_files(out)))
    results = asyncio.run(reverify_release(out, fake_lean_settings(workers=1, header=""), StandInJudge()))
    assert results and not any(result.passed_gate for result in results)
    assert all("lean_header differs from the trusted header" in " ".join(r.reasons) for r in results)


def _set_statement_checks(run_dir: Path, checks: dict[str, str | None], **changes: object) -> None:
    with RunStore(run_dir) as store:
        for candidate in store.candidates(CandidateStatus.retained):
            candidate.statement_check = checks[candidate.problem_id]
            for name, value in changes.get(candidate.problem_id, {}).items():  # type: ignore[attr-defined]
                setattr(candidate, name, value)
            store.save_candidate(candidate)


def test_released_rows_and_the_card_carry_the_statement_check(tmp_path: Path) -> None:
    import pyarrow.parquet as parquet

    synthetic_run(tmp_path / "run", real_lean=True)
    _set_statement_checks(tmp_path / "run", {"math:7": "satisfiable", "gsm8k:1": "flagged"})
    write_release(tmp_path / "run", tmp_path / "out", include_flagged=True)
    by_id = {row.instance_id: row.provenance.statement_check for row in read_release(tmp_path / "out")}
    assert by_id == {"math:7#r0": "satisfiable", "gsm8k:1#r0": "flagged"}
    parquet_rows = parquet.read_table(tmp_path / "out" / "data" / "test.parquet").to_pylist()
    assert {row["instance_id"]: row["provenance"]["statement_check"] for row in parquet_rows} == by_id
    card = (tmp_path / "out" / "README.md").read_text()
    assert "## Statement checks" in card
    assert "- satisfiable: 1 of 2 rows" in card and "- flagged: 1 of 2 rows" in card
    assert "- undecided: 0 of 2 rows" in card


def test_released_rows_and_the_card_say_which_proofs_a_lever_found(tmp_path: Path) -> None:
    """A salvaged proof is marked in its row (JSONL and Parquet alike) and counted in the card, so a
    user can keep only the prover's own samples."""
    import pyarrow.parquet as parquet

    synthetic_run(tmp_path / "run", real_lean=True)
    _set_statement_checks(
        tmp_path / "run", {"math:7": "satisfiable", "gsm8k:1": "satisfiable"}, **{"gsm8k:1": {"proof_lever": "salvage"}}
    )
    write_release(tmp_path / "run", tmp_path / "out")
    by_id = {row.instance_id: row.provenance.proof_lever for row in read_release(tmp_path / "out")}
    assert by_id == {"math:7#r0": "none", "gsm8k:1#r0": "salvage"}
    parquet_rows = parquet.read_table(tmp_path / "out" / "data" / "test.parquet").to_pylist()
    assert {row["instance_id"]: row["provenance"]["proof_lever"] for row in parquet_rows} == by_id
    card = (tmp_path / "out" / "README.md").read_text()
    assert "## How the proofs were found" in card
    assert "- none: 1 of 2 rows" in card and "- salvage: 1 of 2 rows" in card and "- feedback: 0 of 2 rows" in card
    loaded = datasets.load_dataset(str(tmp_path / "out"), cache_dir=str(tmp_path / "cache"))["test"]
    raw = loaded.filter(lambda row: row["provenance"]["proof_lever"] == "none")
    assert [row["instance_id"] for row in raw] == ["math:7#r0"]
    assert main(["reverify", str(tmp_path / "out"), "--config", stand_in_config(tmp_path)]) != 2, (
        "the files still match"
    )


def test_reverify_compares_the_released_statement_check_with_lean(tmp_path: Path) -> None:
    synthetic_run(tmp_path / "run", real_lean=True)
    _set_statement_checks(tmp_path / "run", {"math:7": "satisfiable", "gsm8k:1": None})
    # a row no statement check ran on is never released (red2 R2-2): counted apart
    summary = write_release(tmp_path / "run", tmp_path / "out")
    assert (summary.written, summary.withheld_unchecked) == (1, 1)
    lean = fake_lean_settings(workers=1, header="")
    results = asyncio.run(reverify_release(tmp_path / "out", lean, StandInJudge()))
    assert [(r.statement_check, r.statement_recheck, r.passed) for r in results] == [
        ("satisfiable", "satisfiable", True),  # math:7#r0
    ]
    # a row claiming "satisfiable" for a statement whose hypotheses Lean cannot instantiate
    statement = "theorem t (x : ℕ) (h : x > 3) : 300 = 300 := by sorry"
    proof = "theorem t (x : ℕ) (h : x > 3) : 300 = 300 := by\n  rfl"
    changes = {"math:7": {"lean_statement": statement, "lean_proof": proof, "verified_code": proof}}
    _set_statement_checks(tmp_path / "run", {"math:7": "satisfiable", "gsm8k:1": "flagged"}, **changes)
    write_release(tmp_path / "run", tmp_path / "claimed", include_flagged=True)
    results = asyncio.run(reverify_release(tmp_path / "claimed", lean, StandInJudge()))
    math = results[1]
    assert math.passed_gate and math.statement_recheck == "flagged"
    assert not math.passed and not math.statement_check_agrees
    assert "statement_check released as 'satisfiable'" in " ".join(math.reasons)
    assert results[0].passed, "a flagged row that is still flagged agrees"


def _one_row_run(
    run_dir: Path, statement: str, proof: str, answer: str, question: str = "Rewritten", variables: str | None = None
) -> None:
    with RunStore(run_dir) as store:
        store.add_problems(
            [SourceProblem(problem_id="gsm8k:3", source="gsm8k", source_id="3", question="Q?", answer="1")]
        )
        store.save_candidate(
            Candidate(
                candidate_id="gsm8k:3#r0",
                problem_id="gsm8k:3",
                rewrite_index=0,
                status=CandidateStatus.retained,
                rewritten_question=question,
                new_answer=answer,
                answer_variables=variables,
                # a store edited by hand, its evidence fields too: reverify still catches the answer
                statement_check="satisfiable",
                answer_confirmed=answer,
                answer_evidence=ANSWER_EVIDENCE,
                lean_statement=statement,
                theorem_name="t",
                lean_proof=proof,
                verified_code=proof,
                verifier_backend="lean-interact-repl",
                verifier_is_real_lean=True,
                judge_tool="SafeVerify",
                judge_revision="577e95319a2bb1bb8df541f0c645811f6577a0ae",
                judge_toolchain="v4.15.0",
                judge_checks=JUDGE_CHECKS,
                judge_real=True,
            )
        )


@pytest.mark.parametrize(
    ("answer", "grounded"),
    [("42", True), ("41", False), ("400000", False)],
)
def test_reverify_checks_an_existential_answer_as_a_witness_never_from_the_proof(
    tmp_path: Path, answer: str, grounded: bool
) -> None:
    """Issue 19 §4: a proven helper (``h41``) or an option in the proof must not ground an answer."""
    statement = "theorem t : ∃ n : ℕ, n * 3 = 126 := by sorry"
    proof = (
        "theorem t : ∃ n : ℕ, n * 3 = 126 := by\n  have h41 : (41 : ℕ) = 41 := rfl\n"
        "  set_option maxHeartbeats 400000 in\n  exact ⟨42, by norm_num⟩"
    )
    _one_row_run(tmp_path / "run", statement, proof, answer)
    write_release(tmp_path / "run", tmp_path / "out")
    [result] = asyncio.run(reverify_release(tmp_path / "out", fake_lean_settings(workers=1, header=""), StandInJudge()))
    assert result.answer_grounded is grounded, result.reasons
    if not grounded:
        assert "witness" in " ".join(result.reasons)


def test_reverify_takes_a_tuple_s_order_from_the_question_where_it_writes_one(tmp_path: Path) -> None:
    """Red team round 3: a row edited to swap both its values and its answer_variables reverified, the order
    being read from the row itself; where the question writes the order out, that is the order."""
    statement = "theorem t : ∃ x y : ℤ, x + y = 10 ∧ x - y = 4 := by sorry"
    proof = "theorem t : ∃ x y : ℤ, x + y = 10 ∧ x - y = 4 := ⟨7, 3, by norm_num, by norm_num⟩"
    question = "Find the ordered pair (x, y) with x + y = 10 and x - y = 4."
    lean = fake_lean_settings(workers=1, header="")
    grounded = {}
    for name, answer, variables in (("honest", "(7, 3)", "x, y"), ("swapped", "(3, 7)", "y, x")):
        _one_row_run(tmp_path / name, statement, proof, answer, question=question, variables=variables)
        write_release(tmp_path / name, tmp_path / f"{name}-out")
        [result] = asyncio.run(reverify_release(tmp_path / f"{name}-out", lean, StandInJudge()))
        grounded[name] = (result.answer_grounded, " ".join(result.reasons))
    assert grounded["honest"][0] is True, grounded
    assert grounded["swapped"][0] is False and "not the order the question writes (x, y)" in grounded["swapped"][1]


def test_reverify_grounds_no_answer_of_a_disjunction(tmp_path: Path) -> None:
    """Adversary finding 4/S3: ``2, -2`` are tokens of ``x = 2 ∨ x = -2``, but no single answer is entailed."""
    statement = "theorem t (x : ℤ) (h : x ^ 2 = 4) : x = 2 ∨ x = -2 := by sorry"
    proof = "theorem t (x : ℤ) (h : x ^ 2 = 4) : x = 2 ∨ x = -2 := by\n  -- 24\n  have := h\n  omega"
    for name, answer in (("good", "2, -2"), ("bad", "4"), ("comment", "24")):
        _one_row_run(tmp_path / name, statement, proof, answer)
        write_release(tmp_path / name, tmp_path / f"{name}-out")
    lean = fake_lean_settings(workers=1, header="")
    verdicts = {
        name: asyncio.run(reverify_release(tmp_path / f"{name}-out", lean, StandInJudge()))[0].answer_grounded
        for name in ("good", "bad", "comment")
    }
    assert verdicts == {"good": False, "bad": False, "comment": False}
