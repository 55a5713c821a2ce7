"""A machine with "Lean" installed through elan, for tests: the elan stand-in, a project, LeanInteract's REPL.

Everything LeanInteract 0.11.6 does runs for real (clone cache, tag checkout, ``check_lake``, ``lake build``
of the REPL, ``lake env repl``); only the programs it starts are stand-ins (tests/doubles/elan.py), and the
REPL they build is repro's fake REPL. The REPL repository is a local git repository standing for
augustepoiroux/repl, tagged as LeanInteract expects (``{rev}_lean-toolchain-{version}``, ``config.py``
``_prepare_git_repl``), already cloned into repro's cache as LeanInteract would have cloned it.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from repro.lean.toolchains import Toolchain, get_toolchain
from tests.doubles.elan import FakeElan, make_fake_elan
from tests.doubles.fake_backend import FAKE_REPL_COMMAND


def git(directory: Path, *arguments: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(directory), "-c", "user.name=t", "-c", "user.email=t@t", *arguments],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


@dataclass
class LeanWorld:
    elan: FakeElan
    project: Path
    cache: Path
    origin: Path
    toolchain: Toolchain

    @property
    def clean_copy(self) -> Path:
        return self.cache / "lean-interact" / "augustepoiroux" / "repl" / "repl_clean_copy"

    def tag_origin(self) -> None:
        git(self.origin, "tag", f"{self.toolchain.interact_repl_rev}_lean-toolchain-{self.toolchain.lean_version}")


def make_repl_origin(origin: Path, lean_version: str, *, tagged: bool = True, rev: str = "v1.3.19") -> None:
    origin.mkdir(parents=True)
    (origin / "lean-toolchain").write_text(f"leanprover/lean4:{lean_version}\n", encoding="utf-8")
    (origin / "lakefile.lean").write_text("-- the REPL's lakefile (stand-in)\n", encoding="utf-8")
    (origin / "REPL").mkdir()
    (origin / "REPL" / "Main.lean").write_text("-- stand-in\n", encoding="utf-8")
    git(origin, "init", "-q", "-b", "master")
    git(origin, "add", ".")
    git(origin, "commit", "-q", "-m", "repl")
    if tagged:
        git(origin, "tag", f"{rev}_lean-toolchain-{lean_version}")


def make_lean_world(
    root: Path,
    *,
    toolchain: str = "v4.15.0",
    default: str | None = None,
    tagged: bool = True,
    fake_rules: str | None = None,
) -> LeanWorld:
    """An elan with ``toolchain`` installed (``default`` as elan's default, none by default, as the
    Dockerfile's ``--default-toolchain none``), a project of that toolchain, and repro's cache holding
    LeanInteract's clone of the REPL (tagged for the toolchain unless ``tagged`` is False)."""
    pinned = get_toolchain(toolchain)
    repl = list(FAKE_REPL_COMMAND) + (["--rules", fake_rules] if fake_rules else [])
    elan = make_fake_elan(root / "elan", toolchains=(pinned.elan_toolchain,), default=default, repl_command=repl)
    project = root / "project"
    project.mkdir()
    (project / "lean-toolchain").write_text(pinned.elan_toolchain + "\n", encoding="utf-8")
    (project / "lakefile.toml").write_text(pinned.lakefile(), encoding="utf-8")
    origin = root / "repl-origin"
    make_repl_origin(origin, pinned.lean_version, tagged=tagged, rev=pinned.interact_repl_rev)
    cache = root / "cache"
    world = LeanWorld(elan=elan, project=project, cache=cache, origin=origin, toolchain=pinned)
    world.clean_copy.parent.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", str(origin), str(world.clean_copy)], check=True, capture_output=True)
    return world
