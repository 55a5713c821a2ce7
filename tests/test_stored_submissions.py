"""A stored code text reaches the kernel judge only as the screen reads it again.

Before the judge landed, ``Verdict.checked_code`` (hence a candidate's and a released row's ``verified_code``) was the
prover's code block as it wrote it, ``import`` lines included; after the trusted header Lean refuses every such
file ("invalid 'import' command"). Now a stored text goes through :func:`repro.judge.release.stored_request`: the
screen's static layer (:func:`repro.judge.screen.screen_code`, the same ``scan`` that makes a reply's checked text)
reads it, refuses what it would refuse in a reply, and gives the judge the text Lean checks. These tests hold an
old-format release and an old-format run store, judged by the product's SafeVerifyJudge over the SafeVerify
stand-in (tests/doubles/fake_safe_verify.py, which answers an ``import`` after the header as Lean does).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import yaml

from repro.app import run
from repro.config import DEFAULT_HEADER, JudgeSettings, LeanSettings, build_config
from repro.judge.kernel import JUDGE_CHECKS
from repro.judge.release import stored_request
from repro.judge.screen import screen_code, verify_proof
from repro.llm.protocol import ModelRequest
from repro.records import Candidate, CandidateStatus, SourceProblem, Stage
from repro.release import reverify_release, write_release
from repro.stages.answer import ANSWER_EVIDENCE
from repro.store import _MIGRATIONS, RunStore
from tests.conftest import shared_file
from tests.doubles.fake_safe_verify import compile_errors
from tests.doubles.judge import StandInJudge
from tests.doubles.judges import safeverify
from tests.pipeline_world import responder, world_config, write_problems

HEADER = DEFAULT_HEADER
IMPORTS = "import Mathlib\nimport Aesop\n\n"
STATEMENT = "theorem t (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry"
PROOF = "theorem t (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num"


def _accepted_real_rows() -> list[dict[str, str]]:
    rows: list[dict[str, str]] = []
    for name in (
        "realproofs/MoonshotAI_Kimina-Prover-Preview_minif2f-test-solved.jsonl",
        "realproofs/project-numina_kimina-lean-server_test-fixtures.jsonl",
    ):
        lines = shared_file(name).read_text().splitlines()
        rows += [row for row in map(json.loads, lines) if row["lean_verdict"] == "pass"]
    return rows


def test_the_screen_reads_an_old_stored_block_as_the_text_lean_checked_and_a_new_one_unchanged() -> None:
    """Every real proof Lean accepted, stored in the old form (its block with the prover's imports) or the new
    (the text Lean checked): the stored text screened again is the text the screen's Lean check compiled, and
    a text already in that form is left byte for byte as it is (idempotent)."""
    rows = _accepted_real_rows()
    assert len(rows) >= 300

    async def verdicts() -> list[Any]:
        return [await verify_proof(r["statement"], r["output"], None, header=r["header"]) for r in rows]

    old_forms = passed = 0
    for row, verdict in zip(rows, asyncio.run(verdicts()), strict=True):
        checked, raw = verdict.checked_code, verdict.prover_code
        assert checked is not None and raw is not None, row["source"]
        # the same decision as on the reply (a policy refusal such as native_decide included), the same text
        static = (verdict.static_passed, [d for d in verdict.details if d != "no Lean backend configured"], checked)
        old = screen_code(row["statement"], raw, header=row["header"])
        assert (old.static_passed, old.details, old.checked_code) == static, row["source"]
        new = screen_code(row["statement"], checked, header=row["header"])
        assert (new.static_passed, new.details, new.checked_code) == static, row["source"]
        old_forms += raw != checked
        passed += bool(verdict.static_passed)
    assert old_forms == len(rows), "every real block carries imports: the old form differs from the new"
    assert passed >= 300


@pytest.mark.parametrize(
    ("stored", "refused_for"),
    [
        ("axiom cheat : False\n" + PROOF.replace("norm_num", "exact cheat.elim"), "axiom"),
        (IMPORTS + "import Lean.Elab.Command\n" + PROOF, "Lean.Elab.Command"),  # an import the header lacks
        (PROOF + "\nimport Mathlib\n", "only the pinned header's imports, at the top"),  # not at the top
        (IMPORTS + PROOF + "\n#eval IO.println 1\n", "#eval"),
        (IMPORTS + PROOF.replace("norm_num", "norm_num<|im_end|>"), "special tokens"),
        (IMPORTS + PROOF + "\n/- never closed", "does not lex completely"),
        (IMPORTS + PROOF.replace("theorem t", "def t"), "declared with def"),
        (IMPORTS + PROOF + "\n" + PROOF, "2 declarations"),
    ],
)
def test_a_stored_text_the_screen_refuses_never_becomes_a_judge_request(stored: str, refused_for: str) -> None:
    """Re-screened, not only stripped: a stored text the screen would refuse in a reply gives no request."""
    found = stored_request("row", HEADER, STATEMENT, stored, "v4.15.0")
    assert found.refused and found.request is None
    assert refused_for in found.refusal(), found.screen.details


def test_an_old_stored_block_becomes_the_text_lean_checks_with_the_provers_positions() -> None:
    found = stored_request("row", HEADER, STATEMENT, IMPORTS + PROOF, "v4.15.0")
    assert found.request is not None and found.old_form
    submission = found.request.submission
    assert "import" not in submission and submission.endswith(PROOF)
    assert submission.splitlines()[0] == " " * len("import Mathlib")  # blanked: Lean's lines stay the prover's
    assert compile_errors(IMPORTS + PROOF + "\n\n" + IMPORTS + PROOF)  # the stand-in refuses an import after code
    assert not compile_errors(HEADER + "\n" + submission)
    again = stored_request("row", HEADER, STATEMENT, submission, "v4.15.0")
    assert again.request is not None and again.request.submission == submission and not again.old_form


# -- an old-format release ------------------------------------------------------------------------------------
def _old_format_run(run_dir: Path, verified_code: str) -> None:
    """A run store as a repro before the judge landed would release it: ``verified_code`` is the prover's block,
    its imports in it (the judge's provenance as a store records a pass); its config names the default header."""
    config = build_config(world_config(str(write_problems(run_dir.parent / "problems.jsonl", ["retained"]))))
    with RunStore(run_dir) as store:
        problem = SourceProblem(problem_id="gsm8k:1", source="gsm8k", source_id="1", question="Q?", answer="300")
        store.add_problems([problem])
        store.save_candidate(
            Candidate(
                candidate_id="gsm8k:1#r0",
                problem_id="gsm8k:1",
                rewrite_index=0,
                status=CandidateStatus.retained,
                rewritten_question="How much is 3600 / 12?",
                new_answer="300",
                statement_check="satisfiable",  # as today's pipeline stores a retained row
                answer_confirmed="300",
                answer_evidence=ANSWER_EVIDENCE,
                lean_statement=STATEMENT,
                theorem_name="t",
                lean_proof=f"Plan.\n```lean4\n{IMPORTS}{PROOF}\n```",
                verified_code=verified_code,
                verifier_backend="lean-interact-repl",
                verifier_is_real_lean=True,
                judge_tool="SafeVerify",
                judge_revision="577e95319a2bb1bb8df541f0c645811f6577a0ae",
                judge_toolchain="v4.15.0",
                judge_checks=JUDGE_CHECKS,
                judge_real=True,
                judge_confinement="bubblewrap",
                lean_toolchain="leanprover/lean4:v4.15.0",
                mathlib_revision="v4.15.0",
            )
        )
    (run_dir / "config.yaml").write_text(yaml.safe_dump(config.model_dump(mode="json"), allow_unicode=True))


def _lean() -> LeanSettings:
    return LeanSettings(backend="fake", workers=1, header=HEADER)


def test_reverify_of_an_old_format_release_judges_the_text_lean_checked_and_passes(tmp_path: Path) -> None:
    _old_format_run(tmp_path / "run", IMPORTS + PROOF)
    assert write_release(tmp_path / "run", tmp_path / "out").written == 1
    judge = safeverify(JudgeSettings(tools_dir=str(tmp_path / "tools")))
    (result,) = asyncio.run(reverify_release(tmp_path / "out", _lean(), judge))
    assert result.judge is not None and result.judge.passed, result.judge and result.judge.detail
    assert result.old_form and result.passed_gate and result.passed, result.reasons


def test_reverify_never_judges_a_released_verified_code_the_screen_refuses(tmp_path: Path) -> None:
    forged = IMPORTS + "axiom cheat : False\n" + PROOF.replace("subst h₀\n  norm_num", "exact cheat.elim")
    _old_format_run(tmp_path / "run", forged)
    write_release(tmp_path / "run", tmp_path / "out")
    judge = StandInJudge()
    (result,) = asyncio.run(reverify_release(tmp_path / "out", _lean(), judge))
    assert judge.requests == [], "the judge was never asked about a text the screen refuses"
    assert result.judge is None and not result.passed and not result.infrastructure
    assert any("the screen refuses the released verified_code" in reason for reason in result.reasons)


# -- an old-format run store ----------------------------------------------------------------------------------
def responder_with_imports(request: ModelRequest, sample_index: int) -> str | tuple[str, str]:
    """The pipeline world's models, with the prover writing its imports into its block as Goedel, DeepSeek and
    Kimina do."""
    reply = responder(request, sample_index)
    if "Complete the following Lean 4 code" not in request.prompt_text() or not isinstance(reply, str):
        return reply
    return reply.replace("```lean4\n", "```lean4\n" + IMPORTS, 1)


def test_an_old_format_run_store_resumed_is_judged_on_the_text_lean_checked(tmp_path: Path) -> None:
    config: dict[str, Any] = world_config(str(write_problems(tmp_path / "problems.jsonl", ["retained"])))
    config["models"]["prove"]["script"] = "tests.test_stored_submissions:responder_with_imports"
    config["judge"] = {"backend": "factory", "factory": "tests.doubles.judges:safeverify", "tools_dir": str(tmp_path)}
    run_dir = tmp_path / "run"
    assert run(build_config(config), run_dir).summary.retained == 1
    # the store as a repro before the judge left it: no judge attempt or verdict, the raw block as verified_code
    version = next(i for i, sql in enumerate(_MIGRATIONS) if "judge_unavailable" in sql)
    with sqlite3.connect(run_dir / "run.sqlite") as raw:
        raw.execute("DELETE FROM attempts WHERE stage='judge'")
        raw.execute("DELETE FROM judge_cache")
        code = raw.execute("SELECT json_extract(payload, '$.lean_proof') FROM candidates").fetchone()[0]
        block = code.split("```lean4\n", 1)[1].split("\n```", 1)[0]
        assert block.startswith("import Mathlib")
        raw.execute("UPDATE candidates SET payload = json_set(payload, '$.verified_code', ?)", (block,))
        raw.execute("UPDATE meta SET value=? WHERE key='schema_version'", (str(version),))

    resumed = run(None, run_dir, resume=True)
    assert resumed.unfinished == 0 and resumed.summary.retained == 1
    with RunStore(run_dir, create=False) as store:
        (candidate,) = store.candidates()
        judged = [a for a in store.attempts(candidate_id=candidate.candidate_id) if a.stage == Stage.judge]
    assert judged and all(a.output["judge"]["status"] == "passed" for a in judged)
    for attempt in judged:
        assert "import" not in attempt.output["submission"] and attempt.output["submission"].endswith("norm_num")
    assert candidate.verified_code is not None and "import" not in candidate.verified_code
    assert candidate.verified_code == judged[0].output["submission"]
    assert candidate.lean_proof is not None and "import Mathlib" in candidate.lean_proof  # the reply as it was
