"""The pinned Lean project (``lean_project/``): toolchain, Mathlib revision, setup and health.

Setup (``repro lean setup``) runs each step with the project's own toolchain (``lake`` resolved by ``elan
which`` in the project, never elan's shim from wherever repro was started: lean audit B1), each under a time
limit that kills the step's whole process group and is reported as a :class:`SetupError`, never a traceback
(M2). Mathlib's prebuilt cache is checked after ``lake exe cache get`` and before ``lake build``: a missing
or partial cache would make ``lake build`` compile Mathlib from source for hours, so setup stops there and
names the cause, unless the operator asks for the source build by name (``--build-mathlib``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repro.exit_codes import ExitCode, ReproError
from repro.lean.sandbox import ToolchainBinary, kill_process_group, resolve_toolchain_binary
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
    """What a run on ``project`` would start: the toolchain's own ``lean`` and ``lake`` for it (never elan's
    shims, which resolve from wherever repro was started), its ``lean-toolchain`` and whether Mathlib is built."""

    lean: str | None
    lake: str | None
    toolchain: str | None
    mathlib_built: bool
    problems: list[str]
    binaries: tuple[ToolchainBinary, ...] = ()


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
    """``lean`` and ``lake`` as :func:`resolve_toolchain_binary` finds them in ``project`` (what the REPL pool,
    setup and the judge run), not ``shutil.which``: on PATH stand elan's shims, whose toolchain depends on the
    current directory, so a path found there says nothing about the binary a run gets (lean audit B1)."""
    problems = []
    binaries: tuple[ToolchainBinary, ...] = ()
    if not project.is_dir():
        problems.append(f"{project} does not exist: run `repro lean setup`")
    else:
        binaries = tuple(resolve_toolchain_binary(name, str(project.resolve())) for name in ("lean", "lake"))
        for binary in binaries:
            if binary.path is None:
                hint = f": {ELAN_INSTALL_HINT}" if binary.source == "PATH" else ""
                problems.append(f"{binary.describe()}{hint}")
    lean, lake = (binary.path for binary in binaries) if binaries else (None, None)
    found = project_toolchain(project)
    if found is None:
        problems.append(f"{project}/lean-toolchain missing")
    elif toolchain is not None and (mismatch := toolchain_mismatch(project, toolchain)):
        problems.append(mismatch)
    mathlib = project / ".lake" / "packages" / "mathlib" / ".lake" / "build"
    if not mathlib.is_dir():
        problems.append(f"Mathlib is not built in {project}: run `repro lean setup`")
    return LeanHealth(lean, lake, found, mathlib.is_dir(), problems, binaries)


class SetupError(ReproError, RuntimeError):
    exit_code = ExitCode.unfinished
    pass


# seconds each setup step may take; past it the step's process group is killed and setup fails by name
STEP_TIMEOUT_S = 3600.0
# a Mathlib compiled from source takes hours on a many-core node (only with --build-mathlib)
SOURCE_BUILD_TIMEOUT_S = 6 * 3600.0

CACHE_FALLBACK = (
    "Fallbacks: run `repro lean setup --build-mathlib` (compiles Mathlib from source: hours, needs no cache), "
    "or copy a built project (its `.lake` directory) from a machine or image where setup succeeded, e.g. the "
    "docker/Dockerfile image's /repro/lean_project*."
)


@dataclass
class StepOutput:
    returncode: int
    output: str


def _run_step(command: list[str], cwd: Path, timeout_s: float) -> StepOutput:
    """``command`` in its own session; past ``timeout_s`` the whole group is killed (``lake build`` starts
    ``lean`` processes of its own) and :class:`SetupError` says which step ran out of time."""
    try:
        process = subprocess.Popen(
            command,
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            start_new_session=True,
        )
    except FileNotFoundError as error:
        raise SetupError(f"`{command[0]}` not found: {ELAN_INSTALL_HINT}") from error
    try:
        output, _ = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        kill_process_group(process.pid)
        with_output, _ = process.communicate()
        tail = (with_output or "")[-800:]
        raise SetupError(
            f"`{' '.join(command)}` in {cwd} did not finish within {timeout_s:.0f} s; its processes were killed."
            f"\n{tail}"
        ) from None
    except BaseException:
        kill_process_group(process.pid)
        process.wait()
        raise
    return StepOutput(process.returncode, output or "")


def _run(command: list[str], cwd: Path, timeout_s: float = STEP_TIMEOUT_S) -> StepOutput:
    completed = _run_step(command, cwd, timeout_s)
    if completed.returncode != 0:
        tail = completed.output[-1500:]
        offline = any(
            word in tail.lower()
            for word in ("could not resolve", "network", "unable to access", "failed to connect", "timed out", "curl")
        )
        hint = (
            " This machine looks offline: setup needs network once (GitHub and the Mathlib cache)." if offline else ""
        )
        raise SetupError(f"`{' '.join(command)}` failed in {cwd}:{hint}\n{tail}")
    return completed


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


def repro_cache_dir() -> Path:
    """repro's own cache (``REPRO_CACHE_DIR``, else ``$XDG_CACHE_HOME/repro``, else ``~/.cache/repro``)."""
    root = os.environ.get("REPRO_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "repro"
    )
    return Path(root).expanduser().resolve()


def interact_cache_dir() -> Path:
    """Where LeanInteract keeps its REPL checkouts: repro's cache, not the package directory (lean-interact
    0.11.6 ``utils.DEFAULT_CACHE_DIR`` is ``<site-packages>/lean_interact/cache``, where a read-only or
    shared install cannot take its ``FileLock``: lean audit M9)."""
    return repro_cache_dir() / "lean-interact"


def project_lake(project: Path | str) -> ToolchainBinary:
    """The toolchain's own ``lake`` for ``project`` (what LeanInteract and setup run)."""
    return resolve_toolchain_binary("lake", str(Path(project).resolve()))


def _repl_tag(toolchain: Toolchain, project: Path) -> str:
    version = lean_version_of(project_toolchain(project)) or toolchain.lean_version
    return f"{toolchain.interact_repl_rev}_lean-toolchain-{version}"


def _fetch_missing_repl_tag(cache_dir: Path, toolchain: Toolchain, project: Path) -> bool:
    """Whether LeanInteract's clean REPL clone lacks the pinned tag (then its tags are fetched here).

    LeanInteract clones the REPL once and, when a tag is missing, only runs ``pull()`` in a detached HEAD,
    which fetches no new tags (lean-interact 0.11.6 ``config.py`` ``_retry_checkout_after_pull``,
    ``utils._GitUtilities.safe_pull``): a clone made before ``v1.3.19_lean-toolchain-*`` existed never gets
    it ("Lean REPL version `v1.3.19` is not available"). So the tags are fetched explicitly and the config
    is asked to force its pull (lean audit M9)."""
    parts = toolchain.interact_repl_git.rstrip("/").removesuffix(".git").split("/")
    clean = cache_dir / parts[-2] / parts[-1] / "repl_clean_copy"
    if not (clean / ".git").exists():
        return False
    tag = _repl_tag(toolchain, project)
    listed = subprocess.run(["git", "-C", str(clean), "tag", "-l", tag], capture_output=True, text=True)
    if listed.returncode == 0 and listed.stdout.strip() == tag:
        return False
    # offline, this fails; LeanInteract's own checkout then says which revision is missing
    with contextlib.suppress(OSError, subprocess.TimeoutExpired):
        subprocess.run(
            ["git", "-C", str(clean), "fetch", "--tags", "--force", "origin"],
            capture_output=True,
            text=True,
            timeout=600,
        )
    return True


def repl_config(project: Path | str, toolchain: Toolchain, *, memory_limit_mb: int | None = None) -> Any:
    """The one ``LeanREPLConfig`` for a project: REPL revision and elaboration options set explicitly.

    LeanInteract would otherwise pick its own default REPL revision and turn on ``incrementality`` and
    ``Elab.async`` (the latter documented for Lean >= v4.19.0 only); see repro.lean.toolchains. It gets the
    toolchain's own ``lake`` for both the config and the project (``lake_path``; lean-interact 0.11.6
    ``config.py`` ``_build_repl`` runs ``check_lake(self.lake_path)``, and ``LeanServer.start`` runs
    ``lake_path env repl``), an absolute project directory, and repro's cache directory.
    """
    from lean_interact import LeanREPLConfig, LocalProject

    directory = Path(project).expanduser().resolve()
    lake = project_lake(directory)
    if lake.path is None:
        raise SetupError(f"no Lean toolchain for {directory}: {lake.problem}. {ELAN_INSTALL_HINT}")
    cache_dir = interact_cache_dir()
    cache_dir.mkdir(parents=True, exist_ok=True)
    force_pull = _fetch_missing_repl_tag(cache_dir, toolchain, directory)
    return LeanREPLConfig(
        project=LocalProject(directory=str(directory), auto_build=False, lake_path=lake.path),
        repl_rev=toolchain.interact_repl_rev,
        repl_git=toolchain.interact_repl_git,
        force_pull_repl=force_pull,
        cache_dir=cache_dir,
        lake_path=lake.path,
        memory_hard_limit_mb=memory_limit_mb,
        enable_incremental_optimization=toolchain.incrementality,
        enable_parallel_elaboration=toolchain.parallel_elaboration,
    )


MATHLIB_PACKAGE = Path(".lake") / "packages" / "mathlib"


@dataclass
class CacheState:
    """How much of Mathlib's build the prebuilt cache left in the project: modules with an ``.olean``."""

    sources: int
    oleans: int
    missing: list[str]

    @property
    def complete(self) -> bool:
        return self.sources > 0 and not self.missing


def mathlib_cache_state(project: Path) -> CacheState:
    """Count Mathlib's modules (``Mathlib/**/*.lean``) that have a built ``.olean``
    (``.lake/build/lib/Mathlib/**/*.olean``): what ``lake exe cache get`` unpacks, one per module."""
    package = project / MATHLIB_PACKAGE
    sources = sorted(path.relative_to(package) for path in (package / "Mathlib").rglob("*.lean"))
    lib = package / ".lake" / "build" / "lib"
    missing = [str(source) for source in sources if not (lib / source.with_suffix(".olean")).is_file()]
    oleans = len(sources) - len(missing)
    return CacheState(sources=len(sources), oleans=oleans, missing=missing)


def _cache_problem(project: Path, toolchain: Toolchain, output: str, returncode: int) -> str | None:
    """Why Mathlib's prebuilt cache is not usable, with the cause named; None when it is complete."""
    state = mathlib_cache_state(project)
    if state.complete:
        return None
    lowered = output.lower()
    if state.sources == 0:
        return f"Mathlib's sources are not in {project / MATHLIB_PACKAGE} (did `lake update` fetch Mathlib?)"
    failed = [line.strip() for line in output.splitlines() if "download" in line.lower() and "fail" in line.lower()]
    if failed:
        cause = f"the cache server did not serve every file ({failed[-1]})"
    elif any(word in lowered for word in ("could not resolve", "failed to connect", "network", "timed out")):
        cause = "the cache server could not be reached (offline?)"
    elif returncode != 0:
        cause = f"`lake exe cache get` exited {returncode}"
    else:
        cause = "`lake exe cache get` reported success but left modules unbuilt"
    return (
        f"Mathlib's prebuilt cache for {toolchain.mathlib_rev} is incomplete: {state.oleans} of {state.sources} "
        f"modules have an .olean ({cause}; first missing: {', '.join(state.missing[:3])}). Without it "
        f"`lake build` would compile Mathlib from source. Mathlib {toolchain.mathlib_rev} predates Mathlib's move "
        "from the Azure cache (lakecache.blob.core.windows.net) to Cloudflare, so its files may no longer be "
        f"served. {CACHE_FALLBACK}"
    )


def registered_projects() -> dict[str, str]:
    """Toolchain name -> absolute project path, as ``repro lean setup`` recorded them."""
    path = repro_cache_dir() / "lean-projects.json"
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(key): str(value) for key, value in found.items()} if isinstance(found, dict) else {}


def register_project(toolchain: Toolchain, project: Path) -> None:
    """Remember where setup built ``toolchain``'s project, so a run from another directory finds it."""
    path = repro_cache_dir() / "lean-projects.json"
    projects = registered_projects()
    projects[toolchain.name] = str(project.resolve())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(projects, indent=1, sort_keys=True), encoding="utf-8")


def setup_lean_project(
    project: Path,
    toolchain: Toolchain | None = None,
    on_step: Callable[[str], None] | None = None,
    *,
    build_mathlib: bool = False,
    step_timeout_s: float | None = None,
) -> list[str]:
    """Fetch Mathlib, its build cache and the REPL for one toolchain. Fails clearly when offline.

    ``on_step`` hears of each finished step as it finishes, so a user whose setup fails half-way (no
    ``lake``, no network) still learns what was already done, e.g. that the project was created.
    ``build_mathlib`` lets ``lake build`` compile whatever the cache did not provide (hours).
    """
    toolchain = toolchain or get_toolchain("v4.15.0")
    done: list[str] = []

    def record(step: str) -> None:
        done.append(step)
        if on_step is not None:
            on_step(step)

    if materialize_project(project, toolchain):
        record(f"created {project} for Lean {toolchain.lean_version}, Mathlib {toolchain.mathlib_rev}")
    project = project.resolve()
    lake_binary = project_lake(project)
    if lake_binary.path is None:
        raise SetupError(f"no `lake` for {project}: {lake_binary.problem}. {ELAN_INSTALL_HINT}")
    lake = lake_binary.path
    record(f"lake: {lake_binary.describe()}")
    limit = step_timeout_s or STEP_TIMEOUT_S
    _run([lake, "update"], project, limit)
    record("lake update")
    fetched = _run_step([lake, "exe", "cache", "get"], project, limit)
    problem = _cache_problem(project, toolchain, fetched.output, fetched.returncode)
    if problem and not build_mathlib:
        raise SetupError(problem)
    state = mathlib_cache_state(project)
    record(
        f"lake exe cache get (Mathlib build cache: {state.oleans} of {state.sources} modules"
        + (", the rest compiled from source by the next step)" if problem else ")")
    )
    _run([lake, "build"], project, max(limit, SOURCE_BUILD_TIMEOUT_S) if problem else limit)
    record("lake build")
    try:
        repl_config(project, toolchain)
        record(f"LeanInteract REPL built ({toolchain.interact_repl_git} @ {toolchain.interact_repl_rev})")
    except Exception as error:
        raise SetupError(f"building the Lean REPL through LeanInteract failed: {error}") from error
    register_project(toolchain, project)
    return done
