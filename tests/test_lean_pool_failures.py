"""What the pool returns when a sequence fails part-way, and which framing failures it retries (lean audit
M5, M6), through the real LeanInteract client against the fake REPL (tests/test_lean_pool.py has the rest)."""

from __future__ import annotations

from pathlib import Path

import pytest

from repro.lean.protocol import InfraStatus
from tests.doubles.fake_backend import fake_repl_verifier


async def test_results_before_an_infrastructure_failure_are_kept_and_the_failure_is_last() -> None:
    """M5: one slow tactic in the statement checks must not erase the answers before it."""
    verifier = fake_repl_verifier([{"match": "HANG", "action": "hang"}], workers=1, timeout_s=3)
    try:
        results = await verifier.check_sequence(
            ["theorem first_ok : True := trivial", "theorem second_ok : True := trivial", "HANG"], ""
        )
    finally:
        await verifier.close()
    assert [result.infra_status for result in results] == [InfraStatus.ok, InfraStatus.ok, InfraStatus.timeout]
    assert results[0].ok and results[1].ok


async def test_an_error_ending_at_our_sentinel_is_the_codes_own_error() -> None:
    """M6: Lean's parse error for an unfinished last declaration ("unexpected token '#print'") ends where
    our sentinel starts; it rejects the code, it is not a crash (leanprover/lean4#2393 places it so)."""
    at_sentinel = {
        "severity": "error",
        "pos": {"line": 3, "column": 0},
        "endPos": {"line": 3, "column": 0},
        "data": "unexpected token '#print'; expected term",
    }
    verifier = fake_repl_verifier([{"match": "UNFINISHED", "messages": [at_sentinel]}], workers=1)
    try:
        result = await verifier.check("theorem t : True := UNFINISHED", "")
    finally:
        await verifier.close()
    assert result.infra_status == InfraStatus.ok and result.has_error and not result.ok  # a verdict: rejected
    assert any("unexpected token '#print'" in message.text for message in result.messages)


async def test_a_message_lean_placed_after_our_sentinel_is_not_retried_on_a_fresh_worker() -> None:
    """M6: the same code gets the same reply on any worker; a retry costs a REPL restart (Mathlib import)."""
    after = {"severity": "info", "pos": {"line": 3, "column": 0}, "endPos": {"line": 3, "column": 2}, "data": "x"}
    verifier = fake_repl_verifier([{"match": "PLACED", "messages": [after]}], workers=1)
    try:
        result = await verifier.check("theorem t : True := PLACED", "")
        retired = verifier.replaced
    finally:
        await verifier.close()
    assert result.infra_status == InfraStatus.crash and "at or after our sentinel" in (result.detail or "")
    assert retired == 1, "one worker retired, no second attempt"


async def test_workers_start_without_preexec_fn_under_the_same_memory_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """M9: LeanInteract sets RLIMIT_AS in a preexec_fn, which may deadlock a child forked from a threaded
    parent; our start runs the same command line with the limit set by the shell that execs it."""
    import lean_interact.server

    from repro.lean.repl_pool import repl_command

    verifier = fake_repl_verifier(workers=1, memory_limit_mb=2048)
    try:
        result = await verifier.check("theorem probe_ok : True := trivial", "")
        assert result.ok, result.detail
        worker = await verifier._take_worker("")
        assert worker is not None and worker.pid is not None
        limits = Path(f"/proc/{worker.pid}/limits").read_text()
        address_space = next(line for line in limits.splitlines() if line.startswith("Max address space"))
        assert str(2048 * 1024 * 1024) in address_space
        await verifier._idle[""].put(worker)
        config = verifier._config()
    finally:
        await verifier.close()
    seen: list[list[str]] = []

    class Recorded:
        """What LeanInteract 0.11.6's own LeanServer.start would have run (never run here)."""

        pid = 0
        stdin = stdout = stderr = None

        def __init__(self, command: list[str], **options: object) -> None:
            seen.append(command)
            assert "preexec_fn" in options  # upstream still passes one: the reason our start exists

        def poll(self) -> int:
            return 0

        def wait(self, timeout: float | None = None) -> int:
            return 0

    monkeypatch.setattr(lean_interact.server.subprocess, "Popen", Recorded)
    with pytest.raises(ChildProcessError):  # the recorded process "exited" at once
        lean_interact.server.LeanServer(config)
    assert seen and seen[0] == repl_command(config)
