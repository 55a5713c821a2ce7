"""Light-weight reading of Lean 4 source: comments, declarations, the main theorem's parts.

This is not a Lean parser. It finds what the soundness gate needs (where a theorem starts, where its
signature ends, what follows it) and errs toward rejection when the text is unusual.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

DECLARATION_START = re.compile(
    r"^(?:@\[[^\]]*\]\s*)?(?:(?:private|protected|noncomputable|nonrec|partial|unsafe)\s+)*"
    r"(theorem|lemma|def|abbrev|example|instance|structure|inductive|class|axiom|opaque|macro|syntax|elab|"
    r"notation|infix|infixl|infixr|prefix|postfix|macro_rules|elab_rules|open|namespace|section|end|variable|"
    r"universe|set_option|attribute|local|scoped|#\w+|import|noncomputable\s+section|mutual)\b",
    re.MULTILINE,
)


def strip_comments(code: str, *, keep_layout: bool = True) -> str:
    """Remove ``--`` and nested ``/- -/`` comments (string literals respected).

    With ``keep_layout`` each removed character becomes a space (newlines kept), so positions in
    the result line up with the original.
    """
    out: list[str] = []
    index, depth, in_string = 0, 0, False
    length = len(code)
    while index < length:
        char = code[index]
        pair = code[index : index + 2]
        if depth == 0 and not in_string and pair == "--":
            end = code.find("\n", index)
            end = length if end == -1 else end
            out.append(" " * (end - index) if keep_layout else "")
            index = end
            continue
        if not in_string and pair == "/-":
            depth += 1
            out.append("  " if keep_layout else "")
            index += 2
            continue
        if depth > 0:
            if pair == "-/":
                depth -= 1
                out.append("  " if keep_layout else "")
                index += 2
                continue
            out.append("\n" if char == "\n" else (" " if keep_layout else ""))
            index += 1
            continue
        if char == '"' and (index == 0 or code[index - 1] != "\\"):
            in_string = not in_string
        out.append(char)
        index += 1
    return "".join(out)


def strip_strings(code: str) -> str:
    return re.sub(r'"(?:[^"\\\n]|\\.)*"', lambda m: '"' + " " * (len(m.group(0)) - 2) + '"', code)


def normalize(code: str) -> str:
    """Comments removed and whitespace collapsed: the form in which two statements are compared."""
    return re.sub(r"\s+", " ", strip_comments(code, keep_layout=False)).strip()


@dataclass(frozen=True)
class TheoremSpan:
    keyword: str
    name: str
    start: int  # index of the declaration (including attributes/modifiers)
    assign: int  # index of the top-level ``:=`` ending the signature
    end: int  # end of the declaration's body

    def signature(self, code: str) -> str:
        return code[self.start : self.assign].strip()

    def body(self, code: str) -> str:
        return code[self.assign + 2 : self.end].strip()


_THEOREM_HEAD = re.compile(
    r"^(?:@\[[^\]]*\]\s*)?(?:(?:private|protected|nonrec)\s+)*(theorem|lemma)\s+([^\s:(\[{]+)", re.MULTILINE
)


def top_level_indices(text: str, start: int = 0) -> Iterator[int]:
    """Indices of the characters outside every bracket pair (the brackets themselves excluded)."""
    depth = 0
    for index in range(start, len(text)):
        char = text[index]
        if char in "([{⟨":
            depth += 1
        elif char in ")]}⟩":
            depth -= 1
        elif depth <= 0:
            yield index


def _top_level_assign(clean: str, start: int) -> int:
    return next((index for index in top_level_indices(clean, start) if clean[index : index + 2] == ":="), -1)


def _declaration_end(clean: str, after: int) -> int:
    for match in DECLARATION_START.finditer(clean, after):
        if match.start() > after:
            return match.start()
    return len(clean)


def theorems(code: str) -> list[TheoremSpan]:
    """Every ``theorem``/``lemma`` declaration at the start of a line, in order."""
    clean = strip_strings(strip_comments(code))
    spans = []
    for match in _THEOREM_HEAD.finditer(clean):
        assign = _top_level_assign(clean, match.end())
        if assign == -1:
            spans.append(TheoremSpan(match.group(1), match.group(2), match.start(), len(clean), len(clean)))
            continue
        spans.append(
            TheoremSpan(match.group(1), match.group(2), match.start(), assign, _declaration_end(clean, assign))
        )
    return spans


def find_theorem(code: str, name: str) -> TheoremSpan | None:
    matching = [span for span in theorems(code) if span.name == name]
    return matching[-1] if matching else None


def statement_parts(statement: str) -> tuple[str, str]:
    """(theorem name, signature) of a formal statement ending in ``:= by sorry``."""
    spans = theorems(statement)
    if not spans:
        raise ValueError("the statement holds no theorem declaration")
    span = spans[-1]
    return span.name, span.signature(statement)


_SORRY_TAIL = re.compile(r":=\s*by\s+sorry\s*$|:=\s*sorry\s*$")


def ends_in_sorry(statement: str) -> bool:
    return _SORRY_TAIL.search(strip_comments(statement).rstrip()) is not None


IDENTIFIER = re.compile(r"[A-Za-z_][\w.'!?]*")


def identifiers(code: str) -> set[str]:
    clean = strip_strings(strip_comments(code))
    found = set()
    for token in IDENTIFIER.findall(clean):
        found.add(token)
        found.update(part for part in token.split(".") if part)
    return found
