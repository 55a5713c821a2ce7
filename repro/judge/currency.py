"""Whether a stored pass was given by today's judge: the tool at today's pin for its toolchain, with today's
version of repro's own checks around it (:data:`repro.judge.kernel.JUDGE_CHECKS`).

A pin moves for a reason (SafeVerify's March 2026 security fixes are exactly such a reason), and our checks
grow when a judge was found too weak (the import check, the rebuild check): a pass of the older judge says
nothing about what today's would say. So such a pass is never released as verified
(:func:`repro.release.rows.row_provenance`), a resumed run judges the candidate again
(:func:`repro.store.RunStore.reopen_outdated_judgements`), and ``reverify`` names the rows judged so.
"""

from __future__ import annotations

from repro.judge.comparator import COMPARATOR_PINS, ComparatorJudge
from repro.judge.kernel import JUDGE_CHECKS, SAFEVERIFY_PINS, SafeVerifyJudge, toolchain_key

__all__ = ["judge_outdated"]


def judge_outdated(tool: str | None, revision: str | None, toolchain: str | None, checks: int | None) -> str | None:
    """Why a pass by ``tool`` at ``revision`` on ``toolchain`` with our ``checks`` is not today's judge's, or None.

    A tool this repro does not pin, an unknown revision and checks never recorded (a pass stored before they
    were) are all outdated: nothing says today's judge would pass it."""
    key = toolchain_key(toolchain)
    pins: dict[str, str] = {}
    if tool == SafeVerifyJudge.name:
        pins = {name: pin.commit for name, pin in SAFEVERIFY_PINS.items()}
    elif tool == ComparatorJudge.name:
        pins = {name: pin.commit for name, pin in COMPARATOR_PINS.items()}
    else:
        return f"judged by {tool or 'no judge'}, not a tool this repro pins"
    pinned = pins.get(key)
    if pinned is None:
        return f"judged by {tool} on {key}, a toolchain this repro pins no {tool} for"
    if revision != pinned:
        found = (revision or "an unrecorded revision")[:12]
        return f"judged by {tool} at {found}, not today's pin {pinned[:12]} for {key}"
    if checks != JUDGE_CHECKS:
        said = "checks never recorded" if checks is None else f"checks version {checks}"
        return f"judged with repro's {said}, not today's {JUDGE_CHECKS} (the judge checks more now)"
    return None
