"""Salvage stage: repaired texts of a failed sample, each judged by the same soundness gate (no model call).

A variant counts only through :func:`repro.lean.verify_proof` with our statement, exactly as a raw
sample does; the repairs never decide anything. Two further limits keep salvage from being a second
chance for a cheat: an output the gate refused for a sign of cheating (a forbidden construct, a sorry,
a non-standard axiom) is never salvaged, and an output whose check failed for infrastructure (Lean
down, timeout) is left for ``--resume``, not re-read. Variants are checked one after another and the
first verified one ends the salvage of that sample, so a sample costs at most ``limit`` Lean checks.
"""

from __future__ import annotations

import asyncio

from pydantic import BaseModel

from repro.config import StaticLimits
from repro.judge.screen import verify_proof
from repro.judge.verdict import Verdict
from repro.lean.protocol import Verifier
from repro.lean.text import StaticTimeout, time_limit
from repro.records import ReasonCode
from repro.salvage import SalvageVariant, salvage_variants
from repro.salvage.policy import worth_salvaging
from repro.stages.common import StageResult, Stopwatch
from repro.stages.prove import verdict_result


class SalvageCheck(BaseModel):
    """One variant and the gate's verdict on it, with the record the store keeps."""

    variant: SalvageVariant
    verdict: Verdict
    result: StageResult


async def salvage_sample(
    statement: str,
    text: str,
    finish_reason: str,
    original: Verdict,
    verifier: Verifier,
    *,
    header: str,
    allow_native_decide: bool,
    limit: int,
    limits: StaticLimits | None = None,
) -> list[SalvageCheck]:
    """The variants of one failed sample, checked in order until one is verified."""
    if not worth_salvaging(original):
        return []
    checks: list[SalvageCheck] = []
    # the same code again is worth a check only where the gate refused the raw text before Lean saw the
    # code (special tokens around it, the length limit); cheats never get here
    # compared with the variants in the prover's own text (imports included), not in what Lean checked
    checked = original.prover_code if original.lean_steps else None
    seconds = (limits or StaticLimits()).timeout_s

    def variants() -> list[SalvageVariant]:
        # off the event loop and under the static layer's time limit (adversary 5c): salvage reads the
        # prover's reply again, and a slow read must not stall every other sample
        with time_limit(seconds):
            try:
                return list(salvage_variants(statement, text, finish_reason, limit=limit, original_code=checked))
            except StaticTimeout:
                return []

    for variant in await asyncio.to_thread(variants):
        clock = Stopwatch()
        verdict = await verify_proof(
            statement, variant.text, verifier, header=header, allow_native_decide=allow_native_decide, limits=limits
        )
        result = verdict_result(statement, variant.text, verdict, clock.elapsed())
        result.output.update({"salvage_kinds": [kind.value for kind in variant.kinds], "text": variant.text})
        checks.append(SalvageCheck(variant=variant, verdict=verdict, result=result))
        if verdict.verified or ReasonCode.lean_unavailable in verdict.reasons:
            break
    return checks
