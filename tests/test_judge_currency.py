"""A pass counts only when today's judge gave it: the tool at today's pin for its toolchain, with today's version
of repro's own checks (red team red1, R10 and R4's minor point).

A pin moves, or our checks grow, because the older judge was found too weak; what it passed is then never
released as verified, a resumed run judges it again, and ``reverify`` names it. And reverify judges under the
trusted toolchain: release data never chooses a (weaker) judge.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from repro.config import LeanSettings
from repro.judge.currency import judge_outdated
from repro.judge.kernel import JUDGE_CHECKS, SAFEVERIFY_PINS
from repro.judge.verdict import JudgeStatus
from repro.records import CandidateStatus, Stage
from repro.release import reverify_release, write_release
from repro.stages.judge import take_judge_provenance
from repro.store import RunReader, RunStore
from tests.doubles import judges
from tests.doubles.judge import StandInJudge
from tests.test_release import synthetic_run

PIN_15 = SAFEVERIFY_PINS["v4.15.0"].commit
PIN_9 = SAFEVERIFY_PINS["v4.9.0"].commit


def _age(run_dir: Path, **fields: object) -> None:
    """Every judged candidate of the run as if an older judge had passed it."""
    with RunStore(run_dir) as store:
        for candidate in store.candidates():
            if candidate.judge_tool:
                for name, value in fields.items():
                    setattr(candidate, name, value)
                store.save_candidate(candidate)


def test_only_today_s_pin_and_checks_are_today_s_judge() -> None:
    assert judge_outdated("SafeVerify", PIN_15, "leanprover/lean4:v4.15.0", JUDGE_CHECKS) is None
    assert judge_outdated("SafeVerify", PIN_9, "v4.9.0", JUDGE_CHECKS) is None
    assert "not today's pin" in (judge_outdated("SafeVerify", "0" * 40, "v4.15.0", JUDGE_CHECKS) or "")
    assert "not today's pin" in (judge_outdated("SafeVerify", PIN_15, "v4.9.0", JUDGE_CHECKS) or "")  # the other pin
    assert "not today's" in (judge_outdated("SafeVerify", PIN_15, "v4.15.0", JUDGE_CHECKS - 1) or "")
    assert "never recorded" in (judge_outdated("SafeVerify", PIN_15, "v4.15.0", None) or "")
    assert judge_outdated("SafeVerify", None, "v4.15.0", JUDGE_CHECKS) is not None
    assert "pins no SafeVerify" in (judge_outdated("SafeVerify", PIN_15, "v4.29.0", JUDGE_CHECKS) or "")
    assert "not a tool this repro pins" in (judge_outdated("MyVerifier", PIN_15, "v4.15.0", JUDGE_CHECKS) or "")


def test_a_judge_s_verdict_and_the_candidate_it_passes_carry_the_checks_that_gave_it(tmp_path: Path) -> None:
    """The stand-in runs SafeVerifyJudge's own code (only the tool is fake): its verdict records our checks'
    version, and the candidate it passes takes it with the revision."""
    from repro.config import JudgeSettings
    from repro.judge.verdict import JudgeRequest
    from repro.records import Candidate

    settings = JudgeSettings(tools_dir=str(tmp_path / "tools"), timeout_s=60)
    judge = judges.safeverify(settings)
    request = JudgeRequest(
        key="k",
        header="import Mathlib\n",
        statement="theorem t (x : ℕ) (h₀ : x = 3) : x + 1 = 4 := by sorry",
        theorem_name="t",
        submission="theorem t (x : ℕ) (h₀ : x = 3) : x + 1 = 4 := by\n  subst h₀\n  norm_num\n",
        toolchain="v4.15.0",
    )
    verdict = asyncio.run(judge.judge(request))
    assert verdict.status == JudgeStatus.passed, verdict.detail
    assert (verdict.tool_revision, verdict.checks) == (PIN_15, JUDGE_CHECKS)
    candidate = Candidate(candidate_id="c#r0", problem_id="c", rewrite_index=0)
    take_judge_provenance(candidate, verdict)
    assert (candidate.judge_revision, candidate.judge_checks) == (PIN_15, JUDGE_CHECKS)


@pytest.mark.parametrize(
    "older",
    [
        {"judge_revision": "0" * 40},  # a SafeVerify commit that is not the v4.15.0 pin
        {"judge_checks": JUDGE_CHECKS - 1},  # before our rebuild check
        {"judge_checks": None},  # a pass stored before the checks were recorded
    ],
)
def test_a_row_passed_by_a_judge_that_is_not_today_s_is_not_released_as_verified(
    tmp_path: Path, older: dict[str, object]
) -> None:
    """Found by red1 (R10): a retained candidate kept only the judge's tool and revision, and the release wrote it
    as verified from ``judge_real`` alone, whatever pin or checks had passed it."""
    synthetic_run(tmp_path / "run", real_lean=True)
    _age(tmp_path / "run", **older)
    strict = write_release(tmp_path / "run", tmp_path / "strict")
    assert strict.written - strict.unverified == 0
    assert (strict.written, strict.withheld_unverified, strict.withheld_outdated_judge) == (0, 2, 2)
    loose = write_release(tmp_path / "run", tmp_path / "loose", allow_unverified=True)
    assert loose.written == loose.unverified == 2  # written on request, and marked


def test_today_s_judge_s_rows_are_still_released_as_verified(tmp_path: Path) -> None:
    synthetic_run(tmp_path / "run", real_lean=True)
    summary = write_release(tmp_path / "run", tmp_path / "out")
    assert (summary.written, summary.unverified, summary.withheld_outdated_judge) == (2, 0, 0)


def test_a_resumed_run_judges_again_what_an_older_judge_passed(tmp_path: Path) -> None:
    """``repro run --resume`` reopens each retained candidate an older judge passed, and its problem, for the
    pipeline to judge afresh; a candidate today's judge passed, or a stand-in's pass, stays as it is."""
    from repro.app import _reopen_outdated_judgements
    from repro.runlog import RunLog

    synthetic_run(tmp_path / "run", real_lean=True)
    with RunStore(tmp_path / "run") as store:
        first, second = store.candidates(CandidateStatus.retained)
        first.judge_revision = "0" * 40
        store.save_candidate(first)
        for candidate in (first, second):
            store.set_problem_outcome(candidate.problem_id, "retained")
    notes: list[str] = []
    with RunStore(tmp_path / "run") as store:
        log = RunLog(tmp_path / "run")
        try:
            _reopen_outdated_judgements(store, log, notes.append)
        finally:
            log.close()
    with RunReader(tmp_path / "run") as reader:
        reopened = next(c for c in reader.candidates() if c.candidate_id == first.candidate_id)
        kept = next(c for c in reader.candidates() if c.candidate_id == second.candidate_id)
        assert reopened.status == CandidateStatus.unfinished and reopened.reject_stage == Stage.judge
        assert kept.status == CandidateStatus.retained
        assert reader.problem_outcome(first.problem_id) is None
        assert reader.problem_outcome(second.problem_id) == "retained"
        causes = dict(reader.unfinished_problems())
        assert "not today's pin" in (causes[first.problem_id] or "")
    assert len(notes) == 1 and notes[0].startswith("1 retained candidates were passed by a judge that is not today's")
    # again: nothing left to reopen (the reopened one is no longer retained; the other is today's judge's)
    with RunStore(tmp_path / "run") as store:
        again = store.reopen_outdated_judgements(
            lambda c: judge_outdated(c.judge_tool, c.judge_revision, c.judge_toolchain, c.judge_checks)
        )
        assert again == []


def test_reverify_judges_under_the_trusted_toolchain_and_names_rows_an_older_judge_passed(tmp_path: Path) -> None:
    """Found by red1 (R4's minor point): reverify judged each row on the toolchain its own provenance named, so a
    rewritten row could choose the v4.9.0 judge. Now the trusted ``lean.toolchain`` judges every row; a row that
    claims another fails, as one with another header does, and a row an older judge passed is named."""
    synthetic_run(tmp_path / "run", real_lean=True)
    with RunStore(tmp_path / "run") as store:
        first = store.candidates(CandidateStatus.retained)[0]
        first.judge_toolchain = "v4.9.0"
        first.judge_revision = PIN_9
        store.save_candidate(first)
    assert write_release(tmp_path / "run", tmp_path / "out").written == 2  # v4.9.0's own pin: today's judge
    judge = StandInJudge()
    results = asyncio.run(reverify_release(tmp_path / "out", LeanSettings(backend="fake", workers=1, header=""), judge))
    assert {request.toolchain for request in judge.requests} == {"v4.15.0"}
    claimed = next(r for r in results if r.instance_id == first.candidate_id)
    other = next(r for r in results if r.instance_id != first.candidate_id)
    assert not claimed.passed and any("released as judged on v4.9.0" in reason for reason in claimed.reasons)
    assert other.passed_gate and other.older_judge is None
    # the same release reverified under the toolchain the row names: that row's claim holds, the other's does not
    nine = LeanSettings(backend="fake", workers=1, header="", toolchain="v4.9.0")
    results = asyncio.run(reverify_release(tmp_path / "out", nine, StandInJudge()))
    assert [r.passed_gate for r in results if r.instance_id == first.candidate_id] == [True]


def test_reverify_names_the_rows_an_older_judge_passed(tmp_path: Path) -> None:
    synthetic_run(tmp_path / "run", real_lean=True)
    write_release(tmp_path / "run", tmp_path / "current")
    results = asyncio.run(
        reverify_release(tmp_path / "current", LeanSettings(backend="fake", workers=1, header=""), StandInJudge())
    )
    assert all(result.older_judge is None for result in results)
    _age(tmp_path / "run", judge_checks=JUDGE_CHECKS - 1)
    write_release(tmp_path / "run", tmp_path / "older", allow_unverified=True)
    results = asyncio.run(
        reverify_release(tmp_path / "older", LeanSettings(backend="fake", workers=1, header=""), StandInJudge())
    )
    assert all("checks version" in (result.older_judge or "") for result in results)


def test_a_resumed_study_judges_again_the_samples_an_older_judge_passed(tmp_path: Path) -> None:
    """A study's pass@j and coverage count verified samples: one an older judge passed (a real one) is unjudged
    again on ``prove-study --resume``; today's judge's pass, a stand-in's pass and a rejection stay."""
    from repro.judge.verdict import JudgeVerdict
    from repro.study.records import SampleOutcome
    from repro.study.store import StudyStore

    def verdict(revision: str, *, real: bool = True, status: JudgeStatus = JudgeStatus.passed) -> JudgeVerdict:
        return JudgeVerdict(
            key="k",
            status=status,
            tool="SafeVerify",
            tool_revision=revision,
            checks=JUDGE_CHECKS,
            toolchain="v4.15.0",
            real=real,
        )

    samples = {
        0: verdict("0" * 40),  # an older pin's pass: judged again
        1: verdict(PIN_15),  # today's
        2: verdict("0" * 40, real=False),  # a stand-in's pass counts as verified nowhere
        3: verdict("0" * 40, status=JudgeStatus.rejected),
    }
    with StudyStore(tmp_path / "study") as store:
        store.add_samples(
            [
                SampleOutcome(
                    prover="p",
                    statement_id="s",
                    sample_index=index,
                    text="x",
                    finish_reason="stop",
                    judged=True,
                    verified=judged.passed,
                    screened=True,
                    judge=judged,
                )
                for index, judged in samples.items()
            ]
        )
        reopened = store.reopen_outdated_judgements(
            lambda v: judge_outdated(v.tool, v.tool_revision, v.toolchain, v.checks)
        )
        assert reopened == 1
        after = {sample.sample_index: sample for sample in store.samples()}
    assert not after[0].judged and not after[0].verified
    assert after[1].judged and after[1].verified and after[2].judged and after[3].judged


def test_status_counts_an_older_judge_s_pass_apart_from_the_verified(tmp_path: Path) -> None:
    """``repro status`` says verified only of today's judge's passes, and says how many a resume judges again."""
    from repro.metrics import judge_figures, judge_lines

    synthetic_run(tmp_path / "run", real_lean=True)
    with RunReader(tmp_path / "run") as reader:
        today = judge_figures(reader)
    assert (today["retained_verified"], today["retained_outdated_judge"]) == (2, 0)
    _age(tmp_path / "run", judge_checks=None)
    with RunReader(tmp_path / "run") as reader:
        older = judge_figures(reader)
    assert (older["retained_verified"], older["retained_outdated_judge"]) == (0, 2)
    assert any("not today's" in line and "--resume" in line for line in judge_lines(older, 2))
