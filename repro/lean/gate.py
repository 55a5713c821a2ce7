"""The soundness gate: the only place that decides whether a proof counts as verified.

A proof counts only if all hold: no special tokens; the checked theorem is *our* statement (the
prover's proof is grafted onto the exact formal statement, never the prover's restatement); no
forbidden construct in the source; Lean reports no error and no sorry; ``#print axioms`` lists
only the standard axioms. Every reason that applied is listed, with Lean's messages.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from repro.lean.protocol import InfraStatus, LeanMessage, LeanResult, Verifier, axioms_reported
from repro.lean.source import (
    find_theorem,
    identifiers,
    normalize,
    statement_parts,
    strip_comments,
    strip_strings,
    theorems,
)
from repro.lean.taxonomy import TaxonomyFact, taxonomy_facts
from repro.llm.hygiene import extract_lean_block, find_special_tokens
from repro.records import ReasonCode

STANDARD_AXIOMS = frozenset({"propext", "Classical.choice", "Quot.sound"})

_FORBIDDEN_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"\bsorry\b", "sorry"),
    (r"\badmit\b", "admit"),
    (r"^\s*(?:private\s+|protected\s+)?axiom\s", "axiom declaration"),
    (r"#exit\b", "#exit"),
    (r"\bset_option\s+debug\.", "set_option debug.*"),
    (r"\bimplemented_by\b", "implemented_by"),
    (r"\bextern\b", "extern"),
    (r"\bunsafe\b", "unsafe"),
    (
        r"^\s*(?:@\[[^\]]*\]\s*)?(?:(?:local|scoped)\s+)?(?:macro|macro_rules|syntax|elab|elab_rules|notation|"
        r"infix|infixl|infixr|prefix|postfix)\b",
        "macro/syntax/notation declaration",
    ),
    (r"^\s*(?:@\[[^\]]*\]\s*)?(?:(?:local|scoped|private|noncomputable)\s+)*instance\b", "instance declaration"),
    (r"^\s*(?:local\s+|scoped\s+)?attribute\s*\[", "attribute change"),
    (r"\bopen\b[^\n]*\bin\b", "open ... in"),
    (r"\b(?:run_cmd|run_elab|run_meta|run_tac)\b|#eval\b", "metaprogram execution"),
    (r"\bapply\?|\bexact\?|\brw\?|\bsimp\?\??(?!\w)", "search tactic (apply?/exact?)"),
    (r"\bLean\.ofReduceBool\b|\bLean\.trustCompiler\b", "compiler-trusting axiom reference"),
)
_NATIVE = re.compile(r"\bnative_decide\b|\bdecide\s*\+\s*native\b|\bdecide\s*\(\s*config\s*:=\s*\{[^}]*native")
_REDEFINITION = re.compile(
    r"^\s*(?:@\[[^\]]*\]\s*)?(?:(?:private|protected|noncomputable)\s+)*(?:def|abbrev|opaque|structure|"
    r"inductive|class|theorem|lemma)\s+([^\s:(\[{]+)",
    re.MULTILINE,
)
_HEADER_LINE = re.compile(r"^\s*(import\s+\S+|open\s+[^\n]*|set_option\s+maxHeartbeats\s+\d+)\s*$", re.MULTILINE)


class Verdict(BaseModel):
    verified: bool
    reasons: list[ReasonCode] = Field(default_factory=list)
    taxonomy: list[TaxonomyFact] = Field(default_factory=list)
    details: list[str] = Field(default_factory=list)
    theorem_name: str | None = None
    checked_code: str | None = None
    prover_statement_matches: bool | None = None
    axioms: list[str] | None = None
    messages: list[LeanMessage] = Field(default_factory=list)
    lean: LeanResult | None = None

    def add(self, reason: ReasonCode, detail: str) -> None:
        if reason not in self.reasons:
            self.reasons.append(reason)
        self.details.append(detail)


def _header_opens(header: str) -> set[str]:
    names: set[str] = set()
    for match in re.finditer(r"^\s*open\s+([^\n]*)$", header, re.MULTILINE):
        names.update(match.group(1).split())
    return names


def forbidden_constructs(code: str, *, allow_native_decide: bool = False, header: str = "") -> list[str]:
    """Names of forbidden constructs in ``code`` (comments and strings ignored)."""
    clean = strip_strings(strip_comments(code))
    found = [label for pattern, label in _FORBIDDEN_PATTERNS if re.search(pattern, clean, re.MULTILINE)]
    if not allow_native_decide and _NATIVE.search(clean):
        found.append("native_decide")
    allowed_opens = _header_opens(header)
    for match in re.finditer(r"^\s*open\s+([^\n]*)$", clean, re.MULTILINE):
        extra = [name for name in match.group(1).split() if name not in allowed_opens and name != "in"]
        if extra and " in" not in match.group(0):
            found.append(f"open {' '.join(extra)} (not in the pinned header)")
    return found


def graft(statement: str, prover_code: str, name: str) -> tuple[str, str, bool] | None:
    """(code to check, the prover's own signature, whether it matches ours), or None if no theorem.

    The checked code is: the prover's helper declarations before the main theorem (header lines
    dropped: the header is ours), our exact signature, and the prover's proof body.
    """
    span = find_theorem(prover_code, name)
    if span is None:
        return None
    _, our_signature = statement_parts(statement)
    their_signature = span.signature(prover_code)
    helpers = _HEADER_LINE.sub("", prover_code[: span.start]).strip()
    body = span.body(prover_code)
    code = (helpers + "\n\n" if helpers else "") + f"{our_signature} := {body}"
    return code, their_signature, normalize(their_signature) == normalize(our_signature)


async def verify_proof(
    statement: str,
    prover_output: str,
    verifier: Verifier | None,
    *,
    header: str,
    allow_native_decide: bool = False,
    finish_reason: str = "stop",
    repeat_threshold: int = 8,
) -> Verdict:
    """Decide whether ``prover_output`` proves ``statement``. Never raises for bad proofs."""
    name, our_signature = statement_parts(statement)
    verdict = Verdict(verified=False, theorem_name=name)

    tokens = find_special_tokens(prover_output)
    if tokens:
        verdict.add(ReasonCode.boundary_corruption, f"special tokens in the output: {sorted(set(tokens))[:5]}")
    code = prover_output
    if "```" in prover_output:
        extraction = extract_lean_block(prover_output, finish_reason)
        code = extraction.code or ""
    span = find_theorem(code, name)
    others = [s.name for s in theorems(code) if s.name != name]
    grafted = graft(statement, code, name) if code else None
    if grafted is None:
        detail = (
            f"theorem {name!r} not found; the output declares {others[:3]}"
            if others
            else f"theorem {name!r} not found in the output"
        )
        verdict.add(ReasonCode.statement_mismatch, detail)
    else:
        checked, _, matches = grafted
        verdict.checked_code = checked
        verdict.prover_statement_matches = matches
        if not matches:
            verdict.add(
                ReasonCode.statement_mismatch,
                "the prover restated the theorem differently; only our statement was checked",
            )

    forbidden = forbidden_constructs(code, allow_native_decide=allow_native_decide, header=header)
    if span is not None:
        statement_names = identifiers(our_signature) - {name}
        before = strip_comments(code[: span.start])
        for match in _REDEFINITION.finditer(before):
            name_defined = match.group(1)
            if name_defined in statement_names or name_defined.split(".")[-1] in statement_names:
                forbidden.append(f"redefinition of {name_defined!r}, which the statement uses")
            elif "." in name_defined.strip("."):
                forbidden.append(f"definition {name_defined!r} inside an existing namespace")
        if re.search(r"^\s*namespace\b", before, re.MULTILINE):
            forbidden.append("namespace block before the statement")
    for label in forbidden:
        verdict.add(ReasonCode.forbidden_construct, f"forbidden construct: {label}")

    lean_result: LeanResult | None = None
    static_block = (
        ReasonCode.boundary_corruption in verdict.reasons or ReasonCode.forbidden_construct in verdict.reasons
    )
    if verdict.checked_code is not None and not static_block:
        if verifier is None:
            verdict.add(ReasonCode.lean_unavailable, "no Lean backend configured")
        else:
            lean_result = await verifier.check(f"{verdict.checked_code}\n\n#print axioms {name}\n", header)
            verdict.lean = lean_result
            verdict.messages = lean_result.messages
            _judge_lean(verdict, lean_result, name)
    verdict.taxonomy = taxonomy_facts(
        code=code,
        raw_output=prover_output,
        verdict_reasons=verdict.reasons,
        lean=lean_result,
        finish_reason=finish_reason,
        repeat_threshold=repeat_threshold,
        statement_matches=verdict.prover_statement_matches,
    )
    verdict.verified = not verdict.reasons and lean_result is not None and lean_result.ok
    return verdict


def _judge_lean(verdict: Verdict, result: LeanResult, name: str) -> None:
    if result.infra_status == InfraStatus.timeout:
        verdict.add(ReasonCode.lean_timeout, f"Lean check timed out ({result.detail or ''})")
        return
    if result.infra_status != InfraStatus.ok:
        verdict.add(ReasonCode.lean_unavailable, f"Lean infrastructure: {result.infra_status}: {result.detail or ''}")
        return
    errors = [m for m in result.messages if m.severity == "error"]
    if errors:
        verdict.add(ReasonCode.lean_error, "Lean: " + " | ".join(m.text.splitlines()[0] for m in errors[:3]))
    sorry_warning = any(
        "declaration uses 'sorry'" in m.text or "declaration uses `sorry`" in m.text for m in result.messages
    )
    if result.sorries or sorry_warning:
        verdict.add(ReasonCode.sorry, "Lean reports a sorry")
    axioms = axioms_reported(result, name)
    verdict.axioms = axioms
    if axioms is None:
        if not errors:
            verdict.add(ReasonCode.axiom_violation, "#print axioms printed nothing for the theorem")
    else:
        extra = sorted(set(axioms) - STANDARD_AXIOMS)
        if extra:
            verdict.add(ReasonCode.axiom_violation, f"non-standard axioms: {extra}")
