from __future__ import annotations

from repro.lean.text import extract_lean_block, find_special_tokens
from repro.llm import extract_json_object


def test_last_lean4_block_after_the_reasoning_section() -> None:
    text = (
        "<think>draft:\n```lean4\ntheorem draft : False := sorry\n```\n</think>\nPlan...\n"
        "```lean\ntheorem a : True := trivial\n```\n```lean4\ntheorem b : True := trivial\n```\n"
        "```lean\ntheorem c : True := trivial\n```"
    )
    assert extract_lean_block(text).code == "theorem b : True := trivial"


def test_falls_back_to_lean_fence_and_reports_missing_blocks() -> None:
    assert extract_lean_block("```lean\ntheorem c : True := trivial\n```").code == "theorem c : True := trivial"
    missing = extract_lean_block("no code at all")
    assert missing.code is None and missing.failure == "no_lean_block"


def test_length_cut_without_closing_fence_is_its_own_failure() -> None:
    cut = extract_lean_block("```lean4\ntheorem t : True := by\n  simp <;", finish_reason="length")
    assert cut.failure == "generation_truncated" and not cut.closed
    assert extract_lean_block("nothing", finish_reason="length").failure == "generation_truncated"


def test_special_tokens_in_both_widths_are_reported() -> None:
    text = "proof<|im_end|> and <｜Assistant｜> then <｜end▁of▁sentence｜> and <|Assistant|>"
    assert find_special_tokens(text) == ["<|im_end|>", "<｜Assistant｜>", "<｜end▁of▁sentence｜>", "<|Assistant|>"]
    assert find_special_tokens("a | b < c > d") == []


def test_json_object_bare_fenced_or_in_prose() -> None:
    assert extract_json_object('{"a": 1}') == {"a": 1}
    assert extract_json_object('Here:\n```json\n{"a": {"b": "}"}}\n```\nDone') == {"a": {"b": "}"}}
    assert extract_json_object('I think {"verdict": "yes"} is right.') == {"verdict": "yes"}
    assert extract_json_object('<think>{"x": 1}</think> final {"x": 2}') == {"x": 2}
    assert extract_json_object("no json here") is None
