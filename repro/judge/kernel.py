"""The kernel judge: our target and the submission compiled apart, the submission replayed in Lean's kernel.

Lean's reference manual ("Validating a Lean Proof") escalates for untrusted, possibly malicious proofs
from ``#print axioms`` to kernel replay of the compiled environment (``lean4checker``) to
``leanprover/comparator`` (build in a sandbox, export, replay in the kernel, compare the statement with
the challenge). The screen (:mod:`repro.judge.screen`) is the cheap first layer; this module decides.

Which tool, and why (read from the sources, not assumed):

- ``leanprover/comparator`` starts at ``leanprover/lean4:v4.21.0-rc3`` (``lean-toolchain`` at 437574b,
  2025-06-06) and moves with Lean (v4.34.0-rc2 at 19e111e); it needs ``lean4export`` at a matching
  version and ``landrun``. :mod:`repro.judge.comparator` adapts it for toolchains from v4.21.0-rc3 on.
- Provers use v4.9.0 (DeepSeek-Prover-V1.5/V2, Goedel-Prover-V2) and v4.15.0 (Kimina). For them,
  ``GasStationManager/SafeVerify``: branch ``minif2f-deepseek-check`` (Lean v4.9.0, Mathlib v4.9.0) and
  ``minif2f-kimina-check`` (Lean v4.15.0, Mathlib v4.15.0), pinned in :data:`SAFEVERIFY_PINS`. Its
  ``Main.lean`` replays the target (our statement with ``sorry``) and the submission with
  ``Environment.replay`` (lean4checker's code), then checks that every target theorem exists in the
  submission with the same kind, type and universe parameters (``equivThm``: ``tval₁.type ==
  tval₂.type``, structural), that it uses only ``propext``, ``Quot.sound`` and ``Classical.choice``
  (``checkAxioms``, ``CollectAxioms.collect``). Its refusal of ``partial``/``unsafe`` definitions never
  fires at the pins: it looks at the constants ``Environment.replay`` added, and replay skips unsafe and
  partial ones (Lean ``src/Lean/Replay.lean``, "We skip unsafe constants, and also partial constants";
  upstream moved the check before the replay in d2df831, after both pins). Usage, as
  its ``verify.py`` runs it: ``lake env lean -o X.olean X.lean`` for both files, then ``lake env
  safe_verify target.olean submission.olean``; exit 0 after ``Finished with no errors.`` is acceptance,
  every refusal is an ``IO.userError`` that the runtime prints as ``uncaught exception: ...`` (exit 1).

What the judge does on our side (issue 27 §1, §3; audit B2, M1, M9):

1. The target (trusted header + our statement ``:= by sorry``) is compiled alone, in a fresh directory
   of the judge's own, sandboxed with only that directory writable, once per (toolchain, target)
   (:class:`TargetCache`); its ``.olean`` is hashed. Each judgement then gets a fresh directory with two
   fresh sub-directories: the submission (trusted header + the text the screen's Lean check compiled,
   verbatim) is compiled in ``submission/``, sandboxed with only ``submission/`` writable, so nothing the
   prover's code can write reaches our target, the tool checkout, or anything run later.
2. Both ``.olean`` files are copied into ``inputs/`` (plain files only, never through a link), which every
   later step sees read-only; each step runs in an empty directory of its own, and before each one both
   copies must still hash as copied (the target's as right after its compile), or there is no verdict (and
   the target is compiled afresh next time). Our own ``lean/ImportsOf.lean`` reads the modules each file
   imports: the submission's must be the target's (the header's), or prover code wrote the file
   (SafeVerify's own check of this, bea2fbd, came after the pinned commits). ``safe_verify`` then runs.
   Last, our own ``lean/Rebuild.lean``: every constant of the submission rebuilt node by node (no cached
   hash, flag or number object of the file survives), unsafe and partial constants refused (but the code
   generator's own), the rebuilt declarations replayed by the kernel from the header's environment, and our
   theorem's rebuilt type and axioms checked again. That is SafeVerify's March 2026 answer (73196d3, f06ecb5,
   29ef514, 5cafc55) to objects forged with ``unsafeCast`` while the submission was elaborated, which the
   kernel accepts as read from the file; the pinned commits have none of it.
3. Only SafeVerify's own refusals (the ``throw`` sites of ``Main.lean``, after ``found a problem in
   <submission>``), our rebuild check's, and Lean *errors* in the submission's compile (``<file>:l:c:
   error:``) are ``rejected``. A tool never built, a signal or an out-of-memory kill, no output, a sandbox error,
   output we cannot read, or a timeout (the whole process group is killed) is ``unavailable`` with a
   :class:`~repro.judge.verdict.JudgeCause`: no verdict, resumable.
4. Every verdict records the tool, its pinned revision, the toolchain and the confinement; the judge
   refuses to run where writes are not confined unless the operator opted in by name.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import os
import re
import shutil
import stat
import tempfile
import time
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from repro.config import JudgeBackendName, JudgeSettings
from repro.judge.integrity import tool_problem, toolchain_root
from repro.judge.runner import Confinement, Slots, StepResult, run_step, signal_name
from repro.judge.verdict import (
    STRUCTURAL_NOTE,
    Judge,
    JudgeCause,
    JudgeRefusal,
    JudgeRequest,
    JudgeStatus,
    JudgeVerdict,
)
from repro.lean.sandbox import LEAN_ENVIRONMENT, SandboxStatus, toolchain_binary
from repro.lean.toolchains import DEFAULT_TOOLCHAIN

SAFEVERIFY_REPOSITORY = "https://github.com/GasStationManager/SafeVerify"


class SafeVerifyPin(BaseModel):
    toolchain: str
    branch: str
    commit: str
    mathlib: str


# Read from GasStationManager/SafeVerify: each branch's lean-toolchain and lakefile.toml (mathlib rev).
SAFEVERIFY_PINS: dict[str, SafeVerifyPin] = {
    "v4.9.0": SafeVerifyPin(
        toolchain="v4.9.0",
        branch="minif2f-deepseek-check",
        commit="0c0f7dcf6cb66333a944d062ec4c431986da1ca6",
        mathlib="v4.9.0",
    ),
    "v4.15.0": SafeVerifyPin(
        toolchain="v4.15.0",
        branch="minif2f-kimina-check",
        commit="577e95319a2bb1bb8df541f0c645811f6577a0ae",
        mathlib="v4.15.0",
    ),
}
# ``lake build`` puts the executable here (SafeVerify README, "Building an executable"; lakefile.toml
# ``[[lean_exe]] name = "safe_verify"``); without it, ``lake env safe_verify`` cannot start.
SAFEVERIFY_BINARY = Path(".lake") / "build" / "bin" / "safe_verify"
FINISHED = "Finished with no errors."  # Main.lean:145, printed last, then ``return 0``
COMPARATOR_FIRST = "v4.21.0-rc3"  # leanprover/comparator@437574b lean-toolchain
# Bumped whenever our side of a judgement checks more (2: the imports of the submission's output; 3: our
# rebuild of the submission's constants, replayed from scratch, and our unsafe/partial check), so a verdict
# kept by an older, weaker judge never answers for this one (part of the cache key)
JUDGE_CHECKS = 3

# SafeVerify's own refusals: the ``throw <| IO.userError s!"..."`` sites of Main.lean (both pinned
# branches; line numbers at 577e953), as the runtime prints them after ``uncaught exception: ``.
_REFUSALS: tuple[tuple[re.Pattern[str], JudgeRefusal], ...] = (
    (re.compile(r"^(?P<name>.+) is not in the allowed set of standard axioms$"), JudgeRefusal.axiom),  # :33
    # :104, unreachable at the pins: it looks only at constants after ``Environment.replay``, which skips unsafe
    # and partial ones (src/Lean/Replay.lean); our Rebuild.lean refuses them instead
    (re.compile(r"^unsafe/partial function (?P<name>.+) detected$"), JudgeRefusal.unsafe),
    (
        re.compile(r"^\w+ (?P<name>.+) is not the same kind as the requirement \w+ .+$"),
        JudgeRefusal.kind_mismatch,
    ),  # :110
    (re.compile(r"^theorem (?P<name>.+) does not have the same type as the requirement$"), JudgeRefusal.type_mismatch),
    (re.compile(r"^definition (?P<name>.+) does not match the requirement$"), JudgeRefusal.definition_mismatch),
    (re.compile(r"^(?P<name>.+) not found in submission$"), JudgeRefusal.not_found),  # :121
    # Environment.replay: the kernel refused one of the submission's declarations
    (re.compile(r"^\(kernel\) .+"), JudgeRefusal.kernel),
)


def judge_environment(*extra: str) -> dict[str, str]:
    """The environment of every judge step: what Lean needs (the sandbox module's ``LEAN_ENVIRONMENT``) and
    ``extra``, nothing else, whatever the confinement: prover code run by the submission's compile must
    not read an API key and print it into a message we store."""
    return {name: os.environ[name] for name in (*LEAN_ENVIRONMENT, *extra) if name in os.environ}


def toolchain_key(toolchain: str | None) -> str:
    """``leanprover/lean4:v4.15.0`` (provenance), ``4.15.0`` or ``v4.15.0`` (profiles) -> ``v4.15.0``."""
    if not toolchain:
        return DEFAULT_TOOLCHAIN
    name = toolchain.rsplit(":", 1)[-1].strip()
    return name if name.startswith("v") else f"v{name}"


def release_order(toolchain: str) -> tuple[int, int, int, int] | None:
    """``v4.21.0-rc3`` -> (4, 21, 0, 3); a release sorts after its release candidates. None: not a release tag."""
    found = re.fullmatch(r"v?(\d+)\.(\d+)\.(\d+)(?:-rc(\d+))?", toolchain_key(toolchain))
    if not found:
        return None
    major, minor, patch, rc = found.groups()
    return int(major), int(minor), int(patch), int(rc) if rc is not None else 1 << 30


def tool_for(toolchain: str | None) -> str | None:
    """Which tool judges ``toolchain``: ``safeverify`` (a pinned branch), ``comparator`` (>= v4.21.0-rc3), or None."""
    key = toolchain_key(toolchain)
    if key in SAFEVERIFY_PINS:
        return "safeverify"
    order = release_order(key)
    first = release_order(COMPARATOR_FIRST)
    if order is not None and first is not None and order >= first:
        return "comparator"
    return None


def target_source(header: str, statement: str) -> str:
    """Our target: the trusted header, then our statement (ending ``:= by sorry``)."""
    return f"{header.rstrip()}\n\n{statement.strip()}\n"


def submission_source(header: str, submission: str) -> str:
    """The trusted header, then the text the screen's Lean check compiled, verbatim (its positions kept)."""
    return f"{header.rstrip()}\n\n{submission}" + ("" if submission.endswith("\n") else "\n")


def submission_line_offset(header: str) -> int:
    """Lines before the submission's first line in :func:`submission_source` (to map Lean's positions back)."""
    return header.rstrip().count("\n") + 2


def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def checkout_revision(checkout: Path) -> str | None:
    """The commit a git checkout is at (detached, or on a branch), read from its files; None if unknown."""
    git = checkout / ".git"
    if git.is_file():  # a worktree or submodule: ``gitdir: PATH``
        text = git.read_text(encoding="utf-8", errors="replace").strip()
        if not text.startswith("gitdir:"):
            return None
        git = (checkout / text.removeprefix("gitdir:").strip()).resolve()
    head = git / "HEAD"
    if not head.is_file():
        return None
    text = head.read_text(encoding="utf-8", errors="replace").strip()
    if re.fullmatch(r"[0-9a-f]{40}", text):
        return text
    if not text.startswith("ref:"):
        return None
    ref = text.removeprefix("ref:").strip()
    loose = git / ref
    if loose.is_file():
        return loose.read_text(encoding="utf-8", errors="replace").strip() or None
    packed = git / "packed-refs"
    if packed.is_file():
        for line in packed.read_text(encoding="utf-8", errors="replace").splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[1] == ref:
                return parts[0]
    return None


def lean_errors(output: str, source: Path, offset: int = 0) -> list[str]:
    """Lean's ``<file>:l:c: error: ...`` lines for ``source``, lines renumbered to the submission's own."""
    pattern = re.compile(rf"^{re.escape(str(source))}:(\d+):(\d+): error:\s?(.*)$")
    found = []
    for line in output.splitlines():
        match = pattern.match(line.strip())
        if match:
            row = int(match.group(1)) - offset
            found.append(f"line {row}:{match.group(2)}: {match.group(3)}")
    return found


def read_refusal(output: str, submission: Path) -> tuple[JudgeRefusal, str] | None:
    """SafeVerify's refusal of the submission, in its own words, or None when the output holds none.

    A refusal counts only after ``found a problem in <submission>`` (Main.lean:143): an exception while
    replaying our own target, or a file it could not read, is no refusal of the proof."""
    if f"found a problem in {submission}" not in output:
        return None
    message = _exception(output)
    if message is None:
        return None
    for pattern, kind in _REFUSALS:
        if pattern.match(message):
            return kind, message
    return None


def _exception(output: str) -> str | None:
    for line in reversed(output.strip().splitlines()):
        if "uncaught exception:" in line:
            return line.split("uncaught exception:", 1)[1].strip()
    return None


def _tail(output: str, limit: int = 800) -> str:
    text = output.strip()
    return text if len(text) <= limit else "..." + text[-limit:]


def step_failure(result: StepResult, what: str, timeout_s: float) -> tuple[JudgeCause, str] | None:
    """Why a step gave no usable answer, whatever it printed; None when it ended on its own with an exit code."""
    if result.start_error is not None:
        return JudgeCause.crashed, f"{what} could not start: {result.start_error}"
    if result.timed_out:
        return JudgeCause.timeout, f"{what}: no answer within {timeout_s:g} s (its process group was killed)"
    number = result.signal
    if number is not None:
        hint = " (an out-of-memory kill is SIGKILL)" if signal_name(number) == "SIGKILL" else ""
        return JudgeCause.killed, f"{what} was killed by {signal_name(number)}{hint}: {_tail(result.output, 300)}"
    if result.output.lstrip().startswith("bwrap:"):
        return JudgeCause.sandbox, f"{what}: the sandbox failed: {_tail(result.output, 300)}"
    return None


# Signals a deterministic crash of Lean ends with (a failed assertion, a stack overflow Lean does not catch);
# never SIGKILL (the out-of-memory killer's and our timeout's) nor SIGTERM/SIGINT/SIGHUP (someone else's)
CRASH_SIGNALS = frozenset({"SIGABRT", "SIGSEGV", "SIGBUS", "SIGILL", "SIGFPE", "SIGTRAP"})


def crash_signal(result: StepResult) -> int | None:
    """The signal a step ended with when it is one a crash of Lean itself raises, else None."""
    number = result.signal
    if result.timed_out or number is None or signal_name(number) not in CRASH_SIGNALS:
        return None
    return number


IMPORTS_SCRIPT = Path(__file__).resolve().parent / "lean" / "ImportsOf.lean"
IMPORTS_DONE = "repro-imports-done"
REBUILD_SCRIPT = Path(__file__).resolve().parent / "lean" / "Rebuild.lean"
REBUILD_PASSED = "repro-rebuild-passed"
REBUILD_REFUSED = "repro-rebuild-refused"
REBUILD_EXIT_REFUSED = 2  # Rebuild.lean's exit status with a refusal (0: passed; anything else: no answer)
# Rebuild.lean's refusal kinds, as the judge records them
_REBUILD_KINDS: dict[str, JudgeRefusal] = {
    "unsafe": JudgeRefusal.unsafe,
    "corrupted": JudgeRefusal.corrupted,
    "kernel": JudgeRefusal.kernel,
    "not_found": JudgeRefusal.not_found,
    "type_mismatch": JudgeRefusal.type_mismatch,
    "kind_mismatch": JudgeRefusal.kind_mismatch,
    "axiom": JudgeRefusal.axiom,
}
MAX_OLEAN_BYTES = 1 << 30  # a compiled proof is kilobytes to megabytes; past this it is no honest output


class NotRegular(Exception):
    """A compiled output that is not a plain file of sane size."""


def copy_regular(source: Path, destination: Path, limit: int = MAX_OLEAN_BYTES) -> None:
    """Copy ``source`` only if it is a regular file (never through a link: ``O_NOFOLLOW``) of at most ``limit``
    bytes; else :class:`NotRegular`. The submission's compile could leave a link to ``/dev/zero``, which a
    plain copy would read forever."""
    try:
        handle = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0))
    except OSError as error:
        raise NotRegular(f"{source.name} that cannot be opened as a file ({error.strerror})") from None
    with os.fdopen(handle, "rb") as reading:
        info = os.fstat(reading.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise NotRegular(f"{source.name} that is not a regular file")
        if info.st_size > limit:
            raise NotRegular(f"{source.name} of {info.st_size} bytes (at most {limit})")
        with destination.open("wb") as writing:
            copied = 0
            while block := reading.read(1 << 20):
                copied += len(block)
                if copied > limit:
                    raise NotRegular(f"{source.name} that grew past {limit} bytes while copied")
                writing.write(block)


def read_imports(output: str, files: Sequence[Path]) -> dict[str, list[str]] | None:
    """``ImportsOf.lean``'s answer: each file's imports in order (a ``runtimeOnly`` one named so), or None when
    the answer is not complete or an import line is not one ImportsOf.lean writes."""
    lines = [line.rstrip("\r") for line in output.splitlines() if line.strip()]
    if not lines or lines[-1] != IMPORTS_DONE:
        return None
    found: dict[str, list[str]] = {str(path): [] for path in files}
    for line in lines[:-1]:
        path, tab, rest = line.partition("\t")
        if not tab or path not in found:
            continue  # anything else Lean printed (a warning) is not an import
        module, tab, runtime_only = rest.partition("\t")
        if not tab or runtime_only not in ("true", "false"):
            return None  # an import of this file without its runtimeOnly flag: not our script's answer
        # importModules skips a runtimeOnly import: such an entry imports nothing (see ImportsOf.lean)
        found[path].append(f"{module} (runtimeOnly)" if runtime_only == "true" else module)
    return found


def read_rebuild(output: str, returncode: int | None) -> bool | tuple[JudgeRefusal, str] | None:
    """``Rebuild.lean``'s answer: True (passed), (refusal kind, its words), or None when it gave no answer
    (its last line is neither of its two answers with the exit status that goes with it)."""
    lines = [line.rstrip("\r") for line in output.splitlines() if line.strip()]
    if not lines:
        return None
    last = lines[-1]
    if returncode == 0 and last == REBUILD_PASSED:
        return True
    marker, _, rest = last.partition("\t")
    kind, _, message = rest.partition("\t")
    if returncode == REBUILD_EXIT_REFUSED and marker == REBUILD_REFUSED and kind in _REBUILD_KINDS and message:
        return _REBUILD_KINDS[kind], message
    return None


class TargetCache:
    """Our compiled targets, one per (toolchain, checkout, header + statement), in a directory of the judge's own.

    k samples of one statement, or every prover of a study, are judged against the same target: it is
    compiled once, alone in a fresh directory under this cache's root, which no submission's sandbox can
    write (each binds only its own directory), and its hash is kept. Every judgement copies it and checks
    the copy against that hash before the tool reads it. Only a compiled target is kept; a failure is
    asked again. Concurrent judgements of one target share one compile."""

    def __init__(self, entries: int = 256) -> None:
        self.entries = entries
        self._root: Path | None = None
        self._built: OrderedDict[str, tuple[str, str]] = OrderedDict()
        self._in_flight: dict[str, asyncio.Future[tuple[Any, str]]] = {}

    def _directory(self, key: str) -> Path:
        if self._root is None:
            self._root = Path(tempfile.mkdtemp(prefix="repro-judge-targets-"))
            weakref.finalize(self, shutil.rmtree, str(self._root), True)
        directory = self._root / key
        if directory.exists():
            shutil.rmtree(directory)
        directory.mkdir()
        return directory

    def forget(self, key: str) -> None:
        self._built.pop(key, None)

    async def get(self, key: str, build: Callable[[Path], Awaitable[tuple[Any, str]]]) -> tuple[Any, str]:
        """(olean path, its sha256) or (a JudgeCause, why) from ``build(fresh directory)``."""
        if key in self._built and Path(self._built[key][0]).is_file():
            self._built.move_to_end(key)
            return self._built[key]
        if key in self._in_flight:
            return await asyncio.shield(self._in_flight[key])
        future: asyncio.Future[tuple[Any, str]] = asyncio.get_running_loop().create_future()
        self._in_flight[key] = future
        try:
            result = await build(self._directory(key))
            if not isinstance(result[0], JudgeCause):
                self._built[key] = (str(result[0]), result[1])
                while len(self._built) > self.entries:
                    stale, _ = self._built.popitem(last=False)
                    if self._root is not None:
                        shutil.rmtree(self._root / stale, ignore_errors=True)
            future.set_result(result)
            return result
        except BaseException as error:
            future.set_exception(error)
            raise
        finally:
            self._in_flight.pop(key, None)
            if future.done() and not future.cancelled():
                future.exception()  # mark retrieved


class SafeVerifyJudge:
    """Subprocesses to the pinned SafeVerify of the request's toolchain, each step sandboxed apart.

    ``lake`` is the program run for the steps (``lake -d CHECKOUT env lean -o …`` and ``lake -d CHECKOUT
    env safe_verify …``); the stand-in of ``tests/doubles/fake_safe_verify.py`` is a ``lake`` that speaks
    the same command lines, so everything here but Lean itself runs in the tests.
    """

    name = "SafeVerify"

    def __init__(
        self,
        settings: JudgeSettings,
        *,
        lake: Sequence[str] | None = None,
        real: bool = True,
        sandbox: SandboxStatus | None = None,
        named_sandbox: str = "bwrap",
    ) -> None:
        self.settings = settings
        self.tools_dir = settings.resolved_tools_dir()
        self.real = real
        self._default_lake = lake is None
        self.lake = list(lake) if lake is not None else [shutil.which("lake") or "lake"]
        # ``lean.sandbox``, the operator's named confinement: bwrap unless a weaker one is named (the opt-in)
        self.confined = Confinement(named_sandbox, sandbox)
        self._slots = Slots(settings.workers)
        self._targets = TargetCache()

    @property
    def confinement(self) -> str:
        return self.confined.describe()

    def revision(self, toolchain: str) -> str | None:
        pin = SAFEVERIFY_PINS.get(toolchain_key(toolchain))
        return pin.commit if pin else None

    def checkout(self, toolchain: str) -> Path:
        return self.tools_dir / toolchain_key(toolchain)

    def problem(self, toolchain: str) -> tuple[JudgeCause, str] | None:
        """Why this judge cannot judge ``toolchain`` here (before anything runs), or None."""
        key = toolchain_key(toolchain)
        pin = SAFEVERIFY_PINS.get(key)
        if pin is None:
            pinned = ", ".join(SAFEVERIFY_PINS)
            return JudgeCause.missing, f"no pinned SafeVerify for toolchain {key} (pinned: {pinned})"
        checkout = self.checkout(key)
        if not (checkout / "lakefile.toml").is_file():
            return JudgeCause.missing, (
                f"SafeVerify for {key} is not set up at {checkout} (docker/Dockerfile builds it: {pin.branch} at"
                f" {pin.commit[:7]}; or set judge.tools_dir / REPRO_SAFEVERIFY_DIR)"
            )
        if not (checkout / SAFEVERIFY_BINARY).is_file():
            return JudgeCause.missing, (
                f"SafeVerify at {checkout} was never built: {SAFEVERIFY_BINARY} is missing (run `lake build"
                " safe_verify` there)"
            )
        found = checkout_revision(checkout)
        if found is not None and found != pin.commit:
            return JudgeCause.missing, f"SafeVerify at {checkout} is at {found[:12]}, not the pinned {pin.commit[:12]}"
        if self.real and not shutil.which(self.lake[0]):
            return JudgeCause.missing, f"{self.lake[0]} not found: no Lean toolchain on this machine"
        sandbox = self.confined.problem()
        if sandbox is not None:
            return JudgeCause.unconfined, sandbox
        status = self.confined.status()
        confined = status is not None and status.writes_confined
        lean = None if confined or not self.real else toolchain_root(toolchain_binary("lake", checkout))
        return tool_problem(checkout, real=self.real, writes_confined=confined, toolchain=lean)

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

    async def judge(self, request: JudgeRequest) -> JudgeVerdict:
        started = time.monotonic()
        toolchain = toolchain_key(request.toolchain)
        problem = self.problem(toolchain)
        if problem is not None:
            cause, detail = problem
            return self._verdict(request, JudgeStatus.unavailable, started, cause=cause, detail=detail)
        async with self._slots():
            with tempfile.TemporaryDirectory(prefix="repro-judge-") as directory:
                return await self._judge_in(request, toolchain, Path(directory), started)

    async def _judge_in(self, request: JudgeRequest, toolchain: str, root: Path, started: float) -> JudgeVerdict:
        checkout = str(self.checkout(toolchain).resolve())
        sandbox = self.confined.status()
        assert sandbox is not None  # problem() said it works
        # the checkout's own toolchain (elan's shim would pick one from the work directory instead)
        lake = [toolchain_binary("lake", checkout)] if self._default_lake else self.lake
        deadline = time.monotonic() + self.settings.timeout_s  # from when a slot was free, not from the queue
        timeout = self.settings.timeout_s

        def unavailable(cause: JudgeCause, detail: str) -> JudgeVerdict:
            return self._verdict(request, JudgeStatus.unavailable, started, cause=cause, detail=detail)

        spaces = {name: root / name for name in ("submission", "inputs", "imports", "replay", "rebuild")}
        for space in spaces.values():
            space.mkdir()
        target_text = target_source(request.header, request.statement)
        submission = spaces["submission"] / "Submission.lean"
        submission.write_text(submission_source(request.header, request.submission), encoding="utf-8")

        # 1. our target, alone in a fresh directory of the judge's own (once per target: see TargetCache)
        tool = [Path(checkout)]

        async def compile_target(directory: Path) -> tuple[Path, str] | tuple[JudgeCause, str]:
            source = directory / "Target.lean"
            source.write_text(target_text, encoding="utf-8")
            compiled = source.with_suffix(".olean")
            command = [*lake, "-d", checkout, "env", "lean", "-o", str(compiled), str(source)]
            result = await run_step(command, directory, sandbox, deadline, read_only=tool, env=judge_environment())
            failure = step_failure(result, "compiling our target", timeout)
            if failure is not None:
                return failure
            if result.returncode != 0 or not compiled.is_file():
                why = f"our target did not compile (exit {result.returncode}): {_tail(result.output)}"
                return JudgeCause.target, why
            return compiled, file_digest(compiled)

        key = hashlib.sha256("\x00".join([toolchain, checkout, target_text]).encode("utf-8")).hexdigest()
        built = await self._targets.get(key, compile_target)
        if isinstance(built[0], JudgeCause):
            return unavailable(built[0], built[1])
        olean, target_hash = Path(built[0]), built[1]

        # 2. the submission, alone in its directory: nothing it writes reaches target/ or the checkout
        async def compile_submission(source: Path) -> StepResult:
            return await run_step(
                [*lake, "-d", checkout, "env", "lean", "-o", str(source.with_suffix(".olean")), str(source)],
                source.parent,
                sandbox,
                deadline,
                read_only=tool,
                env=judge_environment(),
            )

        compiled = submission.with_suffix(".olean")
        result = await compile_submission(submission)
        failure = step_failure(result, "compiling the submission", timeout)
        if failure is not None and crash_signal(result) is not None:
            # Code that crashes Lean every time would otherwise be "no verdict" on every resume, forever (red1 R6:
            # lean4#8273, #4773 pass the screen). Once more in a fresh directory; the same crash again, with our
            # target compiled afresh (not from the cache) under the same tool as the node's health probe, is the
            # code's doing: a rejection. A node that crashes on our target too stays no verdict.
            again = root / "submission-again" / "Submission.lean"
            again.parent.mkdir()
            again.write_text(submission.read_text(encoding="utf-8"), encoding="utf-8")
            repeated = await compile_submission(again)
            if crash_signal(repeated) == crash_signal(result):
                probe = root / "probe"
                probe.mkdir()
                healthy = await compile_target(probe)
                if not isinstance(healthy[0], JudgeCause):
                    name = signal_name(crash_signal(result) or 0)
                    return self._verdict(
                        request,
                        JudgeStatus.rejected,
                        started,
                        refusal=JudgeRefusal.crash,
                        detail=f"compiling the submission crashed Lean with {name} twice, each in a fresh directory,"
                        f" while our target compiled cleanly under the same tool: {_tail(repeated.output, 300)}",
                    )
        if failure is not None:
            return unavailable(*failure)
        if result.returncode != 0:
            errors = lean_errors(result.output, submission, submission_line_offset(request.header))
            if errors:
                return self._verdict(
                    request,
                    JudgeStatus.rejected,
                    started,
                    refusal=JudgeRefusal.compile_error,
                    detail="the submission does not compile: " + " | ".join(errors[:5])[:1500],
                )
            cause = JudgeCause.no_output if result.silent else JudgeCause.crashed
            detail = f"compiling the submission failed (exit {result.returncode}) without a Lean error"
            return unavailable(cause, f"{detail}: {_tail(result.output)}")
        if not compiled.exists() and not compiled.is_symlink():
            return unavailable(JudgeCause.crashed, "compiling the submission exited 0 but wrote no .olean")

        # 3. both outputs copied into a fresh directory that no step may write (each reading step gets an empty
        # directory of its own): our target's copy must be what our compile wrote, and before each step both
        # copies must still be what was copied, so no step (a loader exploit in one) changes what the next reads
        inputs = spaces["inputs"]
        target_copy, submission_copy = inputs / "Target.olean", inputs / "Submission.olean"
        try:
            await asyncio.to_thread(copy_regular, olean, target_copy)
            await asyncio.to_thread(copy_regular, compiled, submission_copy)
        except NotRegular as error:
            # Lean writes a plain file; a link (to /dev/zero, to another module) or a device is prover code's
            return unavailable(JudgeCause.sandbox, f"the submission's compile left {error}: no verdict")
        copied = {target_copy: target_hash, submission_copy: file_digest(submission_copy)}

        def changed_inputs() -> JudgeVerdict | None:
            for path, digest in copied.items():
                if not path.is_file() or path.is_symlink() or file_digest(path) != digest:
                    if path == target_copy:
                        self._targets.forget(key)  # compiled afresh next time
                    what = "our target's" if path == target_copy else "the submission's"
                    return unavailable(
                        JudgeCause.sandbox,
                        f"{what} compiled output changed between its compile and the replay: the sandbox did not hold",
                    )
            return None

        async def reading_step(name: str, command: list[str], extra: Sequence[Path] = ()) -> StepResult | JudgeVerdict:
            changed = changed_inputs()
            if changed is not None:
                return changed
            return await run_step(
                [*lake, "-d", checkout, "env", *command],
                spaces[name],
                sandbox,
                deadline,
                read_only=[*tool, inputs, *extra],
                env=judge_environment(),
            )

        # 4. the modules each file imports, read by our own script: for a text that begins with our header
        # Lean records exactly the header's imports, so any other list was written by prover code
        # (a module importing nothing could define its own `Nat`, and SafeVerify compares by name)
        ran = await reading_step(
            "imports",
            ["lean", "--run", str(IMPORTS_SCRIPT), str(target_copy), str(submission_copy)],
            [IMPORTS_SCRIPT.parent],
        )
        if isinstance(ran, JudgeVerdict):
            return ran
        failure = step_failure(ran, "reading the modules' imports", timeout)
        if failure is not None:
            return unavailable(*failure)
        imports = read_imports(ran.output, [target_copy, submission_copy])
        if ran.returncode != 0 or imports is None:
            return unavailable(
                JudgeCause.unreadable,
                f"could not read the compiled modules' imports (exit {ran.returncode}): {_tail(ran.output)}",
            )
        if imports[str(submission_copy)] != imports[str(target_copy)]:
            return unavailable(
                JudgeCause.sandbox,
                f"the submission's compiled module imports {imports[str(submission_copy)]}, not our header's"
                f" {imports[str(target_copy)]}: Lean did not write it from the submitted text",
            )
        # 5. the tool
        ran = await reading_step("replay", ["safe_verify", str(target_copy), str(submission_copy)])
        if isinstance(ran, JudgeVerdict):
            return ran
        verdict = self._read_replay(request, ran, submission_copy, started)
        if verdict.status != JudgeStatus.passed:
            return verdict
        # 6. our own rebuild of every constant of the submission, checked by the kernel from scratch: the
        # pinned tool refuses no unsafe or partial constant and replays the objects as read from the file
        ran = await reading_step(
            "rebuild",
            ["lean", "--run", str(REBUILD_SCRIPT), str(target_copy), str(submission_copy)],
            [REBUILD_SCRIPT.parent],
        )
        if isinstance(ran, JudgeVerdict):
            return ran
        return self._read_rebuild(request, ran, started)

    def _read_rebuild(self, request: JudgeRequest, result: StepResult, started: float) -> JudgeVerdict:
        failure = step_failure(result, "repro's rebuild check", self.settings.timeout_s)
        if failure is not None:
            cause, detail = failure
            return self._verdict(request, JudgeStatus.unavailable, started, cause=cause, detail=detail)
        answer = read_rebuild(result.output, result.returncode)
        if answer is None:
            lines = result.output.strip()
            return self._verdict(
                request,
                JudgeStatus.unavailable,
                started,
                cause=JudgeCause.no_output if not lines else JudgeCause.unreadable,
                detail=f"repro's rebuild check gave no answer (exit {result.returncode}): {_tail(result.output)}",
            )
        if not isinstance(answer, tuple):
            return self._verdict(request, JudgeStatus.passed, started)
        kind, message = answer
        detail = f"repro's rebuild check (not SafeVerify's): {message}"
        if kind == JudgeRefusal.type_mismatch:
            detail += f" ({STRUCTURAL_NOTE})"
        return self._verdict(request, JudgeStatus.rejected, started, refusal=kind, detail=detail)

    def _read_replay(self, request: JudgeRequest, result: StepResult, submission: Path, started: float) -> JudgeVerdict:
        failure = step_failure(result, "safe_verify", self.settings.timeout_s)
        if failure is not None:
            cause, detail = failure
            return self._verdict(request, JudgeStatus.unavailable, started, cause=cause, detail=detail)
        lines = [line.strip() for line in result.output.strip().splitlines() if line.strip()]
        if result.returncode == 0:
            if lines and lines[-1] == FINISHED:
                return self._verdict(request, JudgeStatus.passed, started)
            return self._verdict(
                request,
                JudgeStatus.unavailable,
                started,
                cause=JudgeCause.no_output if not lines else JudgeCause.unreadable,
                detail=f"safe_verify exited 0 without {FINISHED!r} as its last line: {_tail(result.output)}",
            )
        refusal = read_refusal(result.output, submission)
        if refusal is not None:
            kind, message = refusal
            detail = f"{message} ({STRUCTURAL_NOTE})" if kind == JudgeRefusal.type_mismatch else message
            return self._verdict(request, JudgeStatus.rejected, started, refusal=kind, detail=detail)
        return self._verdict(
            request,
            JudgeStatus.unavailable,
            started,
            cause=JudgeCause.no_output if not lines else JudgeCause.unreadable,
            detail=f"safe_verify failed (exit {result.returncode}) without one of its refusals: {_tail(result.output)}",
        )


def load_factory(spec: str) -> Any:
    """``package.module:function`` -> the function (``judge.factory``)."""
    module_name, _, attribute = spec.partition(":")
    try:
        return getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as error:
        raise ValueError(f"judge.factory: cannot load {spec!r}: {error}") from None


class ByToolchainJudge:
    """``judge.backend: auto``: each request goes to the tool pinned for its own toolchain (a release may
    hold rows of several), SafeVerify for v4.9.0/v4.15.0 and comparator from v4.21.0-rc3 on."""

    name = "kernel judge (SafeVerify or comparator by toolchain)"
    real = True

    def __init__(self, safeverify: Judge, comparator: Judge) -> None:
        self.safeverify = safeverify
        self.comparator = comparator

    def judge_for(self, toolchain: str | None) -> Judge:
        return self.comparator if tool_for(toolchain) == "comparator" else self.safeverify

    def revision(self, toolchain: str) -> str | None:
        return self.judge_for(toolchain).revision(toolchain)

    async def judge(self, request: JudgeRequest) -> JudgeVerdict:
        return await self.judge_for(request.toolchain).judge(request)

    def problem(self, toolchain: str) -> tuple[JudgeCause, str] | None:
        return readiness(self.judge_for(toolchain), toolchain)

    @property
    def confinement(self) -> str:
        return str(getattr(self.safeverify, "confinement", ""))


def readiness(judge: Judge, toolchain: str) -> tuple[JudgeCause, str] | None:
    """Why ``judge`` cannot judge ``toolchain`` here (``repro doctor``, before anything runs), or None; a judge
    without a ``problem`` method (a stand-in from ``judge.factory``) is taken as ready."""
    problem = getattr(judge, "problem", None)
    found = problem(toolchain) if callable(problem) else None
    return found if isinstance(found, tuple) else None


def build_judge(settings: JudgeSettings, *, sandbox: str = "bwrap") -> Judge:
    """The judge ``settings`` name. ``sandbox`` is ``lean.sandbox``, the confinement the operator named: the
    judge runs where it works and, for ``bwrap``, confines writes; ``unshare`` or ``none`` named there is the
    opt-in to run unconfined (else such a judge answers ``unavailable``, cause ``unconfined``)."""
    from repro.judge.comparator import ComparatorJudge
    from repro.judge.recorded import recorded_judge

    if settings.backend == JudgeBackendName.recorded:
        return recorded_judge(settings.recording)
    if settings.backend == JudgeBackendName.factory:
        assert settings.factory is not None  # JudgeSettings validates it
        judge = load_factory(settings.factory)(settings)
        if not isinstance(judge, Judge):
            raise ValueError(f"judge.factory: {settings.factory} returned {type(judge).__name__}, not a Judge")
        return judge
    if settings.backend == JudgeBackendName.safeverify:
        return SafeVerifyJudge(settings, named_sandbox=sandbox)
    if settings.backend == JudgeBackendName.comparator:
        return ComparatorJudge(settings, named_sandbox=sandbox)
    return ByToolchainJudge(
        SafeVerifyJudge(settings, named_sandbox=sandbox),
        ComparatorJudge(settings, named_sandbox=sandbox),
    )


async def judge_all(judge: Judge, requests: list[JudgeRequest]) -> list[JudgeVerdict]:
    """Every request judged (concurrency bounded by the judge), in the order given."""
    return list(await asyncio.gather(*(judge.judge(request) for request in requests)))
