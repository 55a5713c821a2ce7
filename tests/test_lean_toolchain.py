"""Which ``lake`` LeanInteract runs, and LeanInteract's REPL cache (lean audit B1, M9), against the elan stand-in.

LeanInteract 0.11.6 runs for real here; only elan, Lake and the REPL are stand-ins (tests/doubles/elan.py
imitates elan 4.2.3, failures included). The image of docker/Dockerfile installs elan with
``--default-toolchain none``, and an offline GPU node may have no usable default: there, elan's shim
answers "no default toolchain configured" to ``lake --version`` run from any directory without a
``lean-toolchain``, which is where LeanInteract runs it (``utils.check_lake``: no ``cwd``).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from repro.config import LeanBackendName, LeanSettings
from repro.lean import sandbox
from repro.lean.factory import build_verifier
from tests.doubles.elan import ELAN_RELEASE
from tests.doubles.lean_world import LeanWorld, make_lean_world

TRIVIAL = "theorem repro_probe : True := trivial"


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[LeanWorld]:
    built = make_lean_world(tmp_path)
    for key, value in built.elan.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("REPRO_CACHE_DIR", str(built.cache))
    elsewhere = tmp_path / "elsewhere"  # where the user started repro: no lean-toolchain here or above
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    sandbox.clear_caches()
    yield built
    sandbox.clear_caches()


def _settings(world: LeanWorld, **changes: object) -> LeanSettings:
    values: dict[str, object] = {
        "backend": LeanBackendName.repl,
        "project_path": str(world.project),
        "header": "",
        "workers": 1,
        "timeout_s": 30.0,
        "memory_limit_mb": None,
        "sandbox": "none",
        **changes,
    }
    return LeanSettings.model_validate(values)


async def _check(settings: LeanSettings, code: str = TRIVIAL) -> tuple[object, object]:
    verifier = build_verifier(settings)
    try:
        result = await verifier.check(code, settings.header)
        return result, verifier
    finally:
        await verifier.close()


def test_the_elan_stand_in_fails_as_elan_does_without_a_default_toolchain(world: LeanWorld) -> None:
    """The stand-in's own behaviour, as elan 4.2.3: the shim resolves from the current directory."""
    from lean_interact.utils import check_lake

    plain = subprocess.run(["lake", "--version"], capture_output=True, text=True)
    assert plain.returncode == 1 and "no default toolchain configured" in plain.stderr, ELAN_RELEASE
    inside = subprocess.run(["lake", "--version"], capture_output=True, text=True, cwd=world.project)
    assert inside.returncode == 0 and "Lean version 4.15.0" in inside.stdout
    with pytest.raises(RuntimeError, match="no default toolchain configured"):
        check_lake("lake")  # LeanInteract's own check, with elan's shim, from the user's directory
    which = subprocess.run(["elan", "which", "lake"], capture_output=True, text=True)
    assert which.returncode == 101 and "binary not found" in which.stderr


def test_a_repl_pool_starts_where_elan_has_no_default_toolchain(world: LeanWorld) -> None:
    """B1: LeanInteract gets the toolchain's own lake for the config, the project and every REPL start."""
    log = world.elan.toolchains[world.toolchain.elan_toolchain].parent / "calls.jsonl"
    world.elan.behave(world.toolchain.elan_toolchain, log=str(log))
    result, verifier = asyncio.run(_check(_settings(world)))
    assert result.ok, result.detail  # type: ignore[attr-defined]
    config = verifier.inner._repl_config  # type: ignore[attr-defined]
    real = world.elan.lake(world.toolchain.elan_toolchain)
    assert Path(config.lake_path) == real and Path(config.project.lake_path) == real
    assert Path(config.cache_dir) == world.cache / "lean-interact"  # repro's cache, not site-packages
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert ["--version"] in [call["argv"] for call in calls]  # check_lake ran the toolchain's lake
    started = [call for call in calls if call["argv"][0] == "env"]
    assert started and started[0]["cwd"] == str(world.project)


def test_doctor_and_the_pool_name_the_toolchain_lake_resolves_to(world: LeanWorld) -> None:
    found = sandbox.resolve_toolchain_binary("lake", str(world.project))
    assert found.path == str(world.elan.lake(world.toolchain.elan_toolchain))
    assert found.toolchain == "leanprover/lean4:v4.15.0" and "elan which lake" in found.source
    nowhere = sandbox.resolve_toolchain_binary("lake", str(Path.cwd()))
    assert nowhere.path is None and "binary not found" in str(nowhere.problem)


def test_doctor_names_the_projects_own_lean_and_lake_once_and_never_elans_shims(world: LeanWorld) -> None:
    """One line says what repro runs: the toolchain's own lean and lake for the project. elan's shims on PATH
    (``ELAN_HOME/bin``) resolve from the current directory, where they fail here: no line may offer them."""
    from repro.app import doctor

    (Path.cwd() / "lean_project").symlink_to(world.project)  # the default project, seen from where repro runs
    lines = doctor(None)
    shims = [str(world.elan.bin / name) for name in ("lean", "lake")]
    assert not [line for line in lines if any(shim in line.detail for shim in shims)]
    lake = str(world.elan.lake(world.toolchain.elan_toolchain))
    (toolchain,) = [line for line in lines if line.name.startswith("Lean toolchain")]
    assert toolchain.ok and toolchain.name == "Lean toolchain for lean_project"
    assert lake in toolchain.detail and "leanprover/lean4:v4.15.0" in toolchain.detail
    assert str(world.elan.toolchains[world.toolchain.elan_toolchain] / "lean") in toolchain.detail
    assert [line.name for line in lines if lake in line.detail] == ["Lean toolchain for lean_project"]
    (here,) = [line for line in lines if line.name == "lake from the current directory"]
    assert "binary not found" in here.detail and not here.required


def test_an_uninstalled_project_toolchain_is_unavailable_with_elans_reason(world: LeanWorld) -> None:
    (world.project / "lean-toolchain").write_text("leanprover/lean4:v4.9.0\n")
    settings = _settings(world, toolchain="v4.9.0")
    result, _ = asyncio.run(_check(settings))
    assert result.infra_status == "unavailable"  # type: ignore[attr-defined]
    assert "is not installed" in result.detail  # type: ignore[attr-defined]


def test_a_repl_clone_made_before_the_pinned_tag_existed_gets_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """M9: LeanInteract's own retry is a ``pull()`` in a detached HEAD, which fetches no new tags."""
    built = make_lean_world(tmp_path, tagged=False)
    for key, value in built.elan.env().items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("REPRO_CACHE_DIR", str(built.cache))
    monkeypatch.chdir(tmp_path)
    sandbox.clear_caches()
    built.tag_origin()  # the tag appears upstream after LeanInteract cloned the REPL
    result, _ = asyncio.run(_check(_settings(built)))
    assert result.ok, result.detail  # type: ignore[attr-defined]


def test_a_relative_default_project_is_found_from_another_directory(world: LeanWorld, tmp_path: Path) -> None:
    """M9: the project setup built is recorded with its absolute path; a run elsewhere checks in it."""
    from repro.lean.project import register_project

    register_project(world.toolchain, world.project)
    settings = LeanSettings(backend=LeanBackendName.repl, header="", sandbox="none")
    assert settings.project_dir() == str(world.project.resolve())
    assert Path(LeanSettings(project_path="rel/proj").project_dir()).is_absolute()


def test_the_sandboxed_pool_runs_each_worker_in_a_scratch_directory_of_its_own(world: LeanWorld) -> None:
    status = sandbox.probe_sandbox("bwrap")
    if not isinstance(status, sandbox.SandboxStatus):
        pytest.skip(f"bubblewrap does not work here: {status}")

    async def go() -> tuple[object, list[Path], list[Path], object]:
        verifier = build_verifier(_settings(world, sandbox="bwrap", workers=2))
        inner = verifier.inner  # type: ignore[attr-defined]
        try:
            result = await verifier.check(TRIVIAL, "")
            live = inner.sandbox.live_scratch()
            return result, live, [inner.sandbox.launcher], inner.sandbox
        finally:
            await verifier.close()

    result, live, launchers, used = asyncio.run(go())
    assert result.ok, result.detail  # type: ignore[attr-defined]
    assert len(live) == 2 and len({path.name for path in live}) == 2  # one per worker
    launcher = launchers[0]
    assert all(not launcher.is_relative_to(path) for path in live)
    assert not any(path.exists() for path in live), "scratch directories are removed with their workers"
    assert not launcher.exists() and used.scratch_root is not None and not used.scratch_root.exists()


def _setup(world: LeanWorld, **options: object) -> list[str]:
    from repro.lean.project import setup_lean_project

    steps: list[str] = []
    setup_lean_project(world.project, world.toolchain, on_step=steps.append, **options)  # type: ignore[arg-type]
    return steps


def test_setup_runs_every_step_with_the_projects_lake_and_records_the_project(world: LeanWorld) -> None:
    from repro.lean.project import registered_projects

    log = world.elan.toolchains[world.toolchain.elan_toolchain].parent / "calls.jsonl"
    world.elan.behave(world.toolchain.elan_toolchain, log=str(log))
    steps = _setup(world)
    assert steps[0].startswith("lake: ") and "leanprover/lean4:v4.15.0" in steps[0]
    assert "5 of 5 modules" in " ".join(steps) and "LeanInteract REPL built" in steps[-1]
    argvs = [json.loads(line)["argv"] for line in log.read_text().splitlines()]
    assert ["update"] in argvs and ["exe", "cache", "get"] in argvs and ["build"] in argvs
    assert registered_projects()[world.toolchain.name] == str(world.project.resolve())


@pytest.mark.parametrize("served", ["partial", "missing"])
def test_setup_stops_before_the_long_build_when_mathlibs_cache_is_not_served(world: LeanWorld, served: str) -> None:
    """M2: a partial cache would make `lake build` compile Mathlib from source for hours."""
    from repro.lean.project import SetupError

    log = world.elan.toolchains[world.toolchain.elan_toolchain].parent / "calls.jsonl"
    world.elan.behave(world.toolchain.elan_toolchain, cache=served, log=str(log))
    with pytest.raises(SetupError) as failed:
        _setup(world)
    text = str(failed.value)
    kept = {"partial": 2, "missing": 0}[served]
    assert f"{kept} of 5 modules have an .olean" in text and "download(s) failed" in text
    assert "--build-mathlib" in text and "Azure" in text
    argvs = [json.loads(line)["argv"] for line in log.read_text().splitlines()]
    assert ["build"] not in argvs, "the long build never started"
    steps = _setup(world, build_mathlib=True)  # the operator asks for the source build by name
    assert "the rest compiled from source" in " ".join(steps)


def test_a_setup_step_past_its_limit_is_a_setup_error_and_its_processes_are_killed(world: LeanWorld) -> None:
    from repro.lean.project import SetupError

    marker = world.project / "child.pid"
    world.elan.behave(world.toolchain.elan_toolchain, build_seconds=30, pid_file=str(marker))
    with pytest.raises(SetupError, match="did not finish within 2 s; its processes were killed"):
        _setup(world, step_timeout_s=2)
    child = int(marker.read_text())
    for _ in range(50):  # the orphaned `lean` stand-in is gone (killed with the group, then reaped)
        stat = Path(f"/proc/{child}/stat")
        if not stat.exists() or stat.read_text().split()[2] == "Z":
            break
        time.sleep(0.1)
    else:
        raise AssertionError(f"process {child} outlived the setup step")


def test_a_run_stopped_by_an_unreachable_backend_says_why(world: LeanWorld) -> None:
    """M4: the message was built from the failed cases only, which are none when nothing answered."""
    from repro.judge.selftest import SelfTestFailed, ensure_selftest

    (world.project / "lean-toolchain").write_text("leanprover/lean4:v4.9.0\n")
    with pytest.raises(SelfTestFailed) as stopped:
        asyncio.run(ensure_selftest(_settings(world, toolchain="v4.9.0"), cache=False))
    text = str(stopped.value)
    assert "the backend answered no check" in text and "is not installed" in text


def test_the_selftest_report_names_the_lake_and_the_confinement(world: LeanWorld) -> None:
    from repro.judge.selftest import render_report, run_selftest

    report = asyncio.run(run_selftest(_settings(world), only=["toolchain_reported"]))
    lines = "\n".join(render_report(report))
    assert "lake: " + str(world.elan.lake(world.toolchain.elan_toolchain)) in lines
    assert "(toolchain leanprover/lean4:v4.15.0)" in lines
    assert "confinement: lean.sandbox none: no sandbox" in lines


def test_the_cache_command_says_whether_mathlibs_cache_built_every_module(world: LeanWorld) -> None:
    """What the Dockerfile runs in each SafeVerify checkout between `lake exe cache get` and the long build."""
    from tests.repro_cli import repro

    lake = str(world.elan.lake(world.toolchain.elan_toolchain))
    subprocess.run([lake, "update"], cwd=world.project, check=True)
    world.elan.behave(world.toolchain.elan_toolchain, cache="partial")
    subprocess.run([lake, "exe", "cache", "get"], cwd=world.project, capture_output=True)
    partial = repro("lean", "cache", "--project", str(world.project))
    assert partial.returncode == 3 and "2 of 5 modules built" in partial.stdout
    assert "--build-mathlib" in partial.stderr
    world.elan.behave(world.toolchain.elan_toolchain, cache="complete")
    subprocess.run([lake, "exe", "cache", "get"], cwd=world.project, check=True, capture_output=True)
    complete = repro("lean", "cache", "--project", str(world.project))
    assert complete.returncode == 0 and "5 of 5 modules built" in complete.stdout


def test_under_bwrap_a_repl_needing_a_path_the_sandbox_does_not_show_fails_the_selftest_naming_the_fix(
    world: LeanWorld, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    """The sandbox shows only what repro knows Lean needs (issue 27 §3, red1 R8). A node whose REPL (or
    Mathlib, or toolchain) reads a directory repro does not know of fails `repro lean selftest`: Lean cannot
    start, the backend answers no check, and the report says which variable shows the directory. Named
    there, the same REPL starts and answers."""
    import shutil
    import sys
    import tempfile

    from repro.judge.selftest import render_report, run_selftest

    status = sandbox.probe_sandbox("bwrap")
    if not isinstance(status, sandbox.SandboxStatus):
        pytest.skip(f"bubblewrap does not work here: {status}")
    elsewhere = Path(tempfile.mkdtemp(prefix="repro-repl-elsewhere-", dir="/var/tmp"))
    request.addfinalizer(lambda: shutil.rmtree(elsewhere, ignore_errors=True))
    repl = elsewhere / "repl.py"
    repl.write_text("import runpy\nrunpy.run_module('tests.doubles.fake_repl', run_name='__main__')\n")
    world.elan.behave(world.toolchain.elan_toolchain, repl_command=[sys.executable, str(repl)])
    settings = _settings(world, sandbox="bwrap")

    hidden = asyncio.run(run_selftest(settings, only=["toolchain_reported"]))
    lines = "\n".join(render_report(hidden))
    assert not hidden.passed and hidden.unreachable is not None, lines
    assert str(repl) in hidden.unreachable and "REPRO_SANDBOX_READ_ONLY" in lines, lines

    shown_already = os.environ["REPRO_SANDBOX_READ_ONLY"]  # the suite's own tests/ (tests/conftest.py)
    monkeypatch.setenv("REPRO_SANDBOX_READ_ONLY", os.pathsep.join([str(elsewhere), shown_already]))
    shown = asyncio.run(run_selftest(settings, only=["toolchain_reported"]))
    # the REPL starts and answers (what it answers is the stand-in's: it runs no `#eval`)
    assert shown.unreachable is None and shown.outcomes, "\n".join(render_report(shown))
