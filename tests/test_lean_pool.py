from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from repro.judge import verify_proof
from repro.lean import CachedVerifier, InfraStatus, KiminaVerifier
from repro.records import ReasonCode
from tests.doubles.fake_backend import fake_repl_verifier

HEADER = "import Mathlib"


def log_entries(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def repl_log(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    path = tmp_path / "repl.log"
    monkeypatch.setenv("REPRO_FAKE_REPL_LOG", str(path))
    return path


async def test_a_hanging_check_is_killed_at_its_timeout_and_the_pool_keeps_serving() -> None:
    pool = fake_repl_verifier([{"match": "HANG", "action": "hang"}], workers=1, timeout_s=1.0)
    try:
        hung = await pool.check("theorem t : True := by HANG", HEADER)
        assert hung.infra_status == InfraStatus.timeout and not hung.ok
        after = await pool.check("theorem t : True := trivial", HEADER)
        assert after.infra_status == InfraStatus.ok and after.ok
        assert pool.replaced == 1
    finally:
        await pool.close()


async def test_a_crashed_worker_is_replaced_and_the_check_retried_once() -> None:
    pool = fake_repl_verifier([{"match": "CRASH", "action": "crash"}], workers=2, timeout_s=5.0)
    try:
        crashed = await pool.check("theorem t : True := by CRASH", HEADER)
        # the fresh worker crashes too and a known-good probe passes: the code crashes Lean (red1 R6), a verdict
        assert crashed.infra_status == InfraStatus.reproducible_crash and "fake crash" in (crashed.detail or "")
        assert pool.replaced == 2, "the first crash is retried on a fresh worker, which crashes too"
        fine = await asyncio.gather(*(pool.check(f"theorem t{i} : True := trivial", HEADER) for i in range(4)))
        assert all(result.ok for result in fine)
    finally:
        await pool.close()


async def test_garbage_output_and_out_of_memory_are_infrastructure_failures() -> None:
    pool = fake_repl_verifier(
        [{"match": "GARBAGE", "action": "garbage"}, {"match": "OOM", "action": "oom"}], workers=1, timeout_s=5.0
    )
    try:
        garbage = await pool.check("GARBAGE", HEADER)
        # garbage for this code on a fresh worker too, while the probe runs: the code's doing, never a pass
        assert garbage.infra_status == InfraStatus.reproducible_crash
        oom = await pool.check("OOM", HEADER)
        assert oom.infra_status == InfraStatus.out_of_memory
        assert (await pool.check("theorem ok : True := trivial", HEADER)).ok
    finally:
        await pool.close()


async def test_an_infrastructure_failure_is_never_a_valid_proof() -> None:
    statement = "theorem t : True := by sorry"
    pool = fake_repl_verifier([{"match": "trivial", "action": "crash"}], workers=1, timeout_s=5.0)
    try:
        verdict = await verify_proof(statement, "theorem t : True := by\n  trivial", pool, header=HEADER)
    finally:
        await pool.close()
    assert not verdict.verified and ReasonCode.lean_unavailable in verdict.reasons


async def test_repl_level_errors_are_reported_not_hidden() -> None:
    pool = fake_repl_verifier(
        [{"match": "BADENV", "action": "repl_error", "message": "Unknown environment."}], workers=1
    )
    try:
        result = await pool.check("BADENV", HEADER)
        assert result.infra_status == InfraStatus.lean_error and result.detail == "Unknown environment."
    finally:
        await pool.close()


async def test_n_workers_run_checks_in_parallel(repl_log: Path) -> None:
    pool = fake_repl_verifier([{"match": "SLOW", "action": "slow", "delay_s": 0.5}], workers=3, timeout_s=10.0)
    try:
        results = await asyncio.gather(*(pool.check(f"-- SLOW {i}", HEADER) for i in range(6)))
    finally:
        await pool.close()
    assert all(result.ok for result in results)
    checks = [entry for entry in log_entries(repl_log) if "SLOW" in entry["cmd"]]
    assert len({entry["pid"] for entry in checks}) == 3
    overlapping = sum(
        1 for a in checks for b in checks if a is not b and a["start"] < b["end"] and b["start"] < a["end"]
    )
    assert overlapping > 0, "some checks ran at the same time on different workers"


async def test_the_header_is_elaborated_once_per_worker(repl_log: Path) -> None:
    pool = fake_repl_verifier(workers=2)
    try:
        for index in range(6):
            await pool.check(f"theorem t{index} : True := trivial", HEADER)
    finally:
        await pool.close()
    headers = [entry for entry in log_entries(repl_log) if entry["cmd"] == HEADER]
    assert len(headers) == 2


async def test_identical_code_is_checked_once(repl_log: Path) -> None:
    verifier = CachedVerifier(fake_repl_verifier(workers=2))
    try:
        code = "theorem same : True := trivial"
        results = await asyncio.gather(*(verifier.check(code, HEADER) for _ in range(5)))
        again = await verifier.check(code, HEADER)
    finally:
        await verifier.close()
    assert sum(1 for entry in log_entries(repl_log) if entry["cmd"] == code) == 1
    assert again.cached and sum(r.cached for r in results) == 4
    assert {r.model_dump_json(exclude={"cached", "elapsed_s"}) for r in [*results, again]} == {
        results[0].model_dump_json(exclude={"cached", "elapsed_s"})
    }


async def test_workers_are_recycled_after_the_configured_number_of_checks(repl_log: Path) -> None:
    pool = fake_repl_verifier(workers=1, recycle_after=2)
    try:
        for index in range(5):
            assert (await pool.check(f"theorem r{index} : True := trivial", HEADER)).ok
            # a recycled worker serves on until its replacement is warm; let the replacement arrive
            while pool._background:
                await asyncio.sleep(0.05)
    finally:
        await pool.close()
    pids = [entry["pid"] for entry in log_entries(repl_log) if entry["cmd"].startswith("theorem r")]
    assert len(set(pids)) == 3 and pids[0] == pids[1] != pids[2]


class KiminaStub:
    """A Kimina-like HTTP server: POST /api/check answers each snippet with a scripted result."""

    def __init__(self, answer: Any) -> None:
        self.answer = answer
        self.bodies: list[dict[str, Any]] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                return

            def do_POST(self) -> None:  # noqa: N802
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stub.bodies.append(body)
                snippet = body["snippets"][0]
                payload = json.dumps({"results": [{"id": snippet["id"], "time": 0.2, **stub.answer(snippet)}]})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload.encode())))
                self.end_headers()
                self.wfile.write(payload.encode())

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"


def _line_of(code: str, needle: str) -> int:
    return next(number for number, line in enumerate(code.split("\n"), start=1) if needle in line)


def sentinel_echoes(code: str) -> list[dict[str, Any]]:
    """What Lean answers to the client's own commands: each sentinel prints its own text at its own line,
    and ``#eval Lean.versionString`` (the client asking which Lean the server runs) a v4.15.0 server's."""
    return [
        {"severity": "info", "pos": {"line": number, "column": 0}, "data": text[8:-1]}
        for number, text in enumerate(code.split("\n"), start=1)
        if text.startswith('#print "')
    ] + [
        {"severity": "info", "pos": {"line": number, "column": 0}, "data": '"4.15.0"'}
        for number, text in enumerate(code.split("\n"), start=1)
        if text == "#eval Lean.versionString"
    ]


@pytest.fixture
def kimina() -> Iterator[KiminaStub]:
    """Answers like Lean would, with each message positioned in the snippet (1-based lines)."""

    def answer(snippet: dict[str, Any]) -> dict[str, Any]:
        code = snippet["code"]
        if "#eval Lean.versionString" in code:  # the client asks which Lean the server runs
            return {"error": None, "response": {"messages": sentinel_echoes(code), "env": 0}}
        if "TIMEOUT" in code:
            return {"error": "Lean REPL command timed out", "response": None}
        messages: list[dict[str, Any]] = []

        def message(needle: str, severity: str, data: str) -> None:
            messages.append({"severity": severity, "pos": {"line": _line_of(code, needle), "column": 0}, "data": data})

        messages.extend(sentinel_echoes(code))
        name = code.split("#print axioms ")[-1].split("\n")[0].strip().removeprefix("_root_.")  # the resolved name
        if "  bad" in code:
            message("  bad", "error", "unsolved goals")
        if "SPOOF" in code:  # the prover's own code prints a clean report inside its own span
            message("SPOOF", "info", f"'{name}' does not depend on any axioms")
        message("theorem repro_target_", "warning", "declaration uses 'sorry'")
        axioms = "propext, sorryAx" if "SPOOF" in code else "propext"
        message("#print axioms", "info", f"'{name}' depends on axioms: [{axioms}]")
        return {"error": None, "response": {"messages": messages, "env": 0}}

    stub = KiminaStub(answer)
    yield stub
    stub.server.shutdown()


async def test_kimina_backend_uses_the_same_verdict_rules(kimina: KiminaStub) -> None:
    verifier = KiminaVerifier(url=kimina.url, timeout_s=5)
    statement = "theorem k : 1 + 1 = 2 := by sorry"
    try:
        good = await verify_proof(statement, "theorem k : 1 + 1 = 2 := by\n  norm_num", verifier, header=HEADER)
        bad = await verify_proof(statement, "theorem k : 1 + 1 = 2 := by\n  bad", verifier, header=HEADER)
        slow = await verify_proof(statement, "theorem k : 1 + 1 = 2 := by\n  TIMEOUT", verifier, header=HEADER)
        spoof = await verify_proof(statement, "theorem k : 1 + 1 = 2 := by\n  decide -- SPOOF", verifier, header=HEADER)
    finally:
        await verifier.close()
    assert good.verified and good.lean is not None and good.lean.real_lean
    assert good.axioms == ["propext"]
    assert ReasonCode.lean_error in bad.reasons and bad.messages[0].line == 2, "lines are relative to the code"
    assert ReasonCode.lean_timeout in slow.reasons and not slow.verified
    # a clean report printed inside the prover's span is not the axiom command's answer
    assert not spoof.verified and ReasonCode.axiom_violation in spoof.reasons
    probe, *checks = kimina.bodies  # first the client asks the server which Lean it runs
    assert "#eval Lean.versionString" in probe["snippets"][0]["code"]
    sent = checks[0]
    code = sent["snippets"][0]["code"]
    assert sent["timeout"] == 5 and code.startswith(HEADER.rstrip())
    assert len(checks) == 4, "one snippet per check"
    assert code.index("theorem repro_target_") < code.index("theorem k :") < code.index("_bridge : type_of%")
    assert (
        code.index("_bridge : type_of%") < code.index("#print axioms _root_.k") < code.rindex('#print "repro_sentinel_')
    )


async def test_kimina_unreachable_is_unavailable_not_a_crash() -> None:
    verifier = KiminaVerifier(url="http://127.0.0.1:9", timeout_s=2)
    try:
        result = await verifier.check("theorem x : True := trivial", HEADER)
    finally:
        await verifier.close()
    assert result.infra_status == InfraStatus.unavailable


async def test_a_worker_over_its_memory_budget_is_recycled(repl_log: Path) -> None:
    # the fake REPL (a Python process) uses tens of MB: a 256 MB limit with 90% headroom is never hit,
    # so shrink the budget after start-up to force the recycle decision
    pool = fake_repl_verifier(workers=1, memory_limit_mb=2048)
    try:
        assert (await pool.check("theorem m0 : True := trivial", HEADER)).ok
        pool.memory_limit_mb = 1
        assert (await pool.check("theorem m1 : True := trivial", HEADER)).ok
        assert (await pool.check("theorem m2 : True := trivial", HEADER)).ok
    finally:
        await pool.close()
    pids = [entry["pid"] for entry in log_entries(repl_log) if entry["cmd"].startswith("theorem m")]
    assert pids[0] == pids[1] != pids[2]


async def test_the_fake_backends_scratch_directory_is_removed_on_close() -> None:
    pool = fake_repl_verifier(workers=1)
    home = Path(pool._owned_directory or "")
    assert (await pool.check("theorem c : True := trivial", HEADER)).ok
    await pool.close()
    assert home.name.startswith("repro-fake-repl-") and not home.exists()
