"""Several Kimina Lean Servers behind one verifier: Lean checks that scale past one machine.

Each server gets at most ``per_server`` checks at once (a Kimina server runs a fixed number of REPL
workers; more requests only queue inside it). A check goes to the server with the fewest checks in
flight; when a server is unreachable or answers with an HTTP error, the check moves to the next
server, so one dead machine slows the fleet down instead of failing problems. Verdicts are the
single-server backend's: this module only routes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from repro.lean.kimina import KiminaVerifier
from repro.lean.protocol import InfraStatus, LeanResult


def split_urls(urls: str) -> list[str]:
    """``lean.kimina_url`` may name several servers, separated by commas or spaces."""
    return [url for url in urls.replace(",", " ").split() if url]


class KiminaFleet:
    def __init__(self, servers: Sequence[KiminaVerifier], *, per_server: int) -> None:
        if not servers:
            raise ValueError("a Kimina fleet needs at least one server URL")
        self.servers = list(servers)
        self.per_server = per_server
        self._limits = [asyncio.Semaphore(per_server) for _ in self.servers]
        self._in_flight = [0] * len(self.servers)
        self.checks_by_server = [0] * len(self.servers)
        first = self.servers[0]
        self.backend_id = "kimina-fleet:" + ",".join(server.url for server in self.servers)
        self.real_lean = first.real_lean
        self.toolchain = first.toolchain
        self.mathlib_revision = first.mathlib_revision

    async def prepare(self, header: str) -> None:
        """Every server is asked what it runs; servers that disagree with each other are refused."""
        from repro.lean.kimina import KiminaRefused

        await asyncio.gather(*(server.prepare(header) for server in self.servers))
        # a server that is down now said nothing; it is asked again before its first check
        identities = {(server.toolchain, server.mathlib_revision) for server in self.servers if server.prepared}
        if len(identities) > 1:
            raise KiminaRefused(f"the Kimina servers run different Lean/Mathlib: {sorted(map(str, identities))}")
        if identities:
            self.toolchain, self.mathlib_revision = identities.pop()

    def _order(self) -> list[int]:
        return sorted(range(len(self.servers)), key=lambda index: self._in_flight[index])

    async def check(self, code: str, header: str) -> LeanResult:
        return (await self.check_sequence([code], header))[0]

    async def check_sequence(self, commands: list[str], header: str) -> list[LeanResult]:
        """One gate check (its commands share one environment) goes to one server, whole."""
        results: list[LeanResult] = []
        for index in self._order():
            self._in_flight[index] += 1
            try:
                async with self._limits[index]:
                    results = await self.servers[index].check_sequence(commands, header)
            finally:
                self._in_flight[index] -= 1
            self.checks_by_server[index] += 1
            if not any(result.infra_status == InfraStatus.unavailable for result in results):
                return results  # a verdict, a timeout or a crash: the code's doing, not the server's
        return results

    async def close(self) -> None:
        await asyncio.gather(*(server.close() for server in self.servers))
