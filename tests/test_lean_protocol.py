"""The multi-command protocol: REPL environments as the real REPL numbers them, through pool and cache."""

from __future__ import annotations

import io
import json
from typing import Any

from repro.lean import CachedVerifier, InfraStatus
from tests.doubles.fake_backend import fake_repl_verifier
from tests.doubles.fake_repl import serve

HEADER = "import Mathlib"
TARGET = "theorem repro_target_t (x : ℕ) (h : x = 2) : x + 1 = 3 := by sorry"


def _talk(commands: list[dict[str, Any]]) -> list[dict[str, Any]]:
    stdin = io.StringIO("".join(json.dumps(command) + "\n\n" for command in commands))
    stdout = io.StringIO()
    serve([], stdin=stdin, stdout=stdout)
    return [json.loads(block) for block in stdout.getvalue().split("\n\n") if block.strip()]


def test_fake_repl_numbers_environments_like_the_real_repl() -> None:
    replies = _talk(
        [
            {"cmd": "import Mathlib"},
            {"cmd": "def a := 1", "env": 0},
            {"cmd": "theorem b : True := trivial", "env": 0},  # backtrack: env 0 again, a separate branch
            {"cmd": "#print axioms b", "env": 2},
            {"cmd": "#print axioms b", "env": 1},  # b does not exist in the branch of env 1
            {"cmd": "def c := 2", "env": 42},
            {"cmd": "import Mathlib", "env": 0},
        ]
    )
    assert [reply.get("env") for reply in replies[:5]] == [0, 1, 2, 3, 4]
    assert replies[3]["messages"][0]["data"] == "'b' depends on axioms: [propext, Classical.choice, Quot.sound]"
    assert replies[4]["messages"][0]["severity"] == "error"
    assert replies[5] == {"message": "Unknown environment."}
    assert "import" in replies[6]["messages"][0]["data"]


async def test_pool_runs_each_command_in_the_environment_of_the_previous_one() -> None:
    pool = fake_repl_verifier(workers=1)
    try:
        honest = await pool.check_sequence(
            [
                TARGET,
                "theorem t (x : ℕ) (h : x = 2) : x + 1 = 3 := by\n  subst h\n  rfl",
                "example : type_of% @repro_target_t := @t",
                "#print axioms t",
            ],
            HEADER,
        )
        # a second sequence does not see the first one's declarations
        alone = await pool.check_sequence(["example : type_of% @repro_target_t := @t"], HEADER)
    finally:
        await pool.close()
    assert [r.infra_status for r in honest] == [InfraStatus.ok] * 4
    assert "sorry" in honest[0].messages[0].text and honest[0].sorries
    assert honest[1].messages == [] and honest[2].messages == []
    assert honest[3].messages[0].text.startswith("'t' depends on axioms")
    assert alone[0].has_error and "unknown identifier" in alone[0].messages[0].text


async def test_a_refused_command_ends_the_sequence_with_that_answer() -> None:
    pool = fake_repl_verifier([{"match": "BROKEN", "action": "repl_error", "message": "Unknown environment."}])
    try:
        results = await pool.check_sequence([TARGET, "theorem t : True := BROKEN", "#print axioms t"], HEADER)
    finally:
        await pool.close()
    assert len(results) == 2 and results[-1].infra_status == InfraStatus.lean_error


async def test_cache_keeps_whole_sequences_and_only_clean_ones() -> None:
    inner = fake_repl_verifier([{"match": "FLAKY", "action": "crash"}], workers=1)
    cached = CachedVerifier(inner)
    commands = [TARGET, "theorem t (x : ℕ) (h : x = 2) : x + 1 = 3 := by\n  subst h\n  rfl", "#print axioms t"]
    try:
        first = await cached.check_sequence(commands, HEADER)
        second = await cached.check_sequence(commands, HEADER)
        failed = await cached.check_sequence([TARGET, "theorem u : True := FLAKY"], HEADER)
        again = await cached.check_sequence([TARGET, "theorem u : True := FLAKY"], HEADER)
    finally:
        await cached.close()
    assert not any(r.cached for r in first) and all(r.cached for r in second)
    assert [r.messages for r in first] == [r.messages for r in second]
    assert failed[-1].infra_status != InfraStatus.ok and not any(r.cached for r in again)
