"""The sandbox for Lean processes (issue 19 §5): no network, no writes outside the work directory.

Lean is absent here, so a plain Python subprocess plays the prover code that escaped the gate (the
``polyrith`` class: a process that opens a connection during verification); the ``lean``-marked test
does the same from Lean's own ``IO.Process`` inside the sandboxed ``lake env lean``.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from repro.lean.protocol import InfraStatus
from repro.lean.sandbox import SandboxStatus, WorkerSandbox, detect_sandbox, sandboxed

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
    # outside /tmp (which the sandbox replaces by an empty private one), and shown to the process read-only
    # (a project, a toolchain): it can read there, never write
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
        sandboxed([sys.executable, "-c", script, str(work), str(outside)], work, status, read_only=[outside]),
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    assert "denied: [Errno 30] Read-only file system" in done.stdout and (work / "kept.txt").read_text() == "ok"
    assert not (outside / "escaped.txt").exists()


def _real_lake(directory: Path) -> Path:
    """A ``lake`` standing for the toolchain's: ``lake env CMD`` runs CMD (as Lake does, in its environment)."""
    directory.mkdir(parents=True, exist_ok=True)
    lake = directory / "lake"
    lake.write_text('#!/bin/sh\n[ "$1" = env ] && shift\nexec "$@"\n', encoding="utf-8")
    lake.chmod(0o755)
    return lake


def _pool_sandbox(tmp_path: Path, status: SandboxStatus) -> tuple[WorkerSandbox, Any, Path]:
    project = tmp_path / "project"
    project.mkdir()
    lake = _real_lake(tmp_path / "toolchain" / "bin")
    config = SimpleNamespace(lake_path=lake, working_dir=str(project), _cache_repl_dir=str(tmp_path / "repl"))
    worker_sandbox = WorkerSandbox(status)
    worker_sandbox.prepare(config, str(lake))
    return worker_sandbox, config, lake


def test_the_launcher_runs_the_toolchains_lake_in_the_sandbox(listener: int, tmp_path: Path) -> None:
    """The REPL pool hands LeanInteract this launcher as ``lake``: the REPL it starts inherits the sandbox."""
    status = _confined()
    worker_sandbox, config, _ = _pool_sandbox(tmp_path, status)
    try:
        done = subprocess.run(
            [str(config.lake_path), "env", sys.executable, "-c", CONNECT, str(listener)],
            capture_output=True,
            text=True,
            timeout=30,
        )
        assert done.returncode == 7 and "refused" in done.stdout, done.stderr
        launcher = Path(config.lake_path)
        assert not launcher.stat().st_mode & 0o222, "the launcher is written read-only"
        assert worker_sandbox.scratch_root is not None and not launcher.is_relative_to(worker_sandbox.scratch_root)
    finally:
        worker_sandbox.close()


# what prover code that escaped the screen would do: rewrite every file and directory it can reach
REWRITE_EVERYTHING = """
import os, sys
changed = []
for root in sys.argv[1:]:
    for base, dirs, files in os.walk(root):
        for name in files + dirs:
            path = os.path.join(base, name)
            try:
                os.chmod(path, 0o777)
            except OSError:
                pass
            if os.path.isfile(path) and not os.path.islink(path):
                try:
                    with open(path, "w") as handle:
                        handle.write("#!/bin/sh\\necho pwned\\n")
                    changed.append(path)
                except OSError:
                    pass
        try:
            with open(os.path.join(base, "planted"), "w") as handle:
                handle.write("x")
            changed.append(os.path.join(base, "planted"))
        except OSError:
            pass
print("changed:", changed)
"""


@pytest.mark.parametrize("through", ["launcher", "plain process"])
def test_a_process_that_rewrites_every_file_it_reaches_cannot_change_the_next_worker_start(
    tmp_path: Path, through: str
) -> None:
    """Issue 27 §3: nothing executed outside the sandbox (the launcher, the toolchain's lake) is writable
    inside it; today's launcher lay in the scratch directory the sandbox binds read-write."""
    status = _confined()
    if not status.writes_confined:
        pytest.skip(f"{status.describe()} (only bubblewrap confines writes)")
    worker_sandbox, config, lake = _pool_sandbox(tmp_path, status)
    launcher = Path(config.lake_path)
    assert worker_sandbox.scratch_root is not None
    roots = [str(launcher.parent), str(worker_sandbox.scratch_root), str(tmp_path), str(lake.parent), "/tmp"]
    before = {path: path.read_bytes() for path in (launcher, lake)}
    try:
        if through == "launcher":
            command = [str(launcher), "env", sys.executable, "-c", REWRITE_EVERYTHING, *roots]
        else:
            scratch = tmp_path / "scratch"
            scratch.mkdir()
            command = sandboxed([sys.executable, "-c", REWRITE_EVERYTHING, *roots], scratch, status)
        done = subprocess.run(command, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert "planted" in done.stdout  # it could write where it may: its own scratch directory
        worker_sandbox.verify()  # the next worker start: the launcher's hash still matches
        assert {path: path.read_bytes() for path in before} == before
        again = subprocess.run([str(launcher), "env", "echo", "still ours"], capture_output=True, text=True)
        assert again.stdout.strip() == "still ours", again.stdout + again.stderr
    finally:
        worker_sandbox.close()


def test_a_launcher_changed_outside_the_sandbox_starts_no_worker(tmp_path: Path) -> None:
    """Under ``unshare`` or ``none`` a process can rewrite the user's files: the hash check stops it."""
    from repro.lean.sandbox import LauncherChanged

    status = _confined()
    worker_sandbox, config, _ = _pool_sandbox(tmp_path, status)
    launcher = Path(config.lake_path)
    try:
        launcher.parent.chmod(0o755)
        launcher.chmod(0o755)
        launcher.write_text("#!/bin/sh\necho forged\n")
        launcher.chmod(0o555)
        with pytest.raises(LauncherChanged, match="changed since repro wrote it"):
            worker_sandbox.verify()
    finally:
        worker_sandbox.close()


def test_a_pool_whose_launcher_was_rewritten_answers_unavailable(tmp_path: Path) -> None:
    """A worker that crashed is replaced; the replacement's start finds the rewritten launcher and refuses."""
    from repro.lean.fake_backend import fake_repl_verifier

    status = _confined()
    verifier = fake_repl_verifier([{"match": "CRASH", "action": "crash"}], workers=1, timeout_s=20)
    worker_sandbox = WorkerSandbox(status)
    verifier.sandbox = worker_sandbox

    async def go() -> tuple[Any, Any, Any]:
        try:
            first = await verifier.check("theorem ok_probe : True := trivial", "")
            launcher = worker_sandbox.launcher
            assert launcher is not None
            launcher.parent.chmod(0o755)
            launcher.chmod(0o755)
            launcher.write_text("#!/bin/sh\necho forged\n")
            crashed = await verifier.check("CRASH", "")
            later = await verifier.check("theorem ok_probe2 : True := trivial", "")
            return first, crashed, later
        finally:
            await verifier.close()

    first, crashed, later = asyncio.run(go())
    assert first.ok, first.detail
    assert later.infra_status == InfraStatus.unavailable and "changed since repro wrote it" in later.detail


def test_without_a_launcher_the_status_says_nothing_is_confined(monkeypatch: pytest.MonkeyPatch) -> None:
    from repro.lean.sandbox import clear_caches

    clear_caches()
    monkeypatch.setattr(shutil, "which", lambda name: None)
    try:
        status = detect_sandbox()
        assert (status.kind, status.network_blocked, status.writes_confined) == ("none", False, False)
        assert "bwrap (bubblewrap) is not on PATH" in status.detail and "network and write access" in status.describe()
        assert sandboxed(["lake", "env"], Path("/tmp"), status) == ["lake", "env"]
    finally:
        clear_caches()


def test_a_confinement_that_does_not_work_is_refused_by_name_never_weakened(monkeypatch: pytest.MonkeyPatch) -> None:
    """``lean.sandbox: bwrap`` (the default) without bubblewrap: an error naming the fix and the opt-ins."""
    from repro.lean.sandbox import SandboxUnavailable, clear_caches, confinement

    real_which = shutil.which
    clear_caches()
    monkeypatch.setattr(shutil, "which", lambda name: None if name == "bwrap" else real_which(name))
    try:
        with pytest.raises(SandboxUnavailable) as refused:
            confinement("bwrap")
        text = str(refused.value)
        assert "install bubblewrap" in text and "`lean.sandbox: none`" in text
        assert confinement("none").kind == "none"  # named by the operator: handed out, and said so
    finally:
        clear_caches()


def test_the_repl_backend_refuses_to_start_when_the_named_sandbox_does_not_work(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from repro.config import LeanBackendName, LeanSettings
    from repro.lean.factory import build_verifier
    from repro.lean.sandbox import clear_caches

    real_which = shutil.which
    clear_caches()
    monkeypatch.setattr(shutil, "which", lambda name: None if name == "bwrap" else real_which(name))
    (tmp_path / "lean-toolchain").write_text("leanprover/lean4:v4.15.0\n")
    settings = LeanSettings(backend=LeanBackendName.repl, project_path=str(tmp_path), header="")

    async def go() -> Any:
        verifier = build_verifier(settings)
        try:
            return await verifier.check("theorem t : True := trivial", "")
        finally:
            await verifier.close()

    try:
        result = asyncio.run(go())
    finally:
        clear_caches()
    assert result.infra_status == InfraStatus.unavailable and "lean.sandbox is bwrap" in result.detail


def test_the_setting_names_the_confinement_and_a_resume_may_only_tighten_it() -> None:
    from repro.config import ConfigError, LeanSettings, RunConfig, resume_changes

    assert LeanSettings().sandbox == "bwrap"
    assert LeanSettings.model_validate({"sandbox": True}).sandbox == "bwrap"  # stored runs of before
    assert LeanSettings.model_validate({"sandbox": False}).sandbox == "none"
    loose = RunConfig.model_validate({"lean": {"sandbox": "none"}})
    tight = RunConfig.model_validate({"lean": {"sandbox": "bwrap"}})
    assert resume_changes(loose, tight) == {"lean.sandbox": ("none", "bwrap")}
    with pytest.raises(ConfigError, match="lean.sandbox"):
        resume_changes(tight, loose)


@pytest.mark.lean
def test_lean_code_cannot_reach_the_network_from_the_sandbox(listener: int, tmp_path: Path) -> None:
    """What `polyrith` does at elaboration time (start a process that calls a service), from Lean."""
    from repro.lean.sandbox import toolchain_binary

    status = _confined()
    project = Path(__file__).resolve().parents[1] / "lean_project"
    # the project's own lake: elan's shim would resolve the toolchain from the sandbox's work directory (B1)
    lake = toolchain_binary("lake", project) if shutil.which("lake") else None
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
        # the project (and its packages, where their links lead) shown as the judge shows its checkout
        sandboxed([lake, "-d", str(project), "env", "lean", str(source)], tmp_path, status, read_only=[project]),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "exit 7: refused" in done.stdout, done.stdout + done.stderr


@pytest.mark.lean
def test_lean_code_in_the_sandbox_reads_no_home_file_and_still_imports_mathlib(tmp_path: Path) -> None:
    """Red team finding R8 from Lean itself: `IO.FS.readFile` of a file in the home directory (where
    ~/.ssh and ~/.cache/huggingface/token lie) fails inside the sandbox, while the same file imports
    Mathlib: what the sandbox shows is enough for real Lean (the first node's check of the allowlist)."""
    import uuid

    from repro.lean.sandbox import toolchain_binary

    status = _confined()
    if status.kind != "bwrap":
        pytest.skip("only bubblewrap hides the home directory")
    project = Path(__file__).resolve().parents[1] / "lean_project"
    lake = toolchain_binary("lake", project) if shutil.which("lake") else None
    if lake is None or not (project / ".lake").is_dir():
        pytest.skip("needs lake on PATH and lean_project/ built (`repro lean setup`, or docker/Dockerfile)")
    secret_dir = Path.home() / f".repro-lean-secret-{uuid.uuid4().hex[:8]}"
    secret_dir.mkdir(mode=0o700)
    try:
        secret = secret_dir / "token"
        secret.write_text("hf_secret")
        source = tmp_path / "Read.lean"
        source.write_text(
            "import Mathlib\n\n"
            "#eval do\n"
            "  try\n"
            f'    let text ← IO.FS.readFile "{secret}"\n'
            '    IO.println s!"read: {text}"\n'
            "  catch _ =>\n"
            '    IO.println "not readable"\n',
            encoding="utf-8",
        )
        done = subprocess.run(
            sandboxed([lake, "-d", str(project), "env", "lean", str(source)], tmp_path, status, read_only=[project]),
            capture_output=True,
            text=True,
            timeout=900,
        )
        assert done.returncode == 0 and "not readable" in done.stdout, done.stdout + done.stderr
        assert "hf_secret" not in done.stdout + done.stderr
    finally:
        shutil.rmtree(secret_dir, ignore_errors=True)


def test_doctor_reports_the_confinement_in_force(tmp_path: Path) -> None:
    from repro.app import doctor
    from repro.config import RunConfig

    default = {line.name: line for line in doctor(None)}["confinement of Lean processes"]
    status = detect_sandbox()
    assert default.ok == (status.kind == "bwrap") and "lean.sandbox bwrap" in default.detail
    chosen = RunConfig.model_validate({"lean": {"backend": "fake", "sandbox": "none"}})
    named = {line.name: line for line in doctor(chosen)}["confinement of Lean processes"]
    assert named.ok and "lean.sandbox none: no sandbox" in named.detail and "operator" in named.detail


def test_the_sandboxed_lake_is_the_projects_toolchain_not_elans_shim(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inside the sandbox elan's shim would pick a toolchain from the wrong directory and write ELAN_HOME."""
    from repro.lean.sandbox import clear_caches, toolchain_binary

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    elan = bin_dir / "elan"
    elan.write_text('#!/bin/sh\n[ "$1" = which ] && echo "$(pwd)/.elan/toolchains/v4.9.0/bin/$2"\n')
    elan.chmod(0o755)
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    clear_caches()
    try:
        assert toolchain_binary("lake", str(project)) == f"{project}/.elan/toolchains/v4.9.0/bin/lake"
        assert toolchain_binary("python3", str(project)) == shutil.which("python3")  # not a Lean program
    finally:
        clear_caches()


def test_what_lean_reads_under_tmp_stays_visible_read_only(tmp_path: Path) -> None:
    """M8: a project, ELAN_HOME or LeanInteract cache under /tmp would be hidden by the private /tmp."""
    from repro.lean import sandbox

    project = (tmp_path / "project").resolve()
    (project / ".lake" / "packages").mkdir(parents=True)
    mathlib = (tmp_path / "elsewhere" / "mathlib").resolve()
    mathlib.mkdir(parents=True)
    (project / ".lake" / "packages" / "mathlib").symlink_to(mathlib)
    lake = _real_lake(tmp_path / "tc" / "bin")
    config = SimpleNamespace(working_dir=str(project), _cache_repl_dir=str(tmp_path / "repl"))
    (tmp_path / "repl").mkdir()
    prefix = sandbox._bwrap_prefix("bwrap", tmp_path / "work", read_only=sandbox.lean_read_paths(config, str(lake)))
    shown = {prefix[i + 1] for i, part in enumerate(prefix) if part == "--ro-bind"}
    for needed in (project, mathlib, (tmp_path / "repl").resolve(), lake.resolve().parents[1]):
        assert any(Path(needed).is_relative_to(path) for path in shown), needed


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


def test_a_sandboxed_repl_sees_none_of_repros_secrets_in_its_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Prover code could print an API key into a Lean message, which is stored and may go back to a model in
    a feedback round: the REPL's launcher passes only what Lean needs (PATH, HOME, ELAN_*, LEAN_*)."""
    status = _confined()
    if status.kind != "bwrap":
        pytest.skip("only bubblewrap clears the environment")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    worker_sandbox, config, _ = _pool_sandbox(tmp_path, status)
    try:
        probe = "import os; print(repr(os.environ.get('OPENAI_API_KEY')), 'PATH' in os.environ)"
        done = subprocess.run(
            [str(config.lake_path), "env", sys.executable, "-c", probe], capture_output=True, text=True, timeout=30
        )
        assert done.stdout.split() == ["None", "True"], done.stdout + done.stderr
        assert "sk-secret" not in Path(config.lake_path).read_text()
    finally:
        worker_sandbox.close()
