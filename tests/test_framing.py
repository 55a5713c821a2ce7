"""A reply the REPL pool reads is Lean's answer to our framed command, or an infrastructure crash.

Adversary round 4, A2: code Lean runs at elaboration time printed three forged REPL replies ahead of
the real one, and the pool read them as Lean's ("no error", then ``#print axioms`` with ``propext``
only): a false theorem verified. The attack's stand-in REPL (/work/adv/14-stdout-json-forgery,
``standin_repl.py``) is imitated by the fake REPL's ``print_before`` action.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from repro.judge import verify_proof
from repro.lean import InfraStatus
from repro.lean.framing import FRAME_PREFIX, FramingError, frame_command, unframe_reply
from repro.records import ReasonCode
from tests.doubles.fake_backend import fake_repl_verifier

HEADER = "import Mathlib"
STATEMENT = "theorem amc_demo (x : ℕ) (h : 2 * x + 1 = 7) : x = 4 := by sorry"
# passes the static layer; the fake prints the forged replies when it elaborates it, as Lean would run
# a channel the gate does not know of
PROOF = "```lean4\ntheorem amc_demo (x : ℕ) (h : 2 * x + 1 = 7) : x = 4 := by\n  omega\n```"


def _forged_replies(first_env: int) -> str:
    """What /work/adv/14-stdout-json-forgery/forged_stdout.txt prints: (1) and (2) clean, (3) the axioms."""
    axioms = {
        "severity": "info",
        "pos": {"line": 1, "column": 0},
        "endPos": {"line": 1, "column": 31},
        "data": "'amc_demo' depends on axioms: [propext]",
    }
    replies: list[dict[str, Any]] = [
        {"env": first_env, "messages": []},
        {"env": first_env + 1, "messages": []},
        {"env": first_env + 2, "messages": [axioms]},
    ]
    return "".join(json.dumps(reply) + "\n\n" for reply in replies)


def _forging_rules(first_env: int) -> list[dict[str, Any]]:
    omega_fails = {"severity": "error", "pos": {"line": 2, "column": 2}, "endPos": {"line": 2, "column": 7}}
    return [
        {"match": "omega", "action": "print_before", "stdout": _forged_replies(first_env)},
        {"match": "omega", "messages": [{**omega_fails, "data": "omega could not prove the goal"}]},
    ]


@pytest.mark.parametrize("first_env", [1_000_000, 2], ids=["numbers far ahead", "the numbers the pool expects"])
async def test_forged_replies_printed_ahead_of_the_real_one_are_never_a_pass(first_env: int) -> None:
    pool = fake_repl_verifier(_forging_rules(first_env), workers=1, timeout_s=10.0)
    try:
        verdict = await verify_proof(STATEMENT, PROOF, pool, header=HEADER)
        assert not verdict.verified, verdict.details
        # code that breaks the framing on every fresh worker, while a known-good probe passes, is the code's
        # doing: a rejection (lean_crash), never a pass, and not an outage resumed forever (red1 R6)
        assert verdict.reasons == [ReasonCode.lean_crash], verdict.details
        assert verdict.lean is not None and verdict.lean.infra_status == InfraStatus.reproducible_crash
        assert pool.replaced >= 1  # the worker that printed is killed: its real replies stay unread
        # the pool keeps serving honest checks on fresh workers
        honest = await pool.check("theorem t : True := trivial", HEADER)
        assert honest.ok and not any(FRAME_PREFIX in m.text for m in honest.messages)
    finally:
        await pool.close()


async def test_a_forged_reply_left_in_the_pipe_never_answers_the_next_check() -> None:
    """Text printed after the real reply (a thread still running) is read by the next check on that worker."""
    # the header is environment 0 and each check here is one command: the second check expects env 2
    clean = json.dumps({"env": 2, "messages": []}) + "\n\n"
    failing = {"severity": "error", "pos": {"line": 1, "column": 0}, "data": "unsolved goals"}
    rules = [
        {"match": "LATE", "action": "print_after", "stdout": clean},
        {"match": "WRONG", "messages": [failing]},
    ]
    pool = fake_repl_verifier(rules, workers=1, timeout_s=10.0)
    try:
        first = await pool.check("theorem LATE : True := trivial", HEADER)
        assert first.ok
        second = await pool.check("theorem WRONG : False := by simp", HEADER)
        # the forged reply is refused (a crash), the check is retried on a fresh worker, which answers
        assert not second.ok and second.has_error, second
        assert pool.replaced == 1
    finally:
        await pool.close()


async def test_every_honest_reply_comes_back_without_our_sentinel() -> None:
    pool = fake_repl_verifier(workers=1)
    try:
        results = await pool.check_sequence(["theorem t : True := trivial", "#print axioms t"], HEADER)
        assert [r.infra_status for r in results] == [InfraStatus.ok, InfraStatus.ok]
        assert [m.text for m in results[1].messages] == [
            "'t' depends on axioms: [propext, Classical.choice, Quot.sound]"
        ]
    finally:
        await pool.close()


SENTINEL, NONCE = f"{FRAME_PREFIX}abc_0", "abc"
CODE = "theorem t : True := by\n  trivial"


def _reply(env: int = 5, extra: list[dict[str, Any]] | None = None, line: int | None = None) -> dict[str, Any]:
    _, expected_line = frame_command(CODE, SENTINEL)
    ours = {
        "severity": "info",
        "pos": {"line": line or expected_line, "column": 0},
        "endPos": {"line": line or expected_line, "column": 6},
        "data": SENTINEL,
    }
    return {"env": env, "messages": [*(extra or []), ours]}


def _unframe(reply: Any) -> dict[str, Any]:
    _, line = frame_command(CODE, SENTINEL)
    return unframe_reply(reply, sentinel=SENTINEL, line=line, nonce=NONCE, expected_env=5)


def test_the_sentinel_follows_the_code_without_moving_its_lines() -> None:
    framed, line = frame_command(CODE, SENTINEL)
    assert framed.startswith(CODE + "\n") and framed.splitlines()[line - 1] == f'#print "{SENTINEL}"'


def test_a_framed_reply_is_returned_without_the_sentinel() -> None:
    error = {"severity": "error", "pos": {"line": 2, "column": 2}, "data": "unsolved goals"}
    assert _unframe(_reply(extra=[error])) == {"env": 5, "messages": [error]}
    assert _unframe(_reply()) == {"env": 5}
    assert _unframe({"message": "Unknown environment."}) == {"message": "Unknown environment."}


FORGED = {
    "no sentinel": {"env": 5, "messages": []},
    "another environment number": _reply(env=1_000_000),
    "the sentinel at another line": _reply(line=1),
    "the sentinel twice": {"env": 5, "messages": _reply()["messages"] * 2},
    "a message after the sentinel": _reply(extra=[{"severity": "info", "pos": {"line": 9}, "data": "x"}]),
    "another message naming the nonce": _reply(extra=[{"severity": "info", "pos": {"line": 1}, "data": NONCE}]),
    "the sentinel as an error": {"env": 5, "messages": [{**_reply()["messages"][0], "severity": "error"}]},
    "not an object": ["env", 5],
    "messages not a list": {"env": 5, "messages": {"data": SENTINEL}},
}


@pytest.mark.parametrize("reply", list(FORGED.values()), ids=list(FORGED))
def test_a_reply_not_framed_by_our_sentinel_is_refused(reply: Any) -> None:
    with pytest.raises(FramingError):
        _unframe(reply)
