"""``tests/judge_cases/``: the kernel judge's cases in comparator's shape (``Challenge.lean``,
``Solution.lean``, ``expect.json``), written by ``tests/make_judge_cases.py`` from the gate corpus and the
red-team classes of issue 27.

Offline: the committed files are what the generator writes (a changed corpus fails here until they are
regenerated), each case is well formed, and every corpus cheat and red-team class is there. Where Lean is
installed (``pytest -m lean``, as ``docker/`` runs it), the real judge answers every selected case on both
pinned toolchains and must say what ``expect.json`` says.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
import yaml

from repro.judge.verdict import JudgeRefusal, JudgeRequest, JudgeStatus
from repro.lean.text import read_statement
from tests.make_judge_cases import CASES_DIR, CORPUS, HEADER, TOOLCHAINS, Expectation, rendered


def _committed() -> dict[str, dict[str, str]]:
    return {
        # bytes, not text mode: a case holds a carriage return that universal newlines would turn into \n
        directory.name: {path.name: path.read_bytes().decode("utf-8") for path in sorted(directory.iterdir())}
        for directory in sorted(CASES_DIR.iterdir())
        if directory.is_dir()
    }


def test_the_committed_cases_are_what_the_generator_writes() -> None:
    expected, committed = rendered(), _committed()
    missing, extra = sorted(set(expected) - set(committed)), sorted(set(committed) - set(expected))
    assert not missing and not extra, (
        f"run `python -m tests.make_judge_cases`: missing {missing[:5]}, extra {extra[:5]}"
    )
    stale = [name for name in expected if expected[name] != committed[name]]
    assert not stale, f"run `python -m tests.make_judge_cases`: stale {stale[:5]}"


def test_every_case_is_well_formed() -> None:
    from tests.doubles.fake_safe_verify import compile_errors

    for name, files in _committed().items():
        assert set(files) == {"Challenge.lean", "Solution.lean", "expect.json"}, name
        expectation = Expectation.model_validate(json.loads(files["expect.json"]))
        challenge, solution = files["Challenge.lean"], files["Solution.lean"]
        assert challenge.startswith(HEADER.rstrip()) and solution.startswith(HEADER.rstrip()), name
        statement = challenge[len(HEADER.rstrip()) :].strip()
        assert statement.endswith(":= by sorry") and read_statement(statement).name == expectation.theorem, name
        assert set(expectation.refusals) <= {kind.value for kind in JudgeRefusal}, name
        assert set(expectation.toolchains) <= set(TOOLCHAINS), name
        if expectation.expect == "passed":
            # a case expected to pass compiles after the header: no prover import or our name twice
            assert not compile_errors(solution), name


def test_every_corpus_case_and_every_red_team_class_is_there() -> None:
    corpus = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))
    names = set(_committed())
    missing = [case["name"] for case in corpus if case["class"] != 6 and f"corpus_{case['name']}" not in names]
    assert not missing, missing
    groups = {Expectation.model_validate(json.loads(files["expect.json"])).group for files in _committed().values()}
    required = {"honest", "changed_statement", "definitional_restatement", "universe", "custom_axiom", "sorry"}
    required |= {"native_decide", "kernel_decide", "aesop_rule", "redefinition", "sandbox"}
    required |= {"unsafe_definition", "forged_object"}
    assert required <= groups, required - groups
    cheats = [
        json.loads(f["expect.json"])
        for f in _committed().values()
        if json.loads(f["expect.json"])["screen"] == "refused"
    ]
    assert not [c for c in cheats if c["expect"] == "passed" and c["group"] not in ("custom_axiom", "sandbox")]


# What the stand-in SafeVerify cannot answer as the real one would: it reads text, it does not elaborate.
STAND_IN_CANNOT = {
    "honest_renamed_binders": "compares signatures as text, where the kernel ignores binder names",
    "red_decide_kernel_false": "has no kernel to evaluate decide",
    "red_aesop_tactic_gen_native_decide": "cannot run the tactic text Aesop builds at run time",
    "red_aesop_tactic_gen_sorry": "cannot run the tactic text Aesop builds at run time",
    "red_forged_nat_literal": "cannot run the metaprogram that forges the object (its `corrupt` failure models it)",
}


def test_the_red_team_cases_get_their_status_through_the_whole_judge_on_the_stand_in(tmp_path: Path) -> None:
    """Every hand-written case through SafeVerifyJudge (sandbox, directories, hashing, the imports check) with
    the stand-in tool: each gets the expected status and refusal, but the ones the stand-in cannot decide
    (listed above, with why); those only the lean-marked test below can answer."""
    from repro.config import JudgeSettings
    from repro.judge.kernel import judge_all
    from tests.doubles import judges
    from tests.make_judge_cases import _hand_written

    judge = judges.safeverify(JudgeSettings(tools_dir=str(tmp_path / "tools"), workers=4))
    cases = [case for case in _hand_written() if case.name not in STAND_IN_CANNOT]
    requests = [
        JudgeRequest(
            key=case.name,
            header=HEADER,
            statement=case.statement,
            theorem_name=case.expectation.theorem,
            submission=case.solution,
            toolchain="v4.15.0",
        )
        for case in cases
    ]
    wrong = []
    for case, verdict in zip(cases, asyncio.run(judge_all(judge, requests)), strict=True):
        expected = case.expectation
        if verdict.status == JudgeStatus.unavailable or expected.expect not in ("either", verdict.status):
            wrong.append(
                f"{case.name}: {verdict.status} ({verdict.cause}), expected {expected.expect}: {verdict.detail}"
            )
        elif expected.refusals and verdict.refusal not in expected.refusals:
            wrong.append(f"{case.name}: refused as {verdict.refusal}, expected {expected.refusals}")
    assert not wrong, "\n".join(wrong)
    assert len(cases) >= 15


# -- the real judge, where Lean is --------------------------------------------------------------------------
def _selected() -> list[str]:
    """Every hand-written case and the first corpus case of each (class, expectation); ``REPRO_JUDGE_CASES=all``
    selects every case (hours: three Lean processes per case and toolchain)."""
    chosen, seen = [], set()
    for name, files in _committed().items():
        expectation = json.loads(files["expect.json"])
        key = (expectation["group"], expectation["expect"])
        if not name.startswith("corpus_") or os.environ.get("REPRO_JUDGE_CASES") == "all" or key not in seen:
            chosen.append(name)
            seen.add(key)
    return chosen


@pytest.mark.lean
@pytest.mark.parametrize("toolchain", TOOLCHAINS)
def test_the_real_judge_answers_every_case_as_expected(toolchain: str) -> None:
    from repro.config import JudgeSettings
    from repro.judge.kernel import build_judge, judge_all

    settings = JudgeSettings(backend="safeverify", workers=max(1, (os.cpu_count() or 2) // 2), timeout_s=900)
    judge = build_judge(settings)
    problem = judge.problem(toolchain)  # type: ignore[attr-defined]
    if problem is not None:
        pytest.skip(f"no SafeVerify for {toolchain} here: {problem[1]}")
    names = _selected()
    files = _committed()
    requests = []
    for name in names:
        expectation = Expectation.model_validate(json.loads(files[name]["expect.json"]))
        statement = files[name]["Challenge.lean"][len(HEADER.rstrip()) :].strip()
        submission = files[name]["Solution.lean"][len(HEADER.rstrip()) + 2 :]
        requests.append(
            JudgeRequest(
                key=name,
                header=HEADER,
                statement=statement,
                theorem_name=expectation.theorem,
                submission=submission,
                toolchain=toolchain,
            )
        )
    verdicts = asyncio.run(judge_all(judge, requests))
    wrong = []
    for verdict in verdicts:
        expectation = Expectation.model_validate(json.loads(files[verdict.key]["expect.json"]))
        if toolchain not in expectation.toolchains:
            continue
        if verdict.status == JudgeStatus.unavailable:
            wrong.append(f"{verdict.key}: no verdict ({verdict.cause}): {verdict.detail[:200]}")
        elif expectation.expect != "either" and verdict.status != expectation.expect:
            wrong.append(f"{verdict.key}: {verdict.status}, expected {expectation.expect}: {verdict.detail[:200]}")
        elif (
            expectation.refusals
            and verdict.status == JudgeStatus.rejected
            and verdict.refusal not in expectation.refusals
        ):
            wrong.append(f"{verdict.key}: refused as {verdict.refusal}, expected {expectation.refusals}")
        for path in expectation.must_not_exist:
            if Path(path).expanduser().exists():
                wrong.append(f"{verdict.key}: {path} exists: the submission's compile wrote outside its sandbox")
    assert not wrong, "\n".join(wrong)
