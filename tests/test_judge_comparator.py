"""``ComparatorJudge`` (toolchains from v4.21.0-rc3) against a stand-in whose checks of the command line,
project and environment are read from leanprover/comparator at 19e111e (``tests/doubles/fake_comparator.py``).
No registered toolchain is >= v4.21.0-rc3, so the real comparator runs only on a node that sets one up."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from repro.config import JudgeSettings
from repro.judge.comparator import COMPARATOR_PINS, ComparatorJudge, comparator_config
from repro.judge.kernel import build_judge
from repro.judge.verdict import STANDARD_AXIOMS, JudgeCause, JudgeRefusal, JudgeRequest, JudgeStatus
from repro.lean.sandbox import SandboxStatus
from tests.doubles import judges
from tests.doubles.fake_comparator import command_problems

HEADER = "import Mathlib\nimport Aesop\nset_option maxHeartbeats 400000\nopen BigOperators Real Nat Topology Rat"
STATEMENT = "theorem t (x : ℕ) (h₀ : x = 3) : x + 1 = 4 := by sorry"
HONEST = "theorem t (x : ℕ) (h₀ : x = 3) : x + 1 = 4 := by\n  subst h₀\n  norm_num"
TOOLCHAIN = next(iter(COMPARATOR_PINS))
UNCONFINED = SandboxStatus(kind="none", network_blocked=False, writes_confined=False, detail="test: no launcher")


def _request(proof: str, toolchain: str = TOOLCHAIN) -> JudgeRequest:
    return JudgeRequest(
        key="row", header=HEADER, statement=STATEMENT, theorem_name="t", submission=proof, toolchain=toolchain
    )


def _settings(tmp_path: Path) -> JudgeSettings:
    return JudgeSettings(tools_dir=str(tmp_path / "tools"), timeout_s=60)


def test_an_honest_proof_passes_with_comparator_s_pin_and_confinement(tmp_path: Path) -> None:
    verdict = asyncio.run(judges.comparator(_settings(tmp_path)).judge(_request(HONEST)))
    assert verdict.status == JudgeStatus.passed, verdict.detail
    assert verdict.tool == "comparator" and verdict.tool_revision == COMPARATOR_PINS[TOOLCHAIN].commit
    assert not verdict.real and "landrun" in verdict.confinement


def test_refusals_and_compile_errors_are_rejections_in_comparator_s_words(tmp_path: Path) -> None:
    judge = judges.comparator(_settings(tmp_path))
    cases = {
        HONEST.replace("= 4 :=", "= 5 :=").replace("norm_num", "omega"): (JudgeRefusal.type_mismatch, "do not match"),
        HONEST.replace("subst h₀\n  norm_num", "sorry"): (JudgeRefusal.axiom, "'sorryAx'"),
        "axiom c : False\n" + HONEST.replace("subst h₀\n  norm_num", "exact c.elim"): (JudgeRefusal.axiom, "'c'"),
        HONEST.replace("theorem t", "theorem u"): (JudgeRefusal.not_found, "not found in solution"),
        "import Mathlib\n" + HONEST: (JudgeRefusal.compile_error, "line 1:0: invalid 'import' command"),
    }
    for proof, (refusal, said) in cases.items():
        verdict = asyncio.run(judge.judge(_request(proof)))
        assert verdict.status == JudgeStatus.rejected and verdict.refusal == refusal, verdict.detail
        assert said in verdict.detail


def test_the_project_and_command_line_are_comparator_s(tmp_path: Path) -> None:
    """runtests.lean: ``lake env COMPARATOR config.json`` in the project; Challenge and Solution libraries;
    COMPARATOR_LANDRUN / COMPARATOR_LEAN4EXPORT; config.json as ``structure Config``."""
    log = tmp_path / "calls.jsonl"
    judge = judges.comparator(_settings(tmp_path), "--log", str(log), sandbox=UNCONFINED, named_sandbox="none")
    assert asyncio.run(judge.judge(_request(HONEST))).status == JudgeStatus.passed
    (call,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert call["argv"][0] == "env" and call["argv"][2] == "config.json"
    assert call["argv"][1].endswith(".lake/build/bin/comparator")
    assert call["env"]["COMPARATOR_LEAN4EXPORT"].endswith("lean4export/.lake/build/bin/lean4export")
    assert comparator_config("t") == {
        "challenge_module": "Challenge",
        "solution_module": "Solution",
        "theorem_names": ["t"],
        "permitted_axioms": sorted(STANDARD_AXIOMS),
    }
    project = tmp_path / "project"
    project.mkdir()
    ComparatorJudge(_settings(tmp_path)).project(_request(HONEST), project)
    assert (project / ".lake" / "packages").is_symlink()  # the prepared Mathlib, read-only, nothing fetched
    assert (project / "Solution.lean").read_text().startswith(HEADER)
    environment = {"COMPARATOR_LANDRUN": "/bin/sh", "COMPARATOR_LEAN4EXPORT": "/bin/sh"}
    assert command_problems(call["argv"], project, environment) == []
    assert command_problems(["build"], project, {}) != []  # the stand-in does refuse what comparator would not read


def test_a_missing_setup_or_an_unpinned_toolchain_is_no_verdict(tmp_path: Path) -> None:
    bare = ComparatorJudge(_settings(tmp_path), landrun="/bin/true")
    verdict = asyncio.run(bare.judge(_request(HONEST)))
    assert verdict.status == JudgeStatus.unavailable and verdict.cause == JudgeCause.missing
    assert "is not set up" in verdict.detail
    verdict = asyncio.run(judges.comparator(_settings(tmp_path)).judge(_request(HONEST, toolchain="v4.22.0")))
    assert verdict.cause == JudgeCause.missing and "no pinned comparator for toolchain v4.22.0" in verdict.detail


def test_a_comparator_that_dies_gives_no_verdict(tmp_path: Path) -> None:
    for how, cause in (("killed", JudgeCause.killed), ("silent", JudgeCause.no_output)):
        judge = judges.comparator(_settings(tmp_path), "--fail", how)
        verdict = asyncio.run(judge.judge(_request(HONEST)))
        assert verdict.status == JudgeStatus.unavailable and verdict.cause == cause, verdict.detail


def test_auto_sends_each_toolchain_to_its_tool(tmp_path: Path) -> None:
    judge = build_judge(_settings(tmp_path))
    assert asyncio.run(judge.judge(_request(HONEST))).tool == "comparator"
    assert asyncio.run(judge.judge(_request(HONEST, toolchain="v4.15.0"))).tool == "SafeVerify"


def test_a_sandboxed_step_that_failed_is_never_read_as_a_refusal(tmp_path: Path) -> None:
    import time as clock

    judge = ComparatorJudge(_settings(tmp_path), real=False, landrun="/bin/true")
    for output in (
        "uncaught exception: Child exited with 1",
        "Building Challenge\nuncaught exception: Child exited with 1",
    ):
        verdict = judge._read(_request(HONEST), 1, output, clock.monotonic())
        assert verdict.status == JudgeStatus.unavailable, output
