"""A stand-in for elan and a Lean toolchain, for machines without Lean (the elan proxy's failures included).

It imitates **elan 4.2.3** (leanprover/elan at b6cec7e), read, not copied:

- one binary, dispatched on the name it is called by (``src/elan-cli/main.rs``): ``ELAN_HOME/bin/lake`` and
  ``lean`` are proxies, ``elan`` is elan itself;
- a proxy resolves the toolchain from the *current directory* (``src/elan-cli/proxy_mode.rs``:
  ``cfg.toolchain_for_dir(&cwd)``): ``ELAN_TOOLCHAIN``, else the first ``lean-toolchain`` from the directory
  upward (``src/elan/config.rs`` ``find_override_from_dir_walk``), else the default of ``settings.toml``;
  with none it fails "error: no default toolchain configured. run `elan default stable` ..."
  (``src/elan/errors.rs`` ``NoDefaultToolchain``), exit 1 (``main.rs``);
- a toolchain lives in ``ELAN_HOME/toolchains/<name with / as -- and : as --->/bin``; an uninstalled one
  would be downloaded, which fails offline (this double never downloads);
- the proxy runs the toolchain's binary with ``ELAN_TOOLCHAIN`` and ``ELAN_HOME`` set (``toolchain.rs``
  ``set_env``);
- ``elan which BIN`` prints the toolchain's binary for the current directory, and panics "binary not
  found" (exit 101) where no toolchain resolves (``src/elan-cli/elan_mode.rs`` ``which``: ``.expect``).

The toolchain's own ``lake`` imitates Lake of Lean v4.15.0 for what repro and LeanInteract run: ``--version``,
``env CMD``, ``update``, ``exe cache get`` (Mathlib's cache: complete, partial or missing, with "N
download(s) failed" and exit 1), ``build`` (in LeanInteract's REPL checkout it makes ``.lake/build/bin/repl``
start the fake REPL; ``build_seconds`` makes it slow).
"""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ELAN_RELEASE = "4.2.3"  # leanprover/elan b6cec7e
PROGRAMS = Path(__file__).resolve().with_name("elan_programs.py")


def toolchain_dir_name(toolchain: str) -> str:
    return toolchain.replace("/", "--").replace(":", "---")


@dataclass
class FakeElan:
    home: Path
    toolchains: dict[str, Path] = field(default_factory=dict)  # name -> its bin directory

    @property
    def bin(self) -> Path:
        return self.home / "bin"

    def lake(self, toolchain: str) -> Path:
        return self.toolchains[toolchain] / "lake"

    def set_default(self, toolchain: str | None) -> None:
        text = f'default_toolchain = "{toolchain}"\n' if toolchain else ""
        (self.home / "settings.toml").write_text(text, encoding="utf-8")

    def behave(self, toolchain: str, **behaviour: Any) -> None:
        """Change what the toolchain's lake does (``cache``, ``build_seconds``, ``repl_command``, ``log``)."""
        path = self.toolchains[toolchain].parent / "behaviour.json"
        current = json.loads(path.read_text(encoding="utf-8"))
        current.update(behaviour)
        path.write_text(json.dumps(current), encoding="utf-8")

    def env(self, path: str = "/usr/bin:/bin") -> dict[str, str]:
        """Environment entries that put this elan first on PATH, as elan's installer does."""
        return {"ELAN_HOME": str(self.home), "PATH": f"{self.bin}:{Path(sys.executable).parent}:{path}"}


def _programs_in(root: Path) -> str:
    """A copy of the programs inside ``root`` (ELAN_HOME, a toolchain): as a real toolchain's ``lake`` needs
    nothing outside its toolchain, the sandbox, which shows a toolchain and not the tests' checkout, runs it."""
    copy = root / "libexec" / PROGRAMS.name
    copy.parent.mkdir(parents=True, exist_ok=True)
    copy.write_bytes(PROGRAMS.read_bytes())
    return str(copy)


def _script(path: Path, arguments: list[str]) -> None:
    quoted = " ".join(shlex.quote(part) for part in arguments)
    path.write_text(f'#!/bin/sh\nexec {quoted} "$@"\n', encoding="utf-8")
    path.chmod(0o755)


def make_fake_elan(
    home: Path,
    *,
    toolchains: tuple[str, ...] = ("leanprover/lean4:v4.15.0",),
    default: str | None = None,
    repl_command: list[str] | None = None,
) -> FakeElan:
    """An ``ELAN_HOME`` with the proxies, ``settings.toml`` (``default`` or none) and ``toolchains``.

    ``repl_command`` is what the REPL LeanInteract builds runs (default: the fake REPL of repro)."""
    home.mkdir(parents=True, exist_ok=True)
    (home / "bin").mkdir(exist_ok=True)
    programs = _programs_in(home)
    for name in ("elan", "lake", "lean"):
        _script(home / "bin" / name, [sys.executable, programs, "elan-proxy", name])
    elan = FakeElan(home=home)
    elan.set_default(default)
    for toolchain in toolchains:
        root = home / "toolchains" / toolchain_dir_name(toolchain)
        (root / "bin").mkdir(parents=True, exist_ok=True)
        version = toolchain.rsplit(":", 1)[-1].removeprefix("v")
        behaviour = {
            "lean_version": version,
            "repl_command": repl_command or [sys.executable, "-m", "repro.lean.fake_repl"],
        }
        (root / "behaviour.json").write_text(json.dumps(behaviour), encoding="utf-8")
        lake = [sys.executable, _programs_in(root), "toolchain-lake", str(root / "behaviour.json")]
        _script(root / "bin" / "lake", lake)
        _script(root / "bin" / "lean", [sys.executable, "-c", f"print('Lean (version {version}, stand-in)')"])
        elan.toolchains[toolchain] = root / "bin"
    return elan
