"""The kernel judge (issue 27 §1-§3, audit B2/M1/M3/M9): SafeVerify per toolchain, through its command lines.

Without Lean, the judge's real orchestration (three fresh directories, each compile sandboxed apart, the
target hashed, ``lake -d … env lean -o``, ``lake -d … env safe_verify``, exit statuses, output, process
groups, the sandbox) runs against the stand-in ``lake`` of ``tests/doubles/fake_safe_verify.py``, whose
command lines are checked here against SafeVerify's ``verify.py`` and ``Main.lean``. The ``lean``-marked
test runs the real SafeVerify where it is built.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
from pathlib import Path

import pytest

from repro.config import JudgeSettings
from repro.judge.integrity import seal_tools
from repro.judge.kernel import (
    SAFEVERIFY_PINS,
    ByToolchainJudge,
    SafeVerifyJudge,
    build_judge,
    judge_all,
    submission_source,
    tool_for,
)
from repro.judge.verdict import JudgeCause, JudgeRefusal, JudgeRequest, JudgeStatus
from repro.lean.sandbox import SandboxStatus, detect_sandbox
from tests.doubles import judges
from tests.doubles.fake_lean import fake_lean_section
from tests.doubles.fake_safe_verify import compile_errors

HEADER = "import Mathlib\nimport Aesop\nset_option maxHeartbeats 400000\nopen BigOperators Real Nat Topology Rat"
STATEMENT = "theorem t (x : ℕ) (h₀ : x = 3) : x + 1 = 4 := by sorry"
HONEST = "theorem t (x : ℕ) (h₀ : x = 3) : x + 1 = 4 := by\n  subst h₀\n  norm_num"
UNCONFINED = SandboxStatus(kind="none", network_blocked=False, writes_confined=False, detail="test: no launcher")


def _request(proof: str, toolchain: str | None = "leanprover/lean4:v4.15.0", key: str = "row-1") -> JudgeRequest:
    return JudgeRequest(
        key=key, header=HEADER, statement=STATEMENT, theorem_name="t", submission=proof, toolchain=toolchain
    )


def _settings(tmp_path: Path, **update: object) -> JudgeSettings:
    return JudgeSettings(tools_dir=str(tmp_path / "tools"), timeout_s=60).model_copy(update=update)


@pytest.fixture
def fake(tmp_path: Path) -> SafeVerifyJudge:
    return judges.safeverify(_settings(tmp_path))


def _judge(judge: SafeVerifyJudge, proof: str, **request: object) -> object:
    return asyncio.run(judge.judge(_request(proof, **request)))  # type: ignore[arg-type]


def test_an_honest_proof_passes_and_the_verdict_says_how_it_was_judged(fake: SafeVerifyJudge) -> None:
    verdict = asyncio.run(fake.judge(_request(HONEST)))
    assert verdict.status == JudgeStatus.passed, verdict.detail
    assert verdict.passed and not verdict.real  # a stand-in's pass never counts
    assert verdict.toolchain == "v4.15.0" and verdict.tool_revision == SAFEVERIFY_PINS["v4.15.0"].commit
    assert verdict.tool == "SafeVerify" and verdict.confinement == detect_sandbox().describe()


@pytest.mark.parametrize(
    ("proof", "said", "refusal"),
    [
        (
            HONEST.replace("= 4 :=", "= 5 :=").replace("norm_num", "omega"),
            "does not have the same type",
            "type_mismatch",
        ),
        (HONEST.replace("subst h₀\n  norm_num", "sorry"), "sorryAx is not in the allowed set", "axiom"),
        ("axiom cheat : False\n" + HONEST.replace("subst h₀\n  norm_num", "exact cheat.elim"), "cheat is not", "axiom"),
        (HONEST.replace("theorem t", "theorem u"), "t not found in submission", "not_found"),
        (HONEST.replace("theorem t", "def t"), "def t is not the same kind", "kind_mismatch"),
        (HONEST.replace("subst h₀\n  norm_num", "native_decide"), "Lean.ofReduceBool is not", "axiom"),
    ],
)
def test_what_safeverify_refuses_is_rejected_in_its_words(
    fake: SafeVerifyJudge, proof: str, said: str, refusal: str
) -> None:
    verdict = asyncio.run(fake.judge(_request(proof)))
    assert verdict.status == JudgeStatus.rejected and said in verdict.detail, verdict.detail
    assert verdict.refusal == refusal and verdict.cause is None


def test_the_safeverify_stand_in_passes_an_unused_partial_definition_as_the_pinned_tool_does(tmp_path: Path) -> None:
    """Pinned SafeVerify (577e953 / 0c0f7dc, Main.lean ``replayFile``) checks ``dv.safety != .safe`` only on the
    constants of ``env'`` *after* ``env.replay newConstants``; Lean's ``Environment.replay``
    (src/Lean/Replay.lean: "We skip unsafe constants, and also partial constants") never adds them, so the
    refusal "unsafe/partial function ... detected" is unreachable at the pins (upstream moved the check before
    the replay in d2df831, after both pins). The stand-in imitates the release it names: run as verify.py
    runs it, an unused ``partial def`` passes. (Found by the red team, red1 R5.)"""
    import subprocess
    import sys

    work = tmp_path / "w"
    work.mkdir()
    (work / "Target.lean").write_text(HEADER + "\n\n" + STATEMENT + "\n", encoding="utf-8")
    (work / "Submission.lean").write_text(
        HEADER + "\n\npartial def spin (n : ℕ) : ℕ := spin n\n\n" + HONEST + "\n", encoding="utf-8"
    )
    fake = [sys.executable, str(judges.FAKE_SAFEVERIFY), "-d", str(work), "env"]
    for name in ("Target", "Submission"):
        done = subprocess.run(
            [*fake, "lean", "-o", f"{name}.olean", f"{name}.lean"], cwd=work, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stdout + done.stderr
    done = subprocess.run(
        [*fake, "safe_verify", "Target.olean", "Submission.olean"], cwd=work, capture_output=True, text=True
    )
    assert done.returncode == 0 and done.stdout.strip().splitlines()[-1] == "Finished with no errors."
    assert "unsafe/partial function" not in done.stdout + done.stderr


@pytest.mark.parametrize(
    ("definition", "said"),
    [
        ("partial def spin (n : ℕ) : ℕ := spin n", "partial definition spin"),
        ("unsafe def spin (n : ℕ) : ℕ := spin n", "unsafe constant spin"),
    ],
)
def test_our_rebuild_check_refuses_the_unsafe_and_partial_definitions_the_pinned_tool_passes(
    tmp_path: Path, definition: str, said: str
) -> None:
    """Where the pinned tool has no working check, ours (Rebuild.lean, after safe_verify) refuses them; the
    verdict names our check, not SafeVerify, as the one that refused."""
    log = tmp_path / "calls.jsonl"
    judge = judges.safeverify(_settings(tmp_path), "--log", str(log), sandbox=UNCONFINED, named_sandbox="none")
    verdict = asyncio.run(judge.judge(_request(definition + "\n\n" + HONEST)))
    assert verdict.status == JudgeStatus.rejected and verdict.refusal == JudgeRefusal.unsafe, verdict.detail
    assert said in verdict.detail and "repro's rebuild check (not SafeVerify's)" in verdict.detail
    programs = [json.loads(line)["argv"][3] for line in log.read_text().splitlines()]
    assert programs.count("safe_verify") == 1  # the tool ran, and passed it: ours refused after it


def test_a_module_whose_objects_prover_code_forged_passes_the_pinned_tool_but_not_the_judge(tmp_path: Path) -> None:
    """SafeVerify's March 2026 fixes (73196d3, f06ecb5, 29ef514, 5cafc55) answer prover code that builds objects
    with ``unsafeCast`` while the submission is elaborated (a ``Nat`` literal that is a negative big number): the
    kernel accepts them as read from the ``.olean``, so the pinned tool passes the file. Our Rebuild.lean rebuilds
    every object before the kernel replays it, and refuses the forged number."""
    log = tmp_path / "calls.jsonl"
    judge = judges.safeverify(
        _settings(tmp_path), "--fail", "submission:corrupt", "--log", str(log), sandbox=UNCONFINED, named_sandbox="none"
    )
    verdict = asyncio.run(judge.judge(_request(HONEST)))
    assert verdict.status == JudgeStatus.rejected and verdict.refusal == JudgeRefusal.corrupted, verdict.detail
    assert "prints as -1267650600228229401496703205376" in verdict.detail
    assert [json.loads(line)["argv"][3] for line in log.read_text().splitlines()][-2:] == ["safe_verify", "lean"]


@pytest.mark.parametrize(
    ("how", "cause"),
    [
        ("killed", JudgeCause.killed),
        ("unreadable", JudgeCause.unreadable),
        ("silent", JudgeCause.no_output),
        ("crash", JudgeCause.unreadable),
    ],
)
def test_our_rebuild_check_failing_is_no_verdict(tmp_path: Path, how: str, cause: JudgeCause) -> None:
    """Our step is held to the tool's rules: only its own two answers count; a signal, noise, silence or a Lake
    error is ``unavailable`` (an ``uncaught exception`` of Lean is noise too, never a pass)."""
    judge = judges.safeverify(_settings(tmp_path), "--fail", f"rebuild:{how}")
    verdict = asyncio.run(judge.judge(_request(HONEST)))
    assert verdict.status == JudgeStatus.unavailable and verdict.cause == cause, verdict.detail
    assert "rebuild check" in verdict.detail


def test_the_rebuild_answer_is_read_only_from_its_last_line_and_exit_status() -> None:
    from repro.judge.kernel import read_rebuild

    assert read_rebuild("repro-rebuild-passed\n", 0) is True
    assert read_rebuild("noise\nrepro-rebuild-refused\tkernel\t(kernel) bad\n", 2) == (
        JudgeRefusal.kernel,
        "(kernel) bad",
    )
    assert read_rebuild("repro-rebuild-passed\n", 2) is None  # a pass with the refusal's exit status
    assert read_rebuild("repro-rebuild-refused\tkernel\tx\n", 0) is None
    assert read_rebuild("repro-rebuild-refused\tsomething\tx\n", 2) is None  # a kind we do not know
    assert read_rebuild("repro-rebuild-passed\nuncaught exception: boom\n", 0) is None
    assert read_rebuild("", 0) is None


def test_no_reading_step_can_change_what_the_next_one_reads(tmp_path: Path) -> None:
    """Each step after the compiles runs in an empty directory of its own and sees both compiled outputs
    read-only; before each step they must hash as copied. An exploit of SafeVerify's loader that rewrites its
    inputs (then passes) cannot hand our rebuild check other files: confined, it cannot write them; unconfined
    (opted in), the change is caught before our check runs."""
    if detect_sandbox().writes_confined:
        confined = judges.safeverify(_settings(tmp_path), "--fail", "safe_verify:rewrite")
        verdict = asyncio.run(confined.judge(_request(HONEST)))
        assert verdict.status == JudgeStatus.passed, verdict.detail
        unsafe_after = asyncio.run(confined.judge(_request("partial def f : ℕ → ℕ := f\n\n" + HONEST)))
        assert unsafe_after.refusal == JudgeRefusal.unsafe  # our check read the real files
    loose = judges.safeverify(
        _settings(tmp_path), "--fail", "safe_verify:rewrite", sandbox=UNCONFINED, named_sandbox="none"
    )
    verdict = asyncio.run(loose.judge(_request("partial def f : ℕ → ℕ := f\n\n" + HONEST)))
    assert verdict.status == JudgeStatus.unavailable and verdict.cause == JudgeCause.sandbox, verdict.detail
    assert "changed between its compile and the replay" in verdict.detail


def test_a_structural_type_mismatch_is_named_so_the_screen_and_judge_disagreement_can_be_counted(
    fake: SafeVerifyJudge,
) -> None:
    """M3: the screen's bridge accepts ``3 ≤ x`` for ``x ≥ 3`` (definitional); the judge does not."""
    statement = "theorem g (x : ℕ) (h : x = 5) : x ≥ 3 := by sorry"
    restated = "theorem g (x : ℕ) (h : x = 5) : 3 ≤ x := by\n  omega"
    request = JudgeRequest(
        key="k", header=HEADER, statement=statement, theorem_name="g", submission=restated, toolchain="v4.9.0"
    )
    verdict = asyncio.run(fake.judge(request))
    assert verdict.status == JudgeStatus.rejected and verdict.refusal == JudgeRefusal.type_mismatch
    assert "structurally" in verdict.detail and "definitionally equal" in verdict.detail


def test_prover_imports_after_the_header_are_a_compile_error_so_the_judge_must_get_the_checked_text(
    fake: SafeVerifyJudge,
) -> None:
    """B2: the raw block (``import Mathlib`` first) fails after our header; the checked text passes."""
    raw = "import Mathlib\nimport Aesop\n\n" + HONEST
    verdict = asyncio.run(fake.judge(_request(raw)))
    assert verdict.status == JudgeStatus.rejected and verdict.refusal == JudgeRefusal.compile_error
    assert "line 1:0: invalid 'import' command" in verdict.detail  # renumbered to the submission's own lines
    blanked = " " * len("import Mathlib") + "\n" + " " * len("import Aesop") + "\n\n" + HONEST
    assert asyncio.run(fake.judge(_request(blanked))).status == JudgeStatus.passed


def test_a_second_declaration_of_our_theorem_is_lean_s_error_not_a_pass(fake: SafeVerifyJudge) -> None:
    twice = HONEST + "\ntheorem t (x : ℕ) (h₀ : x = 3) : x + 1 = 4 := by\n  sorry"
    verdict = asyncio.run(fake.judge(_request(twice)))
    assert verdict.status == JudgeStatus.rejected and "'t' has already been declared" in verdict.detail


def test_a_toolchain_without_a_pinned_tool_is_unavailable_not_passed(fake: SafeVerifyJudge) -> None:
    verdict = asyncio.run(fake.judge(_request(HONEST, toolchain="leanprover/lean4:v4.12.0")))
    assert verdict.status == JudgeStatus.unavailable and verdict.cause == JudgeCause.missing
    assert "no pinned SafeVerify for toolchain v4.12.0" in verdict.detail
    assert asyncio.run(fake.judge(_request(HONEST, toolchain=None))).toolchain == "v4.15.0"  # the default


def test_a_tool_not_set_up_or_never_built_is_unavailable(tmp_path: Path) -> None:
    """M1: a clone that was never built used to read as a rejection of every row."""
    bare = SafeVerifyJudge(_settings(tmp_path, tools_dir=str(tmp_path / "none")))
    verdict = asyncio.run(bare.judge(_request(HONEST)))
    assert verdict.status == JudgeStatus.unavailable and verdict.cause == JudgeCause.missing and verdict.real
    assert "not set up" in verdict.detail
    unbuilt = judges.safeverify_unbuilt(_settings(tmp_path))
    verdict = asyncio.run(unbuilt.judge(_request(HONEST)))
    assert verdict.status == JudgeStatus.unavailable and verdict.cause == JudgeCause.missing
    assert "never built" in verdict.detail and ".lake/build/bin/safe_verify" in verdict.detail


def test_a_checkout_at_another_commit_is_not_the_pinned_tool(tmp_path: Path) -> None:
    judge = judges.safeverify(_settings(tmp_path))
    git = tmp_path / "tools" / "v4.15.0" / ".git"
    git.mkdir()
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "refs" / "heads" / "main").write_text("1" * 40 + "\n")
    seal_tools(git.parent)  # the clone is part of the setup, whose last step seals the tools
    verdict = asyncio.run(judge.judge(_request(HONEST)))
    assert verdict.cause == JudgeCause.missing and "not the pinned 577e95319a2b" in verdict.detail
    (git / "refs" / "heads" / "main").write_text(SAFEVERIFY_PINS["v4.15.0"].commit + "\n")
    assert asyncio.run(judge.judge(_request(HONEST))).status == JudgeStatus.passed


@pytest.mark.parametrize(
    ("factory", "cause"),
    [
        (judges.safeverify_killed, JudgeCause.killed),
        (judges.safeverify_unreadable, JudgeCause.unreadable),
        (judges.safeverify_silent, JudgeCause.no_output),
    ],
)
def test_a_broken_tool_gives_no_verdict_with_its_cause(tmp_path: Path, factory: object, cause: JudgeCause) -> None:
    """M1: a signal, an OOM kill (SIGKILL), noise or silence is ``unavailable``, never ``rejected``."""
    judge = factory(_settings(tmp_path))  # type: ignore[operator]
    verdict = asyncio.run(judge.judge(_request(HONEST)))
    assert verdict.status == JudgeStatus.unavailable and verdict.cause == cause, verdict.detail
    if cause == JudgeCause.killed:
        assert "SIGKILL" in verdict.detail and "out-of-memory" in verdict.detail


@pytest.mark.parametrize("step", ["target", "submission"])
def test_a_compile_that_dies_without_a_lean_error_is_no_rejection(tmp_path: Path, step: str) -> None:
    for how, cause in (("killed", JudgeCause.killed), ("crash", JudgeCause.target if step == "target" else "crashed")):
        judge = judges.safeverify(_settings(tmp_path), "--fail", f"{step}:{how}")
        verdict = asyncio.run(judge.judge(_request(HONEST)))
        assert verdict.status == JudgeStatus.unavailable and verdict.cause == cause, (how, verdict.detail)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
        return handle.read().split(") ", 1)[1][0] != "Z"


def test_a_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    """M9: without a sandbox to reap them, killing only ``lake`` left ``lean`` running; the group goes."""
    pids = tmp_path / "pids.json"
    judge = judges.safeverify(
        _settings(tmp_path, timeout_s=2),
        "--fail",
        "safe_verify:hang",
        "--pids",
        str(pids),
        sandbox=UNCONFINED,
        named_sandbox="none",
    )
    started = time.monotonic()
    verdict = asyncio.run(judge.judge(_request(HONEST)))
    assert verdict.status == JudgeStatus.unavailable and verdict.cause == JudgeCause.timeout
    assert time.monotonic() - started < 30
    leader, child = json.loads(pids.read_text())
    deadline = time.monotonic() + 5
    while (_alive(leader) or _alive(child)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(leader) and not _alive(child)


def test_the_judge_refuses_to_run_unconfined_unless_the_operator_opted_in(tmp_path: Path) -> None:
    """§3: lean.sandbox is bwrap by default; unshare or none, named by the operator, is the opt-in."""
    refusing = judges.safeverify(_settings(tmp_path), sandbox=UNCONFINED)
    verdict = asyncio.run(refusing.judge(_request(HONEST)))
    assert verdict.status == JudgeStatus.unavailable and verdict.cause == JudgeCause.unconfined
    assert "unless the operator names a weaker confinement" in verdict.detail and "no sandbox" in verdict.confinement
    opted = judges.safeverify(_settings(tmp_path), sandbox=UNCONFINED, named_sandbox="none")
    verdict = asyncio.run(opted.judge(_request(HONEST)))
    assert verdict.status == JudgeStatus.passed and verdict.confinement.startswith("no sandbox")
    # a named confinement that does not work here is no verdict, with the sandbox module's fix
    from repro.lean.sandbox import probe_sandbox

    if not isinstance(probe_sandbox("bwrap"), SandboxStatus):
        verdict = asyncio.run(judges.safeverify(_settings(tmp_path)).judge(_request(HONEST)))
        assert verdict.cause == JudgeCause.unconfined and "install bubblewrap" in verdict.detail


def test_what_the_submission_compile_writes_never_reaches_our_target(tmp_path: Path) -> None:
    """§3: confined, the submission's compile cannot touch ``target/``; unconfined (opted in), the change is
    caught by the target's hash before the tool reads it: no verdict, cause ``sandbox``."""
    judges.lay_out_safeverify(tmp_path / "tools")
    lakefile = tmp_path / "tools" / "v4.15.0" / "lakefile.toml"
    before = lakefile.read_text()
    if detect_sandbox().writes_confined:
        confined = judges.safeverify(_settings(tmp_path), "--fail", "submission:tamper")
        verdict = asyncio.run(confined.judge(_request(HONEST)))
        assert verdict.status == JudgeStatus.passed, verdict.detail
        assert lakefile.read_text() == before  # the checkout is read-only inside the sandbox
    loose = judges.safeverify(
        _settings(tmp_path), "--fail", "submission:tamper", sandbox=UNCONFINED, named_sandbox="none"
    )
    verdict = asyncio.run(loose.judge(_request(HONEST)))
    assert verdict.status == JudgeStatus.unavailable and verdict.cause == JudgeCause.sandbox
    # the tampered target is not used again: the next judgement compiles it afresh (and is tampered again)
    honest_after = judges.safeverify(_settings(tmp_path), sandbox=UNCONFINED, named_sandbox="none")
    honest_after._targets = loose._targets
    assert asyncio.run(honest_after.judge(_request(HONEST))).status == JudgeStatus.passed
    assert "changed between its compile and the replay" in verdict.detail


def test_a_compiled_output_lean_did_not_write_from_the_text_gives_no_verdict(tmp_path: Path) -> None:
    """Prover code running in the submission's compile can rewrite its output. A module importing nothing
    could define its own ``Nat`` and still match our theorem by name (SafeVerify at the pins compares names,
    its import check came later): our ImportsOf.lean step refuses it where the tool alone would pass it. A
    link to ``/dev/zero`` where Lean writes a file is never read (a plain copy would read forever)."""
    forged = judges.safeverify(_settings(tmp_path), "--fail", "submission:forge")
    verdict = asyncio.run(forged.judge(_request(HONEST)))
    assert verdict.status == JudgeStatus.unavailable and verdict.cause == JudgeCause.sandbox, verdict.detail
    assert "imports [], not our header's ['Mathlib', 'Aesop']" in verdict.detail
    linked = judges.safeverify(_settings(tmp_path, timeout_s=20), "--fail", "submission:symlink")
    started = time.monotonic()
    verdict = asyncio.run(linked.judge(_request(HONEST)))
    assert verdict.status == JudgeStatus.unavailable and verdict.cause == JudgeCause.sandbox, verdict.detail
    assert "cannot be opened as a file" in verdict.detail and time.monotonic() - started < 15
    unreadable = judges.safeverify(_settings(tmp_path), "--fail", "imports:silent")
    assert asyncio.run(unreadable.judge(_request(HONEST))).cause == JudgeCause.unreadable


def test_a_module_whose_imports_prover_code_marked_runtime_only_gives_no_verdict(tmp_path: Path) -> None:
    """Red team round 3: importModules skips every import marked ``runtimeOnly`` (Lean's
    src/Lean/Environment.lean, importModulesCore), so a compiled module that lists our header's modules with
    that flag imports nothing and may define its own ``Nat``, ``Eq``, ``Real``; its module names match ours.
    The whole import record is compared, flag included."""
    forged = judges.safeverify(_settings(tmp_path), "--fail", "submission:runtime-only")
    verdict = asyncio.run(forged.judge(_request(HONEST)))
    assert verdict.status == JudgeStatus.unavailable and verdict.cause == JudgeCause.sandbox, verdict.detail
    assert "Mathlib (runtimeOnly)" in verdict.detail


def test_an_import_line_without_its_runtime_only_flag_is_no_answer_of_ours() -> None:
    from repro.judge.kernel import read_imports

    files = [Path("T.olean"), Path("S.olean")]
    good = "T.olean\tMathlib\tfalse\nS.olean\tMathlib\ttrue\nrepro-imports-done\n"
    assert read_imports(good, files) == {"T.olean": ["Mathlib"], "S.olean": ["Mathlib (runtimeOnly)"]}
    assert read_imports("T.olean\tMathlib\nrepro-imports-done\n", files) is None  # the old, name-only form
    assert read_imports("T.olean\tMathlib\tmaybe\nrepro-imports-done\n", files) is None


def test_command_lines_are_safeverify_s_own(tmp_path: Path) -> None:
    """verify.py:11 ``["lake", "env", "lean", "-o", fname[:-5] + ".olean", fname]`` for each file,
    verify.py:33 ``["lake", "env", "safe_verify", otarg, osub]`` (Main.lean: args[0] target, args[1]
    submission); ``-d CHECKOUT`` stands for running from the checkout, as verify.py does. The target and
    the submission are compiled in different fresh directories; our imports check reads the same copies."""
    log = tmp_path / "calls.jsonl"
    judge = judges.safeverify(_settings(tmp_path), "--log", str(log), sandbox=UNCONFINED, named_sandbox="none")
    assert asyncio.run(judge.judge(_request(HONEST))).status == JudgeStatus.passed
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    checkout = str((tmp_path / "tools" / "v4.15.0").resolve())
    assert [call["argv"][:3] for call in calls] == [["-d", checkout, "env"]] * 5
    steps = [(call["argv"][3:], Path(call["cwd"])) for call in calls]
    (target, target_cwd), (submission, submission_cwd), (imports, imports_cwd), (replay, replay_cwd) = steps[:4]
    rebuild, rebuild_cwd = steps[4]
    # our own ImportsOf.lean before the tool and Rebuild.lean after it, on the very copies the tool reads,
    # each step in an empty directory of its own
    from repro.judge.kernel import IMPORTS_SCRIPT, REBUILD_SCRIPT

    assert imports[:3] == ["lean", "--run", str(IMPORTS_SCRIPT)] and imports[3:] == replay[1:]
    assert rebuild[:3] == ["lean", "--run", str(REBUILD_SCRIPT)] and rebuild[3:] == replay[1:]
    assert len({imports_cwd, replay_cwd, rebuild_cwd}) == 3
    assert all(Path(p).parent.name == "inputs" and Path(p).parent.parent == replay_cwd.parent for p in replay[1:])
    for compiled, cwd, stem in ((target, target_cwd, "Target"), (submission, submission_cwd, "Submission")):
        assert compiled[:2] == ["lean", "-o"] and compiled[2] == compiled[3][: -len(".lean")] + ".olean"
        assert Path(compiled[3]) == cwd / f"{stem}.lean"
    # the target in a directory of the judge's own, never inside the judgement's (which the submission writes)
    assert target_cwd.parent.name.startswith("repro-judge-targets-") and not submission_cwd.is_relative_to(
        target_cwd.parent
    )
    assert replay[0] == "safe_verify" and [Path(p).name for p in replay[1:]] == ["Target.olean", "Submission.olean"]
    assert replay_cwd not in (target_cwd, submission_cwd)
    assert not submission_cwd.parent.exists()  # every judgement's directories are removed after it

    # the same target again: compiled once; a second statement: compiled for itself
    assert asyncio.run(judge.judge(_request(HONEST, key="again"))).status == JudgeStatus.passed
    other = _request(HONEST.replace("= 4 :=", "= 5 :=").replace("norm_num", "omega"), key="other")
    other = other.model_copy(update={"statement": STATEMENT.replace("= 4 :=", "= 5 :=")})
    assert asyncio.run(judge.judge(other)).status == JudgeStatus.passed
    compiled = [json.loads(line)["argv"][-1] for line in log.read_text().splitlines()]
    assert sum(path.endswith("Target.lean") for path in compiled) == 2
    assert sum(path.endswith("Submission.lean") for path in compiled) == 3


def test_identical_requests_are_judged_concurrently_and_in_order(fake: SafeVerifyJudge) -> None:
    requests = [_request(HONEST, key="a"), _request(HONEST.replace("= 4 :=", "= 5 :="), key="b")]
    verdicts = asyncio.run(judge_all(fake, requests))
    assert [(v.key, v.status) for v in verdicts] == [("a", JudgeStatus.passed), ("b", JudgeStatus.rejected)]


def test_selection_by_toolchain_and_by_name(tmp_path: Path) -> None:
    assert tool_for("v4.9.0") == tool_for("leanprover/lean4:v4.15.0") == "safeverify"
    assert tool_for("v4.21.0-rc2") is None and tool_for("v4.21.0-rc3") == tool_for("v4.34.0-rc2") == "comparator"
    assert tool_for("v4.12.0") is None and tool_for("nightly") is None
    auto = build_judge(_settings(tmp_path))
    assert isinstance(auto, ByToolchainJudge)
    assert auto.judge_for("v4.9.0").name == "SafeVerify" and auto.judge_for("v4.34.0-rc2").name == "comparator"
    assert auto.revision("v4.9.0") == SAFEVERIFY_PINS["v4.9.0"].commit
    named = build_judge(_settings(tmp_path, backend="safeverify"))
    assert isinstance(named, SafeVerifyJudge) and named.real
    made = build_judge(
        JudgeSettings(backend="factory", factory="tests.doubles.judges:safeverify", tools_dir=str(tmp_path))
    )
    assert isinstance(made, SafeVerifyJudge) and not made.real


def test_judge_settings_name_their_problems() -> None:
    with pytest.raises(ValueError, match="judge.factory: required"):
        JudgeSettings(backend="factory")
    with pytest.raises(ValueError, match="only read when judge.backend is factory"):
        JudgeSettings(factory="tests.doubles.judges:safeverify")
    with pytest.raises(ValueError, match="cannot load"):
        build_judge(JudgeSettings(backend="factory", factory="tests.doubles.judges:nothing_here"))


def test_a_resume_may_change_where_the_judge_is_but_not_which_judge_it_is() -> None:
    from repro.config import ConfigError, RunConfig, resume_changes

    stored = RunConfig()
    moved = stored.model_copy(
        update={"judge": JudgeSettings(tools_dir="/opt/safeverify", timeout_s=30, workers=8)}, deep=True
    )
    assert set(resume_changes(stored, moved)) == {"judge.tools_dir", "judge.timeout_s", "judge.workers"}
    other = stored.model_copy(update={"judge": JudgeSettings(backend="safeverify")}, deep=True)
    with pytest.raises(ConfigError, match="judge.backend"):
        resume_changes(stored, other)


# -- B2 must-show: every real accepted proof reaches the judge as the text Lean checked ------------------
_KEEPING_LAKE = """#!/bin/sh
keep="$1"; shift
case "$4" in
  lean) case "$5" in
          --run) case "$6" in */Rebuild.lean) echo "repro-rebuild-passed";; *) echo "repro-imports-done";; esac;;
          *) case "$7" in */Submission.lean) cp "$7" "$(mktemp -p "$keep" submission.XXXXXX)";; esac
             echo '{"fake_olean": true, "source": ""}' > "$6";;
        esac;;
  safe_verify) echo "Finished with no errors.";;
esac
"""


def test_every_real_accepted_proof_is_submitted_as_the_text_lean_checked(tmp_path: Path) -> None:
    """Every row of ../shared/data/realproofs that real Lean accepted, its imports as the prover wrote them,
    goes through the screen's static layer; what the judge writes as ``Submission.lean`` is the trusted
    header, then exactly the checked text, with no ``import`` after the header."""
    from repro.judge.screen import verify_proof
    from tests.conftest import shared_file

    rows = []
    for name in (
        "realproofs/MoonshotAI_Kimina-Prover-Preview_minif2f-test-solved.jsonl",
        "realproofs/project-numina_kimina-lean-server_test-fixtures.jsonl",
    ):
        rows += [
            row for row in map(json.loads, shared_file(name).read_text().splitlines()) if row["lean_verdict"] == "pass"
        ]
    assert len(rows) >= 300

    async def checked() -> list[tuple[dict[str, str], str, str]]:
        found = []
        for row in rows:
            verdict = await verify_proof(row["statement"], row["output"], None, header=row["header"])
            assert verdict.checked_code is not None, row["source"]
            found.append((row, verdict.checked_code, verdict.prover_code or ""))
        return found

    texts = asyncio.run(checked())
    with_imports = [prover for _, _, prover in texts if compile_errors(submission_source(HEADER, prover))]
    assert len(with_imports) == len(rows)  # every raw block would have failed after the header (B2)

    keep = tmp_path / "kept"
    keep.mkdir()
    lake = tmp_path / "lake.sh"
    lake.write_text(_KEEPING_LAKE)
    judges.lay_out_safeverify(tmp_path / "tools")
    judge = SafeVerifyJudge(
        _settings(tmp_path, workers=4, timeout_s=600),  # 321 judgements on a loaded 2-core machine: no timeouts
        lake=["/bin/sh", str(lake), str(keep)],
        real=False,
        sandbox=UNCONFINED,
        named_sandbox="none",
    )
    requests = [
        JudgeRequest(
            key=str(index),
            header=row["header"],
            statement=row["statement"],
            theorem_name=row["statement"].split()[1],
            submission=code,
        )
        for index, (row, code, _) in enumerate(texts)
    ]
    verdicts = asyncio.run(judge_all(judge, requests))
    assert all(v.status == JudgeStatus.passed for v in verdicts), [v.detail for v in verdicts if not v.passed][:3]
    written = sorted(path.read_text(encoding="utf-8") for path in keep.iterdir())
    assert written == sorted(submission_source(r.header, r.submission) for r in requests)
    in_order = sorted(requests, key=lambda r: submission_source(r.header, r.submission))
    for text, request in zip(written, in_order, strict=True):
        body = text[len(request.header.rstrip()) :]
        assert not [line for line in body.splitlines() if line.lstrip().startswith("import ")], request.key
        assert not compile_errors(text), request.key


@pytest.mark.lean
def test_real_safeverify_passes_honest_and_refuses_changed_and_sorry() -> None:
    settings = JudgeSettings(backend="safeverify")
    judge = build_judge(settings)
    tools = settings.resolved_tools_dir()
    if shutil.which("lake") is None or not (tools / "v4.15.0" / "lakefile.toml").is_file():
        pytest.skip(f"no lake or no SafeVerify at {tools}/v4.15.0 (docker/Dockerfile builds both)")
    honest = asyncio.run(judge.judge(_request(HONEST)))
    assert honest.status == JudgeStatus.passed and honest.real, honest.detail
    changed = asyncio.run(
        judge.judge(_request(HONEST.replace("= 4 :=", "= 4 ∨ False :=").replace("norm_num", "omega")))
    )
    assert changed.status == JudgeStatus.rejected, changed.detail
    cheat = asyncio.run(judge.judge(_request(HONEST.replace("subst h₀\n  norm_num", "sorry"))))
    assert cheat.status == JudgeStatus.rejected and "sorryAx" in cheat.detail


# -- reverify: the judge run again from a release's own files ----------------------------------------------
def test_reverify_judges_every_released_row_again_and_catches_a_pass_the_store_only_claimed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``release`` writes only rows the run's judge passed (as the store records it); ``reverify`` does not take
    the record's word: the judge runs again on each row's verified_code, afresh."""
    import yaml

    from repro.cli import main
    from repro.records import CandidateStatus
    from repro.release import read_release, write_release
    from repro.store import RunStore
    from tests.test_release import synthetic_run

    synthetic_run(tmp_path / "run", real_lean=True)
    # a forged store: the judge "passed" code that proves another statement (the screen passes it: one theorem
    # of our name; a forgery the screen refuses, such as an axiom of its own, never reaches the judge:
    # tests/test_stored_submissions.py)
    with RunStore(tmp_path / "run") as store:
        candidate = next(c for c in store.candidates(CandidateStatus.retained) if c.problem_id == "math:7")
        candidate.verified_code = (candidate.verified_code or "").replace("= 300 :=", "= 300 ∨ False :=")
        store.save_candidate(candidate)
    assert write_release(tmp_path / "run", tmp_path / "out").written == 2
    assert [row.instance_id for row in read_release(tmp_path / "out")] == ["gsm8k:1#r0", "math:7#r0"]
    config = tmp_path / "judge.yaml"
    judge = {"backend": "factory", "factory": "tests.doubles.judges:safeverify", "tools_dir": str(tmp_path / "tools")}
    config.write_text(yaml.safe_dump({"lean": fake_lean_section(header=""), "judge": judge}))

    capsys.readouterr()
    assert main(["reverify", str(tmp_path / "out"), "--config", str(config)]) == 1
    printed = capsys.readouterr()
    assert "NOT verified: math:7#r0: kernel judge SafeVerify: rejected" in printed.out
    assert "theorem t does not have the same type as the requirement" in printed.out
    assert (
        "1 of 2 instances passed by the kernel judge SafeVerify again" in printed.out and "confinement: " in printed.out
    )
    assert "the kernel judge was a stand-in" in printed.err


def test_judge_exit_codes() -> None:
    from repro.exit_codes import ExitCode
    from repro.judge.release import judge_exit_code
    from repro.judge.verdict import JudgeVerdict

    def verdict(status: JudgeStatus, real: bool = True) -> JudgeVerdict:
        return JudgeVerdict(key="k", status=status, tool="SafeVerify", real=real)

    assert judge_exit_code([verdict(JudgeStatus.passed)]) == ExitCode.ok
    assert judge_exit_code([verdict(JudgeStatus.passed, real=False)]) == ExitCode.stand_in
    assert judge_exit_code([verdict(JudgeStatus.passed), verdict(JudgeStatus.unavailable)]) == ExitCode.unfinished
    assert judge_exit_code([verdict(JudgeStatus.unavailable), verdict(JudgeStatus.rejected)]) == ExitCode.rejected


def test_the_docker_image_builds_the_pinned_safeverify_commits() -> None:
    from tests.conftest import REPO

    dockerfile = (REPO / "docker" / "Dockerfile").read_text(encoding="utf-8")
    for toolchain, pin in SAFEVERIFY_PINS.items():
        assert f'"{toolchain} {pin.commit}"' in dockerfile, toolchain


def test_a_judgement_waiting_for_a_free_worker_does_not_spend_its_timeout_waiting(tmp_path: Path) -> None:
    judge = judges.safeverify(_settings(tmp_path, workers=1, timeout_s=5), "--cost", "0.2")
    # ten judgements of at least three 0.2 s steps each queue behind one worker: together they take longer
    # than one 5 s timeout on any machine, so each must have had its own timeout from its own start
    requests = [_request(HONEST, key=str(i)) for i in range(10)]
    started = time.monotonic()
    verdicts = asyncio.run(judge_all(judge, requests))
    assert [v.status for v in verdicts] == [JudgeStatus.passed] * 10, [v.detail for v in verdicts]
    assert time.monotonic() - started > 5, "the queue was shorter than one timeout: the test proved nothing"


def test_no_judge_step_sees_the_operator_s_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Prover code runs in the submission's compile: an API key in its environment could be printed into a
    Lean message the verdict keeps. Each step gets only what Lean needs, whatever the confinement."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-not-for-prover-code")
    log = tmp_path / "calls.jsonl"
    judge = judges.safeverify(_settings(tmp_path), "--log", str(log), sandbox=UNCONFINED, named_sandbox="none")
    assert asyncio.run(judge.judge(_request(HONEST))).status == JudgeStatus.passed
    seen = [set(json.loads(line)["env"]) for line in log.read_text().splitlines()]
    assert len(seen) == 5 and all("OPENAI_API_KEY" not in names for names in seen)
    assert all("PATH" in names for names in seen)


def test_doctor_says_whether_the_judge_can_judge_the_run_s_toolchain(tmp_path: Path) -> None:
    from repro.app import doctor
    from repro.config import RunConfig

    config = RunConfig.model_validate({"judge": {"tools_dir": str(tmp_path / "none")}, "lean": {"backend": "repl"}})
    (line,) = [line for line in doctor(config) if line.name.startswith("kernel judge")]
    assert not line.ok and line.required and "not set up" in line.detail
    assert line.name == f"kernel judge (SafeVerify {SAFEVERIFY_PINS['v4.15.0'].commit[:12]} for v4.15.0)"
    judges.lay_out_safeverify(tmp_path / "tools")
    stand_in = RunConfig.model_validate(
        {
            "judge": {
                "backend": "factory",
                "factory": "tests.doubles.judges:safeverify",
                "tools_dir": str(tmp_path / "tools"),
            }
        }
    )
    (line,) = [line for line in doctor(stand_in) if line.name.startswith("kernel judge")]
    assert line.ok and "a stand-in" in line.detail


@pytest.mark.parametrize("how", ["abort", "segv"])
def test_code_that_crashes_lean_every_time_is_rejected_not_resumed_forever(tmp_path: Path, how: str) -> None:
    """red1 R6 on the judge's side: a submission whose compile crashes Lean (lean4#8273, #4773 pass the screen)
    was "no verdict" on every resume; crashing twice in fresh directories while our target, compiled afresh,
    compiles cleanly is the code's doing."""
    log = tmp_path / "steps.jsonl"
    judge = judges.safeverify(
        _settings(tmp_path), "--fail", f"submission:{how}", "--log", str(log), sandbox=UNCONFINED, named_sandbox="none"
    )
    verdict = asyncio.run(judge.judge(_request(HONEST)))
    assert verdict.status == JudgeStatus.rejected and verdict.refusal == JudgeRefusal.crash, verdict.detail
    assert ("SIGABRT" if how == "abort" else "SIGSEGV") in verdict.detail
    compiled = [Path(json.loads(line)["argv"][-1]).name for line in log.read_text().splitlines()]
    # the target (cached) once, the submission twice, then the target again as the node's health probe
    assert compiled.count("Submission.lean") == 2 and compiled.count("Target.lean") == 2, compiled


def test_a_crash_that_does_not_repeat_is_the_node_s_and_the_proof_is_judged(tmp_path: Path) -> None:
    marker = tmp_path / "crashed-once"
    judge = judges.safeverify(
        _settings(tmp_path), "--fail", f"submission:abort-once={marker}", sandbox=UNCONFINED, named_sandbox="none"
    )
    verdict = asyncio.run(judge.judge(_request(HONEST)))
    # the first compile crashed, the second compiled: no rejection; this judgement has no verdict, the next passes
    assert marker.exists() and verdict.status == JudgeStatus.unavailable, verdict.detail
    assert verdict.cause == JudgeCause.killed and "SIGABRT" in verdict.detail
    assert asyncio.run(judge.judge(_request(HONEST, key="row-2"))).status == JudgeStatus.passed


def test_a_node_that_crashes_on_our_own_target_too_gives_no_verdict(tmp_path: Path) -> None:
    """The health probe is our target compiled afresh, not read from the cache: where Lean now crashes on it
    too, the node is broken, and a crash of the submission is no evidence against the proof."""
    broken = tmp_path / "node-broke"
    judge = judges.safeverify(
        _settings(tmp_path),
        "--fail",
        "submission:abort",
        "--fail",
        f"target:abort-if={broken}",
        sandbox=UNCONFINED,
        named_sandbox="none",
    )
    assert asyncio.run(judge.judge(_request(HONEST))).status == JudgeStatus.rejected  # our target is cached now
    broken.touch()
    verdict = asyncio.run(judge.judge(_request(HONEST, key="row-2")))
    assert verdict.status == JudgeStatus.unavailable and verdict.cause == JudgeCause.killed, verdict.detail
    assert "compiling the submission" in verdict.detail and verdict.refusal is None


def test_an_out_of_memory_kill_of_the_submission_is_never_a_crash_rejection(tmp_path: Path) -> None:
    judge = judges.safeverify(
        _settings(tmp_path), "--fail", "submission:killed", sandbox=UNCONFINED, named_sandbox="none"
    )
    verdict = asyncio.run(judge.judge(_request(HONEST)))
    assert verdict.status == JudgeStatus.unavailable and verdict.cause == JudgeCause.killed, verdict.detail
