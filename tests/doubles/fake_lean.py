"""Select the fake REPL through the product's generic hook: ``lean.backend: factory`` with
``lean.factory: "tests.doubles.fake_lean:fake_lean"`` (and ``lean.factory_options: {rules: FILE}``), the way
scripted models name ``script: "module:function"``. The product knows nothing of the fake; whatever it answers
is ``real_lean: false``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from repro.config import LeanSettings
from repro.lean.fake_backend import fake_repl_verifier
from repro.lean.repl_pool import ReplPoolVerifier
from repro.lean.toolchains import get_toolchain

FACTORY = "tests.doubles.fake_lean:fake_lean"


def fake_lean(settings: LeanSettings, *, rules: str | None = None) -> ReplPoolVerifier:
    """``lean.factory``: the fake REPL behind the real LeanInteract client, with ``settings``' pool sizes and
    toolchain (so cache keys and provenance differ per toolchain as with real Lean)."""
    return fake_repl_verifier(
        rules,
        workers=settings.workers,
        timeout_s=settings.timeout_s,
        recycle_after=settings.recycle_after,
        toolchain=get_toolchain(settings.toolchain),
    )


def fake_lean_section(rules: str | Path | None = None, **settings: Any) -> dict[str, Any]:
    """The ``lean:`` section of a config that selects the fake REPL (``rules``: a fake-REPL rules file)."""
    options = {"rules": str(rules)} if rules else {}
    return {**settings, "backend": "factory", "factory": FACTORY, "factory_options": options}


def fake_lean_settings(rules: str | Path | None = None, **settings: Any) -> LeanSettings:
    return LeanSettings.model_validate(fake_lean_section(rules, **settings))


def fake_lean_config(path: Path, rules: str | Path | None = None, **settings: Any) -> Path:
    """A config file (for ``--config``) whose ``lean:`` selects the fake REPL; written to ``path``."""
    path.write_text(yaml.safe_dump({"lean": fake_lean_section(rules, **settings)}), encoding="utf-8")
    return path


# ``repro run --config configs/demo.yaml`` on rows the demo's recording does not hold: the fake REPL and the
# stand-in judge instead of the recorded backends
STAND_INS_SET = [
    *("--set", "lean.backend=factory", "--set", f"lean.factory={FACTORY}"),
    *("--set", "judge.backend=factory", "--set", "judge.factory=tests.doubles.judge:stand_in_judge"),
]
