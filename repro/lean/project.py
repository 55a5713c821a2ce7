"""The pinned Lean project (``lean_project/``): toolchain, Mathlib revision, setup and health."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

ELAN_INSTALL_HINT = (
    "install elan (https://github.com/leanprover/elan: `curl https://raw.githubusercontent.com/leanprover/elan/"
    "master/elan-init.sh -sSf | sh`), or build docker/Dockerfile"
)


def project_toolchain(project: Path) -> str | None:
    path = project / "lean-toolchain"
    return path.read_text(encoding="utf-8").strip() if path.is_file() else None


@dataclass
class LeanHealth:
    lean: str | None
    lake: str | None
    toolchain: str | None
    mathlib_built: bool
    problems: list[str]


def lean_health(project: Path) -> LeanHealth:
    lean = shutil.which("lean")
    lake = shutil.which("lake")
    problems = []
    if not lean or not lake:
        problems.append(f"lean/lake not on PATH: {ELAN_INSTALL_HINT}")
    toolchain = project_toolchain(project)
    if toolchain is None:
        problems.append(f"{project}/lean-toolchain missing")
    mathlib = project / ".lake" / "packages" / "mathlib" / ".lake" / "build"
    if not mathlib.is_dir():
        problems.append(f"Mathlib is not built in {project}: run `repro lean setup`")
    return LeanHealth(lean, lake, toolchain, mathlib.is_dir(), problems)


class SetupError(RuntimeError):
    pass


def _run(command: list[str], cwd: Path) -> None:
    try:
        completed = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=3600)
    except FileNotFoundError as error:
        raise SetupError(f"`{command[0]}` not found: {ELAN_INSTALL_HINT}") from error
    if completed.returncode != 0:
        tail = (completed.stderr or completed.stdout)[-1500:]
        offline = any(
            word in tail.lower()
            for word in ("could not resolve", "network", "unable to access", "failed to connect", "timed out", "curl")
        )
        hint = (
            " This machine looks offline: setup needs network once (GitHub and the Mathlib cache)." if offline else ""
        )
        raise SetupError(f"`{' '.join(command)}` failed in {cwd}:{hint}\n{tail}")


PROJECT_FILES = ("lean-toolchain", "lakefile.toml", "ReproLean.lean")


def materialize_project(project: Path) -> bool:
    """Create ``project`` from the template shipped with repro when it does not exist yet.

    After ``pip install repro`` there is no ``./lean_project``; the wheel carries the pinned
    toolchain, the lakefile and the file its default target builds. Returns whether it was created.
    """
    from repro.prompts import bundled_path

    if (project / "lakefile.toml").is_file() or (project / "lakefile.lean").is_file():
        return False
    missing = [name for name in PROJECT_FILES if not bundled_path(f"lean_project/{name}").is_file()]
    if missing:
        raise SetupError(f"this repro installation lacks its Lean project template ({missing}); reinstall repro")
    project.mkdir(parents=True, exist_ok=True)
    for name in PROJECT_FILES:
        shutil.copyfile(bundled_path(f"lean_project/{name}"), project / name)
    return True


def setup_lean_project(project: Path) -> list[str]:
    """Fetch Mathlib, its build cache and the REPL. Fails with a clear message when offline."""
    done = []
    if materialize_project(project):
        done.append(f"created {project} from the template shipped with repro")
    if not shutil.which("lake"):
        raise SetupError(f"lake is not on PATH: {ELAN_INSTALL_HINT}")
    _run(["lake", "update"], project)
    done.append("lake update")
    _run(["lake", "exe", "cache", "get"], project)
    done.append("lake exe cache get (Mathlib build cache)")
    _run(["lake", "build"], project)
    done.append("lake build")
    try:
        from lean_interact import LeanREPLConfig, LocalProject

        LeanREPLConfig(project=LocalProject(directory=str(project), auto_build=False))
        done.append("LeanInteract REPL built")
    except Exception as error:
        raise SetupError(f"building the Lean REPL through LeanInteract failed: {error}") from error
    return done
