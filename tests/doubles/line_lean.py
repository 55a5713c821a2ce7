"""A REPL-protocol stand-in that answers line by line, to run the real Kimina Lean Server against.

The real server (``kimina-ast-server`` on PyPI; project-numina/kimina-lean-server) starts ``lake env
<repl_path>`` in its Mathlib directory and speaks the REPL's JSON-lines protocol to it (``server/repl.py``:
``{"cmd", "env"?, "gc"?}`` then a blank line; replies end at a blank line; the header runs first without
``env``, every later command and the reuse health check ``#eval 1`` with ``"env": 0``). This program speaks
that protocol as leanprover-community/repl does (``REPL/Main.lean``: each answered command gets the next
``env`` number) and "elaborates" with the rule set of the fake Kimina server, one source line at a time:
``#print "s"`` answers ``s`` as info at its line, ``#eval Lean.versionString`` the Lean of ``lean-toolchain``,
the Mathlib probe the commit in ``.git/HEAD`` (both read in the current directory, as Lean would),
``#print axioms X`` a clean report, a ``theorem``/``lemma`` line ending in ``sorry`` the sorry warning, a line
holding ``  bad`` an error; ``HANG`` never answers (until stdin closes) and ``SLOW`` waits ``FAKE_LEAN_SLOW_S`` seconds.
Run as a script by path (stdlib only): the Kimina server's environment need not import repro.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any


def lean_line(line: str, *, lean_version: str, mathlib_commit: str | None) -> list[tuple[str, str]]:
    """(severity, text) of the messages "Lean" gives for one source line."""
    stripped = line.strip()
    if stripped.startswith('#print "') and stripped.endswith('"'):
        return [("info", stripped[len('#print "') : -1])]
    if stripped == "#eval Lean.versionString":
        return [("info", json.dumps(lean_version))]
    if stripped.startswith("#eval show IO String from do"):
        if mathlib_commit is None:
            return [("error", "no such file or directory (error code: 2)\n  file: .git/HEAD")]
        return [("info", json.dumps(mathlib_commit))]
    if stripped.startswith("#print axioms "):
        name = stripped.removeprefix("#print axioms ").strip().removeprefix("_root_.")
        return [("info", f"'{name}' depends on axioms: [propext]")]
    if stripped.startswith(("theorem ", "lemma ")) and stripped.endswith("sorry"):
        return [("warning", "declaration uses 'sorry'")]
    if "  bad" in line or stripped == "bad":
        return [("error", "unsolved goals")]
    return []


def _here() -> tuple[str, str | None]:
    toolchain = Path("lean-toolchain")
    text = toolchain.read_text(encoding="utf-8") if toolchain.is_file() else "v4.15.0"
    found = re.search(r"v?(\d+\.\d+\.\d+)", text)
    head = Path(".git/HEAD")
    commit = head.read_text(encoding="utf-8").strip() if head.is_file() else None
    return (found.group(1) if found else "4.15.0"), commit


def answer(code: str, env: int) -> dict[str, Any]:
    version, commit = _here()
    messages = []
    for number, line in enumerate(code.split("\n"), start=1):
        for severity, data in lean_line(line, lean_version=version, mathlib_commit=commit):
            messages.append(
                {
                    "severity": severity,
                    "pos": {"line": number, "column": 0},
                    "endPos": {"line": number, "column": len(line)},
                    "data": data,
                }
            )
    sorries = [
        {"pos": {"line": number, "column": 0}, "endPos": {"line": number, "column": len(line)}, "goal": "⊢ True"}
        for number, line in enumerate(code.split("\n"), start=1)
        if line.strip().startswith(("theorem ", "lemma ")) and line.strip().endswith("sorry")
    ]
    reply: dict[str, Any] = {"env": env}
    if messages:
        reply["messages"] = messages
    if sorries:
        reply["sorries"] = sorries
    return reply


def main() -> None:
    environments = 0
    block: list[str] = []
    for line in sys.stdin:
        if line.strip():
            block.append(line)
            continue
        if not block:
            continue
        request = json.loads("".join(block))
        block = []
        code = str(request.get("cmd", ""))
        if "HANG" in code:  # never answers; ends when the server closes our stdin (killed, or killed us)
            sys.stdin.read()
            return
        if "SLOW" in code:
            time.sleep(float(os.environ.get("FAKE_LEAN_SLOW_S", "2")))
        if "env" in request and not 0 <= int(request["env"]) < environments:
            reply: dict[str, Any] = {"message": "Unknown environment."}
        else:
            reply = answer(code, environments)
            environments += 1
        sys.stdout.write(json.dumps(reply, ensure_ascii=False) + "\n\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
