"""The model libraries in the range repro was checked against, and the vLLM stand-in true to the releases it names.

A test here fails when an installed library leaves the checked range (re-run the contract tests under the
new release, then widen ``repro/llm/compat.py`` and ``pyproject.toml`` together), when the extras and
:data:`CHECKED` disagree, and when the stand-in or the backend uses a name the transcribed vLLM releases
do not have.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import tomllib
from pathlib import Path
from typing import Any

import pytest

from repro.config import EngineSettings
from repro.llm.compat import CHECKED, library_version
from repro.llm.local_backends import VLLMBackend, _Job
from repro.llm.protocol import ModelRequest
from tests.doubles import fake_vllm

REPO = Path(__file__).resolve().parents[1]


def _extra(name: str) -> dict[str, str]:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    pins = {}
    for requirement in extras[name]:
        package = requirement.split(">")[0].split("<")[0].split("=")[0].strip()
        pins[package] = requirement[len(package) :]
    return pins


def test_the_extras_pin_exactly_the_checked_ranges() -> None:
    assert _extra("vllm")["vllm"] == CHECKED["vllm"]
    assert _extra("local")["transformers"] == CHECKED["transformers"]
    assert _extra("dev")["transformers"] == CHECKED["transformers"], "the tests run the release users get"


def test_the_installed_transformers_is_one_repro_was_checked_against() -> None:
    found = library_version("transformers")
    assert found.installed is not None, "the dev extra installs transformers: the contract tests need it"
    assert found.inside, found.describe()


def test_a_release_outside_the_range_is_named_with_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    from repro.llm import compat

    monkeypatch.setattr(compat.metadata, "version", lambda package: "0.35.0")
    found = library_version("vllm")
    assert (
        found.inside is False
        and "OUTSIDE" in found.describe()
        and "pip install 'vllm>=0.8.5,<0.34'" in (found.describe())
    )
    monkeypatch.setattr(compat.metadata, "version", lambda package: "0.8.5.post1+cu124")
    assert library_version("vllm").inside is True


# -- the vLLM stand-in against the wheels it names --------------------------------------------------------


def _names(signature: dict[str, Any]) -> list[str]:
    return list(signature["positional"]) + list(signature["keyword_only"])


@pytest.mark.parametrize("release", fake_vllm.RELEASES)
def test_the_stand_ins_sampling_params_are_the_releases(release: str) -> None:
    module = fake_vllm.module(release=release)
    transcribed = fake_vllm.transcribed(release)["SamplingParams"]
    fields = {f.name: f.default for f in dataclasses.fields(module.SamplingParams)}
    assert set(fields) == set(transcribed)
    for name, default in transcribed.items():
        shown = f"RequestOutputKind.{fields[name].name}" if name == "output_kind" else fields[name]
        assert shown == default, f"{release} SamplingParams.{name} defaults to {default!r}"


@pytest.mark.parametrize("release", fake_vllm.RELEASES)
def test_the_stand_in_refuses_top_k_as_the_release_does(release: str) -> None:
    module = fake_vllm.module(release=release)
    module.SamplingParams(top_k=-1, temperature=1.0)
    if release == "0.8.5.post1":
        with pytest.raises(ValueError, match=r"top_k must be -1 \(disable\), or at least 1, got 0"):
            module.SamplingParams(top_k=0, temperature=1.0)
    else:
        module.SamplingParams(top_k=0, temperature=1.0)


@pytest.mark.parametrize("release", fake_vllm.RELEASES)
def test_the_stand_ins_engine_methods_take_what_the_release_takes(release: str) -> None:
    transcribed = fake_vllm.transcribed(release)
    for method in ("add_request", "step", "abort_request", "has_unfinished_requests"):
        wanted = _names(transcribed[f"LLMEngine.{method}"])
        ours = [name for name in inspect.signature(getattr(fake_vllm.LLMEngine, method)).parameters if name != "self"]
        # the stand-in takes the union of both releases' parameters; each release's must be a prefix-compatible subset
        assert wanted[:3] == ours[: len(wanted[:3])], f"{release} LLMEngine.{method}{wanted}"
        assert (
            set(wanted) <= set(ours)
            or method == "add_request"
            and set(wanted) - set(ours) <= {"prompt_adapter_request"}
        )
    assert _names(transcribed["LLM.__init__"])[0] == "model"


@pytest.mark.parametrize("release", fake_vllm.RELEASES)
def test_the_backend_calls_vllm_only_with_names_the_release_has(release: str) -> None:
    transcribed = fake_vllm.transcribed(release)
    engine = EngineSettings(tensor_parallel_size=2)
    arguments = VLLMBackend(model_id="m", engine=engine, max_model_len=40960).engine_arguments()
    accepted = set(_names(transcribed["LLM.__init__"])) | set(transcribed["EngineArgs"])
    assert set(arguments) <= accepted
    recorded: dict[str, Any] = {}

    class Recorder:
        def __init__(self, **kwargs: Any) -> None:
            recorded.update(kwargs)

    module = type("vllm", (), {"SamplingParams": Recorder})
    job = _Job("id", ModelRequest(prompt="p", temperature=1.0, top_p=0.95), None, None, 0.0)  # type: ignore[arg-type]
    VLLMBackend._params(module, job)
    assert set(recorded) <= set(transcribed["SamplingParams"])
    assert recorded["top_k"] == -1, "the one 'off' value every release accepts"


@pytest.mark.skipif(importlib.util.find_spec("vllm") is None, reason="vllm is not installed (it needs a CUDA torch)")
def test_an_installed_vllm_has_the_names_the_backend_uses() -> None:
    """Where vllm is installed (a GPU node with repro[vllm]), its own classes answer for the stand-in."""
    import vllm
    from vllm.v1.engine.llm_engine import LLMEngine

    found = library_version("vllm")
    assert found.inside, found.describe()
    add = list(inspect.signature(LLMEngine.add_request).parameters)
    assert add[1:4] == ["request_id", "prompt", "params"]
    fields = set(inspect.signature(vllm.SamplingParams).parameters)
    assert {"n", "temperature", "top_p", "top_k", "min_p", "repetition_penalty", "max_tokens", "seed"} <= fields
    vllm.SamplingParams(top_k=-1, temperature=1.0)
