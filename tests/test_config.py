from __future__ import annotations

from pathlib import Path

import pytest

from repro.config import ConfigError, load_config


def test_yaml_and_toml_load_the_same_settings(tmp_path: Path) -> None:
    (tmp_path / "run.yaml").write_text("name: a\nprove: {k: 5}\nlean: {timeout_s: 30}\n")
    (tmp_path / "run.toml").write_text('name = "a"\n[prove]\nk = 5\n[lean]\ntimeout_s = 30\n')
    assert load_config(tmp_path / "run.yaml") == load_config(tmp_path / "run.toml")
    assert load_config(tmp_path / "run.yaml").prove.k == 5


def test_set_overrides_nested_keys_with_typed_values(tmp_path: Path) -> None:
    (tmp_path / "run.yaml").write_text("prove: {k: 3}\n")
    config = load_config(
        tmp_path / "run.yaml",
        [
            "prove.k=8",
            "prove.strategy=sequential",
            "lean.workers=4",
            "models.prove.model=other",
            "models.prove.backend=scripted",
        ],
    )
    assert config.prove.k == 8
    assert config.prove.strategy == "sequential"
    assert config.lean.workers == 4
    assert config.models["prove"].model == "other"


def test_invalid_value_names_key_value_and_expectation(tmp_path: Path) -> None:
    (tmp_path / "run.yaml").write_text("prove: {k: 0}\n")
    with pytest.raises(ConfigError) as error:
        load_config(tmp_path / "run.yaml")
    message = str(error.value)
    assert "prove.k" in message and "0" in message and "greater than or equal to 1" in message


def test_unknown_key_and_unknown_stage_are_rejected(tmp_path: Path) -> None:
    (tmp_path / "run.yaml").write_text("prove: {kk: 3}\n")
    with pytest.raises(ConfigError, match="prove.kk"):
        load_config(tmp_path / "run.yaml")
    with pytest.raises(ConfigError, match="unknown stage 'prover'"):
        load_config(None, ["models.prover.model=x"])


def test_bad_override_syntax_and_missing_file_are_clear(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        load_config(None, ["prove.k"])
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "missing.yaml")
