"""The static layer is bounded: caps refuse by name before reading, a time limit gives its own status
(never a verdict), and reading a large reply happens off the event loop."""

from __future__ import annotations

import asyncio

from repro.config import StaticLimits
from repro.exit_codes import ExitCode
from repro.judge import verify_proof
from repro.judge.batch import verdict_exit_code
from repro.records import ReasonCode
from tests.doubles.fake_backend import fake_repl_verifier

STATEMENT = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry"
HEADER = "import Mathlib\nimport Aesop\nset_option maxHeartbeats 400000\nopen BigOperators Real Nat Topology Rat\n"
HONEST = "```lean4\ntheorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num\n```"


def long_honest(steps: int) -> str:
    lines = [f"  have h{i} : ({i} : ℕ) + 1 = {i + 1} := by norm_num -- step {i}" for i in range(steps)]
    body = "\n".join(["theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by", "  subst h₀", *lines])
    return f"```lean4\n{body}\n  norm_num\n```"


class CountingVerifier:
    """Counts Lean calls; the caps must decide before any."""

    def __init__(self) -> None:
        self.inner = fake_repl_verifier(workers=1)
        self.calls = 0
        self.backend_id, self.real_lean = self.inner.backend_id, self.inner.real_lean
        self.toolchain, self.mathlib_revision = self.inner.toolchain, self.inner.mathlib_revision

    async def check(self, code: str, header: str):  # type: ignore[no-untyped-def]
        self.calls += 1
        return await self.inner.check(code, header)

    async def check_sequence(self, commands: list[str], header: str):  # type: ignore[no-untyped-def]
        self.calls += 1
        return await self.inner.check_sequence(commands, header)

    async def close(self) -> None:
        await self.inner.close()


async def test_each_cap_refuses_by_its_own_name_before_lean() -> None:
    verifier = CountingVerifier()
    cases = [
        (StaticLimits(max_reply_chars=len(HONEST) - 1), ReasonCode.reply_too_long),
        (StaticLimits(max_fences=1), ReasonCode.too_many_fences),
        (StaticLimits(max_tokens=10), ReasonCode.too_many_tokens),
    ]
    try:
        for limits, reason in cases:
            verdict = await verify_proof(STATEMENT, HONEST, verifier, header=HEADER, limits=limits)
            assert not verdict.verified and verdict.reasons == [reason], verdict.details
            assert verdict.static_passed is False
        assert verifier.calls == 0
        within = await verify_proof(STATEMENT, HONEST, verifier, header=HEADER, limits=StaticLimits(max_fences=2))
    finally:
        await verifier.close()
    assert within.verified and verifier.calls == 1


async def test_past_the_time_limit_there_is_no_verdict_and_the_cli_says_unfinished() -> None:
    verdict = await verify_proof(
        STATEMENT, long_honest(5_000), None, header=HEADER, limits=StaticLimits(timeout_s=1e-6)
    )
    assert not verdict.verified and verdict.reasons == [ReasonCode.static_timeout]
    assert verdict_exit_code(verdict) == ExitCode.infrastructure


async def test_a_large_reply_is_read_off_the_event_loop() -> None:
    """Another coroutine keeps running while a 300 KB reply is read (it used to stall everything in flight)."""
    ticks = 0
    stop = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await asyncio.sleep(0)

    reply = long_honest(5_000)
    task = asyncio.create_task(ticker())
    verdict = await verify_proof(
        STATEMENT, reply, None, header=HEADER, limits=StaticLimits(max_tokens=1_000_000, timeout_s=3600)
    )
    stop.set()
    await task
    assert verdict.static_passed and verdict.reasons == [ReasonCode.lean_unavailable], verdict.details
    assert ticks > 10
