"""The endpoint preflight reads what the server serves: the model's name and its context length."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from repro.config import build_config
from repro.llm.preflight import check_endpoints
from tests.doubles.fake_lean import fake_lean_settings
from tests.doubles.judge import STAND_IN_SETTINGS
from tests.doubles.openai_server import OpenAITestServer


def config_for(base_url: str, **prove: object) -> object:
    settings = {"backend": "openai", "model": "Goedel-LM/Goedel-Prover-V2-32B", "base_url": base_url}
    settings["api_key_env"] = None
    settings.update(prove)
    return build_config({"models": {"prove": settings}})


def check(base_url: str, **prove: object) -> tuple[bool, str]:
    (result,) = asyncio.run(check_endpoints(config_for(base_url, **prove)))  # type: ignore[arg-type]
    return result.ok, result.detail


def test_a_path_served_model_is_refused_with_the_served_name_suggested() -> None:
    with OpenAITestServer(served_models=["/models/Goedel-Prover-V2-32B"], max_model_len=40960) as server:
        ok, detail = check(server.base_url)
    assert not ok and "is not served here" in detail
    assert "model: '/models/Goedel-Prover-V2-32B' in models.prove" in detail


def test_a_budget_that_cannot_fit_the_served_context_is_refused_before_any_call() -> None:
    with OpenAITestServer(served_models=["Goedel-LM/Goedel-Prover-V2-32B"], max_model_len=32768) as server:
        ok, detail = check(server.base_url, max_tokens=32768)
        assert not ok and "max_model_len: 32768 in models.prove" in detail and "every call would be a 400" in detail
        ok, detail = check(server.base_url, max_tokens=40960, max_model_len=40960)
        assert not ok and "--max-model-len 40960" in detail
        ok, detail = check(server.base_url, max_tokens=40960, max_model_len=32768)
        assert ok, detail  # max_tokens is lowered per request to fit the context
        assert server.requests == [], "the preflight sends no completion"


def test_the_goedel_profile_fits_a_server_started_as_its_harness_starts_it() -> None:
    with OpenAITestServer(served_models=["Goedel-LM/Goedel-Prover-V2-32B"], max_model_len=40960) as server:
        ok, detail = check(server.base_url, profile="goedel-prover-v2-32b")
    assert ok, detail


def test_a_server_without_a_models_route_is_reachable_not_down() -> None:
    for status in (501, 405):
        with OpenAITestServer(served_models=["x"], models_status=status) as server:
            ok, detail = check(server.base_url)
        assert ok and f"HTTP {status}" in detail and "not checked" in detail
    with OpenAITestServer(served_models=["x"], models_status=503) as server:
        ok, detail = check(server.base_url)
    assert not ok and "failing" in detail


def test_a_study_refuses_a_prover_whose_endpoint_serves_another_name(tmp_path: Path) -> None:
    from repro.study import StudyError, open_study, parse_prover_spec, run_study
    from repro.study.records import StudySettings

    statements = tmp_path / "s.jsonl"
    row = {"id": "a", "statement": "theorem a : 1 = 1 := by sorry", "header": "import Mathlib", "theorem_name": "a"}
    statements.write_text(json.dumps(row) + "\n")
    with OpenAITestServer(served_models=["/ckpt/goedel"], max_model_len=40960) as server:
        prover = parse_prover_spec(f"goedel=goedel-prover-v2-32b@{server.base_url}", api_key_env=None)
        settings = StudySettings(k=1, lean=fake_lean_settings(), judge=STAND_IN_SETTINGS)
        store = open_study(
            tmp_path / "study", statements_path=statements, provers=[prover], settings=settings, resume=False
        )
        try:
            with pytest.raises(StudyError, match="'/ckpt/goedel' in the settings of prover goedel"):
                asyncio.run(run_study(store))
        finally:
            store.close()
        assert server.requests == []
