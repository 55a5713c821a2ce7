from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from repro.records import AttemptStatus, SourceProblem, Stage, StageAttempt
from repro.store import SCHEMA_VERSION, RunStore, StoreError

WRITER = textwrap.dedent("""
    import sys
    from repro.records import AttemptStatus, Candidate, Stage, StageAttempt
    from repro.store import RunStore

    store = RunStore(sys.argv[1])
    total = int(sys.argv[2])
    done = {a.attempt_number for a in store.attempts()}
    for number in range(total):
        if number in done:
            continue
        candidate = Candidate(candidate_id="c", problem_id="p", rewrite_index=0, proof_attempt_number=number)
        attempt = StageAttempt(candidate_id="c", problem_id="p", stage=Stage.prove, attempt_number=number,
                               input_hash=str(number), status=AttemptStatus.passed, output={"text": "x" * 2000})
        store.record_attempt(attempt, candidate)
        print(number, flush=True)
    print("done", flush=True)
""")


def _attempt(number: int) -> StageAttempt:
    return StageAttempt(
        candidate_id="c",
        problem_id="p",
        stage=Stage.verify,
        attempt_number=number,
        input_hash="h",
        status=AttemptStatus.rejected,
    )


def test_sigkill_mid_writes_leaves_a_consistent_store_that_resumes(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    RunStore(run_dir).close()
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(run_dir), "5000"], stdout=subprocess.PIPE, text=True)
    assert writer.stdout is not None
    for _ in range(300):  # let it get well into its writes
        writer.stdout.readline()
    os.kill(writer.pid, signal.SIGKILL)
    writer.wait()

    with sqlite3.connect(run_dir / "run.sqlite") as raw:
        assert raw.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    store = RunStore(run_dir)
    attempts = store.attempts()
    numbers = sorted(a.attempt_number for a in attempts)
    assert numbers == list(range(len(numbers))), "attempts are a gap-free prefix: none partial, none lost"
    # the candidate row was written in the same transaction as the last attempt
    assert store.candidates()[0].proof_attempt_number == numbers[-1]
    assert 300 <= len(numbers) < 5000
    store.close()

    finished = subprocess.run([sys.executable, "-c", WRITER, str(run_dir), "5000"], capture_output=True, text=True)
    assert finished.stdout.strip().endswith("done")
    store = RunStore(run_dir)
    assert sorted(a.attempt_number for a in store.attempts()) == list(range(5000))
    store.close()


def test_rerecording_an_attempt_replaces_it(tmp_path: Path) -> None:
    with RunStore(tmp_path) as store:
        store.record_attempt(_attempt(0))
        store.record_attempt(_attempt(0).model_copy(update={"input_hash": "new"}))
        attempts = store.attempts()
        assert len(attempts) == 1 and attempts[0].input_hash == "new"


def test_a_reader_sees_a_run_while_it_is_written(tmp_path: Path) -> None:
    writer = RunStore(tmp_path)
    reader = RunStore(tmp_path)
    writer.add_problems([SourceProblem(problem_id="p", source="s", source_id="1", question="q", answer="1")])
    with writer.transaction() as connection:  # an open write transaction does not block readers (WAL)
        connection.execute("INSERT INTO meta(key, value) VALUES ('x', 'y')")
        assert [p.problem_id for p in reader.problems()] == ["p"]
    assert reader.get_meta("x") == "y"
    assert writer._query("PRAGMA journal_mode")[0][0] == "wal"
    writer.close()
    reader.close()


def test_schema_is_versioned_and_a_newer_store_is_refused(tmp_path: Path) -> None:
    with RunStore(tmp_path) as store:
        assert store.schema_version() >= 1
        store.set_meta("schema_version", "999")
    with pytest.raises(StoreError, match="newer than this repro"):
        RunStore(tmp_path)


def test_problems_keep_their_first_draw_order(tmp_path: Path) -> None:
    with RunStore(tmp_path) as store:
        make = lambda i: SourceProblem(problem_id=f"p{i}", source="s", source_id=str(i), question="q", answer="1")  # noqa: E731
        assert store.add_problems([make(2), make(1)]) == 2
        assert store.add_problems([make(1), make(3)]) == 1
        assert [p.problem_id for p in store.problems()] == ["p2", "p1", "p3"]


def test_missing_run_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no run store"):
        RunStore(tmp_path / "nothing", create=False)


def test_processes_opening_a_new_store_at_once_all_succeed(tmp_path: Path) -> None:
    opener = "import sys; from repro.store import RunStore; RunStore(sys.argv[1]).close(); print('ok')"
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", opener, str(tmp_path / "shared")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(6)
    ]
    outputs = [process.communicate(timeout=60) for process in processes]
    assert all(out.strip() == "ok" for out, _ in outputs), [err for _, err in outputs]
    with RunStore(tmp_path / "shared") as store:
        assert store.schema_version() == SCHEMA_VERSION
