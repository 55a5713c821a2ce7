"""The screen: the static layer and the REPL check, in front of the kernel judge.

Lean decides identity and axioms; the gate's own reading of the text only decides what Lean may see.

1. Static layer (no Lean): no special tokens; not truncated; the code lexes completely; every
   construct is on the allowlist (:mod:`repro.judge.policy`); exactly one declaration of our
   theorem's name, as a ``theorem``/``lemma``.
2. Lean, as a sequence of commands, each in the environment the previous one left:
   (0) our statement, elaborated before the prover's code exists, as
   ``theorem repro_target_<id> <our signature> := by sorry``; (1) the prover's code, verbatim
   (leading imports blanked: the header has them); (2) the bridge
   ``theorem repro_target_<id>_bridge : type_of% @repro_target_<id> := @<name>``, which elaborates only if the prover's
   theorem proves our statement as elaborated in (0); (3) ``#print axioms <name>`` alone.
3. Verdict: (0) no error; (1) no error and no sorry; (2) no error; (3) exactly one message, Lean's
   axiom list for exactly that name, within {propext, Classical.choice, Quot.sound}.

Every reason that applied is listed, with Lean's messages.
"""

from __future__ import annotations

import asyncio
import hashlib
from functools import lru_cache

from repro.config import StaticLimits
from repro.judge.policy import ScanResult, scan
from repro.judge.scopes import closers, closing_lines, section_closing, section_opening
from repro.judge.verdict import STANDARD_AXIOMS, Verdict
from repro.lean.protocol import InfraStatus, LeanMessage, LeanResult, Verifier, axioms_reported
from repro.lean.tables import DEFAULT_OPEN_ALLOWLIST, RESERVED_PREFIX
from repro.lean.taxonomy import taxonomy_facts
from repro.lean.text import (
    LeanCode,
    ProverOutput,
    Statement,
    StatementError,
    StaticTimeout,
    find_special_tokens,
    read_output,
    read_statement,
    time_limit,
)
from repro.records import ReasonCode

STEP_NAMES = ("statement", "proof", "bridge", "axioms")


def reserved_name(statement: str) -> str:
    """The name our statement is elaborated under: derived from its text, refused in prover code."""
    return f"{RESERVED_PREFIX}_{hashlib.sha256(statement.encode('utf-8')).hexdigest()[:16]}"


def lean_commands(
    parsed: Statement, reserved: str, prover_code: str, prover_closers: list[str] | None = None
) -> list[str]:
    """Our four commands. The prover's code runs inside our ``section <reserved>``, opened at the end of
    (0) and closed at the start of (2), after ``prover_closers`` (the scopes it leaves open): its
    opens and options end before our trusted commands (:mod:`repro.judge.scopes` says why it cannot
    close our section itself), and its own text, hence Lean's positions in it, is unchanged."""
    return [
        # ``:=`` on a line of its own: a signature that ends in a ``--`` comment must not swallow it
        f"theorem {reserved} {parsed.signature}\n    := by sorry" + section_opening(reserved),
        prover_code,
        # ``_root_``: an ``open X in`` left dangling at the end of the prover's code (Kimina joins the
        # commands into one file) must not make ``@name`` resolve to a library lemma ``X.name``.
        # ``theorem``, not ``example``: ``@reserved`` elaborates with universe *metavariables*, and only a
        # theorem header turns them into parameters before its body is elaborated (leanprover/lean4
        # ``src/Lean/Elab/MutualDef.lean`` ``levelMVarToParamHeaders``: ``view.kind.isTheorem``; examples
        # only since leanprover/lean4#4493, after v4.9.0). In an ``example`` the body may assign them,
        # so a proof for ``Type`` would pass for our ``Type*`` statement (red team round 4, A6).
        section_closing(reserved, prover_closers or []) + bridge_command(reserved, parsed.name),
        f"#print axioms _root_.{parsed.name}",
    ]


def bridge_command(reserved: str, name: str) -> str:
    """Our command (2): it elaborates only if the prover's theorem has our statement's type."""
    return f"theorem {reserved}_bridge : type_of% @{reserved} := @_root_.{name}"


def forbidden_constructs(
    code: str | LeanCode,
    *,
    allow_native_decide: bool = False,
    header: str = "",
    line_starts: bool = True,
    main_name: str | None = None,
) -> list[str]:
    """Everything the static layer refuses in ``code``, named (empty: Lean may see it)."""
    result = scan(
        code, header=header, allow_native_decide=allow_native_decide, line_starts=line_starts, main_name=main_name
    )
    return ([result.unterminated] if result.unterminated else []) + result.forbidden


async def verify_proof(
    statement: str,
    prover_output: str,
    verifier: Verifier | None,
    *,
    header: str,
    allow_native_decide: bool = False,
    finish_reason: str = "stop",
    repeat_threshold: int = 8,
    open_allowlist: frozenset[str] = DEFAULT_OPEN_ALLOWLIST,
    limits: StaticLimits | None = None,
) -> Verdict:
    """Decide whether ``prover_output`` proves ``statement``. Never raises for bad proofs or statements.

    The static layer runs in a worker thread under ``limits`` (caps checked before reading, a time
    limit while reading), so one huge or pathological reply never stalls the other checks in flight.
    """
    limits = limits or StaticLimits()
    verdict = Verdict(verified=False)
    parsed = _statement_for(verdict, statement, header)
    if parsed is None:
        return verdict

    if _over_caps(verdict, prover_output, limits):
        verdict.static_passed = False
        return verdict
    try:
        output, static = await asyncio.to_thread(
            _read_and_scan, prover_output, finish_reason, header, allow_native_decide, open_allowlist, parsed, limits
        )
    except StaticTimeout:
        verdict.add(
            ReasonCode.static_timeout,
            f"the static layer did not finish reading the reply within {limits.timeout_s:g} s (no verdict)",
        )
        verdict.static_passed = False
        return verdict
    if static is None:
        verdict.add(
            ReasonCode.too_many_tokens,
            f"the code has {len(output.code.tokens)} Lean tokens; the gate reads at most {limits.max_tokens}",
        )
        verdict.static_passed = False
        return verdict
    if output.special_tokens:
        found = sorted(set(output.special_tokens))[:5]
        verdict.add(ReasonCode.boundary_corruption, f"special tokens in the output: {found}")
    truncated = output.truncated
    if truncated:
        verdict.add(ReasonCode.generation_truncated, "the output hit the token limit before its code was closed")
    _take_static(verdict, output.code.text, static, parsed, truncated, allow_native_decide)

    lean_results: list[LeanResult] = []
    if not verdict.reasons:
        if verifier is None:
            verdict.add(ReasonCode.lean_unavailable, "no Lean backend configured")
        else:
            prover_closers = closers(output.code)
            commands = lean_commands(parsed, reserved_name(statement), static.lean_code, prover_closers)
            verdict.lean_commands = commands
            lean_results = await verifier.check_sequence(commands, header)
            _judge_lean(verdict, lean_results, parsed.name, closing_lines(prover_closers))
    verdict.taxonomy = await asyncio.to_thread(
        taxonomy_facts,
        output=output,
        verdict_reasons=verdict.reasons,
        lean=verdict.lean,
        finish_reason=finish_reason,
        repeat_threshold=repeat_threshold,
        statement_matches=verdict.prover_statement_matches,
    )
    verdict.verified = (
        not verdict.reasons
        and len(lean_results) == len(STEP_NAMES)
        and all(result.infra_status == InfraStatus.ok for result in lean_results)
    )
    return verdict


def screen_code(
    statement: str,
    code: str,
    *,
    header: str,
    allow_native_decide: bool = False,
    open_allowlist: frozenset[str] = DEFAULT_OPEN_ALLOWLIST,
    limits: StaticLimits | None = None,
) -> Verdict:
    """The static layer over a code text that was stored, not read from a reply: a released row's or a run
    store's ``verified_code``. No Lean; ``verified`` stays False, ``static_passed`` says whether the code passes.

    ``checked_code`` is what the screen makes of it, by the same :func:`~repro.judge.policy.scan` that makes a
    reply's: the text Lean checks (the prover's imports within the header's and its informational ``#``
    commands blanked to spaces). On a text that already is one it changes nothing; on what an older repro
    stored (the prover's block with its ``import`` lines) it is the text the screen's Lean check compiled
    then. The stored text is screened afresh, never only stripped: a row rewritten after the run (an
    ``axiom``, a ``#eval``, a second import) is refused here exactly as in a reply, and never reaches the
    judge. Synchronous (it honours ``limits.timeout_s``); run it off the event loop for many rows.
    """
    limits = limits or StaticLimits()
    verdict = Verdict(verified=False, prover_code=code)
    parsed = _statement_for(verdict, statement, header)
    if parsed is None:
        return verdict
    if len(code) > limits.max_reply_chars:
        verdict.add(
            ReasonCode.reply_too_long,
            f"the code has {len(code)} characters; the gate reads at most {limits.max_reply_chars}",
        )
        verdict.static_passed = False
        return verdict
    if special := find_special_tokens(code):
        verdict.add(ReasonCode.boundary_corruption, f"special tokens in the code: {sorted(set(special))[:5]}")
    try:
        with time_limit(limits.timeout_s):
            source = LeanCode.of(code)
            if len(source.tokens) > limits.max_tokens:
                verdict.add(
                    ReasonCode.too_many_tokens,
                    f"the code has {len(source.tokens)} Lean tokens; the gate reads at most {limits.max_tokens}",
                )
                verdict.static_passed = False
                return verdict
            static = scan(
                source,
                header=header,
                allow_native_decide=allow_native_decide,
                open_allowlist=open_allowlist,
                main_name=parsed.name,
            )
    except StaticTimeout:
        verdict.add(
            ReasonCode.static_timeout,
            f"the static layer did not finish reading the code within {limits.timeout_s:g} s (no verdict)",
        )
        verdict.static_passed = False
        return verdict
    _take_static(verdict, code, static, parsed, False, allow_native_decide)
    return verdict


def _statement_for(verdict: Verdict, statement: str, header: str) -> Statement | None:
    """Our statement, read and checked (once per statement); None, with the reason on ``verdict``, if unusable."""
    parsed, in_statement = _our_statement(statement, header)
    if isinstance(parsed, StatementError):
        verdict.add(ReasonCode.statement_not_single_theorem, f"the formal statement is unusable: {parsed}")
        return None
    verdict.theorem_name = parsed.name
    if in_statement:
        verdict.add(
            ReasonCode.statement_not_single_theorem,
            f"the formal statement itself uses forbidden constructs: {in_statement[:3]}",
        )
        return None
    return parsed


def _take_static(
    verdict: Verdict, code: str, static: ScanResult, parsed: Statement, truncated: bool, allow_native_decide: bool
) -> None:
    """The static layer's findings on ``verdict``, the same for a reply's code and a stored code text."""
    verdict.prover_code = code
    # the text Lean checks (imports and ``#`` commands blanked), the same whatever the verdict: salvage,
    # feedback and the judge read it, and Lean's positions in it are the prover's
    verdict.checked_code = None if static.unterminated else static.lean_code
    _judge_static(verdict, static, parsed, truncated)
    verdict.static_passed = not verdict.reasons
    if static.uses_native_decide and not allow_native_decide:
        verdict.policy.append("native_decide")
    if static.uses_search_tactic:
        verdict.policy.append("search_tactic")
    if static.uses_kernel_decide:
        verdict.policy.append("kernel_decide")  # refused whatever allow_native_decide says


def _over_caps(verdict: Verdict, prover_output: str, limits: StaticLimits) -> bool:
    """Refuse, by name, a reply too large to read: counted in C, before any lexing."""
    if len(prover_output) > limits.max_reply_chars:
        verdict.add(
            ReasonCode.reply_too_long,
            f"the reply has {len(prover_output)} characters; the gate reads at most {limits.max_reply_chars}",
        )
    elif (fences := prover_output.count("```")) > limits.max_fences:
        verdict.add(ReasonCode.too_many_fences, f"the reply has {fences} code fences; at most {limits.max_fences}")
    return bool(verdict.reasons)


def _read_and_scan(
    prover_output: str,
    finish_reason: str,
    header: str,
    allow_native_decide: bool,
    open_allowlist: frozenset[str],
    parsed: Statement,
    limits: StaticLimits,
) -> tuple[ProverOutput, ScanResult | None]:
    """The static layer proper (in a worker thread): read the reply once, then apply the policy to its code.

    Returns no scan when the code has more tokens than ``limits.max_tokens``; raises
    :class:`StaticTimeout` past ``limits.timeout_s``.
    """
    with time_limit(limits.timeout_s):
        output = read_output(prover_output, finish_reason)
        if len(output.code.tokens) > limits.max_tokens:
            return output, None
        static = scan(
            output.code,
            header=header,
            allow_native_decide=allow_native_decide,
            open_allowlist=open_allowlist,
            main_name=parsed.name,
        )
        return output, static


@lru_cache(maxsize=256)
def _our_statement(statement: str, header: str) -> tuple[Statement | StatementError, tuple[str, ...]]:
    """Our statement read and checked once for all the samples proving it (k per statement)."""
    try:
        parsed = read_statement(statement)
    except StatementError as error:
        return error, ()
    found = forbidden_constructs(parsed.declaration, header=header, line_starts=False, main_name=parsed.name)
    return parsed, tuple(found)


def _judge_static(verdict: Verdict, static: ScanResult, parsed: Statement, truncated: bool) -> None:
    if static.unterminated:
        reason = ReasonCode.generation_truncated if truncated else ReasonCode.forbidden_construct
        verdict.add(reason, f"the code does not lex completely: {static.unterminated}")
        return
    for label in static.forbidden:
        verdict.add(ReasonCode.forbidden_construct, f"forbidden construct: {label}")
    if static.unlisted:
        verdict.add(ReasonCode.forbidden_construct, f"and {static.unlisted} more forbidden constructs, not listed")
    mains = [d for d in static.declarations if d.name == parsed.name]
    if not mains:
        others = [d.name for d in static.declarations]
        detail = f"; the output declares {others[:3]}" if others else ""
        verdict.add(ReasonCode.statement_mismatch, f"theorem {parsed.name!r} not found in the output{detail}")
    elif len(mains) > 1:
        verdict.add(ReasonCode.forbidden_construct, f"{len(mains)} declarations of {parsed.name!r}; one is allowed")
    elif mains[0].keyword not in ("theorem", "lemma"):
        verdict.add(ReasonCode.statement_mismatch, f"{parsed.name!r} is declared with {mains[0].keyword}")
    elif mains[0].modifiers:
        verdict.add(ReasonCode.forbidden_construct, f"the main theorem is {' '.join(mains[0].modifiers)}")


def _first_lines(messages: list[LeanMessage]) -> str:
    return " | ".join(m.text.splitlines()[0] if m.text else "" for m in messages[:3])


def _judge_lean(verdict: Verdict, results: list[LeanResult], name: str, scope_lines: int = 1) -> None:
    """Lean's four answers into reasons. ``scope_lines``: the first lines of the bridge command, which
    close the prover's scopes and our section (an error there is a scope error, not a type mismatch)."""
    verdict.lean_steps = results
    if not results:  # a backend that answered nothing: no step to name, and no verdict (never an IndexError)
        verdict.add(ReasonCode.lean_unavailable, "Lean infrastructure: the backend returned no result")
        return
    failure = next((r for r in results if r.infra_status != InfraStatus.ok), None)
    if failure is not None or len(results) != len(STEP_NAMES):
        failure = failure or results[-1]
        step = STEP_NAMES[min(results.index(failure), len(STEP_NAMES) - 1)]
        if failure.infra_status == InfraStatus.timeout:
            verdict.add(ReasonCode.lean_timeout, f"Lean timed out at the {step} step ({failure.detail or ''})")
        elif failure.infra_status == InfraStatus.reproducible_crash:
            verdict.add(
                ReasonCode.lean_crash, f"Lean crashed at the {step} step on every worker: {failure.detail or ''}"
            )
        else:
            verdict.add(
                ReasonCode.lean_unavailable,
                f"Lean infrastructure at the {step} step: {failure.infra_status}: {failure.detail or ''}",
            )
        verdict.lean = failure
        return
    target, proof, bridge, axioms = results
    verdict.lean = proof.model_copy(update={"elapsed_s": sum(r.elapsed_s for r in results)})
    verdict.messages = [*proof.messages, *bridge.messages, *axioms.messages]
    if target.has_error:
        verdict.add(
            ReasonCode.lean_error,
            "Lean: the formal statement itself does not elaborate: " + _first_lines(target.messages),
        )
        return
    errors = [m for m in proof.messages if m.severity == "error"]
    if errors:
        verdict.add(ReasonCode.lean_error, "Lean: " + _first_lines(errors))
    sorry_warning = any(
        "declaration uses 'sorry'" in m.text or "declaration uses `sorry`" in m.text for m in proof.messages
    )
    if proof.sorries or sorry_warning:
        verdict.add(ReasonCode.sorry, "Lean reports a sorry")
    scope_errors = [m for m in bridge.messages if m.severity == "error" and (m.line is None or m.line <= scope_lines)]
    if scope_errors:
        verdict.add(
            ReasonCode.lean_error,
            "Lean: the prover's code leaves a section or namespace open, or closed ours: " + _first_lines(scope_errors),
        )
    if any(m.severity == "error" and m not in scope_errors for m in bridge.messages):
        verdict.prover_statement_matches = False
        verdict.add(
            ReasonCode.statement_mismatch,
            f"Lean: {name!r} does not have the type of our statement: " + _first_lines(bridge.messages),
        )
    elif not errors and not scope_errors:
        verdict.prover_statement_matches = True
    listed = axioms_reported(axioms, name)
    verdict.axioms = listed
    if listed is None:
        verdict.add(
            ReasonCode.axiom_violation,
            "#print axioms gave no single clean axiom report: " + (_first_lines(axioms.messages) or "no message"),
        )
    else:
        extra = sorted(set(listed) - STANDARD_AXIOMS)
        if extra:
            verdict.add(ReasonCode.axiom_violation, f"non-standard axioms: {extra}")
