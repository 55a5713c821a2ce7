"""The pinned Lean project (``lean_project/``): toolchain, Mathlib revision, setup and health."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repro.exit_codes import ExitCode, ReproError
from repro.lean.toolchains import Toolchain, get_toolchain, lean_version_of

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


def toolchain_mismatch(project: Path, toolchain: Toolchain) -> str | None:
    """Why ``project`` is not a project of ``toolchain`` (its ``lean-toolchain`` names another Lean)."""
    found = project_toolchain(project)
    if found is None or lean_version_of(found) == toolchain.lean_version:
        return None
    return (
        f"{project}/lean-toolchain says {found}, but lean.toolchain is {toolchain.name}: "
        f"run `repro lean setup --toolchain {toolchain.name}` (it prepares its own project) or set lean.project_path"
    )


def lean_health(project: Path, toolchain: Toolchain | None = None) -> LeanHealth:
    lean = shutil.which("lean")
    lake = shutil.which("lake")
    problems = []
    if not lean or not lake:
        problems.append(f"lean/lake not on PATH: {ELAN_INSTALL_HINT}")
    found = project_toolchain(project)
    if found is None:
        problems.append(f"{project}/lean-toolchain missing")
    elif toolchain is not None and (mismatch := toolchain_mismatch(project, toolchain)):
        problems.append(mismatch)
    mathlib = project / ".lake" / "packages" / "mathlib" / ".lake" / "build"
    if not mathlib.is_dir():
        problems.append(f"Mathlib is not built in {project}: run `repro lean setup`")
    return LeanHealth(lean, lake, found, mathlib.is_dir(), problems)


class SetupError(ReproError, RuntimeError):
    exit_code = ExitCode.unfinished
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


def materialize_project(project: Path, toolchain: Toolchain | None = None) -> bool:
    """Create ``project`` for ``toolchain`` (default: the shipped template's) when it does not exist yet.

    After ``pip install repro`` there is no ``./lean_project``; the wheel carries the file the default
    target builds, and the toolchain registry writes ``lean-toolchain`` and the lakefile with its pins.
    An existing project of another Lean is refused, never rewritten. Returns whether it was created.
    """
    from repro.prompts import bundled_path

    toolchain = toolchain or get_toolchain("v4.15.0")
    if (project / "lakefile.toml").is_file() or (project / "lakefile.lean").is_file():
        mismatch = toolchain_mismatch(project, toolchain)
        if mismatch:
            raise SetupError(mismatch)
        return False
    source = bundled_path("lean_project/ReproLean.lean")
    if not source.is_file():
        raise SetupError("this repro installation lacks its Lean project template (ReproLean.lean); reinstall repro")
    project.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, project / "ReproLean.lean")
    (project / "lean-toolchain").write_text(toolchain.elan_toolchain + "\n", encoding="utf-8")
    (project / "lakefile.toml").write_text(toolchain.lakefile(), encoding="utf-8")
    return True


def repl_config(project: Path | str, toolchain: Toolchain, *, memory_limit_mb: int | None = None) -> Any:
    """The one ``LeanREPLConfig`` for a project: REPL revision and elaboration options set explicitly.

    LeanInteract would otherwise pick its own default REPL revision and turn on ``incrementality`` and
    ``Elab.async`` (the latter documented for Lean >= v4.19.0 only); see repro.lean.toolchains.
    """
    from lean_interact import LeanREPLConfig, LocalProject

    return LeanREPLConfig(
        project=LocalProject(directory=str(project), auto_build=False),
        repl_rev=toolchain.interact_repl_rev,
        repl_git=toolchain.interact_repl_git,
        memory_hard_limit_mb=memory_limit_mb,
        enable_incremental_optimization=toolchain.incrementality,
        enable_parallel_elaboration=toolchain.parallel_elaboration,
    )


def setup_lean_project(
    project: Path, toolchain: Toolchain | None = None, on_step: Callable[[str], None] | None = None
) -> list[str]:
    """Fetch Mathlib, its build cache and the REPL for one toolchain. Fails clearly when offline.

    ``on_step`` hears of each finished step as it finishes, so a user whose setup fails half-way (no
    ``lake``, no network) still learns what was already done, e.g. that the project was created.
    """
    toolchain = toolchain or get_toolchain("v4.15.0")
    done: list[str] = []

    def record(step: str) -> None:
        done.append(step)
        if on_step is not None:
            on_step(step)

    if materialize_project(project, toolchain):
        record(f"created {project} for Lean {toolchain.lean_version}, Mathlib {toolchain.mathlib_rev}")
    if not shutil.which("lake"):
        raise SetupError(f"lake is not on PATH: {ELAN_INSTALL_HINT}")
    _run(["lake", "update"], project)
    record("lake update")
    _run(["lake", "exe", "cache", "get"], project)
    record("lake exe cache get (Mathlib build cache)")
    _run(["lake", "build"], project)
    record("lake build")
    try:
        repl_config(project, toolchain)
        record(f"LeanInteract REPL built ({toolchain.interact_repl_git} @ {toolchain.interact_repl_rev})")
    except Exception as error:
        raise SetupError(f"building the Lean REPL through LeanInteract failed: {error}") from error
    return done
