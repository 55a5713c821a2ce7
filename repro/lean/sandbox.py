"""Run Lean processes (the REPL, the judge's compiles) without network and without writes outside a scratch dir.

Prover code runs at elaboration time whenever some syntax slips past the screen (issue 19 §2: ``polyrith``
starts ``python3`` and calls a web service during verification; issue 27: ``aesop (add safe tactic gen)``
runs tactic text built at run time). The screen refuses what it knows; the sandbox bounds what it does not.

Three confinements, named by the setting ``lean.sandbox`` (:data:`SandboxKind`):

- ``bwrap`` (bubblewrap, the default): read-only bind of ``/``, a writable bind of one scratch directory, a
  private ``/tmp``, new network, PID and IPC namespaces, killed with its parent. Network is cut and writes
  are confined.
- ``unshare`` (``unshare --net --map-root-user``): a new network namespace only. Writes are NOT confined.
- ``none``: processes run as they are.

The integrity rule (issue 27 §3): nothing that is later executed or read outside the sandbox lies in a path
writable inside it. So the REPL's launcher script (what LeanInteract starts as ``lake``) is written once
per pool into a directory of its own, outside every scratch directory, made read-only, and its SHA-256 is
checked before every worker start (:class:`WorkerSandbox`); each worker gets a fresh scratch directory,
named by the launcher's process id and removed when the worker ends. Under ``bwrap`` nothing inside can
reach the launcher (the host's ``/tmp`` is replaced by a private one, the rest is read-only); under
``unshare``/``none`` a process can rewrite files of the user, and the hash check is what stops a rewritten
launcher from running. Those two are therefore accepted only when the operator names them:
:func:`confinement` refuses to hand out a weaker confinement than the one configured, and a confinement
that does not work here is an error naming the fix, never a silent fallback.

Paths Lean needs (the toolchain, ``ELAN_HOME``, the project with its ``.lake`` and Mathlib, LeanInteract's
REPL checkout, the Python running a tool) stay visible read-only, including those under ``/tmp`` that the
private ``/tmp`` would otherwise hide (lean audit M8).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel

SandboxKind = Literal["bwrap", "unshare", "none"]
SANDBOX_KINDS: tuple[str, ...] = get_args(SandboxKind)
# weakest first: a resume may move right (tighten), never left (see repro.config)
_STRENGTH = {"none": 0, "unshare": 1, "bwrap": 2}


class SandboxStatus(BaseModel):
    kind: SandboxKind
    network_blocked: bool
    writes_confined: bool
    detail: str

    def describe(self) -> str:
        if self.kind == "none":
            return f"no sandbox: Lean processes have network and write access ({self.detail})"
        confined = "writes confined to a scratch directory" if self.writes_confined else "writes NOT confined"
        return f"{self.kind}: network {'blocked' if self.network_blocked else 'OPEN'}, {confined}"


class SandboxUnavailable(RuntimeError):
    """The confinement ``lean.sandbox`` names does not work on this machine (the message names the fix)."""


def at_least_as_strong(new: str, old: str) -> bool:
    """Whether confinement ``new`` confines at least what ``old`` did (a resume may tighten, not loosen)."""
    return _STRENGTH.get(new, -1) >= _STRENGTH.get(old, 99)


def _works(command: list[str]) -> str | None:
    """None when ``command`` runs and exits 0, else why not."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"{command[0]}: {error}"
    if done.returncode != 0:
        return f"{command[0]} exited {done.returncode}: {(done.stderr or done.stdout).strip()[:300]}"
    return None


def _under_tmp(paths: Iterable[str | Path]) -> list[str]:
    """Those of ``paths`` that lie under ``/tmp`` (resolved): the private ``/tmp`` would hide them."""
    tmp = Path("/tmp").resolve()
    found = set()
    for path in paths:
        try:
            resolved = Path(path).resolve()
        except (OSError, RuntimeError):
            continue
        if resolved.exists() and resolved.is_relative_to(tmp) and resolved != tmp:
            found.add(str(resolved))
    # a path inside another listed one is already shown by it
    ordered = sorted(found)
    return [
        path for path in ordered if not any(other != path and Path(path).is_relative_to(other) for other in ordered)
    ]


def _own_runtime() -> list[Path]:
    """What this process runs from (its Python environment, its checkout, its working directory)."""
    here = Path(__file__).resolve().parents[2]
    return [Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).parent, Path(os.getcwd()), here]


def _hidden_by_private_tmp(extra: Iterable[str | Path] = ()) -> list[str]:
    """Paths to show read-only over the private ``/tmp``: this process's runtime and ``extra``."""
    return _under_tmp([*_own_runtime(), *extra])


# what a REPL started through `lake env` may see of repro's environment (everything else, API keys among it,
# is dropped: prover code could print it into a Lean message, which is stored and may be sent back to a model)
LEAN_ENVIRONMENT = ("PATH", "HOME", "LANG", "LC_ALL", "TZ", "ELAN_HOME", "ELAN_TOOLCHAIN", "LEAN_PATH", "LEAN_SYSROOT")


def _environment_arguments(keep_env: Iterable[str] | None) -> list[str]:
    if keep_env is None:
        return []
    arguments = ["--clearenv"]
    for name in keep_env:
        if name in os.environ:
            arguments += ["--setenv", name, os.environ[name]]
    return arguments


def _bwrap_prefix(
    binary: str,
    work_dir: Path | str,
    *,
    chdir: bool = True,
    read_only: Iterable[str | Path] = (),
    keep_env: Iterable[str] | None = None,
) -> list[str]:
    work = str(Path(work_dir).resolve()) if not str(work_dir).startswith("$") else str(work_dir)
    prefix = [
        binary,
        "--ro-bind",
        "/",
        "/",
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
        *[argument for path in _hidden_by_private_tmp(read_only) for argument in ("--ro-bind", path, path)],
        "--bind",
        work,
        work,
        "--unshare-net",
        "--unshare-pid",
        "--unshare-ipc",
        "--die-with-parent",
        *_environment_arguments(keep_env),
    ]
    return prefix + (["--chdir", work, "--"] if chdir else ["--"])


def _unshare_prefix(binary: str) -> list[str]:
    return [binary, "--net", "--map-root-user", "--"]


def _status(kind: SandboxKind, detail: str) -> SandboxStatus:
    return SandboxStatus(kind=kind, network_blocked=kind != "none", writes_confined=kind == "bwrap", detail=detail)


@lru_cache(maxsize=4)
def probe_sandbox(kind: SandboxKind) -> SandboxStatus | str:
    """The status of confinement ``kind`` on this machine, or why it does not work (tried once per process).

    The probe runs a real program (this Python) with a read-only view of the project checkout, not
    only ``true``: a launcher that starts ``true`` but cannot show the tools Lean needs is no sandbox
    (lean audit M8, "the probe runs only true")."""
    if kind == "none":
        return _status("none", "lean.sandbox is none: chosen by the operator")
    if kind == "bwrap":
        bwrap = shutil.which("bwrap")
        if not bwrap:
            return "bwrap (bubblewrap) is not on PATH"
        with tempfile.TemporaryDirectory(prefix="repro-sandbox-probe-") as probe:
            check = "import pathlib, sys; pathlib.Path(sys.argv[1], 'ok').write_text('1')"
            problem = _works(_bwrap_prefix(bwrap, Path(probe)) + [sys.executable, "-c", check, probe])
            if problem is None and not (Path(probe) / "ok").is_file():
                problem = "bwrap ran, but the scratch directory was not writable inside it"
        if problem is not None:
            return problem
        return _status("bwrap", f"{bwrap} (bubblewrap)")
    unshare = shutil.which("unshare")
    if not unshare:
        return "unshare is not on PATH"
    problem = _works(_unshare_prefix(unshare) + ["true"])
    if problem is not None:
        return problem
    return _status("unshare", f"{unshare} --net (network only; bubblewrap confines writes)")


@lru_cache(maxsize=1)
def detect_sandbox() -> SandboxStatus:
    """The strongest confinement that works on this machine (for ``repro doctor`` and the judge's default)."""
    reasons: list[str] = []
    kinds: tuple[SandboxKind, ...] = ("bwrap", "unshare")
    for kind in kinds:
        found = probe_sandbox(kind)
        if isinstance(found, SandboxStatus):
            if reasons:
                found = found.model_copy(update={"detail": f"{found.detail}; {'; '.join(reasons)}"})
            return found
        reasons.append(found)
    return _status("none", "; ".join(reasons))


_FIXES = {
    "bwrap": "install bubblewrap (`apt-get install bubblewrap`; in a container, run it with "
    "`--security-opt seccomp=unconfined` or `--privileged` so that user namespaces work)",
    "unshare": "install util-linux's unshare, or allow user namespaces",
}


def confinement(kind: str) -> SandboxStatus:
    """The confinement the setting ``lean.sandbox`` names, working here; else :class:`SandboxUnavailable`.

    Only the named confinement is handed out: ``bwrap`` never quietly becomes ``unshare`` or nothing,
    because a weaker confinement is a choice the operator makes by name."""
    if kind not in SANDBOX_KINDS:
        raise SandboxUnavailable(f"lean.sandbox must be one of {', '.join(SANDBOX_KINDS)}, not {kind!r}")
    named: SandboxKind = kind  # type: ignore[assignment]
    found = probe_sandbox(named)
    if isinstance(found, SandboxStatus):
        return found
    weaker = [
        other
        for other in ("unshare", "none")
        if _STRENGTH[other] < _STRENGTH[kind]
        and (other == "none" or isinstance(probe_sandbox("unshare"), SandboxStatus))
    ]
    opt_in = " or ".join(f"`lean.sandbox: {other}`" for other in weaker)
    raise SandboxUnavailable(
        f"lean.sandbox is {kind}, but {kind} does not work here ({found}). Fix: {_FIXES.get(kind, '')}"
        + (
            f"; or accept weaker confinement by naming it: {opt_in} (prover code could then write to your files"
            " and, with none, reach the network)"
            if opt_in
            else ""
        )
    )


def sandboxed(
    command: list[str],
    work_dir: Path,
    status: SandboxStatus | None = None,
    *,
    chdir: bool = True,
    read_only: Iterable[str | Path] = (),
    keep_env: Iterable[str] | None = None,
) -> list[str]:
    """``command`` wrapped so that it runs without network and writes only under ``work_dir``
    (started in ``work_dir`` unless ``chdir`` is False: then in the caller's directory, read-only).

    ``read_only`` names further paths the command needs to read that lie under ``/tmp`` (a project, an
    ``ELAN_HOME``); everything else is visible read-only anyway. With ``status.kind == "none"`` the command
    is returned unchanged: callers record ``status`` with what they ran, so an unconfined run is never
    mistaken for a confined one. ``keep_env`` (bwrap only): the command sees only these environment variables.
    """
    status = status or detect_sandbox()
    if status.kind == "bwrap":
        bwrap = shutil.which("bwrap") or "bwrap"
        return _bwrap_prefix(bwrap, work_dir, chdir=chdir, read_only=read_only, keep_env=keep_env) + command
    if status.kind == "unshare":
        return _unshare_prefix(shutil.which("unshare") or "unshare") + command
    return list(command)


def kill_process_group(pid: int) -> None:
    """SIGKILL the process group ``pid`` leads (a process started with ``start_new_session=True``).

    Killing only the direct child leaves ``lean`` running under ``lake env`` (lean audit M9)."""
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        os.killpg(pid, signal.SIGKILL)


def _shell_quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class LauncherChanged(RuntimeError):
    """The launcher script is not what repro wrote: something rewrote it; no worker may start it."""


def _elan_home() -> Path:
    return Path(os.environ.get("ELAN_HOME") or Path.home() / ".elan")


def lean_read_paths(config: Any, lake: str) -> list[str]:
    """What a REPL started through ``lake env`` reads: the toolchain, ``ELAN_HOME``, the project (its
    ``.lake`` and packages, symlinks resolved) and LeanInteract's REPL checkout."""
    paths = [str(Path(lake).resolve().parents[1]), str(_elan_home())]
    working = getattr(config, "working_dir", None)
    if working:
        paths.append(str(working))
        packages = Path(working) / ".lake" / "packages"
        if packages.is_dir():
            paths.extend(str(entry.resolve()) for entry in packages.iterdir())
    repl_dir = getattr(config, "_cache_repl_dir", None)
    if repl_dir:
        paths.append(str(repl_dir))
    return paths


@dataclass
class WorkerSandbox:
    """The sandbox of one REPL pool: one read-only launcher, one fresh scratch directory per worker.

    LeanInteract starts every REPL as ``<config.lake_path> env <repl>`` (lean-interact 0.11.6
    ``server.py``, ``LeanServer.start``), so :meth:`prepare` points ``lake_path`` at the launcher, which runs
    the toolchain's own ``lake`` (never elan's shim) inside the sandbox. The launcher creates the worker's
    scratch directory ``<scratch root>/<its pid>`` (the pid of the process LeanInteract started, as the
    launcher ``exec``s), so the pool can remove exactly that directory when the worker ends.
    """

    status: SandboxStatus
    launcher: Path | None = None
    digest: str | None = None
    scratch_root: Path | None = None
    real_lake: str | None = None
    _launch_dir: Path | None = None

    def prepare(self, config: Any, real_lake: str) -> None:
        """Write the launcher for ``config`` (once) and point LeanInteract at it."""
        self.real_lake = real_lake
        if self.status.kind == "none":
            config.lake_path = Path(real_lake)
            return
        self._launch_dir = Path(tempfile.mkdtemp(prefix="repro-launcher-"))
        self.scratch_root = Path(tempfile.mkdtemp(prefix="repro-scratch-"))
        assert not self._launch_dir.is_relative_to(self.scratch_root)
        script = self._launch_dir / "lake"
        script.write_text(self._script(config, real_lake), encoding="utf-8")
        script.chmod(0o555)
        self._launch_dir.chmod(0o555)
        self.launcher = script
        self.digest = file_digest(script)
        config.lake_path = script

    def _script(self, config: Any, real_lake: str) -> str:
        assert self.scratch_root is not None
        root = str(self.scratch_root.resolve())
        if self.status.kind == "bwrap":
            read_only = lean_read_paths(config, real_lake)
            # "$scratch" stays a shell variable: quoted apart so the shell expands it at start
            parts = _bwrap_prefix(
                shutil.which("bwrap") or "bwrap",
                "$scratch",
                chdir=False,
                read_only=read_only,
                keep_env=LEAN_ENVIRONMENT,
            )
            quoted = " ".join('"$scratch"' if part == "$scratch" else _shell_quote(part) for part in parts)
        else:
            quoted = " ".join(_shell_quote(part) for part in _unshare_prefix(shutil.which("unshare") or "unshare"))
        return (
            "#!/bin/sh\n"
            "# repro.lean.sandbox launcher: the toolchain's lake, confined "
            f"({self.status.kind}); written read-only, SHA-256 checked before every start\n"
            f"scratch={_shell_quote(root)}/$$\n"
            'mkdir -m 700 "$scratch" || exit 97\n'
            f'exec {quoted} {_shell_quote(real_lake)} "$@"\n'
        )

    def verify(self) -> None:
        """Before each worker start: the launcher is byte for byte what :meth:`prepare` wrote."""
        if self.launcher is None:
            return
        try:
            found = file_digest(self.launcher)
            mode = self.launcher.stat().st_mode
        except OSError as error:
            raise LauncherChanged(
                f"the sandbox launcher {self.launcher} is gone ({error}); no Lean worker starts"
            ) from None
        if found != self.digest or mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
            raise LauncherChanged(
                f"the sandbox launcher {self.launcher} changed since repro wrote it (sha256 {self.digest}, now"
                f" {found}, mode {oct(mode & 0o777)}): something wrote outside the sandbox; no Lean worker starts"
            )

    def scratch_of(self, pid: int) -> Path | None:
        return None if self.scratch_root is None else self.scratch_root / str(pid)

    def release(self, pid: int | None) -> None:
        """The worker whose launcher had ``pid`` ended: remove its scratch directory."""
        if pid is None:
            return
        scratch = self.scratch_of(pid)
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)

    def live_scratch(self) -> list[Path]:
        if self.scratch_root is None or not self.scratch_root.is_dir():
            return []
        return sorted(self.scratch_root.iterdir())

    def close(self) -> None:
        for directory in (self.scratch_root, self._launch_dir):
            if directory is not None and directory.exists():
                with contextlib.suppress(OSError):
                    directory.chmod(0o755)
                shutil.rmtree(directory, ignore_errors=True)


_TOOLCHAIN_DIR = re.compile(r"/toolchains/([^/]+)/bin/[^/]+$")


class ToolchainBinary(BaseModel):
    """Which program ``lake``/``lean`` resolves to for a project, and how (for doctor and the self-test)."""

    program: str
    path: str | None
    toolchain: str | None = None
    source: str
    problem: str | None = None

    def describe(self) -> str:
        if self.path is None:
            return f"{self.program}: {self.problem}"
        named = f" (toolchain {self.toolchain})" if self.toolchain else ""
        return f"{self.path}{named}, {self.source}"


def _toolchain_of(path: str) -> str | None:
    """elan's toolchain directory name back to its name (elan ``ToolchainDesc::from_toolchain_dir``:
    ``leanprover--lean4---v4.15.0`` is ``leanprover/lean4:v4.15.0``)."""
    found = _TOOLCHAIN_DIR.search(path)
    return found.group(1).replace("---", ":").replace("--", "/") if found else None


@lru_cache(maxsize=64)
def resolve_toolchain_binary(program: str, directory: str | None) -> ToolchainBinary:
    """The toolchain's own ``program`` for ``directory``, resolved with ``elan which`` run there.

    elan's shim picks the toolchain from the *current* directory's ``lean-toolchain`` (elan
    ``src/elan-cli/proxy_mode.rs``; ``src/elan/config.rs`` ``toolchain_for_dir``: without one and without a
    default it fails "no default toolchain configured"). LeanInteract runs ``lake --version`` from the Python
    process's directory (lean-interact 0.11.6 ``utils.check_lake``: no ``cwd``), so it must get the real
    binary, never the shim (lean audit B1). Without elan, ``program`` on PATH is taken as it is. elan installs a
    toolchain the project names but this machine lacks (a download), hence the generous limit."""
    name = Path(program).name
    elan = shutil.which("elan")
    if elan and directory is not None and name in ("lake", "lean"):
        try:
            done = subprocess.run([elan, "which", name], cwd=directory, capture_output=True, text=True, timeout=1800)
        except (OSError, subprocess.TimeoutExpired) as error:
            problem = f"`elan which {name}`: {error}"
            return ToolchainBinary(program=name, path=None, source="elan which", problem=problem)
        lines = [line for line in done.stdout.strip().splitlines() if line.strip()]
        if done.returncode == 0 and lines:
            path = lines[-1].strip()
            return ToolchainBinary(
                program=name, path=path, toolchain=_toolchain_of(path), source=f"`elan which {name}` in {directory}"
            )
        said = (done.stderr or done.stdout).strip().splitlines()
        return ToolchainBinary(
            program=name,
            path=None,
            source="elan which",
            problem=f"`elan which {name}` in {directory} failed (exit {done.returncode}): "
            + (" ".join(said)[-400:] or "no output"),
        )
    found = shutil.which(program)
    if found is None:
        return ToolchainBinary(program=name, path=None, source="PATH", problem=f"{program} is not on PATH")
    return ToolchainBinary(program=name, path=found, toolchain=_toolchain_of(str(Path(found).resolve())), source="PATH")


def toolchain_binary(program: str, project: str | Path | None) -> str:
    """The toolchain's own ``lake``/``lean`` for ``project`` (elan's shim only where nothing resolves)."""
    found = resolve_toolchain_binary(program, None if project is None else str(project))
    return found.path or shutil.which(program) or program


def clear_caches() -> None:
    """Forget what was probed and resolved (tests that change PATH or elan's settings)."""
    probe_sandbox.cache_clear()
    detect_sandbox.cache_clear()
    resolve_toolchain_binary.cache_clear()
