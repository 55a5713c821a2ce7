"""Repaired texts of a near-miss prover output: each a candidate the soundness gate then judges alone.

A prover often fails for reasons that are not its mathematics (RePro, App. J: special tokens that
corrupt the theorem header, a restated target, a tactic repeated until the length limit, an unclosed
fence, junk after the proof). The repairs here only rewrite *text*; none of them decides anything.
Each variant is a complete fenced Lean block that goes through :func:`repro.lean.verify_proof` exactly
like a raw sample, so whatever a variant contains, Lean decides whether it proves our statement.

Two rules keep the repairs from helping a cheat: the code before the prover's main theorem is never
touched except for special-token removal (a prefix that poisons the environment stays in the text the
gate reads), and the re-spliced statement is always *our* statement, never the prover's, so Lean
checks the prover's proof body against exactly what was formalized.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from pydantic import BaseModel

from repro.lean.tables import COMMAND_KEYWORDS
from repro.lean.text import (
    Kind,
    LeanCode,
    StatementError,
    Token,
    depths,
    lex,
    line_column,
    read_output,
    read_statement,
    significant,
)
from repro.lean.text.blocks import SPECIAL_TOKEN

DEFAULT_MAX_VARIANTS = 4
# a block of 1..MAX_PERIOD lines repeated MIN_REPEATS times in a row is a repetition loop
MAX_PERIOD = 4
MIN_REPEATS = 3
_THINK_END = "</think>"
# a line ending in one of these was cut before its tactic or term was complete
_INCOMPLETE_ENDINGS = ("<;", "<;>", "·", "by", ":=", ",", "<|", "(", "[", "{", "⟨", "=>", "fun")
_BINDERS = frozenset({"let", "have", "haveI", "letI", "set", "show"})
# a line starting with one of these at column 0 still continues a tactic block
_CONTINUATIONS = frozenset({"<;>", "·", "|", ".", "<|>"})


class SalvageKind(StrEnum):
    """What a repair did to the text (a variant may combine several, in this order)."""

    special_tokens = "special_tokens"  # special-token strings deleted
    cut_at_special_token = "cut_at_special_token"  # everything from the first special token on dropped
    closed_fence = "closed_fence"  # an unclosed ```lean block taken as if it were closed
    complete_at_limit = "complete_at_limit"  # code cut at the length limit checked as it stands
    truncated_tail = "truncated_tail"  # the incomplete last line of a length-limited output dropped
    repetition = "repetition"  # a repeating tactic block trimmed to its first copy
    trailing_junk = "trailing_junk"  # everything after the main theorem's last line dropped
    respliced_statement = "respliced_statement"  # our statement put in place of the prover's signature


class SalvageVariant(BaseModel):
    kinds: list[SalvageKind]
    text: str  # a fenced Lean block: what the gate checks

    @property
    def label(self) -> str:
        return "+".join(kind.value for kind in self.kinds)


@dataclass(frozen=True)
class _Declaration:
    start: int  # offset of the theorem/lemma keyword
    name: str
    assign: Token  # the ``:=`` that ends the signature
    end: int  # offset just after the declaration's last significant token


def salvage_variants(
    statement: str,
    output: str,
    finish_reason: str = "stop",
    *,
    limit: int = DEFAULT_MAX_VARIANTS,
    original_code: str | None = None,
) -> list[SalvageVariant]:
    """Up to ``limit`` repaired texts of ``output``, the most repaired first; none equal to the original.

    Order: per source (special tokens deleted, then cut at the first one), the code with every
    applicable repair, then with fewer; each first with our statement spliced in, then with the
    prover's own header (which Lean's bridge may still accept as the same type).

    ``original_code`` is the code the gate already checked for the raw output: a variant that would
    check the same code again is left out (it cannot change the verdict).
    """
    try:
        ours = read_statement(statement)
    except StatementError:
        return []
    if limit <= 0:
        return []
    seen = {_normal(original_code)} if original_code else set()
    found: list[SalvageVariant] = []
    for kinds, text in _sources(output):
        extracted = _extract(text, finish_reason)
        if extracted is None:
            continue
        code_kinds, code = extracted
        base = [*kinds, *code_kinds]
        if finish_reason == "length" and not base:
            base = [SalvageKind.complete_at_limit]
        for more, variant_code in _code_variants(code, ours.name, finish_reason):
            spliced = _resplice(variant_code, ours.name, ours.declaration)
            options = [(spliced, [SalvageKind.respliced_statement]), (variant_code, [])]
            if spliced is not None and _normal(spliced) == _normal(variant_code):
                options = options[1:]  # the prover's header already is ours: nothing was re-spliced
            for final, splice in options:
                if final is None or _main_declaration(final, ours.name) is None:
                    continue
                applied = [*base, *more, *splice]
                key = _normal(final)
                if not applied or not key or key in seen:
                    continue
                seen.add(key)
                found.append(SalvageVariant(kinds=applied, text=f"```lean4\n{final.strip()}\n```"))
                if len(found) >= limit:
                    return found
    return found


def _normal(code: str) -> str:
    return " ".join(token.text for token in significant(lex(code)))


def _sources(output: str) -> list[tuple[list[SalvageKind], str]]:
    """The output with its special tokens deleted, and cut at the first one; or the output itself."""
    first = SPECIAL_TOKEN.search(output)
    if first is None:
        return [([], output)]
    sources = [([SalvageKind.special_tokens], SPECIAL_TOKEN.sub("", output))]
    head = output[: first.start()]
    if head.strip():
        sources.append(([SalvageKind.cut_at_special_token], head))
    return sources


def _extract(text: str, finish_reason: str) -> tuple[list[SalvageKind], str] | None:
    """The Lean code of ``text`` as the gate reads it (one read, :func:`repro.lean.text.read_output`),
    taking an unclosed last block as closed."""
    output = read_output(text, "stop")
    if not output.fenced:
        body = text.rsplit(_THINK_END, 1)[1] if _THINK_END in text else text
        return ([], body.strip("\n")) if body.strip() else None
    if output.extracted is None:
        return None
    kinds = [] if output.closed else [SalvageKind.closed_fence]
    return kinds, output.extracted.text.strip("\n")


def _main_declaration(code: str, name: str) -> _Declaration | None:
    """Our theorem if the code declares it, else the prover's last theorem/lemma (a renamed target)."""
    lexed = LeanCode.of(code)
    if lexed.error is not None:
        return None
    words = lexed.significant
    level = depths(words)
    starts = [
        i
        for i, t in enumerate(words[:-1])
        if t.kind == Kind.identifier and t.text in ("theorem", "lemma") and words[i + 1].kind == Kind.identifier
    ]
    if not starts:
        return None
    named = [i for i in starts if words[i + 1].name.removeprefix("_root_.") == name]
    index = named[-1] if named else starts[-1]
    assign = _signature_end(words, level, index)
    if assign is None:
        return None
    end = _declaration_end(code, words, assign)
    return _Declaration(words[index].start, words[index + 1].name, words[assign], end)


def _signature_end(words: list[Token], level: list[int], index: int) -> int | None:
    """Index of the ``:=`` that ends the signature: the first one at depth 0 not owned by a let/have."""
    for position in range(index + 2, len(words)):
        token = words[position]
        if level[position] == 0 and token.kind == Kind.identifier and token.text in COMMAND_KEYWORDS:
            return None  # the next command began before any ``:=``: no proof body to take
        if level[position] != 0 or token.text != ":=":
            continue
        owner = next(
            (
                words[back].text
                for back in range(position - 1, index, -1)
                if level[back] == 0 and (words[back].text in _BINDERS or words[back].text == ":=")
            ),
            None,
        )
        if owner in _BINDERS:
            continue
        return position
    return None


def _first_on_line(code: str, token: Token) -> bool:
    line_start = code.rfind("\n", 0, token.start) + 1
    return not code[line_start : token.start].strip()


def _declaration_end(code: str, words: list[Token], assign: int) -> int:
    """Where the main declaration stops: before the first later line that starts at column 0 (a new
    command, prose, another attempt), unless that line continues a tactic block."""
    assign_line = line_column(code, words[assign].start)[0]
    last = words[assign]
    for token in words[assign + 1 :]:
        line, column = line_column(code, token.start)
        if line > assign_line and column == 0 and _first_on_line(code, token) and token.text not in _CONTINUATIONS:
            break
        last = token
    return last.end


def _lines_after(code: str, offset: int) -> list[tuple[int, int]]:
    """(start, end) of each non-blank line that begins after ``offset``, comments left in place."""
    spans = []
    cursor = code.find("\n", offset)
    while cursor != -1:
        start = cursor + 1
        cursor = code.find("\n", start)
        end = len(code) if cursor == -1 else cursor
        if code[start:end].strip():
            spans.append((start, end))
    return spans


def _code_variants(code: str, name: str, finish_reason: str) -> list[tuple[list[SalvageKind], str]]:
    """Text-level repairs of the code's main declaration, the most repaired first, the code itself last
    (each cut keeps everything before it)."""
    variants: list[tuple[list[SalvageKind], str]] = [([], code)]
    declaration = _main_declaration(code, name)
    if declaration is None:
        return variants
    kept = code
    kinds: list[SalvageKind] = []
    if finish_reason == "length":
        cut = _drop_incomplete_tail(code, declaration)
        if cut is not None:
            kinds.append(SalvageKind.truncated_tail)
            kept = cut
            variants.append((list(kinds), kept))
    repeated = _trim_repetition(kept, declaration)
    if repeated is not None:
        kinds.append(SalvageKind.repetition)
        kept = repeated
        variants.append((list(kinds), kept))
    if kept[declaration.end :].strip():
        variants.append(([*kinds, SalvageKind.trailing_junk], kept[: declaration.end]))
    return variants[::-1]


def _drop_incomplete_tail(code: str, declaration: _Declaration) -> str | None:
    """The code without its last lines while they look cut off (the model hit its token limit)."""
    lines = _lines_after(code, declaration.assign.end)
    if not lines:
        return None
    end = lines[-1][0] - 1  # drop the last line: at the length limit it is the one that was cut
    for start, _ in reversed(lines[:-1]):
        text = code[start:end].rstrip()
        if not text.endswith(_INCOMPLETE_ENDINGS):
            break
        end = start - 1
    return code[: max(end, declaration.assign.end)].rstrip()


def _trim_repetition(code: str, declaration: _Declaration) -> str | None:
    """The code up to the first copy of a block of lines that then repeats MIN_REPEATS times in a row."""
    lines = [(start, end) for start, end in _lines_after(code, declaration.assign.end) if start < declaration.end]
    texts = [code[start:end].strip() for start, end in lines]
    for first in range(len(texts)):
        for period in range(1, MAX_PERIOD + 1):
            block = texts[first : first + period]
            if len(block) < period:
                break
            copies = 1
            while texts[first + copies * period : first + (copies + 1) * period] == block:
                copies += 1
            if copies >= MIN_REPEATS:
                return code[: lines[first + period - 1][1]].rstrip()
    return None


def _resplice(code: str, name: str, our_declaration: str) -> str | None:
    """The code with its main theorem's header replaced by ours (same body, same code before it)."""
    declaration = _main_declaration(code, name)
    if declaration is None:
        return None
    body = code[declaration.assign.start : declaration.end]
    return f"{code[: declaration.start]}{our_declaration} {body}"
