"""Named values a caller reads per retained candidate, without knowing the store's tables or payloads.

A release asks for "the problem's ``question``, the candidate's ``lean_statement``, ..." as
:class:`StoredField` values; the store alone turns them into SQL over its own tables (a field kept
as a column beside the payload is read from the column). So the store's layout can change without
any caller changing, and a released row has one definition (``repro.release.rows``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Source = Literal["problem", "candidate", "parameter"]

# fields the store keeps as columns beside the JSON payload (reading the column skips a JSON parse)
_COLUMNS: dict[tuple[str, str], str] = {
    ("problem", "problem_id"): "p.problem_id",
    ("problem", "level"): "p.level",
    ("problem", "type"): "p.type",
    ("candidate", "candidate_id"): "c.candidate_id",
    ("candidate", "problem_id"): "c.problem_id",
}
_ALIASES = {"problem": "p", "candidate": "c"}


@dataclass(frozen=True)
class StoredField:
    """One value per row: a field of the stored problem or candidate record, or a bound parameter.

    ``default`` is what an absent or null field reads as; a ``boolean`` field reads as 0 or 1. With
    ``among``, the field is a condition: true when its value is one of those (``not_among``: none of them).
    """

    source: Source
    name: str
    default: str | int | None = None
    boolean: bool = False
    among: tuple[str, ...] = ()
    not_among: bool = False
    # a condition: the field equals this other field of the same record (both present; null is never equal)
    same_as: str | None = None

    def read(self, records: dict[str, Any], parameters: dict[str, Any]) -> Any:
        """The value from records already parsed (a single row built in Python reads the same value)."""
        value = parameters[self.name] if self.source == "parameter" else getattr(records[self.source], self.name)
        if self.same_as is not None:
            other = getattr(records[self.source], self.same_as)
            return value is not None and other is not None and value == other
        if value is None:
            value = self.default
        if self.among:
            return (value in self.among) != self.not_among
        return bool(value) if self.boolean else value


def problem_field(name: str, *, default: str | None = None) -> StoredField:
    return StoredField("problem", name, default)


def candidate_field(name: str, *, default: str | int | None = None, boolean: bool = False) -> StoredField:
    return StoredField("candidate", name, default, boolean)


def parameter(name: str) -> StoredField:
    return StoredField("parameter", name)


def candidate_among(name: str, values: tuple[str, ...], *, negate: bool = False, default: str = "") -> StoredField:
    """A condition: the candidate's ``name`` is one of ``values`` (with ``negate``, none of them)."""
    return StoredField("candidate", name, default, among=values, not_among=negate)


def candidate_same(name: str, other: str) -> StoredField:
    """A condition: the candidate's ``name`` is present and equals its ``other`` (null equals nothing)."""
    return StoredField("candidate", name, None, same_as=other)


def _literal(value: str | int) -> str:
    if isinstance(value, bool | int):
        return str(int(value))
    return "'" + value.replace("'", "''") + "'"


def expression(field: StoredField) -> str:
    """The SQL that reads ``field`` over the aliases ``p`` (problems) and ``c`` (candidates)."""
    if field.source == "parameter":
        return f":{field.name}"
    column = _COLUMNS.get((field.source, field.name))
    sql = column or f"json_extract({_ALIASES[field.source]}.payload, '$.{field.name}')"
    if field.same_as is not None:
        other = _COLUMNS.get((field.source, field.same_as))
        other = other or f"json_extract({_ALIASES[field.source]}.payload, '$.{field.same_as}')"
        return f"COALESCE({sql} = {other}, 0)"
    default = 0 if field.boolean and field.default is None else field.default
    if default is not None:
        sql = f"COALESCE({sql}, {_literal(default)})"
    if field.among:
        return f"{sql} {'NOT IN' if field.not_among else 'IN'} ({', '.join(_literal(v) for v in field.among)})"
    return f"{sql} != 0" if field.boolean else sql


def packed_expression(fields: tuple[StoredField, ...]) -> str:
    """One JSON array of several candidate fields, as stored (no defaults): one extraction per row."""
    if any(field.source != "candidate" or field.default is not None or field.boolean for field in fields):
        raise ValueError("packed fields are plain candidate fields")
    paths = ", ".join(f"'$.{field.name}'" for field in fields)
    return f"json_extract(c.payload, {paths})"


def json_member(name: str, field: StoredField) -> str:
    """``'name', value`` for SQLite's ``json_object`` (booleans as JSON true/false)."""
    sql = expression(field)
    if field.boolean:
        sql = f"json(CASE WHEN {sql} THEN 'true' ELSE 'false' END)"
    return f"'{name}', {sql}"
