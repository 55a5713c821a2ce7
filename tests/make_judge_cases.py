"""Writes ``tests/judge_cases/<case>/{Challenge.lean, Solution.lean, expect.json}``: the kernel judge's cases
in leanprover/comparator's shape (its ``tests/projects/<case>/`` hold ``Challenge.lean``, ``Solution.lean``,
``config.json`` and ``test.json``; here ``expect.json`` says what our judge must answer).

Two sources:

- every case of ``tests/fixtures/gate_corpus.yaml`` (``corpus_<name>``) but the ones about a bad *statement*
  (class 6: the challenge itself is not one theorem, so there is nothing to judge): the cheats the screen
  refuses and the honest proofs it passes. ``Solution.lean`` is the trusted header, then the text the screen
  hands on (its ``checked_code``: prover imports and ``#`` commands blanked), as the judge compiles it;
- the red-team classes of issue 27 and honest cases, written here (``red_<name>``, ``honest_<name>``).

What the judge must answer (``expect``): ``passed``, ``rejected`` (optionally with the
:class:`~repro.judge.verdict.JudgeRefusal` kinds that count), or ``either``. A corpus cheat is expected
``rejected`` only where the code cannot be a proof of our statement with the standard axioms whatever Lean
makes of the rest (it uses ``sorry``, a used axiom of its own, ``native_decide``, special tokens, a cut-off
block, another statement under our name, no theorem of our name, or our name twice). Every other cheat
attacks the screen or the REPL check, not the kernel: its proof may be complete, so ``either`` (a verdict,
never ``unavailable``) is all that is claimed, and any pass is the kernel's own guarantee. Nothing here was
run on Lean: the ``lean``-marked test (``tests/test_judge_cases.py``) runs them where Lean is.

Run ``python -m tests.make_judge_cases`` from the repository root after changing the corpus or this file;
``tests/test_judge_cases.py`` fails while the committed files are out of step.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from repro.judge.kernel import submission_source, target_source
from repro.judge.screen import verify_proof
from repro.lean.text import lex, read_statement, significant
from repro.lean.toolchains import STANDARD_HEADER
from tests.doubles.fake_safe_verify import _declarations

ROOT = Path(__file__).resolve().parent
CASES_DIR = ROOT / "judge_cases"
CORPUS = ROOT / "fixtures" / "gate_corpus.yaml"
DEFAULT_STATEMENT = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry"
HEADER = STANDARD_HEADER
TOOLCHAINS = ["v4.9.0", "v4.15.0"]


class Expectation(BaseModel):
    """``expect.json``: what the kernel judge must answer for one case."""

    model_config = ConfigDict(extra="forbid")

    theorem: str
    expect: str = Field(pattern="^(passed|rejected|either)$")
    refusals: list[str] = Field(default_factory=list)  # for rejected: the refusal kinds that count (empty: any)
    toolchains: list[str] = Field(default_factory=lambda: list(TOOLCHAINS))
    source: str
    group: str  # the corpus class, or the red-team class
    screen: str = Field(pattern="^(refused|passed)$")  # what the screen says about it
    why: str
    # paths (``~`` expanded) the submission tries to create outside its sandbox: none may exist after judging
    must_not_exist: list[str] = Field(default_factory=list)


class Case(BaseModel):
    name: str
    statement: str
    solution: str  # the text after the header (what the judge compiles after it)
    expectation: Expectation


# -- the red-team classes and honest cases (issue 27), written for both pinned toolchains ----------------------
STATEMENT = DEFAULT_STATEMENT
HONEST = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num"


def _codes(text: str) -> str:
    """``text`` as Lean code that builds it at run time from character codes (no literal for a screen to see)."""
    return "String.mk ([" + ", ".join(str(ord(c)) for c in text) + "].map Char.ofNat)"


def _aesop(tactic: str) -> str:
    return (
        "def reproGen : Aesop.TacGen := fun _ => pure #[(" + _codes(tactic) + ", 1.0)]\n\n"
        "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n"
        "  subst h₀\n"
        "  aesop (add safe tactic reproGen)\n"
    )


# Prover code run while the submission is elaborated forges a `Nat` literal with `unsafeCast` (a negative big
# number: the kernel compares and tests it with GMP as it is) and adds, through the kernel, a theorem of
# `False` that the kernel accepts; `#eval`'s own declaration is discarded, so the module keeps no unsafe
# constant. SafeVerify's March 2026 fixes answer this (73196d3: "unsafeCast/run_elab corruption patterns");
# the pinned commits replay the forged literal as read from the file. Written from the sources, never run.
FORGED_NAT = (
    "open Lean Elab Command in\n"
    "#eval show CommandElabM Unit from do\n"
    "  let forged : Nat := unsafeCast (Int.neg ((2 : Int) ^ 100))\n"
    "  let bad := mkRawNatLit forged\n"
    "  let zero := mkRawNatLit 0\n"
    "  let refl (b : Name) := mkApp2 (mkConst ``Eq.refl [levelOne]) (mkConst ``Bool) (mkConst b)\n"
    "  let le := mkApp3 (mkConst ``Nat.le_of_ble_eq_true) bad zero (refl ``Bool.true)\n"
    "  let ne := mkApp3 (mkConst ``Nat.ne_of_beq_eq_false) bad zero (refl ``Bool.false)\n"
    "  let proof := mkApp ne (mkApp2 (mkConst ``Nat.eq_zero_of_le_zero) bad le)\n"
    "  liftCoreM <| addDecl <| .thmDecl\n"
    "    { name := `reproForged, levelParams := [], type := mkConst ``False, value := proof }\n\n"
    "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 :=\n"
    "  reproForged.elim\n"
)

ESCAPE = "~/repro_judge_case_escape"
HAND_WRITTEN: list[dict[str, Any]] = [
    {
        "name": "honest_plain",
        "solution": HONEST,
        "expect": "passed",
        "group": "honest",
        "screen": "passed",
        "why": "an honest proof of our statement",
    },
    {
        "name": "honest_helper_lemma",
        "solution": "lemma div_helper : (3600 : ℕ) / 12 = 300 := by norm_num\n\n"
        "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  exact div_helper",
        "expect": "passed",
        "group": "honest",
        "screen": "passed",
        "why": "a helper lemma before our theorem: the judge compares only our theorem",
    },
    {
        "name": "honest_renamed_binders",
        "solution": "theorem robe_total (y : ℕ) (hy : y = 3600) : y / 12 = 300 := by\n  subst hy\n  norm_num",
        "expect": "passed",
        "group": "honest",
        "screen": "passed",
        "why": "binder names are not part of the type the kernel compares (Expr equality is up to binder names)",
    },
    {
        "name": "honest_imports_blanked",
        "solution": " " * len("import Mathlib") + "\n" + " " * len("import Aesop") + "\n\n" + HONEST,
        "expect": "passed",
        "group": "honest",
        "screen": "passed",
        "why": "the screen blanks the prover's own imports (audit B2): what remains compiles after the header",
    },
    {
        "name": "honest_recursive_helper_def",
        "solution": "def reproHalf : ℕ → ℕ\n  | 0 => 0\n  | 1 => 0\n  | n + 2 => reproHalf n + 1\n\n" + HONEST,
        "expect": "passed",
        "group": "honest",
        "screen": "passed",
        "why": "a compiled, recursive helper: at these toolchains Lean's code generator writes unsafe"
        " `_cstage1`/`_cstage2` constants and a partial `_unsafe_rec` shim for it, which our rebuild check admits",
    },
    {
        "name": "red_partial_def_unused",
        "solution": "partial def reproSpin (n : ℕ) : ℕ := reproSpin n\n\n" + HONEST,
        "expect": "rejected",
        "refusals": ["unsafe"],
        "group": "unsafe_definition",
        "screen": "refused",
        "why": "the pinned SafeVerify passes it (its unsafe/partial check reads only what Environment.replay added,"
        " and replay skips partial constants); repro's own rebuild check refuses the partial definition",
    },
    {
        "name": "red_forged_nat_literal",
        "solution": FORGED_NAT,
        "expect": "rejected",
        "refusals": ["corrupted", "kernel"],
        "group": "forged_object",
        "screen": "refused",
        "why": "prover code forges a Nat literal with unsafeCast while the submission is elaborated and proves"
        " False through the kernel: the pinned SafeVerify replays the forged object as read and passes it;"
        " repro's rebuild check makes every object again and refuses the number (written from the sources,"
        " never run: if Lean does not compile it, fix the exploit, not the expectation)",
    },
    {
        "name": "red_changed_statement",
        "solution": "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 ∨ x = 0 := by\n  subst h₀\n  norm_num",
        "expect": "rejected",
        "refusals": ["type_mismatch"],
        "group": "changed_statement",
        "screen": "refused",
        "why": "another statement under our theorem's name",
    },
    {
        "name": "red_definitional_restatement",
        "statement": "theorem at_least (x : ℕ) (h : x = 5) : x ≥ 3 := by sorry",
        "solution": "theorem at_least (x : ℕ) (h : x = 5) : 3 ≤ x := by\n  omega",
        "expect": "rejected",
        "refusals": ["type_mismatch"],
        "group": "definitional_restatement",
        "screen": "passed",
        "why": "audit M3: `3 ≤ x` is `x ≥ 3` only up to unfolding `GE.ge`; the screen's bridge accepts it, the judge"
        " compares types structurally and refuses it (the judge decides; flow counts the disagreement)",
    },
    {
        "name": "red_universe_specialized",
        "statement": "theorem same (α : Type*) (x : α) : x = x := by sorry",
        "solution": "theorem same (α : Type) (x : α) : x = x := rfl",
        "expect": "rejected",
        "refusals": ["type_mismatch"],
        "group": "universe",
        "screen": "refused",
        "why": "a proof for `Type` is not one for every universe: another type and no level parameter",
    },
    {
        "name": "red_universe_renamed",
        "statement": "theorem same (α : Type*) (x : α) : x = x := by sorry",
        "solution": "universe u\n\ntheorem same (α : Type u) (x : α) : x = x := rfl",
        "expect": "rejected",
        "refusals": ["type_mismatch"],
        "group": "universe",
        "screen": "passed",
        "why": "the same statement up to the name of its universe parameter (`u` for `u_1`): SafeVerify and"
        " comparator compare level parameter names too, so the judge refuses what the bridge accepts",
    },
    {
        "name": "red_custom_axiom",
        "solution": "axiom robe_fact : (3600 : ℕ) / 12 = 300\n\n"
        "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  exact robe_fact",
        "expect": "rejected",
        "refusals": ["axiom"],
        "group": "custom_axiom",
        "screen": "refused",
        "why": "our theorem depends on an axiom of the submission's own",
    },
    {
        "name": "red_axiom_named_propext_in_a_namespace",
        "solution": "namespace Cheat\naxiom propext : False\nend Cheat\n\n"
        "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 :=\n  Cheat.propext.elim",
        "expect": "rejected",
        "refusals": ["axiom"],
        "group": "custom_axiom",
        "screen": "refused",
        "why": "an axiom whose last component is a standard axiom's name: its full name is `Cheat.propext`",
    },
    {
        "name": "red_axiom_redeclares_propext",
        "solution": "axiom _root_.propext : False\n\n"
        "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 :=\n  propext.elim",
        "expect": "rejected",
        "refusals": ["compile_error"],
        "group": "custom_axiom",
        "screen": "refused",
        "why": "`propext` is already declared: Lean refuses the redeclaration",
    },
    {
        "name": "red_unused_axiom",
        "solution": "axiom unused_fact : False\n\n" + HONEST,
        "expect": "passed",
        "group": "custom_axiom",
        "screen": "refused",
        "why": "an axiom our theorem does not use: the judge collects our theorem's axioms only, so it passes",
    },
    {
        "name": "red_sorry",
        "solution": "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  sorry",
        "expect": "rejected",
        "refusals": ["axiom"],
        "group": "sorry",
        "screen": "refused",
        "why": "sorryAx",
    },
    {
        "name": "red_native_decide",
        "solution": "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  native_decide",
        "expect": "rejected",
        "refusals": ["axiom"],
        "group": "native_decide",
        "screen": "refused",
        "why": "Lean.ofReduceBool",
    },
    {
        "name": "red_decide_kernel_true",
        "solution": "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  decide +kernel",
        "expect": "either",
        "group": "kernel_decide",
        "screen": "refused",
        "why": "a true statement by kernel reduction: no extra axiom, so the judge may pass it (where the syntax"
        " exists); the screen refuses kernel decide because of leanprover/lean4#8060 on these kernels",
    },
    {
        "name": "red_decide_kernel_false",
        "solution": "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n"
        "  exact absurd (by decide +kernel : (3600 : ℕ) / 12 = 301) (by norm_num)",
        "expect": "rejected",
        "group": "kernel_decide",
        "screen": "refused",
        "why": "kernel decide of a false proposition: the kernel refuses it (or Lean does not parse it)",
    },
    {
        "name": "red_aesop_tactic_gen_native_decide",
        "solution": _aesop("native_decide"),
        "expect": "rejected",
        "group": "aesop_rule",
        "screen": "refused",
        "why": "issue 27: Aesop runs tactic text a prover def builds at run time (`native_decide` here); whatever it"
        " runs, the kernel sees Lean.ofReduceBool (or Aesop fails)",
    },
    {
        "name": "red_aesop_tactic_gen_sorry",
        "solution": _aesop("sorry"),
        "expect": "rejected",
        "group": "aesop_rule",
        "screen": "refused",
        "why": "the run-time tactic text is `sorry`: sorryAx",
    },
    {
        "name": "red_redefines_our_theorem",
        "solution": HONEST + "\n\ntheorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 3600 / 12 := by\n  rfl",
        "expect": "rejected",
        "refusals": ["compile_error"],
        "group": "redefinition",
        "screen": "refused",
        "why": "our theorem's name declared twice: Lean refuses the second",
    },
    {
        "name": "red_theorem_in_a_namespace",
        "solution": "namespace Nat\n" + HONEST + "\nend Nat",
        "expect": "rejected",
        "refusals": ["not_found"],
        "group": "redefinition",
        "screen": "refused",
        "why": "the proof is `Nat.robe_total`, not our `robe_total`",
    },
    {
        "name": "red_writes_outside_its_sandbox",
        "solution": "#eval show IO Unit from do\n"
        '  let home := (← IO.getEnv "HOME").getD "/nonexistent"\n'
        '  try IO.FS.writeFile (home ++ "/repro_judge_case_escape") "escaped" catch _ => pure ()\n\n' + HONEST,
        "expect": "passed",
        "group": "sandbox",
        "screen": "refused",
        "why": "the submission's compile tries to write into $HOME (read-only in the sandbox) and goes on: the"
        " proof is honest, so it passes, and the file must not exist afterwards",
        "must_not_exist": [ESCAPE],
    },
]


def _hand_written() -> list[Case]:
    cases = []
    for item in HAND_WRITTEN:
        statement = item.get("statement", STATEMENT)
        cases.append(
            Case(
                name=item["name"],
                statement=statement,
                solution=item["solution"].rstrip("\n") + "\n",
                expectation=Expectation(
                    theorem=read_statement(statement).name,
                    expect=item["expect"],
                    refusals=item.get("refusals", []),
                    source="tests/make_judge_cases.py (issue 27 red team)",
                    group=item["group"],
                    screen=item["screen"],
                    why=item["why"],
                    must_not_exist=item.get("must_not_exist", []),
                ),
            )
        )
    return cases


# -- the corpus ---------------------------------------------------------------------------------------------
def _words(code: str) -> list[str]:
    return [token.text for token in significant(lex(code))]  # comments are not significant


def _signature(statement: str) -> str:
    return " ".join(read_statement(statement).signature.split())


def corpus_expectation(case: dict[str, Any], statement: str, solution: str, raw: str) -> tuple[str, list[str], str]:
    """(expect, refusal kinds, why) for one corpus case (see the module docstring for the rule)."""
    name = read_statement(statement).name
    if case["verified"]:
        mains = [d for d in _declarations(solution) if d[2] in (name, f"_root_.{name}")]
        if mains and mains[0][3] == _signature(statement):
            return "passed", [], "an honest proof the screen passes, stated as our statement is"
        return "either", [], "an honest restatement the screen's bridge accepts; the judge compares structurally"
    words = _words(solution)
    reasons = set(case.get("reasons") or [])
    if "boundary_corruption" in reasons or case["class"] == 7:
        return "rejected", [], "special tokens or a cut-off block in the code: Lean does not compile it"
    if any(line.startswith("import ") for line in solution.splitlines()):
        return "rejected", ["compile_error"], "an import the screen did not blank (not the header's): Lean refuses it"
    if {"sorry", "admit", "sorryAx"} & set(words):
        return "rejected", [], "uses sorry: sorryAx, or Lean does not compile it"
    if "native_decide" in words or "+native" in raw or ("native" in words and ":=" in words):
        return "rejected", [], "native evaluation: Lean.ofReduceBool, or Lean does not compile it"
    declared = _declarations(solution)
    axioms = [d[2] for d in declared if d[1] == "axiom" and d[2]]
    if any(words.count(axiom) >= 2 for axiom in axioms):
        return "rejected", [], "our theorem may lean on an axiom of the submission's own"
    mains = [d for d in declared if d[2] in (name, f"_root_.{name}", f"«{name}»")]
    if not mains:
        return "rejected", [], f"no theorem named {name} at the top level"
    if len(mains) > 1:
        return "rejected", [], f"{name} declared twice: Lean refuses the second"
    if mains[0][1] != "theorem":
        return "rejected", [], f"{name} is declared with {mains[0][1]}"
    if "statement_mismatch" in reasons and mains[0][3] != _signature(statement):
        return "rejected", [], "another statement under our name (the screen's Lean check found it another type)"
    return "either", [], "it attacks the screen or the REPL check; its proof may be complete, and the judge decides"


def _corpus_cases() -> list[Case]:
    corpus = yaml.safe_load(CORPUS.read_text(encoding="utf-8"))
    cases = []

    async def screened(statement: str, output: str, finish: str) -> tuple[str, str]:
        verdict = await verify_proof(statement, output, None, header=HEADER, finish_reason=finish)
        return verdict.checked_code or verdict.prover_code or output, verdict.prover_code or output

    for case in corpus:
        if case["class"] == 6:
            continue  # about our statement, not the proof: nothing for the judge
        statement = case.get("statement", DEFAULT_STATEMENT)
        solution, raw = asyncio.run(screened(statement, case["output"], case.get("finish_reason", "stop")))
        expect, refusals, why = corpus_expectation(case, statement, solution, raw)
        cases.append(
            Case(
                name=f"corpus_{case['name']}",
                statement=statement,
                solution=solution.rstrip("\n") + "\n",
                expectation=Expectation(
                    theorem=read_statement(statement).name,
                    expect=expect,
                    refusals=refusals,
                    source=f"tests/fixtures/gate_corpus.yaml#{case['name']}",
                    group=str(case["class"]),
                    screen="passed" if case["verified"] else "refused",
                    why=why,
                ),
            )
        )
    return cases


def all_cases() -> list[Case]:
    return _hand_written() + _corpus_cases()


def rendered() -> dict[str, dict[str, str]]:
    """case name -> file name -> text, as the committed files must read."""
    return {
        case.name: {
            "Challenge.lean": target_source(HEADER, case.statement),
            "Solution.lean": submission_source(HEADER, case.solution),
            "expect.json": json.dumps(case.expectation.model_dump(), indent=1, ensure_ascii=False) + "\n",
        }
        for case in all_cases()
    }


def main() -> int:
    files = rendered()
    if CASES_DIR.exists():
        for stale in CASES_DIR.iterdir():
            if stale.is_dir() and stale.name not in files:
                shutil.rmtree(stale)
    for name, texts in files.items():
        directory = CASES_DIR / name
        directory.mkdir(parents=True, exist_ok=True)
        for file_name, text in texts.items():
            (directory / file_name).write_text(text, encoding="utf-8")
    print(f"wrote {len(files)} judge cases to {CASES_DIR}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
