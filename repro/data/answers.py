"""Reference-answer parsing for the source formats (GSM8K ``#### N``, MATH ``\\boxed{...}``)."""

from __future__ import annotations

import re

_GSM8K_FINAL = re.compile(r"####\s*(.+?)\s*$", re.DOTALL)
_NUMBER = re.compile(r"^[+-]?(\d{1,3}(,\d{3})+|\d+)(\.\d+)?$|^[+-]?\.\d+$")


def parse_gsm8k_answer(answer: str) -> str:
    """Return the number after ``####`` with thousands separators and a leading ``+`` removed.

    Raises ``ValueError`` when the text has no ``####`` line or what follows is not a number.
    """
    match = _GSM8K_FINAL.search(answer)
    if not match:
        raise ValueError("no '#### <number>' line")
    raw = match.group(1).strip().replace("$", "").replace(" ", "")
    if not _NUMBER.match(raw):
        raise ValueError(f"'#### {match.group(1).strip()}' is not a number")
    number = raw.replace(",", "").lstrip("+")
    if number.startswith("."):
        number = "0" + number
    elif number.startswith("-."):
        number = "-0" + number[1:]
    return number


def _balanced_group(text: str, open_index: int) -> str | None:
    """Contents of the brace group starting at ``text[open_index] == '{'``, nested braces included."""
    depth = 0
    for index in range(open_index, len(text)):
        char = text[index]
        if char == "\\" and index + 1 < len(text) and text[index + 1] in "{}":
            continue
        if char == "{" and (index == 0 or text[index - 1] != "\\"):
            depth += 1
        elif char == "}" and (index == 0 or text[index - 1] != "\\"):
            depth -= 1
            if depth == 0:
                return text[open_index + 1 : index]
    return None


def last_boxed_answer(solution: str) -> str | None:
    """The content of the last ``\\boxed{...}`` or ``\\fbox{...}`` (also ``\\boxed 5``), or None."""
    best: tuple[int, str] | None = None
    for command in ("\\boxed", "\\fbox"):
        start = solution.rfind(command)
        while start != -1:
            after = start + len(command)
            rest = solution[after:]
            content: str | None
            if rest.lstrip().startswith("{"):
                open_index = after + (len(rest) - len(rest.lstrip()))
                content = _balanced_group(solution, open_index)
            elif rest.startswith(" "):
                content = re.split(r"[\s$]", rest.lstrip(), maxsplit=1)[0]
            else:
                content = None
            if content is not None and content.strip():
                if best is None or start > best[0]:
                    best = (start, content.strip())
                break
            start = solution.rfind(command, 0, start)
    return best[1] if best else None
