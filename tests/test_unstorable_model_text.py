"""Model text that no encoder accepts is cleaned where it enters, and a store write failure is its caller's.

Red team red1, finding R7: a reply holding a lone surrogate (what ``json.loads``, the openai client's decoding,
makes of the valid JSON string "\\ud800") could not be stored by SQLite; the write queue kept the failure and
raised it at the next write of any caller, so an innocent concurrent problem was left unfinished.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from repro.llm.protocol import ModelResponse, clean_model_text
from repro.records import Candidate, CandidateStatus
from repro.store import RunStore
from repro.store.schema import StoreError


def surrogate_responder(request: Any, sample_index: int) -> str | tuple[str, str]:
    """The pipeline world, but the prover's reply for case `surrogate` holds U+D800 alone."""
    from tests.pipeline_world import GOOD_PROOF, _name, case_of, responder

    prompt = request.prompt_text()
    if "Complete the following Lean 4 code" in prompt and case_of(prompt) == "surrogate":
        return GOOD_PROOF.format(name=_name(prompt)).replace("norm_num", "norm_num -- \ud800")
    return responder(request, sample_index)


def test_every_backends_reply_is_cleaned_at_the_client_boundary() -> None:
    response = ModelResponse(
        texts=["by\n  norm_num -- \ud800", "pair 😀 kept", "\udfff\ud800"],
        finish_reasons=["stop", "stop", "stop"],
        backend_id="any",
        model_id="m",
    )
    assert response.texts == ["by\n  norm_num -- \ufffd", "pair 😀 kept", "\ufffd\ufffd"]
    response.model_dump_json()  # encodable now
    assert clean_model_text("no change ∀ x") == "no change ∀ x"


def test_a_reply_with_a_lone_surrogate_is_judged_and_no_other_problem_is_hurt(tmp_path: Path) -> None:
    from repro.app import run
    from repro.config import build_config
    from tests.pipeline_world import world_config, write_problems

    dataset = write_problems(tmp_path / "problems.jsonl", ["surrogate", "retained", "retained"])
    config = world_config(str(dataset))
    for stage in config["models"]:
        config["models"][stage]["script"] = "tests.test_unstorable_model_text:surrogate_responder"
    outcome = run(build_config(config), tmp_path / "run")
    assert outcome.unfinished == 0, outcome.unfinished_examples
    assert not [cause for _, cause in outcome.unfinished_examples if "queued write failed" in (cause or "")]


def test_an_unstorable_record_fails_its_own_caller_at_once(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    store.start_writer()
    try:
        bad = Candidate(candidate_id="c\ud800", problem_id="p", rewrite_index=0, status=CandidateStatus.in_progress)
        with pytest.raises(StoreError, match="cannot store candidate"):
            store.save_candidate(bad)
        store.set_meta("after", "fine")  # the next writer is not told of another's failure
        store.flush()
    finally:
        store.close()


def test_a_queued_write_that_fails_is_raised_to_the_task_that_queued_it_only(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "run")
    store.start_writer()
    seen: dict[str, str] = {}

    async def failing() -> None:
        store._write(lambda connection: connection.execute("INSERT INTO no_such_table VALUES (1)"))
        await asyncio.sleep(0.3)  # the writer thread commits (and fails) the write meanwhile
        try:
            store.flush()
        except StoreError as error:
            seen["failing"] = str(error)

    async def innocent() -> None:
        await asyncio.sleep(0.1)
        for index in range(5):
            store.set_meta(f"k{index}", "v")
            await asyncio.sleep(0.05)
        store.flush()
        seen["innocent"] = "ok"

    async def both() -> None:
        await asyncio.gather(failing(), innocent())

    try:
        asyncio.run(both())
    finally:
        store.close()
    assert seen["innocent"] == "ok"
    assert "a queued write failed" in seen["failing"] and "no_such_table" in seen["failing"]
