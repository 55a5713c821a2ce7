"""A reply is read once: the chosen block's tokens are the ones lexing that code alone gives, and the
one-pass fence finder picks the same blocks as the rule it replaces (re-lex after every opening fence)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from repro.judge import verify_proof
from repro.lean.taxonomy import _PROSE_LINE
from repro.lean.text import LeanCode, fenced_blocks, lex, line_column, read_output
from repro.lean.text.lexer import Kind, _Scanner

CORPUS: list[dict[str, Any]] = yaml.safe_load((Path(__file__).parent / "fixtures" / "gate_corpus.yaml").read_text())

_OPENING = re.compile(r"```(lean4|lean)?([^\n`]*)\n")
# a closing fence starts a line, or ends one glued to the code (model audit F11), where a line comment hides it too
_CLOSING = re.compile(r"^[ \t]*```|(?P<glued>```)(?=[ \t]*$)", re.MULTILINE)
_HIDING = (Kind.block_comment, Kind.string, Kind.raw_string, Kind.interpolated_string)
_HIDING_GLUED = (*_HIDING, Kind.line_comment)


def reference_blocks(body: str) -> list[tuple[str, str, bool]]:
    """The previous extraction rule, kept as the specification: lex the rest after every opening fence."""
    blocks: list[tuple[str, str, bool]] = []
    cursor = 0
    while (opening := _OPENING.search(body, cursor)) is not None:
        language, rest = opening.group(1) or "", opening.group(2)
        start = opening.end()
        tokens = lex(body[start:])
        inside = [(t.start + start, t.end + start) for t in tokens if t.kind in _HIDING]
        inside_glued = [(t.start + start, t.end + start) for t in tokens if t.kind in _HIDING_GLUED]
        closing = next(
            (
                m
                for m in _CLOSING.finditer(body, start)
                if not any(a < m.start() < b for a, b in (inside_glued if m.group("glued") else inside))
            ),
            None,
        )
        end = closing.start() if closing else len(body)
        if language or not rest.strip():
            blocks.append((language, body[start:end], closing is not None))
        if closing is None:
            break
        cursor = body.find("```", closing.start()) + 3
    return blocks


# Fragments that move fence and comment boundaries: fences in every form, comments, strings, escapes.
_FRAGMENTS = [
    "```lean4\n",
    "```lean\n",
    "```\n",
    "```python\n",
    "```",
    "x```",
    "\n```\n",
    "  ```\n",
    "/-",
    "-/",
    "/--",
    "/-!",
    '"',
    "\\",
    'r#"',
    '"#',
    "'a'",
    "«",
    "»",
    "--",
    "\n",
    " ",
    "theorem t : True := trivial",
    "x",
    "</think>",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=30))
def test_one_pass_fence_finder_agrees_with_the_reference_rule(fragments: list[str]) -> None:
    body = "".join(fragments)
    found = [(b.language, body[b.start : b.end], b.closed) for b in fenced_blocks(body)]
    assert found == reference_blocks(body)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=30), st.sampled_from(["stop", "length"]))
def test_the_chosen_code_carries_the_tokens_of_lexing_it_alone(fragments: list[str], finish: str) -> None:
    output = read_output("".join(fragments), finish)
    assert output.code.tokens == lex(output.code.text)


def test_an_empty_block_has_no_empty_tokens() -> None:
    # found by hypothesis: the closing fence's indentation ended the empty block in an empty token
    output = read_output("```lean4\n\n  ```\n", "stop")
    assert output.code.tokens == lex(output.code.text) == []


def test_corpus_replies_read_once_equal_lexing_their_code() -> None:
    for case in CORPUS:
        output = read_output(case["output"], case.get("finish_reason", "stop"))
        assert output.code.tokens == lex(output.code.text), case["name"]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab\n\r", max_size=40), st.data())
def test_line_and_column_from_line_starts_match_counting(text: str, data: st.DataObject) -> None:
    offset = data.draw(st.integers(min_value=0, max_value=len(text)))
    assert LeanCode.of(text).line_column(offset) == line_column(text, offset)


def test_comment_free_forms_keep_or_drop_layout() -> None:
    text = 'theorem t : True := by -- why\n  /- two\nlines -/ trivial -- "s"'
    code = LeanCode.of(text)
    assert code.without_comments.split("\n") == [
        "theorem t : True := by       ",
        "        ",
        "         trivial       ",
    ]
    assert code.comment_free == "theorem t : True := by \n   trivial "
    shown = LeanCode.of('norm_num [show (2 : ℕ) = 2 from rfl] -- answer 42\n#eval "42"').without_prose
    assert "42" not in shown and "norm_num" in shown


async def test_one_sample_through_the_gate_lexes_each_character_of_its_reply_at_most_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Policy, taxonomy and extraction share one lexing (the statement and header are read once per statement)."""
    statement = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry"
    header = "import Mathlib\nopen BigOperators Real Nat Topology Rat\n"
    reply = (
        "<think>\n```lean4\ntheorem draft : True := trivial\n```\n</think>\nPlan: substitute.\n"
        "```lean4\n/-- a doc comment with a fenced example:\n```lean4\nexample : True := trivial\n```\n-/\n"
        "lemma div_helper : (3600 : ℕ) / 12 = 300 := by norm_num -- computed\n\n"
        "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  exact div_helper\n```\n"
    )
    await verify_proof(statement, reply, None, header=header)  # reads our statement and header once
    lexed: list[str] = []
    emit = _Scanner.emit

    def counting_emit(self: _Scanner, kind: Kind, start: int, end: int) -> int:
        lexed.append(self.code[start:end])
        return emit(self, kind, start, end)

    monkeypatch.setattr(_Scanner, "emit", counting_emit)
    verdict = await verify_proof(statement, reply, None, header=header)
    assert verdict.static_passed and verdict.checked_code is not None
    assert "exact div_helper" in verdict.checked_code and "draft" not in verdict.checked_code
    assert sum(map(len, lexed)) <= len(reply)


# The prose-line rule as it was written before it was made linear: the specification it must keep.
_PROSE_LINE_REFERENCE = re.compile(r"^\s*[A-Z][a-z]+(?:\s+[a-z][a-z',]*){3,}[^:=\[\]()←→⊢_<>]*[.:!?]?\s*$")
_PROSE_PIECES = ["The", "Now", "we", "use", "it's", "a,", " ", "  ", "\t", ".", ":", "!", "?", "x", "_", "(h)", "→"]


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(_PROSE_PIECES), max_size=14))
def test_the_linear_prose_line_rule_says_what_the_old_one_said(pieces: list[str]) -> None:
    line = "".join(pieces)
    assert bool(_PROSE_LINE.match(line)) is bool(_PROSE_LINE_REFERENCE.match(line))


def test_a_long_line_of_words_is_read_in_linear_time() -> None:
    """The old rule backtracked quadratically (8 KB: seconds); the new one reads 800 KB at once."""
    assert _PROSE_LINE.match("Abc " + "def " * 200_000 + "]") is None
    assert _PROSE_LINE.match("Now we use the lemma " + "and then " * 200_000 + "conclude.")
