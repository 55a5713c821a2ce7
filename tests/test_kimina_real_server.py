"""Our Kimina client against the real Kimina Lean Server: kimina-ast-server 2.1.3 from PyPI
(project-numina/kimina-lean-server), started on 127.0.0.1 against a line-wise REPL stand-in
(tests/doubles/line_lean.py) and the elan stand-in (tests/doubles/elan.py): the server runs
``lake env <repl>`` in its Mathlib directory, as it does on a node with Lean.

The server lives in its own virtual environment (its dependencies are not repro's): ``.venv-kimina``
beside the checkout, which .ci/run builds, or ``REPRO_KIMINA_PYTHON``. What the real release cannot be
made to show (HTTP 429, the current upstream's header offset, a stalled server) stays with the fake server
(tests/doubles/kimina_server.py, tests/test_kimina_server.py).
"""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from repro.lean.kimina import KiminaRefused, KiminaVerifier
from repro.lean.protocol import InfraStatus
from repro.lean.toolchains import STANDARD_HEADER
from tests.conftest import REPO
from tests.doubles.elan import make_fake_elan

RELEASE = "2.1.3"  # the kimina-ast-server release these tests were written against
COMMIT = "c" * 40
LINE_LEAN = REPO / "tests" / "doubles" / "line_lean.py"
# no import lines: the release runs them as its header and does not add their lines back (see below)
PLAIN_HEADER = "set_option maxHeartbeats 400000\n\nopen BigOperators Real Nat Topology Rat\n"


def _kimina_python() -> Path:
    configured = os.environ.get("REPRO_KIMINA_PYTHON")
    path = Path(configured) if configured else REPO / ".venv-kimina" / "bin" / "python"
    if not path.is_file():
        pytest.skip(
            f"the real Kimina server is not installed at {path} (.ci/run builds it with Python >= 3.12:"
            " python3.12 -m venv .venv-kimina && .venv-kimina/bin/pip install"
            " -c tests/doubles/kimina-server-constraints.txt kimina-ast-server)"
        )
    return path


@dataclass
class RealKimina:
    url: str
    process: subprocess.Popen[str]
    log: Path


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _start(tmp_path: Path, *, max_repls: int = 2, max_wait: int = 60) -> RealKimina:
    python = _kimina_python()
    workspace = tmp_path / "workspace"
    mathlib = workspace / "mathlib4"
    (mathlib / ".git").mkdir(parents=True)
    (mathlib / ".git" / "HEAD").write_text(COMMIT + "\n")
    (mathlib / "lean-toolchain").write_text("leanprover/lean4:v4.15.0\n")
    for binary, program in (
        (workspace / "repl" / ".lake" / "build" / "bin" / "repl", f"exec {sys.executable} {LINE_LEAN}"),
        (workspace / "ast_export" / ".lake" / "build" / "bin" / "ast-export", "exit 1"),
    ):
        binary.parent.mkdir(parents=True)
        binary.write_text(f"#!/bin/sh\n{program}\n")
        binary.chmod(0o755)
    elan = make_fake_elan(tmp_path / "elan")
    port = _free_port()
    env = {
        **os.environ,
        **elan.env(os.environ.get("PATH", "/usr/bin:/bin")),
        "LEAN_SERVER_WORKSPACE": str(workspace),
        "LEAN_SERVER_HOST": "127.0.0.1",
        "LEAN_SERVER_PORT": str(port),
        "LEAN_SERVER_MAX_REPLS": str(max_repls),
        "LEAN_SERVER_MAX_WAIT": str(max_wait),
        "LEAN_SERVER_LEAN_VERSION": "v4.15.0",
        "LEAN_SERVER_ENVIRONMENT": "dev",
        # its database client cannot be generated offline and is unused without a database URL
        "PYTHONPATH": str(REPO / "tests" / "doubles" / "prisma_stub"),
    }
    log = tmp_path / "kimina.log"
    process = subprocess.Popen(
        [str(python), "-m", "server", "run"],
        cwd=workspace,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the Kimina server exited {process.returncode}: {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return RealKimina(url, process, log)
        except httpx.HTTPError:
            time.sleep(0.2)
    process.kill()
    raise AssertionError(f"the Kimina server did not start: {log.read_text()[-2000:]}")


@pytest.fixture
def kimina(tmp_path: Path) -> Iterator[RealKimina]:
    server = _start(tmp_path)
    yield server
    os.killpg(server.process.pid, 9)
    server.process.wait()


def _client(url: str, **options: object) -> KiminaVerifier:
    return KiminaVerifier(url=url, toolchain="leanprover/lean4:v4.15.0", mathlib_revision="v4.15.0", **options)  # type: ignore[arg-type]


def test_the_installed_server_is_the_release_these_tests_read() -> None:
    python = _kimina_python()
    done = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('kimina-ast-server'))"],
        capture_output=True,
        text=True,
    )
    assert done.stdout.strip() == RELEASE, f"read the new release's server/routers/check.py first: {done.stdout}"


def test_the_release_does_not_add_the_header_lines_back_and_the_client_refuses_it(kimina: RealKimina) -> None:
    """kimina-ast-server 2.1.3 splits the imports off as the REPL's header and returns positions relative
    to the body (its server/routers/check.py has no header offset, unlike upstream e2cdc1f): every message
    would be attributed to the wrong line, so the client refuses the server, before any verdict."""

    async def go() -> None:
        client = _client(kimina.url)
        try:
            with pytest.raises(KiminaRefused, match="moves Lean's message positions"):
                await client.prepare(STANDARD_HEADER)
            result = await client.check("theorem t : True := trivial", STANDARD_HEADER)
            assert result.infra_status == InfraStatus.unavailable and "refused" in (result.detail or "")
        finally:
            await client.close()

    asyncio.run(go())


def test_verdicts_through_the_real_server_with_a_header_it_keeps_in_place(kimina: RealKimina) -> None:
    async def go() -> None:
        client = _client(kimina.url)
        try:
            await client.prepare(PLAIN_HEADER)
            assert client.toolchain == "leanprover/lean4:v4.15.0"  # asked of "Lean" through the server
            assert client.mathlib_revision == f"v4.15.0@{COMMIT}"
            clean, sorry, bad = await client.check_sequence(
                [
                    "theorem fine : True := trivial",
                    "theorem holey : True := by sorry",
                    "theorem broken : True := by\n  bad",
                ],
                PLAIN_HEADER,
            )
            assert clean.ok, clean.detail
            assert sorry.sorries and any("declaration uses 'sorry'" in m.text for m in sorry.messages)
            assert bad.has_error and [m.line for m in bad.messages] == [2]  # renumbered within its command
        finally:
            await client.close()

    asyncio.run(go())


def test_a_hang_is_the_servers_timeout_reported_as_a_timeout(kimina: RealKimina) -> None:
    async def go() -> None:
        client = _client(kimina.url, timeout_s=2)
        try:
            await client.prepare(PLAIN_HEADER)
            result = await client.check("theorem spin : True := HANG", PLAIN_HEADER)
            assert result.infra_status == InfraStatus.timeout, result.detail
            assert "timed out in 2" in (result.detail or "")
            after = await client.check("theorem fine : True := trivial", PLAIN_HEADER)  # a fresh REPL serves
            assert after.ok, after.detail
        finally:
            await client.close()

    asyncio.run(go())


def test_no_free_repl_is_a_busy_server_never_a_crash(tmp_path: Path) -> None:
    """2.1.3 answers a request that found no free REPL within LEAN_SERVER_MAX_WAIT with an error result
    ("No available REPLs"), not the HTTP 429 of upstream HEAD: Lean never saw the check."""
    server = _start(tmp_path, max_repls=1, max_wait=1)
    try:

        async def go() -> None:
            hanging = _client(server.url, timeout_s=20, busy_retries=0)
            second = _client(server.url, timeout_s=20, busy_retries=1, backoff_s=0.1)
            try:
                await hanging.prepare(PLAIN_HEADER)
                stuck = asyncio.create_task(hanging.check("theorem spin : True := HANG", PLAIN_HEADER))
                await asyncio.sleep(1.0)
                result = await second.check("theorem fine : True := trivial", PLAIN_HEADER)
                assert result.infra_status == InfraStatus.unavailable, result
                assert "No available REPLs" in (result.detail or "") and second.busy_answers >= 1
                stuck.cancel()
            finally:
                await hanging.close()
                await second.close()

        asyncio.run(go())
    finally:
        os.killpg(server.process.pid, 9)
        server.process.wait()
