"""Mutation testing of the soundness gate: how many small breakages do the gate tests notice?

Issue 19, section 6: real Lean cannot run in CI, so the tests are the only guard that a rule keeps
working. This benchmark breaks the gate's modules one small change at a time and runs the gate
tests against each broken copy; a mutant is *killed* when some test fails (or the run times out).
Mutations, chosen to be the ways a rule silently stops working:

- ``compare``: a comparison flipped (``==``/``!=``, ``<``/``>=``, ``in``/``not in``, ``is``/``is not``);
- ``drop-condition``: one operand of an ``and``/``or`` dropped;
- ``negate-if``: an ``if``/``elif``/``while`` test negated;
- ``delete-element``: one element deleted from a literal set/list/tuple/dict of strings (a refuse-list);
- ``widen-allowlist``: a dangerous name added to a literal assigned to an ``ALLOWED*``/``*ALLOWLIST`` name;
- ``skip-check``: a ``*.refuse(...)``/``*.add(...)`` call statement replaced by ``pass``.

How it stays fast on a shared two-core machine: mutants are enumerated from the AST and sampled
with a fixed seed. The parent collects the test files once, so every third-party import (pydantic,
openai, hypothesis, ...) is loaded before it forks; each mutant runs in a forked child that drops
only ``repro`` and ``tests`` from ``sys.modules`` and imports them again from an overlay directory
holding the one mutated file (about two seconds to collect). Phase 1 runs the quick kill suite
(``QUICK_TESTS``: the per-rule cases, the whole corpus with the fake REPL served in process, the
syntax tables, the statement reader, the deterministic lexer and text tests) with ``-x``, so most mutants die
within seconds. Phase 2 runs only the survivors that are not known equivalents against the slow
tests (``SLOW_TESTS``: the property-based lexer/text tests, the limits, and the corpus through the
fake REPL in a subprocess behind the real worker pool). A test running past 20 s (120 s in phase 2)
fails, so a mutant that loops dies fast.

Mutants are named by their module, enclosing function and the source of the node they change (not
by line number), so the reviewed equivalent mutants in ``EQUIVALENT`` stay valid while the modules
grow. Survivors are listed for review; ``--only`` reruns the mutants whose name contains a string.

Figures (2 shared cores, load 6-7). The whole seeded sample, on a frozen copy of main ad2f83c:

    python benchmarks/gate_mutation.py --sample 200 --seed 19 --budget-s 3900 --slow-tests --out run200.json

1,792 mutants; all 200 of the sample ran in 2,136 s (phase 1 only: a bare ``--slow-tests`` names no
test, so phase 2 was skipped): 141 killed, 21 equivalent, 38 survived = 78.8% of non-equivalent
mutants killed (gate.py 12/19, policy.py 60/72, statement.py 17/20, lexer.py 36/47, tables.py 16/21).
Then tests/test_gate_pins.py gained a pin for 32 of the 38 survivors, and each was run again alone
against that file (``--only NAME --tests tests/test_gate_pins.py``, later mains): all 32 killed. The
other 6 are reviewed equivalents now listed (``EQUIVALENT`` and ``_equivalent``: three curated tactic
files whose every tactic the generated tables hold, bracket tokens that are always symbols, ``end``
at the start-of-line test, a non-denylisted name added to the open allowlist). One mutant counted
equivalent in that run was not (``_equivalent`` read any deleted command keyword as redundant, also
``def`` in ``DECLARATION_OPENERS``); it is pinned and killed the same way. Merged into the run's
record: 174 killed, 26 equivalent, 0 survived of the 200 (100% of non-equivalent), a figure from one
run plus the per-survivor reruns, not from one fresh run (``--rerun run200.json`` repeats the
survivors against the whole quick suite in a few minutes). Earlier: 78.4% on 60 of the sample
(645a5a4), 77% on 137 (dc83b2e).

A fresh sample on a frozen copy of main 25e9b18 (``--sample 200 --seed 20 --slow-tests``, bare: phase 1
only): 2,054 mutants, 200 ran in 831 s: 158 killed, 10 equivalent, 32 survived = 83.2% of
non-equivalent (gate.py 9/12, policy.py 62/88, statement.py 27/29, lexer.py 39/40, tables.py 21/21).
Then 28 of the 32 were pinned in tests/test_gate_pins.py and 4 reviewed as equivalent (listed in
``EQUIVALENT``); all 32 run again against that file alone: 28 killed, 4 equivalent, 0 survived. Merged:
186 killed, 14 equivalent, 0 survived of the 200 (again one run plus reruns, not one fresh run).

Then (session of 2026-12-01): the quick suite gained every gate test file that existed but was never run
here (round 5, named-argument tables, scopes, hygiene), and a training sample (``--seed 100``, 260 mutants,
89.2% on main 11d488d plus that suite) and whole-function sweeps of 40 functions were pinned
(tests/test_gate_pins_a.py, _b, _c) or reviewed equivalent. The fresh sample that measures it, on a
frozen worktree of main 5a6f7bd, no pin written after it started:

    python benchmarks/gate_mutation.py --sample 200 --seed 22 --slow-tests --budget-s 3000 --out fresh22.json

2,063 mutants; 200 ran in 677 s (phase 1 only): 185 killed, 13 equivalent, 2 survived = **98.9%** of
non-equivalent (gate.py 14/14, policy.py 99/100, tables.py 20/20, lexer.py 30/31, statement.py 22/22).
The two survivors (the reach bound of ``_named_argument``'s walk, which only keeps it linear, and ``»``
in the lexer's closers before a comment) were pinned afterwards (a4b3919 and the next commit).
``tests/test_gate_mutation_equivalents.py`` fails when an ``EQUIVALENT`` entry names no mutant of the
current code, so rewriting a rule makes its reviewed equivalents come up for review again.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import copy
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# The four modules of issue 19 (source.py and lexer.py now live in repro/lean/text/), and the tables they read
DEFAULT_MODULES = (
    "repro/judge/policy.py",
    "repro/judge/screen.py",
    "repro/lean/text/statement.py",
    "repro/lean/text/lexer.py",
    "repro/lean/tables.py",
)
# Property-based tests that take seconds each: phase 2 only.
_SLOW_PROPERTIES = (
    "tests/test_lexer.py::test_random_interleavings_never_desynchronise",
    "tests/test_lexer.py::test_identifier_character_classes_match_the_functions_for_every_code_point",
    "tests/test_lexer.py::test_a_command_between_any_fragments_is_refused_and_inside_them_is_not",
    "tests/test_lean_text.py::test_the_linear_prose_line_rule_says_what_the_old_one_said",
)
# Fastest killers first: ``-x`` stops at the first failure.
QUICK_TESTS = (
    "tests/test_gate_rules.py",
    "tests/test_gate_pins.py",
    "tests/test_gate_pins_a.py",
    "tests/test_gate_pins_b.py",
    "tests/test_gate_pins_c.py",
    "tests/test_gate_round5.py",
    "tests/test_gate_named_argument_tables.py",
    "tests/test_gate_scopes.py",
    "tests/test_gate_corpus_fast.py",
    "tests/test_screen_classes.py",
    "tests/test_statement_reader.py",
    "tests/test_syntax_tables.py",
    "tests/test_lexer.py",
    "tests/test_lean_text.py",
    "tests/test_hygiene.py",
    *(f"--deselect={test}" for test in _SLOW_PROPERTIES),
)
SLOW_TESTS = (
    *_SLOW_PROPERTIES,
    "tests/test_gate_limits.py",
    "tests/test_gate.py",
    "tests/test_salvage.py",
    "tests/test_feedback.py",
)
_FLIPS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_WIDENING = ("Lean", "unsafe", "debug.skipKernelTC", "sorry")
# Mutants reviewed and found unable to change behaviour, by (module, mutant name): why. The name is
# ``function | kind: description | source of the node`` (see ``Mutant.name``), stable across line shifts;
# ``function | kind: description`` alone names every mutant of that description in the function.
_STATEMENT = "repro/lean/text/statement.py"
_CONNECTIVE = (
    "every connective is also refused by the allowlist that follows (a symbol outside _TERM_SYMBOLS, or"
    " fun/λ/if in _NON_TERM_WORDS), so the early return only saves the second loop"
)
_ALSO_CONNECTIVE = "also in top_level_equation's connectives, which return None first"
_NEVER_LEXED = "the lexer has no such token (it reads ⌋₊ as ⌋ then ₊), so the entry is never compared"
EQUIVALENT: dict[tuple[str, str], str] = {
    **{
        (_STATEMENT, f"top_level_equation | delete-element: delete {word!r}"): _CONNECTIVE
        for word in ["∧", "∨", "↔", "¬", "≠", "→", "->", "<->", "/\\", "\\/", "∃", "∀", "fun", "λ", "=>", "if"]
    },
    **{(_STATEMENT, f"<module> | delete-element: delete {word!r}"): _ALSO_CONNECTIVE for word in ["fun", "λ", "if"]},
    **{(_STATEMENT, f"<module> | delete-element: delete {word!r}"): _NEVER_LEXED for word in ["⌊₊", "⌋₊", "⌈₊", "⌉₊"]},
    (_STATEMENT, "<module> | delete-element: delete 'then'"): (
        "`then` only occurs with `if`, which is a connective: top_level_equation returns None first"
    ),
    (_STATEMENT, "<module> | delete-element: delete 'else'"): (
        "`else` only occurs with `if`, which is a connective: top_level_equation returns None first"
    ),
    (
        _STATEMENT,
        "_binders | drop-condition: drop operand 2 of and | depth == 0 and token.kind == Kind.symbol and"
        " (token.text in _CLOSE_...",
    ): (
        "between a depth-0 open bracket and its close no depth-0 token occurs, so the first depth-0 symbol"
        " after group_start is always the closing bracket"
    ),
    **{
        (_STATEMENT, f"depths | drop-condition: drop operand 0 of and | {test}"): (
            "only symbol tokens can have the text of a bracket"
        )
        for test in [
            "token.kind == Kind.symbol and token.text in _CLOSE_BRACKETS",
            "token.kind == Kind.symbol and token.text in _OPEN_BRACKETS",
        ]
    },
    (
        "repro/lean/text/lexer.py",
        "block_comment | drop-condition: drop operand 1 of or | self.at(index, '/--') or self.at(index, '/-!')",
    ): "`!` cannot begin a comment mark, so the body scan finds the same marks from the `!` as after it",
    **{
        ("repro/lean/text/lexer.py", f"<module> | delete-element: delete {symbol!r}"): (
            f"read as {' then '.join(halves)} instead, every reader decides the same: no rule names {symbol},"
            " none of the parts is a term symbol of the equation reader, and a split-off `=` only makes it"
            " return None sooner"
        )
        # not >=, <=, =>: the answer scope reader (text/answer_scope.py) treats > < = as relations
        for symbol, halves in {"...": ("..", ".")}.items()
    },
    (
        "repro/lean/text/lexer.py",
        "identifier | drop-condition: drop operand 0 of and | cursor < self.length and code[cursor] == '«'",
    ): (
        "the bound always holds there: the first pass starts at the identifier's own first character, and a"
        " later pass only after `cursor + 1 < self.length` was checked and the `.` stepped over"
    ),
    **{
        ("repro/judge/policy.py", f"{function} | drop-condition: drop operand 0 of and | {test}"): (
            "only symbol tokens have the text of a bracket (a string, char or name keeps its quotes, an error"
            " token runs from a comment, string or char opener to the end)"
        )
        for function in ("_instance", "_plain_application")
        for test in [
            "word.kind == Kind.symbol and word.text in ('(', '[', '{', '⦃', '⟨')",
            "word.kind == Kind.symbol and word.text in (')', ']', '}', '⦄', '⟩')",
        ]
    },
    ("repro/lean/text/lexer.py", "scan_from | compare: Eq->NotEq #0 | steps % 4096 == 0"): (
        "only how often the lexer checks the time limit (almost every token instead of every 4,096th):"
        " the same tokens and the same timeouts, slower"
    ),
    ("repro/judge/policy.py", "_identifier | delete-element: delete 'end' | ('by', 'end')"): (
        "`end` never reaches the start-of-line test: alone on its line it is the prover's anonymous section"
        " end (returned before), otherwise a command keyword of the generated tables (refused before)"
    ),
    (
        "repro/judge/policy.py",
        "header_opens | drop-condition: drop operand 2 of or | following.kind != Kind.identifier or"
        " following.text in COMMAND_KEYW...",
    ): (
        "`in` read as one more opened name: the open allowlist only exempts names from OPEN_DENYLIST, which"
        " `in` is not in, and what follows `open X in` in a header Lean accepts is a command (its keyword,"
        " `@[`, or a modifier of COMMAND_KEYWORDS), where the loop stops as before"
    ),
    (
        "repro/judge/policy.py",
        "_in_term_list | drop-condition: drop operand 0 of and | cursor >= 0 and words[cursor].text == '⟨'",
    ): (
        "`cursor >= 0` always holds there: it starts at `index`, and the backward scan either breaks at a"
        " word it read (cursor >= 0) or runs out and returns False before this test"
    ),
    (
        "repro/judge/policy.py",
        "_named_argument | drop-condition: drop operand 0 of and | before.kind == Kind.symbol and before.text"
        " in ('[', ',') and _in_te...",
    ): "only symbol tokens have the text `[` or `,` (a string or char keeps its quotes)",
    (
        "repro/judge/policy.py",
        "_named_argument | drop-condition: drop operand 0 of and | cursor > 0 and words[cursor - 1].text =="
        " '@' and (words[cursor - 1]...",
    ): (
        "at cursor 0, words[-1] is the code's last token, which ends after the first word starts: the glued"
        " test that follows fails as the bound did"
    ),
    ("repro/judge/policy.py", "_open | delete-element: delete 'by'"): (
        "`by` right after `open` names is code Lean does not parse; refusing it as a name changes nothing"
    ),
    (
        "repro/judge/policy.py",
        "_in_term_list | drop-condition: drop operand 0 of and | opener.kind == Kind.identifier and opener.text"
        " in _TERM_LIST_TACTICS",
    ): (
        "only an identifier token has a bare word's text: symbols are punctuation, numbers digits, literals"
        " keep their quotes, and an error token runs to the code's end, so it is never followed by `[`"
    ),
    (
        "repro/judge/policy.py",
        "_dedented_line_starts | drop-condition: drop operand 0 of and | previous is not None and"
        " previous.kind == Kind.symbol and (previous...",
    ): (
        "`continues` is read only once a `by` has opened a block, so never at the first word: `previous` is"
        " always set there"
    ),
    (
        "repro/judge/screen.py",
        "verify_proof | drop-condition: drop operand 2 of and | not verdict.reasons and len(lean_results) =="
        " len(STEP_NAMES) and al...",
    ): (
        "lean_results is only set right before _judge_lean, which adds lean_timeout or lean_unavailable for"
        " any step not ok: `not verdict.reasons` already fails whenever the all-ok test would"
    ),
    (
        "repro/judge/policy.py",
        "_open | drop-condition: drop operand 1 of and | cursor < len(words) and words[cursor].kind =="
        " Kind.symbol and (word...",
    ): "only a symbol token has the text `(` (a string or char keeps its quotes, an error token its opener)",
    (
        _STATEMENT,
        "top_level_equation | drop-condition: drop operand 1 of and | d == 0 and t.kind == Kind.symbol and"
        " (t.text == '=')",
    ): "only a symbol token has the text `=` (a string or char keeps its quotes, a quoted name its «»)",
    **{
        (_STATEMENT, f"_binders | drop-condition: drop operand 1 of and | {test}"): (
            "only symbol tokens have the text of a bracket (a string or char keeps its quotes, a quoted name its «»)"
        )
        for test in [
            "depth == 0 and token.kind == Kind.symbol and (token.text in _OPEN_B...",
            "depth == 0 and token.kind == Kind.symbol and (token.text in _CLOSE_...",
        ]
    },
    (
        _STATEMENT,
        "_binders | drop-condition: drop operand 1 of and | depth == 0 and token.kind == Kind.symbol and"
        " (token.text == ':')",
    ): "only a symbol token has the text `:` (a string or char keeps its quotes, a quoted name its «»)",
    (
        "repro/judge/policy.py",
        "scan | drop-condition: drop operand 0 of and | token.kind == Kind.identifier and token.text == 'import'",
    ): "only an identifier token has the text `import` (a quoted «import» keeps its guillemets)",
    (
        "repro/judge/policy.py",
        "_identifier | drop-condition: drop operand 1 of and | option is not None and option.kind == Kind.identifier",
    ): (
        "a token other than an identifier is then judged by its own text, which no option allowlist holds and"
        " none starts with pp./linter. (symbols are punctuation, numbers digits, literals keep their quotes):"
        " _allowed_option refuses it as it refuses '?'"
    ),
    (
        "repro/judge/policy.py",
        "_allowed_option | drop-condition: drop operand 0 of and | value.kind == Kind.identifier and value.text in"
        " ('true', 'false')",
    ): (
        "only an identifier token has the bare text true or false: a string or char keeps its quotes, a quoted"
        " name its «», and a number or symbol cannot spell a letter"
    ),
    **{
        (module, f"{function} | {mutation} | {test}"): (
            "only how often the time limit is read (every step but one in 4,096, or every step, instead of"
            " every 4,096th): the same result, and a passed deadline stops the scan at least as soon"
        )
        for module, function, test in [
            ("repro/judge/policy.py", "_instance", "scan_at % 4096 == 0"),
            ("repro/judge/policy.py", "_dedented_line_starts", "index % 4096 == 0"),
            ("repro/judge/policy.py", "_column_zero_tactics", "index % 4096 == 0"),
            ("repro/lean/text/lexer.py", "scan_from", "steps % 4096 == 0"),
        ]
        for mutation in ("compare: Eq->NotEq #0", "negate-if: negate the condition")
        if (function, mutation) != ("scan_from", "compare: Eq->NotEq #0")  # listed above
    },
    **{
        (
            "repro/judge/policy.py",
            f"<module> | delete-element: delete {word!r} | {{'by', 'end', 'then', 'else', 'with', 'from', 'at',"
            " 'using', 'fun',...",
        ): reason
        for word, reason in {
            "if": (
                "`if` is also in tables.LAYOUT_TACTICS (core's tactic `if`), so _is_layout_tactic accepts a"
                " dedented `if` before _DEDENTED_WORDS is read"
            ),
            "λ": "the lexer reads `λ` as a symbol, and only identifiers are flagged as dedented line starts",
        }.items()
    },
    ("repro/lean/tables.py", "<module> | delete-element: delete 'linter.' | ('pp.', 'linter.')"): (
        "policy._allowed_option returns for every linter.* option at its own test (a boolean) before"
        " DISPLAY_OPTION_PREFIXES is read, and nothing else reads that tuple"
    ),
    (
        "repro/judge/screen.py",
        "verify_proof | drop-condition: drop operand 1 of and | not verdict.reasons and len(lean_results) =="
        " len(STEP_NAMES) and al...",
    ): (
        "with no reason so far Lean is asked (verifier None adds lean_unavailable), and _judge_lean adds"
        " lean_unavailable for any count of results other than len(STEP_NAMES): `not verdict.reasons`"
        " already fails whenever the count test would"
    ),
    (
        "repro/judge/policy.py",
        "_identifier | drop-condition: drop operand 1 of or | following is None or following.kind !="
        " Kind.identifier or following...",
    ): (
        "only an identifier token has the text of a word of _AFTER_MODIFIER (symbols are punctuation or"
        " Σ', numbers digits, literals keep their quotes), so the `not in` test holds for any other token"
    ),
    (
        "repro/judge/policy.py",
        "_field_projection | drop-condition: drop operand 0 of or | dot.kind != Kind.symbol or dot.end !="
        " words[index].start",
    ): "only a symbol token has the text `.` or `|>.`, which the tests after it require",
    (_STATEMENT, "final_proposition | delete-element: delete '∃!' | ('∀', '∃', '∃!')"): (
        "the lexer has no such token (it reads ∃! as ∃ then !, whose head `∃` is handled the same), so the"
        " entry is never compared"
    ),
    (
        "repro/judge/policy.py",
        "_instance | drop-condition: drop operand 1 of or | head is None or head.kind != Kind.identifier or"
        " head.name not in PR...",
    ): (
        "Token.name is the text itself for any token but an identifier, and no other token has a bare word's"
        " text (a quotation is the backquote alone, literals keep their quotes): never a PROP_CLASSES name"
    ),
    (
        "repro/judge/policy.py",
        "_universe | drop-condition: drop operand 1 of or | following is None or following.kind !="
        " Kind.identifier or (not _SIM...",
    ): (
        "no token but an identifier has a text _SIMPLE_NAME matches (a number starts with a digit, symbols"
        " are punctuation, literals keep their quotes): the fullmatch test already fails for any other"
    ),
    (
        "repro/judge/policy.py",
        "_search_form | drop-condition: drop operand 0 of or | '.' in text or text in SEARCH_TACTICS or (not"
        " text.rstrip('!').ends...",
    ): (
        "no keyword of the generated syntax tables contains a `.` (none in v4.15.0 or v4.9.0), so a dotted"
        " word has no category and the last test returns False as the dropped one did"
    ),
    ("repro/lean/text/lexer.py", "<module> | delete-element: delete \"''\""): (
        "`''` is the only symbol starting with a quote, and step returns at every quote before its symbol"
        " loop (an error token, the `''` test just above it, or a char literal): the entry is never read"
    ),
    # seed-21 survivors reviewed (tests/test_gate_pins_a.py pins the others)
    **{
        ("repro/judge/policy.py", f"{function} | {kind} | index % 4096 == 0"): (
            "only how often the pass checks the time limit (every token but each 4,096th instead of each"
            " 4,096th): the same tokens and the same timeouts, slower"
        )
        for function in ("_column_zero_tactics", "_dedented_line_starts")
        for kind in ("negate-if: negate the condition", "compare: Eq->NotEq #0")
    },
    **{
        (
            "repro/judge/policy.py",
            f"<module> | delete-element: delete {word!r} | {{'at', 'with', 'only', 'using',"
            " 'then', 'else', 'do', 'in', 'from',...",
        ): (f"_KEYWORDS_NOT_HEADS also unions _BINDER_WORDS, which holds {word!r}: the set is unchanged")
        for word in ("fun", "λ")
    },
    **{
        ("repro/judge/policy.py", f"<module> | delete-element: delete {symbol!r} | {snippet}"): (
            f"{symbol} is always a symbol token (tests/test_gate_pins_a.py), and the set is only compared with"
            " identifier tokens (_plain_application: a symbol already fails the kind test before it)"
        )
        for symbol, snippet in [
            *((binder, "{'fun', 'λ', '∀', 'Π', '∃', 'forall', 'exists', 'let', 'have', 'sho...") for binder in "λ∀Π∃"),
            ("λ", "{'by', 'end', 'then', 'else', 'with', 'from', 'at', 'using', 'fun',..."),
        ]
    },
    (
        "repro/judge/policy.py",
        "_column_zero_tactics | drop-condition: drop operand 1 of and | open_block and token.kind =="
        " Kind.identifier and _is_layout_tactic(...",
    ): (
        "every word _is_layout_tactic accepts lexes as one identifier token (pinned in tests/test_gate_pins_a.py):"
        " a number, literal, `#` command or `@[` never has such a text"
    ),
    (
        "repro/judge/policy.py",
        "_column_zero_tactics | drop-condition: drop operand 1 of and | previous is not None and previous.kind =="
        " Kind.identifier and (prev...",
    ): "only an identifier token has the text `by` or `decreasing_by`",
    (
        _STATEMENT,
        "read_statement | drop-condition: drop operand 1 of or | not code or code[0].kind != Kind.identifier or"
        " code[0].text not in ...",
    ): "only an identifier token has the text `theorem` or `lemma` (a quoted «theorem» keeps its guillemets)",
    (
        "repro/judge/policy.py",
        "configurations | drop-condition: drop operand 0 of and | w.kind == Kind.identifier and w.text == 'instance'",
    ): "only an identifier token has the text `instance` (a quoted «instance» keeps its guillemets)",
    (
        "repro/judge/policy.py",
        "_named_argument | drop-condition: drop operand 0 of and | word.kind == Kind.identifier and word.text == '_'",
    ): "the lexer reads `_` as an identifier token only (a hole); no other token has that text",
    (
        "repro/judge/policy.py",
        "_named_argument | drop-condition: drop operand 0 of and | before.kind == Kind.symbol and before.text in"
        " _TERM_BEFORE_SYMBOLS",
    ): (
        "an identifier before the head returned just above, and no number, literal or error token has the"
        " text of a symbol (a string or char keeps its quotes, an error token its opener)"
    ),
    (
        "repro/judge/policy.py",
        "_config_literal | drop-condition: drop operand 0 of and | token.kind == Kind.symbol and token.text =="
        " '.' and (index + 1 < le...",
    ): "only a symbol token has the text `.` (a string or char keeps its quotes, an error token its opener)",
    ("repro/judge/policy.py", "configurations | drop-condition: drop operand 0 of or | first or token"): (
        "`first` is only tested for None afterwards, and both `first or token` and `token` are set"
    ),
    (
        "repro/judge/policy.py",
        "_config_literal | drop-condition: drop operand 0 of and | token.kind == Kind.identifier and token.text in"
        " ('true', 'false')",
    ): "only an identifier token has the text `true` or `false`",
    (
        "repro/judge/policy.py",
        "_dedented_line_starts | drop-condition: drop operand 0 of and | token.kind == Kind.identifier and"
        " token.text in _COMMAND_STARTS",
    ): "every word of _COMMAND_STARTS lexes as one identifier token; no other token has such a text",
    (
        "repro/judge/policy.py",
        "_named_argument | drop-condition: drop operand 0 of and | word.kind == Kind.symbol and word.text in _OPENING",
    ): "only a symbol token has the text of a closing bracket (a string or char keeps its quotes)",
    # not listed: dropping the reach bound from _named_argument's loop keeps every verdict but makes the walk
    # quadratic on one long line (issue 19 section 1); no test can see time, so it counts as a survivor
    (
        "repro/judge/policy.py",
        "_named_argument | drop-condition: drop operand 0 of and | before.kind == Kind.symbol and before.text == ':='",
    ): "only a symbol token has the text `:=` (a string or char keeps its quotes, an error token its opener)",
    (
        "repro/judge/policy.py",
        "_named_argument | drop-condition: drop operand 1 of and | before.kind == Kind.symbol and before.text"
        " in ('[', ',') and _in_te...",
    ): (
        "_in_term_list is True only at a `[`, a `,` or a `⟨`, and a `⟨` before the head returned True just"
        " above (it is in _TERM_BEFORE_SYMBOLS)"
    ),
    (
        "repro/judge/policy.py",
        "_named_argument | drop-condition: drop operand 0 of and | head > 0 and words[head - 1].text == '@' and"
        " (words[head - 1].end =...",
    ): (
        "at head 0, words[-1] is the code's last token, after the `(` that follows the head: it ends after"
        " the head starts, so the glued test fails as the bound did"
    ),
    (
        "repro/judge/policy.py",
        "_dedented_line_starts | drop-condition: drop operand 0 of and | token.kind == Kind.identifier and"
        " token.text in _BLOCK_OPENERS",
    ): "only an identifier token has the text `by` or `decreasing_by`",
    (
        "repro/judge/policy.py",
        "_dedented_line_starts | drop-condition: drop operand 0 of and | token.kind == Kind.identifier and (not"
        " continues) and (leftmost is ...",
    ): (
        "a flagged index is only read by _identifier (`index in dedented`), which is called for identifier"
        " tokens only; the leftmost column is updated the same either way"
    ),
    (
        "repro/judge/policy.py",
        "_informational_command_end | drop-condition: drop operand 2 of or | cursor >= len(words) or"
        " words[cursor].text != 'axioms' or words[cur...",
    ): "only an identifier token has the text `axioms` (a quoted «axioms» keeps its guillemets)",
    (
        "repro/judge/policy.py",
        "_config_literal | drop-condition: drop operand 1 of and | name.start == token.end and name.kind =="
        " Kind.identifier and (name....",
    ): "every CONFIG_CONSTRUCTORS entry is a plain word, which only an identifier token has as its text",
    (
        "repro/judge/policy.py",
        "_config_literal | drop-condition: drop operand 0 of and | token.kind == Kind.symbol and token.text =="
        " '{' and (depth < _CONFI...",
    ): "only a symbol token has the text `{` (a string or char keeps its quotes, an error token its opener)",
    (
        "repro/judge/policy.py",
        "_dedented_line_starts | drop-condition: drop operand 0 of and | previous is not None and previous.kind =="
        " Kind.identifier and (prev...",
    ): "the same-line branch is never taken at the first token (its line differs from the initial -1)",
    (
        "repro/judge/policy.py",
        "_named_argument | drop-condition: drop operand 0 of and | word.kind == Kind.identifier and"
        " (tables.category(word.text) is not...",
    ): "a word that is no identifier breaks the walk on the next test anyway (a number is never a keyword)",
    (
        "repro/judge/policy.py",
        "_named_argument | drop-condition: drop operand 1 of or | before is None or cursor != start - 1",
    ): (
        "the walk only passes the word before the head when it is a hole `_`, a number or a bracket group;"
        " none of those is a term-position word or symbol, so the tests below return False as well"
    ),
    (
        "repro/judge/policy.py",
        "_dedented_line_starts | drop-condition: drop operand 1 of and | previous is not None and previous.kind =="
        " Kind.identifier and (prev...",
    ): "only an identifier token has the text `by` or `decreasing_by`",
}


def _equivalent(mutant: Mutant) -> str | None:
    """Why ``mutant`` cannot change behaviour, or None: reviewed cases, and deletions made redundant."""
    short = f"{mutant.function} | {mutant.kind}: {mutant.description}"
    reviewed = EQUIVALENT.get((mutant.module, mutant.name)) or EQUIVALENT.get((mutant.module, short))
    if reviewed:
        return reviewed
    if mutant.module.endswith("tables.py") and mutant.description.endswith("to DEFAULT_OPEN_ALLOWLIST"):
        from repro.lean.tables import OPEN_DENYLIST
        from repro.lean.text import identifier_parts

        added = mutant.description.split("'")[1]
        if not any(part in OPEN_DENYLIST for part in identifier_parts(added)):
            return (
                "the open allowlist only exempts a namespace from OPEN_DENYLIST (policy._open judges every"
                " opened name by the name rules first), and no component of this one is in it"
            )
    if mutant.module.endswith("tables.py") and mutant.kind == "delete-element":
        from repro.lean import tables
        from repro.lean.syntax import gate_tables, keyword_key
        from repro.lean.tables import COMMAND_KEYWORDS
        from repro.lean.text import identifier_parts

        word = mutant.description.removeprefix("delete ").strip("'")
        # only the hand-kept COMMAND_KEYWORDS literal: the same word in another table (DECLARATION_OPENERS'
        # ``def``) is no command keyword there
        hand_kept_commands = mutant.snippet.startswith("{'theorem', 'lemma', 'def', 'abbrev', 'example'")
        if hand_kept_commands and word in COMMAND_KEYWORDS and keyword_key(word) in gate_tables().commands:
            return "the generated syntax tables also hold this command keyword, and COMMAND_KEYWORDS unions them in"
        curated = {**getattr(tables, "_CORE_TACTICS", {}), **getattr(tables, "_MATHLIB_TACTICS", {})}
        if mutant.snippet.startswith(("{'src/Init/Tactics.lean'", "{'Mathlib/Tactic/NormNum/Core.lean'")):
            words = curated.get(word, "").split()
            if words and all(gate_tables().is_tactic(tactic) for tactic in words):
                return (
                    f"every tactic of {word} is also a tactic keyword of the generated syntax tables, which"
                    " policy._is_layout_tactic reads first"
                )
        open_denylist: frozenset[str] = getattr(tables, "OPEN_DENYLIST", frozenset())
        if (
            open_denylist
            and mutant.snippet.startswith("{'BigOperators'")
            and word in tables.DEFAULT_OPEN_ALLOWLIST
            and not any(part in open_denylist for part in identifier_parts(word))
        ):
            return (
                "any namespace whose names pass may be opened (issue 19 §3, policy._judge_open_name); the open"
                " allowlist only exempts names from OPEN_DENYLIST, and this one is not in it"
            )
    return None


@dataclass
class Mutant:
    module: str
    index: int  # position in the module's mutation walk (this revision only)
    line: int
    kind: str
    description: str
    function: str  # the enclosing function or class (``<module>`` at top level)
    snippet: str  # the source of the node the mutation changes, shortened
    occurrence: int = 1  # the same name more than once in one module: numbered in walk order
    # lines of the mutated node in the overlay's copy of the module (``ast.unparse`` of the original)
    span: tuple[int, int] = (0, 0)
    status: str = "pending"  # killed | survived | timeout | error
    phase: str = ""  # quick | slow: the suite that decided
    seconds: float = 0.0

    @property
    def name(self) -> str:
        suffix = f" #{self.occurrence}" if self.occurrence > 1 else ""
        return f"{self.function} | {self.kind}: {self.description} | {self.snippet}{suffix}"


def _constant_strings(node: ast.AST) -> bool:
    elements = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", [])
    return len(elements) >= 2 and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in elements)


def _assigned_name(tree: ast.Module, target: ast.AST) -> str | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign):
            value = node.value
            if value is not None and any(child is target for child in ast.walk(value)):
                names = node.targets if isinstance(node, ast.Assign) else [node.target]
                return next((n.id for n in names if isinstance(n, ast.Name)), None)
    return None


def _walk(tree: ast.Module) -> Iterator[tuple[ast.AST, tuple[str, object], str, str]]:
    """(node, how, kind, description) for every mutation of the module, in a fixed order.

    ``how`` says what :func:`_apply` does to the node; the same walk over a deep copy meets the
    copied nodes in the same order, which is how a mutant is found again.
    """
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for index, op in enumerate(node.ops):
                if type(op) in _FLIPS:
                    flipped = _FLIPS[type(op)].__name__
                    yield node, ("compare", index), "compare", f"{type(op).__name__}->{flipped} #{index}"
        elif isinstance(node, ast.BoolOp) and len(node.values) >= 2:
            operator = "and" if isinstance(node.op, ast.And) else "or"
            for index in range(len(node.values)):
                yield node, ("drop", index), "drop-condition", f"drop operand {index} of {operator}"
        elif isinstance(node, ast.If | ast.While):
            yield node, ("negate", 0), "negate-if", "negate the condition"
        elif isinstance(node, ast.Set | ast.List | ast.Tuple | ast.Dict) and _constant_strings(node):
            elements = node.keys if isinstance(node, ast.Dict) else node.elts
            for index, element in enumerate(elements):
                assert isinstance(element, ast.Constant)
                yield node, ("delete", index), "delete-element", f"delete {element.value!r}"
            name = _assigned_name(tree, node) or ""
            if "ALLOW" in name.upper() and not isinstance(node, ast.Dict):
                for word in _WIDENING:
                    yield node, ("widen", word), "widen-allowlist", f"add {word!r} to {name}"
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            function = node.value.func
            if isinstance(function, ast.Attribute) and function.attr in ("refuse", "add"):
                yield node, ("skip", 0), "skip-check", f"skip .{function.attr}(...)"


def _enclosing(tree: ast.Module) -> dict[int, str]:
    """id(node) -> the name of the innermost function or class around it."""
    owner: dict[int, str] = {}

    def visit(node: ast.AST, name: str) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child.name if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) else name
            owner[id(child)] = inner
            visit(child, inner)

    visit(tree, "<module>")
    return owner


def _snippet(node: ast.AST) -> str:
    shown = node.test if isinstance(node, ast.If | ast.While) else node
    text = " ".join(ast.unparse(shown).split())
    return text if len(text) <= 70 else text[:67] + "..."


def enumerate_mutants(module: str, tree: ast.Module) -> list[Mutant]:
    owner = _enclosing(tree)
    found: list[Mutant] = []
    seen: Counter[str] = Counter()
    # the overlay holds ``ast.unparse(tree)``: its walk meets the same nodes in the same order
    spans = [(getattr(n, "lineno", 0), getattr(n, "end_lineno", 0)) for n, *_ in _walk(ast.parse(ast.unparse(tree)))]
    for index, (node, _, kind, description) in enumerate(_walk(tree)):
        mutant = Mutant(
            module,
            index,
            getattr(node, "lineno", 0),
            kind,
            description,
            owner.get(id(node), "<module>"),
            _snippet(node),
        )
        mutant.span = spans[index]
        seen[mutant.name] += 1
        mutant.occurrence = seen[mutant.name]
        found.append(mutant)
    return found


def _apply(tree: ast.Module, target_index: int) -> str:
    """Source of the module with the ``target_index``-th mutation applied."""
    mutated = copy.deepcopy(tree)
    for count, (node, (kind, argument), _, _) in enumerate(_walk(mutated)):
        if count != target_index:
            continue
        if kind == "compare":
            assert isinstance(node, ast.Compare) and isinstance(argument, int)
            node.ops[argument] = _FLIPS[type(node.ops[argument])]()
        elif kind == "drop":
            assert isinstance(node, ast.BoolOp) and isinstance(argument, int)
            del node.values[argument]
            if len(node.values) == 1:
                _replace(mutated, node, node.values[0])
        elif kind == "negate":
            assert isinstance(node, ast.If | ast.While)
            node.test = ast.UnaryOp(op=ast.Not(), operand=node.test)
        elif kind == "delete":
            assert isinstance(argument, int)
            if isinstance(node, ast.Dict):
                del node.keys[argument]
                del node.values[argument]
            else:
                del node.elts[argument]  # type: ignore[attr-defined]
        elif kind == "widen":
            node.elts.append(ast.Constant(value=str(argument)))  # type: ignore[attr-defined]
        elif kind == "skip":
            _replace(mutated, node, ast.Pass())
        break
    return ast.unparse(ast.fix_missing_locations(mutated))


def _replace(tree: ast.AST, old: ast.AST, new: ast.AST) -> None:
    for parent in ast.walk(tree):
        for field_name, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field_name, new)
                return
            if isinstance(value, list) and any(item is old for item in value):
                value[[i for i, item in enumerate(value) if item is old][0]] = new
                return


_PYTEST = ("-x", "-q", "-p", "no:cacheprovider", "--import-mode=append")


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """Silence file descriptors 1 and 2 (pytest's output) for the parent's warm-up collection."""
    saved = os.dup(1), os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for descriptor in (*saved, devnull):
            os.close(descriptor)


def _warm_up(tests: list[str]) -> None:
    """Collect the tests once in the parent: every third-party import is then inherited by the forks."""
    import pytest

    with _quiet():
        pytest.main([*_PYTEST, "--collect-only", *tests])


def _enter_overlay(overlay: Path) -> None:
    """In a forked child: forget ``repro`` and ``tests``, import them from ``overlay``, output to its log."""
    os.setpgid(0, 0)  # its own process group: a timeout also ends the fake REPLs it started
    for name in [m for m in sys.modules if m in ("repro", "tests") or m.startswith(("repro.", "tests."))]:
        del sys.modules[name]
    sys.path.insert(0, str(overlay))
    os.environ["PYTHONPATH"] = os.pathsep.join([str(overlay), str(REPO)])  # the fake REPL's subprocesses
    os.chdir(REPO)
    log = os.open(overlay / "child.log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(log, 1)
    os.dup2(log, 2)


def _wait(pid: int, timeout_s: float) -> int | None:
    """The child's exit code, or None when it ran past ``timeout_s`` (then it and its group are killed)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return None


class _PerTestAlarm:
    """A pytest plugin that fails any one test running past ``seconds``: a mutant that loops dies fast.

    The whole child's limit stays as a backstop (a loop inside C code cannot be interrupted).
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: object) -> Iterator[None]:
        def ring(signum: int, frame: object) -> None:
            raise TimeoutError(f"one test ran past {self.seconds:g} s")

        previous = signal.signal(signal.SIGALRM, ring)
        signal.setitimer(signal.ITIMER_REAL, self.seconds)
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


class _TestContexts:
    """A pytest plugin that names each test's coverage context by its node id, in run order."""

    def __init__(self, coverage: object) -> None:
        self.coverage = coverage
        self.order: list[str] = []

    def pytest_runtest_setup(self, item: object) -> None:
        nodeid = str(getattr(item, "nodeid", ""))
        self.order.append(nodeid)
        self.coverage.switch_context(nodeid)  # type: ignore[attr-defined]


def coverage_map(overlay: Path, tests: list[str], modules: list[str], timeout_s: float) -> Coverage | None:
    """Which quick tests run each line of the (unmutated) overlay modules: one run under ``coverage``.

    A mutant then runs only the tests that execute its lines. Lines run outside any test (imports,
    collection) or inside an ``lru_cache``d function (a later test reuses an earlier test's call)
    select every quick test; see :func:`_selection`.
    """
    out = overlay / "coverage.json"
    pid = os.fork()
    if pid == 0:
        try:
            _enter_overlay(overlay)
            import coverage
            import pytest

            measured = coverage.Coverage(data_file=None, include=[str(overlay / m) for m in modules])
            contexts = _TestContexts(measured)
            measured.start()
            code = pytest.main([*_PYTEST[1:], *tests], plugins=[contexts])
            measured.stop()
            data = measured.get_data()
            lines = {m: data.contexts_by_lineno(str(overlay / m)) for m in modules}
            found = {m: {str(n): sorted(c) for n, c in by_line.items()} for m, by_line in lines.items()}
            out.write_text(json.dumps({"order": contexts.order, "lines": found}), encoding="utf-8")
            os._exit(0 if code == 0 else 1)
        except BaseException:
            os._exit(70)
    if _wait(pid, timeout_s) != 0 or not out.is_file():
        return None
    loaded = json.loads(out.read_text(encoding="utf-8"))
    return Coverage(loaded["order"], {m: {int(n): set(c) for n, c in v.items()} for m, v in loaded["lines"].items()})


@dataclass
class Coverage:
    order: list[str]  # quick test node ids in run order
    lines: dict[str, dict[int, set[str]]]  # module -> line -> node ids ("" outside any test)


def _cached_functions(tree: ast.Module) -> set[str]:
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and any("cache" in ast.unparse(d) for d in node.decorator_list)
    }


def _selection(mutant: Mutant, covered: Coverage, cached: set[str]) -> list[str] | None:
    """The quick tests to run against ``mutant`` (None: all of them; empty: none runs its lines)."""
    if mutant.function == "<module>" or mutant.function in cached:
        return None
    by_line = covered.lines.get(mutant.module, {})
    chosen: set[str] = set()
    for line in range(mutant.span[0], mutant.span[1] + 1):
        chosen |= by_line.get(line, set())
    if "" in chosen:
        return None
    return [nodeid for nodeid in covered.order if nodeid in chosen]


def _run_child(overlay: Path, tests: list[str], timeout_s: float, per_test_s: float = 20.0) -> str:
    """Run the tests in a forked child importing ``repro`` from ``overlay``: killed, survived, timeout or error.

    The child's output goes to ``overlay/child.log`` (overwritten by the next child).
    """
    pid = os.fork()
    if pid == 0:  # child
        try:
            _enter_overlay(overlay)
            import pytest

            exit_code = pytest.main([*_PYTEST, *tests], plugins=[_PerTestAlarm(per_test_s)])
            # 1: a test failed; 2: interrupted, as when collection fails (the mutant breaks an import)
            os._exit({0: 0, 1: 1, 2: 1}.get(int(exit_code), 70))
        except BaseException:
            os._exit(70)
    code = _wait(pid, timeout_s)
    return "timeout" if code is None else "survived" if code == 0 else "killed" if code == 1 else "error"


def _baseline(overlay: Path, tests: list[str], label: str, timeout_s: float | None) -> float | None:
    """Run the unmutated overlay: the per-mutant limit, or None when the baseline itself fails."""
    began = time.monotonic()
    status = _run_child(overlay, tests, timeout_s or 1800, 20.0 if label == "quick" else 120.0)
    seconds = time.monotonic() - began
    print(f"baseline {label}: {status} in {seconds:.1f} s", flush=True)
    if status != "survived":
        print((overlay / "child.log").read_text(encoding="utf-8", errors="replace")[-3000:], flush=True)
        return None
    return timeout_s or max(30.0, 2 * seconds)


def _run_phase(
    overlay: Path,
    mutants: list[tuple[Mutant, ast.Module]],
    tests: list[str],
    phase: str,
    limit: float,
    deadline: float,
    select: Callable[[Mutant], list[str] | None] | None = None,
) -> None:
    """Run each mutant against ``tests`` (or, with ``select``, against the tests that run its lines)."""
    for mutant, tree in mutants:
        if time.monotonic() > deadline:
            print(f"budget spent: {phase} phase stopped", flush=True)
            return
        if phase == "quick" and _equivalent(mutant):  # known not to change behaviour: nothing to run
            mutant.status, mutant.phase = "survived", "-"
            continue
        chosen = select(mutant) if select else None
        if chosen is not None and not chosen:  # no quick test runs these lines: left to the slow phase
            mutant.status, mutant.phase = "survived", "quick"
            print(f"{phase:5} {'no test':9} {0.0:6.1f}s {mutant.module}:{mutant.line} {mutant.name}", flush=True)
            continue
        path = overlay / mutant.module
        original = path.read_text(encoding="utf-8")
        path.write_text(_apply(tree, mutant.index), encoding="utf-8")
        began = time.monotonic()
        per_test = 20.0 if phase == "quick" else 120.0
        mutant.status = _run_child(overlay, tests if chosen is None else chosen, limit, per_test)
        mutant.phase = phase
        mutant.seconds = round(mutant.seconds + time.monotonic() - began, 1)
        path.write_text(original, encoding="utf-8")
        print(
            f"{phase:5} {mutant.status:9} {mutant.seconds:6.1f}s {mutant.module}:{mutant.line} {mutant.name}",
            flush=True,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--module", action="append", help="module to mutate (repeatable; default: the gate's four)")
    parser.add_argument("--tests", nargs="+", default=list(QUICK_TESTS), help="phase 1: the quick kill suite")
    parser.add_argument(
        "--deselect", action="append", default=[], help="a quick test's node id to leave out (repeatable)"
    )
    parser.add_argument(
        "--slow-tests",
        nargs="*",
        default=list(SLOW_TESTS),
        help="phase 2, for phase 1's survivors (given bare, no tests: phase 2 is skipped)",
    )
    parser.add_argument("--sample", type=int, default=200, help="mutants to run (sampled with --seed); 0: all")
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument(
        "--only", action="append", help="run only the mutants whose module:name contains this string (repeatable)"
    )
    parser.add_argument("--timeout-s", type=float, help="per-mutant limit (default: 5x the phase's baseline)")
    parser.add_argument("--budget-s", type=float, default=3600, help="stop starting mutants after this long")
    parser.add_argument("--out", type=Path, help="write every mutant with its status as JSON")
    parser.add_argument("--rerun", type=Path, help="run only the survivors listed in this earlier --out file")
    parser.add_argument(
        "--no-coverage", action="store_true", help="run every quick test against every mutant (no selection)"
    )
    parser.add_argument("--list", action="store_true", help="only list the mutants (module:line name)")
    parser.add_argument("--summarize", type=Path, help="only print the summary of an earlier --out file")
    arguments = parser.parse_args(argv)
    sys.path.insert(0, str(REPO))
    if arguments.summarize:
        _summarize([Mutant(**m) for m in json.loads(arguments.summarize.read_text(encoding="utf-8"))], None)
        return 0
    modules = arguments.module or [m for m in DEFAULT_MODULES if (REPO / m).is_file()]
    arguments.tests = [*arguments.tests, *(f"--deselect={test}" for test in arguments.deselect)]

    all_mutants: list[tuple[Mutant, ast.Module]] = []
    for module in modules:
        tree = ast.parse((REPO / module).read_text(encoding="utf-8"))
        all_mutants.extend((mutant, tree) for mutant in enumerate_mutants(module, tree))
    if arguments.list:
        for mutant, _ in all_mutants:
            print(f"{mutant.module}:{mutant.line} {mutant.name}")
        return 0
    random.Random(arguments.seed).shuffle(all_mutants)
    chosen = all_mutants[: arguments.sample or len(all_mutants)]
    if arguments.only:
        chosen = [m for m in all_mutants if any(part in f"{m[0].module}:{m[0].name}" for part in arguments.only)]
    if arguments.rerun:
        earlier = json.loads(arguments.rerun.read_text(encoding="utf-8"))
        wanted = {(m["module"], Mutant(**m).name) for m in earlier if m["status"] == "survived"}
        chosen = [item for item in all_mutants if (item[0].module, item[0].name) in wanted]
    print(f"{len(all_mutants)} mutants in {len(modules)} modules; running {len(chosen)}", flush=True)

    _warm_up([*arguments.tests, *arguments.slow_tests])
    started = time.monotonic()
    deadline = started + arguments.budget_s
    with tempfile.TemporaryDirectory(prefix="gate-mutation-") as temporary:
        overlay = Path(temporary)
        shutil.copytree(REPO / "repro", overlay / "repro")
        if (REPO / "prompts").is_dir():  # tests that render a prompt read it beside the package
            (overlay / "prompts").symlink_to(REPO / "prompts")
        for module in modules:  # unparsed originals: the baseline must pass, or unparse changed something
            tree = ast.parse((REPO / module).read_text(encoding="utf-8"))
            (overlay / module).write_text(ast.unparse(tree), encoding="utf-8")
        select = None
        if arguments.no_coverage:
            quick_limit = _baseline(overlay, arguments.tests, "quick", arguments.timeout_s)
        else:
            began = time.monotonic()
            covered = coverage_map(overlay, arguments.tests, modules, 1800)
            seconds = time.monotonic() - began
            print(f"baseline quick under coverage: {'passed' if covered else 'FAILED'} in {seconds:.1f} s", flush=True)
            quick_limit = (arguments.timeout_s or max(30.0, 1.5 * seconds)) if covered else None
            if covered:
                cached = {m: _cached_functions(ast.parse((REPO / m).read_text(encoding="utf-8"))) for m in modules}
                select = lambda mutant: _selection(mutant, covered, cached[mutant.module])  # noqa: E731
        if quick_limit is None:
            print("the quick suite fails without a mutant: fix the tests first", flush=True)
            print((overlay / "child.log").read_text(encoding="utf-8", errors="replace")[-3000:], flush=True)
            return 2
        _run_phase(overlay, chosen, arguments.tests, "quick", quick_limit, deadline, select)
        left = [(m, t) for m, t in chosen if m.status == "survived" and not _equivalent(m)]
        if left and not arguments.slow_tests:  # a bare ``--slow-tests`` names no test: say so, not silently
            print(f"{len(left)} survivors; phase 2 skipped: --slow-tests was given no tests", flush=True)
        if left and arguments.slow_tests:
            print(f"{len(left)} survivors (not known equivalent) against the slow tests", flush=True)
            slow_limit = _baseline(overlay, arguments.slow_tests, "slow", arguments.timeout_s)
            if slow_limit is None:
                print("the slow suite fails without a mutant: phase 2 skipped", flush=True)
            else:
                _run_phase(overlay, left, arguments.slow_tests, "slow", slow_limit, deadline)
    ran = [m for m, _ in chosen if m.status != "pending"]
    _summarize(ran, arguments.out)
    print(f"wall time {time.monotonic() - started:.0f} s", flush=True)
    return 0


def _summarize(ran: list[Mutant], out: Path | None) -> None:
    print(f"{'module':32} {'ran':>4} {'killed':>6} {'(slow)':>6} {'equiv':>5} {'surv':>4} {'error':>5} {'killed%':>7}")
    for module in [*sorted({m.module for m in ran}), "all"]:
        mine = [m for m in ran if module in ("all", m.module)]
        killed = [m for m in mine if m.status in ("killed", "timeout")]
        slow = [m for m in killed if m.phase == "slow"]
        equivalent = [m for m in mine if m.status == "survived" and _equivalent(m)]
        errors = [m for m in mine if m.status == "error"]
        survived = len(mine) - len(killed) - len(equivalent) - len(errors)
        judged = len(killed) + survived
        rate = f"{len(killed) / judged:.1%}" if judged else "-"
        print(
            f"{module:32} {len(mine):4} {len(killed):6} {len(slow):6} {len(equivalent):5} {survived:4}"
            f" {len(errors):5} {rate:>7}"
        )
    for mutant in ran:
        if mutant.status in ("survived", "error"):
            why = _equivalent(mutant) if mutant.status == "survived" else None
            label = f"EQUIVALENT ({why})" if why else mutant.status.upper()
            print(f"  {label}: {mutant.module}:{mutant.line} {mutant.name}")
    if out:
        out.write_text(json.dumps([asdict(m) for m in ran], indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    raise SystemExit(main())
