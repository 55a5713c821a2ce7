"""Pins for the survivors of a per-function mutation sweep (issue 19 §6), third batch.

Swept one function at a time (``benchmarks/gate_mutation.py --only 'MODULE:FUNCTION |'``): the
policy's ``_identifier``, ``scan``, ``_dedented_line_starts``, ``_open``, ``_allowed_option``,
``_kernel_configuration``, ``_configured``; the lexer's ``step``, ``number``, ``char_literal_end``,
``_is_letter_like``; the statement reader's ``_binders``, ``top_level_equation`` and
``_binds_tighter_than_equals``. Each test is a minimal Lean text whose verdict only the rule under
test decides, asserted through the refusals a user sees.
"""

from __future__ import annotations

import time

import pytest

from repro.judge.policy import scan
from repro.lean.text import Kind, LeanCode, StaticTimeout, lex, read_statement, time_limit
from repro.lean.text.statement import top_level_equation
from tests._gate_helpers import HEADER, MAIN, THEOREM
from tests._gate_helpers import refusals as _refusals


@pytest.mark.parametrize("keyword", ["theorem", "lemma", "def", "abbrev"])
def test_a_declaration_whose_name_is_a_symbol_is_refused_as_nameless(keyword: str) -> None:
    """``lemma : 1 = 1 := rfl``: what follows the keyword is no identifier, so the declaration has no name."""
    refused = _refusals(f"{keyword} : 1 = 1 := rfl\n" + THEOREM)
    assert any(label.startswith(f"{keyword} without a name") for label in refused), refused


@pytest.mark.parametrize("word", ["private", "protected", "mutual", "variable", "foo"])
def test_only_noncomputable_may_lead_an_unnamed_section(word: str) -> None:
    """``noncomputable section`` passes as one command; any other word before ``section`` is judged as itself."""
    assert _refusals("noncomputable section\n" + THEOREM + "end\n") == []
    refused = _refusals(f"{word} section\n" + THEOREM + "end\n")
    assert any(label.startswith(f"{word} ") and "(line 1:0" in label for label in refused), refused


def test_a_statement_checked_without_line_starts_may_continue_its_type_at_column_zero() -> None:
    """Our own statement is scanned with ``line_starts=False``: an argument at column 0 is no command there
    (Lean only fails on a real one), while prover code gets the column-0 rule."""
    declaration = "theorem t (f : ℕ → ℕ) (a : ℕ) (h : f a = 1) : f\na = 1"
    assert scan(declaration, header=HEADER, line_starts=False, main_name="t").forbidden == []
    assert scan(declaration, header=HEADER, main_name="t").forbidden == [
        "a at the start of a line (line 2:0; not a command the gate allows)"
    ]


# ``set_option`` lines and whether the gate lets them through (policy._allowed_option), written out here:
# resource limits take a numeral; tactic.hygienic and linter.* take true/false, with or without ``in``;
# pp.* takes true/false or a numeral, with or without ``in`` (issue 27 §4: the option ends with the prover's
# section, before our commands); any other option is refused.
_OPTION_RULE = "only resource limits, pp.*, linter.* and tactic.hygienic"
SET_OPTIONS = {
    "maxHeartbeats 400000": True,
    "maxHeartbeats 400000 in": True,
    "synthInstance.maxHeartbeats 20000": True,
    "maxRecDepth 1000 in": True,
    "maxHeartbeats true": False,
    "maxHeartbeats maxRecDepth": False,
    "tactic.hygienic false": True,
    "tactic.hygienic true": True,
    "tactic.hygienic 0": False,
    "tactic.hygienic maxHeartbeats": False,
    "linter.unusedVariables true": True,
    "linter.unusedVariables false in": True,
    "linter.unusedVariables 0 in": False,
    "pp.all true in": True,
    "pp.all false in": True,
    "pp.proofs.threshold 5 in": True,
    "pp.all true": True,
    "pp.proofs.threshold 5": True,
    "pp.all foo": False,
    "pp.all foo in": False,
    "pp.all tru in": False,
    "debug.skipKernelTC true in": False,
    "debug.skipKernelTC 1": False,
    "trace.Meta.synthInstance true in": False,
}


@pytest.mark.parametrize(("option", "allowed"), SET_OPTIONS.items())
def test_each_set_option_form_is_judged_by_its_own_allowlist(option: str, allowed: bool) -> None:
    refused = _refusals(f"set_option {option}\n" + THEOREM)
    name = option.split()[0]
    assert refused == ([] if allowed else [f"set_option {name} (line 1:0; {_OPTION_RULE})"])


@pytest.mark.parametrize("option", ["maxHeartbeats", "pp.all", "tactic.hygienic"])
def test_a_set_option_without_a_value_at_the_end_of_the_code_is_refused(option: str) -> None:
    refused = _refusals(THEOREM + f"set_option {option}")
    assert refused == [f"set_option {option} (line 4:0; {_OPTION_RULE})"]


def test_by_may_begin_a_line_after_a_complete_term() -> None:
    """``show T`` then ``by ...`` on the next line at column 0 is the ``show ... by`` term, no command."""
    code = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := show x / 12 = 300\n{word} subst h₀; norm_num\n"
    assert _refusals(code.format(word="by")) == []
    assert _refusals(code.format(word="foo")) == [
        "foo at the start of a line (line 2:0; not a command the gate allows)"
    ]


@pytest.mark.parametrize("last", ["private", "noncomputable"])
def test_a_modifier_at_the_end_of_the_code_is_no_modifier_of_the_first_declaration(last: str) -> None:
    """The backward walk for modifiers stops at the code's start: it never wraps round to its last word."""
    result = scan(THEOREM + last, header=HEADER, main_name=MAIN)
    assert [d.modifiers for d in result.declarations if d.name == MAIN] == [[]]
    assert result.forbidden == [f"{last} before nothing (line 4:0; a modifier may only precede a declaration)"]


@pytest.mark.parametrize("name", ["_root_.foo", "Nat._root_.foo", "A.B._root_.foo"])
def test_a_declaration_through_root_is_refused_wherever_root_stands_in_its_name(name: str) -> None:
    """``theorem Nat._root_.foo`` declares ``foo`` at the root as surely as ``theorem _root_.foo``."""
    assert _refusals(f"theorem {name} : 1 = 1 := rfl\n" + THEOREM) == [f"declaration {name} through _root_ (line 1:0)"]


@pytest.mark.parametrize("literal", ["'ab", "'ab'", "'\\nb'", "'\\x41b'", "'\\u{3b1}b'"])
def test_a_char_literal_needs_its_closing_quote_right_after_one_character(literal: str) -> None:
    """``'ab`` is no char literal (Lean: "missing end of character literal"): the lexer stops there, and the
    gate reports the code as not lexing, at the quote."""
    tokens = lex(f"x {literal} y")
    assert [t.kind for t in tokens][:2] == [Kind.identifier, Kind.whitespace]
    assert tokens[2].kind == Kind.error and tokens[2].start == 2
    assert _refusals(THEOREM + f"  exact {literal}\n") == [
        "unterminated comment, string, char or «name», or a comment opener or quote glued to a symbol, at line 4:8"
    ]


def test_the_policy_scan_itself_honours_the_time_limit() -> None:
    """Lexed before the limit starts and checked without the line-start passes (which check it too), the
    scan's own loop must still stop once the limit has passed: the first word already checks it."""
    source = LeanCode.of(THEOREM)
    assert source.significant and source.error is None  # lexed here, outside the limit
    with time_limit(0.0):
        time.sleep(0.01)
        with pytest.raises(StaticTimeout):
            scan(source, header=HEADER, line_starts=False, main_name=MAIN)


@pytest.mark.parametrize(("clause", "word"), [("renaming succ → s", "renaming"), ("hiding succ", "hiding")])
def test_a_symbol_after_the_opened_names_is_no_explicit_name_list_unless_it_is_a_parenthesis(
    clause: str, word: str
) -> None:
    """Only ``open X (a b)`` is the explicit-list form; ``→`` after ``renaming`` is refused as renaming only."""
    assert _refusals(f"open Nat {clause}\n" + THEOREM) == [f"open ... {word} (line 1:0)"]
    assert _refusals("open Nat (succ)\n" + THEOREM) == ["open with an explicit name list (line 1:0)"]


@pytest.mark.parametrize("sign", ["+", "-"])
def test_decide_with_a_glued_flag_of_either_sign_is_refused(sign: str) -> None:
    refused = _refusals(THEOREM.replace("  norm_num\n", f"  decide {sign}revert\n"))
    assert refused == ["decide with a configuration (line 3:2; kernel reduction is refused: leanprover/lean4#8060)"]


def test_a_column_zero_where_starts_the_dedent_check_afresh() -> None:
    """After ``where`` at column 0 the helper's own block sets the column: a word left of it is refused,
    a tactic there passes (the column-0 line must not leave the leftmost column at 0)."""
    code = (
        "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  exact helper\nwhere\n"
        "  helper : x / 12 = 300 := by\n      subst h₀\n      norm_num\n  {word}\n"
    )
    assert _refusals(code.format(word="norm_num")) == []
    assert _refusals(code.format(word="foo")) == [
        "foo at the start of a line left of the tactic block above it (line 7:2; Lean would read a command there,"
        " and it is not one the gate allows)"
    ]


@pytest.mark.parametrize("number", ["12", "1.5", "1e5", "2E+3", "1.5e-2", "0x1F", "0b10", "0o17"])
def test_a_name_glued_after_a_number_is_read_as_a_name(number: str) -> None:
    """Every digit loop of the number reader stops at the first character that is not a digit of its part:
    ``1e5sorry`` is the number ``1e5`` then ``sorry``, which the gate refuses."""
    assert [t.text for t in lex(f"{number}sorry")] == [number, "sorry"]
    column = len("  exact ") + len(number)
    assert _refusals(THEOREM.replace("  norm_num\n", f"  exact {number}sorry\n")) == [f"sorry (line 3:{column})"]


# How numbers end (lexer.number, Lean's ``numberFnAux``/``decimalNumberFn``): only ASCII digits count, a
# fraction needs a digit after its ``.``, an exponent a digit after its ``e``/``E`` and sign, and a number
# may end the text anywhere.
NUMBER_ENDS = {
    "12": ["12"],
    "1.5": ["1.5"],
    "1e5": ["1e5"],
    "0x1F": ["0x1F"],
    "1e": ["1", "e"],
    "1e+": ["1", "e", "+"],
    "1.": ["1", "."],
    "1x2": ["1", "x2"],
    "1.x": ["1", ".", "x"],
    "1ex": ["1", "ex"],
    "2exp 1": ["2", "exp", " ", "1"],
    "1e+x": ["1", "e", "+", "x"],
    "1٣": ["1", "٣"],
    "1.٣": ["1", ".", "٣"],
    "1.5٣": ["1.5", "٣"],
    "1e٣": ["1", "e", "٣"],
    "1e5٣": ["1e5", "٣"],
}


@pytest.mark.parametrize(("text", "tokens"), NUMBER_ENDS.items())
def test_a_number_ends_where_lean_ends_it(text: str, tokens: list[str]) -> None:
    assert [t.text for t in lex(text)] == tokens


@pytest.mark.parametrize("stray", [")", "]", "⟩"])
def test_a_stray_closing_bracket_in_a_signature_is_skipped_not_crashed_on(stray: str) -> None:
    """A closing bracket at depth 0 with no group open before it ends no binder group."""
    statement = read_statement(f"theorem t {stray} (x : ℕ) : x = x := by sorry")
    assert (statement.binders, statement.conclusion) == (["(x : ℕ)"], "x = x")


def test_binder_groups_are_read_at_the_top_level_only() -> None:
    """Brackets and names inside a binder group belong to it: ``(h : f (1) = 1)`` is one group."""
    statement = read_statement("theorem t {α : Type} (f : ℕ → ℕ) (h : f (1) = [1].sum) n : f 1 = 1 := by sorry")
    assert statement.binders == ["{α : Type}", "(f : ℕ → ℕ)", "(h : f (1) = [1].sum)", "n"]
    assert statement.conclusion == "f 1 = 1"


def test_an_indented_attribute_line_starts_a_new_command_for_the_dedent_check() -> None:
    """``  @[simp] theorem helper ... := by`` begins a command: its own block sets the column, so a word left
    of that block is refused even though it stands where the first theorem's tactics stood."""
    code = THEOREM + "  @[simp] theorem helper : 1 = 1 := by\n      rfl\n  foo\n"
    assert _refusals(code) == [
        "foo at the start of a line left of the tactic block above it (line 6:2; Lean would read a command there,"
        " and it is not one the gate allows)"
    ]


def test_a_field_after_the_decide_function_on_the_next_line_is_no_configuration() -> None:
    """``decide True`` then the next field ``snd := 2`` of a structure instance: only ``(name := ...)`` right
    after ``decide`` configures it."""
    assert _refusals("example : Bool × ℕ := { fst := decide True\n  snd := 2 }\n" + THEOREM) == []


def test_a_bang_after_an_operator_is_prefix_negation_and_leaves_no_answer() -> None:
    """``!`` is factorial only after a name, a numeral or ``)``; after an operator it is Bool negation,
    which may wrap the equation (``1 + !n = 5``), so no answer is read."""
    assert top_level_equation("1 + !n = 5") is None
    assert top_level_equation("x ^ !b = 1") is None
    assert top_level_equation("(n)! = 5") == ("(n)!", "5")
    assert top_level_equation("2 ! = 2") == ("2 !", "2")
