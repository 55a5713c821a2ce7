"""The static layer of the soundness gate: an allowlist of what prover code may contain.

Rules run on the lexer's tokens, anywhere in the code (never "at a line start"), so a comment, a
string, a quoted identifier or a second command on the same line cannot hide anything. What is not
allowed is refused with its name. The static layer never accepts a proof: it only decides whether
the code may be sent to Lean, which then decides identity (the bridge) and axioms.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from repro.lean.lexer import Kind, Token, identifier_parts, lex, lex_error, line_column, significant
from repro.lean.source import COMMAND_KEYWORDS

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
) -> ScanResult:
    """Apply the allowlist to prover ``code``; every refusal is named with its position.

    With ``line_starts``, an identifier that begins a line after a complete term (not after ``:``,
    ``:=``, an operator or an open bracket, which a continued term follows) must be an allowed command
    (or ``by``/``end``): commands Lean knows but this module does not are refused where they stand. A formal
    statement is checked without it: an unknown command inside one theorem only makes Lean fail.
    """
    result = ScanResult()
    tokens = lex(code)
    error = lex_error(tokens)
    if error is not None:
        result.unterminated = f"unterminated comment, string, char or «name» at {_where(code, error)}"
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
            result.refuse(f"attribute @[...] ({where})")
        elif token.kind == Kind.interpolated_string:
            result.refuse(f"interpolated string ({where})")
        elif token.kind == Kind.raw_string:
            # no use in a proof, and a toolchain without raw strings would read the text differently
            result.refuse(f"raw string literal ({where})")
        elif token.kind == Kind.quotation:
            result.refuse(f"name literal or syntax quotation ({where})")
        elif token.kind == Kind.identifier:
            index = _identifier(code, words, index, result, opens_allowed, allow_native_decide, line_starts)
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
) -> int:
    """Judge the identifier at ``index``; returns the index of the next token to look at."""
    token = words[index]
    where = _where(code, token)
    text = token.text
    parts = identifier_parts(text)
    for part in parts:
        if part in FORBIDDEN_NAMES:
            result.refuse(f"{FORBIDDEN_NAMES[part]} ({where})")
            if part.endswith(("?", "?!")):
                result.uses_search_tactic = True
        if part.startswith(RESERVED_PREFIX):
            result.refuse(f"reserved name {text} ({where})")
        if part in NATIVE_NAMES:
            result.uses_native_decide = True
            if not allow_native_decide:
                result.refuse(f"native_decide ({where})")
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
        declared = name.name
        if "." in declared:
            result.refuse(f"declaration {name.text} inside a namespace ({where})")
        result.declarations.append(Declaration(text, declared, modifiers, token.start))
        return index + 2
    if text in ALLOWED_MODIFIERS or text == "example":
        return index + 1
    if text in COMMAND_KEYWORDS:
        result.refuse(f"{text} ({where})")
        return index + 1
    previous = words[index - 1] if index > 0 else None
    continues = previous is not None and previous.kind == Kind.symbol and previous.text not in (")", "]", "}", "⟩")
    if line_starts and _at_column_zero(code, token) and not continues and text not in ("by", "end"):
        result.refuse(f"{text} at the start of a line ({where}; not a command the gate allows)")
    return index + 1


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
