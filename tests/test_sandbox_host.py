"""What prover code inside the bubblewrap sandbox can reach of the host (red team finding R8, issue 27 §3).

Lean is absent here, so a plain Python process plays prover code that escaped the screen (it runs while
Lean elaborates, in the REPL or in the judge's compile). Each class is tried the way the product starts
processes: through :func:`repro.lean.sandbox.sandboxed`, the judge's :func:`repro.judge.runner.run_step`,
and the REPL pool's launcher (:class:`repro.lean.sandbox.WorkerSandbox`). Each test first shows the
control (outside the sandbox the attempt works), so a pass means the sandbox stopped it:

(a) no host socket: a UNIX path socket in a directory real hosts use (``/run``, ``$XDG_RUNTIME_DIR``,
    ``/var/tmp``, ``/tmp``) is not there, and one in a directory the sandbox must show cannot be opened;
(b) no user file: nothing of the home directory, nor of the checkout around repro's package;
(c) no write but the scratch directory (and a private ``/tmp`` that nobody outside reads), and no
    capability to remount anything, even when repro runs as root;
(d) no process outlives its step.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from repro.lean.sandbox import SandboxStatus, SandboxUnavailable, WorkerSandbox, confinement, sandboxed


def _bwrap() -> SandboxStatus:
    try:
        return confinement("bwrap")
    except SandboxUnavailable as error:  # pragma: no cover - bubblewrap works on the CI machine
        pytest.skip(f"bwrap does not work here: {error}")


def _run(status: SandboxStatus, code: str, work: Path, *args: str, **options: Any) -> subprocess.CompletedProcess[str]:
    command = sandboxed([sys.executable, "-c", code, *args], work, status, **options)
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


class HostService:
    """A host-side service on a UNIX path socket that acts for whoever connects (``systemd-run --user``,
    the Docker daemon): it creates the file the client names, outside the sandbox."""

    def __init__(self, directory: Path) -> None:
        self.address = directory / "service.sock"
        self.server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server.bind(str(self.address))
        self.server.listen(4)
        self.server.settimeout(0.2)
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self.server.accept()
            except OSError:
                continue
            self.connections += 1
            with connection:
                request = connection.recv(4096).decode()
                if request.startswith("touch "):
                    Path(request.removeprefix("touch ")).touch()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.server.close()


CLIENT = (
    "import json, os, socket, sys\n"
    "address, target = sys.argv[1], sys.argv[2]\n"
    "seen = os.path.exists(address)\n"
    "try:\n"
    "    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
    "    client.connect(address)\n"
    "    client.sendall(('touch ' + target).encode()); client.close(); outcome = 'sent'\n"
    "except OSError as error:\n"
    "    outcome = type(error).__name__\n"
    "print(json.dumps({'seen': seen, 'outcome': outcome}))\n"
)


def _service_directory(where: str) -> Path:
    uid = os.getuid()
    if where == "xdg":
        runtime = os.environ.get("XDG_RUNTIME_DIR")
        if not runtime or not os.access(runtime, os.W_OK):
            pytest.skip("no writable $XDG_RUNTIME_DIR here")
        return Path(tempfile.mkdtemp(prefix="repro-host-service-", dir=runtime))
    if where == "run":
        for base in (f"/run/user/{uid}", "/run", "/var/run"):
            if os.path.isdir(base) and os.access(base, os.W_OK):
                return Path(tempfile.mkdtemp(prefix="repro-host-service-", dir=base))
        pytest.skip("no writable directory under /run here (not root, no /run/user/UID)")
    return Path(tempfile.mkdtemp(prefix="repro-host-service-", dir=where))


@pytest.fixture
def service(request: pytest.FixtureRequest) -> Iterator[HostService]:
    directory = _service_directory(request.param)
    found = HostService(directory)
    yield found
    found.close()
    shutil.rmtree(directory, ignore_errors=True)


@pytest.mark.parametrize("service", ["run", "xdg", "/var/tmp", "/tmp"], indirect=True)
def test_a_host_service_socket_where_hosts_keep_them_is_not_there(service: HostService, tmp_path: Path) -> None:
    """(a), the file system view: the socket of a host service under /run, $XDG_RUNTIME_DIR (D-Bus,
    systemd's private socket), /var/run (docker.sock), /var/tmp or the host's /tmp does not exist inside."""
    status = _bwrap()
    target = service.address.parent / "written-for-the-sandbox"
    control = subprocess.run(
        [sys.executable, "-c", CLIENT, str(service.address), str(target) + ".control"],
        text=True,
        capture_output=True,
        timeout=30,
    )
    assert json.loads(control.stdout) == {"seen": True, "outcome": "sent"}, control.stderr
    work = tmp_path / "work"
    work.mkdir()
    inside = _run(status, CLIENT, work, str(service.address), str(target))
    assert inside.returncode == 0, inside.stderr
    assert json.loads(inside.stdout)["seen"] is False, inside.stdout
    time.sleep(0.3)
    assert service.connections == 1 and not target.exists(), "only the control reached the service"


@pytest.mark.parametrize("service", ["/var/tmp"], indirect=True)
def test_a_host_socket_in_a_directory_the_sandbox_shows_cannot_be_opened(service: HostService, tmp_path: Path) -> None:
    """(a), the system call filter: a socket lying in a path Lean needs shown (a project, a toolchain) is
    visible, and still no UNIX socket can be made to connect to it."""
    status = _bwrap()
    if not status.sockets_refused:
        pytest.skip(f"no system call filter here: {status.detail}")
    target = service.address.parent / "written-for-the-sandbox"
    work = tmp_path / "work"
    work.mkdir()
    inside = _run(status, CLIENT, work, str(service.address), str(target), read_only=[service.address.parent])
    assert json.loads(inside.stdout) == {"seen": True, "outcome": "PermissionError"}, inside.stdout + inside.stderr
    time.sleep(0.3)
    assert service.connections == 0 and not target.exists()


SOCKET_CLIENT = (
    "import socket, sys\n"
    "try:\n"
    "    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
    "    s.connect(sys.argv[1])\n"
    "except OSError as error:\n"
    "    print('refused:', error); sys.exit(7)\n"
    "s.sendall(('touch ' + sys.argv[2]).encode()); s.close(); print('sent')\n"
)


def test_a_judge_step_cannot_ask_a_host_service_behind_a_unix_socket_to_write_for_it(tmp_path: Path) -> None:
    """Red team (red1) finding R8, its test as written against main at a3adadf: `_bwrap_prefix` showed all of
    `/` read-only and cut the network namespace, but a read-only mount does not stop `connect()` on a UNIX
    socket file, and path sockets are not part of the network namespace. Here a host-side service at a path
    outside /tmp runs `touch PATH` for whoever connects (what systemd-run or docker would do); the sandboxed
    process is the judge's own step runner (repro/judge/runner.py run_step) under bwrap."""
    from repro.judge.runner import run_step

    status = _bwrap()
    service_dir = Path(tempfile.mkdtemp(prefix="red1-host-service-", dir="/var/tmp"))
    try:
        address = str(service_dir / "bus")
        escaped = service_dir / "written-by-the-host-for-the-sandbox"
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(address)
        server.listen(1)
        server.settimeout(15)

        def serve() -> None:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            request = connection.recv(4096).decode()
            connection.close()
            if request.startswith("touch "):
                Path(request.removeprefix("touch ")).touch()

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        work = tmp_path / "work"
        work.mkdir()
        result = asyncio.run(
            run_step(
                [sys.executable, "-c", SOCKET_CLIENT, address, str(escaped)],
                work,
                status,
                time.monotonic() + 30,
                env={"PATH": os.environ.get("PATH", "")},
            )
        )
        thread.join(timeout=15)
        server.close()
        assert result.returncode == 7 and "refused" in result.output, result
        assert not escaped.exists(), (
            f"a sandboxed step reached a host service's socket and had it write outside the sandbox"
            f" ({result.output.strip()})"
        )
    finally:
        shutil.rmtree(service_dir, ignore_errors=True)


READ = (
    "import json, os, sys\n"
    "found = {}\n"
    "for path in sys.argv[1:]:\n"
    "    try:\n"
    "        found[path] = open(path).read() if os.path.isfile(path) else sorted(os.listdir(path))\n"
    "    except OSError as error:\n"
    "        found[path] = type(error).__name__\n"
    "print(json.dumps(found))\n"
)


@pytest.fixture
def home_secret() -> Iterator[Path]:
    """A file in the user's home directory, as ~/.ssh/id_ed25519 or ~/.cache/huggingface/token are."""
    directory = Path.home() / f".repro-sandbox-test-{uuid.uuid4().hex[:8]}"
    directory.mkdir(mode=0o700)
    secret = directory / "token"
    secret.write_text("hf_secret")
    yield secret
    shutil.rmtree(directory, ignore_errors=True)


def test_no_file_of_the_home_directory_or_of_repros_checkout_can_be_read(
    home_secret: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """(b): the home directory, a secret in it, the working directory of the caller (here repro's checkout,
    where a run's store and configuration may lie) and the checkout's own files are not there; repro's
    package, which the sandbox shows, imports."""
    import repro

    monkeypatch.delenv("REPRO_SANDBOX_READ_ONLY")  # the default view (the suite shows its tests/ for its doubles)
    status = _bwrap()
    checkout_file = Path(repro.__file__).resolve().parents[1] / "pyproject.toml"
    paths = [str(home_secret), str(home_secret.parent), str(checkout_file), os.getcwd()]
    outside = subprocess.run([sys.executable, "-c", READ, *paths], capture_output=True, text=True, timeout=30)
    before = json.loads(outside.stdout)
    assert before[str(home_secret)] == "hf_secret" and isinstance(before[str(checkout_file)], str)
    work = tmp_path / "work"
    work.mkdir()
    inside = _run(status, READ, work, *paths)
    after = json.loads(inside.stdout)
    working = after.pop(os.getcwd())
    assert after == dict.fromkeys(paths[:3], "FileNotFoundError"), after
    # the working directory is absent, or only the skeleton bubblewrap made to mount what it shows below it
    # (repro's package, its virtual environment): none of the checkout's own files
    shown_below = {Path(repro.__file__).resolve().parent, Path(sys.prefix).resolve()}
    skeleton = {path.relative_to(os.getcwd()).parts[0] for path in shown_below if path.is_relative_to(os.getcwd())}
    assert working == "FileNotFoundError" or set(working) <= skeleton, working
    home = _run(status, READ, work, str(Path.home()))
    listed = json.loads(home.stdout)[str(Path.home())]
    # the home directory is absent, or only the skeleton of a path shown below it (a toolchain, a venv)
    assert listed == "FileNotFoundError" or home_secret.parent.name not in listed, listed
    imported = _run(status, "import repro.lean.sandbox; print('imported')", work)
    assert imported.stdout.strip() == "imported", imported.stderr


def _pool_launcher(tmp_path: Path, status: SandboxStatus) -> tuple[WorkerSandbox, Any]:
    lake = tmp_path / "toolchain" / "bin" / "lake"
    lake.parent.mkdir(parents=True)
    lake.write_text('#!/bin/sh\n[ "$1" = env ] && shift\nexec "$@"\n', encoding="utf-8")
    lake.chmod(0o755)
    project = tmp_path / "project"
    project.mkdir()
    config = SimpleNamespace(lake_path=lake, working_dir=str(project), _cache_repl_dir=str(tmp_path / "repl"))
    worker_sandbox = WorkerSandbox(status)
    worker_sandbox.prepare(config, str(lake))
    return worker_sandbox, config


@pytest.mark.parametrize("service", ["/var/tmp"], indirect=True)
def test_a_repl_worker_reaches_no_host_socket_and_no_home_file(
    service: HostService, home_secret: Path, tmp_path: Path
) -> None:
    """(a) and (b) through the REPL pool's launcher, what LeanInteract starts as ``lake`` (run from the
    project directory, as LeanInteract runs it)."""
    status = _bwrap()
    worker_sandbox, config = _pool_launcher(tmp_path, status)
    target = service.address.parent / "written-for-the-repl"
    try:
        for code, args in ((CLIENT, [str(service.address), str(target)]), (READ, [str(home_secret)])):
            done = subprocess.run(
                [str(config.lake_path), "env", sys.executable, "-c", code, *args],
                capture_output=True,
                text=True,
                timeout=60,
                cwd=config.working_dir,
            )
            assert done.returncode == 0, done.stderr
            found = json.loads(done.stdout)
            # the socket is not there (the filter refuses the socket itself first: PermissionError)
            assert found in (
                {"seen": False, "outcome": "FileNotFoundError"},
                {"seen": False, "outcome": "PermissionError"},
                {str(home_secret): "FileNotFoundError"},
            ), found
        time.sleep(0.3)
        assert service.connections == 0 and not target.exists()
    finally:
        worker_sandbox.close()


WRITE = (
    "import json, os, sys\n"
    "found = {}\n"
    "for path in sys.argv[1:]:\n"
    "    try:\n"
    "        with open(path, 'w') as handle:\n"
    "            handle.write('x')\n"
    "        found[path] = 'written'\n"
    "    except OSError as error:\n"
    "        found[path] = type(error).__name__\n"
    "print(json.dumps(found))\n"
)


def test_nothing_but_the_scratch_directory_and_a_private_tmp_is_writable(tmp_path: Path) -> None:
    """(c): the root, the system view, a directory shown read-only: refused; ``/tmp`` inside is a private
    one (the host's /tmp never sees the file); the scratch directory takes the write."""
    status = _bwrap()
    work = tmp_path / "work"
    work.mkdir()
    shown = tmp_path / "shown"
    shown.mkdir()
    marker = f"repro-private-{uuid.uuid4().hex[:8]}"
    paths = [f"/{marker}", f"/usr/{marker}", str(shown / marker), f"/tmp/{marker}", str(work / marker)]
    inside = _run(status, WRITE, work, *paths, read_only=[shown])
    found = json.loads(inside.stdout)
    assert all(found[path] in ("OSError", "PermissionError") for path in paths[:3]), found  # EROFS, EACCES
    assert found[f"/tmp/{marker}"] == "written" and found[str(work / marker)] == "written", found
    assert not Path(f"/tmp/{marker}").exists() and not (shown / marker).exists() and (work / marker).exists()


PRIVILEGE = r"""
import ctypes, json, os
libc = ctypes.CDLL(None, use_errno=True)
status = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
MS_REMOUNT, MS_BIND = 32, 4096
remount = libc.mount(None, b"/", None, MS_REMOUNT | MS_BIND, None)
CLONE_NEWUSER = 0x10000000
nested = libc.unshare(CLONE_NEWUSER)
print(json.dumps({"effective": status["CapEff"].strip(), "bounding": status["CapBnd"].strip(),
                  "remount": remount, "nested_userns": nested}))
"""


def test_the_sandboxed_process_has_no_capability_even_when_repro_runs_as_root(tmp_path: Path) -> None:
    """(c): bubblewrap run by root without a user namespace keeps every capability of root for the sandboxed
    process (``bubblewrap.c`` ``drop_all_caps``), which can then ``mount -o remount,rw /`` and write anywhere;
    GPU containers often run as root. The sandbox asks for a user namespace and ``--cap-drop ALL``."""
    status = _bwrap()
    work = tmp_path / "work"
    work.mkdir()
    inside = _run(status, PRIVILEGE, work)
    found = json.loads(inside.stdout)
    assert int(found["effective"], 16) == 0 and found["remount"] == -1, found
    from repro.lean.sandbox import _bwrap_options

    if "--disable-userns" in _bwrap_options(shutil.which("bwrap") or "bwrap"):
        assert found["nested_userns"] == -1, "bubblewrap >= 0.8 refuses nested user namespaces"


DAEMON = r"""
import glob, os, sys, time
# where to beat: the file named, or the one scratch directory under the root named (a REPL worker's)
beat = sys.argv[1] if len(sys.argv) == 2 else os.path.join(glob.glob(os.path.join(sys.argv[2], "*"))[0], "beat")
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for fd in (0, 1, 2):
            os.close(fd)
        with open(beat + ".pid", "w") as handle:
            handle.write(str(os.getpid()))
        while True:
            with open(beat, "a") as handle:
                handle.write(".")
            time.sleep(0.05)
    os._exit(0)
time.sleep(0.3)
print("left a daemon")
"""


def _still_beating(beat: Path) -> bool:
    time.sleep(0.5)
    first = beat.stat().st_size if beat.exists() else 0
    time.sleep(0.6)
    return (beat.stat().st_size if beat.exists() else 0) != first


def _daemon_outside(tmp_path: Path) -> None:
    """The control: outside the sandbox the same program leaves a process that lives on (then ended, by pid)."""
    beat = tmp_path / "control-beat"
    subprocess.run([sys.executable, "-c", DAEMON, str(beat)], capture_output=True, timeout=30, check=True)
    try:
        assert _still_beating(beat), "outside the sandbox the daemon lives on"
    finally:
        pid_file = Path(str(beat) + ".pid")
        if pid_file.exists():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)


@pytest.mark.parametrize("through", ["sandboxed", "judge step", "repl launcher"])
def test_no_process_outlives_its_sandboxed_step(tmp_path: Path, through: str) -> None:
    """(d): a process that double-forks into a session of its own ends with the step (the sandbox's PID
    namespace dies with its init, which dies with bubblewrap: ``--die-with-parent``)."""
    status = _bwrap()
    _daemon_outside(tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    beat = work / "beat"
    if through == "sandboxed":
        output = _run(status, DAEMON, work, str(beat)).stdout
    elif through == "judge step":
        from repro.judge.runner import run_step

        command = [sys.executable, "-c", DAEMON, str(beat)]
        output = asyncio.run(run_step(command, work, status, time.monotonic() + 30, env=dict(os.environ))).output
    else:
        worker_sandbox, config = _pool_launcher(tmp_path, status)
        try:
            assert worker_sandbox.scratch_root is not None
            done = subprocess.run(
                [str(config.lake_path), "env", sys.executable, "-c", DAEMON, "-", str(worker_sandbox.scratch_root)],
                capture_output=True,
                text=True,
                timeout=60,
                cwd=config.working_dir,
            )
            output = done.stdout + done.stderr
            beats = list(worker_sandbox.scratch_root.glob("*/beat"))
            assert len(beats) == 1, output
            assert "left a daemon" in output and not _still_beating(beats[0]), "a process of the worker lives on"
        finally:
            worker_sandbox.close()
        return
    assert "left a daemon" in output and beat.exists(), output
    assert not _still_beating(beat), "a process of the step is still alive"


def test_a_read_only_path_that_would_show_a_home_directory_or_run_is_refused(tmp_path: Path) -> None:
    """A configuration naming ``~`` (or ``/``, ``/run``, ``/tmp``) as a path to show would undo (a) and (b):
    the sandbox refuses to start, and a judge step says so instead of running."""
    from repro.judge.runner import run_step

    status = _bwrap()
    work = tmp_path / "work"
    work.mkdir()
    for path in (Path.home(), Path("/"), Path("/run"), Path("/tmp")):
        with pytest.raises(SandboxUnavailable, match="would show"):
            sandboxed(["true"], work, status, read_only=[path])
    result = asyncio.run(run_step(["true"], work, status, time.monotonic() + 30, read_only=[Path.home()]))
    assert result.returncode is None and result.start_error is not None and "would show" in result.start_error


def test_a_project_shown_brings_its_packages_where_they_really_lie(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A Lake project (the judge's tool checkout, a REPL's project) whose Mathlib is a link to a copy shared
    elsewhere: Lean reads the package through the link, so the sandbox shows where it leads, and nothing
    beside it."""
    status = _bwrap()
    shared = Path(tempfile.mkdtemp(prefix="repro-shared-packages-", dir="/var/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(shared, ignore_errors=True))
    (shared / "mathlib").mkdir()
    (shared / "mathlib" / "Mathlib.olean").write_text("olean")
    (shared / "beside").write_text("not Lean's")
    project = tmp_path / "checkout"
    (project / ".lake" / "packages").mkdir(parents=True)
    (project / ".lake" / "packages" / "mathlib").symlink_to(shared / "mathlib")
    work = tmp_path / "work"
    work.mkdir()
    through_link = str(project / ".lake" / "packages" / "mathlib" / "Mathlib.olean")
    inside = _run(status, READ, work, through_link, str(shared / "beside"), read_only=[project])
    assert json.loads(inside.stdout) == {through_link: "olean", str(shared / "beside"): "FileNotFoundError"}, (
        inside.stdout + inside.stderr
    )


ABSTRACT_CLIENT = (
    "import socket, sys\n"
    "try:\n"
    "    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
    "    client.connect(b'\\0' + sys.argv[1].encode())\n"
    "    client.sendall(b'hello'); client.close(); print('sent')\n"
    "except OSError as error:\n"
    "    print(type(error).__name__)\n"
)


def test_a_host_abstract_socket_is_cut_by_the_network_namespace_even_without_the_filter(tmp_path: Path) -> None:
    """(a), abstract UNIX sockets (no file: ``@/tmp/.X11-unix/X0``, some D-Bus buses) belong to the network
    namespace: bubblewrap's ``--unshare-net`` cuts them on its own, where the system call filter is absent (a
    machine without its numbers) as well as where it refuses the socket first."""
    from repro.lean.sandbox import _bwrap_prefix

    status = _bwrap()
    name = f"repro-abstract-{uuid.uuid4().hex[:12]}"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(b"\0" + name.encode())
    server.listen(4)
    try:
        command = [sys.executable, "-c", ABSTRACT_CLIENT, name]
        control = subprocess.run(command, capture_output=True, text=True, timeout=30)
        assert control.stdout.strip() == "sent", control.stderr
        work = tmp_path / "work"
        work.mkdir()
        bwrap = shutil.which("bwrap") or "bwrap"
        bare = _bwrap_prefix(bwrap, work, command=command, syscall_filter=False) + command
        assert "--seccomp" not in bare
        unfiltered = subprocess.run(bare, capture_output=True, text=True, timeout=30)
        assert unfiltered.stdout.strip() == "ConnectionRefusedError", unfiltered.stdout + unfiltered.stderr
        filtered = _run(status, ABSTRACT_CLIENT, work, name)
        expected = "PermissionError" if status.sockets_refused else "ConnectionRefusedError"
        assert filtered.stdout.strip() == expected, filtered.stdout + filtered.stderr
    finally:
        server.close()
