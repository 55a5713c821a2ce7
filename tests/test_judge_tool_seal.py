"""The judge's tools are checked against the seal recorded when they were set up, before every judgement, and no
real judgement runs prover code unconfined on tools this user can write (red team red1, R9).

``lean.sandbox: none``/``unshare`` is an opt-in that weakens *that run's* verdicts; it must not leave a
tampered tool (a rewritten ``safe_verify``, lakefile or imported ``.olean``) that later, confined, judges
trust.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest

from repro.config import JudgeSettings
from repro.judge import integrity
from repro.judge.integrity import check_seal, seal_path, seal_tools, writable_path
from repro.judge.kernel import SAFEVERIFY_BINARY, SafeVerifyJudge
from repro.judge.verdict import JudgeCause, JudgeRequest, JudgeStatus
from repro.lean.sandbox import SandboxStatus
from tests.doubles import judges

STATEMENT = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry"
HONEST = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num"
UNCONFINED = SandboxStatus(kind="none", network_blocked=False, writes_confined=False, detail="opted in")


def _request() -> JudgeRequest:
    return JudgeRequest(
        key="k",
        header="import Mathlib\nimport Aesop\n",
        statement=STATEMENT,
        theorem_name="robe_total",
        submission=HONEST + "\n",
        toolchain="v4.15.0",
    )


def _settings(tmp_path: Path) -> JudgeSettings:
    return JudgeSettings(tools_dir=str(tmp_path / "tools"), timeout_s=60)


def _new_process() -> None:
    integrity._CHECKED.clear()  # what a later process knows: nothing; it walks the whole tree


def test_a_tool_checkout_changed_by_a_judgement_is_not_taken_as_ready_by_later_judges(tmp_path: Path) -> None:
    """Found by red1: the stand-in's ``submission:tamper`` rewrites the checkout's lakefile during an unconfined
    compile (real prover code would rewrite ``safe_verify`` or an imported ``.olean``), and a later judge
    checked only that the files exist and ``.git/HEAD`` names the pin."""
    settings = _settings(tmp_path)
    loose = judges.safeverify(settings, "--fail", "submission:tamper", sandbox=UNCONFINED, named_sandbox="none")
    checkout = loose.checkout("v4.15.0")
    before = (checkout / "lakefile.toml").read_bytes()
    asyncio.run(loose.judge(_request()))
    assert (checkout / "lakefile.toml").read_bytes() != before, "precondition: the compile rewrote the checkout"
    later = SafeVerifyJudge(settings, lake=[sys.executable, str(judges.FAKE_SAFEVERIFY)], real=False)
    problem = later.problem("v4.15.0")
    assert problem is not None and problem[0] == JudgeCause.sandbox, problem
    assert "lakefile.toml" in problem[1] and "changed since they were set up" in problem[1]
    verdict = asyncio.run(later.judge(_request()))
    assert verdict.status == JudgeStatus.unavailable and verdict.cause == JudgeCause.sandbox
    _new_process()
    assert later.problem("v4.15.0") is not None  # a later process too


def test_an_untouched_checkout_passes_and_setting_it_up_again_seals_it_anew(tmp_path: Path) -> None:
    judge = judges.safeverify(_settings(tmp_path))
    assert asyncio.run(judge.judge(_request())).status == JudgeStatus.passed
    assert asyncio.run(judge.judge(_request())).status == JudgeStatus.passed
    checkout = judge.checkout("v4.15.0")
    (checkout / "lakefile.toml").write_text("# rewritten\n", encoding="utf-8")
    assert judge.problem("v4.15.0") is not None
    seal_tools(checkout)  # set up again: the setup's last step
    assert judge.problem("v4.15.0") is None


@pytest.mark.parametrize("where", ["binary", "deep olean", "added file", "removed file"])
def test_the_seal_sees_a_rewrite_that_keeps_size_and_modification_time(tmp_path: Path, where: str) -> None:
    """An unprivileged process can set a file's modification time back, never its change time: a rewrite of
    the same size with ``utime`` undoing its mtime still shows (in a new process, which walks everything)."""
    home = tmp_path / "v4.15.0"
    olean = home / ".lake" / "packages" / "mathlib" / ".lake" / "build" / "lib" / "Mathlib" / "Algebra.olean"
    olean.parent.mkdir(parents=True)
    olean.write_bytes(b"honest olean")
    binary = home / SAFEVERIFY_BINARY
    binary.parent.mkdir(parents=True)
    binary.write_bytes(b"honest binary")
    seal_tools(home)
    assert check_seal(home) is None
    if where in ("binary", "deep olean"):
        victim = binary if where == "binary" else olean
        before = victim.stat()
        victim.write_bytes(b"forged " + victim.read_bytes()[len(b"forged ") :])
        os.utime(victim, ns=(before.st_atime_ns, before.st_mtime_ns))
        assert victim.stat().st_size == before.st_size and victim.stat().st_mtime_ns == before.st_mtime_ns
    elif where == "added file":
        (olean.parent / "Shadow.olean").write_bytes(b"x")
    else:
        olean.unlink()
    if where == "binary":
        found = check_seal(home)  # the executables are re-checked in this process too
        assert found is not None and "safe_verify" in found
    _new_process()
    assert check_seal(home) is not None


def test_a_seal_that_does_not_hold_together_is_no_verdict(tmp_path: Path) -> None:
    home = tmp_path / "v4.15.0"
    home.mkdir()
    (home / "lakefile.toml").write_text("x", encoding="utf-8")
    assert check_seal(home) is None  # no seal: recorded on first use
    sealed = json.loads(seal_path(home).read_text(encoding="utf-8"))
    sealed["lines"] = sealed["lines"][:-1]  # its digest no longer matches
    seal_path(home).write_text(json.dumps(sealed), encoding="utf-8")
    _new_process()
    assert "cannot be read" in (check_seal(home) or "")


def test_a_real_judge_never_runs_prover_code_unconfined_on_tools_this_user_can_write(tmp_path: Path) -> None:
    """Unconfined, the submission's compile runs as this user: on tools this user can write it could leave them
    tampered for every later judge (with a seal of its own making). A real judge refuses; a stand-in (which runs
    no prover code) and a confined judge do not."""
    settings = _settings(tmp_path)
    judges.lay_out_safeverify(settings.resolved_tools_dir())
    real = SafeVerifyJudge(
        settings,
        lake=[sys.executable, str(judges.FAKE_SAFEVERIFY)],
        real=True,
        sandbox=UNCONFINED,
        named_sandbox="none",
    )
    problem = real.problem("v4.15.0")
    assert problem is not None and problem[0] == JudgeCause.unconfined, problem
    assert "can change the judge's tools" in problem[1]
    assert writable_path(real.checkout("v4.15.0")) is not None
    stand_in = judges.safeverify(settings, sandbox=UNCONFINED, named_sandbox="none")
    assert stand_in.problem("v4.15.0") is None


def test_tools_this_user_cannot_write_are_found_so(tmp_path: Path) -> None:
    """``writable_path`` reads ownership and mode bits: tools owned by another user and not group- or
    world-writable (a root-built image, run as a user) are read-only to this one; to root, nothing is."""
    home = tmp_path / "tools"
    (home / "bin").mkdir(parents=True)
    (home / "bin" / "safe_verify").write_bytes(b"x")
    assert writable_path(home) == home  # owned by this user, who may chmod it back
    system = Path("/usr/bin")
    if os.geteuid() == 0:
        assert writable_path(system) == system
    elif system.stat().st_uid != os.geteuid() and not system.stat().st_mode & 0o022:
        found = writable_path(system)
        assert found is None or found.stat().st_uid == os.geteuid() or found.stat().st_mode & 0o022


def test_the_toolchain_a_resolved_lake_lies_in_is_found_and_elan_s_shim_is_not(tmp_path: Path) -> None:
    from repro.judge.integrity import toolchain_root

    root = tmp_path / "toolchains" / "leanprover--lean4---v4.15.0"
    (root / "bin").mkdir(parents=True)
    (root / "lib").mkdir()
    for program in ("lake", "lean"):
        (root / "bin" / program).write_text("#!/bin/sh\n", encoding="utf-8")
    assert toolchain_root(str(root / "bin" / "lake")) == root.resolve()
    shim = tmp_path / "elan" / "bin" / "lake"
    shim.parent.mkdir(parents=True)
    shim.write_text("#!/bin/sh\n", encoding="utf-8")
    assert toolchain_root(str(shim)) is None
