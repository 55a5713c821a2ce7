"""Which code block of a prover's reply is the proof, where repro's reader and the harnesses' extractors differed
(model audit F11). The harness rules are transcribed below as the specification, each from its pinned file:

- Goedel-LM/Goedel-Prover-V2 @2e9036e ``src/utils.py:323-337`` (``extrac_code``; DeepSeekCoTHandler, and the
  base class that KiminaCoTHandler uses): the last ```` ```lean4\\n(.*?)\\n``` ```` match over the whole reply,
  else the last ```` ```lean4\\n(.*?)``` ```` (a fence glued to the code), else ```` ```lean\\n(.*?)``` ````;
- MoonshotAI/Kimina-Prover-Preview @7abd61a ``kimina_prover_demo/utils.py:199-216``
  (``extract_proof_from_text``): the last ```` ```lean4\\n(.*?)\\n``` ```` match over the whole reply that
  contains ``theorem``, ``by``, ``:=`` and ``import``.

Where the two differ, the profile decides (``ProverProfile.block_words``: Kimina's profiles prefer Kimina's
block, never refusing one Goedel's handler would take). What the screen does with the block is unchanged.
"""

from __future__ import annotations

import asyncio
import re

import pytest

from repro.judge.screen import verify_proof
from repro.lean.text import read_output
from repro.provers import get_profile

STATEMENT = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry"
HEADER = "import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 400000\n\nopen BigOperators Real Nat Topology Rat\n"
PROOF = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num"
WITH_IMPORTS = "import Mathlib\nimport Aesop\n\n" + PROOF


def goedel_extract(reply: str) -> str | None:
    """Goedel-Prover-V2 src/utils.py:323-337, without the header it prepends."""
    for pattern in (r"```lean4\n(.*?)\n```", r"```lean4\n(.*?)```", r"```lean\n(.*?)```"):
        matches = re.findall(pattern, reply, re.DOTALL)
        if matches:
            return str(matches[-1])
    return None


def kimina_extract(reply: str) -> str | None:
    """Kimina-Prover-Preview kimina_prover_demo/utils.py:208-214."""
    codes = re.findall(r"```lean4\n(.*?)\n```", reply, re.DOTALL)
    return next((str(c) for c in reversed(codes) if all(w in c for w in ("theorem", "by", ":=", "import"))), None)


def _screened(reply: str, finish: str = "stop", profile: str = "goedel-prover-v2-32b") -> tuple[bool, str | None]:
    text, reason = get_profile(profile).proof_output(STATEMENT, reply, finish)
    verdict = asyncio.run(verify_proof(STATEMENT, text, None, header=HEADER, finish_reason=reason))
    return bool(verdict.static_passed), verdict.prover_code


# -- a closing fence glued to the last code line -------------------------------------------------------------
@pytest.mark.parametrize("tail", ["```", "```\n", "``` \nThat completes the proof.", "```\n\nDone."])
def test_a_closing_fence_glued_to_the_last_code_line_closes_the_block(tail: str) -> None:
    reply = "Here is the proof.\n```lean4\n" + WITH_IMPORTS + tail
    assert goedel_extract(reply) == WITH_IMPORTS
    assert _screened(reply) == (True, WITH_IMPORTS)


def test_a_glued_fence_inside_a_comment_or_string_closes_nothing() -> None:
    inner = PROOF.replace("norm_num", "norm_num -- as in ```\n  -- and /- a ```\n  -/ done")
    reply = "```lean4\n" + inner + "\n```\n"
    assert read_output(reply).code.text == inner
    # a line-start fence inside a block comment was already hidden; a glued one inside a line comment is too
    assert read_output("```lean4\ntheorem t : True := by -- see ```\n  trivial\n```").code.text.endswith("trivial")


# -- the last block unclosed at the token cap -----------------------------------------------------------------
def test_a_reply_cut_inside_its_last_block_is_read_from_the_last_closed_block_before_it() -> None:
    reply = (
        "First attempt:\n```lean4\n" + WITH_IMPORTS + "\n```\nLet me double-check with another approach:\n"
        "```lean4\n" + WITH_IMPORTS.replace("norm_num", "omega <;> simp [Nat.div_eq_of_eq_mul_left")
    )
    assert goedel_extract(reply) == kimina_extract(reply) == WITH_IMPORTS
    assert _screened(reply, "length") == (True, WITH_IMPORTS)
    # not cut by the cap: the last block is the model's final answer, read as before (to the end of the reply)
    assert read_output(reply, "stop").code.text.endswith("Nat.div_eq_of_eq_mul_left")


def test_a_reply_cut_inside_its_only_block_is_still_its_own_failure() -> None:
    output = read_output("Proof:\n```lean4\n" + PROOF, "length")
    assert output.failure == "generation_truncated" and output.truncated


# -- the only block inside <think> --------------------------------------------------------------------------------
def test_a_block_only_inside_the_reasoning_is_the_proof_when_no_block_follows_it() -> None:
    reply = "<think>\nPlan: substitute.\n```lean4\n" + WITH_IMPORTS + "\n```\n</think>\nThe proof above is complete."
    assert goedel_extract(reply) == kimina_extract(reply) == WITH_IMPORTS
    assert _screened(reply) == (True, WITH_IMPORTS)
    # a block after </think> is still the one read: the draft inside the reasoning is not
    final = reply + "\n```lean4\n" + WITH_IMPORTS.replace("norm_num", "simp") + "\n```"
    assert read_output(final).code.text.endswith("simp")


# -- Kimina's extractor: the last block that holds the proof ----------------------------------------------------
_KIMINA = "kimina-prover-preview-distill-7b"
_TRAILING_EXAMPLE = "\n\nFor instance:\n```lean4\nexample : (3600 : ℕ) / 12 = 300 := by norm_num\n```\n"


def test_kimina_profiles_take_the_last_block_that_holds_theorem_by_and_import() -> None:
    reply = "<think>\nreasoning\n</think>\n```lean4\n" + WITH_IMPORTS + "\n```" + _TRAILING_EXAMPLE
    assert kimina_extract(reply) == WITH_IMPORTS
    assert _screened(reply, profile=_KIMINA) == (True, WITH_IMPORTS)
    assert _screened(reply, profile=f"{_KIMINA}-paper") == (True, WITH_IMPORTS)
    text, reason = get_profile(_KIMINA).proof_output(STATEMENT, reply, "length")
    assert text.endswith(WITH_IMPORTS + "\n```") and reason == "stop"  # the block taken is closed: complete
    # Goedel's handler takes the last block, whatever it holds: the Goedel profile reads the example
    assert goedel_extract(reply) != WITH_IMPORTS and _screened(reply) == (False, goedel_extract(reply))


def test_kimina_profiles_keep_the_block_read_when_no_block_holds_all_four_words() -> None:
    reply = "```lean4\n" + PROOF + "\n```" + _TRAILING_EXAMPLE  # no import anywhere: Kimina's demo finds nothing
    assert kimina_extract(reply) is None
    assert get_profile(_KIMINA).proof_output(STATEMENT, reply, "stop") == (reply, "stop")
    already = "```lean4\n" + WITH_IMPORTS + "\n```\n"
    assert get_profile(_KIMINA).proof_output(STATEMENT, already, "stop") == (already, "stop")
