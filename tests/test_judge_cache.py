"""The judge's verdict cache (issue 27 §1): identical code judged once, in a run store and a study store.

Only a verdict (passed, rejected) is kept; ``unavailable`` is asked again. The key names the tool, its
revision, the toolchain, the trusted header, our statement and the submission, so no verdict answers for
another toolchain, another header, or a stand-in's pass for a real judge's.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from repro.config import JudgeSettings
from repro.judge.cached import CachedJudge, judge_cache_key
from repro.judge.verdict import JudgeRequest, JudgeStatus, JudgeVerdict
from repro.store import SCHEMA_VERSION, RunStore
from repro.store.schema import _MIGRATIONS
from repro.study.store import StudyStore
from tests.doubles import judges

HEADER = "import Mathlib\nimport Aesop\nset_option maxHeartbeats 400000\nopen BigOperators Real Nat Topology Rat"
STATEMENT = "theorem t (x : ℕ) (h₀ : x = 3) : x + 1 = 4 := by sorry"
HONEST = "theorem t (x : ℕ) (h₀ : x = 3) : x + 1 = 4 := by\n  subst h₀\n  norm_num"


def _request(proof: str = HONEST, *, key: str = "a", header: str = HEADER, toolchain: str = "v4.15.0") -> JudgeRequest:
    return JudgeRequest(
        key=key, header=header, statement=STATEMENT, theorem_name="t", submission=proof, toolchain=toolchain
    )


class _Counting:
    """The stand-in SafeVerify judge, counting the judgements that reached it."""

    def __init__(self, tmp_path: Path, *extra: str) -> None:
        self.inner = judges.safeverify(JudgeSettings(tools_dir=str(tmp_path / "tools"), workers=8), *extra)
        self.name, self.real, self.calls = self.inner.name, self.inner.real, 0

    def revision(self, toolchain: str) -> str | None:
        return self.inner.revision(toolchain)

    async def judge(self, request: JudgeRequest) -> JudgeVerdict:
        self.calls += 1
        return await self.inner.judge(request)


def test_identical_code_in_flight_is_judged_once(tmp_path: Path) -> None:
    inner = _Counting(tmp_path)
    cached = CachedJudge(inner)

    async def many() -> list[JudgeVerdict]:
        return list(await asyncio.gather(*(cached.judge(_request(key=f"sample-{i}")) for i in range(6))))

    verdicts = asyncio.run(many())
    assert inner.calls == 1 and cached.misses == 1 and cached.hits == 5
    assert [v.key for v in verdicts] == [f"sample-{i}" for i in range(6)]  # each answer names its own request
    assert all(v.status == JudgeStatus.passed for v in verdicts)
    assert sum(v.cached for v in verdicts) == 5


def test_no_verdict_is_never_kept(tmp_path: Path) -> None:
    inner = _Counting(tmp_path, "--fail", "safe_verify:silent")
    cached = CachedJudge(inner)
    for _ in range(2):
        assert asyncio.run(cached.judge(_request())).status == JudgeStatus.unavailable
    assert inner.calls == 2


def test_verdicts_outlive_the_process_in_the_run_store(tmp_path: Path) -> None:
    with RunStore(tmp_path / "run") as store:
        first = CachedJudge(_Counting(tmp_path), store)
        assert asyncio.run(first.judge(_request())).status == JudgeStatus.passed
        assert asyncio.run(first.judge(_request(HONEST.replace("norm_num", "sorry")))).status == JudgeStatus.rejected
        assert store.judge_verdict_count() == 2
    with RunStore(tmp_path / "run") as store:  # a resume: nothing is judged again
        inner = _Counting(tmp_path)
        again = CachedJudge(inner, store)
        verdicts = [asyncio.run(again.judge(_request(p))) for p in (HONEST, HONEST.replace("norm_num", "sorry"))]
        assert [v.status for v in verdicts] == [JudgeStatus.passed, JudgeStatus.rejected] and inner.calls == 0
        assert all(v.cached for v in verdicts) and "sorryAx" in verdicts[1].detail


def test_verdicts_are_shared_across_provers_in_the_study_store(tmp_path: Path) -> None:
    with StudyStore(tmp_path / "study") as store:
        assert asyncio.run(CachedJudge(_Counting(tmp_path), store).judge(_request())).passed
    with StudyStore(tmp_path / "study") as store:
        inner = _Counting(tmp_path)
        assert asyncio.run(CachedJudge(inner, store).judge(_request(key="other prover"))).passed
        assert inner.calls == 0 and store.judge_verdict_count() == 1


@pytest.mark.parametrize(
    "other",
    [
        _request(toolchain="v4.9.0"),
        _request(header=HEADER.replace("400000", "0")),
        _request(HONEST.replace("norm_num", "simp")),
    ],
)
def test_a_verdict_answers_only_for_the_same_tool_toolchain_header_and_text(
    tmp_path: Path, other: JudgeRequest
) -> None:
    judge = _Counting(tmp_path)
    assert judge_cache_key(judge, other) != judge_cache_key(judge, _request())
    assert judge_cache_key(judge, _request(key="renamed")) == judge_cache_key(judge, _request())


def test_a_stand_in_s_verdict_never_answers_for_a_real_judge(tmp_path: Path) -> None:
    from repro.judge.kernel import SafeVerifyJudge

    settings = JudgeSettings(tools_dir=str(tmp_path / "tools"))
    real = SafeVerifyJudge(settings)
    stand_in = judges.safeverify(settings)
    assert real.name == stand_in.name and real.revision("v4.15.0") == stand_in.revision("v4.15.0")
    assert judge_cache_key(real, _request()) != judge_cache_key(stand_in, _request())


def test_an_older_run_store_gains_the_judge_cache_on_open(tmp_path: Path) -> None:
    with RunStore(tmp_path / "run"):
        pass
    raw = sqlite3.connect(tmp_path / "run" / "run.sqlite")
    raw.execute("DROP TABLE judge_cache")
    # the store as the repro before the judge left it: every migration up to (not including) the one
    # that creates the judge cache
    before_judge = next(i for i, step in enumerate(_MIGRATIONS) if "CREATE TABLE judge_cache" in step)
    raw.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(before_judge),))
    raw.commit()
    raw.close()
    with RunStore(tmp_path / "run") as store:
        assert store.schema_version() == SCHEMA_VERSION
        store.cache_judge_verdict("k", {"key": "k", "status": "passed", "tool": "SafeVerify", "real": True})
        assert store.cached_judge_verdict("k") is not None


def test_a_verdict_obtained_unconfined_never_answers_for_a_confined_judge(tmp_path: Path) -> None:
    from repro.lean.sandbox import SandboxStatus

    settings = JudgeSettings(tools_dir=str(tmp_path / "tools"))
    loose = SandboxStatus(kind="none", network_blocked=False, writes_confined=False, detail="test")
    confined = judges.safeverify(settings)
    unconfined = judges.safeverify(settings, sandbox=loose, named_sandbox="none")
    assert judge_cache_key(confined, _request()) != judge_cache_key(unconfined, _request())
