"""A stand-in Lean REPL for tests: speaks the REPL's JSON-lines protocol on stdin/stdout.

Commands arrive as one JSON object followed by a blank line; each reply is one JSON object followed
by a blank line, in the real reply shapes. Behaviour comes from rules (a JSON file named by
``--rules`` or ``REPRO_FAKE_REPL_RULES``): the first rule whose ``match`` regex is found in the
command decides. Actions: ``reply`` (give ``messages``/``sorries`` verbatim), ``hang``, ``crash``,
``garbage``, ``repl_error`` and ``slow`` (sleep ``delay_s`` then fall through to the default).

The default imitates Lean coarsely: ``sorry`` gives the sorry warning, ``#print axioms NAME`` lists
the standard axioms plus ``sorryAx``, ``Lean.ofReduceBool`` or declared axioms where the code uses
them. It is a protocol fake, not a checker: nothing it says is ever a real verdict.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from typing import Any


def _position(code: str, needle: str) -> dict[str, int]:
    return _position_at(code, max(code.find(needle), 0))


def _position_at(code: str, index: int) -> dict[str, int]:
    line = code.count("\n", 0, index) + 1
    column = index - (code.rfind("\n", 0, index) + 1)
    return {"line": line, "column": column}


def _default_reply(code: str, env_id: int, environments: dict[int, str]) -> dict[str, Any]:
    full = environments.get(env_id, "") + "\n" + code if env_id >= 0 else code
    messages: list[dict[str, Any]] = []
    sorries: list[dict[str, Any]] = []
    has_sorry = re.search(r"\bsorry\b|\badmit\b", full) is not None
    for match in re.finditer(r"\bsorry\b", code):
        position = _position_at(code, match.start())
        sorries.append(
            {
                "proofState": len(sorries),
                "pos": position,
                "goal": "⊢ False",
                "endPos": {"line": position["line"], "column": position["column"] + 5},
            }
        )
    if re.search(r"\bsorry\b", code):
        declaration = _position(code, "theorem") if "theorem" in code else {"line": 1, "column": 0}
        messages.append(
            {
                "severity": "warning",
                "pos": declaration,
                "endPos": {"line": declaration["line"], "column": declaration["column"] + 7},
                "data": "declaration uses `sorry`",
            }
        )
    for match in re.finditer(r"#print\s+axioms\s+([\w.'’]+)", code):
        name = match.group(1)
        axioms = ["propext", "Classical.choice", "Quot.sound"]
        if has_sorry:
            axioms.append("sorryAx")
        if re.search(r"native_decide|decide\s*\+native", full):
            axioms.append("Lean.ofReduceBool")
        axioms += re.findall(r"^\s*axiom\s+([\w.]+)", full, re.MULTILINE)
        messages.append(
            {
                "severity": "info",
                "pos": _position(code, match.group(0)),
                "endPos": _position(code, match.group(0)),
                "data": f"'{name}' depends on axioms: [{', '.join(axioms)}]",
            }
        )
    reply: dict[str, Any] = {}
    if sorries:
        reply["sorries"] = sorries
    if messages:
        reply["messages"] = messages
    return reply


def serve(rules: list[dict[str, Any]], stdin: Any = sys.stdin, stdout: Any = sys.stdout) -> None:
    environments: dict[int, str] = {}
    next_env = 0
    buffer: list[str] = []
    for line in stdin:
        if line.strip():
            buffer.append(line)
            continue
        if not buffer:
            continue
        text = "".join(buffer)
        buffer = []
        try:
            command = json.loads(text)
        except json.JSONDecodeError:
            stdout.write(json.dumps({"message": "Could not parse JSON"}) + "\n\n")
            stdout.flush()
            continue
        code = str(command.get("cmd", ""))
        env_id = command.get("env")
        started = time.time()
        reply: dict[str, Any] | None = None
        for rule in rules:
            if not re.search(rule.get("match", ""), code, re.DOTALL):
                continue
            action = rule.get("action", "reply")
            if action == "hang":
                time.sleep(3600)
            elif action == "crash":
                sys.stderr.write("INTERNAL PANIC: fake crash\n")
                sys.stderr.flush()
                os._exit(rule.get("exit_code", 1))
            elif action == "oom":
                sys.stderr.write("INTERNAL PANIC: out of memory\n")
                sys.stderr.flush()
                os._exit(137)
            elif action == "garbage":
                stdout.write("this is not json {{{\n\n")
                stdout.flush()
                reply = {}
            elif action == "repl_error":
                reply = {"message": rule.get("message", "Unknown environment.")}
            elif action == "slow":
                time.sleep(float(rule.get("delay_s", 0.5)))
                continue
            else:
                reply = json.loads(
                    json.dumps({k: rule[k] for k in ("messages", "sorries") if k in rule}).replace(
                        "{pid}", str(os.getpid())
                    )
                )
            break
        if (
            reply == {}
            and rules
            and any(r.get("action") == "garbage" and re.search(r.get("match", ""), code) for r in rules)
        ):
            continue
        if reply is None:
            if env_id is not None and env_id not in environments:
                reply = {"message": "Unknown environment."}
            else:
                reply = _default_reply(code, env_id if env_id is not None else -1, environments)
        if "message" not in reply:
            environments[next_env] = (environments.get(env_id, "") if env_id is not None else "") + "\n" + code
            reply["env"] = next_env
            next_env += 1
        _log(code, started)
        stdout.write(json.dumps(reply, ensure_ascii=False) + "\n\n")
        stdout.flush()


def _log(code: str, started: float) -> None:
    """With REPRO_FAKE_REPL_LOG set, append which process served which command, and when."""
    path = os.environ.get("REPRO_FAKE_REPL_LOG")
    if not path:
        return
    entry = {"pid": os.getpid(), "start": started, "end": time.time(), "cmd": code[:200]}
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(entry) + "\n")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rules", default=os.environ.get("REPRO_FAKE_REPL_RULES"))
    arguments = parser.parse_args(argv)
    rules: list[dict[str, Any]] = []
    if arguments.rules:
        with open(arguments.rules, encoding="utf-8") as handle:
            rules = json.load(handle)
    serve(rules)


if __name__ == "__main__":
    main()
