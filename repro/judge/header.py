"""A header that came with data (a batch row, a study statement file) is never trusted text.

Lean runs a header before our commands, in the same environment (repro/judge/screen.py), and the screen
never scans it: a header can declare an axiom, or a ``macro_rules`` for ``#print axioms`` (Lean expands
macros before any command elaborator: leanprover/lean4 src/Lean/Elab/Command.lean, ``elabCommand``) so
that our own command prints what the header wants (red team red1, finding R2). So a data-borne header is
only *checked*: each of its lines must be a blank line, a ``--`` comment, or an ``import``, ``open`` or
``set_option`` line that falls within the trusted (configured) header, and the trusted header is what Lean
and the judge then run. Anything else refuses the row, named by its file, line and field.
"""

from __future__ import annotations

import re

__all__ = ["header_refusal", "trusted_header_lines"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_'.!?]*\Z")
_VALUE = re.compile(r"(?:[0-9]+|true|false)\Z")


def trusted_header_lines(trusted: str) -> tuple[set[str], set[str], set[str]]:
    """The modules the trusted header imports, the namespaces it opens, the options it sets."""
    imports: set[str] = set()
    opens: set[str] = set()
    options: set[str] = set()
    for line in trusted.splitlines():
        words = line.split("--", 1)[0].split()
        if len(words) == 2 and words[0] == "import":
            imports.add(words[1])
        elif len(words) >= 2 and words[0] == "open" and "in" not in words[1:]:
            opens.update(word for word in words[1:] if _NAME.match(word))
        elif len(words) == 3 and words[0] == "set_option":
            options.add(words[1])
    return imports, opens, options


def header_refusal(header: str, trusted: str) -> str | None:
    """Why ``header`` (from data) is refused, naming its line; None when every line falls within ``trusted``.

    Accepted: ``import M`` where the trusted header imports M; ``open A B`` where it opens each of A, B (no
    ``in``, ``hiding``, ``renaming`` or parentheses); ``set_option NAME VALUE`` (a number, ``true`` or ``false``)
    where it sets NAME (its value is the trusted header's: the trusted header is what runs). A block comment is
    refused: it could hide where a command begins.
    """
    imports, opens, options = trusted_header_lines(trusted)
    for number, raw in enumerate(header.splitlines(), start=1):
        line = raw.strip()
        if "/-" not in line and "-/" not in line:
            line = line.split("--", 1)[0].strip()  # a line comment, never a block comment
        if not line:
            continue
        words = line.split()
        shown = line if len(line) <= 120 else line[:117] + "..."
        if words[0] == "import" and len(words) == 2 and words[1] in imports:
            continue
        if words[0] == "open" and len(words) >= 2 and all(word in opens for word in words[1:]):
            continue
        if words[0] == "set_option" and len(words) == 3 and words[1] in options and _VALUE.match(words[2]):
            continue
        return (
            f"header line {number} `{shown}` is not an import, open or set_option line of the trusted header"
            " (lean.header): a header that comes with the data may only repeat the configured one's lines"
        )
    return None
