"""The programs of the elan stand-in (see tests/doubles/elan.py); stdlib only, run as a script by path.

``elan-proxy NAME ARGS``: elan 4.2.3's binary, which dispatches on the name it was called by
(leanprover/elan b6cec7e ``src/elan-cli/main.rs``): ``elan`` is elan's own command line, anything else a
proxy for that toolchain binary (``src/elan-cli/proxy_mode.rs``).
``toolchain-lake ARGS``: a toolchain's own ``lake`` (imitating Lake of Lean v4.15.0 for the commands repro
and LeanInteract run), behaving as ``behaviour.json`` beside it says.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

NO_DEFAULT = (
    "error: no default toolchain configured. run `elan default stable` to install & configure the latest Lean 4 "
    "stable release."
)


def _elan_home() -> Path:
    return Path(os.environ.get("ELAN_HOME") or Path.home() / ".elan")


def _dir_name(toolchain: str) -> str:
    # src/elan/toolchain.rs: "/" -> "--", ":" -> "---"
    return toolchain.replace("/", "--").replace(":", "---")


def _default() -> str | None:
    settings = _elan_home() / "settings.toml"
    if not settings.is_file():
        return None
    for line in settings.read_text(encoding="utf-8").splitlines():
        if line.strip().startswith("default_toolchain"):
            return line.split("=", 1)[1].strip().strip('"')
    return None


def _resolve(cwd: Path) -> tuple[str | None, str]:
    """src/elan/config.rs ``find_override`` then ``resolve_default``: ELAN_TOOLCHAIN, then the first
    ``lean-toolchain`` from ``cwd`` upward, then the default. (toolchain or None, reason)."""
    if os.environ.get("ELAN_TOOLCHAIN"):
        return os.environ["ELAN_TOOLCHAIN"], "environment"
    directory: Path | None = cwd.resolve()
    while directory is not None:
        candidate = directory / "lean-toolchain"
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8").strip(), f"toolchain file {candidate}"
        directory = directory.parent if directory.parent != directory else None
    default = _default()
    return (default, "default") if default else (None, "")


def _toolchain_bin(toolchain: str) -> Path:
    return _elan_home() / "toolchains" / _dir_name(toolchain) / "bin"


def _not_installed(toolchain: str, reason: str) -> int:
    # elan would download it (install_from_dist); this double has no network, as an offline node
    print(f"error: override toolchain '{toolchain}' is not installed", file=sys.stderr)
    print(f"info: caused by: the {reason} specifies an uninstalled toolchain", file=sys.stderr)
    print("info: caused by: could not download the toolchain (no network)", file=sys.stderr)
    return 1


def elan_main(name: str, arguments: list[str]) -> int:
    if name != "elan":
        toolchain, reason = _resolve(Path.cwd())
        if toolchain is None:
            print(NO_DEFAULT, file=sys.stderr)
            return 1
        binary = _toolchain_bin(toolchain) / name
        if not binary.is_file():
            return _not_installed(toolchain, reason)
        env = dict(os.environ, ELAN_TOOLCHAIN=toolchain, ELAN_HOME=str(_elan_home()))
        os.execve(str(binary), [str(binary), *arguments], env)
    if arguments[:1] == ["which"] and len(arguments) == 2:
        toolchain, reason = _resolve(Path.cwd())
        if toolchain is None:
            # src/elan-cli/elan_mode.rs `which`: `.expect("binary not found")` on no toolchain: a Rust panic
            print("thread 'main' panicked at src/elan-cli/elan_mode.rs:292:10:\nbinary not found", file=sys.stderr)
            return 101
        binary = _toolchain_bin(toolchain) / arguments[1]
        if not binary.is_file():
            return _not_installed(toolchain, reason)
        print(binary)
        return 0
    if arguments[:1] == ["--version"]:
        print("elan 4.2.3 (b6cec7e 2026-06-01)")
        return 0
    print(f"error: this elan stand-in does not implement `elan {' '.join(arguments)}`", file=sys.stderr)
    return 1


def _log(behaviour: dict[str, object], arguments: list[str]) -> None:
    log = behaviour.get("log")
    if isinstance(log, str):
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"cwd": os.getcwd(), "argv": arguments}) + "\n")


def lake_main(arguments: list[str], behaviour: dict[str, object]) -> int:
    version = str(behaviour.get("lean_version", "4.15.0"))
    _log(behaviour, arguments)
    if len(arguments) > 2 and arguments[0] == "-d":
        os.chdir(arguments[1])
        arguments = arguments[2:]
    command = arguments[0] if arguments else ""
    if command == "--version":
        print(f"Lake version 5.0.0-src (Lean version {version})")
        return 0
    if command == "env":
        env = dict(os.environ, LAKE="lake", LEAN_SYSROOT=str(Path(__file__).resolve().parents[1]))
        os.execvpe(arguments[1], arguments[1:], env)
    if command == "update":
        modules = int(str(behaviour.get("mathlib_modules", 5)))
        source = Path(".lake/packages/mathlib/Mathlib")
        source.mkdir(parents=True, exist_ok=True)
        for index in range(modules):
            (source / f"Module{index}.lean").write_text("-- stand-in\n", encoding="utf-8")
        Path("lake-manifest.json").write_text('{"version": 7, "packages": []}\n', encoding="utf-8")
        return 0
    if arguments[:3] == ["exe", "cache", "get"]:
        modules = sorted(Path(".lake/packages/mathlib/Mathlib").glob("*.lean"))
        served = str(behaviour.get("cache", "complete"))
        keep = {"complete": len(modules), "partial": len(modules) // 2, "missing": 0}.get(served, len(modules))
        lib = Path(".lake/packages/mathlib/.lake/build/lib/Mathlib")
        lib.mkdir(parents=True, exist_ok=True)
        print(f"Attempting to download {len(modules)} file(s)")
        for module in modules[:keep]:
            (lib / module.with_suffix(".olean").name).write_bytes(b"olean")
        if keep < len(modules):
            print(f"{len(modules) - keep} download(s) failed")
            return 1
        print("Decompressing ... Completed successfully!")
        return 0
    if command == "build":
        delay = float(str(behaviour.get("build_seconds", 0)))
        if delay:  # Lake runs `lean` processes of its own: a child that outlives a kill of Lake alone
            import subprocess

            child = subprocess.Popen(["sleep", str(delay)])
            if behaviour.get("pid_file"):
                Path(str(behaviour["pid_file"])).write_text(str(child.pid), encoding="utf-8")
            child.wait()
        if Path("lakefile.lean").is_file() and Path("REPL").exists():  # the REPL checkout LeanInteract builds
            binary = Path(".lake/build/bin/repl")
            binary.parent.mkdir(parents=True, exist_ok=True)
            repl = behaviour.get("repl_command") or [sys.executable, "-c", "print('no REPL configured')"]
            assert isinstance(repl, list)
            quoted = " ".join("'" + str(part).replace("'", "'\"'\"'") + "'" for part in repl)
            binary.write_text(f'#!/bin/sh\nexec {quoted} "$@"\n', encoding="utf-8")
            binary.chmod(0o755)
        return 0
    print(f"error: this lake stand-in does not implement `lake {' '.join(arguments)}`", file=sys.stderr)
    return 1


if __name__ == "__main__":
    role, *rest = sys.argv[1:]
    if role == "elan-proxy":
        sys.exit(elan_main(rest[0], rest[1:]))
    behaviour_file = Path(rest[0])
    loaded = json.loads(behaviour_file.read_text(encoding="utf-8")) if behaviour_file.is_file() else {}
    sys.exit(lake_main(rest[1:], loaded))
