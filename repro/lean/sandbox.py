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

import atexit
import contextlib
import hashlib
import os
import platform
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel

from repro.lean import seccomp

SandboxKind = Literal["bwrap", "unshare", "none"]
SANDBOX_KINDS: tuple[str, ...] = get_args(SandboxKind)
# weakest first: a resume may move right (tighten), never left (see repro.config)
_STRENGTH = {"none": 0, "unshare": 1, "bwrap": 2}


class SandboxStatus(BaseModel):
    kind: SandboxKind
    network_blocked: bool
    writes_confined: bool
    detail: str
    # bwrap: only the system view and the paths Lean needs are visible (no home directory, /run, host /tmp)
    host_hidden: bool = False
    # bwrap with the system call filter: no UNIX socket can be opened, so no host service reached
    sockets_refused: bool = False

    def describe(self) -> str:
        if self.kind == "none":
            return f"no sandbox: Lean processes have network and write access ({self.detail})"
        confined = "writes confined to a scratch directory" if self.writes_confined else "writes NOT confined"
        shown = "only what Lean needs shown" if self.host_hidden else "user files readable"
        sockets = "UNIX sockets refused" if self.sockets_refused else "UNIX sockets OPEN"
        return f"{self.kind}: network {'blocked' if self.network_blocked else 'OPEN'}, {confined}, {shown}, {sockets}"


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


# What every bubblewrap sandbox shows of the host, read-only (issue 27 §3, red team finding R8): programs and
# libraries, the dynamic loader's configuration, users and groups, the time zone, the CPU list. Nothing else of
# the host is there: no /home, /root, /run, /var (so no /var/run, no docker.sock, no D-Bus, no
# $XDG_RUNTIME_DIR), /mnt, /opt, /srv, the host's /tmp, nor the rest of /etc (pip.conf, npmrc, environment may
# hold tokens); a path Lean needs beyond these is shown by name (:func:`lean_read_paths`, ``read_only``).
SYSTEM_DIRECTORIES = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/nix/store")
SYSTEM_FILES = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/localtime",
    "/etc/alternatives",
    "/sys/devices/system/cpu",
)
# an operator's extra read-only paths (colon-separated), for what a node's Lean needs beyond the list above
EXTRA_READ_ONLY_VARIABLE = "REPRO_SANDBOX_READ_ONLY"


def _system_view() -> list[str]:
    arguments: list[str] = []
    for directory in SYSTEM_DIRECTORIES:
        if os.path.islink(directory):
            arguments += ["--symlink", os.readlink(directory), directory]
        elif os.path.isdir(directory):
            arguments += ["--ro-bind", directory, directory]
    for path in [*SYSTEM_FILES, *sorted(str(found) for found in Path("/etc").glob("python3*"))]:
        if os.path.exists(path):
            arguments += ["--ro-bind", path, path]
    return arguments


def _homes() -> set[Path]:
    homes = {Path("/home"), Path("/root")}
    for home in (os.environ.get("HOME"), os.path.expanduser("~")):
        if home and os.path.isabs(home):
            homes.add(Path(home))
    return homes


def _never_shown() -> list[Path]:
    """What no bind may contain: home directories, the runtime directories that hold host services' sockets,
    the host's temporary directories, and the system trees the sandbox replaces or curates."""
    places = {*_homes(), *(Path(p) for p in ("/run", "/var/run", "/var/tmp", "/tmp", "/etc", "/proc", "/sys", "/dev"))}
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        places.add(Path(runtime))
    found = set()
    for place in places:
        found.add(place)
        with contextlib.suppress(OSError, RuntimeError):
            found.add(place.resolve())
    return sorted(found)


def check_shown(path: Path, what: str) -> None:
    """Refuse to show ``path`` inside the sandbox when that would show a home directory, ``/run``, ``/tmp``
    (a path equal to one of them or above one): a configuration that asks for it names the wrong directory."""
    for place in _never_shown():
        if place.is_relative_to(path):
            raise SandboxUnavailable(
                f"{what} {path} would show {place} inside the sandbox (user files, host services' sockets);"
                " name a directory below it (the toolchain, the project) instead"
            )


def _install_root(program: Path) -> Path:
    """The installation a program belongs to: ``<root>/bin/<program>`` -> ``<root>`` (a toolchain, a virtual
    environment, ``/usr``), else the program alone."""
    return program.parent.parent if program.parent.name == "bin" else program


def _own_runtime() -> list[Path]:
    """The Python repro runs from and repro's package (its Lean scripts; the stand-ins the tests run are
    Python programs of this interpreter). Not the working directory nor the checkout around the package:
    either may be a home directory, or hold a run's store and configuration."""
    executable = Path(sys.executable)
    paths = [Path(p) for p in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}]
    paths += [_install_root(executable), Path(__file__).resolve().parents[1]]
    with contextlib.suppress(OSError, RuntimeError):
        paths.append(_install_root(executable.resolve()))
    return paths


def program_paths(command: Sequence[str]) -> list[Path]:
    """What a command runs from: its program's installation (``lake`` -> its toolchain) and, for an
    interpreter, the scripts named right after it (every leading argument that is an existing file) with the
    directory each lies in (the modules a script imports from beside it)."""
    paths: list[Path] = []
    for index, part in enumerate(command):
        found = shutil.which(part) if index == 0 and os.sep not in part else part
        if not found or not os.path.isabs(found) or not os.path.exists(found):
            break
        path = Path(found)
        paths.extend([_install_root(path)] if index == 0 else [path, path.parent])
        if index == 0:
            with contextlib.suppress(OSError, RuntimeError):
                paths.append(_install_root(path.resolve()))
    return paths


def _extra_read_only() -> list[Path]:
    named = os.environ.get(EXTRA_READ_ONLY_VARIABLE, "")
    return [Path(part) for part in named.split(os.pathsep) if part.strip()]


def _packages_of(project: Path) -> list[Path]:
    packages = project / ".lake" / "packages"
    try:
        return [entry.resolve() for entry in sorted(packages.iterdir())] if packages.is_dir() else []
    except (OSError, RuntimeError):
        return []


def _read_only_binds(paths: Iterable[str | Path], guessed: Iterable[str | Path] = ()) -> list[tuple[str, str]]:
    """(source, destination) pairs for ``paths``: each shown at its resolved place, and also where it was named
    when that is a link in a real directory (``ELAN_HOME=~/.elan`` linked elsewhere); pairs already visible
    through the system view or a larger pair are dropped, and paths that do not exist. A named path that would
    show a home directory, ``/run`` or ``/tmp`` is refused (:func:`check_shown`); a ``guessed`` one (what a
    program runs from, repro's own runtime) is left out instead."""
    pairs: set[tuple[Path, Path]] = set()
    # a Lake project named (the judge's tool checkout, a REPL's project) brings its packages where they really
    # lie: a package linked to a Mathlib shared elsewhere is read by Lean there
    named_paths = [Path(found) for path in paths for found in [path, *_packages_of(Path(path))]]
    for path, named_by_caller in [*((path, True) for path in named_paths), *((path, False) for path in guessed)]:
        named = Path(os.path.abspath(path))
        try:
            resolved = named.resolve()
        except (OSError, RuntimeError):
            continue
        if not resolved.exists():
            continue
        candidates = [(resolved, resolved)]
        if named != resolved and named.parent.resolve() == named.parent:
            candidates.append((resolved, named))
        try:
            for _, destination in candidates:
                check_shown(destination, "a read-only path of the sandbox,")
        except SandboxUnavailable:
            if named_by_caller:
                raise
            continue
        pairs.update(candidates)
    shown = [Path(d) for d in SYSTEM_DIRECTORIES if os.path.isdir(d) and not os.path.islink(d)]
    kept: list[tuple[Path, Path]] = []
    for source, destination in sorted(pairs, key=lambda pair: (len(pair[1].parts), str(pair[1]))):
        if source == destination and any(destination.is_relative_to(root) for root in shown):
            continue
        if any(
            destination.is_relative_to(other_destination)
            and source == other_source / destination.relative_to(other_destination)
            for other_source, other_destination in kept
        ):
            continue
        kept.append((source, destination))
    return [(str(source), str(destination)) for source, destination in kept]


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


@lru_cache(maxsize=4)
def _bwrap_options(binary: str) -> frozenset[str]:
    """The options this bubblewrap knows (``--disable-userns`` came in 0.8.0)."""
    try:
        done = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return frozenset()
    return frozenset(re.findall(r"--[a-z][a-z0-9-]*", done.stdout + done.stderr))


def _setuid(binary: str) -> bool:
    try:
        return bool(os.stat(binary).st_mode & stat.S_ISUID)
    except OSError:
        return False


SECCOMP_FD = "3"


def _bwrap_prefix(
    binary: str,
    work_dir: Path | str,
    *,
    chdir: bool = True,
    read_only: Iterable[str | Path] = (),
    keep_env: Iterable[str] | None = None,
    command: Sequence[str] = (),
    syscall_filter: bool = True,
) -> list[str]:
    """bubblewrap's arguments: an empty root with the system view, ``read_only`` and what ``command`` runs from
    shown read-only, ``work_dir`` writable, a private ``/tmp``, the root itself read-only; new user (no
    capabilities, no further user namespaces where bubblewrap can refuse them), network, PID, IPC and UTS
    namespaces and a new session; killed with its parent; with ``syscall_filter``, the filter of
    :mod:`repro.lean.seccomp` read from file descriptor 3 (:func:`filtered` opens it there).

    Running as root, bubblewrap without ``--unshare-user`` keeps every capability of the caller for the
    sandboxed process (``bubblewrap.c`` ``drop_all_caps``: nothing is dropped when the real uid is 0 and no
    ``--cap-add``/``--cap-drop`` was given), which can then remount ``/`` writable: so the user namespace and
    ``--cap-drop ALL`` are always asked for (a setuid bubblewrap drops capabilities itself and may not
    create user namespaces)."""
    dynamic = str(work_dir).startswith("$")
    work = str(work_dir) if dynamic else str(Path(work_dir).resolve())
    if not dynamic:
        check_shown(Path(work), "the sandbox's writable directory")
    options = _bwrap_options(binary)
    users: list[str] = []
    if not _setuid(binary):
        users.append("--unshare-user")
        if "--disable-userns" in options:
            users.append("--disable-userns")
    shown = _read_only_binds([*read_only, *_extra_read_only()], [*_own_runtime(), *program_paths(command)])
    prefix = [
        binary,
        *_system_view(),
        "--dev",
        "/dev",
        "--proc",
        "/proc",
        "--tmpfs",
        "/tmp",
        *[argument for source, destination in shown for argument in ("--ro-bind", source, destination)],
        "--bind",
        work,
        work,
        "--remount-ro",
        "/",
        *users,
        "--unshare-net",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--new-session",
        "--die-with-parent",
        "--cap-drop",
        "ALL",
        *(["--seccomp", SECCOMP_FD] if syscall_filter and seccomp.abi_for() is not None else []),
        *_environment_arguments(keep_env),
    ]
    return prefix + (["--chdir", work, "--"] if chdir else ["--"])


class _FilterFile:
    """The compiled filter, written once per process into a read-only directory of its own (outside every
    sandbox's writable directory; under bubblewrap the host's /tmp is not even visible), checked byte for byte
    before every use."""

    def __init__(self) -> None:
        self.path: Path | None = None
        self.program: bytes | None = None

    def get(self) -> Path | None:
        abi = seccomp.abi_for()
        if abi is None:
            return None
        if self.path is None:
            self.program = seccomp.filter_program(abi)
            directory = Path(tempfile.mkdtemp(prefix="repro-seccomp-"))
            self.path = directory / "filter.bpf"
            self.path.write_bytes(self.program)
            self.path.chmod(0o444)
            directory.chmod(0o555)
            atexit.register(self.remove)
        try:
            found = self.path.read_bytes()
        except OSError as error:
            raise LauncherChanged(f"the sandbox's system call filter {self.path} is gone ({error})") from None
        if found != self.program:
            raise LauncherChanged(
                f"the sandbox's system call filter {self.path} changed since repro wrote it: no sandbox starts"
            )
        return self.path

    def remove(self) -> None:
        if self.path is not None:
            with contextlib.suppress(OSError):
                self.path.parent.chmod(0o755)
            shutil.rmtree(self.path.parent, ignore_errors=True)


_FILTER = _FilterFile()


def filtered(bwrap_command: list[str], filter_path: Path | None = None) -> list[str]:
    """``bwrap_command`` (from :func:`_bwrap_prefix`) started with the filter on file descriptor 3, through
    ``sh`` (``exec`` keeps one process, so signals and exit statuses are bubblewrap's own)."""
    if "--seccomp" not in bwrap_command:
        return bwrap_command
    path = filter_path or _FILTER.get()
    assert path is not None
    return ["/bin/sh", "-c", f'exec "$@" {SECCOMP_FD}<"$0"', str(path), *bwrap_command]


def _unshare_prefix(binary: str) -> list[str]:
    return [binary, "--net", "--map-root-user", "--"]


def _status(kind: SandboxKind, detail: str) -> SandboxStatus:
    bwrap = kind == "bwrap"
    return SandboxStatus(
        kind=kind,
        network_blocked=kind != "none",
        writes_confined=bwrap,
        host_hidden=bwrap,
        sockets_refused=bwrap and seccomp.abi_for() is not None,
        detail=detail,
    )


# the probe's program: its scratch directory is writable, a UNIX socket is refused where the filter is in force
_PROBE = (
    "import pathlib, socket, sys\n"
    "pathlib.Path(sys.argv[1], 'ok').write_text('1')\n"
    "try:\n"
    "    socket.socket(socket.AF_UNIX).close()\n"
    "except PermissionError:\n"
    "    pathlib.Path(sys.argv[1], 'refused').write_text('1')\n"
)


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
        command = [sys.executable, "-c", _PROBE]
        filtering = seccomp.abi_for() is not None
        with tempfile.TemporaryDirectory(prefix="repro-sandbox-probe-") as probe:
            try:
                problem = _works(filtered(_bwrap_prefix(bwrap, Path(probe), command=command)) + [*command, probe])
            except (SandboxUnavailable, LauncherChanged) as error:
                problem = str(error)
            if problem is None and not (Path(probe) / "ok").is_file():
                problem = "bwrap ran, but the scratch directory was not writable inside it"
            if problem is None and filtering and not (Path(probe) / "refused").is_file():
                problem = "bwrap ran, but its system call filter did not refuse a UNIX socket"
        if problem is not None:
            return problem
        users = "" if "--disable-userns" in _bwrap_options(bwrap) else "; nested user namespaces allowed (bwrap < 0.8)"
        calls = "" if filtering else f"; no system call filter for {platform.machine()}: UNIX sockets not refused"
        return _status("bwrap", f"{bwrap} (bubblewrap){users}{calls}")
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
    (started in ``work_dir`` unless ``chdir`` is False: then in the caller's directory, which must be shown).

    Under ``bwrap`` the command sees the system view (programs, libraries, the loader's configuration), what
    it runs from (:func:`program_paths`: ``lake`` shows its toolchain), repro's own Python, ``read_only``
    (a project, a tool checkout, an ``ELAN_HOME``) and ``work_dir``; nothing else of the host, and it
    cannot open a UNIX socket (:mod:`repro.lean.seccomp`). A ``read_only`` path that would show a home
    directory, ``/run`` or ``/tmp`` is refused with :class:`SandboxUnavailable`. With ``status.kind == "none"``
    the command is returned unchanged: callers record ``status`` with what they ran, so an unconfined run is
    never mistaken for a confined one. ``keep_env`` (bwrap only): the command sees only these environment
    variables.
    """
    status = status or detect_sandbox()
    if status.kind == "bwrap":
        bwrap = shutil.which("bwrap") or "bwrap"
        prefix = _bwrap_prefix(bwrap, work_dir, chdir=chdir, read_only=read_only, keep_env=keep_env, command=command)
        return filtered(prefix) + command
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


def project_paths(project: str | Path) -> list[str]:
    """A Lake project as Lean reads it: the directory, and each package of ``.lake/packages`` where it really
    lies (a package linked to a shared Mathlib elsewhere is shown there too)."""
    return [str(project), *(str(package) for package in _packages_of(Path(project)))]


def lean_read_paths(config: Any, lake: str) -> list[str]:
    """What a REPL started through ``lake env`` reads: the toolchain, ``ELAN_HOME``, the project (its
    ``.lake`` and packages, symlinks resolved) and LeanInteract's REPL checkout."""
    paths = [str(_install_root(Path(lake).resolve())), str(_elan_home())]
    working = getattr(config, "working_dir", None)
    if working:
        paths.extend(project_paths(working))
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
    syscall_filter: Path | None = None
    filter_digest: str | None = None
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
        abi = seccomp.abi_for() if self.status.kind == "bwrap" else None
        if abi is not None:
            self.syscall_filter = self._launch_dir / "filter.bpf"
            self.syscall_filter.write_bytes(seccomp.filter_program(abi))
            self.syscall_filter.chmod(0o444)
            self.filter_digest = file_digest(self.syscall_filter)
        script.write_text(self._script(config, real_lake), encoding="utf-8")
        script.chmod(0o555)
        self._launch_dir.chmod(0o555)
        self.launcher = script
        self.digest = file_digest(script)
        config.lake_path = script

    def _script(self, config: Any, real_lake: str) -> str:
        assert self.scratch_root is not None
        root = str(self.scratch_root.resolve())
        redirect = ""
        if self.status.kind == "bwrap":
            read_only = lean_read_paths(config, real_lake)
            # "$scratch" stays a shell variable: quoted apart so the shell expands it at start
            parts = _bwrap_prefix(
                shutil.which("bwrap") or "bwrap",
                "$scratch",
                chdir=False,
                read_only=read_only,
                keep_env=LEAN_ENVIRONMENT,
                command=[real_lake],
                syscall_filter=self.syscall_filter is not None,
            )
            quoted = " ".join('"$scratch"' if part == "$scratch" else _shell_quote(part) for part in parts)
            if self.syscall_filter is not None:
                redirect = f" {SECCOMP_FD}<{_shell_quote(str(self.syscall_filter))}"
        else:
            quoted = " ".join(_shell_quote(part) for part in _unshare_prefix(shutil.which("unshare") or "unshare"))
        return (
            "#!/bin/sh\n"
            "# repro.lean.sandbox launcher: the toolchain's lake, confined "
            f"({self.status.kind}); written read-only, SHA-256 checked before every start\n"
            f"scratch={_shell_quote(root)}/$$\n"
            'mkdir -m 700 "$scratch" || exit 97\n'
            f'exec {quoted} {_shell_quote(real_lake)} "$@"{redirect}\n'
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
        if self.syscall_filter is not None:
            try:
                found = file_digest(self.syscall_filter)
            except OSError as error:
                found = f"unreadable ({error})"
            if found != self.filter_digest:
                raise LauncherChanged(
                    f"the sandbox's system call filter {self.syscall_filter} changed since repro wrote it (sha256"
                    f" {self.filter_digest}, now {found}): something wrote outside the sandbox; no Lean worker starts"
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
