"""A stand-in Lean REPL for tests: speaks the REPL's JSON-lines protocol on stdin/stdout.

The protocol it imitates is leanprover-community/repl's at the tags ``v4.15.0`` and ``v4.9.0`` (the REPL's
own test transcripts at those tags, /work/shared/data/repl-transcripts/, which tests/test_repl_transcripts.py
replays against it). Run it as ``python -m tests.doubles.fake_repl`` from the repository root
(:data:`tests.doubles.fake_backend.FAKE_REPL_COMMAND` from anywhere). It is a test double, not part of repro.

Commands arrive as one JSON object followed by a blank line; each reply is one JSON object followed
by a blank line, in the real reply shapes. Like the real REPL, every reply that runs carries a new
``env`` number (0, 1, 2, ...), a command with ``"env": N`` runs in the environment command N left,
an unknown ``env`` is refused with ``{"message": "Unknown environment."}`` and ``import`` is only
accepted without ``env``. Behaviour comes from rules (a JSON file named by ``--rules`` or
``REPRO_FAKE_REPL_RULES``): the first rule whose ``match`` regex is found in the command decides.
Actions: ``reply`` (give ``messages``/``sorries`` verbatim), ``hang``, ``crash``, ``garbage``,
``repl_error``, ``slow`` (sleep ``delay_s`` then fall through to the default) and ``print_before``
(write ``stdout`` verbatim to stdout, as code Lean runs could from a thread of its own, then fall
through: the shape of the red team's stand-in REPL, /work/adv/14-stdout-json-forgery) and
``print_after`` (the same, written after this command's reply: a thread still printing when Lean
answered, read by whoever asks next).

A command may hold several Lean commands; the fake reads one more, the one the worker pool frames each
command with (:mod:`repro.lean.framing`): a last line ``#print "text"`` after a blank line is answered
as Lean does (``src/Lean/Elab/Print.lean``): an info message ``text`` at that line, after the others.

The default imitates Lean coarsely, on lexed tokens: ``sorry`` gives the sorry warning; the bridge
``theorem A_bridge : type_of% @A := @B`` elaborates only if B's signature equals A's after lexing and
normalising whitespace, comments, binder grouping and ``ℕ``/``Nat``-style spellings (otherwise a
type mismatch: conservative, since real Lean also accepts other definitionally equal forms);
``#print axioms NAME`` lists the standard axioms plus ``sorryAx``, ``Lean.ofReduceBool`` or
declared axioms where the environment's code uses them. Our trusted statement checks (vacuity,
satisfiability, refutation, witness: :mod:`repro.lean.statement_checks`) and a prover's theorems are
judged by :mod:`tests.doubles.fake_semantics`, our answer checks (:mod:`repro.lean.answer_checks`) by
:mod:`tests.doubles.fake_answers`: a theorem is accepted only where the fake has shown its
statement true (evaluated at its pinned values, or derived by the modelled omega/linarith; proof terms
are not checked), refused where real Lean refuses it (a false statement, a proof from ``False`` under
hypotheses that hold together, an unknown hypothesis name, pinned values the proof never reads), and
answered with an error saying the fake cannot judge it everywhere else: never a success it cannot back.
It is a protocol fake, not a checker: nothing it says is ever a real verdict.

The protocol imitated is the one of leanprover-community/repl, ``REPL/JSON.lean`` (command and reply
shapes: ``env``, ``messages`` with ``pos``/``endPos``/``severity``/``data``, ``sorries``) and
``REPL/Main.lean`` (environments numbered per reply, ``Unknown environment.``, blank-line framing).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from typing import Any

from repro.lean.text.lexer import Kind, Token, identifier_parts, lex, line_column, significant
from tests.doubles.fake_answers import judge_answer_check
from tests.doubles.fake_semantics import Outcome, judge_check, judge_theorem

_SPELLINGS = {"ℕ": "Nat", "ℤ": "Int", "ℚ": "Rat", "ℝ": "Real", "ℂ": "Complex", "λ": "fun", "->": "→", "<->": "↔"}
_STANDARD = ["propext", "Classical.choice", "Quot.sound"]
_BRIDGE = re.compile(r"^\s*(?:example|theorem\s+\S+)\s*:\s*type_of%\s*@(\S+)\s*:=\s*@(\S+)\s*$")
_AXIOMS = re.compile(r"^\s*#print\s+axioms\s+(\S+)\s*$")
_PRINTED_STRING = re.compile(r'\n\n#print "([^"\\\n]*)"\s*$')


def _split_printed_string(command: str) -> tuple[str, dict[str, Any] | None]:
    """The command without a trailing ``#print "text"`` line, and the info message Lean gives for that line."""
    found = _PRINTED_STRING.search(command)
    if found is None:
        return command, None
    line = command[: found.start()].count("\n") + 3
    message = {
        "severity": "info",
        "pos": {"line": line, "column": 0},
        "endPos": {"line": line, "column": 6},
        "data": found.group(1),
    }
    return command[: found.start()], message


_CLOSING_LINES = re.compile(r"(?:[ \t]*end\b[^\n]*\n)+")


def _position_at(code: str, index: int) -> dict[str, int]:
    line, column = line_column(code, index)
    return {"line": line, "column": column}


def _message(code: str, start: int, end: int, severity: str, data: str) -> dict[str, Any]:
    return {"severity": severity, "pos": _position_at(code, start), "endPos": _position_at(code, end), "data": data}


def _declarations(code: str) -> dict[str, list[Token]]:
    """Each theorem/lemma/def/abbrev/axiom name, with its tokens up to the next declaration."""
    words = significant(lex(code))
    found: dict[str, list[Token]] = {}
    starts = [
        i
        for i, t in enumerate(words[:-1])
        if t.kind == Kind.identifier and t.text in ("theorem", "lemma", "def", "abbrev", "axiom", "example")
    ]
    for position, index in enumerate(starts):
        end = starts[position + 1] if position + 1 < len(starts) else len(words)
        if words[index].text != "example":
            found[words[index + 1].name] = words[index:end]
    return found


def _normal_signature(tokens: list[Token]) -> list[str]:
    """Signature tokens after the name, spelled uniformly, each binder group split per variable."""
    texts = [_SPELLINGS.get(t.text, t.text) for t in tokens[2:]]
    out: list[str] = []
    index = 0
    while index < len(texts):
        text = texts[index]
        closing = {"(": ")", "{": "}", "[": "]", "⦃": "⦄"}.get(text)
        if closing and closing in texts[index:]:
            close = texts.index(closing, index)
            group = texts[index + 1 : close]
            if ":" in group and "(" not in group[: group.index(":")]:
                colon = group.index(":")
                for variable in group[:colon]:
                    out += [text, variable, ":", *group[colon + 1 :], closing]
                index = close + 1
                continue
        if text == ":":
            out += texts[index:]
            break
        out.append(text)
        index += 1
    return out


def _signature_matches(target: list[Token], candidate: list[Token]) -> bool:
    ours = _normal_signature(target)
    theirs = _normal_signature(candidate)
    tail = next((i for i in range(len(ours) - 2) if ours[i : i + 3] == [":=", "by", "sorry"]), None)
    if tail is None:
        return False
    ours = ours[:tail]
    return theirs[: len(ours)] == ours and theirs[len(ours) : len(ours) + 1] == [":="]


def _uses_sorry(tokens: list[Token]) -> bool:
    return any(t.kind == Kind.identifier and t.text in ("sorry", "admit") for t in tokens)


def _statement_texts(history: list[str]) -> dict[str, str]:
    """Our declarations ``theorem NAME ... := by sorry`` in the environment, by name (for the statement checks)."""
    found = {}
    for command in history:
        text = command.strip().removeprefix("set_option autoImplicit false in").strip()
        words = text.split(None, 2)
        if len(words) == 3 and words[0] == "theorem":
            found[words[1]] = text
    return found


def _scope_name(code: str, words: list[Token], index: int) -> list[str]:
    """The name after ``section``/``namespace``/``end`` on the same line, per component (empty: none)."""
    if index + 1 >= len(words):
        return []
    following = words[index + 1]
    if following.kind != Kind.identifier or "\n" in code[words[index].end : following.start]:
        return []
    if following.text in ("section", "namespace", "end", "theorem", "lemma", "def", "example", "open"):
        return []
    return identifier_parts(following.text)


def _run_scopes(code: str, scopes: list[str]) -> list[dict[str, Any]]:
    """Apply ``code``'s ``section``/``namespace``/``end`` to ``scopes`` (innermost last, the root not
    listed) as Lean's ``addScopes`` and ``elabEnd`` do (``src/Lean/Elab/BuiltinCommand.lean``): ``end``
    drops its scopes first, then errs when the names do not match. Returns the errors, placed at the ``end``."""
    errors: list[dict[str, Any]] = []
    words = significant(lex(code))
    for index, token in enumerate(words):
        if token.kind != Kind.identifier or token.text not in ("section", "namespace", "end"):
            continue
        parts = _scope_name(code, words, index)
        if token.text == "section":
            scopes.extend(parts or [""])
        elif token.text == "namespace":
            scopes.extend(parts)
        else:
            size = len(parts) or 1
            closed = scopes[len(scopes) - size :][::-1] if size <= len(scopes) else None
            del scopes[max(len(scopes) - size, 0) :]
            end = words[index + 1].end if parts else token.end
            if closed is None:
                errors.append(_message(code, token.start, end, "error", "invalid 'end', insufficient scopes"))
            elif not parts and closed[0] != "":
                errors.append(_message(code, token.start, end, "error", "invalid 'end', name is missing"))
            elif parts and closed != parts[::-1]:
                errors.append(_message(code, token.start, end, "error", "invalid 'end', name mismatch"))
    return errors


def _scope_errors(history: list[str]) -> list[dict[str, Any]]:
    """The scope errors of the last command of ``history``, in the scopes the earlier ones left open."""
    scopes: list[str] = []
    for command in history[:-1]:
        _run_scopes(command, scopes)
    return _run_scopes(history[-1], scopes)


def _default_reply(code: str, history: list[str]) -> dict[str, Any]:
    answer_check = judge_answer_check(code.strip(), _statement_texts(history[:-1]))
    if answer_check is not None:  # our answer checks: decided on the elaboration the fake models
        accepted, message = answer_check
        return {} if accepted else {"messages": [_message(code, 0, len(code), "error", message)]}
    judged = judge_check(code.strip(), _statement_texts(history[:-1]))
    if judged is not None:  # one of our trusted statement checks: decided on the arithmetic it states
        if judged.outcome == Outcome.accepted:
            return {}
        return {"messages": [_message(code, 0, len(code), "error", judged.message)]}
    messages: list[dict[str, Any]] = _scope_errors(history)
    sorries: list[dict[str, Any]] = []
    environment = "\n".join(history)
    # the gate's bridge command begins by closing scopes (``end ...`` lines): the bridge follows them
    closing = _CLOSING_LINES.match(code)
    offset = closing.end() if closing else 0
    bridge = _BRIDGE.match(code[offset:])
    axioms_command = _AXIOMS.match(code)
    if bridge:
        known = _declarations(environment)
        target = known.get(bridge.group(1).removeprefix("_root_."))
        candidate = known.get(bridge.group(2).removeprefix("_root_."))
        if target is None or candidate is None:
            missing = bridge.group(1) if target is None else bridge.group(2)
            messages.append(_message(code, offset, len(code), "error", f"unknown identifier '{missing}'"))
        elif not _signature_matches(target, candidate):
            messages.append(
                _message(code, offset, len(code), "error", "type mismatch (fake REPL: the signatures differ)")
            )
        return {"messages": messages} if messages else {}
    if axioms_command:
        name = axioms_command.group(1).removeprefix("_root_.")  # Lean prints the resolved name
        known = _declarations(environment)
        if name not in known:
            return {"messages": [_message(code, 0, len(code), "error", f"unknown constant '{name}'")]}
        ours = ("theorem repro_target_", "example : type_of%", "#print axioms")
        prover_code = "\n".join(
            c for c in history if not c.lstrip().startswith(ours) and " : type_of% @repro_target_" not in c
        )
        prover_tokens = significant(lex(prover_code))
        axioms = list(_STANDARD)
        if _uses_sorry(known[name]) or _uses_sorry(prover_tokens) or "repro_target_" in prover_code:
            axioms.append("sorryAx")
        if any(t.text in ("native_decide", "native") for t in prover_tokens):
            axioms.append("Lean.ofReduceBool")
        axioms += [n for n, tokens in known.items() if tokens[0].text == "axiom"]
        data = f"'{name}' depends on axioms: [{', '.join(axioms)}]"
        return {"messages": [_message(code, 0, len(code), "info", data)]}
    tokens = lex(code)
    for token in tokens:
        if token.kind == Kind.identifier and token.text == "sorry":
            position = _position_at(code, token.start)
            sorries.append(
                {
                    "proofState": len(sorries),
                    "pos": position,
                    "goal": "⊢ False",
                    "endPos": _position_at(code, token.end),
                }
            )
    words = significant(tokens)
    if _uses_sorry(words):
        # real Lean puts the warning on the declaration's name (repl-transcripts: term_sorry, dup_sorries)
        keyword = next((i for i, t in enumerate(words) if t.text in ("theorem", "lemma", "def", "example")), None)
        if keyword is None:
            start, end = 0, min(len(code), 7)
        elif words[keyword].text == "example" or keyword + 1 >= len(words):
            start, end = words[keyword].start, words[keyword].end
        else:
            start, end = words[keyword + 1].start, words[keyword + 1].end
        messages.append(_message(code, start, end, "warning", "declaration uses 'sorry'"))
    else:
        for name, declared in _declarations(code).items():
            if declared[0].text not in ("theorem", "lemma") or name.startswith("repro_target_"):
                continue
            judgement = judge_theorem(code[declared[0].start : declared[-1].end])
            if judgement.outcome != Outcome.accepted:  # refused, or an error saying the fake cannot judge it
                messages.append(_message(code, declared[0].start, declared[-1].end, "error", judgement.message))
    reply: dict[str, Any] = {}
    if sorries:
        reply["sorries"] = sorries
    if messages:
        reply["messages"] = messages
    return reply


def serve(rules: list[dict[str, Any]], stdin: Any = sys.stdin, stdout: Any = sys.stdout) -> None:
    environments: dict[int, list[str]] = {}
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
        code, printed = _split_printed_string(str(command.get("cmd", "")))
        env_id = command.get("env")
        started = time.time()
        reply: dict[str, Any] | None = None
        late = ""
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
            elif action == "print_before":
                stdout.write(str(rule.get("stdout", "")))
                stdout.flush()
                continue
            elif action == "print_after":
                late += str(rule.get("stdout", ""))
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
        history = environments.get(env_id, []) if isinstance(env_id, int) else []
        if reply is None:
            if env_id is not None and env_id not in environments:
                reply = {"message": "Unknown environment."}
            elif env_id is not None and any(t.text == "import" for t in significant(lex(code))):
                reply = {
                    "messages": [
                        _message(
                            code,
                            0,
                            6,
                            "error",
                            "invalid 'import' command, it must be used in the beginning of the file",
                        )
                    ]
                }
            else:
                reply = _default_reply(code, [*history, code])
        if "message" not in reply:
            if printed is not None:
                reply["messages"] = [*reply.get("messages", []), printed]
            environments[next_env] = [*history, code]
            reply["env"] = next_env
            next_env += 1
        _log(code, started)
        stdout.write(json.dumps(reply, ensure_ascii=False) + "\n\n" + late)
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
