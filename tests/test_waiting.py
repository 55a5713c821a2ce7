"""The heartbeat's text: what is waited on, and which candidate each Lean check in flight is for."""

from __future__ import annotations

import asyncio

from repro.waiting import NAMED_PER_KIND, about, describe, waiting_on


def test_lean_checks_in_flight_are_named_by_the_task_that_waits_oldest_first() -> None:
    async def check(subject: str, started: asyncio.Event, release: asyncio.Event) -> None:
        with about(subject), waiting_on("check by Lean (repl)", named=True):
            started.set()
            await release.wait()

    async def scenario() -> tuple[str | None, str | None]:
        release = asyncio.Event()
        tasks = []
        subjects = [f"gsm8k-{n}#r0" for n in range(NAMED_PER_KIND + 2)]
        for subject in subjects:
            started = asyncio.Event()
            tasks.append(asyncio.create_task(check(subject, started, release)))
            await started.wait()
            await asyncio.sleep(0.01)  # each later check is younger
        with waiting_on("request to prove model m (openai:http://gpu/v1)", named=True):
            text = describe()
        release.set()
        await asyncio.gather(*tasks)
        return text, describe()

    text, after = asyncio.run(scenario())
    assert text is not None and after is None
    checks, request = text.removeprefix("waiting on ").split("; ")
    assert checks.startswith(f"{NAMED_PER_KIND + 2} checks by Lean (repl), the oldest for 0 s: gsm8k-0#r0 0 s,")
    assert checks.index("gsm8k-0#r0") < checks.index("gsm8k-4#r0")
    assert checks.endswith("gsm8k-4#r0 0 s and 2 more") and "gsm8k-5#r0" not in checks
    # a wait outside any subject is counted, not named
    assert request == "1 request to prove model m (openai:http://gpu/v1), the oldest for 0 s"
