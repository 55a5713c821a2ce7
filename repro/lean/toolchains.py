"""Named Lean toolchains: a Lean release with the Mathlib and REPL revisions that belong to it.

A prover was trained and evaluated against one Lean and one Mathlib; checking its proofs under another
costs coverage for reasons that are not the prover's (renamed lemmas, changed tactics). So each prover
profile names a toolchain, ``repro lean setup --toolchain NAME`` prepares one pinned project per name, and
every Lean verdict, cache key and provenance record carries the toolchain it was checked under.

Where the pins come from (read, not copied):

- ``v4.9.0``: Goedel-Prover-V2 (README, "Environment Setup") follows DeepSeek-Prover-V1.5, "Lean 4
  version 4.9 and the corresponding Mathlib"; both repositories pin the ``mathlib4`` submodule at
  ``2f65ba7f1a9144b20c8e7358513548e317d26de1`` of ``xinhjBrant/mathlib4`` (branch ``deepseek``), a Mathlib
  of the Lean v4.9.0 era. We build against Mathlib's own ``v4.9.0`` tag (the tag Kimina Lean Server's
  ``setup.sh`` checks out for ``LEAN_SERVER_LEAN_VERSION=v4.9.0``), which has a prebuilt cache; the harness
  commit is recorded in :attr:`Toolchain.harness_mathlib` so a reader can tell the two apart.
- ``v4.15.0``: Kimina-Prover Preview's miniF2F solutions were checked on Lean v4.15.0 with Mathlib
  ``v4.15.0`` (MoonshotAI/Kimina-Prover-Preview), the environment this project pinned so far.
- REPL: leanprover-community/repl has a tag per Lean release (``v4.9.0``, ``v4.15.0``); Kimina Lean
  Server's ``setup.sh`` builds that tag and, for ``<= v4.9.0``, cherry-picks the end-of-line flush commit
  ``4fc1e6d1dda170e8f0a6b698dd5f7e17a9cf52b4``. LeanInteract instead builds its fork
  (augustepoiroux/repl), which backports those fixes, at ``{repl_rev}_lean-toolchain-{lean_version}``
  (``src/lean_interact/config.py``, ``_prepare_git_repl``); we pass that revision explicitly.
- Elaboration options: LeanInteract's ``enable_incremental_optimization`` needs Lean >= v4.8.0-rc1 and
  ``enable_parallel_elaboration`` (``set_option Elab.async``) Lean >= v4.19.0 (its ``LeanREPLConfig``
  docstring); both are set explicitly per toolchain instead of taking the library's defaults. They reach
  only requests sent through ``LeanServer.run`` (``_augment_request``, lean-interact 0.11.6 ``server.py``):
  the pool's header command. Every check goes through ``run_dict``, which sends the request as it is, so
  checks run without incrementality, each from the header's environment (lean audit M9).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

from repro.exit_codes import ReproError

DEFAULT_TOOLCHAIN = "v4.15.0"

MATHLIB_GIT = "https://github.com/leanprover-community/mathlib4"
UPSTREAM_REPL_GIT = "https://github.com/leanprover-community/repl"
# LeanInteract's REPL fork and the revision lean-interact 0.11.6 builds by default (utils.DEFAULT_REPL_VERSION)
INTERACT_REPL_GIT = "https://github.com/augustepoiroux/repl"
INTERACT_REPL_REV = "v1.3.19"

STANDARD_HEADER = (
    "import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 400000\n\nopen BigOperators Real Nat Topology Rat\n"
)


class Toolchain(BaseModel):
    """One Lean release and the Mathlib/REPL revisions that were built with it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    lean_version: str = Field(description="Lean release tag, e.g. v4.15.0")
    mathlib_git: str = MATHLIB_GIT
    mathlib_rev: str = Field(description="Mathlib tag or commit the project requires")
    repl_git: str = UPSTREAM_REPL_GIT
    repl_rev: str = Field(description="leanprover-community/repl tag (what Kimina Lean Server builds)")
    interact_repl_git: str = INTERACT_REPL_GIT
    interact_repl_rev: str = INTERACT_REPL_REV
    default_header: str = STANDARD_HEADER
    incrementality: bool = Field(description="send the REPL's `incrementality` flag (Lean >= v4.8.0-rc1)")
    parallel_elaboration: bool = Field(description="set `Elab.async` (Lean >= v4.19.0)")
    harness_mathlib: str | None = Field(None, description="the Mathlib the provers' own harness used, if other")
    used_by: tuple[str, ...] = ()

    @property
    def elan_toolchain(self) -> str:
        """What ``lean-toolchain`` holds for this release."""
        return f"leanprover/lean4:{self.lean_version}"

    @property
    def version_string(self) -> str:
        """What ``Lean.versionString`` answers under this toolchain (``4.15.0``)."""
        return self.lean_version.removeprefix("v")

    def lakefile(self) -> str:
        """The ``lakefile.toml`` of this toolchain's project."""
        return (
            'name = "ReproLean"\n'
            'defaultTargets = ["ReproLean"]\n\n'
            "[[require]]\n"
            'name = "mathlib"\n'
            f'git = "{self.mathlib_git}"\n'
            f"# Mathlib built for Lean {self.lean_version}; see repro/lean/toolchains.py for why this pin.\n"
            f'rev = "{self.mathlib_rev}"\n\n'
            "[[lean_lib]]\n"
            'name = "ReproLean"\n'
        )


_TOOLCHAINS: dict[str, Toolchain] = {
    toolchain.name: toolchain
    for toolchain in (
        Toolchain(
            name="v4.9.0",
            lean_version="v4.9.0",
            mathlib_rev="v4.9.0",
            repl_rev="v4.9.0",
            incrementality=True,
            parallel_elaboration=False,
            harness_mathlib="https://github.com/xinhjBrant/mathlib4@2f65ba7f1a9144b20c8e7358513548e317d26de1",
            used_by=("Goedel-Prover-V2", "DeepSeek-Prover-V2", "DeepSeek-Prover-V1.5"),
        ),
        Toolchain(
            name="v4.15.0",
            lean_version="v4.15.0",
            mathlib_rev="v4.15.0",
            repl_rev="v4.15.0",
            incrementality=True,
            parallel_elaboration=False,
            used_by=("Kimina-Prover Preview", "Kimina-Prover Distill"),
        ),
    )
}


class UnknownToolchain(ReproError, ValueError):
    pass


def list_toolchains() -> list[Toolchain]:
    return list(_TOOLCHAINS.values())


def _canonical(name: str) -> str:
    """``4.15.0``, ``v4.15.0`` and ``leanprover/lean4:v4.15.0`` name the same toolchain."""
    name = name.strip().removeprefix("leanprover/lean4:")
    return name if name.startswith("v") else f"v{name}"


def get_toolchain(name: str) -> Toolchain:
    try:
        return _TOOLCHAINS[_canonical(name)]
    except KeyError:
        known = ", ".join(_TOOLCHAINS)
        raise UnknownToolchain(f"unknown Lean toolchain {name!r}; known: {known}") from None


def lean_version_of(toolchain_text: str | None) -> str | None:
    """The release tag in a ``lean-toolchain`` line or a ``Lean.versionString`` answer, or None."""
    if not toolchain_text:
        return None
    found = re.search(r"v?(\d+\.\d+\.\d+(?:-rc\d+)?)", toolchain_text)
    return f"v{found.group(1)}" if found else None


def default_project_path(name: str) -> str:
    """Where ``repro lean setup --toolchain NAME`` puts its project: one directory per toolchain.

    The default toolchain keeps ``lean_project`` (the template shipped with repro), so existing set-ups
    stay valid; every other toolchain gets ``lean_project_<name>`` next to it.
    """
    toolchain = get_toolchain(name)
    return "lean_project" if toolchain.name == DEFAULT_TOOLCHAIN else f"lean_project_{toolchain.name}"
