"""A stand-in for ``lake env comparator config.json`` (leanprover/comparator at 19e111e), for machines without
Lean: it checks the command line, the project and the environment the way comparator reads them, prints
comparator's step lines, and decides by text (the checks of ``fake_safe_verify.py``). Its verdicts are
never real.

What it checks against the source (``Main.lean`` at 19e111e, ``runtests.lean``, ``README.md``):

- invoked as ``lake env COMPARATOR config.json`` in the project directory (``runtests.lean``:
  ``runCommandInDir tempDir "lake" #["env", comparatorPath.toString, "config.json"]``), COMPARATOR
  being a built ``.lake/build/bin/comparator``;
- the project: a ``lakefile.toml`` with ``Challenge`` and ``Solution`` libraries (``createAdditionalFiles``),
  a ``lean-toolchain``, ``Challenge.lean`` and ``Solution.lean``;
- ``config.json`` decodes as ``structure Config``: strings ``challenge_module``, ``solution_module``,
  string arrays ``theorem_names``, ``permitted_axioms``, optional ``definition_names``, ``enable_nanoda``,
  ``external_kernels``;
- ``COMPARATOR_LANDRUN`` and ``COMPARATOR_LEAN4EXPORT`` name executables (``M.run``).

What it prints, in comparator's words: ``Building M`` (``safeLakeBuild``), ``Exporting #[...] from M``
(``safeExport``), Lake's ``error: ./Solution.lean:L:C: MSG`` then ``uncaught exception: Child exited with 1``
for a build error, ``Challenge and solution theorem statement do not match: 'N'``, ``Const not found in
solution: 'N'``, ``Challenge and solution constant kind don't match: 'N'``, ``Illegal axiom detected: 'A'``,
and ``Your solution is okay!`` last on success. ``--fail HOW`` (killed, hang, unreadable, silent) fails
the whole command; ``--log FILE`` appends the command line, working directory and environment as JSON.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

try:
    from tests.doubles.fake_safe_verify import _declarations, _fail, _strip_comments, compile_errors
except ImportError:  # run as a script: its own directory is on sys.path
    from fake_safe_verify import _declarations, _fail, _strip_comments, compile_errors  # type: ignore[no-redef]

OKAY = "Your solution is okay!"
_CONFIG_FIELDS = {
    "challenge_module": str,
    "solution_module": str,
    "theorem_names": list,
    "permitted_axioms": list,
}
_OPTIONAL_FIELDS = {"definition_names", "enable_nanoda", "external_kernels"}


def command_problems(arguments: list[str], project: Path, env: dict[str, str]) -> list[str]:
    """Where this command line, project or environment departs from what comparator reads."""
    problems = []
    if len(arguments) != 3 or arguments[0] != "env" or arguments[2] != "config.json":
        problems.append(f"expected `lake env COMPARATOR config.json`, got {arguments}")
    elif not arguments[1].endswith("/.lake/build/bin/comparator") or not Path(arguments[1]).is_file():
        problems.append(f"{arguments[1]} is not a built comparator (.lake/build/bin/comparator)")
    lakefile = project / "lakefile.toml"
    text = lakefile.read_text(encoding="utf-8") if lakefile.is_file() else ""
    for library in ("Challenge", "Solution"):
        if not re.search(rf'\[\[lean_lib\]\]\s*\nname\s*=\s*"{library}"', text):
            problems.append(f"lakefile.toml has no [[lean_lib]] {library}")
    for name in ("lean-toolchain", "Challenge.lean", "Solution.lean", "config.json"):
        if not (project / name).is_file():
            problems.append(f"{name} missing from the project")
    for variable in ("COMPARATOR_LANDRUN", "COMPARATOR_LEAN4EXPORT"):
        value = env.get(variable)
        if not value or not os.access(value, os.X_OK):
            problems.append(f"{variable} does not name an executable ({value!r})")
    config_path = project / "config.json"
    if config_path.is_file():
        config = json.loads(config_path.read_text(encoding="utf-8"))
        for field, kind in _CONFIG_FIELDS.items():
            if not isinstance(config.get(field), kind):
                problems.append(f"config.json: {field} missing or not a {kind.__name__}")
        unknown = set(config) - set(_CONFIG_FIELDS) - _OPTIONAL_FIELDS
        if unknown:
            problems.append(f"config.json: fields comparator does not read: {sorted(unknown)}")
    return problems


def _refusal(challenge: str, solution: str, theorem: str, permitted: list[str]) -> str | None:
    target = {name: (kind, signature) for _, kind, name, signature, _ in _declarations(challenge)}
    found = {name: (kind, signature) for _, kind, name, signature, _ in _declarations(solution)}
    if theorem not in target:
        return f"Const not found in challenge: '{theorem}'"
    if theorem not in found:
        return f"Const not found in solution: '{theorem}'"
    if found[theorem][0] != target[theorem][0]:
        return f"Challenge and solution constant kind don't match: '{theorem}'"
    if found[theorem][1] != target[theorem][1]:
        return f"Challenge and solution theorem statement do not match: '{theorem}'"
    code = _strip_comments(solution)
    for _, kind, name, _, offset in _declarations(solution):
        if kind == "axiom" and name and name not in permitted:
            end = code.find("\n", offset)
            rest = code[:offset] + (code[end:] if end >= 0 else "")  # all but its own declaration line
            if re.search(rf"(?<![\w']){re.escape(name.rsplit('.', 1)[-1])}(?![\w'])", rest):
                return f"Illegal axiom detected: '{name}'"
    if re.search(r"\b(sorry|admit)\b", code):
        return "Illegal axiom detected: 'sorryAx'"
    if re.search(r"\bnative_decide\b|\bdecide\s*\+native\b", code):
        return "Illegal axiom detected: 'Lean.ofReduceBool'"
    return None


def main(arguments: list[str]) -> int:
    log: Path | None = None
    fail: str | None = None
    while arguments and arguments[0].startswith("--"):
        option, value, arguments = arguments[0], arguments[1], arguments[2:]
        if option == "--log":
            log = Path(value)
        elif option == "--fail":
            fail = value
    project = Path.cwd()
    if log is not None:
        with log.open("a", encoding="utf-8") as handle:
            keep = {k: v for k, v in os.environ.items() if k.startswith("COMPARATOR_")}
            handle.write(json.dumps({"argv": arguments, "cwd": str(project), "env": keep}) + "\n")
    problems = command_problems(arguments, project, dict(os.environ))
    if problems:
        print("fake comparator: " + "; ".join(problems), file=sys.stderr)
        return 2
    if fail is not None:
        return _fail(fail, None)
    config = json.loads((project / "config.json").read_text(encoding="utf-8"))
    challenge = (project / "Challenge.lean").read_text(encoding="utf-8")
    solution = (project / "Solution.lean").read_text(encoding="utf-8")
    targets = ["Nat", "String", "String.mk", "Char", "Quot", "Quot.mk", "Quot.lift", "Quot.ind"]
    exported = "#[" + ", ".join([*targets, *config["theorem_names"], *config["permitted_axioms"]]) + "]"
    for module, source in (("Challenge", challenge), ("Solution", solution)):
        print(f"Building {module}")
        errors = compile_errors(source)
        if errors:
            for line, column, message in errors:
                print(f"error: ./././{module}.lean:{line}:{column}: {message}")
            print("uncaught exception: Child exited with 1", file=sys.stderr)
            return 1
        print(f"Exporting {exported} from {module}")
    for theorem in config["theorem_names"]:
        refusal = _refusal(challenge, solution, theorem, config["permitted_axioms"])
        if refusal:
            print(f"uncaught exception: {refusal}", file=sys.stderr)
            return 1
    print("Running Lean default kernel on solution.")
    print("Lean default kernel accepts the solution")
    print(OKAY)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
