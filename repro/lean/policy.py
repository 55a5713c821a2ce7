"""The static layer of the soundness gate: an allowlist of what prover code may contain.

Rules run on the lexer's tokens, anywhere in the code (never "at a line start"), so a comment, a
string, a quoted identifier or a second command on the same line cannot hide anything. What is not
allowed is refused with its name. The static layer never accepts a proof: it only decides whether
the code may be sent to Lean, which then decides identity (the bridge) and axioms.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from repro.lean.lexer import Kind, Token, identifier_parts, lex, lex_error, line_column, significant
from repro.lean.source import COMMAND_KEYWORDS
from repro.lean.syntax import SyntaxTables, UnknownToolchainError, gate_tables

RESERVED_PREFIX = "repro_target"
DECLARATION_KEYWORDS = frozenset({"theorem", "lemma", "def", "abbrev"})
ALLOWED_MODIFIERS = frozenset({"private", "noncomputable"})
# Resource limits only: none changes what Lean accepts as a proof.
ALLOWED_OPTIONS = frozenset({"maxHeartbeats", "maxRecDepth", "synthInstance.maxHeartbeats"})
DEFAULT_OPEN_ALLOWLIST = frozenset(
    {
        "BigOperators",
        "Real",
        "Nat",
        "Topology",
        "Rat",
        "Int",
        "Finset",
        "Set",
        "Classical",
        "Function",
        "Polynomial",
        "Complex",
        "List",
        "Multiset",
        "Filter",
        "Matrix",
        "NNReal",
        "ENNReal",
        "ZMod",
        "Fin",
        "Asymptotics",
        "MeasureTheory",
        "intervalIntegral",
        "EuclideanGeometry",
        "InnerProductSpace",
        "Equiv",
        "Pointwise",
        "ComplexConjugate",
    }
)
# Forbidden wherever they appear, compared per identifier component with «» quoting removed.
FORBIDDEN_NAMES = {
    "sorry": "sorry",
    "admit": "admit",
    "sorryAx": "sorryAx",
    "ofReduceBool": "Lean.ofReduceBool",
    "ofReduceNat": "Lean.ofReduceNat",
    "reduceBool": "Lean.reduceBool",
    "reduceNat": "Lean.reduceNat",
    "trustCompiler": "Lean.trustCompiler",
    "implemented_by": "implemented_by",
    "extern": "extern",
    "run_tac": "run_tac",
    "by_elab": "by_elab",
    "exact?": "search tactic exact?",
    "apply?": "search tactic apply?",
    "rw?": "search tactic rw?",
    "simp?": "search tactic simp?",
    "simp?!": "search tactic simp?!",
    "aesop?": "search tactic aesop?",
    "skipKernelTC": "debug.skipKernelTC",
}
NATIVE_NAMES = frozenset({"native_decide", "native"})
# Name shapes of commands that extend Lean (``declare_uint_simprocs``, ``register_tactic_tag``, ...):
# no lemma a proof uses is named so, and a keyword among them begins a command wherever it stands.
COMMAND_PREFIXES = ("declare_", "register_", "builtin_", "initialize", "compile_", "mk_iff_of_", "variable")
# First name components that lead into metaprogramming, the compiler or I/O (``_root_`` removed):
# a proof of a competition statement needs none of them, and each can run code at elaboration time.
METAPROGRAMMING_ROOTS = frozenset(
    {
        "Lean",
        "Mathlib",
        "Aesop",
        "Qq",
        "Batteries",
        "Std",
        "Lake",
        "IO",
        "EIO",
        "BaseIO",
        "System",
        "ProofWidgets",
        "Plausible",
        "ImportGraph",
        "LeanSearchClient",
    }
)
# Metaprogramming names reachable without the ``Lean.`` prefix (after ``open``, via ``export`` or dot
# notation), compared per name component.
METAPROGRAMMING_NAMES = frozenset(
    {
        "CoreM",
        "MetaM",
        "TermElabM",
        "TacticM",
        "CommandElabM",
        "SimpM",
        "MacroM",
        "Simproc",
        "DSimproc",
        "Environment",
        "Declaration",
        "ConstantInfo",
        "TheoremVal",
        "thmDecl",
        "axiomDecl",
        "defnDecl",
        "addDecl",
        "addAndCompile",
        "getEnv",
        "setEnv",
        "modifyEnv",
        "getConstInfo",
        "mkConst",
        "Expr",
        "Syntax",
        "TSyntax",
        "Name",
        "MVarId",
        "FVarId",
        "evalExpr",
        "evalTactic",
        "evalTerm",
        "elabTerm",
        "withOptions",
        "unsafeCast",
        "unsafeIO",
        "unsafeBaseIO",
        "unsafeEIO",
        "ptrAddrUnsafe",
        "panic",
        "dbg_trace",
        "dbgTrace",
        "dbgTraceIfShared",
        "throwError",
        "throwErrorAt",
        "logInfo",
        "trace",
        "Elab",
        "Meta",
        "Macro",
        "Tactic",
        "Term",
        "Command",
        "ToExpr",
        "toExpr",
        "Quote",
    }
)
# Characters other than ``\n`` that ``str.splitlines`` (and so the Kimina server, which splits and
# re-joins the code) treats as line breaks, other control and format characters, and lone surrogates:
# where they appear, our reading of comments and lines may differ from what Lean is sent.
_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
_SAFE_CONTROLS = frozenset("\n\t")
_SIMPLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_LITERAL_KINDS = {
    Kind.string: "string literal",
    Kind.char: "char literal",
    Kind.raw_string: "raw string literal",
    Kind.interpolated_string: "interpolated string",
}


@dataclass
class Declaration:
    keyword: str
    name: str
    modifiers: list[str]
    start: int


@dataclass
class ScanResult:
    """What the static layer found; ``forbidden`` empty means Lean may see the code."""

    forbidden: list[str] = field(default_factory=list)
    declarations: list[Declaration] = field(default_factory=list)
    unterminated: str | None = None
    lean_code: str = ""  # the code Lean checks: verbatim, the leading imports blanked (the header has them)
    uses_native_decide: bool = False
    uses_search_tactic: bool = False

    def refuse(self, label: str) -> None:
        if label not in self.forbidden:
            self.forbidden.append(label)


def header_imports(header: str) -> set[str]:
    tokens = significant(lex(header))
    return {tokens[i + 1].text for i, t in enumerate(tokens[:-1]) if t.text == "import"}


def header_opens(header: str) -> set[str]:
    found: set[str] = set()
    tokens = significant(lex(header))
    for index, token in enumerate(tokens):
        if token.text != "open":
            continue
        for following in tokens[index + 1 :]:
            if following.kind != Kind.identifier or following.text in COMMAND_KEYWORDS or following.text == "in":
                break
            found.add(following.name)
    return found


def unsafe_characters(code: str) -> list[str]:
    """Line-break, control and format characters other than ``\\n`` and tab, named with their position."""
    found: list[str] = []
    for index, char in enumerate(code):
        if char not in _SAFE_CONTROLS and unicodedata.category(char) in _UNSAFE_CATEGORIES:
            line, column = line_column(code, index)
            found.append(f"character U+{ord(char):04X} at line {line}:{column}")
    return found


def _where(code: str, token: Token) -> str:
    line, column = line_column(code, token.start)
    return f"line {line}:{column}"


def scan(
    code: str,
    *,
    header: str,
    allow_native_decide: bool = False,
    open_allowlist: frozenset[str] = DEFAULT_OPEN_ALLOWLIST,
    line_starts: bool = True,
    main_name: str | None = None,
) -> ScanResult:
    """Apply the allowlist to prover ``code``; every refusal is named with its position.

    ``main_name`` (the statement's theorem name) is the one dotted declaration name allowed.

    With ``line_starts``, an identifier that begins a line after a complete term (not after ``:``,
    ``:=``, an operator or an open bracket, which a continued term follows) must be an allowed command
    (or ``by``/``end``): commands Lean knows but this module does not are refused where they stand. A formal
    statement is checked without it: an unknown command inside one theorem only makes Lean fail.
    """
    result = ScanResult()
    characters = unsafe_characters(code)
    if characters:
        # refused whatever the lexer reads: the Kimina server splits lines at these, so Lean may not read what we lex
        for label in characters[:5]:
            result.refuse(f"{label} (only \\n may break a line; no control or format characters)")
    tokens = lex(code)
    error = lex_error(tokens)
    if error is not None:
        result.unterminated = f"unterminated comment, string, char or «name» at {_where(code, error)}"
        return result
    try:
        tables = gate_tables()
    except UnknownToolchainError as error:
        result.refuse(f"no syntax tables ({error})")  # fail closed: without them no command is known
        return result
    opens_allowed = set(open_allowlist) | header_opens(header)
    imports_allowed = header_imports(header)
    words = significant(tokens)
    blanked: list[tuple[int, int]] = []
    in_preamble = True
    index = 0
    while index < len(words):
        token = words[index]
        following = words[index + 1] if index + 1 < len(words) else None
        where = _where(code, token)
        if token.kind == Kind.identifier and token.text == "import":
            module = following.text if following is not None else ""
            if not in_preamble or module not in imports_allowed:
                result.refuse(f"import {module} ({where}; only the pinned header's imports, at the top)")
            elif following is not None:
                blanked.append((token.start, following.end))
            index += 2
            continue
        in_preamble = False
        if token.kind == Kind.hash_command:
            result.refuse(f"{token.text} ({where})")
        elif token.kind == Kind.attribute_open:
            if _simp_attribute_on_theorem(words, index):
                index += 3
                continue
            result.refuse(f"attribute @[...] ({where}; only @[simp] on a theorem or lemma)")
        elif token.kind in _LITERAL_KINDS:
            # Lean runs code inside literals (``throwError "{...}"`` interpolates a plain string) and
            # a proof needs none: every string and char literal is refused
            result.refuse(f"{_LITERAL_KINDS[token.kind]} ({where}; no string or char literals in prover code)")
        elif token.kind == Kind.quotation:
            result.refuse(f"name literal or syntax quotation ({where})")
        elif token.kind == Kind.identifier:
            index = _identifier(
                code, words, index, result, opens_allowed, allow_native_decide, line_starts, main_name, tables
            )
            continue
        index += 1
    result.lean_code = _blank(code, blanked)
    return result


def _identifier(
    code: str,
    words: list[Token],
    index: int,
    result: ScanResult,
    opens_allowed: set[str],
    allow_native_decide: bool,
    line_starts: bool,
    main_name: str | None,
    tables: SyntaxTables,
) -> int:
    """Judge the identifier at ``index``; returns the index of the next token to look at."""
    token = words[index]
    where = _where(code, token)
    text = token.text
    _judge_name(code, token, result, allow_native_decide)
    following = words[index + 1] if index + 1 < len(words) else None
    glued = following is not None and following.text == "%" and following.start == token.end
    if tables.evaluates(text + "%" if glued else text):
        # generated from the sources: ``run_conv``, ``polyrith``, ``eval%``, ``lrat_proof``, ...
        result.refuse(f"{text}{'%' if glued else ''} ({where}; its implementation evaluates code)")
    if text == "open":
        return _open(code, words, index, result, opens_allowed)
    if text == "set_option":
        option = words[index + 1] if index + 1 < len(words) else None
        value = words[index + 2] if index + 2 < len(words) else None
        option_name = option.name if option is not None and option.kind == Kind.identifier else "?"
        if option_name not in ALLOWED_OPTIONS or value is None or value.kind != Kind.number:
            result.refuse(f"set_option {option.text if option else ''} ({where}; only resource limits)")
        return index + 3
    if text in DECLARATION_KEYWORDS:
        name = words[index + 1] if index + 1 < len(words) else None
        if name is None or name.kind != Kind.identifier or name.text in COMMAND_KEYWORDS:
            result.refuse(f"{text} without a name ({where})")
            return index + 1
        modifiers = []
        back = index - 1
        while back >= 0 and words[back].text in ALLOWED_MODIFIERS:
            modifiers.append(words[back].text)
            back -= 1
        _judge_name(code, name, result, allow_native_decide)
        declared = name.name
        if "." in declared and declared != main_name:
            result.refuse(f"declaration {name.text} inside a namespace ({where})")
        result.declarations.append(Declaration(text, declared, modifiers, token.start))
        return index + 2
    if text in ALLOWED_MODIFIERS or text == "example":
        return index + 1
    if text in ("universe", "universes"):
        return _universe(code, words, index, result)
    if tables.is_command(text) or text.startswith(COMMAND_PREFIXES):
        result.refuse(f"{text} ({where})")
        return index + 1
    spaced = following is not None and (following.end == len(code) or code[following.end].isspace())
    if glued and following is not None and (spaced or text in tables.glued_percent):
        # ``eval%``, ``compile_inductive%``: a keyword the table knows is one token whatever follows it
        # (``eval%(f 1)``); an unknown name glued to ``%`` and a space is refused too (fail closed)
        result.refuse(f"{text}% ({where}; no elaborator keywords)")
        return index + 2
    previous = words[index - 1] if index > 0 else None
    continues = previous is not None and previous.kind == Kind.symbol and previous.text not in (")", "]", "}", "⟩")
    if line_starts and _at_column_zero(code, token) and not continues and text not in ("by", "end"):
        result.refuse(f"{text} at the start of a line ({where}; not a command the gate allows)")
    return index + 1


def _judge_name(code: str, token: Token, result: ScanResult, allow_native_decide: bool) -> None:
    """Rules on every name component, wherever the name stands (a declaration's own name included)."""
    where = _where(code, token)
    text = token.text
    parts = identifier_parts(text)
    rooted = parts[1:] if parts[0] == "_root_" and len(parts) > 1 else parts
    if rooted[0] in METAPROGRAMMING_ROOTS:
        result.refuse(f"{text}: the {rooted[0]} namespace ({where}; no metaprogramming, compiler or I/O)")
    for part in parts:
        if part in FORBIDDEN_NAMES:
            result.refuse(f"{FORBIDDEN_NAMES[part]} ({where})")
            if part.endswith(("?", "?!")):
                result.uses_search_tactic = True
        if part in METAPROGRAMMING_NAMES:
            result.refuse(f"{text}: metaprogramming name {part} ({where})")
        if RESERVED_PREFIX in part:
            result.refuse(f"reserved name {text} ({where})")
        if part in NATIVE_NAMES:
            result.uses_native_decide = True
            if not allow_native_decide:
                result.refuse(f"native_decide ({where})")


def _open(code: str, words: list[Token], index: int, result: ScanResult, opens_allowed: set[str]) -> int:
    """``open [scoped] A B ... [in]``: every name from the allowlist; no ``hiding``/``renaming``/``(x)``."""
    where = _where(code, words[index])
    cursor = index + 1
    if cursor < len(words) and words[cursor].text == "scoped":
        cursor += 1
    names = 0
    while cursor < len(words):
        word = words[cursor]
        if word.kind != Kind.identifier or word.text in COMMAND_KEYWORDS or word.text in ("in", "by"):
            break
        if word.text in ("hiding", "renaming"):
            result.refuse(f"open ... {word.text} ({where})")
        elif word.name not in opens_allowed:
            result.refuse(f"open {word.text} ({where}; not in the open allowlist)")
        names += 1
        cursor += 1
    if names == 0:
        result.refuse(f"open without names ({where})")
    if cursor < len(words) and words[cursor].kind == Kind.symbol and words[cursor].text == "(":
        result.refuse(f"open with an explicit name list ({where})")
    return cursor


def _universe(code: str, words: list[Token], index: int, result: ScanResult) -> int:
    """``universe u v``: a plain name on the same line must follow (each name is judged as an identifier)."""
    token = words[index]
    following = words[index + 1] if index + 1 < len(words) else None
    if (
        following is None
        or following.kind != Kind.identifier
        or not _SIMPLE_NAME.fullmatch(following.text)
        or following.text in COMMAND_KEYWORDS
        or "\n" in code[token.end : following.start]
    ):
        result.refuse(f"{token.text} without a plain name ({_where(code, token)})")
    return index + 1


def _simp_attribute_on_theorem(words: list[Token], index: int) -> bool:
    """``@[simp]`` directly before ``[private] theorem|lemma``: a proven lemma added to the simp set."""
    texts = [word.text for word in words[index + 1 : index + 5]]
    if texts[:2] != ["simp", "]"] or words[index + 1].kind != Kind.identifier:
        return False
    rest = texts[2:]
    if rest and rest[0] == "private":
        rest = rest[1:]
    return bool(rest) and rest[0] in ("theorem", "lemma")


def _at_column_zero(code: str, token: Token) -> bool:
    return token.start == 0 or code[token.start - 1] == "\n"


def _blank(code: str, spans: list[tuple[int, int]]) -> str:
    """Replace each span by spaces (newlines kept), so Lean's positions match the prover's code."""
    characters = list(code)
    for start, end in spans:
        for position in range(start, end):
            if characters[position] != "\n":
                characters[position] = " "
    return "".join(characters)
