"""The lexer reads Lean's code/comment/string boundaries as Lean does, whatever the interleaving."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from repro.judge.policy import scan
from repro.lean.text.lexer import (
    _REST_CLASS,
    _START_CLASS,
    Kind,
    identifier_parts,
    is_identifier_rest,
    is_identifier_start,
    lex,
    lex_error,
)

# Characters that move boundaries in naive scanners; fragments below put them everywhere.
TRICKY = ['"', "'", "«", "»", "#", "\\", "\n", "r", "@", "[", "*", " ", "x", "exit", "instance", "-- ", " / "]


def _chunks(excluded: str) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from([c for c in TRICKY if not any(e in c for e in excluded)]), max_size=6).map("".join)


@st.composite
def block_comment(draw: st.DrawFn, depth: int = 0) -> str:
    parts = [draw(_chunks("-/"))]
    if depth < 2:
        for _ in range(draw(st.integers(0, 2))):
            parts.append(draw(block_comment(depth + 1)))
            parts.append(draw(_chunks("-/")))
    opening = draw(st.sampled_from(["/-", "/--", "/-!"])) if depth == 0 else "/-"
    body = "".join(parts)
    if opening != "/-" and body.startswith(("-", "!")):
        body = " " + body
    return opening + " " + body + " -/"


string_part = st.one_of(
    _chunks('"\\'),
    st.sampled_from(["\\\\", '\\"', "\\n", "\\t", "\\x41", "\\u03b1", "\\'", "\\\n   "]),
)
string_literal = st.lists(string_part, max_size=5).map(lambda parts: '"' + "".join(parts) + '"')
char_literal = st.sampled_from(["'a'", "'\"'", "'\\''", "'\\\\'", "'\\n'", "'-'", "'/'", "'«'", "'#'", "'\\x41'"])
raw_string = st.one_of(
    _chunks('"').map(lambda body: 'r"' + body + '"'),
    _chunks("").filter(lambda body: '"#' not in body and not body.endswith('"')).map(lambda b: 'r#"' + b + '"#'),
)
guillemet_part = _chunks("»").map(lambda body: "«" + body + "»")
identifier = st.lists(st.one_of(st.sampled_from(["x", "Nat", "h₀", "foo'", "α"]), guillemet_part), min_size=1).map(
    ".".join
)
line_comment = _chunks("\n").map(lambda body: "--" + body)
symbol = st.sampled_from([":=", "(", ")", "+", ":", "=", "<;>", ","])
number = st.sampled_from(["0", "42", "3.25", "0x1F", "1e9"])

FRAGMENTS = st.one_of(
    block_comment().map(lambda text: (Kind.block_comment, text)),
    line_comment.map(lambda text: (Kind.line_comment, text)),
    string_literal.map(lambda text: (Kind.string, text)),
    char_literal.map(lambda text: (Kind.char, text)),
    raw_string.map(lambda text: (Kind.raw_string, text)),
    identifier.map(lambda text: (Kind.identifier, text)),
    symbol.map(lambda text: (Kind.symbol, text)),
    number.map(lambda text: (Kind.number, text)),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(FRAGMENTS, max_size=25))
def test_random_interleavings_never_desynchronise(fragments: list[tuple[Kind, str]]) -> None:
    code = "".join(text + ("\n" if kind == Kind.line_comment else " ") for kind, text in fragments)
    tokens = lex(code)
    assert "".join(token.text for token in tokens) == code
    seen = [(token.kind, token.text) for token in tokens if token.kind != Kind.whitespace]
    assert seen == fragments


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("\"'«»#\\\n -/rx@[]{}()!s:=") + ["ℕ", "₀"]), max_size=60))
def test_any_text_lexes_back_to_itself(code: str) -> None:
    tokens = lex(code)
    assert "".join(token.text for token in tokens) == code
    error = lex_error(tokens)
    assert error is None or error.end == len(code)


@settings(max_examples=200, deadline=None)
@given(st.lists(FRAGMENTS, max_size=12), st.sampled_from(["#exit", "instance", "axiom", "@[simp]", "variable"]))
def test_a_command_between_any_fragments_is_refused_and_inside_them_is_not(
    fragments: list[tuple[Kind, str]], command: str
) -> None:
    def render(items: list[tuple[Kind, str]]) -> str:
        return "".join(text + ("\n" if kind == Kind.line_comment else " ") for kind, text in items)

    middle = len(fragments) // 2
    visible = render(fragments[:middle]) + " " + command + " " + render(fragments[middle:])
    assert scan(visible, header="").forbidden
    # the same command inside a comment adds no refusal; inside a string, only the string's own
    hidden = render(fragments) + "/- " + command + " -/ " + '"' + command + '"'
    added = set(scan(hidden, header="").forbidden) - set(scan(render(fragments), header="").forbidden)
    assert all(label.startswith("string literal") for label in added), added


def test_the_forms_naive_scanners_misread() -> None:
    cases = {
        '"a\\\\" #exit': [Kind.string, Kind.hash_command],  # an escaped backslash ends the string
        "'\"' #exit '\"'": [Kind.char, Kind.hash_command, Kind.char],
        "«/-» instance «-/»": [Kind.identifier, Kind.identifier, Kind.identifier],
        'r"\\" #eval "': [Kind.raw_string, Kind.hash_command, Kind.error],
        'r#"a"b"# axiom': [Kind.raw_string, Kind.identifier],
        "/- /- -/ #exit -/ x": [Kind.block_comment, Kind.identifier],
        "/-- doc -/ theorem": [Kind.block_comment, Kind.identifier],
        '/--/ " -/ #exit -- "': [Kind.block_comment, Kind.hash_command, Kind.line_comment],  # /-- body starts late
        "/-!/ x -/ y": [Kind.block_comment, Kind.identifier],
        "a\u00a0#exit": [Kind.identifier, Kind.symbol, Kind.hash_command],  # NBSP is not Lean whitespace
        '"multi\nline #exit"': [Kind.string],
        "f ⁻¹' s '' t": [Kind.identifier, Kind.symbol, Kind.identifier, Kind.symbol, Kind.identifier],
        's!"{x}" x': [Kind.interpolated_string, Kind.identifier],
        # Lean starts a raw string at any token start: after `!`, a digit or a symbol too
        'exact !r"\\" #exit "': [Kind.identifier, Kind.symbol, Kind.raw_string, Kind.hash_command, Kind.error],
        '2r"\\" x': [Kind.number, Kind.raw_string, Kind.identifier],
        # Lean's digit sets: `0x1sorry` is 0x1 then sorry; Mathlib's primed big operators are one token
        "0x1sorry 0b12": [Kind.number, Kind.identifier, Kind.number, Kind.number],
        "∑' n, f n ∏' n, g n": [Kind.symbol, Kind.identifier, Kind.symbol, Kind.identifier, Kind.identifier] * 2,
    }
    for code, kinds in cases.items():
        assert [t.kind for t in lex(code) if t.kind != Kind.whitespace] == kinds, code


def test_quoted_identifier_parts_are_compared_unquoted() -> None:
    assert identifier_parts("Lean.«ofReduceBool»") == ["Lean", "ofReduceBool"]
    assert identifier_parts("«debug».skipKernelTC") == ["debug", "skipKernelTC"]
    assert scan("theorem t : True := Lean.«ofReduceBool» _ _ rfl", header="").forbidden


def test_identifier_character_classes_match_the_functions_for_every_code_point() -> None:
    """The lexer reads names with regular expressions; they must say what Lean's predicates say."""
    start = re.compile(f"[{_START_CLASS}]")
    rest = re.compile(f"[{_REST_CLASS}]")
    for code in range(0x110000):
        if 0xD800 <= code <= 0xDFFF:
            continue
        char = chr(code)
        assert bool(start.fullmatch(char)) is is_identifier_start(char), hex(code)
        assert bool(rest.fullmatch(char)) is is_identifier_rest(char), hex(code)


def test_a_comment_opener_glued_to_a_symbol_is_an_error_not_a_comment() -> None:
    # Lean reads `//` (subtype) and `\/` (Or) as tokens, so the `-` that follows opens no comment
    for code in ("{x : ℤ //-x = x} axiom a : False", "True \\/-1 = 1", "a +--b", "x :=/- c -/ 1"):
        error = lex_error(lex(code))
        assert error is not None, code
        assert not any(token.kind in (Kind.line_comment, Kind.block_comment) for token in lex(code)), code
    # after whitespace, a name, a number, a closing bracket or a comma Lean reads the comment too
    for code in ("x --c", "foo--c", "5/- c -/", "(h)-- c", "[a]/- c -/", "⟨a, b⟩-- c", "a,-- c"):
        tokens = lex(code)
        assert lex_error(tokens) is None, code
        assert any(token.kind in (Kind.line_comment, Kind.block_comment) for token in tokens), code
