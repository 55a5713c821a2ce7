"""Gold-standard replay of released proofs: ``repro reverify --replay`` and ``repro release --replay``.

Every row that the gate verified is rebuilt from its own text and replayed by the pinned SafeVerify of
its toolchain (:mod:`repro.judge.kernel`). ``release --replay`` withholds each row that did not replay
(rejected, or no verdict at all: a missing tool or a timeout is not a pass) and names it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from repro.exit_codes import ExitCode
from repro.judge.kernel import (
    ReplayBackend,
    ReplayRequest,
    ReplaySettings,
    ReplayStatus,
    ReplayVerdict,
    build_replayer,
    replay_all,
)


def replay_requests_of_release(out_dir: str | Path, header: str) -> list[ReplayRequest]:
    """One request per released row; the header is the trusted one, never the row's own."""
    from repro.release import read_parquet_release

    return [
        ReplayRequest(
            key=instance.instance_id,
            header=header,
            statement=instance.lean_statement,
            proof_code=instance.verified_code,
            toolchain=instance.provenance.lean_toolchain,
        )
        for instance in read_parquet_release(out_dir)
    ]


async def replay_release(out_dir: str | Path, header: str, backend: ReplayBackend) -> list[ReplayVerdict]:
    return await replay_all(backend, replay_requests_of_release(out_dir, header))


def replay_exit_code(verdicts: list[ReplayVerdict]) -> ExitCode:
    """1 when the tool refused a row; 3 when some row got no verdict; 4 when only the fake spoke; else 0."""
    if any(v.status == ReplayStatus.rejected for v in verdicts):
        return ExitCode.rejected
    if any(not v.passed for v in verdicts):
        return ExitCode.unfinished
    if any(not v.real for v in verdicts):
        return ExitCode.fake_backend
    return ExitCode.ok


class ReplayFilter:
    """``write_release(keep=...)``: keeps the rows of each page that replayed; remembers the others.

    Rows are the release writer's tuples, read by name through :class:`repro.release.rows.PageRow`."""

    def __init__(self, backend: ReplayBackend) -> None:
        self.backend = backend
        self.verdicts: list[ReplayVerdict] = []

    @property
    def withheld(self) -> list[ReplayVerdict]:
        return [v for v in self.verdicts if not v.passed]

    def _request(self, row: Any) -> ReplayRequest:
        from repro.release.rows import PageRow

        named = PageRow(row)
        return ReplayRequest(
            key=named.text("instance_id"),
            header=named.text("lean_header"),  # the run's configured header, not prover text
            statement=named.text("lean_statement"),
            proof_code=named.text("verified_code"),
            toolchain=named.provenance_field("lean_toolchain"),
        )

    def __call__(self, page: list[Any]) -> list[Any]:
        verdicts = asyncio.run(replay_all(self.backend, [self._request(row) for row in page]))
        self.verdicts += verdicts
        return [row for row, verdict in zip(page, verdicts, strict=True) if verdict.passed]


def release_replay_filter(settings: ReplaySettings) -> ReplayFilter:
    return ReplayFilter(build_replayer(settings))


def describe(verdict: ReplayVerdict) -> str:
    return f"{verdict.key}: {verdict.status.value}" + (f": {verdict.detail}" if verdict.detail else "")


KeepRows = Callable[[list[Any]], list[Any]]
