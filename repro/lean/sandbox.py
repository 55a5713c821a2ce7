"""Run Lean processes (the REPL, a replay check) without network and without writes outside their work dir.

Prover code runs at elaboration time whenever some syntax slips past the static layer (issue 19 §2:
``polyrith`` starts ``python3`` and calls a web service during verification). The gate refuses what it
knows; the sandbox bounds what it does not: the process sees the file system read-only except its own
work directory (and a private, empty ``/tmp``), and has no network but an unconnected loopback.

Two launchers, chosen by trying them once (a container may forbid user namespaces):

- ``bwrap`` (bubblewrap): read-only bind of ``/``, a writable bind of the work directory, a private
  ``/tmp``, new network, PID and IPC namespaces, killed with its parent. Both guarantees hold.
- ``unshare --net --map-root-user``: a new network namespace only. Network is cut, writes are not
  confined; the status says so.

Without either, processes run as they are and the status says that nothing is confined. The status is
reported by ``repro doctor``-style callers and recorded with replay verdicts, never hidden.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel

SandboxKind = Literal["bwrap", "unshare", "none"]


class SandboxStatus(BaseModel):
    kind: SandboxKind
    network_blocked: bool
    writes_confined: bool
    detail: str

    def describe(self) -> str:
        if self.kind == "none":
            return f"no sandbox: Lean processes have network and write access ({self.detail})"
        confined = "writes confined to the work directory" if self.writes_confined else "writes NOT confined"
        return f"{self.kind}: network {'blocked' if self.network_blocked else 'OPEN'}, {confined}"


def _works(command: list[str]) -> str | None:
    """None when ``command`` runs and exits 0, else why not."""
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"{command[0]}: {error}"
    if done.returncode != 0:
        return f"{command[0]} exited {done.returncode}: {(done.stderr or done.stdout).strip()[:300]}"
    return None


def _hidden_by_private_tmp() -> list[str]:
    """What this process runs from (its Python environment, its checkout, its working directory) when
    that lies under ``/tmp``: the private ``/tmp`` would hide it, and a venv there could not start
    inside the sandbox. Shown read-only, like the rest of the file system."""
    here = Path(__file__).resolve().parents[2]
    candidates = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).parent, Path(os.getcwd()), here}
    tmp = Path("/tmp").resolve()
    found = {str(path.resolve()) for path in candidates if path.exists() and path.resolve().is_relative_to(tmp)}
    return sorted(path for path in found if path != str(tmp))


def _bwrap_prefix(binary: str, work_dir: Path, *, chdir: bool = True, read_only: Sequence[Path] = ()) -> list[str]:
    work = str(work_dir.resolve())
    tmp = Path("/tmp").resolve()
    # what the caller needs to read (a tool checkout, a workspace) where the private /tmp would hide it
    shown = {str(Path(path).resolve()) for path in read_only if Path(path).resolve().is_relative_to(tmp)}
    shown = {path for path in shown if path != str(tmp) and Path(path).exists()}
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
        *[argument for path in sorted(set(_hidden_by_private_tmp()) | shown) for argument in ("--ro-bind", path, path)],
        "--bind",
        work,
        work,
        "--unshare-net",
        "--unshare-pid",
        "--unshare-ipc",
        "--die-with-parent",
    ]
    return prefix + (["--chdir", work, "--"] if chdir else ["--"])


def _unshare_prefix(binary: str) -> list[str]:
    return [binary, "--net", "--map-root-user", "--"]


@lru_cache(maxsize=1)
def detect_sandbox() -> SandboxStatus:
    """Which launcher works on this machine (tried once per process)."""
    reasons = []
    bwrap = shutil.which("bwrap")
    if bwrap:
        with tempfile.TemporaryDirectory(prefix="repro-sandbox-probe-") as probe:
            problem = _works(_bwrap_prefix(bwrap, Path(probe)) + ["true"])
        if problem is None:
            return SandboxStatus(
                kind="bwrap", network_blocked=True, writes_confined=True, detail=f"{bwrap} (bubblewrap)"
            )
        reasons.append(problem)
    else:
        reasons.append("bwrap (bubblewrap) not on PATH")
    unshare = shutil.which("unshare")
    if unshare:
        problem = _works(_unshare_prefix(unshare) + ["true"])
        if problem is None:
            return SandboxStatus(
                kind="unshare",
                network_blocked=True,
                writes_confined=False,
                detail=f"{unshare} --net; install bubblewrap to confine writes ({'; '.join(reasons)})",
            )
        reasons.append(problem)
    else:
        reasons.append("unshare not on PATH")
    return SandboxStatus(kind="none", network_blocked=False, writes_confined=False, detail="; ".join(reasons))


def sandboxed(
    command: list[str],
    work_dir: Path,
    status: SandboxStatus | None = None,
    *,
    chdir: bool = True,
    read_only: Sequence[Path] = (),
) -> list[str]:
    """``command`` wrapped so that it runs without network and writes only under ``work_dir``
    (started in ``work_dir`` unless ``chdir`` is False: then in the caller's directory, read-only).
    ``read_only``: paths the command must read that the private ``/tmp`` would hide (shown read-only).

    With no working launcher the command is returned unchanged; callers record ``status`` with what
    they ran, so an unconfined run is never mistaken for a confined one."""
    status = status or detect_sandbox()
    if status.kind == "bwrap":
        return _bwrap_prefix(shutil.which("bwrap") or "bwrap", work_dir, chdir=chdir, read_only=read_only) + command
    if status.kind == "unshare":
        return _unshare_prefix(shutil.which("unshare") or "unshare") + command
    return list(command)


def write_launcher(target: str | Path, work_dir: Path, script: Path, status: SandboxStatus | None = None) -> Path:
    """An executable that runs ``target`` with its arguments inside the sandbox.

    For tools that take a program path rather than a command line (LeanInteract's ``lake_path``):
    the REPL pool points them at this script instead of at ``lake``."""
    quoted = " ".join(_shell_quote(part) for part in sandboxed([str(target)], work_dir, status, chdir=False))
    script.parent.mkdir(parents=True, exist_ok=True)
    script.write_text(f'#!/bin/sh\nexec {quoted} "$@"\n', encoding="utf-8")
    script.chmod(0o755)
    return script


def _shell_quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def sandbox_launcher(scratch: Path | None = None) -> Callable[[Any], None]:
    """A launcher hook for :class:`repro.lean.repl_pool.ReplPoolVerifier`: LeanInteract starts each REPL as
    ``LAKE env repl`` in the project directory; pointing ``lake_path`` at a launcher script makes that
    process (and anything it starts) run without network, writing only to ``scratch``."""

    def apply(config: Any) -> None:
        directory = scratch or Path(tempfile.mkdtemp(prefix="repro-repl-sandbox-"))
        real = toolchain_binary(str(config.lake_path), getattr(config, "working_dir", None))
        config.lake_path = write_launcher(real, directory, directory / "bin" / "lake")

    return apply


@lru_cache(maxsize=32)
def toolchain_binary(program: str, project: str | Path | None) -> str:
    """The toolchain's own ``lake``/``lean`` for ``project``, not elan's shim.

    elan's shim picks the toolchain from the current directory's ``lean-toolchain`` and may write to
    ``ELAN_HOME``; inside the sandbox the directory is not the project's and ``ELAN_HOME`` is read-only,
    so the binary is resolved here, outside, with ``elan which`` run in the project."""
    elan = shutil.which("elan")
    if elan and project is not None and Path(program).name in ("lake", "lean"):
        try:
            done = subprocess.run(
                [elan, "which", Path(program).name], cwd=project, capture_output=True, text=True, timeout=60
            )
        except (OSError, subprocess.TimeoutExpired):
            done = None
        if done is not None and done.returncode == 0 and done.stdout.strip():
            return done.stdout.strip().splitlines()[-1]
    return shutil.which(program) or program
