"""Which failed outputs salvage may read again: near misses, never cheats, never unjudged checks."""

from __future__ import annotations

from repro.judge.verdict import Verdict
from repro.records import ReasonCode

INFRASTRUCTURE = frozenset({ReasonCode.lean_timeout, ReasonCode.lean_unavailable, ReasonCode.static_timeout})
# Refusals salvage never revisits: signs of cheating (the gate refused the prover's own code for what it
# contains), an unusable statement, and verdicts that were never reached (left for --resume).
NOT_SALVAGED = frozenset(
    {
        ReasonCode.forbidden_construct,
        ReasonCode.sorry,
        ReasonCode.axiom_violation,
        ReasonCode.statement_not_single_theorem,
        # the gate's size caps: salvage would read, uncapped, what the gate refused to read (adversary 5c)
        ReasonCode.reply_too_long,
        ReasonCode.too_many_fences,
        ReasonCode.too_many_tokens,
    }
    | INFRASTRUCTURE
)


def worth_salvaging(verdict: Verdict, *, without_lean: bool = False) -> bool:
    """Whether a failed verdict is a near miss that text repairs might turn.

    ``without_lean``: Lean's absence is no reason to skip (an audit on a machine without Lean still
    counts the variants and what passes the static layer).
    """
    blocking = NOT_SALVAGED - INFRASTRUCTURE if without_lean else NOT_SALVAGED
    return not verdict.verified and bool(verdict.reasons) and not set(verdict.reasons) & blocking
