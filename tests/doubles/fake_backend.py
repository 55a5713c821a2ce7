"""Run the pool against the fake REPL through the real LeanInteract client.

LeanInteract starts ``<lake> env <repl_dir>/.lake/build/bin/repl``; here ``lake`` is a two-line shim
that runs its arguments, and ``repl`` starts :mod:`tests.doubles.fake_repl`. Everything the fake says
is marked ``real_lean=False`` and can never be released as verified.
"""

from __future__ import annotations

import json
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any

from repro.lean.repl_pool import ReplPoolVerifier
from repro.lean.toolchains import DEFAULT_TOOLCHAIN, Toolchain, get_toolchain

FAKE_TOOLCHAIN = get_toolchain(DEFAULT_TOOLCHAIN).elan_toolchain
REPO = Path(__file__).resolve().parents[2]
# ``python -m tests.doubles.fake_repl`` with the repository root importable whatever the directory it starts in
FAKE_REPL_COMMAND = [
    sys.executable,
    "-c",
    f"import runpy, sys; sys.path.insert(0, {str(REPO)!r});"
    " runpy.run_module('tests.doubles.fake_repl', run_name='__main__', alter_sys=True)",
]


def make_fake_repl_home(
    rules: list[dict[str, Any]] | str | None = None,
    directory: str | Path | None = None,
    *,
    toolchain: Toolchain | None = None,
) -> Path:
    home = Path(directory or tempfile.mkdtemp(prefix="repro-fake-repl-"))
    binary_dir = home / ".lake" / "build" / "bin"
    binary_dir.mkdir(parents=True, exist_ok=True)
    elan = toolchain.elan_toolchain if toolchain else FAKE_TOOLCHAIN
    (home / "lean-toolchain").write_text(elan + "\n", encoding="utf-8")
    rules_arg = ""
    if isinstance(rules, list):
        rules_path = home / "rules.json"
        rules_path.write_text(json.dumps(rules), encoding="utf-8")
        rules_arg = f" --rules {shlex.quote(str(rules_path))}"
    elif isinstance(rules, str):
        rules_arg = f" --rules {shlex.quote(rules)}"
    repl = binary_dir / "repl"
    repl.write_text(f"#!/bin/sh\nexec {shlex.join(FAKE_REPL_COMMAND)}{rules_arg}\n", encoding="utf-8")
    repl.chmod(0o755)
    lake = home / "lake"
    lake.write_text(
        '#!/bin/sh\n# lake shim for the fake REPL: `lake env CMD` runs CMD\nshift\nexec "$@"\n', encoding="utf-8"
    )
    lake.chmod(0o755)
    return home


def fake_repl_verifier(
    rules: list[dict[str, Any]] | str | None = None,
    *,
    workers: int = 2,
    timeout_s: float = 10.0,
    recycle_after: int = 200,
    memory_limit_mb: int | None = None,
    toolchain: Toolchain | None = None,
) -> ReplPoolVerifier:
    """The fake reports the configured toolchain, so cache keys and provenance differ per toolchain as
    they do with real Lean; ``real_lean=False`` and ``mathlib_revision="fake"`` keep it out of releases."""
    from lean_interact import LeanREPLConfig

    home = make_fake_repl_home(rules, toolchain=toolchain)
    config = LeanREPLConfig(
        local_repl_path=home,
        build_repl=False,
        lake_path=home / "lake",
        memory_hard_limit_mb=memory_limit_mb,
        enable_incremental_optimization=False,
        enable_parallel_elaboration=False,
    )
    return ReplPoolVerifier(
        workers=workers,
        timeout_s=timeout_s,
        recycle_after=recycle_after,
        repl_config=config,
        toolchain=toolchain.elan_toolchain if toolchain else FAKE_TOOLCHAIN,
        mathlib_revision="fake",
        real_lean=False,
        backend_id="fake-repl",
        start_timeout_s=30.0,
        owned_directory=str(home),
        memory_limit_mb=memory_limit_mb,
    )
