"""A stand-in for ``lake`` running SafeVerify, for machines without Lean (CI): the same command lines, output
lines and exit codes; decisions by reading the source text, not by a kernel. Its verdicts are never real.

What it imitates (read at the pins of ``repro.judge.kernel.SAFEVERIFY_PINS``):

- ``GasStationManager/SafeVerify``, branch ``minif2f-kimina-check`` at 577e953 (and
  ``minif2f-deepseek-check`` at 0c0f7dc, whose ``Main.lean`` differs only in imports):
  ``verify.py`` compiles with ``["lake", "env", "lean", "-o", fname[:-5] + ".olean", fname]`` (line 11)
  and checks with ``["lake", "env", "safe_verify", otarg, osub]`` (line 33), target first;
  ``Main.lean`` ``main`` (134-146) replays the target, then the submission in a task, printing
  ``------------------`` / ``Replaying F`` / ``Finished imports`` / ``Finished replay`` for each
  (``replayFile``, 69-84), ``found a problem in SUBMISSION`` on stderr before re-throwing a refusal
  (143), and ``Finished with no errors.`` last on success (145). Refusals, in its words: ``{a} is not
  in the allowed set of standard axioms`` (33), ``{kind} {n} is not the same kind as the requirement
  {kind} {n}`` (110), ``theorem {n} does not have the same type as the requirement`` (113), ``{n} not
  found in submission`` (121), ``object file '{f}' does not exist`` (73). The Lean runtime prints an
  uncaught ``IO.userError`` as ``uncaught exception: MSG`` and exits 1. Never ``unsafe/partial function
  {n} detected`` (104): that check reads the constants ``Environment.replay`` added, and replay skips
  unsafe and partial ones (Lean ``src/Lean/Replay.lean``), so an unused ``partial``/``unsafe`` definition
  passes the pinned tool, and so does a module whose objects prover code forged (``corrupt`` below): the
  pinned replay takes them as read from the file.
- repro's own ``Rebuild.lean`` (``lake env lean --run Rebuild.lean T.olean S.olean``), its command line,
  answers and exit codes: ``repro-rebuild-passed`` (exit 0) or ``repro-rebuild-refused<TAB>KIND<TAB>WHY``
  (exit 2): ``unsafe`` for a ``partial``/``unsafe`` definition, ``corrupted`` for a forged output, else the
  stand-in tool's own comparison of the texts as ``not_found``/``kind_mismatch``/``type_mismatch``/``axiom``.
- Lean's compile errors it reproduces, as ``FILE:LINE:COL: error: MSG``: an ``import`` after the file's
  first command ("invalid 'import' command, it must be used in the beginning of the file"), an
  unterminated block comment ("unterminated comment"), and a second top-level declaration of one name
  ("'N' has already been declared").

What it decides by text (where the real tool compares elaborated types): another statement is
whitespace-collapsed text that differs (a cosmetic restatement the real tool accepts is refused here);
an axiom counts when its name is used outside its own declaration (SafeVerify collects the target
theorem's axioms transitively); ``sorry``/``admit`` are ``sorryAx`` and ``native_decide`` /
``decide +native`` are ``Lean.ofReduceBool``. No elaboration, no kernel.

Failures, chosen by the options before lake's own arguments (``--fail STEP:HOW``, STEP one of
``target``, ``submission``, ``safe_verify``; HOW one of ``killed`` (SIGKILL, as an out-of-memory kill),
``hang`` (sleeps, with a child that sleeps too; ``--pids FILE`` records both), ``unreadable`` (prints
noise, exits 0), ``silent`` (exits 1 without a word), ``crash`` (a Lake-style error, exit 1), ``abort`` and
``segv`` (Lean itself crashing: SIGABRT, SIGSEGV), ``abort-once=FILE`` (SIGABRT only while FILE does not exist,
then it is created: a node's passing fault), ``abort-if=FILE`` (SIGABRT once FILE exists: a node that broke
after its first compiles), ``tamper``
(a compile that first rewrites our target's ``.olean`` and the checkout, as prover code could), ``forge``
(the submission's output rewritten as a module with the same theorem and no imports), ``symlink`` (the
output left as a link to ``/dev/zero``), ``corrupt`` (the output holds an object prover code forged with
``unsafeCast``: a ``Nat`` literal that prints as a negative number, which the kernel's replay of the file
accepts), ``runtime-only`` (the output lists the header's modules with ``runtimeOnly`` set, so importing it
imports nothing), and for ``safe_verify`` ``rewrite`` (an exploit of its loader: it rewrites the files it was given,
then passes)), STEP ``imports`` also (repro's ``ImportsOf.lean``, which the stand-in answers from each file's
header) and STEP ``rebuild`` (repro's ``Rebuild.lean``), so each
classification of :mod:`repro.judge.kernel` is exercised. ``--log FILE`` appends each command line as JSON;
``--cost S`` makes each step take S seconds more (``benchmarks/judge_cost.py``).

Run as a script, importing nothing of repro (it is started three times per judgement).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

IMITATES = {
    "repository": "https://github.com/GasStationManager/SafeVerify",
    "branches": {"v4.9.0": "minif2f-deepseek-check@0c0f7dc", "v4.15.0": "minif2f-kimina-check@577e953"},
    "files": ["Main.lean", "verify.py"],
}
FINISHED = "Finished with no errors."

_DECLARATION = re.compile(
    r"^(?P<modifiers>(?:(?:private|protected|noncomputable|unsafe|partial)\s+)*)"
    r"(?P<kind>theorem|lemma|def|abbrev|axiom|instance|example)\s+(?P<name>[^\s:({\[]+)?(?P<rest>.*?)(?=^\S|\Z)",
    re.MULTILINE | re.DOTALL,
)


def _strip_comments(source: str) -> str:
    """Comments replaced by spaces (newlines kept), so positions stay where Lean reports them."""
    return re.sub(r"--[^\n]*|/-.*?-/", lambda m: re.sub(r"[^\n]", " ", m.group(0)), source, flags=re.DOTALL)


_NAMESPACE = re.compile(r"^(namespace|end)[ \t]+(\S+)[ \t]*$", re.MULTILINE)
# constants every environment under our header already has: declaring one again is Lean's error
_CORE_NAMES = frozenset({"propext", "Quot.sound", "Classical.choice", "Nat", "True", "False", "HDiv.hDiv"})


def _declarations(source: str) -> list[tuple[set[str], str, str, str, int]]:
    """(modifiers, kind, full name, signature, offset) of each top-level declaration; lemma counts as theorem.
    The name is what Lean declares: inside ``namespace N`` ... ``end N`` it is ``N.name``, ``_root_.`` drops
    the prefix."""
    code = _strip_comments(source)
    scopes = [(m.start(), m.group(1), m.group(2)) for m in _NAMESPACE.finditer(code)]
    found = []
    for match in _DECLARATION.finditer(code):
        stack: list[str] = []
        for offset, word, name in scopes:
            if offset > match.start():
                break
            if word == "namespace":
                stack.append(name)
            elif stack and stack[-1] == name:
                stack.pop()
        written = match["name"] or ""
        full = written.removeprefix("_root_.") if written.startswith("_root_.") else ".".join([*stack, written])
        kind = "theorem" if match["kind"] == "lemma" else match["kind"]
        body = match["rest"]
        signature = body.split(":=", 1)[0] if ":=" in body else body
        found.append(
            (set(match["modifiers"].split()), kind, full if written else "", " ".join(signature.split()), match.start())
        )
    return found


def _position(source: str, offset: int) -> tuple[int, int]:
    line = source.count("\n", 0, offset) + 1
    return line, offset - (source.rfind("\n", 0, offset) + 1)


def compile_errors(source: str) -> list[tuple[int, int, str]]:
    """The Lean errors this stand-in reproduces, as (line, column, message)."""
    errors = []
    opened = [m.start() for m in re.finditer(r"/-", source)]
    if opened and source.count("-/") < len(opened):
        errors.append((*_position(source, opened[-1]), "unterminated comment"))
        return errors
    code = _strip_comments(source)
    seen_command = False
    for match in re.finditer(r"^(\S[^\n]*)$", code, re.MULTILINE):
        word = match.group(1).split()[0]
        if word == "import":
            if seen_command:
                message = "invalid 'import' command, it must be used in the beginning of the file"
                errors.append((*_position(source, match.start()), message))
        else:
            seen_command = True
    names: dict[str, int] = {}
    for _, _, name, _, offset in _declarations(source):
        if name and (name in names or name in _CORE_NAMES):
            errors.append((*_position(source, offset), f"'{name}' has already been declared"))
        names.setdefault(name, offset)
    return errors


def _problem(target: str, submission: str) -> str | None:
    """SafeVerify's refusal at the pins (Main.lean ``replayFile``), in its words, or None."""
    declared = _declarations(submission)
    by_name = {name: (kind, signature) for _, kind, name, signature, _ in declared if name}
    code = _strip_comments(submission)
    for _, kind, name, signature, _ in _declarations(target):
        if kind not in ("theorem", "def"):
            continue
        if name not in by_name:
            return f"{name} not found in submission"
        other_kind, other_signature = by_name[name]
        if other_kind != kind:
            return f"{other_kind} {name} is not the same kind as the requirement {kind} {name}"
        if other_signature != signature:
            return f"theorem {name} does not have the same type as the requirement"
        for _, axiom_kind, axiom, _, offset in declared:
            if axiom_kind == "axiom" and axiom:
                end = code.find("\n", offset)
                rest = code[:offset] + (code[end:] if end >= 0 else "")  # all but its own declaration line
                short = axiom.rsplit(".", 1)[-1]  # used qualified or, inside its namespace, by its last part
                if re.search(rf"(?<![\w']){re.escape(short)}(?![\w'])", rest):
                    return f"{axiom} is not in the allowed set of standard axioms"
        if re.search(r"\b(sorry|admit)\b", code):
            return "sorryAx is not in the allowed set of standard axioms"
        if re.search(r"\bnative_decide\b|\bdecide\s*\+native\b", code):
            return "Lean.ofReduceBool is not in the allowed set of standard axioms"
    return None


FORGED_LITERAL = -(2**100)  # what ``corrupt`` stands for: a negative big number stored as a ``Nat`` literal
_KINDS = (
    ("not found in submission", "not_found"),
    ("is not the same kind", "kind_mismatch"),
    ("does not have the same type", "type_mismatch"),
    ("allowed set of standard axioms", "axiom"),
)


def _rebuild_refusal(target: str, submission: str, corrupted: bool) -> tuple[str, str] | None:
    """repro's Rebuild.lean, as (kind, why) or None (passed): the checks the pinned tool lacks, then its own."""
    if corrupted:
        return "corrupted", f"a natural number object that prints as {FORGED_LITERAL}"
    for modifiers, kind, name, _, _ in _declarations(submission):
        if "unsafe" in modifiers:
            return "unsafe", f"unsafe constant {name}: repro's check refuses unsafe code"
        if kind == "def" and "partial" in modifiers:
            return "unsafe", f"partial definition {name}: repro's check refuses partial definitions"
    problem = _problem(target, submission)
    if problem is None:
        return None
    kind = next(kind for words, kind in _KINDS if words in problem)
    return kind, problem.replace("in submission", "in the rebuilt submission") + " (rebuilt)"


def _imports(source: str) -> list[str]:
    """The modules a source's header imports (its leading ``import`` lines), as Lean records them."""
    found = []
    for line in _strip_comments(source).splitlines():
        if line.startswith("import "):
            found.extend(line.split()[1:])
        elif line.strip():
            break
    return found


def _read_olean(path: Path) -> str:
    payload = json.loads(path.read_text(encoding="utf-8"))
    return str(payload["source"])


def _runtime_only(path: Path) -> bool:
    """Prover code at elaboration marked every import runtimeOnly (importModules then skips them all)."""
    return bool(json.loads(path.read_text(encoding="utf-8")).get("runtime_only"))


def _forged(path: Path) -> bool:
    return bool(json.loads(path.read_text(encoding="utf-8")).get("corrupted"))


def _fail(how: str, pids: Path | None) -> int:
    if how == "killed":
        os.kill(os.getpid(), signal.SIGKILL)
    if how in ("abort", "segv"):  # Lean itself crashing (a failed assertion, an uncaught stack overflow)
        signal.signal(signal.SIGABRT if how == "abort" else signal.SIGSEGV, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGABRT if how == "abort" else signal.SIGSEGV)
    if how == "hang":
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
        if pids is not None:
            pids.write_text(json.dumps([os.getpid(), child.pid]), encoding="utf-8")
        time.sleep(3600)
    if how == "unreadable":
        print("\x00\x01 PANIC at Lean.Environment <garbled>")
        return 0
    if how == "silent":
        return 1
    print("error: could not execute external process 'lean' (no such file or directory)", file=sys.stderr)
    return 1


def _tamper(source: Path, checkout: Path) -> None:
    """What prover code run at elaboration time could try: rewrite our target's output and the tool checkout
    (a target that says ``True``), then let the compile go on as usual."""
    forged = json.dumps({"fake_olean": True, "source": "theorem t : True := trivial"})
    # where the judge keeps compiled targets (repro.judge.kernel.TargetCache), found as an adversary would
    targets = sorted(Path(tempfile.gettempdir()).glob("repro-judge-targets-*/*/Target.olean"))
    for victim in (*targets, checkout / "lakefile.toml"):
        try:
            victim.write_text(forged, encoding="utf-8")
            print(f"tampered with {victim}")
        except OSError as error:
            print(f"could not write {victim}: {error}")


def main(arguments: list[str]) -> int:
    failures: dict[str, str] = {}
    log: Path | None = None
    pids: Path | None = None
    while arguments and arguments[0].startswith("--"):
        option, value, arguments = arguments[0], arguments[1], arguments[2:]
        if option == "--fail":
            step, _, kind = value.partition(":")
            failures[step] = kind
        elif option == "--log":
            log = Path(value)
        elif option == "--pids":
            pids = Path(value)
        elif option == "--cost":  # a tool of fixed cost: each step takes this many seconds (benchmarks)
            time.sleep(float(value))
    if log is not None:
        with log.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({"argv": arguments, "cwd": os.getcwd(), "env": sorted(os.environ)}) + "\n")
    if len(arguments) < 4 or arguments[0] != "-d" or arguments[2] != "env":
        print(f"fake lake: unsupported command line {arguments}", file=sys.stderr)
        return 2
    program, rest = arguments[3], arguments[4:]
    if program == "lean" and len(rest) >= 2 and rest[0] == "--run" and Path(rest[1]).name == "ImportsOf.lean":
        # repro's own ImportsOf.lean: each file's imports (readModuleData ... mod.imports), then its marker
        if "imports" in failures:
            return _fail(failures["imports"], pids)
        for path in rest[2:]:
            runtime_only = "true" if _runtime_only(Path(path)) else "false"
            for module in _imports(_read_olean(Path(path))):
                print(f"{path}\t{module}\t{runtime_only}")
        print("repro-imports-done")
        return 0
    if program == "lean" and len(rest) == 4 and rest[0] == "--run" and Path(rest[1]).name == "Rebuild.lean":
        if not Path(rest[1]).is_file():
            print(f"file not found: {rest[1]}", file=sys.stderr)
            return 1
        if "rebuild" in failures:
            return _fail(failures["rebuild"], pids)
        target, submission = Path(rest[2]), Path(rest[3])
        refusal = _rebuild_refusal(_read_olean(target), _read_olean(submission), _forged(submission))
        if refusal is None:
            print("repro-rebuild-passed")
            return 0
        print(f"repro-rebuild-refused\t{refusal[0]}\t{refusal[1]}")
        return 2
    if program == "lean" and len(rest) == 3 and rest[0] == "-o":
        out, source = Path(rest[1]), Path(rest[2])
        step = "target" if source.stem == "Target" else "submission"
        how = failures.get(step)
        if how is not None and how.startswith("abort-once="):  # a crash of the node's, once: the marker remembers
            marker = Path(how.partition("=")[2])
            how = None if marker.exists() else "abort"
            marker.touch()
        if how is not None and how.startswith("abort-if="):  # a node that broke later: crashes once FILE exists
            how = "abort" if Path(how.partition("=")[2]).exists() else None
        if how == "tamper":
            _tamper(source, Path(arguments[1]))
        elif how is not None and how not in ("forge", "symlink", "corrupt", "runtime-only"):
            return _fail(how, pids)
        if not source.is_file():
            print(f"file not found: {source}", file=sys.stderr)
            return 1
        text = source.read_text(encoding="utf-8")
        errors = compile_errors(text)
        for line, column, message in errors:
            print(f"{source}:{line}:{column}: error: {message}")
        if errors:
            return 1
        if re.search(r"\b(sorry|admit)\b", _strip_comments(text)):
            line, column = _position(text, re.search(r"\b(sorry|admit)\b", _strip_comments(text)).start())  # type: ignore[union-attr]
            print(f"{source}:{line}:{column}: warning: declaration uses 'sorry'")
        out.write_text(json.dumps({"fake_olean": True, "source": text}), encoding="utf-8")
        if how == "forge":  # prover code rewrote the output: a module with the same theorem and no imports
            body = "\n".join(line for line in text.splitlines() if not line.startswith("import "))
            out.write_text(json.dumps({"fake_olean": True, "source": body}), encoding="utf-8")
        if how == "corrupt":  # prover code forged an object of the module (unsafeCast at elaboration)
            out.write_text(json.dumps({"fake_olean": True, "source": text, "corrupted": True}), encoding="utf-8")
        if how == "runtime-only":  # prover code set runtimeOnly on every import: the module imports nothing
            out.write_text(json.dumps({"fake_olean": True, "source": text, "runtime_only": True}), encoding="utf-8")
        if how == "symlink":  # prover code left a link where Lean writes a file
            out.unlink()
            out.symlink_to("/dev/zero")
        return 0
    if program == "safe_verify":
        if failures.get("safe_verify") == "rewrite":  # a loader exploit: rewrite what later steps read, then pass
            for path in rest[:2]:
                try:
                    Path(path).write_text(json.dumps({"fake_olean": True, "source": "theorem t : True := trivial"}))
                    print(f"rewrote {path}")
                except OSError as error:
                    print(f"could not write {path}: {error}")
            print(FINISHED)
            return 0
        if "safe_verify" in failures:
            return _fail(failures["safe_verify"], pids)
        if len(rest) < 2:
            print("uncaught exception: not enough arguments", file=sys.stderr)
            return 1
        target, submission = Path(rest[0]), Path(rest[1])
        for path in (target, submission):
            print("------------------")
            print(f"Replaying {path}")
            if not path.is_file():
                if path == submission:
                    print(f"found a problem in {submission}", file=sys.stderr)
                print(f"uncaught exception: object file '{path}' does not exist", file=sys.stderr)
                return 1
            print("Finished imports")
            print("Finished replay")
        problem = _problem(_read_olean(target), _read_olean(submission))
        if problem:
            print(f"found a problem in {submission}", file=sys.stderr)
            print(f"uncaught exception: {problem}", file=sys.stderr)
            return 1
        print(FINISHED)
        return 0
    print(f"fake lake: unknown program {program}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
