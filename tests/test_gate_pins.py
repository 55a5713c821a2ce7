"""Rules of the gate and its readers that only a surviving mutant showed to be unpinned (issue 19 §6).

Each test names the behaviour a user would notice if the rule stopped working: a refused output
let through, an honest output refused, an answer read from the wrong place. The mutation benchmark
(``benchmarks/gate_mutation.py``) found each one: a one-token change to the rule that no other
test noticed.
"""

from __future__ import annotations

import pytest

from repro.config import StaticLimits
from repro.judge import verify_proof
from repro.judge.policy import MAX_LISTED_REFUSALS, ScanResult, configurations, header_opens, scan
from repro.lean.protocol import InfraStatus, LeanMessage, LeanResult
from repro.lean.text import (
    Kind,
    LeanCode,
    StatementError,
    final_proposition,
    is_identifier_rest,
    is_identifier_start,
    lex,
    read_statement,
)
from repro.lean.text.lexer import Unclosed, lex_from
from repro.lean.text.statement import ends_in_sorry, top_level_equation, without_header
from repro.records import ReasonCode
from tests._gate_helpers import COLUMN_ZERO_BLOCK, HEADER, MAIN, THEOREM
from tests._gate_helpers import refusals as _refusals

STATEMENT = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry"


def test_the_names_a_header_opens_end_at_the_next_command() -> None:
    """``open X`` then ``set_option ...`` in the header opens X only: ``set_option`` is no namespace.

    (Since issue 19 §3 any namespace whose names pass may be opened; what a header open still decides
    is the tactic-namespace denylist, so the names here are denylisted ones.)
    """
    header = "import Mathlib\nopen Linarith\nset_option Polyrith.x true\n"
    assert _refusals("open Linarith in\n" + THEOREM, header) == []
    refused = _refusals("open Polyrith.x in\n" + THEOREM, header)
    assert len(refused) == 1 and "open Polyrith.x" in refused[0]


def test_a_formal_statement_must_end_in_sorry_to_be_one() -> None:
    assert ends_in_sorry("theorem t : 1 = 1 := by sorry")
    assert ends_in_sorry("theorem t : 1 = 1 := sorry")
    assert not ends_in_sorry("theorem t : 1 = 1 := by rfl")
    assert not ends_in_sorry("theorem t : 1 = 1 := by simp; sorry")
    assert not ends_in_sorry("theorem t : 1 = 1 := rfl -- := by sorry")


def test_a_let_whose_value_starts_on_the_next_line_is_skipped_whole() -> None:
    """The binding ends after its value, not at the first line break inside ``let x : T\\n := v``."""
    assert final_proposition("let x : ℕ\n    := 5\n  x + 1 = 6") == ("x + 1 = 6", False)


def test_a_let_value_ends_at_a_top_level_semicolon_or_line_break_only() -> None:
    assert final_proposition("let k := 2; k + 1 = 3") == ("k + 1 = 3", False)
    # a `;` or a line break inside the value's brackets does not end the binding
    assert final_proposition("let k : ℕ := (by simp; exact 2)\n  k + 1 = 3") == ("k + 1 = 3", False)
    assert final_proposition("let k : ℕ := (2 +\n    3)\n  k = 5") == ("k = 5", False)
    # a named argument's `:=` inside the type is not the binding's
    assert final_proposition("have h : f (x := 1)\n    = 2 := rfl\n  f 1 = 2") == ("f 1 = 2", False)
    # a binding with nothing after it is left as it is (no answer is read from it)
    assert final_proposition("let k := 2") == ("let k := 2", False)


async def test_a_comment_closed_in_a_later_block_hides_the_fence_inside_it() -> None:
    """An unclosed comment in a draft block does not make the next block's closed comment unclosed.

    The lexer remembers, from the first block's scan, that its comment never closes; the second
    block's comment starts at a nested opener of the first and closes where Lean closes it, after a
    fence line, which it hides: the block (and the code checked) runs on to the next fence.
    """
    reply = "```lean4\n/- draft\n```\n\n```lean4\n/- note\n```\n-/\n" + THEOREM + "```\n"
    verdict = await verify_proof(STATEMENT, reply, None, header=HEADER)
    assert verdict.static_passed and verdict.reasons == [ReasonCode.lean_unavailable], verdict.details
    assert verdict.checked_code == "/- note\n```\n-/\n" + THEOREM.rstrip("\n")


@pytest.mark.parametrize("namespace", ["BigOperators", "Real", "Nat", "Topology", "Rat"])
def test_the_namespaces_the_usual_header_opens_are_allowed_under_any_header(namespace: str) -> None:
    """A profile header that opens nothing still lets a prover open them (and nothing under them that
    the name rules refuse: issue 19 §3 lets any namespace whose names pass be opened)."""
    assert _refusals(f"open {namespace} in\n" + THEOREM, header="import Mathlib\n") == []
    assert _refusals(f"open {namespace}.Elab in\n" + THEOREM, header="import Mathlib\n") != []


@pytest.mark.parametrize("binding", ["let", "have", "haveI", "letI"])
def test_every_leading_binding_word_is_skipped_before_the_answer_is_read(binding: str) -> None:
    assert final_proposition(f"{binding} k : ℕ := 2\n  k + 1 = 3") == ("k + 1 = 3", False)


# Depth-0 tokens that keep ``a = b`` an equation of a and b (statement.py's _TERM_SYMBOLS), copied here
# on purpose, each with a conclusion whose deterministic reading needs exactly it.
PINNED_TERM_SYMBOLS = {
    "+": "a + b = 3",
    "-": "a - b = 3",
    "*": "a * b = 3",
    "/": "a / b = 3",
    "%": "a % b = 3",
    "^": "a ^ 2 = 9",
    "·": "a · b = 3",
    "•": "a • b = 3",
    "↑": "↑n * 2 = 10",
    "∑": "∑ i in s, f i = 3",
    "∏": "∏ i in s, f i = 3",
    ",": "∑ i in s, f i = 3",
    "∈": "∑ i ∈ s, f i = 3",
    "(": "f (a) = 3",
    ")": "f (a) = 3",
    "[": "l[0] = 3",
    "]": "l[0] = 3",
    "{": "f {x} = 3",
    "}": "f {x} = 3",
    "⟨": "f ⟨1, 2⟩ = 3",
    "⟩": "f ⟨1, 2⟩ = 3",
    "|": "|a| = 3",
    ".": "(a).b = 3",
    "⌊": "⌊a⌋ = 3",
    "⌋": "⌊a⌋ = 3",
    "⌈": "⌈a⌉ = 3",
    "⌉": "⌈a⌉ = 3",
    "√": "√a = 3",
}


@pytest.mark.parametrize(("symbol", "conclusion"), sorted(PINNED_TERM_SYMBOLS.items()))
def test_every_term_symbol_keeps_the_equation_readable(symbol: str, conclusion: str) -> None:
    left, right = conclusion.rsplit(" = ", 1)
    assert symbol in left
    assert top_level_equation(conclusion) == (left, right)


# Words that may make Lean read ``a = b`` as part of something else: no deterministic answer. Each
# case holds exactly one of them (``fun``/``λ``/``if`` are also connectives; ``then``/``else`` need ``if``).
PINNED_NON_TERM_WORDS = {
    "let": "let x = 5",
    "have": "have x = 5",
    "show": "show x = 5",
    "from": "x = 5 from h",
    "by": "x = by exact 5",
    "match": "match x = 5",
    "with": "x = 5 with",
    "do": "do x = 5",
    "at": "x = 5 at h",
    "Not": "Not x = 5",
}


@pytest.mark.parametrize(("word", "conclusion"), sorted(PINNED_NON_TERM_WORDS.items()))
def test_every_binder_word_at_the_top_level_leaves_no_answer(word: str, conclusion: str) -> None:
    assert word in conclusion.split()
    assert top_level_equation(conclusion) is None
    assert top_level_equation(conclusion.replace(word, "c")) is not None  # the word alone decides


def test_not_equal_is_one_symbol_and_leaves_no_answer() -> None:
    """``x != 5`` read as ``x !`` (factorial) ``= 5`` would give the answer 5 to a disequation."""
    assert top_level_equation("x != 5") is None
    assert top_level_equation("x ! = 5") == ("x !", "5")


def test_universes_declares_universe_names_like_universe() -> None:
    assert _refusals("universes u v\n" + THEOREM) == []
    assert _refusals("universes\n" + THEOREM) != []


def test_a_linter_option_may_be_set_for_the_rest_of_the_file() -> None:
    """``linter.*`` changes only warnings: allowed without ``in``; so is ``pp.*`` since issue 27 §4 (it ends with
    the prover's section, before our axiom report); an option that is neither stays refused."""
    assert _refusals("set_option linter.unusedVariables false\n" + THEOREM) == []
    assert _refusals("set_option pp.all true\n" + THEOREM) == []
    assert _refusals("set_option trace.Meta.synthInstance true\n" + THEOREM) != []


@pytest.mark.parametrize(
    ("text", "tokens"),
    [("2x5", ["2", "x5"]), ("1+1", ["1", "+", "1"]), ("2e5", ["2e5"]), ("2E-5", ["2E-5"]), ("2e", ["2", "e"])],
)
def test_only_e_or_E_and_a_digit_continue_a_number_as_its_exponent(text: str, tokens: list[str]) -> None:
    """``2x5`` is the number 2 and the name ``x5``: a lexer reading it as one number would hide the name."""
    assert [token.text for token in lex(text)] == tokens


@pytest.mark.parametrize("line", ["  have := (h₀)", "  norm_num [h₀]", "  exact foo {x}", "  exact ⟨h₀⟩"])
def test_an_unknown_command_after_a_closed_bracket_at_a_line_end_is_refused(line: str) -> None:
    """A closing bracket ends a term: a name at column 0 after it starts a command (fail closed)."""
    refused = _refusals(THEOREM + line + "\nfoo_command 3\n")
    assert len(refused) == 1 and refused[0].startswith("foo_command at the start of a line"), refused


def test_a_name_at_column_zero_after_an_operator_continues_the_term() -> None:
    continued = "theorem robe_total (x : ℕ)\n(h₀ : x = 3600) :\nx / 12 = 300 := by\n  subst h₀\n  norm_num\n"
    assert _refusals(continued) == []


def test_only_print_axioms_is_blanked_among_print_commands() -> None:
    """``#print eqns robe_total`` (Mathlib) is another command than ``#print axioms robe_total``: refused."""
    assert _refusals(THEOREM + "#print axioms robe_total\n") == []
    refused = _refusals(THEOREM + "#print eqns robe_total\n")
    assert len(refused) == 1 and refused[0].startswith("#print"), refused


class _TimesOutAt:
    """A Lean backend whose answer to one step of the four is the pool's timeout result."""

    backend_id, real_lean, toolchain, mathlib_revision = "timeout-at-a-step", False, "fake", "fake"

    def __init__(self, step: int) -> None:
        self.step = step

    async def check(self, code: str, header: str) -> LeanResult:
        return (await self.check_sequence([code], header))[0]

    async def check_sequence(self, commands: list[str], header: str) -> list[LeanResult]:
        ok = LeanResult(infra_status=InfraStatus.ok, backend_id=self.backend_id, real_lean=False)
        timeout = LeanResult(infra_status=InfraStatus.timeout, backend_id=self.backend_id, real_lean=False)
        return [ok] * self.step + [timeout]  # the pool stops at a step that did not answer

    async def close(self) -> None:
        return None


@pytest.mark.parametrize("step", [0, 1, 2, 3])
async def test_a_lean_timeout_at_any_step_is_reported_as_a_timeout_never_verified(step: int) -> None:
    verdict = await verify_proof(STATEMENT, THEOREM, _TimesOutAt(step), header=HEADER)
    assert not verdict.verified
    assert verdict.reasons == [ReasonCode.lean_timeout], verdict.details


def test_a_text_of_header_lines_only_leaves_nothing() -> None:
    assert without_header("import Mathlib\nopen Real\n") == ""
    assert without_header("import Mathlib\nset_option maxHeartbeats 400000") == ""


def test_a_command_word_in_a_proposition_leaves_no_answer() -> None:
    assert top_level_equation("«end» = 5") is None
    assert top_level_equation("«x» = 5") == ("«x»", "5")


def test_a_hash_before_a_bracket_is_an_array_literal_not_a_command() -> None:
    code = THEOREM.replace("  norm_num\n", "  norm_num [show (#[1, 2] : Array ℕ).size = 2 from rfl]\n")
    assert _refusals(code) == []


@pytest.mark.parametrize("ending", ["@[simp]", "@[simp] private", "open Real", "open"])
def test_code_that_ends_inside_a_command_is_judged_not_crashed_on(ending: str) -> None:
    """The readers look ahead past the last token only after checking there is one."""
    result = scan(THEOREM + ending, header=HEADER, main_name=MAIN)
    assert result.unterminated is None
    assert (ending == "open Real") is (result.forbidden == [])


def test_a_conclusion_in_parentheses_is_read_inside_them() -> None:
    assert final_proposition("(x = 5)") == ("x = 5", False)
    assert final_proposition("(a) + (b) = 3") == ("(a) + (b) = 3", False)


def test_a_lone_theorem_keyword_is_no_statement() -> None:
    with pytest.raises(StatementError):
        read_statement("theorem")


def test_a_number_takes_a_fraction_only_when_a_digit_follows_the_dot() -> None:
    assert [token.text for token in lex("2.x")] == ["2", ".", "x"]
    assert [token.text for token in lex("2.5")] == ["2.5"]


async def test_native_decide_when_allowed_is_not_marked_as_policy() -> None:
    code = THEOREM.replace("  norm_num\n", "  native_decide\n")
    allowed = await verify_proof(STATEMENT, code, None, header=HEADER, allow_native_decide=True)
    assert allowed.static_passed and allowed.policy == []
    refused = await verify_proof(STATEMENT, code, None, header=HEADER)
    assert not refused.static_passed and refused.policy == ["native_decide"]


def test_a_refused_control_character_is_named_in_the_refusal() -> None:
    refused = _refusals(THEOREM.replace("  subst h₀", "  subst h₀\u2028"))
    assert refused and all("U+2028" in label for label in refused), refused


# --- survivors of the 60-mutant run on 645a5a4 and of the 200-mutant run on ad2f83c (issue 19 §6) ----

# Lean's identifier characters (leanprover/lean4 src/Init/Meta.lean: ``isLetterLike``,
# ``isSubScriptAlnum``, ``isIdFirst``, ``isIdRest``), copied here as the code points on each side of
# every range and exception: (character, may start a name, may continue one).
PINNED_IDENTIFIER_CHARACTERS = [
    ("a", True, True),
    ("z", True, True),
    ("A", True, True),
    ("Z", True, True),
    ("_", True, True),
    ("@", False, False),  # U+0040, just below A
    ("[", False, False),  # U+005B, just above Z
    ("`", False, False),  # U+0060, just below a
    ("{", False, False),  # U+007B, just above z
    ("0", False, True),
    ("9", False, True),
    ("'", False, True),
    ("!", False, True),
    ("?", False, True),
    ("\u03b0", False, False),  # below lower Greek
    ("α", True, True),  # U+03B1, first lower Greek
    ("κ", True, True),
    ("λ", False, False),  # U+03BB: the lambda, never a letter
    ("μ", True, True),
    ("ω", True, True),  # U+03C9, last lower Greek
    ("\u0390", False, False),  # below upper Greek
    ("Α", True, True),  # U+0391
    ("Π", False, False),  # U+03A0: the product sign
    ("Σ", False, False),  # U+03A3: the sum sign
    ("Ω", True, True),  # U+03A9
    ("ϊ", True, True),  # U+03CA, first Coptic
    ("ϻ", True, True),  # U+03FB, last Coptic
    ("ϼ", False, False),  # U+03FC
    ("\u1eff", False, False),
    ("ἀ", True, True),  # U+1F00, first polytonic Greek
    ("\u1ffe", True, True),  # U+1FFE, last
    ("\u1fff", False, False),
    ("\u20ff", False, False),
    ("℀", True, True),  # U+2100, first letter-like symbol
    ("ℕ", True, True),
    ("⅏", True, True),  # U+214F, last
    ("⅐", False, False),  # U+2150
    ("→", False, False),  # U+2192
    ("∀", False, False),  # U+2200
    ("\U0001d49b", False, False),
    ("𝒜", True, True),  # U+1D49C, first mathematical alphanumeric of the range
    ("\U0001d59f", True, True),  # U+1D59F, last
    ("\U0001d5a0", False, False),
    ("⁹", False, False),  # U+2079, a superscript
    ("₀", False, True),  # U+2080, first numeric subscript
    ("₉", False, True),  # U+2089
    ("₊", False, False),  # U+208A, subscript plus: a symbol (``⌋₊``)
    ("\u208f", False, False),
    ("ₐ", False, True),  # U+2090, first letter subscript
    ("\u209c", False, True),  # U+209C, last
    ("\u209d", False, False),
    ("\u1d61", False, False),
    ("ᵢ", False, True),  # U+1D62
    ("ᵪ", False, True),  # U+1D6A
    ("\u1d6b", False, False),
    ("ⱼ", False, True),  # U+2C7C
    ("\u2c7b", False, False),
]


@pytest.mark.parametrize(("character", "starts", "continues"), PINNED_IDENTIFIER_CHARACTERS)
def test_identifier_characters_are_lean_s_at_every_range_boundary(
    character: str, starts: bool, continues: bool
) -> None:
    """A character read as part of a name when Lean ends the name there would hide the token after it
    (``λsorry``, ``h→sorry``); one cut off would split a name the rules judge whole."""
    assert is_identifier_start(character) is starts
    assert is_identifier_rest(character) is continues
    first = lex(f"{character}x")[0]
    assert (first.kind == Kind.identifier and first.text == f"{character}x") is starts
    assert (lex(f"x{character}")[0].text == f"x{character}") is continues


# Lean's multi-character tokens that the readers compare (maximal munch over the token table,
# leanprover/lean4 src/Lean/Parser/Basic.lean ``tokenFn``/``identFn``): each reads as one token.
PINNED_SYMBOLS = [":=", "::", "=>", "->", "<-", "<->", "<;>", "<|>", "<|", "|>.", "|>", "==", "!=", "<=", ">="]
PINNED_SYMBOLS += ["&&", "||", "..", "...", "++", "^^", "⁻¹", "⁻¹'", "∑'", "∏'", "''"]
# ``{{``/``}}`` are not among them since issue 27 §4: Lean has no such token (a strict-implicit ``{{`` is
# ``symbol "{" >> "{"``), so ``{x | x ∈ {3}}`` ends in two ``}`` (tests/test_screen_classes.py)


@pytest.mark.parametrize("symbol", PINNED_SYMBOLS)
def test_every_multi_character_symbol_is_one_token(symbol: str) -> None:
    """``x >= 5`` read as ``x > = 5`` has a top-level ``=``; ``fun x => y`` read with ``=`` alone too."""
    assert [token.text for token in lex(f"a {symbol} b") if not token.text.isspace()] == ["a", symbol, "b"]


def test_a_number_with_a_radix_prefix_may_end_the_code() -> None:
    """The digit loop stops at the end of the text (a proof whose last token is ``0x1f``)."""
    assert [token.text for token in lex("x = 0x1f")][-1] == "0x1f"
    assert _refusals(THEOREM.rstrip("\n").replace("norm_num", "norm_num [show (31 : ℕ) = 0x1f from rfl]")) == []


def test_a_command_keyword_after_a_declaration_keyword_is_no_name_and_its_command_is_judged() -> None:
    """``theorem`` then ``axiom cheat : False`` on the next line: Lean reports the nameless theorem and
    then runs the axiom command; read as the theorem's name, the axiom would pass."""
    refused = _refusals("theorem\naxiom cheat : False\n" + THEOREM)
    assert refused[0].startswith("theorem without a name"), refused
    assert any(label.startswith("axiom (line 2:0)") for label in refused), refused


def test_an_instance_records_its_private_modifier_and_nothing_before_it() -> None:
    result = scan(
        "example := 1\nprivate instance foo : Fact (1 = 1) := ⟨rfl⟩\n" + THEOREM, header=HEADER, main_name=MAIN
    )
    assert [(d.keyword, d.name, d.modifiers) for d in result.declarations] == [
        ("instance", "foo", ["private"]),
        ("theorem", "robe_total", []),
    ]


@pytest.mark.parametrize("before", ["example := Lean\n", "example := unsafe\n", "example := sorry\n", "example := 1\n"])
def test_the_word_ending_the_previous_command_is_no_modifier_of_the_main_theorem(before: str) -> None:
    """Only ``private``/``noncomputable`` are recorded (the gate refuses a main theorem that has one):
    a name that ends the command before it is not a modifier, whatever else refuses it."""
    result = scan(before + THEOREM, header=HEADER, main_name=MAIN)
    assert [d.modifiers for d in result.declarations if d.name == MAIN] == [[]]


def test_a_display_option_takes_only_true_or_false() -> None:
    assert _refusals("set_option linter.unusedVariables false\n" + THEOREM) == []
    refused = _refusals("set_option linter.unusedVariables foo\n" + THEOREM)
    assert len(refused) == 1 and refused[0].startswith("set_option linter.unusedVariables"), refused


def test_a_configuration_without_a_numeral_is_honest_beside_a_prop_instance() -> None:
    """Only a numeral could be run through the prover's ``OfNat`` instance; ``true`` and flags cannot."""
    instance = "instance : Fact (1 = 1) := ⟨rfl⟩\n"
    assert _refusals(instance + THEOREM.replace("  norm_num\n", "  simp (config := { decide := true })\n")) == []


@pytest.mark.parametrize("word", ["let", "have", "show", "by", "fun", "match"])
def test_an_instance_type_with_a_binder_word_at_the_top_is_refused(word: str) -> None:
    """``Fact let p := True; C`` is not ``Fact`` applied: a binder word makes the body the type's head."""
    refused = _refusals(f"instance : Fact {word} p\n  q := ⟨trivial⟩\n" + THEOREM)
    assert any(label.startswith("instance type that is not `Fact args`") for label in refused), refused


# Root-level namespaces of tactic implementations (tables.OPEN_DENYLIST), copied here on purpose.
PINNED_OPEN_DENYLIST = [
    "Linarith",  # Mathlib's linarith before its move under Mathlib.Tactic
    "Polyrith",
    "Omega",
    "NormNum",
    "Positivity",
    "Simp",
    "Parser",
    "PrettyPrinter",
    "Delaborator",
    "Json",
    "Widget",
    "Linter",
    "Cli",  # Mathlib's Cli (command-line parsing, runs IO)
    "Server",
    "Compiler",
    "IR",
    "Kernel",
    "Unhygienic",
    "Conv",
    "Tactic",
]


@pytest.mark.parametrize("namespace", PINNED_OPEN_DENYLIST)
def test_every_tactic_implementation_namespace_is_refused_in_open(namespace: str) -> None:
    refused = _refusals(f"open {namespace} in\n" + THEOREM)
    assert any(label.startswith(f"open {namespace} (") for label in refused), refused


# Constructors a configuration may name with a leading dot (tables.CONFIG_CONSTRUCTORS), copied:
# TransparencyMode and EtaStructMode (leanprover/lean4 src/Init/MetaTypes.lean), RingNF.RingMode
# (Mathlib/Tactic/Ring/RingNF.lean), Aesop's Strategy (Aesop/Options/Public.lean).
PINNED_CONFIG_CONSTRUCTORS = ["all", "default", "reducible", "instances", "notClasses", "none", "SOP", "raw"]
PINNED_CONFIG_CONSTRUCTORS += ["bestFirst", "depthFirst", "breadthFirst"]


@pytest.mark.parametrize("constructor", PINNED_CONFIG_CONSTRUCTORS)
def test_every_known_configuration_constructor_passes(constructor: str) -> None:
    assert _refusals(THEOREM.replace("  norm_num\n", f"  aesop (config := {{ strategy := .{constructor} }})\n")) == []


# Tactic keywords a column-0 tactic block may hold (tables.LAYOUT_TACTICS), copied with their source
# files (leanprover/lean4 src/Init/*.lean, mathlib4 Mathlib/Tactic/*.lean), whether or not the
# generated tactic table also holds them.
PINNED_LAYOUT_TACTICS = {
    "src/Init/Tactics.lean": "intro intros rename revert clear subst subst_vars assumption contradiction apply exact"
    " refine refine' exfalso constructor left right case case' next all_goals any_goals focus skip done first"
    " rotate_left rotate_right try eq_refl rfl ac_rfl infer_instance change rewrite rw rwa injection injections"
    " simp simp_all dsimp simpa delta unfold have suffices let show have' let' induction generalize cases"
    " rename_i repeat repeat' trivial split specialize congr if replace and_intros subst_eqs haveI letI omega"
    " norm_cast push_cast symm solve_by_elim apply_rules apply_assumption assumption_mod_cast exists nofun"
    " nomatch with_reducible unhygienic simp_arith decide calc funext exact_mod_cast apply_mod_cast rw_mod_cast erw",
    "src/Init/RCases.lean": "rcases obtain rintro",
    "src/Init/ByCases.lean": "by_cases",
    "src/Init/Ext.lean": "ext",
    "src/Init/Conv.lean": "conv",
    "Mathlib/Tactic/*": "norm_num norm_num1 linarith nlinarith positivity field_simp ring ring_nf ring1 push_neg"
    " by_contra! interval_cases gcongr linear_combination bound simp_rw nth_rw nth_rewrite use contrapose choose"
    " lift set tauto zify qify rify cases' induction' fin_cases split_ifs abel group noncomm_ring convert"
    " filter_upwards apply_fun mod_cases cancel_denoms existsi wlog nontriviality casesm constructorm"
    " fun_prop measurability inhabit tfae_have tfae_finish",
}


@pytest.mark.parametrize("word", sorted({word for words in PINNED_LAYOUT_TACTICS.values() for word in words.split()}))
def test_every_curated_tactic_passes_at_column_zero_in_a_column_zero_block(word: str) -> None:
    assert _refusals(COLUMN_ZERO_BLOCK + f"{word}\n") == []


def test_a_conclusion_under_forall_is_read_after_its_binders() -> None:
    """``∀ x : ℕ, x + 1 = 6``: the equation after the comma, not the quantified text."""
    assert final_proposition("∀ x : ℕ, x + 1 = 6") == ("x + 1 = 6", False)
    assert final_proposition("∃ x : ℕ, x + 1 = 6") == ("∃ x : ℕ, x + 1 = 6", True)


@pytest.mark.parametrize("statement", ["theorem (x : ℕ) : x = 1 := by sorry", "theorem 5 : 1 = 1 := by sorry"])
def test_a_statement_whose_theorem_has_no_name_is_refused(statement: str) -> None:
    with pytest.raises(StatementError, match="no name"):
        read_statement(statement)


class _AnswersEveryStep:
    """A Lean backend that answers all four steps even after one of them failed (a server that runs each
    command on its own); the step ``step`` fails with ``status``."""

    backend_id, real_lean, toolchain, mathlib_revision = "answers-every-step", False, "fake", "fake"

    def __init__(
        self, step: int, status: InfraStatus = InfraStatus.timeout, detail: str | None = "no answer in 60 s"
    ) -> None:
        self.step, self.status, self.detail = step, status, detail

    async def check(self, code: str, header: str) -> LeanResult:
        return (await self.check_sequence([code], header))[0]

    async def check_sequence(self, commands: list[str], header: str) -> list[LeanResult]:
        ok = LeanResult(infra_status=InfraStatus.ok, backend_id=self.backend_id, real_lean=False)
        failed = LeanResult(infra_status=self.status, backend_id=self.backend_id, real_lean=False, detail=self.detail)
        return [failed if index == self.step else ok for index in range(4)]

    async def close(self) -> None:
        return None


@pytest.mark.parametrize(("step", "name"), [(0, "statement"), (1, "proof"), (2, "bridge")])
async def test_the_first_step_that_failed_is_reported_when_later_steps_answered(step: int, name: str) -> None:
    verdict = await verify_proof(STATEMENT, THEOREM, _AnswersEveryStep(step), header=HEADER)
    assert not verdict.verified
    assert verdict.reasons == [ReasonCode.lean_timeout], verdict.details
    assert f"timed out at the {name} step (no answer in 60 s)" in " ".join(verdict.details), verdict.details


async def test_an_infrastructure_failure_is_reported_with_its_step_status_and_detail() -> None:
    verdict = await verify_proof(STATEMENT, THEOREM, _AnswersEveryStep(1, InfraStatus.crash), header=HEADER)
    assert not verdict.verified
    assert verdict.reasons == [ReasonCode.lean_unavailable], verdict.details
    assert "at the proof step: crash: no answer in 60 s" in " ".join(verdict.details), verdict.details


class _AnswersTwoSteps:
    """A Lean backend that answers only the first two of the four commands, both ``ok`` (a server that
    dropped the rest of a sequence without saying why)."""

    backend_id, real_lean, toolchain, mathlib_revision = "answers-two-steps", False, "fake", "fake"

    async def check(self, code: str, header: str) -> LeanResult:
        return (await self.check_sequence([code], header))[0]

    async def check_sequence(self, commands: list[str], header: str) -> list[LeanResult]:
        return [LeanResult(infra_status=InfraStatus.ok, backend_id=self.backend_id, real_lean=False)] * 2

    async def close(self) -> None:
        return None


async def test_a_lean_answer_missing_steps_is_unavailable_never_verified_nor_a_crash() -> None:
    verdict = await verify_proof(STATEMENT, THEOREM, _AnswersTwoSteps(), header=HEADER)
    assert not verdict.verified
    assert verdict.reasons == [ReasonCode.lean_unavailable], verdict.details


async def test_an_honest_proof_is_marked_with_no_policy() -> None:
    """``policy`` lists what a run chose to refuse (native_decide, search tactics): nothing here."""
    verdict = await verify_proof(STATEMENT, THEOREM, None, header=HEADER)
    assert verdict.static_passed and verdict.policy == []


def test_an_instance_with_universe_parameters_is_read_past_its_name() -> None:
    """``instance foo.{u} : C ...``: the ``.{u}`` after the name is no type; the class after ``:`` is."""
    assert _refusals("instance foo.{u} : Nonempty (ULift.{u} ℕ) := ⟨⟨0⟩⟩\n" + THEOREM) == []


# Tokens after which a name is being declared (tables.DECLARATION_OPENERS), copied: a prover name spelled
# like a configuration literal (``true``) would be what the literal resolves to, and run in its place.
PINNED_DECLARATION_OPENERS = ["def", "theorem", "lemma", "abbrev", "instance", "opaque", "axiom", "example"]
PINNED_DECLARATION_OPENERS += ["where", "rec", "structure", "inductive", "class", "private", "protected"]
PINNED_DECLARATION_OPENERS += ["noncomputable", "partial", "unsafe", "nonrec", "|"]


@pytest.mark.parametrize("opener", PINNED_DECLARATION_OPENERS)
def test_a_name_after_every_declaration_opener_is_a_declaration_a_configuration_literal_could_resolve_to(
    opener: str,
) -> None:
    # nothing after the name says it is declared (no ``:``, binder or ``:=``): only the opener before it
    code = f"example := 1 {opener} true\n" + THEOREM.replace("  norm_num\n", "  simp (config := { decide := true })\n")
    refused = _refusals(code)
    assert any(label.startswith("declaration named true") for label in refused), refused


@pytest.mark.parametrize("text", ['x "a" y "b', 'x r"a" y r"b', "x «a» y «b", 'x "a" y r#"b"', "x /- a -/ y /- b"])
def test_a_scan_sharing_the_memo_of_a_later_unclosed_token_reads_the_earlier_ones_as_a_fresh_scan(text: str) -> None:
    """Blocks of one reply share what is known never to close (``Unclosed``); that memo holds only from
    where the unclosed token began: a string, raw string, ``«`` name or comment that starts earlier and
    closes is still read whole."""
    shared = Unclosed()
    later = text.rindex(" y ")
    list(lex_from(text, later, shared))  # learns that the last token never closes
    assert [(t.kind, t.start, t.end) for t in lex_from(text, 0, shared)] == [
        (t.kind, t.start, t.end) for t in lex_from(text, 0)
    ]


@pytest.mark.parametrize("literal", ["'\\n'", "'\\\\'", "'\\''", "'\\x41'", "'\\u03b1'", "'\\u{3b1}'"])
def test_every_escape_form_of_a_char_literal_is_one_char_token(literal: str) -> None:
    """Lean's ``quotedCharCoreFn``: ``\\x`` takes 2 hex digits, ``\\u`` 4 (or braces), others 1 character."""
    assert [(t.kind, t.text) for t in lex(literal)] == [(Kind.char, literal)]


def test_an_instance_without_a_type_is_refused_whatever_follows_it() -> None:
    """``instance foo := (⟨6⟩ : OfNat ℕ 5)`` takes its class from the value: a Type-valued instance. The
    type is read up to the instance's own ``:=``, never from the ``: Fact ...`` of a later command."""
    code = "instance foo := (⟨6⟩ : OfNat ℕ 5)\nexample : Fact (1 = 1) := ⟨rfl⟩\n" + THEOREM
    refused = _refusals(code)
    assert any(label.startswith("instance of nothing") for label in refused), refused


def test_a_header_open_opens_only_the_names_before_its_first_symbol() -> None:
    """``open Nat (Linarith)`` opens ``Nat`` and makes ``Nat.Linarith`` visible as ``Linarith``: it does not
    open the namespace ``Linarith``, so the header does not let the prover open it either."""
    header = "import Mathlib\nopen Nat (Linarith)\n"
    assert header_opens(header) == frozenset({"Nat"})
    refused = _refusals("open Linarith in\n" + THEOREM, header)
    assert len(refused) == 1 and refused[0].startswith("open Linarith ("), refused


def test_an_instance_type_ends_at_an_equation_style_value() -> None:
    """``instance : C args`` then ``| pats => v`` (Lean's ``declValEqns``): the ``|`` starts the value,
    which Lean checks; it is no operator of the type."""
    assert _refusals("instance : Fact (1 = 1)\n  | _ => ⟨rfl⟩\n" + THEOREM) == []


def test_an_arrow_after_a_named_argument_of_the_class_is_still_seen() -> None:
    """``Fact (p := true) → OfNat ℕ 4``: the ``:=`` inside the brackets is no end of the type, so the
    arrow after them makes the class ``OfNat`` (red team round 4, A3)."""
    refused = _refusals("instance : Fact (p := true) → OfNat ℕ 4 := sorry_free\n" + THEOREM)
    assert refused == ["instance type that is not `Fact args` (line 1:0; arguments in brackets only)"], refused


def test_a_conclusion_after_an_ascii_arrow_is_read_after_it() -> None:
    assert final_proposition("x > 0 -> x + 1 = 6") == ("x + 1 = 6", False)
    assert final_proposition("x > 0 → x + 1 = 6") == ("x + 1 = 6", False)


def test_code_ending_inside_a_configuration_literal_is_refused_not_crashed_on() -> None:
    refused = _refusals(THEOREM + "  simp (config := { decide := true")
    assert len(refused) == 1 and "an unclosed {" in refused[0], refused


async def test_a_reply_over_the_token_cap_is_refused_by_that_name() -> None:
    verdict = await verify_proof(STATEMENT, THEOREM, None, header=HEADER, limits=StaticLimits(max_tokens=10))
    assert not verdict.static_passed and verdict.reasons == [ReasonCode.too_many_tokens], verdict.details


async def test_a_static_layer_past_its_time_limit_gives_no_verdict() -> None:
    steps = "".join(f"  have h{i} : ({i} : ℕ) + 1 = {i + 1} := by norm_num\n" for i in range(500))
    reply = THEOREM.replace("  norm_num\n", steps + "  norm_num\n")
    verdict = await verify_proof(STATEMENT, reply, None, header=HEADER, limits=StaticLimits(timeout_s=1e-6))
    assert not verdict.static_passed and verdict.reasons == [ReasonCode.static_timeout], verdict.details


@pytest.mark.parametrize(
    ("status", "reason", "ending"),
    [
        (InfraStatus.crash, ReasonCode.lean_unavailable, "at the statement step: crash: "),
        (InfraStatus.timeout, ReasonCode.lean_timeout, "at the statement step ()"),
    ],
)
async def test_a_lean_failure_without_a_detail_says_nothing_more(
    status: InfraStatus, reason: ReasonCode, ending: str
) -> None:
    verdict = await verify_proof(STATEMENT, THEOREM, _AnswersEveryStep(0, status, detail=None), header=HEADER)
    assert verdict.reasons == [reason]
    assert verdict.details[-1].endswith(ending), verdict.details


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("kernel\n" + THEOREM, ["kernel at the start of a line (line 1:0; not a command the gate allows)"]),
        (THEOREM + "  exact kernel", []),
    ],
    ids=["first word", "last word"],
)
def test_the_name_kernel_first_or_last_in_the_code_is_judged_not_crashed_on(code: str, expected: list[str]) -> None:
    """The kernel-configuration rule looks at the tokens around the name only where there is one."""
    assert _refusals(code) == expected


@pytest.mark.parametrize(("text", "tokens"), [("x⁻¹<=1", ["x", "⁻¹", "<=", "1"]), ("h⁻¹:=1", ["h", "⁻¹", ":=", "1"])])
def test_a_symbol_glued_after_another_symbol_is_read_when_it_ends_in_no_quote(text: str, tokens: list[str]) -> None:
    """Only a symbol ending in a quote (``×'``) is refused after another symbol character, where Lean's
    longer token might end inside it; ``<=`` or ``:=`` there is read as Lean reads it."""
    assert [(token.kind, token.text) for token in lex(text)] == list(
        zip([Kind.identifier, Kind.symbol, Kind.symbol, Kind.number], tokens, strict=True)
    )


def test_a_dedented_line_after_an_operator_continues_the_term_and_after_a_complete_term_is_refused() -> None:
    """Left of the tactic block, a word after ``=`` continues the unfinished term; after ``300`` the term
    is complete, and Lean would read the word as a command."""
    code = (
        "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n    subst h₀\n"
        "    have h : (3600 : ℕ) / 12 =\n  Nat.succ 299 := by norm_num\n    exact h\n"
    )
    assert _refusals(code) == []
    refused = _refusals(code.replace("12 =\n  Nat", "12 = 300\n  Nat"))
    assert len(refused) == 1 and refused[0].startswith("Nat.succ at the start of a line left of"), refused


def test_an_indented_declaration_starts_a_new_command_whose_own_block_columns_count() -> None:
    """``  theorem`` (not at column 0) restarts the block columns: a word left of *its* block (column 4
    under a block at column 6) is refused, though the earlier lemma's block stood at column 4."""
    code = (
        "lemma helper : True := by\n    trivial\n"
        "  theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n      subst h₀\n      norm_num\n"
    )
    assert _refusals(code) == []
    refused = _refusals(code + "    foo_command 3\n")
    assert len(refused) == 1 and refused[0].startswith("foo_command at the start of a line left of"), refused


def test_a_comma_outside_any_bracket_puts_no_named_argument_in_a_term_list() -> None:
    """The walk back from ``, f (n := x)`` stops at the start of the code (it never wraps round to the
    code's last tokens), so the item keeps the literal-only rule (fail closed)."""
    for ending in ("exact rfl", "exact ⟨rfl"):
        refused = _refusals(f"theorem robe_total : ∀ x : ℕ, f (n := x) = x := by\n  {ending}")
        assert len(refused) == 1 and "x is not a literal" in refused[0], refused


def test_a_named_argument_in_a_tuple_keeps_the_literal_only_rule() -> None:
    """Only a ``[...]`` list after a name (``rw [foo (n := 3)]``) or a ``⟨...⟩`` puts the item in term
    position; a ``(a, ...)`` tuple after a name does not (fail closed)."""
    refused = _refusals(THEOREM.replace("  norm_num\n", "  exact g (a, foo (n := f 1))\n"))
    assert len(refused) == 1 and "f is not a literal" in refused[0], refused


# --- survivors of the fresh run (gate_mutation.py --sample 200 --seed 20) ---


def test_a_named_argument_in_a_have_value_is_a_term_not_a_configuration() -> None:
    """``have h := le_refl (a := x)``: after a binding ``:=`` the parenthesis is the argument of a term,
    which Lean elaborates and never runs, so a non-literal value is honest; the same item as a tactic's
    clause (``simp (a := x)``) keeps the literal-only rule."""
    assert _refusals(THEOREM.replace("  norm_num\n", "  have h := le_refl (a := x)\n  norm_num\n")) == []
    refused = _refusals(THEOREM.replace("  norm_num\n", "  simp (a := x)\n"))
    assert len(refused) == 1 and "x is not a literal" in refused[0], refused


def test_the_image_symbol_is_one_token_and_honest() -> None:
    """``f '' s`` (Mathlib's ``Set.image``) is the two-character symbol ``''``, not an empty char literal."""
    tokens = [(token.kind, token.text) for token in lex("f '' s") if token.kind != Kind.whitespace]
    assert tokens == [(Kind.identifier, "f"), (Kind.symbol, "''"), (Kind.identifier, "s")]
    code = THEOREM.replace("  norm_num\n", "  have : (fun n : ℕ => n) '' {1} = {1} := by simp\n  norm_num\n")
    assert _refusals(code) == []


def test_an_indented_instance_starts_a_new_command_whose_own_block_columns_count() -> None:
    """``  instance`` (not at column 0) begins a command like an indented theorem: a word left of *its*
    block (column 4 under a block at column 6) is refused, though the lemma's block above stood at column 4."""
    code = (
        "lemma helper : True := by\n    trivial\n  instance : Fact (1 < 2) := by\n      exact ⟨by norm_num⟩\n" + THEOREM
    )
    assert _refusals(code) == []
    refused = _refusals(code.replace("norm_num⟩\n", "norm_num⟩\n    foo_command 3\n"))
    assert len(refused) == 1 and refused[0].startswith("foo_command at the start of a line left of"), refused


def test_a_modifier_before_example_is_honest_and_before_an_unknown_word_is_refused() -> None:
    """``private example`` and ``noncomputable example`` are declarations; ``private foo_command`` is not."""
    for modifier in ("private", "noncomputable"):
        assert _refusals(f"{modifier} example : True := trivial\n{THEOREM}") == []
        refused = _refusals(f"{modifier} foo_command : True := trivial\n{THEOREM}")
        assert len(refused) == 1 and refused[0].startswith(f"{modifier} before foo_command"), refused


def test_configurations_without_syntax_tables_judge_every_named_item_as_a_configuration() -> None:
    """With no syntax tables nothing can show that ``f (a := x)`` is a term, so it is refused (fail closed),
    never a crash."""
    result = ScanResult()
    configurations(LeanCode.of(THEOREM.replace("  norm_num\n", "  have h := le_refl (a := x)\n")), result)
    assert len(result.forbidden) == 1 and "x is not a literal" in result.forbidden[0], result.forbidden


def test_an_instance_whose_binder_holds_an_anonymous_constructor_is_read_to_its_type() -> None:
    """``⟩`` closes ``⟨`` when the gate looks for the instance's type: the ``:`` after the binder is found
    and the Prop class accepted."""
    code = "instance (_ : ℕ × ℕ := ⟨1, 2⟩) : Fact (1 < 2) := ⟨by norm_num⟩\n" + THEOREM
    assert _refusals(code) == []


@pytest.mark.parametrize("ending", ["{ decide", "{ decide := true, maxSteps"])
def test_code_ending_at_a_field_name_of_a_configuration_is_refused_not_crashed_on(ending: str) -> None:
    refused = _refusals(THEOREM.replace("  norm_num\n", f"  simp (config := {ending}"))
    assert len(refused) == 1 and "is not a field := literal" in refused[0], refused


def test_a_word_used_in_a_configuration_is_declared_only_at_a_declaration_s_name() -> None:
    """``(true : Bool)`` in the middle of a line declares nothing, so ``decide := true`` stays honest; a
    line that starts with ``true :`` (a ``where`` block's declaration) declares it, also as the code's
    first word: refused by name, never a crash."""
    use = "  simp (config := { decide := true })\n"
    assert _refusals(THEOREM.replace("  norm_num\n", "  have : (true : Bool) = true := rfl\n" + use)) == []
    refused = _refusals("true : Bool := false\n" + THEOREM.replace("  norm_num\n", use))
    assert any(label.startswith("declaration named true (line 1:0)") for label in refused), refused


def test_an_indented_example_starts_a_new_command_whose_own_block_columns_count() -> None:
    """``  example`` (not at column 0) begins a command: a word left of *its* block is refused, though the
    lemma's block above stood at that column."""
    code = "lemma helper : True := by\n    trivial\n  example : 1 < 2 := by\n      norm_num\n" + THEOREM
    assert _refusals(code) == []
    refused = _refusals(code.replace("      norm_num\n", "      norm_num\n    foo_command 3\n"))
    assert len(refused) == 1 and refused[0].startswith("foo_command at the start of a line left of"), refused


def test_a_dedented_line_after_a_closing_bracket_is_refused_and_a_dedented_from_continues() -> None:
    """``(300)`` is a complete term: a word left of the block after it would be a command to Lean (refused);
    ``from`` continues a ``show ... from`` term wherever its line starts (honest)."""
    start = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n    subst h₀\n"
    refused = _refusals(start + "    have h : (3600 : ℕ) / 12 = (300)\n  Nat.succ 299 := by norm_num\n    exact h\n")
    assert len(refused) == 1 and refused[0].startswith("Nat.succ at the start of a line left of"), refused
    show = "    have h : (3600 : ℕ) / 12 = 300 := show (3600 : ℕ) / 12 = 300\n  from by norm_num\n    exact h\n"
    assert _refusals(start + show) == []


def test_an_arrow_inside_brackets_is_no_hypothesis_of_the_conclusion() -> None:
    assert final_proposition("(x = 1 → x + 1 = 2) ∧ x = x") == ("(x = 1 → x + 1 = 2) ∧ x = x", False)


def test_a_connective_inside_brackets_leaves_the_top_level_equation() -> None:
    assert top_level_equation("f (fun n => n) 3 = 3") == ("f (fun n => n) 3", "3")
    assert top_level_equation("(if x = 1 then 2 else 3) = 2") == ("(if x = 1 then 2 else 3)", "2")


class _ProofFailsBridgeClean:
    """A Lean backend whose four answers are all ``ok``: the proof step reports an error, the bridge none
    (Lean adds a theorem whose proof failed with ``sorryAx``, so the bridge to our statement still checks)."""

    backend_id, real_lean, toolchain, mathlib_revision = "proof-fails", False, "fake", "fake"

    async def check(self, code: str, header: str) -> LeanResult:
        return (await self.check_sequence([code], header))[0]

    async def check_sequence(self, commands: list[str], header: str) -> list[LeanResult]:
        ok = LeanResult(infra_status=InfraStatus.ok, backend_id=self.backend_id, real_lean=False)
        error = LeanMessage(severity="error", line=2, text="unsolved goals")
        return [ok, ok.model_copy(update={"messages": [error]}), ok, ok]

    async def close(self) -> None:
        return None


async def test_a_proof_with_errors_never_claims_that_its_statement_matches() -> None:
    """The bridge only shows the statement matches when the proof itself elaborated; with errors the
    match is unknown (None), never True, whatever the bridge said."""
    verdict = await verify_proof(STATEMENT, THEOREM, _ProofFailsBridgeClean(), header=HEADER)
    assert not verdict.verified and ReasonCode.lean_error in verdict.reasons, verdict.details
    assert verdict.prover_statement_matches is None


def test_an_instance_at_the_start_of_the_code_has_no_modifiers_even_when_the_code_ends_in_one() -> None:
    """The walk back over ``private``/``noncomputable`` stops at the code's start; it never wraps round to
    a modifier at the code's end."""
    result = scan("instance foo : Fact (1 < 2) := ⟨by norm_num⟩\n" + THEOREM + "private", header=HEADER, main_name=MAIN)
    instances = [d for d in result.declarations if d.keyword == "instance"]
    assert len(instances) == 1 and instances[0].modifiers == [], result.declarations


def test_a_scoped_display_option_takes_only_a_boolean_or_a_number() -> None:
    assert _refusals("set_option pp.proofs.withType true in\n" + THEOREM) == []
    refused = _refusals("set_option pp.proofs.withType someName in\n" + THEOREM)
    assert len(refused) == 1 and refused[0].startswith("set_option pp.proofs.withType"), refused


def test_a_named_argument_after_an_implication_arrow_is_a_term() -> None:
    code = THEOREM.replace("  norm_num\n", "  have h : x = 1 → f (n := x) = 1 := by simp\n  norm_num\n")
    assert _refusals(code) == []


def test_a_where_declaration_with_an_instance_binder_declares_its_name() -> None:
    """``  true [Inhabited ℕ] : Bool`` on a later line of a ``where`` block declares ``true``, which the configuration's
    literal ``true`` would then resolve to: refused by name (a cheat that only an honest-looking ``[``
    separates from ``true :``)."""
    use = THEOREM.replace("  norm_num\n", "  simp (config := { decide := true })\n")
    refused = _refusals("def helper : ℕ := 0 where\n  aux : ℕ := 1\n  true [Inhabited ℕ] : Bool := false\n" + use)
    assert len(refused) == 1 and refused[0].startswith("declaration named true (line 3:2)"), refused
    assert _refusals("def helper : ℕ := 0 where\n  aux [Inhabited ℕ] : Bool := false\n" + use) == []


def test_a_check_of_a_bare_at_sign_at_the_end_of_the_code_is_refused_not_crashed_on() -> None:
    assert _refusals(THEOREM + "#check @") == ["#check (line 4:0)"]


def test_the_search_form_of_a_keyword_no_list_names_is_refused_and_a_dotted_function_is_not() -> None:
    """``positivity?`` is in no hand-kept list: the ``?`` form of any keyword is refused; ``List.head?`` is a
    dotted function, never a keyword."""
    refused = _refusals(THEOREM.replace("  norm_num\n", "  positivity?\n"))
    assert len(refused) == 1 and refused[0].startswith("search tactic positivity? (line 3:2"), refused
    assert _refusals(THEOREM.replace("  norm_num\n", "  have h := List.head? [1]\n  norm_num\n")) == []


def test_a_named_argument_in_a_rw_mod_cast_list_is_a_term() -> None:
    assert _refusals(THEOREM.replace("  norm_num\n", "  rw_mod_cast [f (n := x)]\n")) == []


def test_an_item_right_after_a_tactic_keyword_is_a_configuration_even_after_a_term_word() -> None:
    """``exact aesop (config := f x)``: ``aesop`` is a keyword of the syntax tables, so the walk back to the
    application's head stops there and the item keeps the literal-only rule; ``exact`` further left does
    not turn it into a term's named argument."""
    refused = _refusals(THEOREM.replace("  norm_num\n", "  exact aesop (config := f x)\n"))
    assert len(refused) == 1 and "f is not a literal" in refused[0], refused


def test_a_quoted_head_is_never_a_keyword_so_its_named_argument_is_a_term() -> None:
    """``«f» (n := x)`` inside a bracket: a ``«»``-quoted name is never a keyword (honest). A bare ``f`` there
    passes too since issue 27 §4 (the ``(`` is an argument of the term ``sq_nonneg ...`` in a hint list, so it
    opens a term); the same item after a bare ``f`` in a ``(`` that begins a tactic line keeps the
    literal-only rule (fail closed)."""
    assert _refusals(THEOREM.replace("  norm_num\n", "  nlinarith [sq_nonneg («f» (n := x))]\n")) == []
    assert _refusals(THEOREM.replace("  norm_num\n", "  nlinarith [sq_nonneg (f (n := x))]\n")) == []
    refused = _refusals(THEOREM.replace("  norm_num\n", "  (f (n := x))\n"))
    assert len(refused) == 1 and "x is not a literal" in refused[0], refused


@pytest.mark.parametrize("term", ["(300)", "[300]", "{300}", "⟨300⟩"])
def test_a_dedented_word_after_any_closing_bracket_is_refused(term: str) -> None:
    """A term ending in a closing bracket is complete: a word on a line left of the block after it would
    be a command to Lean."""
    code = (
        "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n    subst h₀\n"
        f"    have h : (3600 : ℕ) / 12 = {term}\n  Nat.succ 299 := by norm_num\n    exact h\n"
    )
    refused = _refusals(code)
    assert len(refused) == 1 and refused[0].startswith("Nat.succ at the start of a line left of"), refused


@pytest.mark.parametrize("term", ["(A * B)", "[A]", "⟨A, B⟩", "{A}"])
def test_trace_glued_after_any_closing_bracket_is_a_field_of_a_term(term: str) -> None:
    assert _refusals(THEOREM.replace("  norm_num\n", f"  have h := {term}.trace\n  norm_num\n")) == []


def test_an_anonymous_section_may_open_the_code() -> None:
    assert _refusals("section\n" + THEOREM + "end\n") == []


def test_an_instance_type_with_an_arrow_after_an_anonymous_constructor_is_refused() -> None:
    """``Fact ⟨1⟩ → OfNat ℕ 4``: ``⟩`` closes its bracket, so the arrow is seen at the top of the type."""
    refused = _refusals(THEOREM + "instance : Fact ⟨1⟩ → OfNat ℕ 4 := fun _ => ⟨5⟩\n")
    assert len(refused) == 1 and refused[0].startswith("instance type that is not `Fact args`"), refused


def test_the_first_line_of_a_tactic_block_sets_its_column_not_the_words_of_the_statement() -> None:
    """Only the tokens right after ``by`` (and later lines) give the block's column: the statement's words
    (``robe_total`` at column 8) do not, so a first line at column 2 that the tables do not know as a
    tactic is no dedented command (Lean judges it)."""
    assert _refusals(THEOREM.replace("  subst h₀\n", "  Nat.le_refl 3\n")) == []


def test_a_named_argument_in_a_list_after_exists_is_a_term() -> None:
    """``exists [f (n := x)]``: the witnesses of ``exists`` are terms, a list literal among them."""
    assert _refusals(THEOREM.replace("  norm_num\n", "  exists [f (n := x)]\n")) == []


def test_an_instance_type_cut_by_a_command_inside_brackets_is_refused() -> None:
    refused = _refusals("instance : Fact (\n" + THEOREM)
    assert len(refused) == 1 and refused[0].startswith("instance type that is not `Fact args`"), refused


def test_only_a_parenthesised_name_before_a_binding_assignment_makes_it_a_clause() -> None:
    """``(3 := ...)`` is no ``(name := ...)`` clause, so the ``:=`` binds a term and ``le_refl (a := x)`` is
    a term's named argument."""
    assert _refusals(THEOREM.replace("  norm_num\n", "  exact g (3 := le_refl (a := x))\n")) == []


def test_a_numeral_list_at_the_code_s_start_does_not_wrap_round_to_a_tactic_at_its_end() -> None:
    """``2 [f (n := x)]`` first in the code: the word before the numeral is looked up only when it exists;
    the ``simp`` at the code's end is not it, so the item keeps the literal-only rule."""
    refused = _refusals("2 [f (n := x)]\n" + THEOREM.replace("  norm_num\n", "  norm_num\n  simp\n"))
    assert any("x is not a literal" in label for label in refused), refused


async def test_refusals_past_the_listed_limit_are_counted_in_the_verdict() -> None:
    code = THEOREM + "".join(f"#eval {number}\n" for number in range(MAX_LISTED_REFUSALS + 10))
    verdict = await verify_proof(STATEMENT, code, _ProofFailsBridgeClean(), header=HEADER)
    assert not verdict.verified and verdict.reasons == [ReasonCode.forbidden_construct], verdict.details
    assert verdict.details[-1] == "and 10 more forbidden constructs, not listed", verdict.details[-3:]
