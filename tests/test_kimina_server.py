"""Kimina Lean Server versions and load (issue 18, findings 6 and 7), against a fake server on 127.0.0.1.

The fake (tests/doubles/kimina_server.py) imitates project-numina/kimina-lean-server: its line behaviour
before and after e2cdc1f, the 429 a request gets when no REPL frees up, the int ``timeout`` field, and slow
or stuck answers. What must hold: a server that cannot judge our proofs is refused before any verdict,
and nothing Lean never saw is recorded as a Lean verdict or a Lean timeout.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from repro.config import LeanSettings
from repro.judge import verify_proof
from repro.lean import InfraStatus, KiminaVerifier, build_verifier
from repro.lean.kimina import KIMINA_SERVER_MAX_WAIT_S, KiminaRefused
from repro.records import ReasonCode
from tests.doubles.kimina_server import KiminaTestServer

HEADER = "import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 400000\n"
STATEMENT = "theorem k : 1 + 1 = 2 := by sorry"
PROOF = "theorem k : 1 + 1 = 2 := by\n  norm_num"
TRIVIAL = "theorem t : True := trivial"


@pytest.fixture
def servers() -> Iterator[list[KiminaTestServer]]:
    made: list[KiminaTestServer] = []
    yield made
    for server in made:
        server.close()


def serve(servers: list[KiminaTestServer], **behaviour: object) -> KiminaTestServer:
    servers.append(KiminaTestServer(**behaviour))  # type: ignore[arg-type]
    return servers[-1]


def kimina(server: KiminaTestServer, toolchain: str = "v4.15.0", **options: object) -> KiminaVerifier:
    return KiminaVerifier(url=server.url, toolchain=f"leanprover/lean4:{toolchain}", **options)  # type: ignore[arg-type]


async def test_a_current_server_is_accepted_and_results_name_what_the_server_runs(
    servers: list[KiminaTestServer],
) -> None:
    server = serve(servers, mathlib_commit="c" * 40)
    verifier = build_verifier(LeanSettings(backend="kimina", kimina_url=server.url, workers=2, timeout_s=5))
    try:
        verdict = await verify_proof(STATEMENT, PROOF, verifier, header=HEADER)
    finally:
        await verifier.close()
    assert verdict.verified, verdict.details
    assert verdict.lean is not None and verdict.lean.toolchain == "leanprover/lean4:v4.15.0"
    # the Mathlib revision comes from the server's own checkout, not from a local project
    assert verdict.lean.mathlib_revision == "v4.15.0@" + "c" * 40


async def test_a_server_with_the_old_line_behaviour_is_refused_before_any_check(
    servers: list[KiminaTestServer],
) -> None:
    server = serve(servers, line_behaviour="old")
    verifier = kimina(server, timeout_s=5)
    try:
        with pytest.raises(KiminaRefused, match="2025-07-24 to 2025-10-24"):
            await verifier.prepare(HEADER)
        verdict = await verify_proof(STATEMENT, PROOF, verifier, header=HEADER)
    finally:
        await verifier.close()
    assert not verdict.verified and ReasonCode.lean_unavailable in verdict.reasons
    assert ReasonCode.lean_error not in verdict.reasons and ReasonCode.lean_timeout not in verdict.reasons
    assert len(server.bodies) == 1, "after the refusal no proof is sent to the server"


async def test_a_server_on_another_lean_is_refused_with_what_to_change(servers: list[KiminaTestServer]) -> None:
    server = serve(servers, lean_version="4.26.0")  # the server's default since fb2393d
    verifier = kimina(server, toolchain="v4.9.0", timeout_s=5)
    try:
        with pytest.raises(KiminaRefused, match=r"runs Lean v4\.26\.0, but lean\.toolchain is v4\.9\.0"):
            await verifier.prepare(HEADER)
        result = await verifier.check(TRIVIAL, HEADER)
    finally:
        await verifier.close()
    assert result.infra_status == InfraStatus.unavailable and "server refused" in (result.detail or "")
    matching = kimina(serve(servers, lean_version="4.9.0"), toolchain="v4.9.0", timeout_s=5)
    try:
        await matching.prepare(HEADER)
        assert (await matching.check(TRIVIAL, HEADER)).ok
    finally:
        await matching.close()


async def test_the_run_preflight_stops_on_a_refused_server_before_any_model_call(
    servers: list[KiminaTestServer],
) -> None:
    from repro.app import RunError, preflight_lean
    from repro.config import RunConfig

    server = serve(servers, lean_version="4.26.0")
    config = RunConfig(lean=LeanSettings(backend="kimina", kimina_url=server.url, timeout_s=5))
    verifier = build_verifier(config.lean)
    try:
        with pytest.raises(RunError, match="runs Lean v4.26.0"):
            await preflight_lean(verifier, config)
    finally:
        await verifier.close()


async def test_a_429_is_backpressure_retried_not_unavailable(servers: list[KiminaTestServer]) -> None:
    server = serve(servers, busy_first=3)
    verifier = kimina(server, timeout_s=5, backoff_s=0.05)
    try:
        verdict = await verify_proof(STATEMENT, PROOF, verifier, header=HEADER)
    finally:
        await verifier.close()
    assert verdict.verified, verdict.details
    assert server.statuses[:3] == [429, 429, 429] and verifier.busy_answers == 3


async def test_a_server_busy_for_good_is_unavailable_never_a_lean_timeout(servers: list[KiminaTestServer]) -> None:
    server = serve(servers, busy_first=1000)
    verifier = kimina(server, timeout_s=5, backoff_s=0.01, busy_retries=2, verify_server=False)
    try:
        verdict = await verify_proof(STATEMENT, PROOF, verifier, header=HEADER)
    finally:
        await verifier.close()
    assert not verdict.verified and ReasonCode.lean_unavailable in verdict.reasons
    assert ReasonCode.lean_timeout not in verdict.reasons
    assert verdict.lean is not None and "429" in (verdict.lean.detail or "")


async def test_checks_on_one_server_url_are_bounded_on_the_client(servers: list[KiminaTestServer]) -> None:
    server = serve(servers, slow_s=0.2)
    first, second = kimina(server, timeout_s=5, max_in_flight=2), kimina(server, timeout_s=5, max_in_flight=2)
    try:
        codes = [f"theorem t{i} : True := by SLOW" for i in range(8)]
        results = await asyncio.gather(*(v.check(c, HEADER) for v, c in zip([first, second] * 4, codes, strict=True)))
    finally:
        await first.close()
        await second.close()
    assert all(result.infra_status == InfraStatus.ok for result in results)
    assert server.max_in_flight <= 2, "two verifiers on one URL share one bound"
    assert 429 not in server.statuses


async def test_a_stuck_server_is_unavailable_and_a_real_lean_timeout_stays_a_timeout(
    servers: list[KiminaTestServer],
) -> None:
    stuck = serve(servers, stall_s=3.0)
    verifier = kimina(stuck, timeout_s=1, server_max_wait_s=0, http_margin_s=0.5, verify_server=False)
    try:
        verdict = await verify_proof(STATEMENT, PROOF, verifier, header=HEADER)
    finally:
        await verifier.close()
    assert ReasonCode.lean_unavailable in verdict.reasons and ReasonCode.lean_timeout not in verdict.reasons
    assert "not a Lean timeout" in (verdict.lean.detail if verdict.lean else "")

    slow = serve(servers, slow_s=5.0)
    verifier = kimina(slow, timeout_s=1)
    try:
        timed_out = await verifier.check("theorem t : True := by SLOW", HEADER)
    finally:
        await verifier.close()
    assert timed_out.infra_status == InfraStatus.timeout  # Lean itself ran past the budget


async def test_the_request_timeout_is_an_int_and_the_client_outwaits_the_server(
    servers: list[KiminaTestServer],
) -> None:
    server = serve(servers)
    verifier = kimina(server, timeout_s=2.5)
    try:
        result = await verifier.check(TRIVIAL, HEADER)
    finally:
        await verifier.close()
    assert result.ok, result.detail
    assert {body["timeout"] for body in server.bodies} == {3}
    assert all(isinstance(body["timeout"], int) for body in server.bodies)
    # the server may wait max_wait for a REPL, then run the header and the body under `timeout` each
    patient = KiminaVerifier(url=server.url, timeout_s=300)
    assert patient.http_timeout_s > KIMINA_SERVER_MAX_WAIT_S + 2 * 300
    await patient.close()


async def test_a_header_that_times_out_on_the_server_is_not_the_proofs_timeout(
    servers: list[KiminaTestServer],
) -> None:
    from tests.test_lean_pool import KiminaStub

    stub = KiminaStub(lambda snippet: {"error": "Lean REPL header command timed out in 5 seconds", "response": None})
    verifier = KiminaVerifier(url=stub.url, timeout_s=5, verify_server=False)
    try:
        result = await verifier.check(TRIVIAL, HEADER)
    finally:
        await verifier.close()
        stub.server.shutdown()
    assert result.infra_status == InfraStatus.unavailable


async def test_the_selftest_timeout_case_survives_a_cold_header_on_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Lean audit M7: a request that gets a fresh REPL imports Mathlib under the request's own timeout; with
    the self-test's 10 s budget that is "header command timed out" (unavailable), which says nothing about
    timeouts. The case then asks again with the configured budget, which real checks give the header."""
    from repro.judge.selftest import run_selftest

    monkeypatch.setenv("REPRO_CACHE_DIR", str(tmp_path))
    with KiminaTestServer(cold_header_s=15) as server:
        settings = LeanSettings(backend="kimina", kimina_url=server.url, timeout_s=30, workers=1)
        report = await run_selftest(settings, only=["timeout_reported"])
    outcome = next(o for o in report.outcomes if o.name == "timeout_reported")
    assert outcome.passed, outcome.detail
    assert "header timed out, so again with 30 s: timeout" in outcome.detail


async def test_an_error_ending_at_the_next_sentinel_is_the_preceding_commands_own() -> None:
    """Lean audit M6 on Kimina: an unfinished last declaration's parse error stands at our next sentinel
    (leanprover/lean4#2393 places it at the offending token's start); it rejects that command, never a crash."""
    with KiminaTestServer() as server:
        client = KiminaVerifier(url=server.url, toolchain="leanprover/lean4:v4.15.0", verify_server=False)
        try:
            unfinished, after = await client.check_sequence(
                ["theorem t : True := UNFINISHED", "theorem u : True := trivial"], HEADER
            )
        finally:
            await client.close()
    assert unfinished.infra_status == InfraStatus.ok and unfinished.has_error, unfinished.detail
    assert after.ok
