"""What a Lean backend returns, and the protocol every backend speaks."""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field


class InfraStatus(StrEnum):
    """Whether the *infrastructure* answered; a proof's own failure is in the messages, not here."""

    ok = "ok"
    lean_error = "lean_error"  # the REPL itself refused the command (e.g. "Unknown environment.")
    timeout = "timeout"
    crash = "crash"
    out_of_memory = "out_of_memory"
    unavailable = "unavailable"
    # Lean crashed on this code on a fresh worker too, while a known-good probe passed on the same kind of
    # worker: a property of the code (a rejection, ReasonCode.lean_crash), not an outage (repro/lean/repl_pool.py)
    reproducible_crash = "reproducible_crash"
    # the recorded backend (repro.lean.recorded) holds no answer for this code: no verdict, never a pass
    not_recorded = "not_recorded"


class LeanMessage(BaseModel):
    severity: str
    line: int | None = None
    column: int | None = None
    end_line: int | None = None
    end_column: int | None = None
    text: str


class LeanResult(BaseModel):
    infra_status: InfraStatus
    messages: list[LeanMessage] = Field(default_factory=list)
    sorries: list[str] = Field(default_factory=list)
    elapsed_s: float = 0.0
    backend_id: str
    real_lean: bool
    toolchain: str | None = None
    mathlib_revision: str | None = None
    detail: str | None = None
    cached: bool = False

    @property
    def has_error(self) -> bool:
        return any(message.severity == "error" for message in self.messages)

    @property
    def ok(self) -> bool:
        """Lean answered, reported no error and no sorry. Not by itself a verdict: see the gate."""
        return self.infra_status == InfraStatus.ok and not self.has_error and not self.sorries


def _printed_name(name: str) -> str:
    """How Lean writes a declaration name in ``#print axioms``: without ``_root_`` and without ``«»``
    quoting that the name does not need (the names we print are plain identifiers, primes included)."""
    name = name.removeprefix("_root_.")
    return name.replace("«", "").replace("»", "")


def axioms_reported(result: LeanResult, theorem_name: str) -> list[str] | None:
    """Axioms listed by a result that holds *only* the output of our own ``#print axioms NAME``.

    The result must hold exactly one message, an info message that is, in full, Lean's answer for
    exactly ``theorem_name``; anything else (no message, several, an error, another name, extra
    text) is None, which the gate treats as a violation. The name is matched literally, so names
    with primes (``amc_p5'``) are read.
    """
    if len(result.messages) != 1 or result.messages[0].severity != "info":
        return None
    text = result.messages[0].text
    quoted = re.escape("'" + _printed_name(theorem_name) + "'")
    listed = re.fullmatch(quoted + r" depends on axioms: \[([^\]]*)\]\s*", text, re.DOTALL)
    if listed:
        return [axiom.strip() for axiom in listed.group(1).replace("\n", " ").split(",") if axiom.strip()]
    if re.fullmatch(quoted + r" does not depend on any axioms\s*", text):
        return []
    return None


def result_from_repl_json(
    reply: dict[str, Any],
    *,
    backend_id: str,
    real_lean: bool,
    elapsed_s: float,
    toolchain: str | None,
    mathlib_revision: str | None,
    line_offset: int = 0,
) -> LeanResult:
    """Turn a REPL reply (``messages``/``sorries``/``env``, or ``{"message": ...}``) into a result."""
    common: dict[str, Any] = {
        "backend_id": backend_id,
        "real_lean": real_lean,
        "elapsed_s": elapsed_s,
        "toolchain": toolchain,
        "mathlib_revision": mathlib_revision,
    }
    if set(reply) == {"message"}:
        return LeanResult(infra_status=InfraStatus.lean_error, detail=str(reply["message"]), **common)
    messages = []
    for raw in reply.get("messages") or []:
        position = raw.get("pos") or {}
        end = raw.get("endPos") or {}
        start_line, end_line = position.get("line"), end.get("line")
        messages.append(
            LeanMessage(
                severity=str(raw.get("severity", "error")),
                line=start_line - line_offset if isinstance(start_line, int) else None,
                column=position.get("column"),
                end_line=end_line - line_offset if isinstance(end_line, int) else None,
                end_column=end.get("column"),
                text=str(raw.get("data", "")),
            )
        )
    sorries = [str(s.get("goal", "")) for s in reply.get("sorries") or []]
    return LeanResult(infra_status=InfraStatus.ok, messages=messages, sorries=sorries, **common)


def infrastructure_failure(
    verifier: Verifier, status: InfraStatus, detail: str, *, elapsed_s: float = 0.0
) -> LeanResult:
    """A result that records why the infrastructure could not judge the code (never a verdict)."""
    return LeanResult(
        infra_status=status,
        elapsed_s=elapsed_s,
        backend_id=verifier.backend_id,
        real_lean=verifier.real_lean,
        toolchain=verifier.toolchain,
        mathlib_revision=verifier.mathlib_revision,
        detail=detail,
    )


@runtime_checkable
class Verifier(Protocol):
    """Runs Lean on ``header`` + ``code``. Never raises for Lean's or the infrastructure's failures."""

    @property
    def backend_id(self) -> str: ...

    @property
    def real_lean(self) -> bool: ...

    @property
    def toolchain(self) -> str | None: ...

    @property
    def mathlib_revision(self) -> str | None: ...

    async def check(self, code: str, header: str) -> LeanResult: ...

    async def check_sequence(self, commands: list[str], header: str) -> list[LeanResult]:
        """Run ``commands`` in order, each in the environment the previous one left (the first in the
        header's). One result per command holding only that command's messages, positions relative
        to the command. An infrastructure failure ends the list early with that failure last."""
        ...

    async def close(self) -> None: ...


async def preflight_check(verifier: Verifier, header: str, code: str | None = None) -> LeanResult:
    """Whether ``verifier`` can check code now, before any model call: ``code``, by default trivial code under a
    fresh theorem name (so no cache answers for the backend). A backend that checks nothing itself says so
    through its own ``ready(header)`` (the recorded backend: whether its recording holds answers)."""
    import secrets

    layer: object = verifier
    while layer is not None:  # a cache in front: the backend behind it may say
        ready = getattr(layer, "ready", None)
        if callable(ready):
            answer: LeanResult = await ready(header)
            return answer
        layer = getattr(layer, "inner", None)
    return await verifier.check(code or f"theorem repro_preflight_{secrets.token_hex(4)} : True := trivial", header)
