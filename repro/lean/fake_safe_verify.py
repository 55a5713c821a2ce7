"""A stand-in for ``lake`` running SafeVerify, for machines without Lean (CI): same command lines, same
output, same exit codes; decisions by reading the source text, not by a kernel.

It imitates ``GasStationManager/SafeVerify``, branch ``minif2f-kimina-check``, file ``Main.lean`` (what
``safe_verify TARGET.olean SUBMISSION.olean`` prints and when it throws) and its ``verify.py`` (the
``lake env lean -o X.olean X.lean`` compile step). Invoked as::

    python fake_safe_verify.py -d CHECKOUT env lean -o OUT.olean SRC.lean
    python fake_safe_verify.py -d CHECKOUT env safe_verify TARGET.olean SUBMISSION.olean

(run as a script, importing nothing of repro: it is started three times per replayed row).

What it models, in SafeVerify's order and words: a declared ``axiom`` (the kernel would replay it, and
``checkAxioms`` then names it), ``partial``/``unsafe`` definitions ("unsafe/partial function N
detected"), a target theorem missing from the submission ("N not found in submission"), another kind
("def N is not the same kind as the requirement theorem N"), another statement (compared as text with
whitespace collapsed, where the real tool compares elaborated types: "theorem N does not have the same
type as the requirement"), ``sorry``/``admit`` (``sorryAx``) and ``native_decide`` (``Lean.ofReduceBool``)
as non-standard axioms. What it does not model: elaboration, the kernel, definitional unfolding of a
restated type (a cosmetic restatement the real tool accepts is refused here). Its verdicts are recorded
``real: false`` by :func:`repro.judge.kernel.build_replayer`.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

_DECLARATION = re.compile(
    r"^(?P<modifiers>(?:(?:private|protected|noncomputable|unsafe|partial)\s+)*)"
    r"(?P<kind>theorem|lemma|def|abbrev|axiom|instance|example)\s+(?P<name>[^\s:({\[]+)?(?P<rest>.*?)(?=^\S|\Z)",
    re.MULTILINE | re.DOTALL,
)


def _declarations(source: str) -> list[tuple[set[str], str, str, str]]:
    """(modifiers, kind, name, signature) of each top-level declaration; lemma counts as theorem."""
    found = []
    for match in _DECLARATION.finditer(source):
        kind = "theorem" if match["kind"] == "lemma" else match["kind"]
        body = match["rest"]
        signature = body.split(":=", 1)[0] if ":=" in body else body
        found.append((set(match["modifiers"].split()), kind, match["name"] or "", " ".join(signature.split())))
    return found


def _problem(target: str, submission: str) -> str | None:
    declared = _declarations(submission)
    for modifiers, kind, name, _ in declared:
        if kind == "def" and modifiers & {"partial", "unsafe"}:
            return f"unsafe/partial function {name} detected"
    by_name = {name: (kind, signature) for _, kind, name, signature in declared if name}
    code = re.sub(r"--[^\n]*|/-.*?-/", " ", submission, flags=re.DOTALL)
    for _, kind, name, signature in _declarations(target):
        if kind not in ("theorem", "def"):
            continue
        if name not in by_name:
            return f"{name} not found in submission"
        other_kind, other_signature = by_name[name]
        if other_kind != kind:
            return f"{other_kind} {name} is not the same kind as the requirement {kind} {name}"
        if other_signature != signature:
            return f"theorem {name} does not have the same type as the requirement"
        axioms = [n for _, k, n, _ in declared if k == "axiom"]
        if axioms:
            return f"{axioms[0]} is not in the allowed set of standard axioms"
        if re.search(r"\b(sorry|admit)\b", code):
            return "sorryAx is not in the allowed set of standard axioms"
        if re.search(r"\bnative_decide\b", code):
            return "Lean.ofReduceBool is not in the allowed set of standard axioms"
    return None


def _read_olean(path: Path) -> str:
    payload = json.loads(path.read_text(encoding="utf-8"))
    return str(payload["source"])


def main(arguments: list[str]) -> int:
    if len(arguments) < 4 or arguments[0] != "-d" or arguments[2] != "env":
        print(f"fake lake: unsupported command line {arguments}", file=sys.stderr)
        return 2
    program, rest = arguments[3], arguments[4:]
    if program == "lean" and len(rest) == 3 and rest[0] == "-o":
        out, source = Path(rest[1]), Path(rest[2])
        if not source.is_file():
            print(f"file not found: {source}", file=sys.stderr)
            return 1
        text = source.read_text(encoding="utf-8")
        out.write_text(json.dumps({"fake_olean": True, "source": text}), encoding="utf-8")
        return 0
    if program == "safe_verify":
        if len(rest) < 2:
            print("uncaught exception: not enough arguments", file=sys.stderr)
            return 1
        target, submission = Path(rest[0]), Path(rest[1])
        for path in (target, submission):
            print("------------------")
            print(f"Replaying {path}")
            if not path.is_file():
                print(f"uncaught exception: object file '{path}' does not exist", file=sys.stderr)
                return 1
            print("Finished imports")
            print("Finished replay")
        problem = _problem(_read_olean(target), _read_olean(submission))
        if problem:
            print(f"found a problem in {submission}", file=sys.stderr)
            print(f"uncaught exception: {problem}", file=sys.stderr)
            return 1
        print("Finished with no errors.")
        return 0
    print(f"fake lake: unknown program {program}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
