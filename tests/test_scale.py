"""Scale behaviour a user notices: the batching store writer survives kill -9, problems stream,
status is computed by aggregates that agree with the attempts, resume re-checks Lean for real,
unfinished problems are named, and reporting commands stay light."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from repro.app import build_clients, run
from repro.cli import EXIT_UNFINISHED, main
from repro.config import build_config
from repro.lean import build_verifier
from repro.metrics import funnel, run_metrics
from repro.pipeline import Pipeline
from repro.records import SourceProblem
from repro.store import _MIGRATIONS, RunStore
from tests.doubles.judge import StandInJudge
from tests.pipeline_world import screen_outage, world_config, write_problems
from tests.test_pipeline import CASES, rules_file

REPO = Path(__file__).resolve().parents[1]

BATCH_WRITER = textwrap.dedent("""
    import sys
    from repro.records import AttemptStatus, Candidate, ModelCallRecord, Stage, StageAttempt
    from repro.store import RunStore

    store = RunStore(sys.argv[1])
    total = int(sys.argv[2])
    done = {a.attempt_number for a in store.attempts()}
    store.start_writer(batch_size=400)
    for number in range(total):
        if number in done:
            continue
        candidate = Candidate(candidate_id="c", problem_id="p", rewrite_index=0, proof_attempt_number=number)
        call = ModelCallRecord(stage="prove", model_id="m", backend_id="b", cache_key=f"k{number}",
                               cache_hit=False, samples=1, tokens_in=3)
        store.record_model_response(call, {f"k{number}": {"text": "y" * 500}})
        attempt = StageAttempt(candidate_id="c", problem_id="p", stage=Stage.prove, attempt_number=number,
                               input_hash=str(number), status=AttemptStatus.passed, output={"text": "x" * 2000})
        store.record_attempt(attempt, candidate)
        print("queued", number, flush=True)
    store.close()
    print("done", flush=True)
""")


def _committed_attempts(run_dir: Path) -> int:
    with sqlite3.connect(f"file:{run_dir / 'run.sqlite'}?mode=ro", uri=True, timeout=30) as raw:
        return int(raw.execute("SELECT COUNT(*) FROM attempts").fetchone()[0])


def test_killing_the_batching_writer_mid_batch_leaves_a_consistent_prefix(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    RunStore(run_dir).close()
    writer = subprocess.Popen(
        [sys.executable, "-c", BATCH_WRITER, str(run_dir), "20000"], stdout=subprocess.PIPE, text=True
    )
    assert writer.stdout is not None
    queued = 0
    # well into its batches (at least one committed: on a fast machine the producer can queue thousands
    # before the writer thread commits its first), with more queued behind them
    while True:
        queued = int(writer.stdout.readline().split()[1])
        if queued >= 3000 and queued % 100 == 0 and _committed_attempts(run_dir):
            break
        assert queued < 19999, "the writer committed nothing while 20000 attempts were queued"
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()

    with sqlite3.connect(run_dir / "run.sqlite") as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        responses = raw.execute("SELECT COUNT(*) FROM response_cache").fetchone()[0]
        calls = raw.execute("SELECT COUNT(*) FROM model_calls").fetchone()[0]
        tokens = raw.execute("SELECT tokens_in FROM model_totals").fetchone()
    store = RunStore(run_dir)
    numbers = sorted(a.attempt_number for a in store.attempts())
    assert numbers == list(range(len(numbers))), "a gap-free prefix: no write lost before a committed one"
    assert 0 < len(numbers) <= queued
    assert store.candidates()[0].proof_attempt_number == numbers[-1], "candidate row committed with its attempt"
    assert responses == calls and tokens[0] == 3 * calls, "no cached answer without its accounting, nor the reverse"
    assert calls in (len(numbers), len(numbers) + 1)  # a batch may end between a response and its attempt
    store.close()

    finished = subprocess.run(
        [sys.executable, "-c", BATCH_WRITER, str(run_dir), "20000"], capture_output=True, text=True
    )
    assert finished.stdout.strip().endswith("done"), finished.stderr
    with RunStore(run_dir) as store:
        assert sorted(a.attempt_number for a in store.attempts()) == list(range(20000))


def _funnel_from_attempts(store: RunStore) -> dict[str, tuple[int, int]]:
    """The funnel the slow way: every attempt loaded, distinct candidates per stage (a salvage or feedback
    attempt is a verification by a lever: it counts for verify)."""
    reached: dict[str, set[str]] = defaultdict(set)
    passed: dict[str, set[str]] = defaultdict(set)
    for attempt in store.attempts():
        stage = "verify" if attempt.stage.value in ("salvage", "feedback") else attempt.stage.value
        reached[stage].add(attempt.candidate_id)
        if attempt.status.value == "passed":
            passed[stage].add(attempt.candidate_id)
    return {stage: (len(reached[stage]), len(passed[stage])) for stage in reached}


@pytest.fixture(scope="module")
def world_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp_path = tmp_path_factory.mktemp("scale-world")
    dataset = write_problems(tmp_path / "problems.jsonl", CASES * 2)
    config = world_config(str(dataset), retries={"rewrites_per_problem": 2, "formalizations_per_rewrite": 2})
    config["lean"]["fake_rules"] = rules_file(tmp_path)
    run(build_config(config), tmp_path / "run")
    return tmp_path / "run"


def test_the_funnel_from_stored_ranks_equals_the_funnel_from_every_attempt(world_store: Path) -> None:
    with RunStore(world_store, create=False) as store:
        slow = _funnel_from_attempts(store)
        fast = funnel(store)
    assert len(slow) >= 6, "the world exercises most stages"
    for stage, row in fast.items():
        assert (row["reached"], row["passed"]) == slow.get(stage, (0, 0)), stage


def test_a_store_of_the_previous_schema_migrates_and_reports_the_same(world_store: Path, tmp_path: Path) -> None:
    old = tmp_path / "old"
    old.mkdir()
    with sqlite3.connect(old / "run.sqlite") as raw:
        raw.executescript(_MIGRATIONS[0])
        raw.execute("INSERT INTO meta(key, value) VALUES ('schema_version', '1')")
        raw.execute("ATTACH DATABASE ? AS new", (str(world_store / "run.sqlite"),))
        raw.executescript(
            """
            INSERT INTO problems SELECT problem_id, draw_order, payload, outcome FROM new.problems;
            INSERT INTO candidates SELECT candidate_id, problem_id, status, reject_stage, reject_reason, payload,
                updated_at FROM new.candidates;
            INSERT INTO attempts SELECT attempt_id, candidate_id, problem_id, stage, attempt_number, status, reason,
                payload FROM new.attempts;
            INSERT INTO model_calls SELECT * FROM new.model_calls;
            """
        )
    with RunStore(world_store, create=False) as current, RunStore(old) as migrated:
        assert run_metrics(migrated, 3) == run_metrics(current, 3)


def test_a_run_draws_lazily_from_an_endless_stream_until_its_target(tmp_path: Path) -> None:
    pulled = 0

    def endless() -> Iterator[SourceProblem]:
        nonlocal pulled
        while True:
            pulled += 1
            yield SourceProblem(
                problem_id=f"s{pulled}",
                source="s",
                source_id=str(pulled),
                question="3600 threads, 12 bolts?",
                answer="300",
            )

    config = build_config(world_config("unused.jsonl", problems_in_flight=4))

    async def go() -> Any:
        store = RunStore(tmp_path / "run")
        store.start_writer()
        verifier = build_verifier(config.lean, store)
        try:
            return await Pipeline(config, store, build_clients(config, store), verifier, StandInJudge()).run(
                endless(), target=5
            )
        finally:
            await verifier.close()
            store.close()

    summary = asyncio.run(go())
    assert summary.retained >= 5 and summary.drawn <= 5 + 4, "drawing stops once the target is met"
    assert pulled <= summary.drawn + 1, "the stream is read one problem at a time, never ahead"


def _write_config(tmp_path: Path, rules: Path) -> Path:
    dataset = write_problems(tmp_path / "problems.jsonl", ["retained"] * 3)
    config = world_config(str(dataset))
    config["lean"]["fake_rules"] = str(rules)
    path = tmp_path / "world.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _fresh_model_calls(run_dir: Path) -> int:
    with RunStore(run_dir, create=False) as store:
        return sum(row["calls"] for row in store.model_totals())


def test_lean_breaking_before_a_resume_stops_it_before_any_model_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    rules = tmp_path / "rules.json"
    rules.write_text("[]")
    outage = screen_outage(monkeypatch, tmp_path)
    config = _write_config(tmp_path, rules)
    run_dir = tmp_path / "run"

    # the screen endpoint is down: every problem is left unfinished, named with its cause
    assert main(["run", "--config", str(config), "--run-dir", str(run_dir)]) == EXIT_UNFINISHED
    err = capsys.readouterr().err
    assert "3 problems are unfinished" in err and "screen: model_call_failed" in err and "simulated outage" in err
    assert f"repro run --resume --run-dir {run_dir}" in err
    calls_before = _fresh_model_calls(run_dir)
    assert calls_before > 0

    # the endpoint is back but Lean broke (every REPL crashes); the run's Lean cache still says OK
    outage.unlink()
    rules.write_text(json.dumps([{"match": ".", "action": "crash"}]))
    assert main(["run", "--resume", "--run-dir", str(run_dir)]) == 3  # Lean unavailable: infrastructure
    err = capsys.readouterr().err
    assert "Lean backend" in err and "no model was called" in err
    assert _fresh_model_calls(run_dir) == calls_before

    # Lean repaired: the resume finishes every problem and exits 0
    rules.write_text("[]")
    assert main(["run", "--resume", "--run-dir", str(run_dir)]) == 0
    capsys.readouterr()
    status = json.loads(_run_cli_json(["status", str(run_dir), "--json"], capsys))
    assert status["rates"]["retained"] == 3 and status["unfinished"]["count"] == 0


def _run_cli_json(arguments: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(arguments) == 0
    return capsys.readouterr().out


HEAVY_PROBE = textwrap.dedent("""
    import sys
    from repro.cli import main
    try:
        main(sys.argv[1:])
    except SystemExit:
        pass
    print("HEAVY", sorted(m for m in ("scipy", "datasets", "torch", "vllm") if m in sys.modules))
""")


def test_help_and_status_never_import_heavy_libraries(world_store: Path) -> None:
    for arguments in (["--help"], ["status", str(world_store)], ["status", str(world_store), "--json"]):
        probe = subprocess.run(
            [sys.executable, "-c", HEAVY_PROBE, *arguments], cwd=REPO, capture_output=True, text=True, check=True
        )
        assert probe.stdout.strip().splitlines()[-1] == "HEAVY []", (arguments, probe.stdout[-500:])


def test_a_kimina_fleet_spreads_checks_within_each_servers_concurrency_and_skips_a_dead_one() -> None:
    from repro.config import LeanSettings
    from tests.test_lean_pool import KiminaStub, sentinel_echoes

    in_flight: dict[str, int] = defaultdict(int)
    peak: dict[str, int] = defaultdict(int)
    lock = threading.Lock()

    def answering(name: str) -> Any:
        def answer(snippet: dict[str, Any]) -> dict[str, Any]:
            with lock:
                in_flight[name] += 1
                peak[name] = max(peak[name], in_flight[name])
            time.sleep(0.1)
            with lock:
                in_flight[name] -= 1
            return {"error": None, "response": {"messages": sentinel_echoes(snippet["code"]), "env": 0}}

        return answer

    stubs = [KiminaStub(answering("a")), KiminaStub(answering("b"))]
    urls = f"{stubs[0].url}, http://127.0.0.1:9 {stubs[1].url}"  # the middle one is dead
    verifier = build_verifier(LeanSettings(backend="kimina", kimina_url=urls, workers=2, timeout_s=5))

    async def check_all() -> list[Any]:
        try:
            return await asyncio.gather(*(verifier.check(f"theorem t{i} : True := trivial", "") for i in range(12)))
        finally:
            await verifier.close()

    try:
        results = asyncio.run(check_all())
    finally:
        for stub in stubs:
            stub.server.shutdown()
    assert all(result.ok for result in results), [result.detail for result in results if not result.ok]
    checks = [[b for b in stub.bodies if "Lean.versionString" not in b["snippets"][0]["code"]] for stub in stubs]
    assert len(checks[0]) + len(checks[1]) == 12 and min(len(checks[0]), len(checks[1])) > 0
    assert max(peak.values()) <= 2, "no server gets more checks at once than lean.workers"


def test_attempt_counts_kept_as_totals_equal_a_count_of_the_rows(world_store: Path) -> None:
    with RunStore(world_store, create=False) as store:
        counted = store._query(
            "SELECT stage, status, reason, COUNT(*) AS n FROM attempts GROUP BY stage, status, reason"
            " ORDER BY stage, status, reason"
        )
        assert store.stage_status_counts() == [(r["stage"], r["status"], r["reason"], r["n"]) for r in counted]


def test_rerecording_an_attempt_moves_its_count_instead_of_adding_one(tmp_path: Path) -> None:
    from repro.records import AttemptStatus, ReasonCode, Stage, StageAttempt

    def attempt(status: AttemptStatus, reason: ReasonCode | None) -> StageAttempt:
        return StageAttempt(
            candidate_id="c", problem_id="p", stage=Stage.verify, attempt_number=0, status=status, reason=reason
        )

    with RunStore(tmp_path) as store:
        store.record_attempt(attempt(AttemptStatus.error, ReasonCode.lean_unavailable))
        store.record_attempt(attempt(AttemptStatus.passed, None))  # the resumed run's verdict
        assert store.stage_status_counts() == [("verify", "passed", None, 1)]
