"""What a prover profile puts on the wire and how its output is read, against the harnesses' own data.

The harness facts are in tests/fixtures/prover_harness.yaml; the data layouts (the doc comment above the
theorem, the ``:= by sorry`` ending) are those of the harnesses' minif2f files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from repro.config import ModelSettings, load_config
from repro.judge.policy import scan
from repro.lean.text.blocks import read_output
from repro.llm import OpenAIBackend
from repro.provers import get_profile, list_profiles
from repro.provers.profile import problem_docstring, statement_in_form
from repro.stages.prove import prover_request, prover_sample
from tests.doubles.openai_server import OpenAITestServer

HARNESS: dict[str, Any] = yaml.safe_load((Path(__file__).parent / "fixtures" / "prover_harness.yaml").read_text())
THEOREM = "theorem square_equation_solution {x y : ℝ} (h : x^2 + y^2 = 2*x - 4*y - 5) : x + y = -1 := by sorry"
PROBLEM = "Real numbers $x$ and $y$ satisfy $x^2 + y^2 = 2x - 4y - 5$. What is $x+y$? Show that it is -1."
NEUTRAL = {"top_k": -1, "min_p": 0.0, "repetition_penalty": 1.0, "presence_penalty": 0.0, "frequency_penalty": 0.0}


def settings_for(profile: str, base_url: str = "http://127.0.0.1:8001/v1", **fields: object) -> ModelSettings:
    return ModelSettings.model_validate({"profile": profile, "base_url": base_url, "api_key_env": None, **fields})


# -- F2: every sampling field a profile fixes goes on the wire, neutral values included ---------------------


@pytest.mark.parametrize("name", [p.name for p in list_profiles() if p.name != "custom"])
async def test_every_profile_sends_each_sampling_field_so_no_generation_config_applies(name: str) -> None:
    """vLLM >= 0.8 fills every omitted field from the checkpoint's generation_config.json (Qwen3's top_k=20):
    the harness's explicit SamplingParams has them off, so the request must say so."""
    with OpenAITestServer() as server:
        settings = settings_for(name, server.base_url)
        request = prover_request(settings, THEOREM, get_profile(name).lean_header, sample_offset=0, n=2)
        backend = OpenAIBackend(model_id=settings.model, base_url=server.base_url, prompt_format="chat")
        await backend.generate(request)
        body = server.requests[-1]
    assert {key: body.get(key) for key in NEUTRAL} == NEUTRAL
    profile = get_profile(name)
    assert (body["temperature"], body["top_p"]) == (profile.temperature, profile.top_p)


async def test_the_custom_profile_leaves_vllm_only_fields_to_the_server() -> None:
    """No harness to follow, and a hosted API answers 400 to a field it does not know (top_k, min_p)."""
    with OpenAITestServer() as server:
        settings = settings_for("custom", server.base_url, model="gpt-4o")
        request = prover_request(settings, THEOREM, get_profile("custom").lean_header, sample_offset=0, n=1)
        await OpenAIBackend(model_id="gpt-4o", base_url=server.base_url).generate(request)
        body = server.requests[-1]
    assert not set(NEUTRAL) & set(body)


# -- F9 and F12: the statement as the harness's data shows it -------------------------------------------------


def test_goedel_shows_the_problem_as_a_doc_comment_and_the_ending_on_one_line() -> None:
    """Goedel-Prover-V2 dataset/minif2f.jsonl lean4_code: header, `/-- problem-/`, the theorem, `:= by sorry`."""
    facts = HARNESS["goedel_v2"]
    laid_out = THEOREM.removesuffix(" sorry") + "\n  sorry"  # a formalizer's own layout
    request = prover_request(
        settings_for("goedel-prover-v2-32b"), laid_out, facts["header"], sample_offset=0, n=1, problem=PROBLEM
    )
    expected = facts["prompt"].format(formal_statement=facts["header"] + f"/-- {PROBLEM}-/\n" + THEOREM)
    assert request.messages is not None and request.messages[0].content == expected


def test_deepseek_v2_shows_the_doc_comment_and_sorry_on_its_own_line() -> None:
    facts = HARNESS["deepseek_v2"]
    messages = get_profile("deepseek-prover-v2-7b").messages(THEOREM, facts["header"], problem=PROBLEM)
    statement = f"/-- {PROBLEM}-/\n" + THEOREM.removesuffix(" sorry") + "\n  sorry"
    assert messages[0].content == facts["prompt"].format(formal_statement=facts["header"] + "\n\n" + statement)


def test_deepseek_v15_puts_the_informal_prefix_between_header_and_statement() -> None:
    """prover/utils.py cot_prompt: `{header}{informal_prefix}{formal_statement}`, the statement ending `:= by\\n`."""
    facts = HARNESS["deepseek_v15"]
    prompt = get_profile("deepseek-prover-v1.5-rl").user_text(THEOREM, facts["header"], problem=PROBLEM)
    informal_prefix = f"/-- {PROBLEM}-/\n"
    assert prompt == facts["prompt"].format(
        header=facts["header"], informal_prefix=informal_prefix, formal_statement=THEOREM.removesuffix(" sorry") + "\n"
    )


def test_without_a_problem_the_prompts_are_the_bare_statement_and_kimina_never_gets_a_doc_comment() -> None:
    facts = HARNESS["goedel_v2"]
    bare = get_profile("goedel-prover-v2-8b").user_text(THEOREM, facts["header"])
    assert "/--" not in bare
    kimina = get_profile("kimina-prover-preview-distill-7b").user_text(THEOREM, facts["header"], problem=PROBLEM)
    assert "/--" not in kimina and f"# Problem:{PROBLEM}\n" in kimina


@pytest.mark.parametrize(
    "problem",
    [
        "Show that 1 -/ theorem evil : False := sorry /- it is 2.",
        "nested /- comment -/ and a closer -/ at the end -/",
        "/-/-/--/-/",
        "ends with a dash -",
    ],
)
def test_a_problem_cannot_close_its_doc_comment_early(problem: str) -> None:
    """A rewritten question is model text: `-/` in it would end the comment and spill the rest into the code,
    `/-` would open a nested comment (Lean's comments nest) and swallow the theorem."""
    comment = problem_docstring(problem)
    assert comment.startswith("/-- ") and comment.endswith("-/\n")
    inner = comment[len("/--") : -len("-/\n")]
    assert "-/" not in inner and "/-" not in inner
    code = comment + THEOREM.removesuffix("sorry") + "\n  norm_num\n"
    header = "import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 0\n\nopen BigOperators Real Nat Topology Rat\n"
    assert scan(code, header=header, main_name="square_equation_solution").forbidden == []


def test_statement_layouts() -> None:
    inline = "theorem t : 1 = 1 := by sorry"
    assert statement_in_form("theorem t : 1 = 1 := by\n  sorry", "by_sorry", "inline") == inline
    assert statement_in_form(inline, "by_sorry", "newline") == "theorem t : 1 = 1 := by\n  sorry"
    assert statement_in_form("theorem t : 1 = 1 := by\n  sorry", "by_sorry") == "theorem t : 1 = 1 := by\n  sorry"


# -- F8: a continuation cut at its fence is complete -----------------------------------------------------


def test_a_v15_continuation_that_ran_on_after_its_fence_is_not_read_as_truncated() -> None:
    """DeepSeek-Prover-V1.5 checks `statement + output[:first fence]` whatever made generation stop."""
    settings = settings_for("deepseek-prover-v1.5-rl", prompt_format="completion")
    proof = "  nlinarith [sq_nonneg (x - 1), sq_nonneg (y + 2)]\n```\n\n"
    rambling = proof + "The proof is complete. " + "And so on. " * 300
    sample = prover_sample(settings, THEOREM, 0, rambling, "length")
    assert sample.finish_reason == "stop"
    assert sample.text.endswith(":= by\n  nlinarith [sq_nonneg (x - 1), sq_nonneg (y + 2)]\n")
    assert not read_output(sample.text, sample.finish_reason).truncated
    assert read_output(sample.text, "length").truncated, "what the gate read when the raw reason was kept"
    unfenced = prover_sample(settings, THEOREM, 1, "  nlinarith [sq_nonneg (x - 1),", "length")
    assert unfenced.finish_reason == "length", "no fence: the model really was cut off"
    whole = prover_sample(settings_for("goedel-prover-v2-8b"), THEOREM, 2, "```lean4\nby\n```\nmore", "length")
    assert whole.finish_reason == "length", "a whole-proof reply keeps the model's own reason"


# -- F5 and F14: Kimina's two sets of settings, and the Lean budget a profile fixes --------------------------


def test_kimina_has_the_model_cards_and_the_papers_settings_recorded_as_such() -> None:
    card = get_profile("kimina-prover-preview-distill-7b")
    paper = get_profile("kimina-prover-preview-distill-7b-paper")
    assert (card.max_tokens, card.max_heartbeats) == (8096, 400000) and "model card" in (card.settings_source or "")
    assert (paper.max_tokens, paper.max_heartbeats, paper.max_model_len) == (32768, 0, 32768)
    assert "maxHeartbeats 0" in paper.lean_header and "paper" in (paper.settings_source or "")
    for profile in (card, paper):
        assert any(entry.startswith("toolchain:") for entry in profile.unsettled)
        assert profile.model == "AI-MO/Kimina-Prover-Preview-Distill-7B"


def test_a_profiles_lean_timeout_applies_unless_the_config_sets_one(tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(
        "models:\n  prove: {profile: kimina-prover-preview-distill-7b, base_url: 'http://127.0.0.1:8001/v1'}\n"
        "lean: {toolchain: v4.15.0}\n"
    )
    assert load_config(config).lean.timeout_s == 60.0
    assert load_config(config, ["lean.timeout_s=300"]).lean.timeout_s == 300.0


def test_the_dataset_card_says_the_prompt_carried_the_problem_and_what_the_sources_leave_open() -> None:
    from repro.release.card import _prover_section

    repo = Path(__file__).resolve().parent.parent
    goedel = _prover_section(load_config(repo / "configs" / "gsm8k.yaml"))
    assert "`/-- ... -/` doc comment above its theorem" in goedel
    assert "not settled by the harness's sources: max_tokens: 40960" in goedel
    kimina = _prover_section(
        load_config(None, ["models.prove.profile=kimina-prover-preview-distill-7b-paper", "lean.toolchain=v4.15.0"])
    )
    assert "doc comment" not in kimina and "Settings source: paper" in kimina


async def test_a_feedback_history_past_the_context_ends_its_thread_as_a_rejection_not_an_outage() -> None:
    """A refusal of one prompt is a verdict on that prompt: the attempt is rejected (prompt_too_long), not left as
    an infrastructure error that a resume would ask again forever."""
    from repro.llm import ModelClient, ModelRequest, ModelResponse, PromptTooLong
    from repro.records import AttemptStatus, ReasonCode
    from repro.stages.feedback import FeedbackThread, ask_again
    from repro.stages.prove import sample_proofs

    class Refusing:
        backend_id, model_id, scripted = "vllm", "Goedel-LM/Goedel-Prover-V2-8B", False

        async def generate(self, request: ModelRequest) -> ModelResponse:
            raise PromptTooLong("vllm model m", "the prompt (41000 tokens) does not fit max_model_len=40960")

    settings = settings_for("goedel-prover-v2-8b")
    client = ModelClient(Refusing(), store=None, stage="prove")
    thread = FeedbackThread(
        text="<think>long</think>", checked_code=THEOREM, errors=[(1, 0, 1, 4, "x")], parent_attempt=0
    )
    sample, _, result = await ask_again(
        THEOREM, "", client, settings, thread, style="goedel_v2", round_number=1, sample_offset=3
    )
    assert sample is None and (result.status, result.reason) == (AttemptStatus.rejected, ReasonCode.prompt_too_long)
    samples, proved = await sample_proofs(THEOREM, "", client, settings, count=2, first_index=0)
    assert samples == [] and proved.reason == ReasonCode.prompt_too_long
