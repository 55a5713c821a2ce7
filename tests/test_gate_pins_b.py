"""More rules that only a surviving mutant showed to be unpinned (issue 19 §6; training sample, seed 100).

Like ``test_gate_pins.py``: each test names what a user would notice if the rule stopped working (a
refused output let through, an honest output refused, a proposition read wrongly), and each was seen to
kill its mutant (``benchmarks/gate_mutation.py --only NAME``). Tables are pinned from independent
copies written here, never imported from ``repro``.
"""

from __future__ import annotations

import pytest

from repro.judge import verify_proof
from repro.lean.protocol import LeanResult
from repro.lean.text import Kind, final_proposition, lex
from repro.records import ReasonCode
from tests._gate_helpers import HEADER, THEOREM, refusals

STATEMENT = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry"

HELPER = "def spin (n : ℕ) : ℕ := n\n"
# the main theorem with its tactic block indented by four, so a line at column 2 is left of the block
DEDENT_BLOCK = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n    subst h₀\n    norm_num\n"


def with_tactic(line: str) -> str:
    return HELPER + THEOREM.replace("  subst h₀\n", f"  subst h₀\n  {line}\n")


def test_only_a_text_opened_by_a_parenthesis_is_unwrapped_as_parenthesised() -> None:
    """``(P)`` is read as ``P``; a text that merely ends in ``)`` at the level it started on is not a
    parenthesised whole (here its first bracket is a ``[``), so nothing is cut from it."""
    assert final_proposition("(x = 5)") == ("x = 5", False)
    assert final_proposition("[x = 5)") == ("[x = 5)", False)
    assert final_proposition("x)") == ("x)", False)
    assert final_proposition("(x = 5]") == ("(x = 5]", False)  # closed by no `)`
    assert final_proposition("((x = 5)") == ("((x = 5)", False)  # the first `(` never closes


def test_a_unique_existence_is_an_existential_proposition() -> None:
    """``∃! x, P x``: its answer is a witness, not the right side of an equation (like ``∃``; the lexer reads
    ``∃!`` as ``∃`` then ``!``). A binder with no top-level comma is left whole, existential for ``∃`` only."""
    assert final_proposition("∃ x") == ("∃ x", True)
    assert final_proposition("∀ x") == ("∀ x", False)
    assert final_proposition("∃! x : ℕ, x + 1 = 2") == ("∃! x : ℕ, x + 1 = 2", True)
    assert final_proposition("∃ x : ℕ, x + 1 = 2") == ("∃ x : ℕ, x + 1 = 2", True)
    assert final_proposition("∀ y : ℕ, ∃! x : ℕ, x = y") == ("∃! x : ℕ, x = y", True)


def test_an_instance_with_a_strict_implicit_binder_before_its_colon_passes() -> None:
    """``⦄`` closes the binder: the type's ``:`` after it stands at depth 0 and its class is read."""
    assert refusals("instance foo ⦃n : ℕ⦄ : Fact (0 < n + 1) := ⟨by omega⟩\n" + THEOREM) == []


def test_an_instance_type_with_a_strict_implicit_binder_inside_brackets_passes() -> None:
    """``Fact (∀ ⦃n : ℕ⦄, 0 ≤ n)``: ``⦄`` closes its bracket, so the type is ``Fact`` applied to one group."""
    assert refusals("instance : Fact (∀ ⦃n : ℕ⦄, 0 ≤ n) := ⟨fun _ => Nat.zero_le _⟩\n" + THEOREM) == []


def test_an_argument_line_starting_with_at_left_of_the_block_continues_the_tactic() -> None:
    """``rw [h]`` then ``at h₀`` on a line left of the block: the location of the rewrite, not a command."""
    code = DEDENT_BLOCK.replace("    subst h₀\n", "    rw [eq_comm]\n  at h₀\n    subst h₀\n")
    assert refusals(code) == []
    refused = refusals(code.replace("  at h₀\n", "  foo_command h₀\n"))
    assert len(refused) == 1 and refused[0].startswith("foo_command at the start of a line left of"), refused


def test_trace_after_a_spaced_dot_is_no_field_of_the_term_before_it() -> None:
    """``(A * B).trace`` is a field; with a space after the ``.`` Lean reads no projection there, so
    ``trace`` is judged like any name (the tactic ``trace`` evaluates code)."""
    assert refusals(THEOREM.replace("  norm_num\n", "  have h := (A * B).trace\n  norm_num\n")) == []
    refused = refusals(THEOREM.replace("  norm_num\n", "  have h := (A * B). trace\n  norm_num\n"))
    assert refused and all("trace" in label for label in refused), refused


@pytest.mark.parametrize("before", [";", "▸", "+", " 2"])
def test_trace_after_a_dot_glued_to_no_closing_bracket_is_no_field(before: str) -> None:
    """Only a closing bracket right before the ``.`` makes ``.trace`` a field of a term; after ``;`` the
    ``.`` may be the tactic block's ``.`` (``skip;.trace``), so ``trace`` is judged like any name."""
    refused = refusals(THEOREM.replace("  norm_num\n", f"  exact h₀{before}.trace\n"))
    assert any("metaprogramming name trace" in label for label in refused), refused


@pytest.mark.parametrize("opener", ["(", "[", "{", "⟨"])
def test_a_quote_symbol_right_after_an_open_bracket_is_lexed_whole(opener: str) -> None:
    """``[∑' n, f n]``: after an opening bracket Lean starts a token at ``∑'`` as we do (honest), so it is
    one symbol, never an error token."""
    closer = {"(": ")", "[": "]", "{": "}", "⟨": "⟩"}[opener]
    term = f"{opener}∑' n : ℕ, (0 : ℝ){closer}"
    tokens = [t for t in lex(term) if not t.is_trivia]
    assert (tokens[0].text, tokens[1].kind, tokens[1].text) == (opener, Kind.symbol, "∑'"), tokens
    assert refusals(THEOREM.replace("  norm_num\n", f"  have h := {term}\n  norm_num\n")) == []


# words after which Lean reads a term (policy._TERM_BEFORE_WORDS), each with a line that puts one right
# before the head of an application holding a named argument
TERM_BEFORE_WORDS = {
    "exact": "exact foo (n := spin 1)",
    "apply": "apply foo (n := spin 1)",
    "refine": "refine foo (n := spin 1)",
    "refine'": "refine' foo (n := spin 1)",
    "use": "use foo (n := spin 1)",
    "exists": "exists foo (n := spin 1)",
    "show": "show foo (n := spin 1)",
    "from": "exact show x = x from foo (n := spin 1)",
    "using": "simpa using foo (n := spin 1)",
    "specialize": "specialize foo (n := spin 1)",
    "convert": "convert foo (n := spin 1)",
    "exact_mod_cast": "exact_mod_cast foo (n := spin 1)",
    "apply_mod_cast": "apply_mod_cast foo (n := spin 1)",
    "rcases": "rcases foo (n := spin 1) with h",
    "cases": "cases foo (n := spin 1)",
    "induction": "induction foo (n := spin 1)",
    "calc": "calc foo (n := spin 1) = x := by omega",
}


@pytest.mark.parametrize("word", sorted(TERM_BEFORE_WORDS))
def test_a_named_argument_after_a_term_word_is_a_term(word: str) -> None:
    assert refusals(with_tactic(TERM_BEFORE_WORDS[word])) == []


def test_a_prop_class_name_as_the_quoted_last_component_of_a_declaration_is_refused() -> None:
    """``def Nat.«Fact»`` declares ``Nat.Fact`` (one dotted name, its last component quoted): after ``open
    Nat`` that is what ``Fact`` means, so an ``instance : Fact ...`` would no longer be Prop-valued."""
    tokens = [t.text for t in lex("Nat.«Fact» x") if not t.is_trivia]
    assert tokens == ["Nat.«Fact»", "x"], tokens
    refused = refusals("def Nat.«Fact» (p : Prop) : Type := PUnit\n" + THEOREM)
    assert len(refused) == 1 and "named like a Prop class" in refused[0], refused


def test_parenthesised_non_name_before_an_assignment_is_no_configuration_item() -> None:
    """A configuration item is ``(name := value)``; ``(3 := ...)`` is none (a parse error Lean reports), so the
    literal-only rule does not read it, while the same value after a name is refused as a configuration."""
    assert refusals(THEOREM.replace("  norm_num\n", "  simp (3 := spin 1)\n")) == []
    refused = refusals(THEOREM.replace("  norm_num\n", "  simp (n := spin 1)\n"))
    assert len(refused) == 1 and refused[0].startswith("configuration (n := ...)"), refused


def test_trace_after_a_dot_spaced_from_the_closing_bracket_is_no_field() -> None:
    """``(A * B) .trace``: the ``.`` must be glued to the bracket too (Lean's ``proj`` is ``checkNoWsBefore``
    on both sides); spaced from it, ``.trace`` is no projection, so ``trace`` is judged like any name."""
    refused = refusals(THEOREM.replace("  norm_num\n", "  have h := (A * B) .trace\n  norm_num\n"))
    assert refused and all("trace" in label for label in refused), refused


def test_trace_glued_after_a_combinator_after_a_bracket_is_the_tactic() -> None:
    """``(norm_num)<;>trace x``: only a ``.`` (or ``|>.``) between the bracket and the name makes a field;
    after ``<;>`` Lean runs the tactic ``trace``, refused."""
    refused = refusals(THEOREM.replace("  norm_num\n", "  (norm_num)<;>trace x\n"))
    assert refused and all("trace" in label for label in refused), refused


@pytest.mark.parametrize(
    "instance",
    [
        "instance : NeZero (⟨2, by norm_num⟩ : Fin 3) := ⟨by decide⟩\n",
        "instance : Fact ([1, 2].length = 2) := ⟨rfl⟩\n",
        "instance : Fact ({1, 2} = ({2, 1} : Finset ℕ)) := ⟨by decide⟩\n",
    ],
    ids=["anonymous constructor", "list literal", "set literal"],
)
def test_an_instance_type_with_brackets_nested_in_its_argument_passes(instance: str) -> None:
    """Each bracket inside the class's argument opens and closes a level: the type stays ``C (arg)``."""
    assert refusals(instance + THEOREM) == []


def test_an_instance_type_ends_at_where_even_when_a_field_is_given_a_type() -> None:
    """``instance : C args where`` ends the type at ``where``; the fields after it (``out : T := v``, a
    ``letDecl`` with its type) are the value, not more of the type."""
    assert refusals("instance : Fact (1 < 2) where\n  out : 1 < 2 := by norm_num\n" + THEOREM) == []


def test_a_forall_binder_ends_at_its_top_level_comma_not_one_inside_brackets() -> None:
    assert final_proposition("∀ x ∈ ({1, 2} : Finset ℕ), x < 3") == ("x < 3", False)
    assert final_proposition("∀ p : ℕ × ℕ, p = (1, 2) → p.1 = 1") == ("p.1 = 1", False)


def test_a_text_whose_first_and_last_brackets_do_not_pair_is_not_unwrapped() -> None:
    """``(x + 1) * 2 = (6)`` starts with ``(`` and ends with ``)``, but they close different groups."""
    assert final_proposition("(x + 1) * 2 = (6)") == ("(x + 1) * 2 = (6)", False)


def test_a_bare_root_prefix_is_judged_as_a_name_of_its_own() -> None:
    """``_root_`` alone has no name after it (nothing to judge as rooted); ``_root_.Lean.foo`` is judged from
    ``Lean`` on."""
    assert refusals(THEOREM.replace("  norm_num\n", "  exact _root_\n")) == []
    refused = refusals(THEOREM.replace("  norm_num\n", "  exact _root_.Lean.foo\n"))
    assert len(refused) == 1 and "the Lean namespace" in refused[0], refused


class _AnswersNothing:
    """A Lean backend that returns no result at all for the four commands (a broken backend)."""

    backend_id, real_lean, toolchain, mathlib_revision = "answers-nothing", False, "fake", "fake"

    async def check(self, code: str, header: str) -> LeanResult:
        raise AssertionError("the gate asks for the whole sequence")

    async def check_sequence(self, commands: list[str], header: str) -> list[LeanResult]:
        return []

    async def close(self) -> None:
        return None


async def test_a_backend_that_returns_no_result_makes_lean_unavailable_not_a_crash() -> None:
    """``verify_proof`` never raises for a bad backend: no results is Lean infrastructure, not an IndexError."""
    verdict = await verify_proof(STATEMENT, THEOREM, _AnswersNothing(), header=HEADER)
    assert not verdict.verified and verdict.reasons == [ReasonCode.lean_unavailable], verdict.details


@pytest.mark.parametrize(
    "instance",
    [
        "instance foo where\n  out : Fact (1 < 2) := ⟨by norm_num⟩\n",
        "instance\nlemma foo : Fact (1 < 2) := ⟨by norm_num⟩\n",
        "instance foo\n  | h : Fact (1 < 2) := ⟨by norm_num⟩\n",
    ],
    ids=["where before any colon", "a command keyword as its name", "an alternative before any colon"],
)
def test_an_instance_whose_type_never_starts_is_refused(instance: str) -> None:
    """The type search ends at ``where`` or ``|`` (the value) or at a command keyword: a ``: Fact ...`` after
    one belongs to a field, an alternative or the next command, never to this instance, which has no type."""
    refused = refusals(instance + THEOREM)
    assert len(refused) == 1 and refused[0].startswith("instance of nothing"), refused


def test_only_a_priority_right_inside_a_top_level_bracket_of_an_instance_is_refused() -> None:
    """``instance (priority := 100)`` is refused; a ``(priority`` nested in a binder's type is a term."""
    helper = "def priority : ℕ := 1\n"
    assert refusals(helper + "instance foo [Fact (0 < (priority))] : Fact (0 < 1) := ⟨by norm_num⟩\n" + THEOREM) == []
    refused = refusals("instance (priority := 100) : Fact (0 < 1) := ⟨by norm_num⟩\n" + THEOREM)
    assert refused and refused[0].startswith("instance with a priority"), refused


def test_an_instance_named_through_root_anywhere_in_its_name_is_refused() -> None:
    refused = refusals("instance Nat._root_.foo : Fact (0 < 1) := ⟨by norm_num⟩\n" + THEOREM)
    assert refused == ["instance Nat._root_.foo through _root_ (line 1:0)"], refused


@pytest.mark.parametrize(
    ("code", "line"),
    [(THEOREM + "universe", 4), ("universe " + THEOREM, 1), ("universe\nu\n" + THEOREM, 1)],
    ids=["at the end of the code", "before a command keyword", "its name on the next line"],
)
def test_universe_without_a_plain_name_on_its_line_is_refused(code: str, line: int) -> None:
    """``universe u`` needs a plain name on its own line: none at the code's end (no crash), not a command
    keyword (``universe theorem ...``), not a name on the next line (where a column-0 word stands)."""
    refused = refusals(code)
    assert f"universe without a plain name (line {line}:0)" in refused, refused
    assert refusals("universe u\n" + THEOREM) == []


def test_only_a_declaration_that_is_no_instance_is_refused_for_a_prop_class_name() -> None:
    """``def Nat.Fact`` could be what ``Fact`` means after ``open Nat`` (refused); an instance named so is a
    proof of a Prop class (its own type is checked as one), never a class, so its name shadows nothing."""
    assert refusals("instance Nat.Fact : Fact (0 < 1) := ⟨by norm_num⟩\n" + THEOREM) == []
    refused = refusals("def Nat.Fact : ℕ := 1\n" + THEOREM)
    assert refused == ["declaration Nat.Fact named like a Prop class (line 1:0)"], refused


def test_only_section_alone_after_noncomputable_is_an_unnamed_section() -> None:
    """``noncomputable section`` passes; ``noncomputable foo_command`` alone on its line is no section: the
    modifier then precedes an unknown word (a command the tables may miss), refused."""
    assert refusals("noncomputable section\n" + THEOREM) == []
    refused = refusals("noncomputable foo_command\n" + THEOREM)
    assert len(refused) == 1 and refused[0].startswith("noncomputable before foo_command"), refused
