"""The self-test's answer cases (issue 29): what only real Lean can decide about the answers we release.

The answer stage proposes a value and a type from our statement's text and our own Lean commands
confirm them (:mod:`repro.lean.answer_checks`); each case here runs that through the configured backend
on a statement whose text suggests one thing while Lean elaborates another (ℕ division, ``ZMod 7``, a
cast, a closed computation Lean types as ℕ, ``2⁻¹``/``0x10``/``1e3``, a tuple) and the non-linear vacuity
check (``l * w = 40`` with ``l + w = 10`` has no real solution). The fake backend models these, so its
answers are no evidence: the cases are listed as needing a real backend there, and
``tests/test_selftest_answers.py`` runs them against the fake only to check the cases themselves.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from repro.lean.protocol import Verifier
from repro.lean.statement_checks import check_statement

# (statement, the released answer or None, its Lean types)
Expectation = tuple[str, str | None, tuple[str, ...]]

NAT_DIVISION: tuple[Expectation, ...] = (
    # 15 / 3 in ℕ: the text's 16 / 3 is 5 there, a division, never a value of ℚ ℝ ℂ
    ("theorem selftest_answer_div : (3 + 4 + 8 : ℕ) / 3 = 16 / 3 := by sorry", None, ()),
    ("theorem selftest_answer_div5 : (3 + 4 + 8 : ℕ) / 3 = 5 := by sorry", "5", ("ℕ",)),
)
ZMOD: tuple[Expectation, ...] = (("theorem selftest_answer_zmod : (2 : ZMod 7) ^ 10 = 9 := by sorry", None, ()),)
CAST: tuple[Expectation, ...] = (
    ("theorem selftest_answer_cast (x : ℕ) (h : x = 5) : (x : ℝ) / 2 = 5 / 2 := by sorry", "5 / 2", ("ℝ",)),
    ("theorem selftest_answer_sub (n : ℕ) (h : n = 4) : (↑n - 9 : ℤ) = -5 := by sorry", "-5", ("ℤ",)),
)
DEFAULT_NAT: tuple[Expectation, ...] = (("theorem selftest_answer_closed : 91 ^ 2 = 8281 := by sorry", "8281", ("ℕ",)),)
NOTATIONS: tuple[Expectation, ...] = (
    ("theorem selftest_answer_inv (x : ℝ) (h : 2 * x = 1) : x = 2⁻¹ := by sorry", "1 / 2", ("ℝ",)),
    ("theorem selftest_answer_hex (x : ℕ) (h : x - 6 = 10) : x = 0x10 := by sorry", "16", ("ℕ",)),
    ("theorem selftest_answer_sci (x : ℝ) (h : x / 10 = 100) : x = 1e3 := by sorry", "1000", ("ℝ",)),
)
TUPLE: tuple[Expectation, ...] = (
    (
        "theorem selftest_answer_pair (s t : ℝ) (h₀ : s = 9 - 2 * t) (h₁ : t = 3 * s + 1) : s = 1 ∧ t = 4 := by sorry",
        "(1, 4)",
        ("ℝ", "ℝ"),
    ),
)
NONLINEAR_VACUOUS = "theorem selftest_vacuous (l w : ℝ) (h₀ : l * w = 40) (h₁ : l + w = 10) : l = 5 := by sorry"


async def expectations_hold(verifier: Verifier, header: str, cases: tuple[Expectation, ...]) -> tuple[bool, str]:
    """Every statement gives exactly the expected answer and types (or none), with a verdict from Lean."""
    from repro.stages.answer import statement_answer

    said = []
    ok = True
    for statement, answer, types in cases:
        found = await statement_answer(statement, verifier, header=header)
        released = found.answer if found.found else None
        passed = not found.undecided and released == answer and (answer is None or tuple(found.lean_types) == types)
        ok &= passed
        what = f"{released} : {', '.join(found.lean_types)}" if released else f"none ({found.reason}: {found.detail})"
        said.append(f"{statement.split()[1]} gave {what}")
    return ok, "; ".join(said)


async def nonlinear_vacuity(verifier: Verifier, header: str) -> tuple[bool, str]:
    facts = await check_statement(NONLINEAR_VACUOUS, verifier, header=header)
    return facts.status == "vacuous", f"status {facts.status}; derived by {(facts.derivation or '').splitlines()[-1:]}"


AnswerCheck = Callable[[Verifier, str], Awaitable[tuple[bool, str]]]


def _expect(cases: tuple[Expectation, ...]) -> AnswerCheck:
    async def run(verifier: Verifier, header: str) -> tuple[bool, str]:
        return await expectations_hold(verifier, header, cases)

    return run


# (name, what it shows, the check): the self-test wraps each as a case only real Lean answers
ANSWER_CASES: tuple[tuple[str, str, AnswerCheck], ...] = (
    ("answer_nat_division", "ℕ division: 16 / 3 is no answer of an ℕ equation, 5 is", _expect(NAT_DIVISION)),
    ("answer_zmod", "(2 : ZMod 7) ^ 10 = 9 gives no answer (9 is 2 there)", _expect(ZMOD)),
    ("answer_cast", "a cast: the equation's type is the one Lean elaborates (ℝ, ℤ)", _expect(CAST)),
    ("answer_default_nat", "a closed computation with no ascription is confirmed in ℕ", _expect(DEFAULT_NAT)),
    ("answer_notations", "2⁻¹ is 1 / 2, 0x10 is 16, 1e3 is 1000, as Lean confirms", _expect(NOTATIONS)),
    ("answer_tuple", "x = a ∧ y = b is an ordered tuple, each type confirmed", _expect(TUPLE)),
    ("vacuity_nonlinear", "l * w = 40, l + w = 10 over ℝ is found vacuous (nlinarith)", nonlinear_vacuity),
)
