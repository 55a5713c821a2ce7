"""Each profile asks, samples and parses the way its harness does (fixtures transcribed from the harnesses)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from repro.config import ModelSettings, load_config
from repro.provers import ProfileError, get_profile, list_profiles, profile_overrides
from repro.stages.prove import prover_request
from repro.study.provers import parse_prover_spec

HARNESS: dict[str, Any] = yaml.safe_load((Path(__file__).parent / "fixtures" / "prover_harness.yaml").read_text())

THEOREM = "theorem square_equation_solution {x y : ℝ} (h : x^2 + y^2 = 2*x - 4*y - 5) : x + y = -1 := by sorry"


def settings_for(profile: str, **fields: object) -> ModelSettings:
    return ModelSettings.model_validate({"profile": profile, "base_url": "http://127.0.0.1:8001/v1", **fields})


@pytest.mark.parametrize("size", ["8b", "32b"])
def test_goedel_v2_prompt_sampling_and_budget_equal_its_harness(size: str) -> None:
    facts = HARNESS["goedel_v2"]
    profile = get_profile(f"goedel-prover-v2-{size}")
    request = prover_request(settings_for(profile.name), THEOREM, facts["header"], sample_offset=0, n=4)
    assert [m.role for m in request.messages or []] == facts["roles"]
    expected = facts["prompt"].format(formal_statement=facts["header"] + THEOREM)
    assert request.messages is not None and request.messages[0].content == expected
    assert (request.temperature, request.top_p, request.max_tokens) == (
        facts["temperature"],
        facts["top_p"],
        facts["max_tokens"],
    )
    assert profile.max_model_len == facts["max_model_len"] and profile.lean_header == facts["header"]
    assert (profile.max_heartbeats, profile.check_timeout_s) == (0, facts["proof_timeout_s"])
    assert profile.toolchain == "v4.9.0" and profile.feedback_style == "goedel_v2"
    assert profile.model == f"Goedel-LM/Goedel-Prover-V2-{size.upper()}"


def test_deepseek_v2_prompt_keeps_the_readme_statement_and_fence() -> None:
    facts = HARNESS["deepseek_v2"]
    statement = "theorem mathd_algebra_10 : abs ((120 : ℝ) / 100 * 30 - 130 / 100 * 20) = 10 := by\n  sorry"
    for name in ("deepseek-prover-v2-7b", "deepseek-prover-v2-671b"):
        profile = get_profile(name)
        messages = profile.messages(statement, facts["header"])
        assert [m.role for m in messages] == facts["roles"]
        assert messages[0].content == facts["prompt"].format(formal_statement=facts["header"] + "\n\n" + statement)
        assert profile.max_tokens == facts["max_tokens"] and profile.toolchain == "v4.9.0"
        assert profile.feedback_style == "generic"


@pytest.mark.parametrize("size", ["7b", "1.5b"])
def test_kimina_preview_has_a_system_message_and_no_sorry(size: str) -> None:
    facts = HARNESS["kimina_preview"]
    profile = get_profile(f"kimina-prover-preview-distill-{size}")
    header = profile.lean_header
    request = prover_request(settings_for(profile.name), THEOREM, header, sample_offset=0, n=1)
    messages = request.messages or []
    assert [m.role for m in messages] == facts["roles"] and messages[0].content == facts["system"]
    open_statement = THEOREM.removesuffix(" sorry")
    assert open_statement.endswith(facts["statement_ending"])
    # with no informal problem the harness shows the statement without its header lines as the problem
    expected = facts["prompt"].format(problem=open_statement, formal_statement=header + open_statement)
    assert messages[1].content == expected
    assert "sorry" not in messages[1].content
    assert (request.temperature, request.top_p, request.max_tokens) == (
        facts["temperature"],
        facts["top_p"],
        facts["max_tokens"],
    )
    assert profile.toolchain == "v4.15.0" and profile.think_block
    with_problem = profile.user_text(THEOREM, header, problem="Find x + y.")
    assert "# Problem:Find x + y.\n" in with_problem


def test_deepseek_v15_is_a_raw_completion_whose_continuation_is_checked_after_the_statement() -> None:
    facts = HARNESS["deepseek_v15"]
    profile = get_profile("deepseek-prover-v1.5-rl")
    statement = "theorem amc12b_2003_p6 (a r : ℝ) (u : ℕ → ℝ) (h₀ : ∀ k, u k = a * r ^ k) : u 0 = a := by sorry"
    request = prover_request(settings_for(profile.name), statement, facts["header"], sample_offset=0, n=1)
    assert request.messages is None and request.prompt is not None
    open_statement = statement.removesuffix(" sorry") + "\n"
    assert open_statement.endswith(facts["statement_ending"])
    assert request.prompt == facts["prompt"].format(
        header=facts["header"], informal_prefix="", formal_statement=open_statement
    )
    assert (request.temperature, request.top_p, request.max_tokens) == (
        facts["temperature"],
        facts["top_p"],
        facts["max_tokens"],
    )
    assert profile.check_timeout_s == facts["lean_timeout"] and profile.toolchain == "v4.9.0"
    output = facts["continuation_example"] + "```\nAnd here is an explanation with theorem fake : False := sorry"
    checked = profile.proof_text(statement, output)
    assert checked == statement.removesuffix(" sorry") + "\n" + facts["continuation_example"].rstrip() + "\n"


def test_custom_keeps_repros_own_prompt_and_every_profile_is_listed() -> None:
    names = [profile.name for profile in list_profiles()]
    for required in (
        "goedel-prover-v2-8b",
        "goedel-prover-v2-32b",
        "deepseek-prover-v2-7b",
        "deepseek-prover-v2-671b",
        "kimina-prover-preview-distill-7b",
        "deepseek-prover-v1.5-rl",
        "custom",
    ):
        assert required in names
    assert all(profile.sources for profile in list_profiles())
    custom = get_profile("custom")
    assert custom.messages(THEOREM, "import Mathlib")[0].content.startswith("Complete the following Lean 4 code:\n")
    with pytest.raises(ProfileError, match="known: goedel-prover-v2-8b"):
        get_profile("goedel-v9")


def test_a_config_names_a_profile_and_its_explicit_values_override_it(tmp_path: Path) -> None:
    path = tmp_path / "run.yaml"
    path.write_text(
        "models:\n  prove: {profile: goedel-prover-v2-32b, base_url: 'http://127.0.0.1:8001/v1', max_tokens: 16384}\n"
    )
    settings = load_config(path).models["prove"]
    assert settings.model == "Goedel-LM/Goedel-Prover-V2-32B" and settings.temperature == 1.0
    assert settings.max_tokens == 16384 and settings.max_model_len == 40960
    assert profile_overrides(settings.model_dump()) == {"max_tokens": {"profile": 40960, "config": 16384}}
    path.write_text("models:\n  prove: {profile: goedel-v9}\n")
    with pytest.raises(ValueError, match="unknown prover profile 'goedel-v9'"):
        load_config(path)


def test_study_provers_get_their_harness_budget_not_a_shared_8192() -> None:
    by_model = parse_prover_spec("goedel=Goedel-LM/Goedel-Prover-V2-32B@http://127.0.0.1:8001/v1")
    assert by_model.settings.profile == "goedel-prover-v2-32b" and by_model.settings.max_tokens == 40960
    by_profile = parse_prover_spec("kimina=kimina-prover-preview-distill-7b@http://127.0.0.1:8002/v1")
    assert by_profile.settings.model == "AI-MO/Kimina-Prover-Preview-Distill-7B"
    assert (by_profile.settings.temperature, by_profile.settings.max_tokens) == (0.6, 8096)
    unknown = parse_prover_spec("mine=my-org/my-prover@http://127.0.0.1:8003/v1")
    assert unknown.settings.profile == "custom" and unknown.settings.max_tokens == 8192


def test_every_profile_names_a_toolchain_repro_can_prepare() -> None:
    from repro.lean.toolchains import get_toolchain

    for profile in list_profiles():
        assert get_toolchain(profile.toolchain).name == profile.toolchain


def test_repro_provers_lists_every_profile_and_shows_one_with_its_sources(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from repro.cli import main

    assert main(["provers"]) == 0
    listing = capsys.readouterr().out
    assert all(profile.name in listing for profile in list_profiles())
    assert main(["provers", "deepseek-prover-v1.5-rl"]) == 0
    shown = capsys.readouterr().out
    assert "deepseek-ai/DeepSeek-Prover-V1.5 prover/utils.py" in shown and "raw prompt (no chat template)" in shown
    assert main(["provers", "nope"]) == 2


def test_shipped_configs_use_the_goedel_profile_on_its_own_toolchain_and_warn_on_a_mismatch() -> None:
    from repro.config import config_warnings

    repo = Path(__file__).resolve().parent.parent
    for name in ("gsm8k", "math"):
        config = load_config(repo / "configs" / f"{name}.yaml")
        prove = config.models["prove"]
        assert prove.profile == "goedel-prover-v2-32b" and prove.max_tokens == 40960 and prove.max_model_len == 40960
        assert config.lean.toolchain == get_profile(prove.profile).toolchain
        assert config_warnings(config) == []
    mismatched = load_config(repo / "configs" / "gsm8k.yaml", ["lean.toolchain=v4.15.0", "models.prove.top_p=0.9"])
    warnings = " ".join(config_warnings(mismatched))
    assert "trained and evaluated on Lean v4.9.0" in warnings and "top_p 0.9 (harness: 0.95)" in warnings


def test_the_dataset_card_names_the_profile_its_harness_and_each_override() -> None:
    from repro.release.card import _prover_section

    repo = Path(__file__).resolve().parent.parent
    config = load_config(repo / "configs" / "gsm8k.yaml", ["models.prove.max_tokens=16384"])
    section = _prover_section(config)
    assert "`goedel-prover-v2-32b` profile" in section and "Goedel-LM/Goedel-Prover-V2 src/inference.py" in section
    assert "- `max_tokens`: 16384 (the harness uses 40960)" in section
    assert _prover_section(load_config(None)) == ""


def test_a_prover_settings_file_may_name_a_profile_and_override_part_of_it(tmp_path: Path) -> None:
    path = tmp_path / "kimina.yaml"
    path.write_text(
        "profile: kimina-prover-preview-distill-7b\nmodel: /ckpt/kimina-7b\n"
        "base_url: http://127.0.0.1:8002/v1\napi_key_env: null\nmax_tokens: 16384\n"
    )
    entry = parse_prover_spec(f"kimina={path}")
    settings = entry.settings
    assert (settings.model, settings.temperature, settings.max_tokens) == ("/ckpt/kimina-7b", 0.6, 16384)
    request = prover_request(settings, THEOREM, "import Mathlib", sample_offset=0, n=1)
    assert [m.role for m in request.messages or []] == ["system", "user"]
