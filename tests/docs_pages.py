"""Reading the README and docs/ as a user reads them: fenced blocks with their markers, command lines,
heading anchors. Shared by tests/test_docs.py (what the pages claim) and tests/test_tour.py (running them).

A fenced block of commands carries a marker on the line above it, an HTML comment a reader never sees:

- ``<!-- tour -->``: runs offline; tests/test_tour.py runs every tour block of a page, in order, in one
  fresh directory, and each command must exit 0 unless its comment says ``exit N``;
- ``<!-- setup -->``: the README's two set-up commands (CI runs them: .ci/run);
- ``<!-- needs: gpu -->``, ``<!-- needs: lean -->``, ``<!-- needs: api -->``: needs a GPU, a real Lean
  toolchain, or a model endpoint / API key (and network), so no test here can run it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
DOCS = REPO / "docs"
PAGES = [README, *sorted(DOCS.glob("*.md"))]
MARKERS = ("tour", "setup", "needs: gpu", "needs: lean", "needs: api")
_MARKER = re.compile(r"^\s*<!--\s*(.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # 1-based line of the opening fence
    language: str
    body: str
    marker: str | None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def _dedent(line: str, indent: int) -> str:
    """A block line without its list item's indentation (and no more of its own)."""
    return line[indent:] if line[:indent].isspace() or not indent else line.lstrip()


def blocks(page: Path) -> list[Block]:
    """Every fenced block of the page (a fence is a line that starts, after indentation, with ```)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    index = 0
    while index < len(lines):
        stripped = lines[index].lstrip()
        if not stripped.startswith("```"):
            index += 1
            continue
        fence = stripped[: len(stripped) - len(stripped.lstrip("`"))]
        language = stripped[len(fence) :].strip()
        indent = len(lines[index]) - len(stripped)
        end = index + 1
        while end < len(lines) and lines[end].strip() != fence:
            end += 1
        body = "\n".join(_dedent(line, indent) for line in lines[index + 1 : end])
        previous = index - 1
        while previous >= 0 and not lines[previous].strip():
            previous -= 1
        match = _MARKER.match(lines[previous]) if previous >= 0 else None
        found.append(Block(page, index + 1, language, body + "\n", match.group(1) if match else None))
        index = end + 1
    return found


def without_blocks(page: Path) -> str:
    """The page's prose: every fenced block removed (inline code kept)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    spans = {(block.line, block.line + block.body.count("\n") + 1) for block in blocks(page)}
    skipped = {number for start, end in spans for number in range(start, end + 1)}
    return "\n".join(line for number, line in enumerate(lines, 1) if number not in skipped)


_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")


def shell_lines(body: str) -> list[str]:
    """The commands of a shell block: continuations joined, a here-document kept with its command,
    comment-only lines dropped."""
    raw = body.replace("\\\n", " ").splitlines()
    commands: list[str] = []
    index = 0
    while index < len(raw):
        line = raw[index]
        index += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        heredoc = _HEREDOC.search(line.split(" #")[0])
        if heredoc:
            end = index
            while end < len(raw) and raw[end].strip() != heredoc.group(2):
                end += 1
            line = "\n".join([line, *raw[index : end + 1]])
            index = end + 1
        commands.append(line)
    return commands


def repro_commands(line: str) -> list[str]:
    """The ``repro ...`` commands of one shell line (split at && || ; |, environment assignments dropped)."""
    commands = []
    for part in re.split(r"&&|\|\||;|(?<!\\)\|", line.split(" #")[0]):
        words = part.strip().split()
        while words and re.match(r"^[A-Z_]+=", words[0]):
            words.pop(0)
        if words and words[0] == "repro":
            commands.append(" ".join(words))
    return commands


def command_lines(page: Path) -> list[str]:
    """Every ``repro ...`` command of the page: in its shell blocks and in its inline code spans."""
    commands: list[str] = []
    for block in blocks(page):
        if block.language in ("", "bash", "sh", "shell"):
            for line in shell_lines(block.body):
                commands += repro_commands(line)
    prose = "\n".join(line for line in without_blocks(page).splitlines() if not line.startswith("#"))
    for span in re.findall(r"`(repro [^`]+)`", prose):  # headings name commands, they are not command lines
        commands += repro_commands(span)
    return commands


def anchors(text: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation but '-' and '_' dropped, spaces as '-'."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    fence: str | None = None
    for line in text.splitlines():
        stripped = line.lstrip()
        if stripped.startswith("```"):
            marks = stripped[: len(stripped) - len(stripped.lstrip("`"))]
            fence = None if fence == marks else (fence or marks)
            continue
        if fence or not line.startswith("#"):
            continue
        title = line.lstrip("#").strip()
        slug = "".join(ch for ch in title.lower() if ch.isalnum() or ch in "-_ ").replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found
