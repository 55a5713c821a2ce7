"""The self-test's answer cases (issue 29) hold where their expectations are modelled: on the fake REPL.

On a real backend they show that Lean decides the traps as the answer stage relies on (``repro lean
selftest``); here they check the cases themselves, and that a backend deciding otherwise fails them.
"""

from __future__ import annotations

import pytest

from repro.judge.selftest_answers import ANSWER_CASES, CAST, expectations_hold
from tests.doubles.fake_backend import fake_repl_verifier


@pytest.mark.parametrize(("name", "check"), [(name, check) for name, _, check in ANSWER_CASES])
async def test_each_answer_case_passes_where_lean_behaves_as_modelled(name: str, check: object) -> None:
    verifier = fake_repl_verifier(workers=1)
    try:
        passed, detail = await check(verifier, "")  # type: ignore[operator]
    finally:
        await verifier.close()
    assert passed, f"{name}: {detail}"


async def test_a_backend_that_elaborates_the_cast_otherwise_fails_the_case() -> None:
    """Where Lean refuses our typed statement (another elaboration), the case names what it got."""
    refuse = [{"match": "type_of% @repro_target_\\w+ = type_of%", "messages": [_error("type mismatch")]}]
    verifier = fake_repl_verifier(refuse, workers=1)
    try:
        passed, detail = await expectations_hold(verifier, "", CAST)
    finally:
        await verifier.close()
    assert not passed and "selftest_answer_cast gave none (lean_refused" in detail


def _error(text: str) -> dict[str, object]:
    return {"severity": "error", "pos": {"line": 1, "column": 0}, "endPos": {"line": 1, "column": 1}, "data": text}
