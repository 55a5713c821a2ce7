"""The generated keyword tables (issue 19, section 2) and the gate rules that read them.

Every command keyword and every code-evaluating keyword of the committed tables gets a minimal case
that the gate refuses *because of that entry*: the same case passes once the one entry is removed
from the tables, so deleting any entry (at the next regeneration, or by mistake) fails a test.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from repro.judge import policy
from repro.lean.syntax import (
    SyntaxTables,
    UnknownToolchainError,
    available_toolchains,
    gate_tables,
    keyword_key,
    load_tables,
    raw_table,
)
from repro.lean.syntax.curated import NOT_EVALUATION
from repro.lean.syntax.generate import generate
from repro.lean.text import StatementError, read_statement
from tests._gate_helpers import refusals as _refusals
from tests.conftest import shared_file

PREFIX = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num "
TABLES = gate_tables()
# Keywords with a rule of their own before the command table is consulted (allowed or judged apart)
OWN_RULES = frozenset(
    {"theorem", "lemma", "def", "abbrev", "example", "open", "set_option", "private", "noncomputable", "universe"}
    | {"universes", "import"}
    | {"instance"}  # issue 19 §3: its own rule (Prop-valued classes only), pinned in test_gate_rules
)


def _without(tables: SyntaxTables, key: str) -> SyntaxTables:
    return replace(
        tables,
        keywords={category: words - {key} for category, words in tables.keywords.items()},
        evaluates_code=tables.evaluates_code - {key},
    )


def _mid_line(keyword: str) -> str:
    """The keyword inside a tactic line, where only the tables can flag it (no column-0 rule)."""
    if keyword.endswith("%"):
        return PREFIX + f"[{keyword[:-1]}%(x)]\n"
    return PREFIX + f"[{keyword}]\n"


def test_honest_proof_passes() -> None:
    assert _refusals(PREFIX + "\n") == []


def test_tables_exist_per_toolchain_and_record_what_they_read() -> None:
    assert {"v4.15.0", "v4.9.0"} <= set(available_toolchains())
    for toolchain in ("v4.15.0", "v4.9.0"):
        table = raw_table(toolchain)
        libraries = {source["library"] for source in table["sources"]}  # type: ignore[index, union-attr]
        assert {"batteries", "aesop"} <= libraries
        for source in table["sources"]:  # type: ignore[union-attr]
            assert isinstance(source, dict)
            if "read_through_index" in source:
                # read file by file: every file names the stored version read and how much of it
                files = source["read_through_index"]["files"]
                assert files and all(entry["stored_version"] and entry["characters_read"] for entry in files.values())
                assert "not" in source["revision"]  # says it is not a release tag
            else:
                assert len(source["revision"]) == 40
    assert "plausible" in load_tables("v4.15.0").keywords["tactic"]


# Tactics real prover outputs write at column 0 (issue 19 section 3), read from Lean core and Mathlib
PROVER_TACTICS = [
    "have",
    "rw",
    "nlinarith",
    "norm_num",
    "linarith",
    "positivity",
    "field_simp",
    "omega",
    "all_goals",
    "rcases",
    "obtain",
    "intro",
    "simp",
    "exact",
    "apply",
    "refine",
    "constructor",
    "nlinarith!",
    "ring",
    "ring_nf",
    "rintro",
    "cases",
    "induction",
    "simpa",
    "any_goals",
]


@pytest.mark.parametrize("word", PROVER_TACTICS)
def test_core_and_mathlib_tactics_are_known_tactic_keywords(word: str) -> None:
    assert TABLES.is_tactic(word), word
    assert TABLES.category(word) == "tactic"
    assert word in TABLES.tactics or keyword_key(word) in TABLES.tactics


def test_a_word_that_is_both_command_and_tactic_is_a_command() -> None:
    both = replace(
        TABLES,
        keywords={**TABLES.keywords, "tactic": TABLES.keywords["tactic"] | {"open", "frobnicate"}}
        | {"command": TABLES.commands | {"frobnicate"}},
    )
    for word in ("open", "frobnicate", "frobnicate!"):
        assert both.category(word) == "command"
        assert not both.is_tactic(word)
        assert keyword_key(word) not in both.tactics
    assert both.tactics.isdisjoint(both.commands)
    for category in ("tactic", "conv", "term"):
        assert both.keywords_of(category).isdisjoint(both.commands)


def test_the_committed_tactic_table_holds_no_command() -> None:
    assert TABLES.tactics and TABLES.tactics.isdisjoint(TABLES.commands)
    overlap = TABLES.keywords["tactic"] & TABLES.commands
    assert all(TABLES.category(word) == "command" and not TABLES.is_tactic(word) for word in overlap)


def test_an_unknown_word_has_no_category() -> None:
    assert TABLES.category("frobnicate_xyz") is None
    assert not TABLES.is_tactic("frobnicate_xyz")


def test_unknown_toolchain_fails_closed() -> None:
    with pytest.raises(UnknownToolchainError, match="v3.0.0"):
        load_tables("v3.0.0")


def test_no_tables_refuses_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> SyntaxTables:
        raise UnknownToolchainError("none installed")

    monkeypatch.setattr(policy, "gate_tables", missing)
    assert any("no syntax tables" in label for label in _refusals(PREFIX + "\n"))


@pytest.mark.parametrize(("written", "table"), [("count_heartbeats!", "count_heartbeats"), ("aesop", "aesop?")])
def test_keywords_compare_without_trailing_bang_or_question_both_ways(written: str, table: str) -> None:
    assert keyword_key(written) == keyword_key(table)


def test_count_heartbeats_bang_is_refused_as_the_command() -> None:
    assert any(label.startswith("count_heartbeats!") for label in _refusals(_mid_line("count_heartbeats!")))


COMMANDS = sorted(k for k in TABLES.commands if k not in OWN_RULES and not k.startswith("#") and "%" not in k)


@pytest.mark.parametrize("keyword", COMMANDS)
def test_every_command_keyword_is_refused_by_its_entry(keyword: str, monkeypatch: pytest.MonkeyPatch) -> None:
    code = _mid_line(keyword)
    label = f"{keyword} (line 3"
    assert any(r.startswith(label) for r in _refusals(code))
    monkeypatch.setattr(policy, "gate_tables", lambda: _without(TABLES, keyword_key(keyword)))
    if keyword.startswith(policy.COMMAND_PREFIXES):
        return  # the name-shape rule refuses these too (defence in depth; listed in the mutation report)
    assert not any(r.startswith(label) for r in _refusals(code))


EVALUATORS = sorted(k for k in TABLES.evaluates_code if not k.startswith("#"))  # # commands: refused as such


@pytest.mark.parametrize("keyword", EVALUATORS)
def test_every_code_evaluating_keyword_is_refused_by_its_entry(keyword: str, monkeypatch: pytest.MonkeyPatch) -> None:
    code = _mid_line(keyword)
    assert any("evaluates code" in r for r in _refusals(code)), _refusals(code)
    monkeypatch.setattr(policy, "gate_tables", lambda: _without(TABLES, keyword))
    assert not any("evaluates code" in r for r in _refusals(code))


@pytest.mark.parametrize("written", ["eval%(slow 10)", "eval% (slow 10)", "eval%slow", "simproc_pattern%(x)"])
def test_a_name_glued_to_percent_is_a_keyword_whatever_follows(written: str) -> None:
    assert any("%" in label for label in _refusals(PREFIX + f"[{written}]\n"))


def test_a_table_percent_keyword_is_refused_even_without_a_space(monkeypatch: pytest.MonkeyPatch) -> None:
    code = PREFIX + "[type_of%2]\n"  # a digit after an unknown name glued to % is modulo: only the table decides
    assert any(label.startswith("type_of%") for label in _refusals(code))
    monkeypatch.setattr(policy, "gate_tables", lambda: _without(TABLES, "type_of%"))
    assert not any(label.startswith("type_of%") for label in _refusals(code))


@pytest.mark.parametrize(
    "honest",
    ["(x%4)", "x%2", "x % 2", "(x %4)", "x %y", "x % (y + 1)", "(x)%(y)", "2%x", *(f"x%{d}" for d in "0123456789")],
)
def test_modulo_glued_to_a_variable_is_not_a_keyword(honest: str) -> None:
    assert _refusals(PREFIX + f"[show {honest} = {honest} from rfl]\n") == []


@pytest.mark.parametrize(
    "written", ["mk_rpc_widget%(f 1)", "mk_rpc_widget%f", "x%y", "x%(y + 1)", "reassoc_of%h", "x%"]
)
def test_a_name_glued_to_percent_that_the_tables_do_not_know_is_refused_unless_a_digit_follows(written: str) -> None:
    """Red team round 7: a ``%`` keyword of a library the generator did not read (ProofWidgets'
    ``mk_rpc_widget%``) is one token to Lean whatever follows it; only a numeral after it carries no code."""
    assert any("no elaborator keywords" in label for label in _refusals(PREFIX + f"[{written}]\n"))


def test_generator_reads_syntax_elab_macro_and_leading_parser_forms(tmp_path: Path) -> None:
    """A miniature library: every declaration form the generator claims to read, and the evaluator test."""
    root = tmp_path / "Batteries"
    root.mkdir()
    (root / "Demo.lean").write_text(
        "/-- doc -/\n"
        'syntax (name := fooTac) "foo_tac" term : tactic\n'
        '@[inherit_doc] scoped elab tk:"bar_cmd " t:term : command => do\n'
        "  let v ← unsafe evalExpr Nat (mkConst ``Nat) t\n"
        '  logInfo "x"\n'
        'macro "baz" : conv => `(conv| skip)\n'
        "@[tactic fooTac] def evalFoo : Tactic := fun stx => do\n"
        "  helper stx\n"
        "def helper (s : Syntax) : TacticM Unit := do\n"
        '  let _ ← IO.Process.output { cmd := "python3" }\n'
        '-- syntax "in_comment" : tactic\n'
        'syntax "∑ " term : term\n'
        'elab mods:declModifiers "my_lemma " x:ident : command => pure ()\n'
        'syntax (docComment)? attrKind "my_hint" (ppSpace ident)? : command\n'
        'syntax "aux_tac₂" : tactic\n',
        encoding="utf-8",
    )
    table = generate("vtest", {"batteries": tmp_path}, {"batteries": "0" * 40})
    keywords = table["keywords"]
    assert isinstance(keywords, dict)
    assert "foo_tac" in keywords["tactic"] and "bar_cmd" in keywords["command"] and "baz" in keywords["conv"]
    assert "my_lemma" in keywords["command"] and "my_hint" in keywords["command"]
    assert "aux_tac₂" in keywords["tactic"]  # a Lean identifier may hold Unicode letters and subscripts
    assert "in_comment" not in keywords["tactic"] and "∑" not in keywords["term"]
    evaluates = table["evaluates_code"]
    assert isinstance(evaluates, dict)
    assert "evalExpr" in evaluates["bar_cmd"]["evidence"]
    assert "IO.Process" in evaluates["foo_tac"]["evidence"]  # through the attribute, then the helper it calls
    assert "baz" not in evaluates and "my_lemma" not in evaluates


def test_generator_command_line_writes_the_table(tmp_path: Path) -> None:
    (tmp_path / "Aesop").mkdir()
    (tmp_path / "Aesop" / "A.lean").write_text('syntax "only_here" : tactic\n', encoding="utf-8")
    out = tmp_path / "t.json"
    completed = subprocess.run(
        [sys.executable, "-m", "repro.lean.syntax.generate", "--toolchain", "vx", "--library", f"aesop={tmp_path}"]
        + ["--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert "only_here" in json.loads(out.read_text(encoding="utf-8"))["keywords"]["tactic"]


# Every difference with the independent extraction, explained. Keys: (keyword, category, library).
READ_LIBRARIES = ("batteries", "aesop", "qq", "plausible")
EXPLAINED_ONLY_THEIRS = {
    # symbols: not words, so they can name no command or tactic (notation, not keywords the gate reads)
    **{(k, c, "batteries"): "symbol" for k, c in [("(", "term"), (":", "tactic"), (":", "term"), (":=", "tactic")]},
    **{(k, c, "batteries"): "symbol" for k, c in [("<;>", "tactic"), ("=>", "tactic"), ("∀ᵉ", "term"), ("∃ᵉ", "term")]},
    **{(k, "term", "qq"): "symbol-led" for k in ("=QL", "Q(", "q(", "ql(", "~q(")},
}
EXPLAINED_ONLY_OURS = {
    ("proof_wanted", "command", "batteries"): "Batteries/Util/ProofWanted.lean declares it; they file it under Mathlib",
}
# Rows of theirs (any library) our command table lacks, with why that is right:
EXPLAINED_COMMANDS_NOT_IN_TABLE = {
    # (docs_to_verso, newer than v4.15, is in the table since the newer Command.lean was read)
    "meta": "module-system modifier, newer than v4.15",
    "public": "module-system modifier, newer than v4.15",
}
# Rows they class as running code that our evaluates-code set lacks, with the rule that refuses them
EXPLAINED_EVALUATORS = {
    "#eval": "a # command: every one is refused",
    "#eval!": "a # command: every one is refused",
    "#guard": "a # command: every one is refused",
    "register_builtin_option": "a command keyword: refused as a command (it declares an option, runs no code)",
    "decide": "kernel reduction; its native variant is the native_decide policy",
    "native_decide": NOT_EVALUATION["native_decide"],
    "Lean.ofReduceBool": "a forbidden name (per component) and a non-standard axiom",
    "apply": NOT_EVALUATION["apply"],
}


@pytest.mark.shared_data
def test_cross_check_with_the_independent_extraction() -> None:
    path = shared_file("lean-syntax/keywords-v4.15.tsv")
    with path.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    assert len(rows) == 626
    table = raw_table("v4.15.0")["keywords"]
    assert isinstance(table, dict)
    ours = {
        (keyword, category, where.split(":")[0])
        for category, entries in table.items()
        for keyword, places in entries.items()
        for where in places
        if not where.startswith("curated")
    }
    theirs_read = {(r["keyword"], r["category"], r["library"]) for r in rows if r["library"] in READ_LIBRARIES}
    ours_read = {item for item in ours if item[2] in READ_LIBRARIES}
    assert theirs_read - ours_read == set(EXPLAINED_ONLY_THEIRS)
    assert ours_read - theirs_read == set(EXPLAINED_ONLY_OURS)
    tables = load_tables("v4.15.0")
    missing_commands = {
        r["keyword"]
        for r in rows
        if r["category"] == "command" and not r["keyword"].startswith("#") and not tables.is_command(r["keyword"])
    }
    assert missing_commands == set(EXPLAINED_COMMANDS_NOT_IN_TABLE)
    running = [r for r in rows if any(w in r["danger_class"] for w in ("run-code", "native", "external"))]
    missing_evaluators = {r["keyword"] for r in running if not tables.evaluates(r["keyword"])}
    assert missing_evaluators == set(EXPLAINED_EVALUATORS)


# Lean core and Mathlib were read file by file (a subset of their files, other versions than v4.15:
# the table's ``read_through_index``). Within the files both sides read, every difference is explained.
CORE_ONLY_THEIRS = {
    "#check_simp": "not in the version of Init/Tactics.lean read; a # command, refused by the hash rule",
    "#check_tactic": "not in the version of Init/Tactics.lean read; a # command, refused by the hash rule",
    "simp_arith": "not in the version of Init/Tactics.lean read (it became `simp +arith`); a tactic, so only "
    "a column-0 `simp_arith` stays unknown (refused: fail closed)",
    "structure": "«structure» leads with the helpers structureTk/classTk, no string: curated",
    "seal": "not in the (newer) Command.lean read; curated",
    "unseal": "not in the (newer) Command.lean read; curated",
    **{
        modifier: "a modifier parser reached only through declModifiers, never a command of its own; curated"
        for modifier in ("noncomputable", "nonrec", "partial", "private", "protected", "unsafe")
    },
    "meta": "module-system modifier (newer than v4.15), reached only through declModifiers",
    "public": "module-system modifier (newer than v4.15), reached only through declModifiers",
}
CORE_ONLY_OURS_COMMANDS = {
    "#dump_async_env_state": "newer than v4.15 (Command.lean read is the module-system version)",
    "#import_path": "newer than v4.15",
    "#with_exporting": "newer than v4.15",
    "norm_cast_add_elim": "declared in Init/Tactics.lean; their core rows are not exhaustive (their README)",
}
MATHLIB_ONLY_THEIRS = {
    "#push_neg": "in the part of PushNeg.lean not read (characters 0-9000)",
    "push_neg": "the conv form, in the part of PushNeg.lean not read",
    "gcongr_discharger": "in the part of GCongr/Core.lean not read (characters 16000-30000)",
    "#whnfR": "not in the (older, Std-era) version of Mathlib/Tactic/Conv.lean read",
    "conv": "the conv-in-conv form, not in the older Conv.lean read (core's Init/Conv.lean has it)",
    "discharge": "not in the older Conv.lean read",
    "refine": "the conv form, not in the older Conv.lean read",
    "with_reducible": "the conv form, not in the older Conv.lean read",
    "register_hint": "in the part of Hint.lean not read (characters 0-2000); a curated command",
    "whnf": "in the part of DefEqTransformations.lean not read (characters 0-4000)",
    "aux_group₁": "in the part of Group.lean not read (characters 0-2000)",
    **{
        word: "in the part of CasesM.lean not read (characters 0-4500)"
        for word in ("casesm", "cases_type", "cases_type!")
    },
    "count_heartbeats": "renamed `#count_heartbeats` in the newer CountHeartbeats.lean read; curated",
    "count_heartbeats!": "renamed `#count_heartbeats!` in the newer CountHeartbeats.lean read; curated",
    "unfold_let": "not in the part of DefEqTransformations.lean read (characters 4000-13566)",
    "clear_value": "no longer in the (newer) Mathlib/Tactic/Basic.lean read",
    "field_simp_discharge": "no longer in the (newer, 2025 rewrite) FieldSimp.lean read",
    "only": 'not a leading keyword: their row is the `&" only"` inside `syntax linarithArgsRest := ...`',
}
MATHLIB_ONLY_OURS = {
    "ac_change!": "newer Convert.lean declares the ! variants as syntax of their own",
    "convert!": "newer Convert.lean",
    "convert_to!": "newer Convert.lean",
    "field_simp": "the conv form, added by the newer FieldSimp.lean",
    "field_simp!": "newer FieldSimp.lean",
    "library_note2": "newer Mathlib/Tactic/Basic.lean (a command: refused)",
    "#count_heartbeats": "newer CountHeartbeats.lean (renamed from count_heartbeats); a # command: refused",
    "#count_heartbeats!": "newer CountHeartbeats.lean; a # command: refused",
}


def _index_read(library: str) -> set[str]:
    sources = raw_table("v4.15.0")["sources"]
    assert isinstance(sources, list)
    source = next(s for s in sources if s["library"] == library)
    return set(source["read_through_index"]["files"])


def _ours(library: str) -> set[tuple[str, str]]:
    table = raw_table("v4.15.0")["keywords"]
    assert isinstance(table, dict)
    return {
        (keyword, category)
        for category, entries in table.items()
        for keyword, places in entries.items()
        if any(place.startswith(f"{library}:") for place in places)
    }


@pytest.mark.shared_data
@pytest.mark.parametrize(
    ("ours_name", "their_name", "only_theirs", "only_ours"),
    [
        ("lean4", "lean4-core", CORE_ONLY_THEIRS, CORE_ONLY_OURS_COMMANDS),
        ("mathlib", "mathlib", MATHLIB_ONLY_THEIRS, MATHLIB_ONLY_OURS),
    ],
)
def test_cross_check_core_and_mathlib_within_the_files_read(
    ours_name: str, their_name: str, only_theirs: dict[str, str], only_ours: dict[str, str]
) -> None:
    path = shared_file("lean-syntax/keywords-v4.15.tsv")
    with path.open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    files = _index_read(ours_name)
    theirs = {
        (r["keyword"], r["category"])
        for r in rows
        if r["library"] == their_name and r["source_path"].split(" ")[0] in files
    }
    anywhere = {(r["keyword"], r["category"]) for r in rows}
    ours = _ours(ours_name)
    assert theirs, "no row of theirs comes from a file we read"
    assert {keyword for keyword, _ in theirs - ours} == set(only_theirs)
    extra = ours - theirs - anywhere  # rows they file under another library or file are not differences
    if ours_name == "lean4":
        # their core tactic/conv/term rows are curated, not exhaustive (their README); commands are listed
        assert {keyword for keyword, category in extra if category == "command"} == set(only_ours)
    else:
        assert {keyword for keyword, _ in extra} == set(only_ours)
    # a row only they have is never a command our table lacks (that would be a keyword we let through)
    for keyword, category in theirs - ours:
        if category == "command" and not keyword.startswith("#"):
            assert TABLES.is_command(keyword) or keyword in EXPLAINED_COMMANDS_NOT_IN_TABLE, keyword


HONEST_WORDS = [
    "with",
    "where",
    "extends",
    "at",
    "using",
    "only",
    "from",
    "in",
    "then",
    "else",
    "do",
    "fun",
    "by",
    "generalizing",
    "to",
]


@pytest.mark.parametrize("word", HONEST_WORDS)
def test_words_inside_honest_proofs_are_never_commands(word: str) -> None:
    """Parser helpers (``computedFields := leading_parser "with" ...``) must not turn these into commands."""
    assert not TABLES.is_command(word)


def test_generator_reads_only_the_parsers_a_command_parser_names(tmp_path: Path) -> None:
    parser = tmp_path / "src" / "Lean" / "Parser"
    parser.mkdir(parents=True)
    (parser / "Command.lean").write_text(
        "def computedFields := leading_parser\n"
        '  "with" >> many ident\n'
        "def «theorem» := leading_parser\n"
        '  "theorem " >> declId\n'
        "def «structure» := leading_parser\n"
        '  structureTk >> optional ((symbol " := " <|> " where ") >> structFields)\n'
        "def initializeKeyword := leading_parser\n"
        '  "initialize " <|> "builtin_initialize "\n'
        "@[builtin_command_parser] def declaration := leading_parser\n"
        "  declModifiers false >> («theorem» <|> «structure»)\n"
        "@[builtin_command_parser] def «initialize» := leading_parser\n"
        "  declModifiers false >> initializeKeyword >> Term.doSeq\n"
        "@[builtin_tactic_parser] def «open» := leading_parser:leadPrec\n"
        '  "open " >> Command.openDecl\n',
        encoding="utf-8",
    )
    table = generate("vtest", {"lean4": tmp_path}, {"lean4": "1" * 40})
    keywords = table["keywords"]
    assert isinstance(keywords, dict)
    generated = {k for k, places in keywords["command"].items() if any(p.startswith("lean4:") for p in places)}
    assert generated == {"theorem", "initialize", "builtin_initialize"}
    assert "open" in keywords["tactic"]


# (keywords glued to ``%`` are two tokens to the reader; the policy's glued-% rule refuses them)
@pytest.mark.parametrize(
    "keyword", sorted(k for k in TABLES.commands if k not in ("theorem", "lemma") and "%" not in k)
)
def test_a_statement_holding_any_command_keyword_is_not_one_theorem(keyword: str) -> None:
    """The statement reader's own keyword list must hold every command of the generated tables."""
    with pytest.raises(StatementError):
        read_statement(f"theorem t (x : ℕ) : x = x ∧ {keyword} := by sorry")


def test_a_name_glued_to_percent_at_the_very_end_of_the_code_is_refused() -> None:
    assert any("no elaborator keywords" in label for label in _refusals(PREFIX + "[x]\n#check mk_rpc_widget%"))
