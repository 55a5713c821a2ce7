"""``leanprover/comparator`` as the kernel judge for toolchains from v4.21.0-rc3 on.

Read at 19e111e (``Main.lean``, ``README.md``, ``runtests.lean``, ``tests/projects/*``), the pin below:

- comparator runs in a Lake project: ``lake env comparator config.json`` with the project as the working
  directory (``runtests.lean``: ``runCommandInDir tempDir "lake" #["env", comparatorPath, "config.json"]``);
  the project has ``Challenge`` and ``Solution`` libraries (the default ``lakefile.toml`` that
  ``createAdditionalFiles`` writes) and comparator's own ``lean-toolchain``.
- ``config.json`` is ``structure Config`` of ``Main.lean``: ``challenge_module``, ``solution_module``,
  ``theorem_names``, ``permitted_axioms`` (and optional ``definition_names``, ``enable_nanoda``,
  ``external_kernels``).
- comparator finds ``landrun`` and ``lean4export`` on ``PATH`` or through ``COMPARATOR_LANDRUN`` and
  ``COMPARATOR_LEAN4EXPORT`` (``M.run``); it builds ``Challenge`` in a landrun sandbox, exports it with
  ``lean4export``, then builds and exports ``Solution`` the same way, compares every constant our
  theorem's type uses (``compareAt``), checks axioms, and replays the solution's export into a fresh
  kernel environment. It loads no ``.olean`` of the solution into its own process.
- success prints ``Your solution is okay!`` (``compareIt``) and exits 0; every refusal is a ``throw``
  the runtime prints as ``uncaught exception: ...``; a failed sandboxed step is ``Child exited with N``
  after ``Building <module>`` or ``Exporting ... from <module>``.

Our side: a fresh project directory per judgement holds our ``lakefile.toml`` (trusted), the
toolchain's ``lake-manifest.json`` and ``.lake/packages`` (a read-only link to the prepared workspace
with Mathlib built, so nothing is fetched), ``Challenge.lean`` (header + our statement), ``Solution.lean``
(header + the text the screen checked) and ``config.json``; the whole command runs in our sandbox with
only that directory writable. Comparator builds and exports ``Challenge`` before it builds ``Solution``,
so the solution's build cannot change what it compares against (its README, "Internals" 1-3).

How the project is assembled (the link, the copied manifest) is reasoned from Lake's behaviour, not run:
no registered toolchain is >= v4.21.0-rc3 yet. A ``lean``-marked test runs it where such a toolchain is
set up; until then a stand-in whose command lines are checked against the source above answers.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from repro.config import JudgeSettings
from repro.judge.integrity import tool_problem, toolchain_root
from repro.judge.kernel import (
    JUDGE_CHECKS,
    judge_environment,
    step_failure,
    submission_source,
    target_source,
    toolchain_key,
)
from repro.judge.runner import Confinement, Slots, run_step
from repro.judge.verdict import (
    STANDARD_AXIOMS,
    STRUCTURAL_NOTE,
    JudgeCause,
    JudgeRefusal,
    JudgeRequest,
    JudgeStatus,
    JudgeVerdict,
)
from repro.lean.sandbox import SandboxStatus, toolchain_binary

COMPARATOR_REPOSITORY = "https://github.com/leanprover/comparator"


class ComparatorPin(BaseModel):
    toolchain: str
    commit: str
    lean4export: str  # the lean4export commit of comparator's lake-manifest.json at ``commit``


# Read from leanprover/comparator: lean-toolchain and lake-manifest.json at each commit.
COMPARATOR_PINS: dict[str, ComparatorPin] = {
    "v4.34.0-rc2": ComparatorPin(
        toolchain="v4.34.0-rc2",
        commit="19e111e2141cf333c7daff0f64c5f24acc91dd2e",
        lean4export="cacf989bd75f608700820f6afc595f32e7a99a4d",
    ),
}
# ``lake build lean4export comparator`` in a checkout (its README, "Development") leaves these
COMPARATOR_BINARY = Path(".lake") / "build" / "bin" / "comparator"
LEAN4EXPORT_BINARY = Path(".lake") / "packages" / "lean4export" / ".lake" / "build" / "bin" / "lean4export"
OKAY = "Your solution is okay!"  # Main.lean, compareIt

# comparator's own refusals (Comparator/Compare.lean, Comparator/Axioms.lean, Main.lean ``runBuiltinKernel``)
_REFUSALS: tuple[tuple[re.Pattern[str], JudgeRefusal], ...] = (
    (re.compile(r"^Const(?:ant)? not found in solution:? '.+'$"), JudgeRefusal.not_found),
    (re.compile(r"^Challenge and solution constant kind don't match: '.+'$"), JudgeRefusal.kind_mismatch),
    (re.compile(r"^Solution constant is not a (?:theorem|definition): '.+'$"), JudgeRefusal.kind_mismatch),
    (re.compile(r"^Challenge and solution theorem statement do not match: '.+'$"), JudgeRefusal.type_mismatch),
    # a constant our statement uses is not the same in the solution (it redefined or shadowed it)
    (re.compile(r"^Const does not match between challenge and target '.+'$"), JudgeRefusal.definition_mismatch),
    (re.compile(r"^Illegal axiom detected: '.+'$"), JudgeRefusal.axiom),
    (re.compile(r"^\(kernel\) .+"), JudgeRefusal.kernel),
    (re.compile(r"^Quotient constant mismatch on: .+"), JudgeRefusal.kernel),
    (re.compile(r"^Could not find quotient constant in final kernel env: .+"), JudgeRefusal.kernel),
    # an external kernel refused (comparator's own sandboxed steps say "Child exited with N": never a refusal)
    (re.compile(r"^(?!Child )\S+ exited with -?\d+$"), JudgeRefusal.kernel),
)
_STEP = re.compile(r"^(Building (?P<built>\S+)|Exporting .* from (?P<exported>\S+))$")


def comparator_config(theorem_name: str) -> dict[str, Any]:
    """``config.json`` for one theorem (``structure Config``, Main.lean)."""
    return {
        "challenge_module": "Challenge",
        "solution_module": "Solution",
        "theorem_names": [theorem_name],
        "permitted_axioms": sorted(STANDARD_AXIOMS),
    }


def _statement_name(request: JudgeRequest) -> str:
    from repro.lean.text import StatementError, read_statement

    try:
        return read_statement(request.statement).name
    except StatementError:
        return request.theorem_name


def _last_step(output: str) -> tuple[str, str] | None:
    """(``build``/``export``, module) of the last step comparator announced before it stopped."""
    found = None
    for line in output.splitlines():
        match = _STEP.match(line.strip())
        if match:
            found = ("build", match["built"]) if match["built"] else ("export", match["exported"])
    return found


def _exception(output: str) -> str | None:
    for line in reversed(output.strip().splitlines()):
        if "uncaught exception:" in line:
            return line.split("uncaught exception:", 1)[1].strip()
    return None


def solution_errors(output: str, offset: int) -> list[str]:
    """Lean's errors in ``Solution.lean`` as Lake's build log prints them (``error: ./Solution.lean:l:c: ...``)."""
    pattern = re.compile(r"(?:^|\s)(?:\./)*Solution\.lean:(\d+):(\d+):\s*(?:error:\s*)?(.*)$")
    found = []
    for line in output.splitlines():
        if "error" not in line:
            continue
        match = pattern.search(line.strip())
        if match:
            found.append(f"line {int(match.group(1)) - offset}:{match.group(2)}: {match.group(3)}")
    return found


class ComparatorJudge:
    """``lake env comparator config.json`` in a fresh project per judgement, under our sandbox."""

    name = "comparator"

    def __init__(
        self,
        settings: JudgeSettings,
        *,
        lake: Sequence[str] | None = None,
        real: bool = True,
        sandbox: SandboxStatus | None = None,
        named_sandbox: str = "bwrap",
        landrun: str | None = None,
    ) -> None:
        self.settings = settings
        self.tools_dir = settings.resolved_tools_dir()
        self.real = real
        self._default_lake = lake is None
        self.lake = list(lake) if lake is not None else [shutil.which("lake") or "lake"]
        # ``lean.sandbox``, the operator's named confinement: bwrap unless a weaker one is named (the opt-in)
        self.confined = Confinement(named_sandbox, sandbox)
        self.landrun = landrun or os.environ.get("COMPARATOR_LANDRUN") or shutil.which("landrun")
        self._slots = Slots(settings.workers)

    @property
    def confinement(self) -> str:
        return f"{self.confined.describe()}; comparator's landrun around each build and export"

    def revision(self, toolchain: str) -> str | None:
        pin = COMPARATOR_PINS.get(toolchain_key(toolchain))
        return pin.commit if pin else None

    def home(self, toolchain: str) -> Path:
        """``TOOLS_DIR/<toolchain>/``: ``comparator/`` (a built checkout) and ``workspace/`` (Mathlib built)."""
        return self.tools_dir / toolchain_key(toolchain)

    def problem(self, toolchain: str) -> tuple[JudgeCause, str] | None:
        key = toolchain_key(toolchain)
        if key not in COMPARATOR_PINS:
            pinned = ", ".join(COMPARATOR_PINS)
            return JudgeCause.missing, f"no pinned comparator for toolchain {key} (pinned: {pinned})"
        home = self.home(key)
        for path, what in (
            (home / "comparator" / COMPARATOR_BINARY, "comparator (lake build lean4export comparator)"),
            (home / "comparator" / LEAN4EXPORT_BINARY, "lean4export (lake build lean4export comparator)"),
            (home / "workspace" / "lake-manifest.json", "a Lake workspace with Mathlib for this toolchain"),
        ):
            if not path.is_file():
                return JudgeCause.missing, f"comparator for {key} is not set up: {path} is missing ({what})"
        if not (home / "workspace" / ".lake" / "packages").is_dir():
            return JudgeCause.missing, f"comparator for {key}: {home / 'workspace'} has no .lake/packages (Mathlib)"
        if not self.landrun:
            return JudgeCause.missing, "no landrun (comparator's sandbox): put it on PATH or set COMPARATOR_LANDRUN"
        if self.real and not shutil.which(self.lake[0]):
            return JudgeCause.missing, f"{self.lake[0]} not found: no Lean toolchain on this machine"
        sandbox = self.confined.problem()
        if sandbox is not None:
            return JudgeCause.unconfined, sandbox
        status = self.confined.status()
        confined = status is not None and status.writes_confined
        lean = None if confined or not self.real else toolchain_root(toolchain_binary("lake", home / "workspace"))
        return tool_problem(home, real=self.real, writes_confined=confined, toolchain=lean)

    def _verdict(self, request: JudgeRequest, status: JudgeStatus, started: float, **fields: Any) -> JudgeVerdict:
        toolchain = toolchain_key(request.toolchain)
        return JudgeVerdict(
            key=request.key,
            status=status,
            tool=self.name,
            tool_revision=self.revision(toolchain),
            checks=JUDGE_CHECKS,
            toolchain=toolchain,
            real=self.real,
            confinement=self.confinement,
            elapsed_s=round(time.monotonic() - started, 3),
            **fields,
        )

    def project(self, request: JudgeRequest, directory: Path) -> None:
        """Lay out the judgement's project: our lakefile, the workspace's manifest and packages, the two files."""
        toolchain = toolchain_key(request.toolchain)
        workspace = self.home(toolchain) / "workspace"
        manifest = json.loads((workspace / "lake-manifest.json").read_text(encoding="utf-8"))
        mathlib = next((p for p in manifest.get("packages", []) if p.get("name") == "mathlib"), None)
        requirement = (
            f'[[require]]\nname = "mathlib"\ngit = "{mathlib["url"]}"\nrev = "{mathlib["rev"]}"\n\n' if mathlib else ""
        )
        name = str(manifest.get("name") or "repro_judge")
        (directory / "lakefile.toml").write_text(
            f'name = "{name}"\nversion = "0.1.0"\n\n{requirement}[[lean_lib]]\nname = "Challenge"\n\n'
            '[[lean_lib]]\nname = "Solution"\n',
            encoding="utf-8",
        )
        (directory / "lake-manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        (directory / "lean-toolchain").write_text(f"leanprover/lean4:{toolchain}\n", encoding="utf-8")
        (directory / ".lake").mkdir()
        (directory / ".lake" / "packages").symlink_to((workspace / ".lake" / "packages").resolve())
        (directory / "Challenge.lean").write_text(target_source(request.header, request.statement), encoding="utf-8")
        solution = submission_source(request.header, request.submission)
        (directory / "Solution.lean").write_text(solution, encoding="utf-8")
        # the theorem comparator checks is our statement's own, never a name the caller or a prover supplied
        (directory / "config.json").write_text(
            json.dumps(comparator_config(_statement_name(request)), indent=1) + "\n", encoding="utf-8"
        )

    async def judge(self, request: JudgeRequest) -> JudgeVerdict:
        started = time.monotonic()
        toolchain = toolchain_key(request.toolchain)
        problem = self.problem(toolchain)
        if problem is not None:
            cause, detail = problem
            return self._verdict(request, JudgeStatus.unavailable, started, cause=cause, detail=detail)
        home = self.home(toolchain)
        sandbox = self.confined.status()
        assert sandbox is not None  # problem() said it works
        async with self._slots():
            with tempfile.TemporaryDirectory(prefix="repro-judge-comparator-") as directory:
                project = Path(directory) / "project"
                project.mkdir()
                self.project(request, project)
                lake = [toolchain_binary("lake", project)] if self._default_lake else self.lake
                env = {
                    **judge_environment(),  # no API key for prover code to print
                    "COMPARATOR_LANDRUN": str(self.landrun),
                    "COMPARATOR_LEAN4EXPORT": str((home / "comparator" / LEAN4EXPORT_BINARY).resolve()),
                }
                binary = str((home / "comparator" / COMPARATOR_BINARY).resolve())
                result = await run_step(
                    [*lake, "env", binary, "config.json"],
                    project,
                    sandbox,
                    time.monotonic() + self.settings.timeout_s,  # from when a slot was free
                    env=env,
                    read_only=[home, Path(str(self.landrun))],
                )
        failure = step_failure(result, "comparator", self.settings.timeout_s)
        if failure is not None:
            cause, detail = failure
            return self._verdict(request, JudgeStatus.unavailable, started, cause=cause, detail=detail)
        return self._read(request, result.returncode, result.output, started)

    def _read(self, request: JudgeRequest, code: int | None, output: str, started: float) -> JudgeVerdict:
        lines = [line.strip() for line in output.strip().splitlines() if line.strip()]
        if code == 0:
            if lines and lines[-1] == OKAY:
                return self._verdict(request, JudgeStatus.passed, started)
            return self._verdict(
                request,
                JudgeStatus.unavailable,
                started,
                cause=JudgeCause.no_output if not lines else JudgeCause.unreadable,
                detail=f"comparator exited 0 without {OKAY!r} as its last line: {output.strip()[-800:]}",
            )
        message = _exception(output)
        step = _last_step(output)
        if message is not None and message.startswith("Child exited with") and step is not None:
            kind, module = step
            if kind == "build" and module == "Solution":
                errors = solution_errors(output, request.header.rstrip().count("\n") + 2)
                if errors:
                    return self._verdict(
                        request,
                        JudgeStatus.rejected,
                        started,
                        refusal=JudgeRefusal.compile_error,
                        detail="the submission does not compile: " + " | ".join(errors[:5])[:1500],
                    )
            cause = JudgeCause.target if module == "Challenge" else JudgeCause.crashed
            return self._verdict(
                request,
                JudgeStatus.unavailable,
                started,
                cause=cause,
                detail=f"comparator's sandboxed {kind} of {module} failed, no Lean error: {output.strip()[-800:]}",
            )
        if message is not None:
            if message.startswith("Const not found in challenge"):
                return self._verdict(request, JudgeStatus.unavailable, started, cause=JudgeCause.target, detail=message)
            for pattern, refusal in _REFUSALS:
                if pattern.match(message):
                    detail = f"{message} ({STRUCTURAL_NOTE})" if refusal == JudgeRefusal.type_mismatch else message
                    return self._verdict(request, JudgeStatus.rejected, started, refusal=refusal, detail=detail)
        return self._verdict(
            request,
            JudgeStatus.unavailable,
            started,
            cause=JudgeCause.no_output if not lines else JudgeCause.unreadable,
            detail=f"comparator failed (exit {code}) without one of its refusals: {output.strip()[-800:]}",
        )
