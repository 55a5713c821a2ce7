"""The prover's code runs inside a section of ours, so its scopes end before our trusted commands.

Why: Lean keeps ``open``, ``set_option``, ``variable``, ``universe`` and ``local``/``scoped``
declarations in the *scope* (``Command.State.scopes``), and both backends carry that state from the
prover's code into our bridge and ``#print axioms``:

- the REPL restores the whole ``Command.State`` of the environment a command names
  (leanprover-community/repl ``REPL/Main.lean``, ``runCommand``: ``cmdSnapshot?.map fun c =>
  c.cmdState`` handed to ``IO.processInput``; ``REPL/Frontend.lean`` ``processInput`` then runs the new
  text on that state, scopes included);
- the Kimina server runs our commands joined into one file (project-numina/kimina-lean-server
  ``server/split.py`` splits off the imports only; the rest is one REPL command).

So command (0) ends by opening ``section <reserved>`` and command (2) begins by closing it with
``end <reserved>``; the prover's code (1) stays verbatim, so Lean's positions in it are unchanged.

Why a prover cannot get around it (Lean core ``src/Lean/Elab/BuiltinCommand.lean``, ``elabEnd``, the
same from v4.9 to v4.15): ``end`` first drops its scopes and *then* throws when the names do not
match, and an anonymous ``end`` throws unless the innermost scope is anonymous. Our section's name
holds :data:`repro.lean.tables.RESERVED_PREFIX`, which the static layer refuses in every name
component of the prover's code, so

- a prover ``end`` that reaches our section (bare, or dotted to span several scopes, or more ``end``
  than scopes) is an error in the prover's own command (1), and the gate refuses any error there;
- a scope of the prover's left open makes *our* ``end <reserved>`` fail: the innermost scope is
  then not ours (an error in command (2), reported as such);
- only when every scope the prover opened is closed again does our ``end`` close exactly our section,
  and only then do the bridge and ``#print axioms`` run in the scope of command (0).

A file may leave sections open at its end (``noncomputable section`` with no ``end`` is an honest
style), so :func:`closers` reads which scopes the prover's code leaves open and command (2) closes
them before ours. That reading is only a convenience: if it is wrong, one of our ``end``\\ s meets a
scope it does not match and Lean reports an error, so a misreading can only refuse.
"""

from __future__ import annotations

from repro.lean.text import Kind, LeanCode, Token, identifier_parts

_OPENERS = frozenset({"section", "namespace"})


def section_opening(reserved: str) -> str:
    """Appended to command (0), on its own line after our statement."""
    return f"\n\nsection {reserved}"


def section_closing(reserved: str, prover_closers: list[str]) -> str:
    """Put before the bridge in command (2): the prover's open scopes, innermost first, then ours."""
    return "".join(f"{closer}\n" for closer in prover_closers) + f"end {reserved}\n"


def closing_lines(prover_closers: list[str]) -> int:
    """How many lines of command (2) close scopes (an error on them is a scope error, not the bridge's)."""
    return len(prover_closers) + 1


def _name_on_same_line(code: LeanCode, words: list[Token], index: int) -> Token | None:
    """The identifier after ``words[index]`` if it stands on the same line (a section or end name)."""
    if index + 1 >= len(words):
        return None
    following = words[index + 1]
    if following.kind != Kind.identifier or "\n" in code.text[words[index].end : following.start]:
        return None
    return following


def closers(code: LeanCode) -> list[str]:
    """The ``end`` commands that close the scopes ``code`` leaves open, innermost first.

    Reads ``section [N]``, ``noncomputable section``, ``namespace N`` and ``end [N]`` tokens the way
    ``addScopes``/``elabEnd`` count them (a dotted name is one scope per component). ``X in cmd`` opens and closes
    its own section, so it needs no closer.
    """
    words = code.significant
    stack: list[str] = []  # scope headers, innermost last ("" for an anonymous section)
    for index, token in enumerate(words):
        if token.kind != Kind.identifier or (token.text not in _OPENERS and token.text != "end"):
            continue
        name = _name_on_same_line(code, words, index)
        parts = identifier_parts(name.text) if name is not None and name.text not in _OPENERS else []
        if token.text == "end":
            for _ in range(max(len(parts), 1)):
                if stack:
                    stack.pop()
        elif token.text == "section" and not parts:
            stack.append("")
        else:
            stack.extend(parts)  # ``namespace A.B`` and ``section A.B``: one scope per component
    lines: list[str] = []
    while stack:
        header = stack.pop()
        lines.append(f"end {header}" if header else "end")
    return lines
