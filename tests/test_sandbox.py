"""The sandbox for Lean processes (issue 19 §5): no network, no writes outside the work directory.

Lean is absent here, so a plain Python subprocess plays the prover code that escaped the gate (the
``polyrith`` class: a process that opens a connection during verification); the ``lean``-marked test
does the same from Lean's own ``IO.Process`` inside the sandboxed ``lake env lean``.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from repro.lean.sandbox import SandboxStatus, detect_sandbox, sandboxed, write_launcher

CONNECT = (
    "import socket, sys\n"
    "try:\n"
    "    socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=3).close()\n"
    "except OSError as error:\n"
    "    print('refused:', error); sys.exit(7)\n"
    "print('connected')\n"
)


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP server on the host's loopback that accepts every connection."""
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    stop = threading.Event()

    def serve() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                connection, _ = server.accept()
                connection.close()
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield port
    stop.set()
    thread.join()
    server.close()


def _confined() -> SandboxStatus:
    status = detect_sandbox()
    print(f"sandbox: {status.describe()}")
    if status.kind == "none":
        pytest.skip(f"no sandbox launcher works on this machine: {status.detail}")
    return status


def test_a_network_attempt_from_a_sandboxed_process_fails(listener: int, tmp_path: Path) -> None:
    status = _confined()
    command = [sys.executable, "-c", CONNECT, str(listener)]
    plain = subprocess.run(command, capture_output=True, text=True, timeout=30)
    assert plain.returncode == 0 and "connected" in plain.stdout  # the control: the server is reachable
    confined = subprocess.run(sandboxed(command, tmp_path, status), capture_output=True, text=True, timeout=30)
    assert confined.returncode == 7 and "refused" in confined.stdout, confined.stderr
    assert status.network_blocked


def test_a_sandboxed_process_writes_only_in_its_work_directory(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    status = _confined()
    if not status.writes_confined:
        pytest.skip(f"{status.describe()} (bubblewrap confines writes)")
    work = tmp_path / "work"
    work.mkdir()
    # outside /tmp (which the sandbox replaces by an empty private one): a directory the process can see
    outside = Path(tempfile.mkdtemp(prefix="repro-sandbox-outside-", dir="/var/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(outside, ignore_errors=True))
    script = (
        "import sys, pathlib\n"
        "pathlib.Path(sys.argv[1], 'kept.txt').write_text('ok')\n"
        "try:\n"
        "    pathlib.Path(sys.argv[2], 'escaped.txt').write_text('no')\n"
        "except OSError as error:\n"
        "    print('denied:', error)\n"
    )
    done = subprocess.run(
        sandboxed([sys.executable, "-c", script, str(work), str(outside)], work, status),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert "denied: [Errno 30] Read-only file system" in done.stdout and (work / "kept.txt").read_text() == "ok"
    assert not (outside / "escaped.txt").exists()


def test_the_launcher_script_runs_its_program_in_the_sandbox(listener: int, tmp_path: Path) -> None:
    """The REPL pool hands LeanInteract this script as ``lake``: the REPL it starts inherits the sandbox."""
    status = _confined()
    launcher = write_launcher(sys.executable, tmp_path, tmp_path / "bin" / "lake", status)
    done = subprocess.run([str(launcher), "-c", CONNECT, str(listener)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 7 and "refused" in done.stdout, done.stderr


def test_without_a_launcher_the_status_says_nothing_is_confined(monkeypatch: pytest.MonkeyPatch) -> None:
    detect_sandbox.cache_clear()
    monkeypatch.setattr(shutil, "which", lambda name: None)
    try:
        status = detect_sandbox()
        assert (status.kind, status.network_blocked, status.writes_confined) == ("none", False, False)
        assert "bwrap (bubblewrap) not on PATH" in status.detail and "network and write access" in status.describe()
        assert sandboxed(["lake", "env"], Path("/tmp"), status) == ["lake", "env"]
    finally:
        detect_sandbox.cache_clear()


@pytest.mark.lean
def test_lean_code_cannot_reach_the_network_from_the_sandbox(listener: int, tmp_path: Path) -> None:
    """What `polyrith` does at elaboration time (start a process that calls a service), from Lean."""
    status = _confined()
    lake = shutil.which("lake")
    project = Path(__file__).resolve().parents[1] / "lean_project"
    if lake is None or not (project / ".lake").is_dir():
        pytest.skip("needs lake on PATH and lean_project/ built (`repro lean setup`, or docker/Dockerfile)")
    source = tmp_path / "Escape.lean"
    source.write_text(
        "#eval do\n"
        f'  let out ← IO.Process.output {{ cmd := "{sys.executable}",'
        f' args := #["-c", {json.dumps(CONNECT)}, "{listener}"] }}\n'
        '  IO.println s!"exit {out.exitCode}: {out.stdout}"\n',
        encoding="utf-8",
    )
    done = subprocess.run(
        sandboxed([lake, "-d", str(project), "env", "lean", str(source)], tmp_path, status),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "exit 7: refused" in done.stdout, done.stdout + done.stderr


def test_the_repl_pool_hook_points_lean_interact_at_the_launcher(tmp_path: Path) -> None:
    """LeanInteract starts ``config.lake_path env repl``; after the hook that program is our launcher."""
    from types import SimpleNamespace

    from repro.lean.sandbox import sandbox_launcher

    status = _confined()
    config = SimpleNamespace(lake_path=Path(sys.executable))
    sandbox_launcher(tmp_path)(config)
    launcher = Path(config.lake_path)
    assert launcher.parent == tmp_path / "bin" and launcher.stat().st_mode & 0o111
    text = launcher.read_text()
    assert sys.executable in text and (status.kind in text)


def test_doctor_reports_the_sandbox() -> None:
    from repro.app import doctor

    lines = {line.name: line for line in doctor(None)}
    line = lines["sandbox for Lean processes"]
    status = detect_sandbox()
    assert line.ok == (status.network_blocked and status.writes_confined) and status.describe() in line.detail


def test_the_sandboxed_lake_is_the_projects_toolchain_not_elans_shim(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inside the sandbox elan's shim would pick a toolchain from the wrong directory and write ELAN_HOME."""
    from repro.lean.sandbox import toolchain_binary

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    elan = bin_dir / "elan"
    elan.write_text('#!/bin/sh\n[ "$1" = which ] && echo "$(pwd)/.elan/toolchains/v4.9.0/bin/$2"\n')
    elan.chmod(0o755)
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    toolchain_binary.cache_clear()
    try:
        assert toolchain_binary("lake", str(project)) == f"{project}/.elan/toolchains/v4.9.0/bin/lake"
        assert toolchain_binary("python3", str(project)) == shutil.which("python3")  # not a Lean program
    finally:
        toolchain_binary.cache_clear()


def test_a_python_environment_under_tmp_stays_visible_read_only_in_bubblewrap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a venv or checkout under /tmp (a CI clone, a scratch venv) would be hidden by the private /tmp, and
    # every sandboxed tool written in Python would fail to start ("execvp .venv/bin/python3")
    from repro.lean import sandbox

    venv = (tmp_path / "venv").resolve()
    venv.mkdir()
    monkeypatch.setattr(sandbox.sys, "prefix", str(venv))
    work = tmp_path / "work"
    work.mkdir()
    prefix = sandbox._bwrap_prefix("bwrap", work)
    at = prefix.index(str(venv))
    assert prefix[at - 1] == "--ro-bind" and prefix[at + 1] == str(venv)
    assert prefix.index("--tmpfs") < at < prefix.index("--bind"), "shown over the private /tmp, read-only"
