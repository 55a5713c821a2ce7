"""A Lean toolchain per prover: pinned revisions, one project per toolchain, the toolchain carried by checks."""

from __future__ import annotations

import inspect
import threading
import time
import tomllib
from pathlib import Path
from typing import Any

import pytest

from repro.config import ConfigError, LeanSettings, build_config
from repro.lean import SetupError, build_verifier, lean_cache_key
from repro.lean.project import materialize_project, project_toolchain, repl_config
from repro.lean.toolchains import get_toolchain, lean_version_of, list_toolchains
from tests.conftest import REPO
from tests.doubles.fake_backend import fake_repl_verifier
from tests.doubles.fake_lean import fake_lean_settings


def test_the_toolchains_of_the_provers_are_pinned_consistently() -> None:
    names = {toolchain.name for toolchain in list_toolchains()}
    assert {"v4.9.0", "v4.15.0"} <= names
    for toolchain in list_toolchains():
        # Mathlib and the REPL are built for exactly this Lean: tags named after the release
        assert toolchain.repl_rev == toolchain.lean_version
        assert toolchain.mathlib_rev == toolchain.lean_version
        assert toolchain.elan_toolchain == f"leanprover/lean4:{toolchain.lean_version}"
        # Elab.async is documented for Lean >= v4.19.0 only
        assert toolchain.parallel_elaboration is False
    goedel = get_toolchain("v4.9.0")
    assert "Goedel-Prover-V2" in goedel.used_by and "Goedel-Prover-V2" not in get_toolchain("v4.15.0").used_by
    assert goedel.harness_mathlib and "2f65ba7f1a9144b20c8e7358513548e317d26de1" in goedel.harness_mathlib


def test_a_toolchain_is_found_by_any_of_its_spellings_and_an_unknown_one_is_refused() -> None:
    for spelling in ("v4.9.0", "4.9.0", "leanprover/lean4:v4.9.0", " v4.9.0\n"):
        assert get_toolchain(spelling).name == "v4.9.0"
    with pytest.raises(ValueError, match="known: v4.9.0, v4.15.0"):
        get_toolchain("v4.26.0")
    assert lean_version_of('"4.15.0"') == "v4.15.0"
    assert lean_version_of("leanprover/lean4:v4.9.0\n") == "v4.9.0"


def test_the_shipped_project_pins_the_mathlib_of_its_own_lean_and_claims_no_prover() -> None:
    toolchain = get_toolchain(project_toolchain(REPO / "lean_project") or "")
    lakefile_text = (REPO / "lean_project" / "lakefile.toml").read_text(encoding="utf-8")
    lakefile = tomllib.loads(lakefile_text)
    assert lakefile["require"][0]["rev"] == toolchain.mathlib_rev
    assert "Goedel" not in lakefile_text  # Goedel-Prover-V2 targets Lean v4.9.0, not this project
    assert lakefile_text == toolchain.lakefile()


def test_config_names_a_toolchain_and_each_toolchain_has_its_own_project() -> None:
    # absolute, so that LeanInteract (which resolves against the current directory) finds it anywhere
    assert LeanSettings().toolchain == "v4.15.0" and LeanSettings().project_dir() == str(Path("lean_project").resolve())
    old = LeanSettings(toolchain="4.9.0")
    assert old.toolchain == "v4.9.0" and Path(old.project_dir()).name == "lean_project_v4.9.0"
    assert old.resolved_mathlib_revision() == "v4.9.0"
    assert LeanSettings(toolchain="v4.9.0", project_path="/srv/lean").project_dir() == "/srv/lean"
    with pytest.raises(ConfigError, match="lean.toolchain"):
        build_config({"lean": {"toolchain": "v3"}})


def test_setup_creates_a_project_per_toolchain_and_refuses_to_reuse_another_lean(tmp_path: Path) -> None:
    project = tmp_path / "lean_project_v4.9.0"
    assert materialize_project(project, get_toolchain("v4.9.0"))
    assert project_toolchain(project) == "leanprover/lean4:v4.9.0"
    assert tomllib.loads((project / "lakefile.toml").read_text())["require"][0]["rev"] == "v4.9.0"
    assert (project / "ReproLean.lean").is_file()
    assert not materialize_project(project, get_toolchain("v4.9.0"))  # already there: left alone
    with pytest.raises(SetupError, match="v4.15.0"):
        materialize_project(project, get_toolchain("v4.15.0"))


def test_a_repl_backend_on_a_project_of_another_lean_is_refused_before_any_check(tmp_path: Path) -> None:
    materialize_project(tmp_path / "p", get_toolchain("v4.9.0"))
    settings = LeanSettings(backend="repl", toolchain="v4.15.0", project_path=str(tmp_path / "p"))
    with pytest.raises(SetupError, match="lean-toolchain says leanprover/lean4:v4.9.0"):
        build_verifier(settings)


async def test_checks_carry_their_toolchain_and_the_cache_keeps_toolchains_apart() -> None:
    code, header = "theorem t : True := trivial", "import Mathlib"
    keys, seen = set(), set()
    for name in ("v4.9.0", "v4.15.0"):
        verifier = build_verifier(fake_lean_settings(toolchain=name, workers=1))
        try:
            result = await verifier.check(code, header)
        finally:
            await verifier.close()
        seen.add(result.toolchain)
        keys.add(lean_cache_key(verifier, code, header))
    assert seen == {"leanprover/lean4:v4.9.0", "leanprover/lean4:v4.15.0"}
    assert len(keys) == 2


def test_the_repl_config_names_the_repl_revision_and_elaboration_options(monkeypatch: pytest.MonkeyPatch) -> None:
    import lean_interact

    # every keyword we pass exists in the installed lean-interact (0.8.1 lacked some)
    accepted = inspect.signature(lean_interact.LeanREPLConfig.__init__).parameters
    received: dict[str, Any] = {}

    class Recording:
        def __init__(self, **options: Any) -> None:
            assert set(options) <= set(accepted), set(options) - set(accepted)
            received.update(options)

    from repro.lean import project as project_module
    from repro.lean.sandbox import ToolchainBinary

    monkeypatch.setattr(lean_interact, "LeanREPLConfig", Recording)
    lake = "/opt/elan/toolchains/leanprover--lean4---v4.9.0/bin/lake"
    monkeypatch.setattr(
        project_module, "project_lake", lambda project: ToolchainBinary(program="lake", path=lake, source="test")
    )
    toolchain = get_toolchain("v4.9.0")
    repl_config("/srv/p", toolchain, memory_limit_mb=4096)
    assert received["lake_path"] == lake and received["project"].lake_path == lake  # never elan's shim (B1)
    assert received["repl_rev"] == toolchain.interact_repl_rev and received["repl_git"] == toolchain.interact_repl_git
    assert received["enable_parallel_elaboration"] is False
    assert received["enable_incremental_optimization"] is toolchain.incrementality
    assert received["memory_hard_limit_mb"] == 4096


async def test_the_pool_builds_one_repl_config_before_its_workers_start(monkeypatch: pytest.MonkeyPatch) -> None:
    from repro.lean import project as project_module
    from repro.lean.repl_pool import ReplPoolVerifier

    template = fake_repl_verifier(workers=1)
    built: list[int] = []
    lock = threading.Lock()

    def slow_config(*_: Any, **__: Any) -> Any:
        with lock:
            built.append(1)
        time.sleep(0.3)  # as long as cloning and building the REPL would take, workers must not race it
        return template._config()

    monkeypatch.setattr(project_module, "repl_config", slow_config)
    pool = ReplPoolVerifier(workers=3, project_path="unused", real_lean=False, start_timeout_s=30.0)
    try:
        result = await pool.check("theorem t : True := trivial", "import Mathlib")
    finally:
        await pool.close()
        await template.close()
    assert result.ok
    assert len(built) == 1 and pool.started == 3


def test_the_installed_lean_interact_is_the_release_this_code_was_read_against() -> None:
    """repro passes lean-interact keywords and relies on its internals (``check_lake`` without ``cwd``,
    ``LeanServer.start``'s command line, ``DEFAULT_REPL_VERSION``) as read in 0.11.6; pyproject pins
    ``>=0.11.6,<0.12``. A release outside that range must be read again before it is allowed."""
    from importlib.metadata import version

    import lean_interact.utils
    from packaging.version import Version

    installed = Version(version("lean-interact"))
    assert Version("0.11.6") <= installed < Version("0.12"), installed
    assert get_toolchain("v4.15.0").interact_repl_rev == lean_interact.utils.DEFAULT_REPL_VERSION
