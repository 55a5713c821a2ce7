"""Gold-standard re-check of a verified proof: rebuild it from source and replay it in Lean's kernel.

Lean's reference manual ("Validating a Lean Proof") escalates for untrusted, possibly malicious proofs
from ``#print axioms`` to kernel replay of the compiled environment (``lean4checker``) to
``leanprover/comparator`` (build in a sandbox, export, replay in the kernel, compare the statement with
the challenge). Our gate is the first layer; this module is the last one.

Which tool, and why (read from the sources, not assumed):

- ``leanprover/comparator`` cannot serve our pinned toolchains: its first commit is built with
  ``leanprover/lean4:v4.21.0-rc3`` (``lean-toolchain`` at 437574b, 2025-06-06) and it has only moved
  forward since (v4.34.0-rc2 at HEAD); it needs ``lean4export`` at a matching version and ``landrun``.
  Provers use v4.9.0 (DeepSeek-Prover-V1.5/V2) and v4.15.0 (Kimina, Goedel-Prover-V2).
- ``leanprover/lean4checker`` has ``v4.9.0`` and ``v4.15.0`` tags, but only replays a module's
  declarations; it does not compare the proved statement with ours.
- ``GasStationManager/SafeVerify`` does both, at exactly our toolchains: branch
  ``minif2f-deepseek-check`` (Lean v4.9.0, Mathlib v4.9.0) and ``minif2f-kimina-check`` (Lean v4.15.0,
  Mathlib v4.15.0). It replays the target (our statement with ``sorry``) and the submission with
  ``Environment.replay`` (lean4checker's code), then checks that every target theorem exists in the
  submission with the same kind, type and universe parameters, that the submission's constants use
  only ``propext``, ``Quot.sound`` and ``Classical.choice``, and refuses ``partial``/``unsafe``
  definitions. Usage (its ``verify.py``): ``lake env lean -o X.olean X.lean`` for both files, then
  ``lake env safe_verify target.olean submission.olean``; exit 0 and "Finished with no errors." mean
  accepted.

So replay here is SafeVerify, pinned per toolchain (``SAFEVERIFY_PINS``), with every compile and
replay run in the sandbox of :mod:`repro.lean.sandbox` (elaborating the submission runs prover code).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import time
from enum import StrEnum
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from repro.lean.sandbox import SandboxStatus, detect_sandbox, sandboxed, toolchain_binary

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


class ReplayStatus(StrEnum):
    replayed = "replayed"  # rebuilt, replayed in the kernel, same statement, standard axioms only
    rejected = "rejected"  # the tool said no: the proof does not stand on its own
    unavailable = "unavailable"  # no pinned tool for this toolchain, or it is not built here
    timeout = "timeout"
    error = "error"  # the tool crashed or said something we cannot read: never a pass


class ReplayRequest(BaseModel):
    key: str  # the row's id, for messages
    header: str  # trusted header (imports, opens), never the row's own
    statement: str  # our statement, ending ``:= by sorry``
    proof_code: str  # the code the gate verified: our statement with the prover's proof
    toolchain: str | None = None


class ReplayVerdict(BaseModel):
    key: str
    status: ReplayStatus
    tool: str
    tool_revision: str | None = None
    toolchain: str | None = None
    real: bool  # False for the CI fake: its verdict replays nothing
    sandbox: str = ""
    detail: str = ""
    elapsed_s: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status == ReplayStatus.replayed


@runtime_checkable
class ReplayBackend(Protocol):
    name: str
    real: bool

    async def replay(self, request: ReplayRequest) -> ReplayVerdict: ...


class ReplaySettings(BaseModel):
    backend: Literal["safeverify", "fake"] = "safeverify"
    # one SafeVerify checkout per toolchain: TOOLS_DIR/<toolchain>/ (built with `lake build`)
    tools_dir: Path = Field(
        default_factory=lambda: Path(os.environ.get("REPRO_SAFEVERIFY_DIR", "~/.cache/repro/safeverify")).expanduser()
    )
    default_toolchain: str = "v4.15.0"
    timeout_s: float = Field(600.0, gt=0)
    workers: int = Field(2, ge=1)


def toolchain_key(toolchain: str | None, default: str) -> str:
    """``leanprover/lean4:v4.15.0`` (provenance) or ``v4.15.0`` (profiles) -> ``v4.15.0``."""
    if not toolchain:
        return default
    return toolchain.rsplit(":", 1)[-1].strip()


def _source(header: str, body: str) -> str:
    return f"{header.rstrip()}\n\n{body.strip()}\n"


class SafeVerifyReplay:
    """Subprocesses to the pinned SafeVerify of the row's toolchain, each in the sandbox.

    ``lake`` is the program run for both steps (``lake -d CHECKOUT env lean -o …`` and ``lake -d CHECKOUT
    env safe_verify …``); the CI fake (:mod:`repro.lean.fake_safe_verify`) is a ``lake`` that speaks the
    same command lines, so everything here but Lean itself runs in the tests.
    """

    name = "SafeVerify"

    def __init__(
        self,
        settings: ReplaySettings,
        *,
        lake: list[str] | None = None,
        real: bool = True,
        sandbox: SandboxStatus | None = None,
    ) -> None:
        self.settings = settings
        self.real = real
        self._default_lake = lake is None
        self.lake = lake or [shutil.which("lake") or "lake"]
        self.sandbox = sandbox or detect_sandbox()
        self._slots = asyncio.Semaphore(settings.workers)

    def checkout(self, toolchain: str) -> Path:
        return self.settings.tools_dir / toolchain

    def _missing(self, toolchain: str) -> str | None:
        if toolchain not in SAFEVERIFY_PINS:
            return f"no pinned SafeVerify for toolchain {toolchain} (pinned: {', '.join(SAFEVERIFY_PINS)})"
        if not (self.checkout(toolchain) / "lakefile.toml").is_file():
            return (
                f"SafeVerify for {toolchain} is not set up at {self.checkout(toolchain)}"
                " (docker/Dockerfile builds it; or set REPRO_SAFEVERIFY_DIR)"
            )
        if self.real and not shutil.which(self.lake[0]):
            return f"{self.lake[0]} not found: no Lean toolchain on this machine"
        return None

    async def _run(self, command: list[str], work: Path, deadline: float) -> tuple[int, str]:
        process = await asyncio.create_subprocess_exec(
            *sandboxed(command, work, self.sandbox),
            cwd=work,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            output, _ = await asyncio.wait_for(process.communicate(), timeout=max(deadline - time.monotonic(), 0.1))
        except TimeoutError:
            process.kill()
            await process.wait()
            raise
        return process.returncode or 0, output.decode("utf-8", "replace")

    async def replay(self, request: ReplayRequest) -> ReplayVerdict:
        toolchain = toolchain_key(request.toolchain, self.settings.default_toolchain)
        pin = SAFEVERIFY_PINS.get(toolchain)
        base = {
            "key": request.key,
            "tool": self.name,
            "tool_revision": pin.commit if pin else None,
            "toolchain": toolchain,
            "real": self.real,
            "sandbox": self.sandbox.describe(),
        }
        missing = self._missing(toolchain)
        if missing:
            return ReplayVerdict(status=ReplayStatus.unavailable, detail=missing, **base)
        checkout = str(self.checkout(toolchain).resolve())
        # the checkout's own toolchain (elan's shim would pick one from the work directory instead)
        lake = [toolchain_binary("lake", checkout)] if self._default_lake else self.lake
        started = time.monotonic()
        deadline = started + self.settings.timeout_s
        async with self._slots:
            with tempfile.TemporaryDirectory(prefix="repro-replay-") as directory:
                work = Path(directory)
                target, submission = work / "Target.lean", work / "Submission.lean"
                target.write_text(_source(request.header, request.statement), encoding="utf-8")
                submission.write_text(_source(request.header, request.proof_code), encoding="utf-8")
                try:
                    for source in (target, submission):
                        olean = source.with_suffix(".olean")
                        code, output = await self._run(
                            [*lake, "-d", checkout, "env", "lean", "-o", str(olean), str(source)], work, deadline
                        )
                        if code != 0 or not olean.is_file():
                            status = ReplayStatus.rejected if source is submission else ReplayStatus.error
                            return ReplayVerdict(
                                status=status,
                                detail=f"{source.name} did not compile (exit {code}): {output.strip()[-800:]}",
                                elapsed_s=round(time.monotonic() - started, 3),
                                **base,
                            )
                    code, output = await self._run(
                        [*lake, "-d", checkout, "env", "safe_verify", str(target.with_suffix(".olean")),
                         str(submission.with_suffix(".olean"))],
                        work,
                        deadline,
                    )  # fmt: skip
                except TimeoutError:
                    return ReplayVerdict(
                        status=ReplayStatus.timeout,
                        detail=f"no answer within {self.settings.timeout_s:g} s",
                        elapsed_s=round(time.monotonic() - started, 3),
                        **base,
                    )
                except OSError as error:
                    return ReplayVerdict(status=ReplayStatus.error, detail=f"could not start: {error}", **base)
        elapsed = round(time.monotonic() - started, 3)
        if code == 0 and "Finished with no errors." in output:
            return ReplayVerdict(status=ReplayStatus.replayed, detail="", elapsed_s=elapsed, **base)
        if code == 0:  # a zero exit without the closing line is not an acceptance we can read
            return ReplayVerdict(status=ReplayStatus.error, detail=output.strip()[-800:], elapsed_s=elapsed, **base)
        return ReplayVerdict(status=ReplayStatus.rejected, detail=_reason(output), elapsed_s=elapsed, **base)


def _reason(output: str) -> str:
    """SafeVerify's own words: the uncaught exception's message, else the output's tail."""
    for line in reversed(output.strip().splitlines()):
        if "uncaught exception:" in line:
            return line.split("uncaught exception:", 1)[1].strip()
    return output.strip()[-800:]


def build_replayer(settings: ReplaySettings) -> SafeVerifyReplay:
    """The real SafeVerify, or the CI fake (a ``lake`` stand-in, verdicts marked not real)."""
    if settings.backend == "fake":
        import sys

        _fake_checkouts(settings.tools_dir)
        script = Path(__file__).parents[1] / "lean" / "fake_safe_verify.py"
        return SafeVerifyReplay(settings, lake=[sys.executable, str(script)], real=False)
    return SafeVerifyReplay(settings)


def _fake_checkouts(tools_dir: Path) -> None:
    """One directory per pinned toolchain, where the real setup leaves a SafeVerify checkout."""
    for toolchain, pin in SAFEVERIFY_PINS.items():
        marker = tools_dir / toolchain / "lakefile.toml"
        if not marker.is_file():
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.write_text(f"# fake SafeVerify checkout (CI), standing for {pin.branch} at {pin.commit}\n")


async def replay_all(backend: ReplayBackend, requests: list[ReplayRequest]) -> list[ReplayVerdict]:
    """Every request replayed (concurrency bounded by the backend), in the order given."""
    return list(await asyncio.gather(*(backend.replay(request) for request in requests)))
