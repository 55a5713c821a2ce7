"""The inspect_ai and lm-evaluation-harness tasks written beside a release, run by those tools themselves."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from repro.evaluate import grade_response
from repro.release import write_release
from repro.release.exports import write_release_exports
from tests import evaluate_world as world
from tests.test_release import synthetic_run


@pytest.fixture
def release(tmp_path: Path) -> Path:
    directory = world.write_release(tmp_path / "release")
    write_release_exports(directory)
    return directory


def test_repro_release_writes_both_task_files_and_the_grader_beside_the_data(tmp_path: Path) -> None:
    synthetic_run(tmp_path / "run", real_lean=True)
    write_release(tmp_path / "run", tmp_path / "out")
    for name in ("task.py", "repro_grading.py", "lm_eval/utils.py", "lm_eval/repro_rewritten.yaml"):
        assert (tmp_path / "out" / name).is_file(), name
    from repro.evaluate import grading

    exported = (tmp_path / "out" / "repro_grading.py").read_text()
    assert exported.endswith(Path(grading.__file__).read_text()), "the tasks must grade exactly as repro evaluate"


def _steady_output(messages: list[Any], tools: Any, tool_choice: Any, config: Any) -> Any:
    from inspect_ai.model import ModelOutput, ModelUsage

    output = ModelOutput.from_content(model="mockllm/model", content=world.reply("steady", messages[-1].text))
    # usage given, so the mock model need not count tokens (its tokenizer file is a download)
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return output


def test_inspect_eval_runs_the_exported_task_offline_and_scores_every_sample(
    release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("inspect_ai", reason="inspect_ai is in the dev extra")
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model

    monkeypatch.chdir(release)  # as `inspect eval task.py` run in the release directory
    logs = inspect_eval(
        "task.py",
        model=get_model("mockllm/model", custom_outputs=_steady_output),
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    by_task = {log.eval.task: log for log in logs}
    assert sorted(by_task) == ["repro_original", "repro_rewritten"]
    for name, log in by_task.items():
        assert log.status == "success", (name, log.error)
        assert log.samples is not None and len(log.samples) == world.INSTANCES
        assert all(sample.scores and "math_verify_answer" in sample.scores for sample in log.samples)
        accuracy = log.results.scores[0].metrics["accuracy"].value  # type: ignore[union-attr]
        expected = 1.0 if name == "repro_original" else 1 - len(world.STEADY_FAILS) / world.INSTANCES
        assert accuracy == pytest.approx(expected), name
    wrong = {
        str(sample.id)
        for sample in by_task["repro_rewritten"].samples or []
        if sample.scores and sample.scores["math_verify_answer"].value != "C"
    }
    assert wrong == {f"synthetic:{i}#r0" for i in world.STEADY_FAILS}


def test_lm_eval_loads_the_exported_tasks_with_its_own_task_manager(release: Path) -> None:
    pytest.importorskip("lm_eval", reason="lm-eval is in the dev extra")
    from lm_eval.tasks import TaskManager

    manager = TaskManager(include_path=str(release / "lm_eval"), include_defaults=False)
    assert {"repro_original", "repro_rewritten", "repro_release"} <= set(manager.all_tasks)
    tasks = manager.load(["repro_original", "repro_rewritten"])["tasks"]
    for name, rewritten in (("repro_original", False), ("repro_rewritten", True)):
        task = tasks[name]
        docs = list(task.test_docs())
        assert len(docs) == world.INSTANCES
        for index, doc in enumerate(docs):
            prompt = task.doc_to_text(doc)
            assert "\\boxed{ANSWER}" in prompt and f"[q{index}]" in prompt
            reply = world.reply("steady", prompt)
            score = task.process_results(doc, [reply])["math_verify"]
            assert score == float(world.steady_correct(index, rewritten)), (name, index)
            reference = doc["new_answer"] if rewritten else doc["original_answer"]
            assert score == float(grade_response(reply, reference).correct)
    # the group of both tasks resolves too
    assert manager.load("repro_release")["group_map"]["repro_release"] == ["repro_original", "repro_rewritten"]


def test_lm_eval_evaluates_the_exported_tasks_end_to_end_with_its_dummy_model(release: Path) -> None:
    pytest.importorskip("lm_eval", reason="lm-eval is in the dev extra")
    from lm_eval import simple_evaluate
    from lm_eval.tasks import TaskManager

    results = simple_evaluate(
        model="dummy",
        tasks=["repro_original", "repro_rewritten"],
        task_manager=TaskManager(include_path=str(release / "lm_eval"), include_defaults=False),
        log_samples=True,
    )
    assert results is not None
    for name in ("repro_original", "repro_rewritten"):
        samples = results["samples"][name]
        assert len(samples) == world.INSTANCES and all("math_verify" in sample for sample in samples)
        # the dummy model's reply carries no boxed answer: every sample is scored, and scored wrong
        assert results["results"][name]["math_verify,none"] == 0.0


def _half_unverified(release: Path) -> int:
    """Marks every other row unverified (as a --allow-unverified release holds them); returns how many stay."""
    import json

    path = release / "data" / "test.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for index, row in enumerate(rows):
        row["unverified"] = index % 2 == 1
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return sum(not row["unverified"] for row in rows)


def test_the_exported_tasks_leave_unverified_rows_out_as_repro_evaluate_does(
    release: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("inspect_ai", reason="inspect_ai is in the dev extra")
    pytest.importorskip("lm_eval", reason="lm-eval is in the dev extra")
    from inspect_ai import eval as inspect_eval
    from inspect_ai.model import get_model
    from lm_eval.tasks import TaskManager

    verified = _half_unverified(release)
    monkeypatch.chdir(release)
    model = get_model("mockllm/model", custom_outputs=_steady_output)
    by_default = inspect_eval("task.py@repro_rewritten", model=model, log_dir=str(tmp_path / "a"), display="none")
    asked = inspect_eval(
        "task.py@repro_rewritten",
        model=model,
        log_dir=str(tmp_path / "b"),
        display="none",
        task_args={"include_unverified": True},
    )
    assert len(by_default[0].samples or []) == verified and len(asked[0].samples or []) == world.INSTANCES
    assert (
        f"left out {world.INSTANCES - verified} of {world.INSTANCES} rows marked unverified" in capfd.readouterr().err
    )

    def docs() -> int:
        manager = TaskManager(include_path=str(release / "lm_eval"), include_defaults=False)
        return len(list(manager.load(["repro_rewritten"])["tasks"]["repro_rewritten"].test_docs()))

    assert docs() == verified
    monkeypatch.setenv("REPRO_INCLUDE_UNVERIFIED", "1")
    assert docs() == world.INSTANCES
