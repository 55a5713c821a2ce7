"""One Lean header per run: the prover profile's harness header unless the config sets ``lean.header``."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from repro.config import (
    DEFAULT_HEADER,
    ConfigError,
    RunConfig,
    config_warnings,
    dump_config,
    load_config,
    resume_changes,
)
from repro.provers import get_profile

REPO = Path(__file__).resolve().parents[1]


def test_the_goedel_configs_check_with_the_harness_header() -> None:
    goedel = get_profile("goedel-prover-v2-32b")
    assert goedel.max_heartbeats == 0 and "maxHeartbeats 0" in goedel.lean_header
    for name in ("gsm8k.yaml", "math.yaml"):
        config = load_config(REPO / "configs" / name)
        assert config.lean.header == goedel.lean_header, name
        assert not any("lean.header" in warning for warning in config_warnings(config))
        # what the run directory stores (and --resume compares) is the resolved header
        stored = RunConfig.model_validate(yaml.safe_load(dump_config(config)))
        assert stored.lean.header == goedel.lean_header


def test_an_explicit_header_wins_and_is_reported_as_a_departure() -> None:
    config = load_config(REPO / "configs" / "gsm8k.yaml", ["lean.header=import Mathlib"])
    assert config.lean.header == "import Mathlib"
    [warning] = [w for w in config_warnings(config) if "lean.header" in w]
    assert "goedel-prover-v2-32b" in warning and "maxHeartbeats 0" in warning


def test_without_a_profile_the_default_header_stays() -> None:
    assert load_config(None).lean.header == DEFAULT_HEADER
    scripted = RunConfig.model_validate({"models": {"prove": {"backend": "scripted", "model": "m"}}})
    assert scripted.lean.header == DEFAULT_HEADER


def test_resume_refuses_a_header_change_however_it_comes() -> None:
    stored = load_config(REPO / "configs" / "gsm8k.yaml")
    explicit = load_config(REPO / "configs" / "gsm8k.yaml", ["lean.header=import Mathlib"])
    with pytest.raises(ConfigError, match="lean.header"):
        resume_changes(stored, explicit)
    kimina = load_config(REPO / "configs" / "gsm8k.yaml", ["models.prove.profile=kimina-prover-preview-distill-7b"])
    assert "maxHeartbeats 400000" in kimina.lean.header
    with pytest.raises(ConfigError, match="lean.header"):  # another profile brings another header
        resume_changes(stored, kimina)

    assert "lean.header" not in resume_changes(stored, load_config(REPO / "configs" / "gsm8k.yaml"))
