"""``repro lean selftest``: a fixed battery that shows the gate's assumptions hold on *this* Lean.

Everything the soundness gate believes about Lean (a changed target fails the bridge, ``#print axioms``
prints custom axioms and ``Lean.ofReduceBool`` in the shape we parse, a sentinel ``#print "s"`` answers
``s`` at its own line, a hang is reported as a timeout, the backend runs the toolchain we asked for) was
written against documentation and transcripts, never against the user's Lean. Each case runs through the
configured backend, with its expected verdict and the message shapes it relies on; a failed case names
itself. A run or study that claims real Lean runs this once per backend + toolchain (the passing report
is cached) and stops before any model call when a case fails.

The fake backend answers only the cases whose plumbing it imitates; the others are listed as needing a
real backend (what the fake says about Lean is never evidence). The battery absorbs the former
``lean``-marked tests (tests/test_real_lean.py), so a user with Lean runs them in one command.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from repro.config import LeanBackendName, LeanSettings
from repro.judge.screen import verify_proof
from repro.judge.selftest_answers import ANSWER_CASES, AnswerCheck
from repro.judge.verdict import STANDARD_AXIOMS, Judge, JudgeRequest
from repro.lean.protocol import InfraStatus, Verifier, axioms_reported
from repro.lean.sandbox import EXTRA_READ_ONLY_VARIABLE
from repro.lean.toolchains import get_toolchain, lean_version_of
from repro.records import ReasonCode

STATEMENT = "theorem selftest_div (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry"
HONEST = "theorem selftest_div (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num"
LET_STATEMENT = "theorem selftest_let (n : ℕ) (h : n = 4) : let k : ℕ := n * 3\n  k = 12 := by sorry"
SENTINEL = "repro_sentinel_selftest_0"
SPIN = (
    "partial def repro_selftest_spin (n : Nat) : IO Nat := repro_selftest_spin (n + 1)\n\n#eval repro_selftest_spin 0"
)
TIMEOUT_BUDGET_S = 10.0


class CaseOutcome(BaseModel):
    name: str
    expects: str
    passed: bool | None = Field(description="None: this backend cannot answer the case (the fake)")
    detail: str = ""


class SelfTestReport(BaseModel):
    backend: str
    backend_id: str
    real_lean: bool
    toolchain: str
    reported_toolchain: str | None = None
    mathlib_revision: str | None = None
    # the backend answered no check at all (Lean missing, server down): no case was run
    unreachable: str | None = None
    outcomes: list[CaseOutcome]
    # which `lake` the project's toolchain resolves to, and how Lean processes are confined (lean audit B1;
    # issue 27 §3); None where repro starts no Lean process of its own (fake, Kimina)
    lake: str | None = None
    confinement: str | None = None
    # the kernel judge the judge cases ran on (tool, pinned revision, confinement), when one was given
    judge: str | None = None

    @property
    def failed(self) -> list[CaseOutcome]:
        return [outcome for outcome in self.outcomes if outcome.passed is False]

    @property
    def unanswered(self) -> list[CaseOutcome]:
        return [outcome for outcome in self.outcomes if outcome.passed is None]

    @property
    def passed(self) -> bool:
        return not self.failed and self.unreachable is None


class SelfTestFailed(RuntimeError):
    """A real-Lean run must not start: the named self-test case failed on this backend."""

    def __init__(self, report: SelfTestReport) -> None:
        self.report = report
        names = ", ".join(f"{o.name} ({o.detail[:200]})" for o in report.failed)
        # the backend answered nothing (no toolchain, no REPL, no sandbox): that reason is the message (M4)
        why = names or f"the backend answered no check: {(report.unreachable or '')[:600]}"
        hint = sandbox_hint(report)
        super().__init__(
            f"the Lean self-test failed on {report.backend_id} ({report.toolchain}): {why}. "
            "Nothing was run; `repro lean selftest` shows every case." + (f" {hint}" if hint else "")
        )


def sandbox_hint(report: SelfTestReport) -> str | None:
    """Under bubblewrap Lean sees only the system view and the paths repro knows it needs (the toolchain,
    ``ELAN_HOME``, the project and its packages, the REPL and tool checkouts): a node that keeps one elsewhere
    fails the honest cases with Lean's own "file not found"/"unknown package" message, said here as such."""
    if report.passed or not (report.confinement or "").startswith("lean.sandbox bwrap"):
        return None
    return (
        "Under bwrap Lean sees only the system view and the paths repro shows it (docs/trust.md, assumption 3):"
        f" if Lean could not find a file or package, name its directory in {EXTRA_READ_ONLY_VARIABLE}"
        " (colon-separated, shown read-only) and run the self-test again."
    )


@dataclass
class _Context:
    settings: LeanSettings
    verifier: Verifier
    header: str
    make_verifier: Callable[[LeanSettings], Verifier]


CaseCheck = Callable[[_Context], Awaitable[tuple[bool, str]]]


@dataclass(frozen=True)
class Case:
    name: str
    expects: str
    run: CaseCheck
    fake_answers: bool


async def _verdict_case(
    context: _Context, statement: str, proof: str, *, allow_native_decide: bool = False
) -> tuple[bool, list[ReasonCode], str, list[str] | None]:
    verdict = await verify_proof(
        statement, proof, context.verifier, header=context.header, allow_native_decide=allow_native_decide
    )
    detail = "; ".join(verdict.details)[:300] or "verified"
    return verdict.verified, verdict.reasons, detail, verdict.axioms


async def _honest(context: _Context) -> tuple[bool, str]:
    verified, _, detail, axioms = await _verdict_case(context, STATEMENT, HONEST)
    clean = set(axioms or []) <= STANDARD_AXIOMS
    return verified and clean, f"{detail}; axioms {axioms}"


async def _refused_as_changed(context: _Context, statement: str, proof: str) -> tuple[bool, str]:
    """Passes when the gate refuses ``proof`` as proving some other statement than ``statement``."""
    verified, reasons, detail, _ = await _verdict_case(context, statement, proof)
    return not verified and ReasonCode.statement_mismatch in reasons, detail


async def _changed_hypothesis(context: _Context) -> tuple[bool, str]:
    proof = "theorem selftest_div (x : ℕ) (h₀ : x = 3600) (k : ℕ := 12) : x / k = x / k := by\n  rfl"
    return await _refused_as_changed(context, STATEMENT, proof)


async def _changed_let(context: _Context) -> tuple[bool, str]:
    proof = "theorem selftest_let (n : ℕ) (h : n = 4) : let k : ℕ := n * 3\n  k = k := by\n  intro k\n  rfl"
    return await _refused_as_changed(context, LET_STATEMENT, proof)


async def _universe_specialized(context: _Context) -> tuple[bool, str]:
    """A proof for ``Type`` must not pass for our ``Type*`` statement: the bridge is a ``theorem``, whose
    header's universe metavariables become parameters before the body (in an ``example`` on v4.9.0 the
    body could assign them: red team round 4, A6)."""
    statement = "theorem selftest_univ (α : Type*) (x : α) : x = x := by sorry"
    proof = "theorem selftest_univ (α : Type) (x : α) : x = x := rfl"
    return await _refused_as_changed(context, statement, proof)


async def _cosmetic(context: _Context) -> tuple[bool, str]:
    proof = "lemma selftest_div (x: Nat) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num"
    verified, _, detail, _ = await _verdict_case(context, STATEMENT, proof)
    return verified, detail


async def _sorry(context: _Context) -> tuple[bool, str]:
    """The gate refuses ``sorry`` before Lean; the backend must also report it, in the REPL's shapes."""
    proof = "theorem selftest_div (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  sorry"
    verified, _, detail, _ = await _verdict_case(context, STATEMENT, proof)
    result = await context.verifier.check(
        "theorem repro_selftest_sorry : (1 : Nat) + 1 = 2 := by\n  sorry", context.header
    )
    warned = any(m.severity == "warning" and "declaration uses 'sorry'" in m.text for m in result.messages)
    ok = not verified and bool(result.sorries) and warned and not result.ok
    return (
        ok,
        f"gate: {detail}; backend: sorries {result.sorries[:1]}, messages {[m.text for m in result.messages[:2]]}",
    )


async def _custom_axiom(context: _Context) -> tuple[bool, str]:
    """Straight to the backend: the gate refuses ``axiom`` statically, so only this shows Lean's report."""
    results = await context.verifier.check_sequence(
        [
            "axiom repro_selftest_ax : (1 : Nat) + 1 = 3",
            "theorem repro_selftest_uses : (1 : Nat) + 1 = 3 := repro_selftest_ax",
            "#print axioms repro_selftest_uses",
        ],
        context.header,
    )
    if len(results) != 3 or results[-1].infra_status != InfraStatus.ok:
        return False, f"no answer: {results[-1].infra_status}: {results[-1].detail}"
    listed = axioms_reported(results[2], "repro_selftest_uses")
    shown = [m.text for m in results[2].messages]
    return listed is not None and "repro_selftest_ax" in listed, f"#print axioms answered {shown}"


async def _native_decide(context: _Context) -> tuple[bool, str]:
    # native_decide let past the static layer on purpose: only Lean's own axiom command can refuse it
    proof = "theorem selftest_div (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  native_decide"
    verified, reasons, detail, axioms = await _verdict_case(context, STATEMENT, proof, allow_native_decide=True)
    ok = not verified and ReasonCode.axiom_violation in reasons and "Lean.ofReduceBool" in (axioms or [])
    return ok, f"{detail}; axioms {axioms}"


async def _sentinel(context: _Context) -> tuple[bool, str]:
    result = await context.verifier.check(
        f'theorem sentinel_probe : True := trivial\n\n#print "{SENTINEL}"', context.header
    )
    found = [m for m in result.messages if SENTINEL in m.text]
    ok = len(found) == 1 and found[0].text.strip() == SENTINEL and found[0].severity == "info" and found[0].line == 3
    shapes = [(m.severity, m.line, m.text) for m in found]
    return ok, f"expected one info message {SENTINEL!r} at line 3, got {shapes} ({result.infra_status})"


async def _spin(context: _Context, budget: float) -> Any:
    quick = context.make_verifier(context.settings.model_copy(update={"timeout_s": budget, "workers": 1}))
    try:
        return await quick.check(SPIN, context.header)
    finally:
        await quick.close()


async def _timeout(context: _Context) -> tuple[bool, str]:
    budget = min(context.settings.timeout_s, TIMEOUT_BUDGET_S)
    result = await _spin(context, budget)
    said = f"a {budget:.0f} s budget gave {result.infra_status}"
    if result.infra_status == InfraStatus.unavailable and "header" in (result.detail or "").lower():
        # a Kimina server runs the header (import Mathlib) of a fresh REPL under the request's own timeout
        # (server/routers/check.py): a cold REPL cannot import Mathlib in 10 s, which says nothing about
        # timeouts. Again with the configured budget, which is what every real check gives the header (M7)
        budget = context.settings.timeout_s
        result = await _spin(context, budget)
        said += f"; the header timed out, so again with {budget:.0f} s: {result.infra_status}"
    return result.infra_status == InfraStatus.timeout, said


async def _toolchain(context: _Context) -> tuple[bool, str]:
    expected = get_toolchain(context.settings.toolchain)
    result = await context.verifier.check("#eval Lean.versionString", context.header)
    found = next((v for m in result.messages if (v := lean_version_of(m.text))), None)
    mathlib = context.verifier.mathlib_revision
    detail = f"the backend runs Lean {found}, Mathlib {mathlib}; lean.toolchain is {expected.name}"
    return found == expected.lean_version, detail


CASES: tuple[Case, ...] = (
    Case("honest_proof", "an honest proof is verified, axioms standard", _honest, True),
    Case(
        "changed_target_hypothesis",
        "an extra hypothesis changing the target fails the bridge",
        _changed_hypothesis,
        True,
    ),
    Case("changed_target_let", "a let-style statement with a changed body fails the bridge", _changed_let, True),
    Case(
        "universe_specialized",
        "a proof for Type does not pass for a Type* statement (the bridge is a theorem)",
        _universe_specialized,
        True,
    ),
    Case("cosmetic_restatement", "lemma/Nat/tight binders: the same type, verified", _cosmetic, True),
    Case("sorry_detected", "sorry is refused, and the backend reports it (sorries, warning)", _sorry, True),
    Case("custom_axiom_reported", "#print axioms lists a custom axiom, in the shape we parse", _custom_axiom, True),
    Case(
        "native_decide_reported",
        "native_decide is refused: #print axioms shows Lean.ofReduceBool",
        _native_decide,
        True,
    ),
    Case(
        "sentinel_position", 'a #print "s" answers s, as info, at its own line (Kimina line checks)', _sentinel, False
    ),
    Case("timeout_reported", "a hanging command is reported as a timeout, not a verdict", _timeout, False),
    Case("toolchain_reported", "the backend itself reports the configured Lean (and its Mathlib)", _toolchain, False),
)


def _answer_case(check: AnswerCheck) -> CaseCheck:
    async def run(context: _Context) -> tuple[bool, str]:
        return await check(context.verifier, context.header)

    return run


# the answers we release, confirmed by Lean (issue 29): only real Lean can decide them
CASES += tuple(Case(name, expects, _answer_case(check), False) for name, expects, check in ANSWER_CASES)


# -- the kernel judge's cases (issue 27): run only when a judge is given ------------------------------------
# The judge, not the screen, decides "verified": these show on *this* machine that it passes an honest proof
# and refuses a changed statement and an extra axiom, each through the tool pinned for the toolchain.
JUDGE_HONEST = HONEST
JUDGE_CHANGED = "theorem selftest_div (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 ∨ x = 0 := by\n  subst h₀\n  norm_num"
JUDGE_AXIOM = (
    "axiom repro_selftest_judge_ax : (3600 : ℕ) / 12 = 300\n\n"
    "theorem selftest_div (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  exact repro_selftest_judge_ax"
)


@dataclass(frozen=True)
class JudgeCase:
    name: str
    expects: str
    submission: str
    status: str  # the JudgeStatus the judge must give
    refusals: frozenset[str] = frozenset()  # for a rejection: the JudgeRefusal kinds that count


JUDGE_CASES: tuple[JudgeCase, ...] = (
    JudgeCase("judge_honest_proof", "the kernel judge passes an honest proof", JUDGE_HONEST, "passed"),
    JudgeCase(
        "judge_changed_statement",
        "the kernel judge rejects a proof of another statement (same name)",
        JUDGE_CHANGED,
        "rejected",
        frozenset({"type_mismatch"}),
    ),
    JudgeCase(
        "judge_extra_axiom",
        "the kernel judge rejects a proof that uses an axiom of its own",
        JUDGE_AXIOM,
        "rejected",
        frozenset({"axiom"}),
    ),
)


async def run_judge_cases(judge: Judge, settings: LeanSettings) -> list[CaseOutcome]:
    """The judge's cases on ``judge`` for ``settings``'s toolchain and header. A stand-in (``real: false``)
    answers none of them: what it says about Lean's kernel is never evidence."""
    outcomes = []
    for case in JUDGE_CASES:
        if not judge.real:
            outcomes.append(
                CaseOutcome(name=case.name, expects=case.expects, passed=None, detail="answerable only by a real judge")
            )
            continue
        request = JudgeRequest(
            key=f"selftest:{case.name}",
            header=settings.header,
            statement=STATEMENT,
            theorem_name="selftest_div",
            submission=case.submission,
            toolchain=settings.toolchain,
        )
        try:
            verdict = await judge.judge(request)
        except Exception as error:  # a judge that cannot even run has failed the case
            outcomes.append(
                CaseOutcome(
                    name=case.name, expects=case.expects, passed=False, detail=f"{type(error).__name__}: {error}"
                )
            )
            continue
        passed = verdict.status == case.status and (not case.refusals or verdict.refusal in case.refusals)
        detail = f"{verdict.tool} {(verdict.tool_revision or '')[:12]}: {verdict.status}"
        detail += f" ({verdict.refusal or verdict.cause}): {verdict.detail[:300]}" if not verdict.passed else ""
        outcomes.append(CaseOutcome(name=case.name, expects=case.expects, passed=passed, detail=detail))
    return outcomes


async def run_selftest(
    settings: LeanSettings,
    *,
    verifier: Verifier | None = None,
    make_verifier: Callable[[LeanSettings], Verifier] | None = None,
    only: list[str] | None = None,
    judge: Judge | None = None,
) -> SelfTestReport:
    """Run the battery on ``settings``'s backend (or on ``verifier``), and the judge's cases on ``judge`` when
    one is given; never raises for a failed case."""
    from repro.lean.factory import build_verifier

    build = make_verifier or build_verifier
    own = verifier is None
    outer = verifier or build(settings)
    active = backend_of(outer)  # ask Lean, never a cached answer
    fake = settings.backend == LeanBackendName.fake or not active.real_lean
    context = _Context(settings, active, settings.header, build)
    outcomes = []
    try:
        prepare = getattr(active, "prepare", None)
        if prepare is not None:
            try:
                await prepare(settings.header)
            except Exception as error:  # a refused server fails the cases below with its reason
                outcomes.append(
                    CaseOutcome(
                        name="backend_accepted", expects="the backend accepts this run", passed=False, detail=str(error)
                    )
                )
        unreachable = None
        if not outcomes:  # not refused: does the backend answer at all?
            probe = await active.check("theorem repro_selftest_probe : True := trivial", settings.header)
            if probe.infra_status != InfraStatus.ok:
                unreachable = f"{probe.infra_status}: {probe.detail}"
        for case in CASES if unreachable is None and not outcomes else ():
            if only and case.name not in only:
                continue
            if fake and not case.fake_answers:
                outcomes.append(
                    CaseOutcome(name=case.name, expects=case.expects, passed=None, detail="needs a real Lean backend")
                )
                continue
            try:
                passed, detail = await case.run(context)
            except Exception as error:  # a case that cannot even run has failed
                passed, detail = False, f"{type(error).__name__}: {error}"
            outcomes.append(CaseOutcome(name=case.name, expects=case.expects, passed=passed, detail=detail))
        if judge is not None and unreachable is None:
            judged = await run_judge_cases(judge, settings)
            outcomes += [outcome for outcome in judged if not only or outcome.name in only]
        lake, confinement = local_lean_facts(settings, active)
        return SelfTestReport(
            judge=_judge_line(judge, settings.toolchain) if judge is not None else None,
            lake=lake,
            confinement=confinement,
            backend=str(settings.backend),
            backend_id=active.backend_id,
            real_lean=active.real_lean,
            toolchain=settings.toolchain,
            reported_toolchain=active.toolchain,
            mathlib_revision=active.mathlib_revision,
            unreachable=unreachable,
            outcomes=outcomes,
        )
    finally:
        if own:
            await outer.close()


def local_lean_facts(settings: LeanSettings, verifier: Verifier) -> tuple[str | None, str | None]:
    """(the toolchain ``lake`` resolves to in the project, the confinement in force) for the repl backend."""
    if settings.backend != LeanBackendName.repl:
        return None, None
    from repro.lean.project import project_lake

    lake = project_lake(settings.project_dir()).describe()
    sandbox = getattr(verifier, "sandbox", None)
    refused = getattr(verifier, "refused", None)
    if sandbox is not None:
        confinement = f"lean.sandbox {settings.sandbox}: {sandbox.status.describe()}"
    else:
        confinement = f"lean.sandbox {settings.sandbox}: " + (refused or "no sandbox: chosen by the operator")
    return lake, confinement


def _judge_line(judge: Judge, toolchain: str) -> str:
    """Which judge answered the judge cases: its name, the revision pinned for ``toolchain``, its confinement."""
    revision = judge.revision(toolchain)
    confinement = getattr(judge, "confinement", None)
    line = f"{judge.name} {(revision or 'no pinned revision')[:12]} for {toolchain}"
    line += "" if judge.real else " (a stand-in: its verdicts are not real)"
    return line + (f"; {confinement}" if isinstance(confinement, str) and confinement else "")


# -- once per backend + toolchain, before a run that claims real Lean ------------------------------------


def backend_of(verifier: Verifier) -> Verifier:
    """The backend under any result caches: the self-test must ask Lean, not a stored answer."""
    while (inner := getattr(verifier, "inner", None)) is not None:
        verifier = inner
    return verifier


def _cache_dir() -> Path:
    root = os.environ.get("REPRO_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "repro"
    )
    return Path(root) / "selftest"


def selftest_key(settings: LeanSettings) -> str:
    """Backend, where it is, toolchain, header and the battery itself: a change to any asks again."""
    from repro import __version__

    where = (
        settings.kimina_url
        if settings.backend == LeanBackendName.kimina
        else str(Path(settings.project_dir()).resolve())
    )
    battery = "\x00".join(case.name + case.expects for case in CASES)
    identity = "\x00".join([str(settings.backend), where, settings.toolchain, settings.header, battery, __version__])
    return hashlib.sha256(identity.encode("utf-8")).hexdigest()[:32]


async def ensure_selftest(
    settings: LeanSettings,
    *,
    verifier: Verifier | None = None,
    make_verifier: Callable[[LeanSettings], Verifier] | None = None,
    cache: bool = True,
    judge: Judge | None = None,
) -> SelfTestReport | None:
    """Before a real-Lean run: the cached passing report, or a fresh run; raise if any case failed.

    The fake backend is not tested here (it claims nothing about Lean); only passing reports are cached.
    """
    if settings.backend == LeanBackendName.fake:
        return None
    key = selftest_key(settings)
    if judge is not None:  # the judge's cases too: another judge (tool, pin, confinement) asks again
        judged = "\x00".join([key, _judge_line(judge, settings.toolchain), *(case.name for case in JUDGE_CASES)])
        key = hashlib.sha256(judged.encode("utf-8")).hexdigest()[:32]
    path = _cache_dir() / f"{key}.json"
    if cache and path.is_file():
        try:
            return SelfTestReport.model_validate(json.loads(path.read_text(encoding="utf-8")))
        except (ValueError, OSError):
            pass
    report = await run_selftest(settings, verifier=verifier, make_verifier=make_verifier, judge=judge)
    if not report.passed:
        raise SelfTestFailed(report)
    if cache:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(report.model_dump_json(indent=1), encoding="utf-8")
    return report


def render_report(report: SelfTestReport) -> list[str]:
    """Plain lines for the CLI and doctor: one per case, then what only a real backend can answer."""
    lines = [
        f"Lean self-test on {report.backend_id} (lean.toolchain {report.toolchain}; backend reports "
        f"{report.reported_toolchain}, Mathlib {report.mathlib_revision}; "
        f"real Lean: {'yes' if report.real_lean else 'NO'})"
    ]
    if report.lake:
        lines.append(f"  lake: {report.lake}")
    if report.confinement:
        lines.append(f"  confinement: {report.confinement}")
    if report.judge:
        lines.append(f"  judge: {report.judge}")
    for outcome in report.outcomes:
        mark = "PASS" if outcome.passed else "FAIL" if outcome.passed is False else "n/a "
        lines.append(
            f"  {mark} {outcome.name}: {outcome.expects}" + (f" -- {outcome.detail}" if outcome.passed is False else "")
        )
    if report.unreachable:
        lines.append(f"  the backend answered no check ({report.unreachable[:300]}); no case was run")
    judge_names = {case.name for case in JUDGE_CASES}
    lean_only = [o.name for o in report.unanswered if o.name not in judge_names]
    judge_only = [o.name for o in report.unanswered if o.name in judge_names]
    if lean_only:
        lines.append(f"only a real Lean backend (repl or kimina) can answer: {', '.join(lean_only)}")
    if judge_only:
        lines.append(f"only a real kernel judge (SafeVerify or comparator) can answer: {', '.join(judge_only)}")
    failed = ", ".join(o.name for o in report.failed) or "backend unreachable"
    hint = sandbox_hint(report)
    if hint:
        lines.append(hint)
    fake = "" if report.real_lean else " on a backend that is not real Lean (no real verdict; exit 4)"
    lines.append("self-test " + (f"passed{fake}" if report.passed else f"FAILED: {failed}"))
    return lines
