"""Factories for ``judge.backend: factory`` (``judge.factory: "tests.doubles.judges:NAME"``): the product's
own judges driving the stand-ins of this package, so a run, a study or a release goes through every line of
:mod:`repro.judge.kernel` and :mod:`repro.judge.comparator` except Lean itself. Every verdict is ``real:
false``: a pass from here never makes anything verified.

- :func:`safeverify`: SafeVerifyJudge with ``fake_safe_verify.py`` as ``lake``, one laid-out checkout per
  pinned toolchain (``lakefile.toml`` and a built ``.lake/build/bin/safe_verify``).
- :func:`safeverify_unbuilt`: the checkouts without the built binary (a clone never built).
- :func:`safeverify_killed`, :func:`safeverify_hang`, :func:`safeverify_unreadable`, :func:`safeverify_silent`:
  the tool fails that way at the replay step (hang: set ``judge.timeout_s`` low).
- :func:`comparator`: ComparatorJudge with ``fake_comparator.py`` as ``lake`` (a toolchain of
  ``repro.judge.comparator.COMPARATOR_PINS``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from repro.config import JudgeSettings
from repro.judge.comparator import COMPARATOR_BINARY, COMPARATOR_PINS, LEAN4EXPORT_BINARY, ComparatorJudge
from repro.judge.integrity import seal_tools
from repro.judge.kernel import SAFEVERIFY_BINARY, SAFEVERIFY_PINS, SafeVerifyJudge

HERE = Path(__file__).resolve().parent
FAKE_SAFEVERIFY = HERE / "fake_safe_verify.py"
FAKE_COMPARATOR = HERE / "fake_comparator.py"


def lay_out_safeverify(tools_dir: Path, *, built: bool = True) -> None:
    """One directory per pinned toolchain, where the real setup leaves a SafeVerify checkout."""
    for toolchain, pin in SAFEVERIFY_PINS.items():
        checkout = tools_dir / toolchain
        checkout.mkdir(parents=True, exist_ok=True)
        (checkout / "lakefile.toml").write_text(
            f"# stand-in SafeVerify checkout, standing for {pin.branch} at {pin.commit}\n", encoding="utf-8"
        )
        binary = checkout / SAFEVERIFY_BINARY
        if built:
            binary.parent.mkdir(parents=True, exist_ok=True)
            binary.write_text("#!/bin/sh\nexit 99  # never run: the stand-in lake answers for it\n", encoding="utf-8")
        elif binary.exists():
            binary.unlink()
        seal_tools(checkout)  # the setup's last step, as the real one's (repro.judge.integrity)


def safeverify(settings: JudgeSettings, *extra: str, built: bool = True, **options: Any) -> SafeVerifyJudge:
    lay_out_safeverify(settings.resolved_tools_dir(), built=built)
    return SafeVerifyJudge(settings, lake=[sys.executable, str(FAKE_SAFEVERIFY), *extra], real=False, **options)


def safeverify_unbuilt(settings: JudgeSettings) -> SafeVerifyJudge:
    return safeverify(settings, built=False)


def safeverify_killed(settings: JudgeSettings) -> SafeVerifyJudge:
    return safeverify(settings, "--fail", "safe_verify:killed")


def safeverify_hang(settings: JudgeSettings) -> SafeVerifyJudge:
    return safeverify(settings, "--fail", "safe_verify:hang")


def safeverify_unreadable(settings: JudgeSettings) -> SafeVerifyJudge:
    return safeverify(settings, "--fail", "safe_verify:unreadable")


def safeverify_silent(settings: JudgeSettings) -> SafeVerifyJudge:
    return safeverify(settings, "--fail", "safe_verify:silent")


def lay_out_comparator(tools_dir: Path) -> None:
    """``TOOLS_DIR/<toolchain>/comparator`` (built binaries) and ``workspace`` (a Mathlib workspace's manifest)."""
    for toolchain, pin in COMPARATOR_PINS.items():
        home = tools_dir / toolchain
        for binary in (COMPARATOR_BINARY, LEAN4EXPORT_BINARY):
            path = home / "comparator" / binary
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"#!/bin/sh\nexit 99  # stand-in for comparator {pin.commit}\n", encoding="utf-8")
            path.chmod(0o755)
        workspace = home / "workspace"
        (workspace / ".lake" / "packages" / "mathlib").mkdir(parents=True, exist_ok=True)
        manifest = {
            "version": "1.1.0",
            "packagesDir": ".lake/packages",
            "packages": [
                {
                    "url": "https://github.com/leanprover-community/mathlib4",
                    "type": "git",
                    "rev": "0000000000000000000000000000000000000000",
                    "name": "mathlib",
                    "inherited": False,
                }
            ],
            "name": "ReproLean",
            "lakeDir": ".lake",
        }
        (workspace / "lake-manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        seal_tools(home)
    landrun = tools_dir / "bin" / "landrun"
    landrun.parent.mkdir(parents=True, exist_ok=True)
    landrun.write_text("#!/bin/sh\nexit 99  # stand-in landrun: the stand-in comparator never runs it\n")
    landrun.chmod(0o755)


def comparator(settings: JudgeSettings, *extra: str, **options: Any) -> ComparatorJudge:
    tools = settings.resolved_tools_dir()
    lay_out_comparator(tools)
    return ComparatorJudge(
        settings,
        lake=[sys.executable, str(FAKE_COMPARATOR), *extra],
        real=False,
        landrun=str(tools / "bin" / "landrun"),
        **options,
    )
