"""What the generator cannot read from the sources it was given, stated once with its reason.

Two lists, merged into every generated table (and marked ``curated:`` there, so a reader of the
table sees which entries were read and which were stated):

- :data:`SUPPLEMENT`: command keywords of Lean core and Mathlib. In this repository's build
  environment neither source tree could be fetched whole (leanprover/lean4 and mathlib4 snapshots are
  over the size limit); a subset of their files was read one by one through a library index (other
  versions than v4.15.0, listed in the table's ``read_through_index``), so until the generator is run
  over ``repro lean setup``'s sources these stay: the gate's hand-written list
  (``repro/lean/tables.py``, ``COMMAND_KEYWORDS``), checked against leanprover/lean4
  ``src/Lean/Parser/Command.lean`` and Mathlib's ``Mathlib/Tactic/*.lean``. They are kept even where
  the files read do not show them (a keyword a newer version dropped is still a v4.15 command).
- :data:`EVALUATES_CODE`: syntax whose implementation runs code at elaboration time, each with the
  upstream file that shows it (issue 19, section 2, found them by enumerating the v4.15.0 sources).

:data:`NOT_EVALUATION` lists keywords the generator flags whose flagged code is not the prover's:
each is exempted by name with the reason, never by pattern.
"""

from __future__ import annotations

from dataclasses import dataclass

ALL_TOOLCHAINS = ("v4.9.0", "v4.15.0")


@dataclass(frozen=True)
class Curated:
    keyword: str
    category: str
    library: str
    reason: str = ""
    toolchains: tuple[str, ...] = ALL_TOOLCHAINS


_CORE_COMMANDS = (
    "theorem lemma def abbrev example instance axiom opaque structure class inductive coinductive mutual"
    " namespace section end open export variable universe set_option attribute macro macro_rules syntax"
    " elab elab_rules notation infix infixl infixr prefix postfix initialize builtin_initialize import"
    " deriving declare_syntax_cat local scoped private protected noncomputable partial unsafe nonrec"
    " simproc dsimproc simproc_decl dsimproc_decl builtin_simproc builtin_dsimproc builtin_simproc_decl"
    " builtin_dsimproc_decl unif_hint binder_predicate register_simp_attr register_option"
    " register_builtin_option register_label_attr declare_config_elab declare_simp_like_tactic seal unseal"
    " add_decl_doc run_cmd run_elab run_meta gen_injective_theorems init_quot include omit"
    " elab_stx_quot with_weak_namespace register_tactic_tag tactic_extension recommended_spelling"
    " register_error_explanation set_premise_selector grind_pattern termination_hint declare_uint_theorems"
    " declare_command_config_elab builtin_initialize"
)
_MATHLIB_COMMANDS = (
    "notation3 irreducible_def alias variables axioms universes proof_wanted library_note"
    " initialize_simps_projections suppress_compilation unsuppress_compilation assert_not_exists"
    " assert_not_imported extend_docs compile_inductive compile_def mk_iff_of_inductive_prop sudo whatsnew"
    " count_heartbeats count_heartbeats! lrat_proof open_locale register_hint attribute_instance"
    " assert_no_sorry deprecate deprecated_alias to_additive show_panel_widgets recall derive_handler"
    " add_aesop_rules declare_aesop_rule_sets erase_aesop_rules"
)

# Term elaborators glued to ``%`` (leanprover/lean4 ``src/Lean/Elab/BuiltinNotation.lean``,
# ``src/Init/Tactics.lean``): one token even without a following space.
_CORE_PERCENT_TERMS = "type_of% ensure_type_of% ensure_expected_type% decl_name% with_decl_name% no_implicit_lambda%"

# Found missing by the cross-check with ``../shared/data/lean-syntax`` (tests/test_syntax_tables.py),
# each confirmed in the upstream file the extraction names: core ``src/Init/Simproc.lean`` and
# ``src/Lean/Parser/Command.lean``; Mathlib ``Mathlib/Util/CompileInductive.lean``,
# ``Mathlib/Util/AssertExists.lean``, ``Mathlib/Util/WhatsNew.lean``-era utilities,
# ``Mathlib/Tactic/UnsetOption.lean``, ``Mathlib/Tactic/StopAtFirstError.lean``.
_FOUND_BY_CROSS_CHECK = (
    ("simproc_pattern%", "lean4"),
    ("builtin_simproc_pattern%", "lean4"),
    ("end_local_scope", "lean4"),
    ("compile_def%", "mathlib"),
    ("compile_inductive%", "mathlib"),
    ("assert_exists", "mathlib"),
    ("guard_min_heartbeats", "mathlib"),
    ("stop_at_first_error", "mathlib"),
    ("unset_option", "mathlib"),
)

SUPPLEMENT: list[Curated] = [
    *(Curated(word, "command", library) for word, library in _FOUND_BY_CROSS_CHECK),
    *(Curated(word, "term", "lean4") for word in _CORE_PERCENT_TERMS.split()),
    Curated("gen_injective_theorems%", "command", "lean4"),
    *(Curated(word, "command", "lean4") for word in sorted(set(_CORE_COMMANDS.split()))),
    *(Curated(word, "command", "mathlib") for word in sorted(set(_MATHLIB_COMMANDS.split()))),
]

EVALUATES_CODE: list[Curated] = [
    Curated("run_cmd", "command", "lean4", "Lean/Elab/BuiltinEvalCommand.lean: runs CommandElabM code"),
    Curated("run_elab", "command", "lean4", "Lean/Elab/BuiltinEvalCommand.lean: runs TermElabM code"),
    Curated("run_meta", "command", "lean4", "Lean/Elab/BuiltinEvalCommand.lean: runs MetaM code"),
    Curated("run_tac", "tactic", "lean4", "Lean/Elab/Tactic/BuiltinTactic.lean: evaluates a TacticM term"),
    Curated("by_elab", "term", "lean4", "Lean/Elab/BuiltinNotation.lean: evaluates a TermElabM term"),
    Curated("initialize", "command", "lean4", "Lean/Parser/Command.lean: IO run when the module is imported"),
    Curated("builtin_initialize", "command", "lean4", "Lean/Parser/Command.lean: IO at initialization"),
    Curated("elab", "command", "lean4", "Lean/Parser/Syntax.lean: declares an elaborator (compiled code)"),
    Curated("elab_rules", "command", "lean4", "Lean/Parser/Syntax.lean: declares an elaborator"),
    Curated("macro", "command", "lean4", "Lean/Parser/Syntax.lean: declares a macro (compiled code)"),
    Curated("macro_rules", "command", "lean4", "Lean/Parser/Syntax.lean: declares a macro"),
    Curated("simproc", "command", "lean4", "Init/Simproc.lean: registers a compiled simplification procedure"),
    Curated("dsimproc", "command", "lean4", "Init/Simproc.lean: registers a compiled simproc"),
    Curated("simproc_decl", "command", "lean4", "Init/Simproc.lean: declares a compiled simproc"),
    Curated("dsimproc_decl", "command", "lean4", "Init/Simproc.lean: declares a compiled simproc"),
    Curated("simproc_pattern%", "term", "lean4", "Init/Simproc.lean: registers a simproc's discrimination key"),
    Curated("builtin_simproc", "command", "lean4", "Init/Simproc.lean: registers a compiled simproc"),
    Curated("builtin_dsimproc", "command", "lean4", "Init/Simproc.lean: registers a compiled simproc"),
    Curated("builtin_simproc_decl", "command", "lean4", "Init/Simproc.lean: declares a compiled simproc"),
    Curated("builtin_dsimproc_decl", "command", "lean4", "Init/Simproc.lean: declares a compiled simproc"),
    Curated("trace", "tactic", "mathlib", "Mathlib/Tactic/Trace.lean: evalExpr of a String term"),
    Curated("declare_config_elab", "command", "lean4", "Lean/Elab/Tactic/Config.lean: evalExpr of a config"),
    Curated("bv_decide", "tactic", "lean4", "Std/Tactic/BVDecide/Syntax.lean: ofReduceBool and a SAT process"),
    Curated("bv_check", "tactic", "lean4", "Std/Tactic/BVDecide/Syntax.lean: ofReduceBool, reads a file"),
    Curated("eval%", "term", "mathlib", "Mathlib/Tactic/Eval.lean: evaluates a term in the interpreter"),
    Curated("run_conv", "conv", "mathlib", "Mathlib/Tactic/Conv.lean: run_tac for conv blocks"),
    Curated("lrat_proof", "command", "mathlib", "Mathlib/Tactic/Sat/FromLRAT.lean: evalTerm of a String"),
    Curated("from_lrat", "term", "mathlib", "Mathlib/Tactic/Sat/FromLRAT.lean: evalTerm of a String"),
    Curated("polyrith", "tactic", "mathlib", "Mathlib/Tactic/Polyrith.lean: starts python3, calls a web service"),
    Curated("success_if_fail_with_msg", "tactic", "mathlib", "Mathlib/Tactic/SuccessIfFailWithMsg.lean: evalTerm"),
    Curated("compile_inductive", "command", "mathlib", "Mathlib/Util/CompileInductive.lean: compiles code"),
    Curated("compile_def", "command", "mathlib", "Mathlib/Util/CompileInductive.lean: compiles code"),
    Curated("count_heartbeats", "command", "mathlib", "Mathlib/Util/CountHeartbeats.lean: reruns a command"),
    Curated("count_heartbeats!", "command", "mathlib", "Mathlib/Util/CountHeartbeats.lean: reruns a command"),
    Curated("slim_check", "tactic", "mathlib", "Mathlib/Testing/SlimCheck (v4.9): evalExpr", ("v4.9.0",)),
    Curated("unsafe", "term", "lean4", "Lean/Parser/Term.lean: an unsafe auxiliary definition, implemented_by"),
    # red team round 5 (R5-01): ``with_panel_widgets [W with e]`` builds the widget instance with
    # ``Widget.evalWidgetInstance`` (``evalExpr'``: the prover's term runs in the interpreter, outside
    # heartbeats); ProofWidgets is a Mathlib dependency the generator did not read
    Curated(
        "with_panel_widgets",
        "tactic",
        "proofwidgets",
        "ProofWidgets/Component/Panel/Basic.lean: evalWidgetInstance (Lean/Widget/UserWidget.lean, evalExpr')",
    ),
    Curated(
        "show_panel_widgets",
        "command",
        "proofwidgets",
        "ProofWidgets/Component/Panel/Basic.lean: evalWidgetInstance of each listed widget",
    ),
    Curated("#widget", "command", "lean4", "Lean/Widget/UserWidget.lean: evalWidgetInstance (evalExpr')"),
    # R5-03: no prover code, but ``IO.sleep`` holds a REPL worker with no heartbeat check until the pool's
    # wall-clock limit kills it (Lean/Elab/Tactic/BuiltinTactic.lean, ``evalSleep``)
    Curated("sleep", "tactic", "lean4", "Lean/Elab/Tactic/BuiltinTactic.lean: IO.sleep, outside heartbeats"),
    # red team round 7 (R7-01): ``include_str e`` runs the prover's term ``e`` in the interpreter
    # (``evalFilePath``, an ``evalTerm``) before it reads the file; under ``try`` the read's error is
    # discarded and the proof goes on. Core's builtin term elaborators (Lean/Elab/BuiltinTerm.lean) were
    # not read by the generator; at v4.9.0 the keyword takes a string and reads that file (IO at elaboration)
    Curated(
        "include_str",
        "term",
        "lean4",
        "Lean/Elab/BuiltinTerm.lean: elabIncludeStr (evalFilePath: evalTerm), then IO.FS.readFile",
    ),
]

# Flagged by the generator's marker search, but what the flagged code evaluates is a configuration
# structure, an option or the library's own data, never a definition the prover wrote under a keyword.
# (``(config := ...)`` terms evaluated by these tactics are a channel of their own, noted in issue 19.)
NOT_EVALUATION: dict[str, str] = {
    "lemma": (
        "Batteries/Tactic/Lemma.lean rewrites it to `theorem` and elaborates that (elabCommand): no code of the"
        " prover's runs"
    ),
    "apply": (
        "Mathlib/Tactic/ApplyWith.lean evaluates an `apply (config := ...)` structure; every honest proof uses"
        " `apply`, and the configuration channel is not a keyword (noted for issue 19)"
    ),
    "native_decide": "governed by the gate's native_decide policy (allow_native_decide), not a keyword refusal",
}
