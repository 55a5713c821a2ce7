"""`repro doctor` says which sampling values a served model would apply to what a stage leaves out."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from repro.app import doctor
from repro.config import ModelSettings, build_config
from repro.llm.server_defaults import sampling_exposures
from tests.doubles.fake_lean import fake_lean_section
from tests.doubles.openai_server import OpenAITestServer

# what Qwen3's published generation_config.json sets (Goedel-Prover-V2 is a Qwen3 fine-tune)
QWEN3_GENERATION_CONFIG = {"do_sample": True, "temperature": 0.6, "top_k": 20, "top_p": 0.95, "eos_token_id": 151645}


def _checkpoint(tmp_path: Path, values: dict[str, object]) -> Path:
    directory = tmp_path / "goedel-32b"
    directory.mkdir()
    (directory / "generation_config.json").write_text(json.dumps(values))
    return directory


def _served(base_url: str, model: str, **fields: object) -> ModelSettings:
    return ModelSettings.model_validate({"model": model, "base_url": base_url, "api_key_env": None, **fields})


def test_a_stage_that_leaves_fields_out_is_told_what_the_checkpoint_would_set(tmp_path: Path) -> None:
    checkpoint = _checkpoint(tmp_path, {**QWEN3_GENERATION_CONFIG, "repetition_penalty": 1.05})
    with OpenAITestServer(version="0.33.0") as server:
        plain = _served(server.base_url, str(checkpoint), temperature=1.0, top_p=0.95)
        profiled = _served(server.base_url, str(checkpoint), profile="goedel-prover-v2-32b")
        bare, harness = asyncio.run(sampling_exposures([("prove", plain), ("prove", profiled)]))
    assert bare.exposed == {"top_k": 20, "repetition_penalty": 1.05}, "temperature and top_p are always sent"
    assert "vLLM 0.33.0" in bare.describe() and "top_k=20" in bare.describe()
    assert "--generation-config vllm" in bare.describe()
    assert harness.omitted == [] and "no sampling value is left" in harness.describe()
    assert harness.sent["top_k"] == -1 and harness.sent["repetition_penalty"] == 1.0


def test_a_checkpoint_not_on_this_machine_is_said_to_be_unknown() -> None:
    with OpenAITestServer() as server:
        (exposure,) = asyncio.run(sampling_exposures([("formalize", _served(server.base_url, "org/not-here-7b"))]))
    assert exposure.checkpoint_values is None and exposure.server_version is None
    assert "unknown here" in exposure.describe() and "not vLLM" in exposure.describe()


def test_doctor_reports_the_sampling_of_every_served_stage(tmp_path: Path) -> None:
    checkpoint = _checkpoint(tmp_path, QWEN3_GENERATION_CONFIG)
    with OpenAITestServer(version="0.8.5.post1", served_models=[str(checkpoint)]) as server:
        endpoint = {"backend": "openai", "base_url": server.base_url, "api_key_env": None, "model": str(checkpoint)}
        stages = {stage: dict(endpoint) for stage in ("rewrite", "screen", "formalize", "align")}
        config = build_config(
            {
                "models": {**stages, "prove": {**endpoint, "profile": "goedel-prover-v2-32b"}},
                "lean": fake_lean_section(selftest=False),
            }
        )
        lines = {line.name: line for line in doctor(config)}
    prove = lines[f"sampling of prove ({checkpoint})"]
    assert "no sampling value is left to the server" in prove.detail
    formalize = lines[f"sampling of formalize ({checkpoint})"]
    assert "vLLM 0.8.5.post1" in formalize.detail and "top_k=20" in formalize.detail
    assert not formalize.required, "informational: a run still works"


def test_a_study_keeps_no_more_requests_in_flight_than_the_servers_kv_cache_holds() -> None:
    """k samples of up to 40,960 tokens per request: on a cache of 819,200 tokens (vLLM's "# GPU blocks" 51,200 x
    16) five requests of k=4 fit whole; an eighth would wait in vLLM's queue and could time out there."""
    from repro.study.app import served_workers
    from repro.study.provers import parse_prover_spec
    from repro.study.records import StudySettings

    with OpenAITestServer(kv_cache=(51200, 16)) as reporting, OpenAITestServer() as silent:
        provers = [
            parse_prover_spec(f"goedel=goedel-prover-v2-32b@{reporting.base_url}", api_key_env=None),
            parse_prover_spec(f"other=deepseek-prover-v2-7b@{silent.base_url}", api_key_env=None),
        ]
        parallel = asyncio.run(served_workers(provers, StudySettings(k=4)))
        sequential = asyncio.run(served_workers(provers, StudySettings(k=4, strategy="sequential")))
    assert parallel == {"goedel": 5}, "a server that reports no cache keeps its max_concurrency"
    assert sequential == {"goedel": 8}, "one sample per request: 20 fit, max_concurrency (8) bounds it"
