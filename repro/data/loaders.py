"""Source benchmark loaders: GSM8K and MATH in their original formats, generic JSONL/CSV, the hub.

Each loader yields :class:`SourceProblem` records. A malformed row raises :class:`DataError`
naming the file, line and field, unless ``skip_bad_rows`` is set; then it is counted in
:class:`LoadReport` and skipped.
"""

from __future__ import annotations

import csv
import json
import random
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from repro.config import DatasetSettings
from repro.data.answers import last_boxed_answer, parse_gsm8k_answer
from repro.data.errors import DataError
from repro.records import SourceProblem

HUB_DATASETS: dict[str, tuple[str, str | None]] = {
    "gsm8k": ("openai/gsm8k", "main"),
    "math": ("EleutherAI/hendrycks_math", None),
}
MATH_HUB_CONFIGS = (
    "algebra",
    "counting_and_probability",
    "geometry",
    "intermediate_algebra",
    "number_theory",
    "prealgebra",
    "precalculus",
)


@dataclass
class LoadReport:
    """What a load did: how many rows were read, kept and skipped (with the first few reasons)."""

    source: str
    rows_read: int = 0
    skipped: int = 0
    skip_reasons: list[str] = field(default_factory=list)


RowParser = Callable[[dict[str, Any], str, int], SourceProblem]


def _require_text(row: dict[str, Any], key: str, source: str, line: int) -> str:
    if key not in row:
        raise DataError(source, line, key, "missing")
    value = row[key]
    if not isinstance(value, str) or not value.strip():
        raise DataError(source, line, key, f"expected non-empty text, got {value!r:.60}")
    return value


def _row_id(row: dict[str, Any], id_field: str | None, line: int) -> str:
    for key in filter(None, (id_field, "id", "unique_id", "idx")):
        if key in row and row[key] not in (None, ""):
            return str(row[key])
    return str(line - 1)


def parse_gsm8k_row(row: dict[str, Any], source: str, line: int, *, name: str = "gsm8k") -> SourceProblem:
    question = _require_text(row, "question", source, line)
    solution = _require_text(row, "answer", source, line)
    try:
        answer = parse_gsm8k_answer(solution)
    except ValueError as error:
        raise DataError(source, line, "answer", str(error)) from None
    source_id = _row_id(row, None, line)
    return SourceProblem(
        problem_id=f"{name}:{source_id}",
        source=name,
        source_id=source_id,
        question=question,
        answer=answer,
        solution=solution,
    )


def parse_math_row(row: dict[str, Any], source: str, line: int, *, name: str = "math") -> SourceProblem:
    problem = _require_text(row, "problem", source, line)
    solution = _require_text(row, "solution", source, line)
    answer = row.get("answer") if isinstance(row.get("answer"), str) and row.get("answer") else None
    answer = answer or last_boxed_answer(solution)
    if not answer:
        raise DataError(source, line, "solution", "no \\boxed{...} or \\fbox{...} answer")
    source_id = _row_id(row, None, line)
    return SourceProblem(
        problem_id=f"{name}:{source_id}",
        source=name,
        source_id=source_id,
        question=problem,
        answer=answer,
        solution=solution,
        level=row.get("level"),
        type=row.get("type"),
    )


def generic_parser(settings: DatasetSettings, name: str) -> RowParser:
    question_field = settings.question_field or "question"
    answer_field = settings.answer_field or "answer"

    def parse(row: dict[str, Any], source: str, line: int) -> SourceProblem:
        question = _require_text(row, question_field, source, line)
        if answer_field not in row or row[answer_field] in (None, ""):
            raise DataError(source, line, answer_field, "missing")
        source_id = _row_id(row, settings.id_field, line)
        known = {question_field, answer_field, settings.id_field, "level", "type"}
        return SourceProblem(
            problem_id=f"{name}:{source_id}",
            source=name,
            source_id=source_id,
            question=question,
            answer=str(row[answer_field]).strip(),
            level=str(row["level"]) if row.get("level") is not None else None,
            type=str(row["type"]) if row.get("type") is not None else None,
            extra={k: v for k, v in row.items() if k not in known and isinstance(v, str | int | float | bool)},
        )

    return parse


def _read_rows(path: Path) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
    """Yield (line, row, error) from JSONL, JSON (a list) or CSV."""
    if path.suffix == ".csv":
        with path.open(newline="", encoding="utf-8") as handle:
            for index, row in enumerate(csv.DictReader(handle), start=2):
                yield index, dict(row), None
        return
    if path.suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, list):
            raise DataError(str(path), None, None, "expected a JSON list of objects")
        for index, row in enumerate(data, start=1):
            yield index, row if isinstance(row, dict) else None, None if isinstance(row, dict) else "not an object"
        return
    with path.open(encoding="utf-8") as handle:
        for index, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            try:
                row = json.loads(text)
            except json.JSONDecodeError as error:
                yield index, None, f"not valid JSON ({error.msg})"
                continue
            yield index, row if isinstance(row, dict) else None, None if isinstance(row, dict) else "not a JSON object"


def _detect_parser(first_row: dict[str, Any], settings: DatasetSettings, name: str) -> RowParser:
    if settings.question_field or settings.answer_field:
        return generic_parser(settings, name)
    if {"problem", "solution"} <= first_row.keys():
        return lambda row, source, line: parse_math_row(row, source, line, name=name)
    if {"question", "answer"} <= first_row.keys() and "####" in str(first_row.get("answer", "")):
        return lambda row, source, line: parse_gsm8k_row(row, source, line, name=name)
    return generic_parser(settings, name)


def _parse_rows(
    rows: Iterable[tuple[int, dict[str, Any] | None, str | None]],
    source: str,
    settings: DatasetSettings,
    name: str,
    report: LoadReport,
    parser: RowParser | None = None,
) -> list[SourceProblem]:
    problems: list[SourceProblem] = []
    for line, row, error in rows:
        report.rows_read += 1
        try:
            if row is None:
                raise DataError(source, line, None, error or "unreadable row")
            parser = parser or _detect_parser(row, settings, name)
            problems.append(parser(row, source, line))
        except DataError as data_error:
            if not settings.skip_bad_rows:
                raise
            report.skipped += 1
            if len(report.skip_reasons) < 20:
                report.skip_reasons.append(str(data_error))
    return problems


def _load_hub(settings: DatasetSettings, report: LoadReport) -> list[SourceProblem]:
    import datasets

    repo, config = HUB_DATASETS.get(settings.name, (settings.name, None))
    configs: list[str | None] = list(MATH_HUB_CONFIGS) if settings.name == "math" else [config]
    problems: list[SourceProblem] = []
    name = settings.name if settings.name in HUB_DATASETS else repo.split("/")[-1]
    for hub_config in configs:
        try:
            dataset = datasets.load_dataset(repo, hub_config, split=settings.split)
        except Exception as error:  # the hub raises many types (connection, offline mode, missing repo)
            raise DataError(
                f"hub:{repo}" + (f"/{hub_config}" if hub_config else ""),
                None,
                None,
                f"could not load from the Hugging Face hub ({type(error).__name__}: {str(error)[:200]}). "
                "If this machine is offline, pass a local file instead: --dataset PATH.jsonl "
                "(GSM8K: question/answer with '#### N'; MATH: problem/solution/level/type)",
            ) from None
        offset = len(problems)
        rows = ((offset + index + 1, dict(row), None) for index, row in enumerate(dataset))
        problems.extend(_parse_rows(rows, f"hub:{repo}", settings, name, report))
    return problems


def load_source(settings: DatasetSettings) -> tuple[list[SourceProblem], LoadReport]:
    """Load every problem of the configured source (before filters)."""
    path = Path(settings.path) if settings.path else None
    if path is None and settings.name not in HUB_DATASETS and Path(settings.name).suffix:
        path = Path(settings.name)
    if path is not None:
        if not path.is_file():
            raise DataError(str(path), None, None, "file not found")
        name = settings.name if settings.path else path.stem
        report = LoadReport(source=str(path))
        return _parse_rows(_read_rows(path), str(path), settings, name, report), report
    report = LoadReport(source=f"hub:{settings.name}")
    return _load_hub(settings, report), report


def apply_filters(problems: list[SourceProblem], settings: DatasetSettings) -> list[SourceProblem]:
    """Levels, types and ids select; then seeded sampling; then limit."""
    selected = problems
    if settings.levels:
        wanted = {_normalize_level(level) for level in settings.levels}
        selected = [p for p in selected if p.level and _normalize_level(p.level) in wanted]
    if settings.types:
        wanted_types = {t.strip().lower() for t in settings.types}
        selected = [p for p in selected if p.type and p.type.strip().lower() in wanted_types]
    if settings.ids:
        wanted_ids = set(settings.ids)
        selected = [p for p in selected if p.source_id in wanted_ids or p.problem_id in wanted_ids]
    if settings.sample is not None:
        generator = random.Random(settings.seed)
        selected = generator.sample(selected, min(settings.sample, len(selected)))
    if settings.limit is not None:
        selected = selected[: settings.limit]
    return selected


def _normalize_level(level: str) -> str:
    return level.strip().lower().removeprefix("level").strip()


def load_problems(settings: DatasetSettings) -> tuple[list[SourceProblem], LoadReport]:
    problems, report = load_source(settings)
    return apply_filters(problems, settings), report


def seeded_order(problems: list[SourceProblem], seed: int) -> list[SourceProblem]:
    """A reproducible shuffled drawing order, used by ``--target`` to draw until enough are retained."""
    ordered = list(problems)
    random.Random(seed).shuffle(ordered)
    return ordered
