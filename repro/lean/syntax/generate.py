"""Generate the gate's syntax tables from the pinned Lean sources (no Lean needed to read them).

A Lean source tree declares its keywords in two forms, and both are read here on our own lexer's
tokens (so comments and strings never produce a keyword):

- ``syntax|macro|elab|notation ... "kw" ... : <category>`` (and ``&"kw"``, a non-reserved keyword),
  as Batteries, Aesop, Qq, Plausible, Mathlib and ``src/Init/Tactics.lean`` write them
  (upstream: leanprover/lean4 ``src/Lean/Parser/Syntax.lean``, the grammar of these commands);
- ``@[builtin_<category>_parser] def x := leading_parser "kw" ...`` and the unannotated
  ``leading_parser`` helpers of ``src/Lean/Parser/Command.lean`` (``"theorem "``, ``"instance"``),
  as Lean core writes its own parsers (upstream: leanprover/lean4 ``src/Lean/Parser/Command.lean``,
  ``Term.lean``, ``Tactic.lean``).

Only a keyword's leading atom is kept, and only when it reads as a word (``eval%``, ``run_tac``,
``#eval``, ``count_heartbeats!``): symbol notations (``∑``, ``⟨``) cannot name a command or a tactic.

A keyword "evaluates code" when the elaborator that implements it (its own ``elab``/``macro`` body,
the declarations that name it in an attribute or quote it in a pattern, and, transitively, the
declarations of the same file those call) uses one of :data:`EVALUATION_MARKERS`: Lean's
interpreter (``evalExpr``, ``evalTerm``, ``evalConst``), the compiler (``compileDecl``,
``addAndCompile``), ``unsafe`` code, or the operating system (``IO.Process``, ``IO.FS``). The
detection is an over-approximation on purpose (a false alarm is exempted by name, with its reason,
in :mod:`repro.lean.syntax.curated`); :data:`repro.lean.syntax.curated.EVALUATES_CODE` adds what
sources not read here are known to hold.

Usage, after ``repro lean setup`` (the toolchain's sources are under elan's toolchain directory)::

    python -m repro.lean.syntax.generate --toolchain v4.15.0 \\
        --library lean4=$ELAN_HOME/toolchains/leanprover--lean4---v4.15.0/src/lean \\
        --library mathlib=lean_project/.lake/packages/mathlib \\
        --library batteries=lean_project/.lake/packages/batteries ...

Every library given is recorded in the table with its revision, so the table says what it was
generated from.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from repro.lean.syntax.curated import EVALUATES_CODE, SUPPLEMENT, Curated
from repro.lean.text import Kind, Token, lex, significant

CATEGORIES = ("command", "tactic", "conv", "term")
# The module roots that a library's users import; tests, scripts and examples are not importable.
LIBRARY_ROOTS = {
    "lean4": ("Init", "Lean", "Std", "src/Init", "src/Lean", "src/Std"),
    "batteries": ("Batteries",),
    "aesop": ("Aesop",),
    "qq": ("Qq",),
    "plausible": ("Plausible",),
    "mathlib": ("Mathlib",),
    "proofwidgets": ("ProofWidgets",),
    "importgraph": ("ImportGraph",),
    "leansearchclient": ("LeanSearchClient",),
}
EVALUATION_MARKERS = (
    "evalExpr",
    "evalExpr'",
    "evalTerm",
    "evalConst",
    "evalDecl",
    "compileDecl",
    "compileDecls",
    "addAndCompile",
    "unsafe",
    "IO.Process",
    "IO.FS",
    "ofReduceBool",
    "elabCommand",
)
_DECLARING = frozenset({"syntax", "macro", "elab", "notation", "notation3"})
_BEFORE_DECLARING = frozenset({"local", "scoped", "]"})
_PARSER_ATTRIBUTES = {
    "builtin_command_parser": "command",
    "command_parser": "command",
    "builtin_tactic_parser": "tactic",
    "tactic_parser": "tactic",
    "builtin_term_parser": "term",
    "term_parser": "term",
}
_PARSER_FILES = {"Command": "command", "Term": "term", "Tactic": "tactic"}
_WORD = re.compile(r"#?[^\W\d][\w'!?.]*[%!?]?")  # Lean identifiers: Unicode letters, subscripts (`aux_group₂`)
_OPEN = frozenset("([{⟨")
_CLOSE = frozenset(")]}⟩")


@dataclass
class Found:
    """One keyword declaration: where it is, and the file's chunks that implement it."""

    keyword: str
    category: str
    path: str
    syntax_name: str | None
    own_chunk: int


@dataclass
class _File:
    path: str
    text: str
    tokens: list[Token]
    chunks: list[tuple[int, int]] = field(default_factory=list)  # (start, end) offsets of top-level commands


def _chunks(text: str, tokens: list[Token]) -> list[tuple[int, int]]:
    """Top-level commands: a token at column 0 starts one, except right after a line that is only an attribute."""
    starts: list[int] = []
    previous_line_attribute = False
    for token in tokens:
        if token.start != 0 and text[token.start - 1] != "\n":
            continue
        line_end = text.find("\n", token.start)
        line = text[token.start : len(text) if line_end == -1 else line_end].strip()
        attribute_only = token.kind == Kind.attribute_open and line.endswith("]")
        # a ``| pattern => ...`` alternative at column 0 continues the command above it (``elab_rules``)
        alternative = token.text == "|"
        if not (starts and (previous_line_attribute or alternative)):
            starts.append(token.start)
        previous_line_attribute = attribute_only
    if not starts:
        return []
    ends = starts[1:] + [len(text)]
    return list(zip(starts, ends, strict=True))


def _chunk_of(file: _File, offset: int) -> int:
    for index, (start, end) in enumerate(file.chunks):
        if start <= offset < end:
            return index
    return len(file.chunks) - 1


def _atom(token: Token) -> str | None:
    """The keyword a string literal declares (``"theorem "`` -> ``theorem``), if it reads as a word."""
    if token.kind != Kind.string:
        return None
    inner = token.text[1:-1].strip()
    return inner if _WORD.fullmatch(inner) else None


def _declarations(file: _File) -> Iterator[Found]:
    words = file.tokens
    for index, token in enumerate(words):
        if token.kind != Kind.identifier or token.text not in _DECLARING:
            continue
        previous = words[index - 1] if index else None
        at_line_start = token.start == 0 or file.text[token.start - 1] == "\n"
        if not at_line_start and (previous is None or previous.text not in _BEFORE_DECLARING):
            continue
        cursor = index + 1
        if cursor + 1 < len(words) and words[cursor].text == ":" and words[cursor].start == token.end:
            cursor += 2  # ``syntax:max``, ``macro:arg``: a precedence
        name: str | None = None
        while cursor < len(words) and words[cursor].text == "(":
            close = cursor
            while close < len(words) and words[close].text != ")":
                close += 1
            inner = [w.text for w in words[cursor + 1 : close]]
            if inner[:2] == ["name", ":="] and len(inner) > 2:
                name = inner[2]
            cursor = close + 1
        cursor = _skip_prefix_items(file, words, cursor)
        if cursor >= len(words):
            continue
        keyword = _atom(words[cursor])
        if keyword is None:
            continue
        category = "term" if token.text in ("notation", "notation3") else _category(file, words, cursor + 1)
        if category is None:
            continue
        yield Found(keyword, category, file.path, name, _chunk_of(file, token.start))


# Parsers that may stand before a declaration's keyword (``mods:declModifiers "alias "``,
# ``attrKind "add_aesop_rules "``, ``group("lemma " ...)``): they never hold the keyword themselves.
_PREFIX_PARSERS = frozenset(
    {"withPosition", "declModifiers", "attrKind", "Term.attrKind", "docComment", "group", "ppSpace"}
)


def _skip_prefix_items(file: _File, words: list[Token], cursor: int) -> int:
    """Index of the token that holds a declaration's leading atom, past labels and modifier parsers."""
    for _ in range(8):
        if cursor >= len(words):
            return cursor
        word = words[cursor]
        if word.text in ("&", "(", ")", "?") and word.kind != Kind.string:
            cursor += 1  # ``&"kw"``, and an optional prefix parser ``(docComment)? attrKind "unif_hint"``
        elif (
            word.kind == Kind.identifier
            and cursor + 1 < len(words)
            and words[cursor + 1].text == ":"
            and words[cursor + 1].start == word.end
        ):
            cursor += 2  # ``tk:"#lint"``, ``mods:declModifiers``: a label
        elif word.kind == Kind.identifier and word.text in _PREFIX_PARSERS:
            cursor += 1
        else:
            return cursor
    return cursor


def _category(file: _File, words: list[Token], cursor: int) -> str | None:
    """The category after the declaration's `` : `` (a colon with a space before it, outside brackets)."""
    depth = 0
    limit = min(len(words), cursor + 400)
    for index in range(cursor, limit - 1):
        word = words[index]
        if word.kind == Kind.symbol and word.text in _OPEN:
            depth += 1
        elif word.kind == Kind.symbol and word.text in _CLOSE:
            depth = max(depth - 1, 0)
        elif depth == 0 and word.text == ":" and file.text[word.start - 1] in " \n":
            following = words[index + 1]
            return following.text if following.kind == Kind.identifier else None
        elif word.text in ("=>", ":=") or (
            index > cursor and file.text[word.start - 1] == "\n" and _at_column_zero(file, word)
        ):
            return None
    return None


def _at_column_zero(file: _File, token: Token) -> bool:
    return token.start == 0 or file.text[token.start - 1] == "\n"


def _leading_parsers(file: _File) -> Iterator[Found]:
    """Core's ``def x := leading_parser "kw" ...``: the category from the parser attribute.

    An unannotated helper of a Parser file (``def «theorem» := leading_parser "theorem " ...``) is a
    keyword of its category only when an annotated parser of the same file names it
    (``@[builtin_command_parser] def declaration := ... («abbrev» <|> definition <|> «theorem» ...)``):
    helpers that only build parts of a command (``computedFields := leading_parser "with" ...``,
    ``whereStructInst``, ``«extends»``) would otherwise turn ``with``, ``where`` and ``extends`` into
    commands, and every honest ``rcases h with`` would be refused.
    """
    stem = Path(file.path).stem
    default = _PARSER_FILES.get(stem) if "/Parser/" in file.path or file.path.startswith("Parser/") else None
    words = file.tokens
    annotated: list[tuple[str, int]] = []  # (category, chunk) of every annotated leading_parser
    helpers: list[tuple[str, str, int]] = []  # (name, keyword, chunk) of unannotated ones
    for index, token in enumerate(words):
        if token.text != "leading_parser":
            continue
        chunk = _chunk_of(file, token.start)
        start, end = file.chunks[chunk]
        header = file.text[start : token.start]
        category = next((c for attribute, c in _PARSER_ATTRIBUTES.items() if attribute in header), None)
        keywords = _first_atoms(words, index, end)
        if category is not None:
            annotated.append((category, chunk))
            for keyword in keywords:
                yield Found(keyword, category, file.path, None, chunk)
        elif default is not None:
            defined = re.search(r"\bdef\s+([^\s:(]+)", header)
            if defined is not None:
                helper = defined.group(1).strip("«»").split(".")[-1]
                helpers.extend((helper, keyword, chunk) for keyword in keywords)
    named_by: dict[str, str] = {}
    for category, chunk in annotated:
        start, end = file.chunks[chunk]
        for quoted, plain in re.findall(r"«([^»]+)»|([A-Za-z_][A-Za-z0-9_'.]*)", file.text[start:end]):
            named_by.setdefault((quoted or plain).split(".")[-1], category)
    for helper, keyword, chunk in helpers:
        if helper in named_by:
            yield Found(keyword, named_by[helper], file.path, None, chunk)


def _first_atoms(words: list[Token], index: int, end: int) -> list[str]:
    """The keywords of the first string literal after ``leading_parser`` (within its chunk) and of the
    string alternatives that directly follow it (``"initialize " <|> "builtin_initialize "``)."""
    for position in range(index + 1, min(len(words), index + 40)):
        following = words[position]
        if following.start >= end:
            return []
        if following.kind != Kind.string:
            continue
        atoms = [_atom(following)]
        if atoms[0] is None:
            return []  # a symbol leads (``" := " <|> " where "`` inside ``«structure»``): no keyword
        while (
            position + 2 < len(words)
            and words[position + 1].text == "<|>"
            and words[position + 2].kind == Kind.string
            and words[position + 2].start < end
        ):
            position += 2
            atoms.append(_atom(words[position]))
        return [atom for atom in atoms if atom is not None]
    return []


def _implementation(file: _File, found: Found, defined: dict[str, int]) -> set[int]:
    """Indices of the chunks implementing ``found``: its own, those naming or quoting it, and what they call."""
    chunks = {found.own_chunk} if file.tokens and _declares_body(file, found.own_chunk) else set()
    quoted = re.compile(r"`\((?:" + "|".join(CATEGORIES) + r")\|\s*" + re.escape(found.keyword) + r"(?![A-Za-z0-9_])")
    named = (
        re.compile(r"@\[[^\]]*\b" + re.escape(found.syntax_name.split(".")[-1]) + r"\b") if found.syntax_name else None
    )
    for index, (start, end) in enumerate(file.chunks):
        text = file.text[start:end]
        by_attribute = named is not None and named.search(text) is not None
        by_pattern = (
            index != found.own_chunk and quoted.search(text) is not None and ("elab_rules" in text or "@[" in text)
        )
        if by_attribute or by_pattern:
            chunks.add(index)
    frontier = list(chunks)
    while frontier:
        index = frontier.pop()
        start, end = file.chunks[index]
        for name in set(re.findall(r"[A-Za-z_][A-Za-z0-9_'.]*", file.text[start:end])):
            target = defined.get(name.split(".")[-1])
            if target is not None and target not in chunks:
                chunks.add(target)
                frontier.append(target)
    return chunks


def _declares_body(file: _File, chunk: int) -> bool:
    start, end = file.chunks[chunk]
    text = file.text[start:end]
    return bool(re.search(r"\b(elab|macro)\b", text))


def _defined_names(file: _File) -> dict[str, int]:
    """Last component of each ``def|theorem|...`` name of the file -> its chunk."""
    names: dict[str, int] = {}
    words = file.tokens
    for index, token in enumerate(words[:-1]):
        if token.text in ("def", "abbrev", "instance") and words[index + 1].kind == Kind.identifier:
            names.setdefault(words[index + 1].text.split(".")[-1], _chunk_of(file, token.start))
    return names


def _markers(file: _File, chunks: Iterable[int]) -> list[str]:
    found: set[str] = set()
    for index in chunks:
        start, end = file.chunks[index]
        for token in significant(lex(file.text[start:end])):
            if token.kind != Kind.identifier:
                continue
            for marker in EVALUATION_MARKERS:
                if token.text == marker or token.text.endswith("." + marker) or token.text.startswith(marker + "."):
                    found.add(marker)
    return sorted(found)


def _lex_recovering(text: str) -> list[Token]:
    """Tokens of a whole library file: where our lexer stops (Lean's ``a[i]'h`` reads as a char
    literal to it), one character is skipped and lexing goes on, so one such spot hides nothing after it."""
    tokens: list[Token] = []
    offset = 0
    while offset < len(text):
        part = lex(text[offset:])
        if not part or part[-1].kind != Kind.error:
            tokens.extend(Token(t.kind, t.text, t.start + offset, t.end + offset) for t in part)
            break
        error = part[-1]
        tokens.extend(Token(t.kind, t.text, t.start + offset, t.end + offset) for t in part[:-1])
        offset += error.start + 1
    return tokens


def _read(root: Path, relative: str) -> _File | None:
    text = (root / relative).read_text(encoding="utf-8", errors="replace")
    words = significant(_lex_recovering(text))
    file = _File(relative, text, words)
    file.chunks = _chunks(text, words) or [(0, len(text))]
    return file


def _library_files(library: str, root: Path) -> list[str]:
    roots = LIBRARY_ROOTS.get(library, ())
    files = []
    for path in sorted(root.rglob("*.lean")):
        relative = path.relative_to(root).as_posix()
        if any(relative == r + ".lean" or relative.startswith(r + "/") for r in roots):
            files.append(relative)
    return files


def _revision(root: Path) -> str | None:
    try:
        completed = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30, check=False
        )
    except OSError:
        return None
    return completed.stdout.strip() or None if completed.returncode == 0 else None


def scan_library(library: str, root: Path) -> tuple[list[Found], dict[str, dict[str, str]], int]:
    """Keywords of one library, the ones whose implementation evaluates code, and the number of files read."""
    keywords: list[Found] = []
    evaluating: dict[str, dict[str, str]] = {}
    files = _library_files(library, root)
    for relative in files:
        file = _read(root, relative)
        if file is None:
            continue
        defined = _defined_names(file)
        for found in [*_declarations(file), *_leading_parsers(file)]:
            keywords.append(found)
            markers = _markers(file, _implementation(file, found, defined))
            if markers:
                evaluating.setdefault(
                    found.keyword,
                    {"category": found.category, "evidence": f"{library}:{relative}: {', '.join(markers)}"},
                )
    return keywords, evaluating, len(files)


# A source tree assembled file by file from a library index of public repositories (when the whole
# repository could not be fetched) carries this manifest at its root: per file, the stored version read
# (index id, commit where the index reports one) and whether it is the whole file or an excerpt.
MANIFEST = "INDEX_READ.json"
INDEX_REVISION = "per file, read through a library index: see read_through_index (not a release tag)"


def read_manifest(root: Path) -> dict[str, object] | None:
    """The manifest of a tree read file by file (:data:`MANIFEST`), or ``None`` for a checkout."""
    path = root / MANIFEST
    if not path.is_file():
        return None
    loaded: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def generate(toolchain: str, libraries: dict[str, Path], origins: dict[str, str]) -> dict[str, object]:
    """The table of one toolchain: keywords per category (each with where it is declared) and evaluators."""
    table: dict[str, dict[str, list[str]]] = {category: {} for category in CATEGORIES}
    evaluates: dict[str, dict[str, str]] = {}
    sources = []
    for library, root in sorted(libraries.items()):
        found, evaluating, count = scan_library(library, root)
        source: dict[str, object] = {
            "library": library,
            "revision": origins.get(library) or _revision(root) or "unknown",
            "files_read": count,
            "keywords": len(found),
        }
        manifest = read_manifest(root)
        if manifest is not None:
            # read file by file (no whole tree could be had): which file, which stored version, how much
            source["revision"] = origins.get(library) or INDEX_REVISION
            source["read_through_index"] = manifest
        sources.append(source)
        for item in found:
            if item.category in table:
                table[item.category].setdefault(item.keyword, []).append(f"{library}:{item.path}")
        for keyword, entry in evaluating.items():
            if entry["category"] in CATEGORIES:
                evaluates.setdefault(keyword, entry)
    _add_curated(table, evaluates, SUPPLEMENT, EVALUATES_CODE, toolchain)
    return {
        "toolchain": toolchain,
        "generator": "repro.lean.syntax.generate",
        "sources": sources,
        "keywords": {
            category: {k: sorted(set(v)) for k, v in sorted(entries.items())} for category, entries in table.items()
        },
        "evaluates_code": dict(sorted(evaluates.items())),
    }


def _add_curated(
    table: dict[str, dict[str, list[str]]],
    evaluates: dict[str, dict[str, str]],
    supplement: list[Curated],
    evaluators: list[Curated],
    toolchain: str,
) -> None:
    for entry in [*supplement, *evaluators]:
        if toolchain not in entry.toolchains:
            continue
        table[entry.category].setdefault(entry.keyword, []).append(f"curated:{entry.library}")
    for entry in evaluators:
        if toolchain in entry.toolchains:
            evaluates.setdefault(entry.keyword, {"category": entry.category, "evidence": f"curated: {entry.reason}"})


def _apply_curated(toolchain: str, out: Path | None) -> int:
    """Re-apply :data:`SUPPLEMENT` and :data:`EVALUATES_CODE` to the committed table (entries only added)."""
    path = Path(__file__).parent / "data" / f"{toolchain}.json"
    table = json.loads(path.read_text(encoding="utf-8"))
    keywords: dict[str, dict[str, list[str]]] = table["keywords"]
    evaluates: dict[str, dict[str, str]] = table["evaluates_code"]
    _add_curated(keywords, evaluates, SUPPLEMENT, EVALUATES_CODE, toolchain)
    table["keywords"] = {
        category: {k: sorted(set(v)) for k, v in sorted(entries.items())} for category, entries in keywords.items()
    }
    table["evaluates_code"] = dict(sorted(evaluates.items()))
    target = out or path
    target.write_text(json.dumps(table, indent=1, ensure_ascii=False, sort_keys=False) + "\n", encoding="utf-8")
    print(f"{target}: curated entries applied, {len(evaluates)} evaluate code")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--toolchain", required=True, help="toolchain name, e.g. v4.15.0")
    parser.add_argument(
        "--library", action="append", default=[], metavar="NAME=PATH[@REVISION]", help="a source tree to read"
    )
    parser.add_argument("--out", type=Path, help="output JSON (default: the package's data/<toolchain>.json)")
    parser.add_argument(
        "--curated-only",
        action="store_true",
        help="read no sources: add the curated lists (repro.lean.syntax.curated) to the committed table, so an"
        " entry curated between two regenerations reaches the gate",
    )
    arguments = parser.parse_args(argv)
    if arguments.curated_only:
        return _apply_curated(arguments.toolchain, arguments.out)
    libraries: dict[str, Path] = {}
    origins: dict[str, str] = {}
    for item in arguments.library:
        name, _, rest = item.partition("=")
        path, _, revision = rest.partition("@")
        if not name or not path:
            parser.error(f"--library {item!r}: expected NAME=PATH[@REVISION]")
        libraries[name.lower()] = Path(path)
        if revision:
            origins[name.lower()] = revision
    table = generate(arguments.toolchain, libraries, origins)
    out = arguments.out or Path(__file__).parent / "data" / f"{arguments.toolchain}.json"
    out.write_text(json.dumps(table, indent=1, ensure_ascii=False, sort_keys=False) + "\n", encoding="utf-8")
    keywords = table["keywords"]
    assert isinstance(keywords, dict)
    counts = {category: len(entries) for category, entries in keywords.items()}
    print(f"{out}: {counts}, {len(table['evaluates_code'])} evaluate code")  # type: ignore[arg-type]
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
