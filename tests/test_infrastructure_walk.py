"""M2 (issue 30): an infrastructure failure in any stage and any lever leaves the problem unfinished and
resumable, never rejected. One run walks every stage and lever, each problem with its own fault: a model
endpoint that fails for that problem's requests at one stage, or a Lean backend that answers "unavailable"
for that problem's checks made by one stage or lever. Then the faults are cleared and a resume finishes
every problem, retaining each (nothing stored was taken for a verdict).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import repro.app as app
from repro.app import run
from repro.config import JudgeSettings, build_config
from repro.judge.verdict import JudgeRequest, JudgeStatus, JudgeVerdict
from repro.lean.protocol import InfraStatus, LeanResult, Verifier, infrastructure_failure
from repro.llm.protocol import ModelRequest
from repro.pipeline import theorem_name_for
from repro.records import AttemptStatus, CandidateStatus, ReasonCode
from repro.store import RunReader
from repro.waiting import current_subject
from tests import pipeline_world as world
from tests.doubles.judge import StandInJudge
from tests.repro_cli import repro

FAULTS_ENV = "REPRO_WALK_FAULTS"  # a JSON file: {"endpoint": {tag: prompt marker}, "lean": {candidate: caller}}

# (world case, fault): an endpoint fault names a marker of the stage's prompt; a Lean fault names the
# pipeline function on the stack when the check is made
ENDPOINT_MARKERS = {
    "rewrite": "You rewrite math problems",
    "screen": "strict reviewer",
    "formalize": "autoformalize",
    "align": "faithfully encodes",
    "prove": "Complete the following Lean 4 code",
    "feedback": "rejected by Lean",
    "refutation feedback": "Lean proved its negation",
    "classify": "Classify the candidate",
}
LEAN_CALLERS = {
    "formalize": "formalize",
    "check": "_vacuous",
    "verify": "_verify",
    "salvage": "_salvage",
    "feedback": "_feedback_rounds",
    "refutation": "_refuted",
}
WALK: list[tuple[str, str, str]] = [
    ("retained", "endpoint", "rewrite"),
    ("retained", "endpoint", "screen"),
    ("retained", "endpoint", "formalize"),
    ("retained", "endpoint", "align"),
    ("retained", "endpoint", "prove"),
    ("feedback_fixes", "endpoint", "feedback"),
    ("refuted", "endpoint", "refutation feedback"),
    ("retained", "endpoint", "classify"),
    ("retained", "lean", "formalize"),
    ("retained", "lean", "check"),
    ("retained", "lean", "verify"),
    ("special_token_header", "lean", "salvage"),
    ("feedback_fixes", "lean", "feedback"),
    ("refuted", "lean", "refutation"),
    ("retained", "judge", "judge"),
    # the answer stage asks its extract model and Lean only for a witness of an ∃ statement, and the
    # fake REPL cannot judge a proof of one: the stage's own tests give model_call_failed and
    # lean_unavailable there (test_answer_statement.py), which the pipeline leaves unfinished as here
]


def _faults(kind: str) -> dict[str, str]:
    path = os.environ.get(FAULTS_ENV)
    faults = json.loads(Path(path).read_text()) if path and Path(path).exists() else {}
    return dict(faults.get(kind, {}))


def responder(request: ModelRequest, sample_index: int) -> str | tuple[str, str]:
    """The pipeline world, with an endpoint that fails where a fault says."""
    prompt = request.prompt_text()
    for tag, marker in _faults("endpoint").items():
        if tag in prompt and marker in prompt:
            raise LookupError(f"endpoint down (simulated) for {marker!r}")
    return world.responder(request, sample_index)


class FailingLean:
    """A verifier that answers ``unavailable`` for a problem's checks made by one stage or lever (the
    named pipeline function is on the stack, and the code names that problem's theorem)."""

    def __init__(self, inner: Verifier) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def _failing(self) -> bool:
        caller = _faults("lean").get(current_subject() or "")
        if caller is None:
            return False
        callers = set()
        frame = sys._getframe(1)
        while frame is not None:
            callers.add(frame.f_code.co_name)
            frame = frame.f_back  # type: ignore[assignment]
        if caller == "_verify" and "_feedback_rounds" in callers:
            return False  # a feedback reply's check is the feedback lever's
        return caller in callers

    async def check(self, code: str, header: str) -> LeanResult:
        if self._failing():
            return infrastructure_failure(self.inner, InfraStatus.unavailable, "Lean down (simulated)")
        return await self.inner.check(code, header)

    async def check_sequence(self, commands: list[str], header: str) -> list[LeanResult]:
        if self._failing():
            return [infrastructure_failure(self.inner, InfraStatus.unavailable, "Lean down (simulated)")]
        return await self.inner.check_sequence(commands, header)


class FailingJudge(StandInJudge):
    """The stand-in kernel judge, giving no verdict (its tool unavailable) for a faulted problem's proofs."""

    async def judge(self, request: JudgeRequest) -> JudgeVerdict:
        verdict = await super().judge(request)
        if current_subject() in _faults("judge"):
            return verdict.model_copy(
                update={"status": JudgeStatus.unavailable, "cause": "missing", "detail": "judge down (simulated)"}
            )
        return verdict


def walk_judge(settings: JudgeSettings) -> FailingJudge:
    return FailingJudge()


def _fault_table(problem_ids: list[str]) -> dict[str, dict[str, str]]:
    """Each problem's fault: an endpoint's keyed by what its prompts carry (its question's fault tag for
    rewrite and screen, its theorem name from formalize on), Lean's by its candidate."""
    table: dict[str, dict[str, str]] = {"endpoint": {}, "lean": {}, "judge": {}}
    for index, (_, kind, where) in enumerate(WALK):
        candidate = f"{problem_ids[index]}#r0"
        if kind == "endpoint":
            key = f"[[fault:{index}]]" if where in ("rewrite", "screen") else theorem_name_for(candidate)
            table["endpoint"][key] = ENDPOINT_MARKERS[where]
        elif kind == "judge":
            table.setdefault("judge", {})[candidate] = "down"
        else:
            table["lean"][candidate] = LEAN_CALLERS[where]
    return table


def _write_dataset(path: Path) -> Path:
    rows = [
        {
            "question": f"Problem {i} [[case:{case}]] [[fault:{i}]]: a robe needs 3600 threads in 12 bolts. How many"
            " per bolt?",
            "answer": "#### 300",
        }
        for i, (case, _, _) in enumerate(WALK)
    ]
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    return path


def _config(dataset: Path, rules: Path) -> dict[str, Any]:
    config = world.world_config(str(dataset))
    for settings in config["models"].values():
        settings["script"] = "tests.test_infrastructure_walk:responder"
    config["prove"] = {"k": 3, "strategy": "parallel", "feedback_rounds": 1}
    config["lean"]["factory_options"] = {"rules": str(rules)}
    config["judge"] = {"backend": "factory", "factory": "tests.test_infrastructure_walk:walk_judge"}
    config["stop_after_failed_calls"] = 1000  # every fault is a failed call; the walk wants them all
    return config


@pytest.fixture
def walk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    dataset = _write_dataset(tmp_path / "problems.jsonl")
    rules = tmp_path / "rules.json"
    message = {"severity": "error", "pos": {"line": 3, "column": 12}, "data": "unknown identifier 'BADLEMMA'"}
    rules.write_text(json.dumps([{"match": "BADLEMMA", "action": "reply", "messages": [message]}]))
    faults = tmp_path / "faults.json"
    problem_ids = [f"world:{index}" for index in range(len(WALK))]
    faults.write_text(json.dumps(_fault_table(problem_ids)))
    monkeypatch.setenv(FAULTS_ENV, str(faults))
    built = app.build_verifier
    monkeypatch.setattr(app, "build_verifier", lambda settings, store=None: FailingLean(built(settings, store)))
    yield {"config": build_config(_config(dataset, rules)), "run_dir": tmp_path / "run", "faults": faults}


def test_every_stage_and_lever_with_a_failing_endpoint_or_lean_leaves_its_problem_unfinished(
    walk: dict[str, Any],
) -> None:
    outcome = run(walk["config"], walk["run_dir"])
    with RunReader(walk["run_dir"]) as store:
        outcomes = store.problem_outcomes()
        wrong = []
        for index, (case, kind, where) in enumerate(WALK):
            problem_id = f"world:{index}"
            [candidate] = [c for c in store.candidates() if c.problem_id == problem_id]
            failed = [a for a in store.attempts(candidate_id=candidate.candidate_id) if a.status == AttemptStatus.error]
            reasons = {a.reason for a in failed}
            expected = {
                "endpoint": ReasonCode.model_call_failed,
                "lean": ReasonCode.lean_unavailable,
                "judge": ReasonCode.judge_unavailable,
            }[kind]
            if outcomes[problem_id] is not None or candidate.status != CandidateStatus.unfinished:
                wrong.append(f"{case} / {kind} at {where}: {candidate.status.value} {candidate.reject_reason}")
            elif expected not in reasons:
                wrong.append(f"{case} / {kind} at {where}: no failed attempt with {expected.value} ({reasons})")
        assert wrong == [], "\n".join(wrong)
        unfinished = dict(store.unfinished_problems(limit=100))
    assert (outcome.summary.retained, outcome.summary.rejected) == (0, 0), "no fault is a verdict"
    assert outcome.summary.incomplete == len(WALK)
    assert all(unfinished[f"world:{index}"] for index in range(len(WALK))), "each says why it is unfinished"

    walk["faults"].unlink()  # the endpoint and Lean are back
    resumed = run(None, walk["run_dir"], resume=True)
    assert (resumed.summary.incomplete, resumed.summary.rejected) == (0, 0)
    with RunReader(walk["run_dir"]) as store:
        assert set(store.problem_outcomes().values()) == {"retained"}
        levers = {c.problem_id: c.proof_lever for c in store.candidates()}
    assert levers["world:5"] == "feedback" and levers["world:11"] == "salvage"


def test_status_counts_a_failed_feedback_call_as_failed_not_as_a_check(tmp_path: Path) -> None:
    """The trial's case in a subprocess: feedback calls fail (HTTP-level, after retries) during a run."""
    dataset = _write_dataset(tmp_path / "problems.jsonl")
    rows = [json.loads(line) for line in dataset.read_text().splitlines()]
    dataset.write_text(json.dumps(rows[5]) + "\n")  # the feedback_fixes problem alone
    rules = tmp_path / "rules.json"
    message = {"severity": "error", "pos": {"line": 3, "column": 12}, "data": "unknown identifier 'BADLEMMA'"}
    rules.write_text(json.dumps([{"match": "BADLEMMA", "action": "reply", "messages": [message]}]))
    config = _config(dataset, rules)
    faults = tmp_path / "faults.json"
    faults.write_text(json.dumps({"endpoint": {"[[case:feedback_fixes]]": ENDPOINT_MARKERS["feedback"]}}))
    config_path = tmp_path / "config.yaml"
    config_path.write_text(json.dumps(config))
    env = {FAULTS_ENV: str(faults)}
    first = repro("run", "--config", str(config_path), "--run-dir", str(tmp_path / "run"), env=env)
    assert first.returncode == 3, first.stderr
    assert "unfinished 1" in first.stderr + first.stdout
    status = json.loads(repro("status", str(tmp_path / "run"), "--json", env=env).stdout)
    feedback = status["rates"]["levers"]["cost"]["feedback"]
    assert feedback["attempts"] == 0 and feedback["failed"] == 3, feedback
    faults.unlink()
    again = repro("run", "--resume", "--run-dir", str(tmp_path / "run"), env=env)
    assert again.returncode in (0, 4), again.stderr
    with RunReader(tmp_path / "run") as store:
        assert store.problem_outcomes() == {"world:0": "retained"}
