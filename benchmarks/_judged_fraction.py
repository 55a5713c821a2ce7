"""Judgements per sample in a scripted run and a scripted study (part 2 of ``benchmarks/judge_cost.py``).

The run: the pipeline world's problems (``tests/pipeline_world.py``), scripted models, the fake REPL, and
``judge.backend: factory`` with the stand-in SafeVerify. The study: the three scripted provers of
``tests/study_world.py`` over its statements. Each is read back from its store: samples drawn, screen passes,
and judgements (the judge stage's attempts, or the distinct codes in the judge cache). A pipeline or study
runner that predates the judge stage stores no judgement: then the screen passes are what it would judge, and
the figure says so.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import tempfile
from pathlib import Path
from typing import Any

from repro.records import Stage
from repro.store import RunStore

SCREENS = {"verify", "salvage", "feedback"}


def run_fraction(copies: int = 6) -> dict[str, Any]:
    from repro.app import run
    from repro.config import build_config
    from tests.pipeline_world import world_config, write_problems

    cases = ["retained", "second_attempt", "restated_target", "mismatch_then_regenerated", "intermediate"] * copies
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        dataset = write_problems(root / "problems.jsonl", cases)
        config = world_config(str(dataset))
        config["judge"] = {
            "backend": "factory",
            "factory": "tests.doubles.judges:safeverify",
            "tools_dir": str(root / "tools"),
        }
        run(build_config(config), root / "run")
        with RunStore(root / "run", create=False) as store:
            attempts = [a for c in store.candidates() for a in store.attempts(candidate_id=c.candidate_id)]
            judge_stage = "judge" in Stage.__members__
            samples = sum(1 for a in attempts if a.stage == Stage.prove)
            screened = sum(1 for a in attempts if a.stage.value in SCREENS and a.status.value == "passed")
            judged = sum(1 for a in attempts if a.stage.value == "judge") if judge_stage else screened
            distinct = store.judge_verdict_count() if judge_stage else None
    return {
        "problems": len(cases),
        "samples": samples,
        "screen_passes": screened,
        "judgements": judged,
        "distinct_codes_judged": distinct,
        "judged_per_sample": round(judged / samples, 3) if samples else None,
        # judgements the tool actually ran (the rest answered from the verdict cache: identical code)
        "fresh_judgements_per_sample": round(distinct / samples, 3) if samples and distinct is not None else None,
        "measured": "judge stage attempts" if judge_stage else "screen passes (this pipeline has no judge stage yet)",
    }


def study_fraction(statements: int = 60, k: int = 4) -> dict[str, Any]:
    from benchmarks.study_throughput import PROVERS, _backend, _entries, _statements, _verifier
    from repro.config import JudgeSettings
    from repro.judge.cached import CachedJudge
    from repro.study import StoredLeanResults, StudyRunner, StudySettings, StudyStore
    from tests.doubles import judges

    async def study(directory: Path) -> dict[str, Any]:
        rows = _statements(statements)
        store = StudyStore(directory / "study")
        store.add_statements(rows)
        entries = _entries(8)
        for entry in entries:
            store.add_prover(entry)
        backends = {name: _backend(name, 0.0, 8) for name in PROVERS}
        verifier = StoredLeanResults(_verifier(0.0, 2), store)
        runner_options: dict[str, Any] = {}
        if "judge" in inspect.signature(StudyRunner).parameters:
            inner = judges.safeverify(JudgeSettings(tools_dir=str(directory / "tools"), workers=4))
            runner_options["judge"] = CachedJudge(inner, store)
        runner = StudyRunner(store, entries, dict(backends), verifier, settings=StudySettings(k=k), **runner_options)
        await runner.run(rows)
        await verifier.close()
        samples = store.samples()
        verified = [s for s in samples if s.verified]
        distinct = len({(s.statement_id, s.checked_code) for s in verified})
        judged = store.judge_verdict_count() if runner_options else distinct
        store.close()
        return {
            "statements": statements,
            "provers": len(PROVERS),
            "k": k,
            "samples": len(samples),
            "counted_successes": len(verified),
            "judgements": judged,
            "judged_per_sample": round(judged / len(samples), 3) if samples else None,
            "measured": "distinct codes in the judge cache"
            if runner_options
            else "distinct successful codes (this study runner has no judge yet)",
        }

    with tempfile.TemporaryDirectory() as directory:
        return asyncio.run(study(Path(directory)))


if __name__ == "__main__":
    print(json.dumps({"run": run_fraction(), "study": study_fraction()}, indent=1))
