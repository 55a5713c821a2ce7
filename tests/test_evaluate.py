from __future__ import annotations

import asyncio
import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pytest

from repro.cli import main
from repro.config import ConfigError
from repro.evaluate import (
    EvalReport,
    EvalStore,
    EvaluationError,
    EvaluationPlan,
    GroupStatistics,
    build_report,
    parse_model_argument,
    run_evaluation,
)
from tests import evaluate_world as world
from tests.doubles.openai_server import OpenAITestServer

REPO = Path(__file__).resolve().parents[1]


def plan_for(tmp_path: Path, eval_dir: Path, **options: object) -> EvaluationPlan:
    models = dict(parse_model_argument(f"{name}={world.model_file(tmp_path, name)}") for name in ("steady", "noisy"))
    return EvaluationPlan(
        release_dir=tmp_path / "release",
        eval_dir=eval_dir,
        models=models,
        **options,  # type: ignore[arg-type]
    )


@pytest.fixture
def release(tmp_path: Path) -> Path:
    return world.write_release(tmp_path / "release")


@pytest.fixture
def report(tmp_path: Path, release: Path) -> EvalReport:
    summary = asyncio.run(run_evaluation(plan_for(tmp_path, tmp_path / "eval")))
    assert (summary.items, summary.answered, summary.failed) == (200, 200, 0)
    return build_report(tmp_path / "eval")


# -- independent computations from the known behaviour of the two scripted models ----------------
def truth(model: str, index: int, rewritten: bool) -> bool:
    return world.steady_correct(index, rewritten) if model == "steady" else world.noisy_correct(index, rewritten)


def wilson(successes: int, trials: int) -> tuple[float, float]:
    z = NormalDist().inv_cdf(0.975)
    share = successes / trials
    centre = (share + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(share * (1 - share) / trials + z * z / (4 * trials * trials)) / (1 + z * z / trials)
    return centre - half, centre + half


def exact_mcnemar(b: int, c: int) -> float:
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, k) for k in range(min(b, c) + 1)) / 2**n
    return min(1.0, 2 * tail)


def ranks(values: list[float]) -> np.ndarray:
    order = sorted(range(len(values)), key=lambda i: values[i])
    result = np.empty(len(values))
    position = 0
    while position < len(order):
        end = position
        while end + 1 < len(order) and values[order[end + 1]] == values[order[position]]:
            end += 1
        for slot in range(position, end + 1):
            result[order[slot]] = (position + end) / 2 + 1
        position = end + 1
    return result


def check_group(row: GroupStatistics, model: str, members: list[int]) -> None:
    original = [truth(model, i, False) for i in members]
    rewritten = [truth(model, i, True) for i in members]
    n = len(members)
    b = sum(o and not r for o, r in zip(original, rewritten, strict=True))
    c = sum(r and not o for o, r in zip(original, rewritten, strict=True))
    assert row.instances == n
    assert row.accuracy_original == pytest.approx(sum(original) / n, abs=1e-12)
    assert row.accuracy_rewritten == pytest.approx(sum(rewritten) / n, abs=1e-12)
    assert (row.accuracy_original_interval.low, row.accuracy_original_interval.high) == pytest.approx(
        wilson(sum(original), n), abs=1e-9
    )
    assert (row.accuracy_rewritten_interval.low, row.accuracy_rewritten_interval.high) == pytest.approx(
        wilson(sum(rewritten), n), abs=1e-9
    )
    assert row.drop == pytest.approx((b - c) / n, abs=1e-12)
    assert (row.discordant_original_only, row.discordant_rewritten_only) == (b, c)
    assert row.mcnemar_p == pytest.approx(exact_mcnemar(b, c), abs=1e-12)
    # a paired bootstrap written here with numpy alone, from another random stream
    differences = np.array(original, dtype=float) - np.array(rewritten, dtype=float)
    means = differences[np.random.default_rng(12345).integers(0, n, size=(40_000, n))].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    assert row.drop_interval.low == pytest.approx(low, abs=0.021)
    assert row.drop_interval.high == pytest.approx(high, abs=0.021)


def test_every_figure_of_the_report_matches_an_independent_computation(report: EvalReport) -> None:
    everyone = list(range(world.INSTANCES))
    assert [model.model for model in report.models] == ["steady", "noisy"]
    steady, noisy = report.models
    # the steady model: every original right, exactly the chosen rewrites wrong
    assert steady.overall.accuracy_original == 1.0
    assert steady.overall.accuracy_rewritten == pytest.approx(1 - len(world.STEADY_FAILS) / 50)
    assert steady.overall.mcnemar_p == pytest.approx(2 * 0.5 ** len(world.STEADY_FAILS))
    for model in report.models:
        check_group(model.overall, model.model, everyone)
        assert [row.group for row in model.by_level] == world.LEVELS
        for row in model.by_level:
            check_group(row, model.model, [i for i in everyone if world.level_of(i) == row.group])
        assert [row.group for row in model.by_type] == world.TYPES
        for row in model.by_type:
            check_group(row, model.model, [i for i in everyone if world.type_of(i) == row.group])
    # grading: every reply of the steady model was a math-verify comparison (thousands separators,
    # decimals), the noisy model's unboxed replies are counted as such
    assert steady.grading_methods == {"math_verify": 100}
    unboxed = sum(1 for i in everyone for r in (False, True) if not world.noisy_correct(i, r) and i % 3 == 0)
    assert noisy.grading_methods == {"math_verify": 100 - unboxed, "no_boxed_answer": unboxed}
    # confound: the numeric-count change is i % 4 by construction; rho against the model-averaged drop
    averaged = [
        np.mean([int(truth(m, i, False)) - int(truth(m, i, True)) for m in ("steady", "noisy")]) for i in everyone
    ]
    counts = [float(world.extra_literals(i)) for i in everyone]
    expected_rho = float(np.corrcoef(ranks(counts), ranks(averaged))[0, 1])
    row = next(row for row in report.confounds if row.metric == "numeric_count_change")
    assert row.instances == 50 and row.spearman_rho == pytest.approx(expected_rho, abs=1e-12)
    assert row.p_value is not None and 0 < row.p_value <= 1
    missing = [row for row in report.confounds if row.metric == "rewritten_solution_length"][0]
    assert missing.spearman_rho is None and "--solutions" in (missing.note or "")


def test_solution_metrics_come_from_a_solutions_file(
    tmp_path: Path, release: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    asyncio.run(run_evaluation(plan_for(tmp_path, tmp_path / "eval")))
    solutions = tmp_path / "solutions.jsonl"
    with solutions.open("w") as handle:
        for i in range(world.INSTANCES):
            row = {
                "instance_id": f"synthetic:{i}#r0",
                "original_solution": "We add.",
                "rewritten_solution": "We add the two numbers" + " and then add zero" * (i % 5) + ".",
            }
            handle.write(json.dumps(row) + "\n")
    assert main(["evaluate-report", str(tmp_path / "eval"), "--json", "--solutions", str(solutions)]) == 0
    printed = json.loads(capsys.readouterr().out)
    rows = {row["metric"]: row for row in printed["confounds"]}
    tables = json.loads((tmp_path / "eval" / "evaluation_tables.json").read_text())
    flat = tables["paired_accuracy"]
    assert len(flat) == 2 * (1 + len(world.LEVELS) + len(world.TYPES))
    steady_all = next(row for row in flat if row["model"] == "steady" and row["by"] == "all")
    assert steady_all["drop"] == printed["models"][0]["overall"]["drop"] == pytest.approx(len(world.STEADY_FAILS) / 50)
    assert rows["rewritten_solution_length"]["instances"] == 50
    assert rows["rewritten_solution_length"]["spearman_rho"] is not None
    (tmp_path / "bad.jsonl").write_text('{"instance_id": "x"}\n')
    assert main(["evaluate-report", str(tmp_path / "eval"), "--solutions", str(tmp_path / "bad.jsonl")]) == 2
    assert "bad.jsonl:1: field 'original_solution'" in " ".join(capsys.readouterr().err.split())


def test_samples_are_requested_explicitly_and_stored_per_sample(tmp_path: Path, release: Path) -> None:
    from repro.llm import ScriptedBackend

    plan = plan_for(tmp_path, tmp_path / "eval", samples=3)
    plan.models["steady"] = plan.models["steady"].model_copy(update={"temperature": 0.7, "top_p": 0.9, "seed": 11})
    backends = {
        "steady": ScriptedBackend(world.steady, model_id="steady"),
        "noisy": ScriptedBackend(world.noisy, model_id="noisy"),
    }
    asyncio.run(run_evaluation(plan, backends=backends))  # type: ignore[arg-type]
    request = backends["steady"].requests[0]
    assert (request.n, request.temperature, request.top_p, request.seed) == (3, 0.7, 0.9, 11)
    assert "\\boxed{ANSWER}" in request.prompt_text()
    with EvalStore(tmp_path / "eval") as store:
        assert len(store.answers("steady")) == 50 * 2 * 3
    report = build_report(tmp_path / "eval")
    assert report.models[0].samples == 3 and report.models[0].overall.accuracy_original == 1.0
    # a second run over the same directory is refused unless resumed, and then asks for nothing
    with pytest.raises(EvaluationError, match="--resume"):
        asyncio.run(run_evaluation(plan, backends=backends))  # type: ignore[arg-type]
    calls = backends["steady"].calls
    plan.resume = True
    summary = asyncio.run(run_evaluation(plan, backends=backends))  # type: ignore[arg-type]
    assert (summary.already_done, summary.answered, backends["steady"].calls) == (200, 0, calls)
    plan.models["noisy"] = plan.models["noisy"].model_copy(update={"temperature": 1.0})
    with pytest.raises(EvaluationError, match="models differ.*noisy"):
        asyncio.run(run_evaluation(plan, backends=backends))  # type: ignore[arg-type]


def test_model_specs() -> None:
    name, settings = parse_model_argument("qwen=Qwen/Qwen2.5-7B@http://127.0.0.1:8000/v1", api_key_env="KEY")
    assert (name, settings.model, settings.base_url, settings.api_key_env) == (
        "qwen",
        "Qwen/Qwen2.5-7B",
        "http://127.0.0.1:8000/v1",
        "KEY",
    )
    with pytest.raises(ConfigError, match="expected NAME=SPEC"):
        parse_model_argument("qwen")
    with pytest.raises(ConfigError, match="MODEL@BASE_URL"):
        parse_model_argument("qwen=Qwen2.5-7B")
    with pytest.raises(ConfigError, match="missing.yaml: file not found"):
        parse_model_argument("qwen=missing.yaml")


def test_bad_model_file_names_the_field(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text("model: x\ntemperature: hot\n")
    with pytest.raises(ConfigError, match="m.yaml: temperature"):
        parse_model_argument(f"x={path}")


# -- the same evaluation over HTTP, killed and resumed ---------------------------------------------
def _command(release: Path, eval_dir: Path, base_url: str, *extra: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "repro.cli",
        "evaluate",
        str(release),
        "--model",
        f"steady=steady@{base_url}",
        "--model",
        f"noisy=noisy@{base_url}",
        "--eval-dir",
        str(eval_dir),
        "--concurrency",
        "4",
        *extra,
    ]


def _stored_questions(eval_dir: Path, release: Path) -> set[tuple[str, str]]:
    """(model, question text) of every item whose graded answer was stored."""
    questions = {}
    for line in (release / "data" / "test.jsonl").read_text().splitlines():
        row = json.loads(line)
        questions[(row["instance_id"], "original")] = row["original_question"]
        questions[(row["instance_id"], "rewritten")] = row["rewritten_question"]
    with sqlite3.connect(eval_dir / "evaluation.sqlite") as connection:
        rows = connection.execute("SELECT DISTINCT model, instance_id, variant FROM answers").fetchall()
    return {(model, questions[(instance, variant)]) for model, instance, variant in rows}


def _asked(body: dict[str, object]) -> tuple[str, str]:
    content = str(body["messages"][-1]["content"])  # type: ignore[index]
    question = content.split("Problem:\n", 1)[1].strip()
    return str(body["model"]), question


def _wait_until_quiet(server: OpenAITestServer, quiet_s: float = 1.0, limit_s: float = 30.0) -> None:
    """Until nothing is in flight and no request has arrived for ``quiet_s``."""
    deadline = time.monotonic() + limit_s
    seen, since = len(server.requests), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.05)
        if len(server.requests) != seen or server.in_flight:
            seen, since = len(server.requests), time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return


def test_http_evaluation_killed_and_resumed_repeats_no_stored_request_and_reports_identically(
    tmp_path: Path, release: Path
) -> None:
    eval_dir = tmp_path / "eval"
    environment = {**os.environ, "OPENAI_API_KEY": "test-key"}
    with OpenAITestServer(world.http_responder, latency_s=0.03) as server:
        process = subprocess.Popen(
            _command(release, eval_dir, server.base_url),
            cwd=REPO,
            env=environment,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 60
        while len(server.requests) < 60 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
        process.wait()
        assert process.returncode == -signal.SIGKILL, "the evaluation finished before it could be killed"
        _wait_until_quiet(server)  # requests the dead client sent may still be in the server's buffers
        before = [_asked(body) for body in server.requests]
        stored = _stored_questions(eval_dir, release)
        assert 0 < len(stored) < 200

        # the evaluation directory stores its models: the resume names none
        bare = [sys.executable, "-m", "repro.cli", "evaluate", str(release), "--eval-dir", str(eval_dir)]
        resumed = subprocess.run(
            [*bare, "--resume", "--concurrency", "4"],
            cwd=REPO,
            env=environment,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert resumed.returncode == 0, resumed.stderr
        after = [_asked(body) for body in server.requests[len(before) :]]
        # nothing whose answer was stored is asked again; only requests lost in flight are
        assert not set(after) & stored
        assert len(after) == len(set(after))
        assert set(before) | set(after) == {
            (model, question)
            for model in ("steady", "noisy")
            for line in (release / "data" / "test.jsonl").read_text().splitlines()
            for question in (json.loads(line)["original_question"], json.loads(line)["rewritten_question"])
        }
        repeated = len(before) + len(after) - 200
        assert 0 <= repeated <= 4, "at most the requests in flight at the kill (--concurrency 4) are sent twice"

        # an uninterrupted evaluation of the same models gives the identical report
        reference_dir = tmp_path / "uninterrupted"
        models = dict(
            parse_model_argument(f"{name}={name}@{server.base_url}", api_key_env="TEST_KEY_UNUSED")
            for name in ("steady", "noisy")
        )
        resumed_models = {model.name: model.settings for model in EvalStore(eval_dir).models()}
        for name in models:
            models[name] = models[name].model_copy(update={"api_key_env": resumed_models[name].api_key_env})
        asyncio.run(run_evaluation(EvaluationPlan(release_dir=release, eval_dir=reference_dir, models=models)))
    resumed_report = build_report(eval_dir)
    assert resumed_report.model_dump() == build_report(reference_dir).model_dump()
    # and so does the same evaluation through the scripted backends, without HTTP
    asyncio.run(run_evaluation(plan_for(tmp_path, tmp_path / "scripted")))
    assert resumed_report.model_dump() == build_report(tmp_path / "scripted").model_dump()
    assert main(["evaluate-report", str(eval_dir)]) == 0


def test_a_failed_request_is_left_for_resume_not_graded_wrong(tmp_path: Path, release: Path) -> None:
    from repro.llm import ScriptedBackend
    from repro.llm.protocol import ModelRequest

    def flaky(request: ModelRequest, sample_index: int) -> str:
        if "[q7]" in request.prompt_text():
            raise LookupError("endpoint down for this question")
        return world.steady(request, sample_index)

    plan = plan_for(tmp_path, tmp_path / "eval")
    noisy = ScriptedBackend(world.noisy, model_id="noisy")
    first = asyncio.run(
        run_evaluation(plan, backends={"steady": ScriptedBackend(flaky, model_id="steady"), "noisy": noisy})
    )
    assert (first.answered, first.failed) == (198, 2)
    assert all("synthetic:7#r0" in line for line in first.errors)
    assert build_report(tmp_path / "eval").models[0].missing_instances == 1
    plan.resume = True
    steady = ScriptedBackend(world.steady, model_id="steady")
    second = asyncio.run(run_evaluation(plan, backends={"steady": steady, "noisy": noisy}))
    assert (second.already_done, second.answered, second.failed, steady.calls) == (198, 2, 0, 2)
    report = build_report(tmp_path / "eval")
    assert report.models[0].missing_instances == 0 and report.models[0].overall.accuracy_original == 1.0


def test_rows_no_real_lean_checked_are_left_out_unless_asked_for(tmp_path: Path) -> None:
    release = world.write_release(tmp_path / "release")
    path = release / "data" / "test.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows[:5]:
        row["unverified"] = True
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    summary = asyncio.run(run_evaluation(plan_for(tmp_path, tmp_path / "eval")))
    assert (summary.excluded_unverified, summary.items) == (5, 2 * 45 * 2)
    report = build_report(tmp_path / "eval")
    assert (report.instances, report.unverified_instances) == (45, 0)
    included = asyncio.run(run_evaluation(plan_for(tmp_path, tmp_path / "all", include_unverified=True)))
    assert included.items == 200 and build_report(tmp_path / "all").unverified_instances == 5
    with pytest.raises(EvaluationError, match="include_unverified"):
        asyncio.run(run_evaluation(plan_for(tmp_path, tmp_path / "eval", resume=True, include_unverified=True)))


def test_a_solutions_file_with_several_bad_rows_names_each(tmp_path: Path) -> None:
    from repro.evaluate.report import ReportInputError, read_solutions

    path = tmp_path / "solutions.jsonl"
    rows = [
        {"instance_id": "a#r0", "original_solution": "x", "rewritten_solution": "y"},
        {"instance_id": "b#r0", "original_solution": 3, "rewritten_solution": "y"},
        {"original_solution": "x"},
    ]
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    with pytest.raises(ReportInputError) as caught:
        read_solutions(path)
    message = str(caught.value)
    assert "2 bad rows (3 problems)" in message and "solutions.jsonl:1:" not in message
    assert "solutions.jsonl:2: field 'original_solution': Input should be a valid string" in message
    assert "solutions.jsonl:3: field 'instance_id': missing" in message
    assert "solutions.jsonl:3: field 'rewritten_solution': missing" in message
