"""Issue 27 §4: the static layer is a screen, and a screen refuses only what is certain.

One class per block: Aesop rule clauses are refused in every frontend (the adversary's route ran a prover
``TacGen`` through ``aesop (add safe tactic gen)``), and the false refusals are fixed as classes (named
arguments inside ``(``, ``set_option pp.*`` without ``in``, ``{{``/``}}``, the simp family's ``?`` forms,
column-0 blocks with a blanked ``#check`` line). Each class: honest text passes, its nearest cheats stay
refused. The shapes that earlier rounds already admitted (``termination_by`` at column 0,
``Matrix.trace``, ``instance : Fact``, ``open X in``) are pinned here as passing too.
"""

from __future__ import annotations

import pytest

from repro.judge import verify_proof
from repro.judge.policy import scan
from repro.lean.text import Kind, lex, read_statement, significant
from repro.records import ReasonCode
from tests._gate_helpers import COLUMN_ZERO_BLOCK, HEADER, MAIN, THEOREM
from tests._gate_helpers import refusals as _refusals

STATEMENT = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry"


def _tactic(line: str) -> str:
    return THEOREM.replace("  norm_num\n", f"  {line}\n")


# -- Aesop rule clauses -----------------------------------------------------------------------------

# The adversary's route (issue 27): a TacGen whose type is a beta-redex over an innocent constant, so no
# refused name appears; Aesop evaluates it and runs the tactic text it returns.
TACGEN = "def gen : (fun (α : Type) => α) (ℕ → ℕ) := fun n => n\n"
AESOP_FRONTENDS = ["aesop", "aesop_cat", "aesop_cat_nonterminal", "aesop_graph", "aesop_mat", "my_frontend"]
AESOP_CLAUSES = ["(add safe tactic gen)", "(add norm 2 tactic gen)", "(erase gen)", "(rule_sets := [-builtin])"]


@pytest.mark.parametrize("clause", AESOP_CLAUSES)
@pytest.mark.parametrize("frontend", AESOP_FRONTENDS)
def test_an_aesop_rule_clause_is_refused_in_every_frontend(frontend: str, clause: str) -> None:
    refused = _refusals(TACGEN + _tactic(f"{frontend} {clause}"))
    name = clause[1:].split()[0]
    assert len(refused) == 1 and refused[0].startswith(f"Aesop rule clause ({name} ...) (line 4:"), refused


@pytest.mark.parametrize(
    "line",
    [
        "aesop (config := { maxRuleApplications := 100 }) (add safe tactic gen)",  # after a clause that stays
        "aesop\n    (add safe tactic gen)",  # Aesop's clause list has no column check at v4.9.0/v4.15.0
        "first | aesop (add safe tactic gen) | norm_num",
        "skip <;> aesop (add safe tactic gen)",
        "exact (by aesop (add safe tactic gen))",  # a tactic block inside a term
        "aesop («add» safe tactic gen)",  # a quoted keyword is no clause to Lean, but fail closed
        "aesop? (add safe tactic gen)",  # also a search form
    ],
)
def test_an_aesop_rule_clause_is_refused_wherever_lean_reads_a_clause(line: str) -> None:
    refused = _refusals(TACGEN + _tactic(line))
    assert any(label.startswith("Aesop rule clause (add ...)") for label in refused), refused


async def test_the_adversary_route_is_refused_by_the_screen_before_lean() -> None:
    """Must-show of issue 27: an Aesop ``(add ...)`` clause refused by the screen (it reached Lean before)."""
    output = f"```lean4\n{TACGEN}{_tactic('aesop (add safe tactic gen)')}```"
    verdict = await verify_proof(STATEMENT, output, None, header=HEADER)
    assert not verdict.verified and verdict.static_passed is False
    assert ReasonCode.forbidden_construct in verdict.reasons
    assert any("Aesop rule clause (add ...)" in detail for detail in verdict.details), verdict.details


@pytest.mark.parametrize(
    "line",
    [
        "aesop",
        "aesop (config := { maxRuleApplications := 100, terminal := true })",
        "aesop (simp_config := { decide := true })",
        "aesop_cat (config := { strategy := .bestFirst })",
        "have h₁ := (Finset.erase {1, 2} 1).card",  # a term after a binding: no clause
        "exact foo (erase s a)",  # an argument of a term application
        "exact foo (rule_sets := x)",  # a term's named argument
        "nlinarith [sq_nonneg (add a b)]",
        "saturate",  # the default rule sets only
        "forward",
        "saturate\n  norm_num",  # the next tactic is no argument
        "forward\n  norm_num",
    ],
)
def test_aesop_without_rule_clauses_and_terms_shaped_like_clauses_pass(line: str) -> None:
    assert _refusals(_tactic(line)) == []


@pytest.mark.parametrize("line", ["saturate [h₀]", "saturate 3 [h₀]", "saturate using Foo", "forward [h₀]"])
def test_aesop_forward_rules_and_rule_sets_are_refused(line: str) -> None:
    refused = _refusals(_tactic(line))
    assert len(refused) == 1 and "with rules or rule sets" in refused[0], refused


def test_a_clause_word_that_ends_the_code_is_refused() -> None:
    refused = _refusals(THEOREM + "  aesop (erase")
    assert refused == [
        "Aesop rule clause (erase ...) (line 4:8; no Aesop rule may be added, erased or switched: an"
        " added rule can run a prover declaration as a tactic)"
    ]


def test_a_configuration_item_named_like_a_clause_keeps_the_literal_rule() -> None:
    """``(add := e)`` is no Aesop clause (Aesop's ``add`` takes rules, no ``:=``): the configuration rule."""
    refused = _refusals(_tactic("unknown_tac (add := f 5)"))
    assert len(refused) == 1 and refused[0].startswith("configuration (add := ...)"), refused


# -- named arguments inside ``(`` -------------------------------------------------------------------

NAMED_IN_PARENTHESES = {
    "after have": "have h := (mul_pos (a := a) (b := b) ha hb)",
    "after exact": "exact (mul_pos (a := a) (b := b) ha hb)",
    "nested": "exact ((mul_pos (a := a) (b := b) ha hb))",
    "an argument of a term": "exact id (mul_pos (a := a) ha hb)",
    "in a hint list": "nlinarith [(mul_pos (a := a) ha hb), sq_nonneg (a - b)]",
    "in a hint list after a comma": "nlinarith [sq_nonneg (a - b), (mul_pos (a := a) ha hb)]",
    "in an anonymous constructor": "exact ⟨(mul_pos (a := a) ha hb), h⟩",
    "after a type ascription colon": "have h : 0 < a * b := (mul_pos (a := a) ha hb)",
    "a dotted head": "exact (Nat.div_le_self (n := x) (k := 12))",
}


@pytest.mark.parametrize("line", list(NAMED_IN_PARENTHESES.values()), ids=list(NAMED_IN_PARENTHESES))
def test_named_arguments_inside_term_parentheses_may_hold_any_term(line: str) -> None:
    assert _refusals(_tactic(line)) == []


PARENTHESISED_TACTICS = {
    "a tactic block on its own line": "(unknown_tac (config := f 5))",
    "after ;": "skip; (unknown_tac (config := f 5))",
    "after <;>": "skip <;> (unknown_tac (config := f 5))",
    "after try": "try (unknown_tac (config := f 5))",
    "after by inside a term": "exact (by unknown_tac (config := f 5))",
    "after fun =>": "exact (fun _ => (unknown_tac (config := f 5)))",
    "a discharger's tactic": "simp (discharger := (unknown_tac (config := f 5)))",
    "apply's own configuration": "apply (config := f 5) foo",
    "nested deeper than the bound": "exact " + "(" * 9 + "foo (n := f 5)" + ")" * 9,
    # Batteries' ``map_tacs [t1; t2]`` holds tactics (red team round 5, R5-05), not terms
    "in a list of tactics": "map_tacs [(unknown_tac (config := f 5))]",
}


@pytest.mark.parametrize("line", list(PARENTHESISED_TACTICS.values()), ids=list(PARENTHESISED_TACTICS))
def test_a_configuration_inside_a_parenthesis_that_may_be_a_tactic_keeps_the_literal_rule(line: str) -> None:
    refused = _refusals(_tactic(line))
    assert len(refused) == 1 and "f is not a literal" in refused[0], refused


def test_a_parenthesis_that_begins_the_code_is_no_term_whatever_ends_the_code() -> None:
    """The token before the first one is none (not the last one, read around the end)."""
    code = "(foo (n := f 5))\n" + THEOREM.replace("  norm_num\n", "  exact\n")
    refused = _refusals(code)
    assert any("f is not a literal" in label for label in refused), refused


def test_a_parenthesis_that_begins_its_line_is_no_term_even_after_a_term_word() -> None:
    """``exact h`` then ``(tac (config := e))`` on the next line: the ``(`` begins a tactic there."""
    refused = _refusals(_tactic("exact h\n  (unknown_tac (config := f 5))"))
    assert len(refused) == 1 and "f is not a literal" in refused[0], refused


# -- set_option pp.* without in ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        "set_option pp.funBinderTypes true\nset_option pp.numericTypes true\n",  # Seed-Prover's files
        "set_option pp.all true\n",
        "set_option pp.maxSteps 1000\n",
        "set_option pp.proofs.withType false in\n",
    ],
)
def test_a_printing_option_may_be_set_with_or_without_in(options: str) -> None:
    assert _refusals(options + THEOREM) == []


@pytest.mark.parametrize(
    "options",
    [
        "set_option pp.all on\n",  # a name for a value
        "set_option trace.Meta.synthInstance true\n",
        "set_option debug.skipKernelTC true\n",
        "set_option pp.all\n",  # no value
    ],
)
def test_any_other_option_or_value_stays_refused(options: str) -> None:
    refused = _refusals(options + THEOREM)
    assert len(refused) == 1 and refused[0].startswith("set_option"), refused


def test_our_section_ends_before_our_commands_so_a_prover_option_cannot_reach_them() -> None:
    """The mechanism the pp.* allowance rests on: the prover's code (1) sits between our ``section`` and
    ``end`` (:mod:`repro.judge.scopes`), and the bridge and ``#print axioms`` come after that ``end``."""
    from repro.judge.screen import lean_commands, reserved_name

    reserved = reserved_name(STATEMENT)
    code = "set_option pp.all true\n" + THEOREM
    commands = lean_commands(read_statement(STATEMENT), reserved, code)
    assert commands[0].endswith(f"section {reserved}") and commands[1] == code
    closing, bridge = commands[2].rsplit("\n", 1)
    assert closing == f"end {reserved}" and bridge.startswith(f"theorem {reserved}_bridge")
    assert commands[3] == "#print axioms _root_.robe_total"
    # closing our section by name needs the reserved prefix, which every name component is refused for
    escape = _refusals(f"end {reserved}\nset_option pp.all true\n" + THEOREM)
    assert any(label.startswith(f"reserved name {reserved}") for label in escape), escape


# -- {{ and }} --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "braces"), [("{{", ["{", "{"]), ("}}", ["}", "}"]), ("{3}}", ["{", "3", "}", "}"])])
def test_double_braces_are_two_tokens_as_in_lean(text: str, braces: list[str]) -> None:
    assert [t.text for t in significant(lex(text))] == braces
    assert all(t.kind == Kind.symbol for t in significant(lex(text)) if t.text in "{}")


def test_a_strict_implicit_binder_is_still_one_binder_group() -> None:
    statement = read_statement("theorem t {{n : ℕ}} (h : n = 1) : n = 1 := by sorry")
    assert statement.binders == ["{{n : ℕ}}", "(h : n = 1)"] and statement.conclusion == "n = 1"


@pytest.mark.parametrize(
    "code",
    [
        "instance : Fact ((3 : ℕ) ∈ {y : ℕ | y = 2 ∨ y ∈ {3}}) := ⟨by simp⟩\n" + THEOREM,
        "def good : Set ℕ := {y : ℕ | y = 2 ∨ y ∈ {3}}\n" + THEOREM,
        "example : ({{1}} : Set (Set ℕ)) = {{1}} := rfl\n" + THEOREM,
        _tactic("norm_num [show (3 : ℕ) ∈ {y : ℕ | y ∈ {3}} by simp]"),
    ],
)
def test_nested_braces_pass(code: str) -> None:
    assert _refusals(code) == []


def test_a_line_ending_in_double_braces_is_complete_so_the_next_column_zero_word_is_judged() -> None:
    """Was a miss: read as one unknown symbol, ``}}`` looked like an unfinished term and hid the command."""
    refused = _refusals("def s : Set ℕ := {y : ℕ | y ∈ {3}}\nreassoc_axiom robe_total\n" + THEOREM)
    assert refused == ["reassoc_axiom at the start of a line (line 2:0; not a command the gate allows)"]


def test_a_configuration_with_a_nested_structure_closed_by_double_braces_is_read() -> None:
    assert _refusals(_tactic("aesop (config := { a := { b := 1 }})")) == []
    refused = _refusals(_tactic("aesop (config := { a := { b := f 1 }})"))
    assert len(refused) == 1 and "is not a literal" in refused[0], refused


# -- the simp family's ? forms ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "line", ["simp?", "simp?!", "simp? [h₀] at *", "simp_all?", "simp_all?!", "dsimp?", "dsimp?! only", "simp? only"]
)
def test_the_simp_family_question_forms_pass_and_are_no_search(line: str) -> None:
    result = scan(_tactic(line), header=HEADER, main_name=MAIN)
    assert result.forbidden == [] and not result.uses_search_tactic


def test_a_simp_question_form_passes_at_column_zero_too() -> None:
    assert _refusals(COLUMN_ZERO_BLOCK + "simp?\n") == []


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("simp? (config := { maxSteps := f 1 })", "f is not a literal"),
        ("simp? says simp", "search tactic says"),
        ("simp_arith?", "search tactic simp_arith?"),
        ("exact?", "search tactic exact?"),
        ("aesop?", "search tactic aesop?"),
        ("gcongr?", "search tactic gcongr?"),
    ],
)
def test_the_nearest_search_forms_stay_refused(line: str, expected: str) -> None:
    refused = _refusals(_tactic(line))
    assert len(refused) == 1 and expected in refused[0], refused


# -- column-0 blocks with a blanked #check line -----------------------------------------------------

BLOCK_HEAD = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n"


@pytest.mark.parametrize(
    "body",
    [
        "subst h₀\n#check h₀\nnorm_num\n",
        "#print axioms Nat.div_le_self\nsubst h₀\nnorm_num\n",
        "#check @Nat.div_le_self\nsubst h₀\n#check h₀\nnorm_num\n",
    ],
)
def test_a_blanked_check_line_leaves_a_column_zero_block_open(body: str) -> None:
    result = scan(BLOCK_HEAD + body, header=HEADER, main_name=MAIN)
    assert result.forbidden == []
    assert "#" not in result.lean_code  # Lean never sees the lines that kept the block open


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("subst h₀\n#check h₀\nreassoc_axiom robe_total\n", "reassoc_axiom at the start of a line"),
        ("subst h₀\n#eval 1\nnorm_num\n", "norm_num at the start of a line"),  # #eval is not blanked
        ("subst h₀\n#check h₀ h₀\nnorm_num\n", "norm_num at the start of a line"),  # not one name: not blanked
    ],
)
def test_a_check_line_that_is_no_blanked_name_or_a_following_command_is_refused(body: str, expected: str) -> None:
    assert any(expected in label for label in _refusals(BLOCK_HEAD + body))


def test_a_blanked_check_of_by_opens_no_column_zero_block() -> None:
    code = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by subst h₀; norm_num\n#check by\nsimp\n"
    assert _refusals(code) == ["simp at the start of a line (line 3:0; not a command the gate allows)"]


# -- shapes earlier rounds admitted (issue 19 §3), listed again by issue 27 §4 -----------------------

ALREADY_ADMITTED = {
    "a column-0 tactic block": COLUMN_ZERO_BLOCK,
    "termination_by and decreasing_by at column 0": "def f : ℕ → ℕ\n  | 0 => 0\n  | n + 1 => f n\n"
    "termination_by n => n\ndecreasing_by\nsimp_wf\nomega\n" + THEOREM,
    "where at column 0": THEOREM.replace("  norm_num\n", "  exact aux\nwhere\n  aux : x / 12 = 300 := by norm_num\n"),
    "Matrix.trace": "theorem aux (A : Matrix (Fin 2) (Fin 2) ℝ) : Matrix.trace A = A 0 0 + A 1 1 := by\n"
    "  rw [Matrix.trace_fin_two]\n" + THEOREM,
    "a trace field": "theorem aux (A : Matrix (Fin 2) (Fin 2) ℝ) : (A * A).trace = (A * A).trace := by rfl\n" + THEOREM,
    "instance : Fact": "instance : Fact (Nat.Prime 5) := ⟨by norm_num⟩\n" + THEOREM,
    "a named instance of NeZero": "instance five : NeZero (5 : ℕ) := ⟨by norm_num⟩\n" + THEOREM,
    "open X in outside the allowlist": "open Polynomial Filter MeasureTheory ProbabilityTheory in\n" + THEOREM,
    "open X in inside a tactic block": THEOREM.replace("  norm_num\n", "  open Finset in\n  norm_num\n"),
}


@pytest.mark.parametrize("code", list(ALREADY_ADMITTED.values()), ids=list(ALREADY_ADMITTED))
def test_shapes_admitted_by_earlier_rounds_still_pass(code: str) -> None:
    assert _refusals(code) == []


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("instance : Fact True → OfNat ℕ 4 := fun _ => ⟨5⟩\n" + THEOREM, "instance type that is not"),
        ("open Lean in\n" + THEOREM, "the Lean namespace"),
        ("open Linarith in\n" + THEOREM, "a namespace of tactic implementations"),
        (_tactic('trace "x"'), "metaprogramming name trace"),
        (THEOREM + "reassoc_axiom robe_total\n", "at the start of a line"),
    ],
)
def test_their_nearest_cheats_stay_refused(code: str, expected: str) -> None:
    assert any(expected in label for label in _refusals(code)), _refusals(code)
