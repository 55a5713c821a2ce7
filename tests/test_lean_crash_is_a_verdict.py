"""Code that crashes Lean on a fresh worker too is rejected (lean_crash); a backend that crashes on everything
is still an outage (red team red1, finding R6).

A crash was `lean_unavailable` after one retry, an infrastructure reason, so a reply that crashes Lean every
time (real ones pass the screen: leanprover/lean4#8273, `set_option maxRecDepth 10000 in` + `decide`; #4773,
`refine ?loop; exact ?loop`) left its problem unfinished, and every `--resume` replayed it. The REPL pool now
runs a known-good probe after the crash repeats on a fresh worker: if the probe passes, the code is what
crashes Lean; if it fails too, the backend is down.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from repro.lean.protocol import InfraStatus
from tests.doubles.fake_backend import fake_repl_verifier

CRASH_MARKER = "crashes_lean_every_time"
HEADER = "import Mathlib\n"


def crashing_responder(request: Any, sample_index: int) -> str | tuple[str, str]:
    """tests.pipeline_world, but every prover sample of case `crasher` makes the fake REPL exit as Lean does
    after "Stack overflow detected. Aborting." (exit 134)."""
    from tests.pipeline_world import GOOD_PROOF, _name, case_of, responder

    prompt = request.prompt_text()
    if "Complete the following Lean 4 code" in prompt and case_of(prompt) == "crasher":
        return GOOD_PROOF.format(name=_name(prompt)).replace("norm_num", f"norm_num -- {CRASH_MARKER}")
    return responder(request, sample_index)


def _pool(tmp_path: Path, match: str) -> Any:
    return fake_repl_verifier([{"match": match, "action": "crash", "exit_code": 134}], workers=1)


def test_code_that_crashes_a_fresh_worker_too_is_a_reproducible_crash(tmp_path: Path) -> None:
    pool = _pool(tmp_path, CRASH_MARKER)

    async def go() -> tuple[Any, Any]:
        crashed = await pool.check(f"theorem t : True := by\n  trivial -- {CRASH_MARKER}", HEADER)
        fine = await pool.check("theorem u : True := trivial", HEADER)
        return crashed, fine

    try:
        crashed, fine = asyncio.run(go())
    finally:
        asyncio.run(pool.close())
    assert crashed.infra_status == InfraStatus.reproducible_crash, crashed
    assert "again on a fresh worker" in (crashed.detail or "")
    assert fine.infra_status == InfraStatus.ok  # the pool still works for other code


def test_a_backend_that_crashes_on_everything_is_still_no_verdict(tmp_path: Path) -> None:
    pool = _pool(tmp_path, "theorem")  # every command crashes, the probe too: the backend is broken

    try:
        crashed = asyncio.run(pool.check("theorem t : True := trivial", HEADER))
    finally:
        asyncio.run(pool.close())
    assert crashed.infra_status == InfraStatus.crash, crashed


def test_a_reply_that_crashes_lean_every_time_is_rejected_not_left_unfinished(tmp_path: Path) -> None:
    from repro.app import run
    from repro.config import build_config
    from repro.records import ReasonCode
    from repro.store import RunStore
    from tests.pipeline_world import world_config, write_problems

    dataset = write_problems(tmp_path / "problems.jsonl", ["crasher"])
    config = world_config(str(dataset))
    for stage in ("rewrite", "screen", "formalize", "align", "prove", "extract", "classify"):
        config["models"][stage]["script"] = "tests.test_lean_crash_is_a_verdict:crashing_responder"
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"match": CRASH_MARKER, "action": "crash", "exit_code": 134}]))
    config["lean"]["factory_options"] = {"rules": str(rules)}
    config["retries"] = {"rewrites_per_problem": 1, "formalizations_per_rewrite": 1}
    outcome = run(build_config(config), tmp_path / "run")
    assert outcome.unfinished == 0, outcome.unfinished_examples
    with RunStore(tmp_path / "run", create=False) as store:
        reasons = {attempt.reason for attempt in store.attempts(stage="verify")}
    assert ReasonCode.lean_crash in reasons
