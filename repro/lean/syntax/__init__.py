"""Lean's keyword tables per toolchain, generated from the pinned sources (see :mod:`.generate`).

The tables are committed JSON (``data/<toolchain>.json``) so neither CI nor the gate needs Lean. The
gate reads :func:`gate_tables`, the union over every committed toolchain: a keyword that is a
command or evaluates code under any toolchain we may check with is refused, so a table can never
be too small for the toolchain a run happens to use.

Keywords are compared by :func:`keyword_key`, which drops a trailing ``!``/``?`` on both sides:
``count_heartbeats!`` is ``count_heartbeats`` and ``aesop?`` is ``aesop``, whichever of the two
the table or the prover wrote.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from repro.lean.syntax.curated import NOT_EVALUATION

_DATA = Path(__file__).parent / "data"
CATEGORIES = ("command", "tactic", "conv", "term")


class UnknownToolchainError(LookupError):
    """No generated table for this toolchain: the gate refuses rather than guess."""


def keyword_key(text: str) -> str:
    """A keyword as compared: without a trailing ``!``/``?`` (``simp?!`` -> ``simp``)."""
    stripped = text.rstrip("!?")
    return stripped or text


@dataclass(frozen=True)
class SyntaxTables:
    """Keywords per category and the ones whose implementation evaluates code, by :func:`keyword_key`."""

    toolchains: tuple[str, ...]
    keywords: dict[str, frozenset[str]]
    evaluates_code: frozenset[str]

    @property
    def commands(self) -> frozenset[str]:
        return self.keywords["command"]

    @property
    def glued_percent(self) -> frozenset[str]:
        """Keywords ending in ``%`` (``eval%``, ``type_of%``), without the ``%``: glued, they are one token."""
        return frozenset(k[:-1] for words in self.keywords.values() for k in words if k.endswith("%"))

    def is_command(self, text: str) -> bool:
        return keyword_key(text) in self.commands

    def category(self, text: str) -> str | None:
        """The category a leading word belongs to, ``command`` first: a word that is both a command and a
        tactic keyword (``open``, ``set_option``, ``omit``) is a command, because at column 0 Lean may end
        the tactic block there and read the command; ``None`` for a word no table knows."""
        key = keyword_key(text)
        return next((category for category in CATEGORIES if key in self.keywords[category]), None)

    def keywords_of(self, category: str) -> frozenset[str]:
        """One category's keywords (by :func:`keyword_key`); for ``tactic``/``conv``/``term``, without the
        words that are also commands, so the set can serve as an allowlist without admitting a command."""
        words = self.keywords[category]
        return words if category == "command" else words - self.commands

    @property
    def tactics(self) -> frozenset[str]:
        """Tactic keywords that are not command keywords (see :meth:`keywords_of`)."""
        return self.keywords_of("tactic")

    def is_tactic(self, text: str) -> bool:
        """A known tactic keyword that is not also a command keyword."""
        return self.category(text) == "tactic"

    def is_conv(self, text: str) -> bool:
        return keyword_key(text) in self.keywords_of("conv")

    def is_term(self, text: str) -> bool:
        return keyword_key(text) in self.keywords_of("term")

    def evaluates(self, text: str) -> bool:
        return keyword_key(text) in self.evaluates_code


def available_toolchains() -> list[str]:
    return sorted(path.stem for path in _DATA.glob("*.json"))


@cache
def raw_table(toolchain: str) -> dict[str, object]:
    """The generated JSON of ``toolchain`` (sources read, keywords with where each is declared)."""
    path = _DATA / f"{toolchain}.json"
    if not path.is_file():
        raise UnknownToolchainError(
            f"no syntax table for toolchain {toolchain!r} (have {available_toolchains()}): "
            "run `python -m repro.lean.syntax.generate` over its sources"
        )
    loaded: dict[str, object] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def _build(toolchains: tuple[str, ...]) -> SyntaxTables:
    keywords: dict[str, set[str]] = {category: set() for category in CATEGORIES}
    evaluating: set[str] = set()
    for toolchain in toolchains:
        table = raw_table(toolchain)
        declared = table["keywords"]
        assert isinstance(declared, dict)
        for category in CATEGORIES:
            keywords[category] |= {keyword_key(k) for k in declared.get(category, {})}
        evaluates = table["evaluates_code"]
        assert isinstance(evaluates, dict)
        evaluating |= {keyword_key(k) for k in evaluates if k not in NOT_EVALUATION}
    # the glued-% rule needs the raw spelling; keep it alongside the keys
    for toolchain in toolchains:
        declared = raw_table(toolchain)["keywords"]
        assert isinstance(declared, dict)
        for category in CATEGORIES:
            keywords[category] |= {k for k in declared.get(category, {}) if k.endswith("%")}
    return SyntaxTables(toolchains, {c: frozenset(v) for c, v in keywords.items()}, frozenset(evaluating))


@cache
def load_tables(toolchain: str) -> SyntaxTables:
    """One toolchain's tables; :class:`UnknownToolchainError` when none was generated (fail closed)."""
    return _build((toolchain,))


@cache
def gate_tables() -> SyntaxTables:
    """The union over every committed toolchain: what the gate refuses."""
    toolchains = tuple(available_toolchains())
    if not toolchains:
        raise UnknownToolchainError("no syntax tables are installed with this package")
    return _build(toolchains)


__all__ = [
    "CATEGORIES",
    "SyntaxTables",
    "UnknownToolchainError",
    "available_toolchains",
    "gate_tables",
    "keyword_key",
    "load_tables",
    "raw_table",
]
