"""Source benchmark loaders: GSM8K and MATH in their original formats, generic JSONL/CSV, the hub.

Each loader yields :class:`SourceProblem` records. A malformed row raises :class:`DataError`
naming the file, line and field, unless ``skip_bad_rows`` is set; then it is counted in
:class:`LoadReport` and skipped.
"""

from __future__ import annotations

import csv
import difflib
import gzip
import io
import itertools
import json
import random
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, cast

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


MAX_KEPT_REASONS = 1000  # skip reasons kept for `status` and the dataset card
MAX_SHOWN_REASONS = 20  # bad rows listed in an error message


@dataclass
class LoadReport:
    """What a load did: rows read, rows skipped (each with its reason), rows the filters select."""

    source: str
    rows_read: int = 0
    skipped: int = 0
    skip_reasons: list[str] = field(default_factory=list)
    matching: int = 0
    missing_ids: list[str] = field(default_factory=list)


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


def _problem(name: str, source_id: str, **fields: Any) -> SourceProblem:
    """A problem of the source ``name``: its id is the source's name and the row's own, unique across sources."""
    return SourceProblem(problem_id=f"{name}:{source_id}", source=name, source_id=source_id, **fields)


def parse_gsm8k_row(row: dict[str, Any], source: str, line: int, *, name: str = "gsm8k") -> SourceProblem:
    question = _require_text(row, "question", source, line)
    solution = _require_text(row, "answer", source, line)
    try:
        answer = parse_gsm8k_answer(solution)
    except ValueError as error:
        raise DataError(source, line, "answer", str(error)) from None
    return _problem(name, _row_id(row, None, line), question=question, answer=answer, solution=solution)


def parse_math_row(row: dict[str, Any], source: str, line: int, *, name: str = "math") -> SourceProblem:
    problem = _require_text(row, "problem", source, line)
    solution = _require_text(row, "solution", source, line)
    answer = row.get("answer") if isinstance(row.get("answer"), str) and row.get("answer") else None
    answer = answer or last_boxed_answer(solution)
    if not answer:
        raise DataError(source, line, "solution", "no \\boxed{...} or \\fbox{...} answer")
    return _problem(
        name,
        _row_id(row, None, line),
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
        known = {question_field, answer_field, settings.id_field, "level", "type"}
        return _problem(
            name,
            _row_id(row, settings.id_field, line),
            question=question,
            answer=str(row[answer_field]).strip(),
            level=str(row["level"]) if row.get("level") is not None else None,
            type=str(row["type"]) if row.get("type") is not None else None,
            extra={k: v for k, v in row.items() if k not in known and isinstance(v, str | int | float | bool)},
        )

    return parse


_GZIP_MAGIC = b"\x1f\x8b"
_BOM = b"\xef\xbb\xbf"


def _format_suffix(path: Path) -> str:
    """The data format's suffix, looking through a trailing ``.gz``."""
    suffixes = [suffix.lower() for suffix in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    return suffixes[-1] if suffixes else ""


def _open_binary(path: Path) -> IO[bytes]:
    with path.open("rb") as probe:
        compressed = probe.read(2) == _GZIP_MAGIC
    if compressed:
        return cast(IO[bytes], gzip.open(path, "rb"))
    return path.open("rb")


def _decode(raw: bytes, line: int) -> tuple[str | None, str | None]:
    """The line's text, or why it cannot be read (the byte and column named)."""
    if line == 1 and raw.startswith(_BOM):
        raw = raw[len(_BOM) :]
    try:
        return raw.decode("utf-8"), None
    except UnicodeDecodeError as error:
        byte = raw[error.start : error.start + 1].hex()
        return None, f"not valid UTF-8 (byte 0x{byte} at column {error.start + 1}); re-encode the file as UTF-8"


def _read_whole(path: Path) -> str:
    with _open_binary(path) as handle:
        data = handle.read()
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise DataError(str(path), line, None, "not valid UTF-8; re-encode the file as UTF-8") from None


def _read_rows(path: Path) -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
    """Yield (line, row, error) from JSONL, JSON (a list) or CSV, gzip-compressed or not."""
    kind = _format_suffix(path)
    if kind == ".csv":
        text = _read_whole(path)
        reader = csv.DictReader(io.StringIO(text, newline=""))
        for row in reader:
            yield reader.line_num, dict(row), None
        return
    if kind == ".json":
        try:
            data = json.loads(_read_whole(path))
        except json.JSONDecodeError as error:
            raise DataError(
                str(path), error.lineno, None, f"not valid JSON: {error.msg} (column {error.colno})"
            ) from None
        if not isinstance(data, list):
            raise DataError(str(path), None, None, "expected a JSON list of objects")
        for index, row in enumerate(data, start=1):
            yield index, row if isinstance(row, dict) else None, None if isinstance(row, dict) else "not an object"
        return
    with _open_binary(path) as handle:
        for index, raw in enumerate(handle, start=1):
            decoded, unreadable = _decode(raw, index)
            if decoded is None:
                yield index, None, unreadable
                continue
            if not decoded.strip():
                continue
            try:
                row = json.loads(decoded)
            except json.JSONDecodeError as error:
                yield index, None, f"not valid JSON: {error.msg} (column {error.colno})"
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
    *,
    collect_all: bool = False,
) -> Iterator[SourceProblem]:
    """Parse rows lazily. A bad row (unreadable, missing a field, too long, a repeated id) raises,
    or with ``skip_bad_rows`` (or ``collect_all``, for a validation pass) is recorded and skipped."""
    parser: RowParser | None = None
    first_line: dict[str, int] = {}
    for line, row, error in rows:
        report.rows_read += 1
        try:
            if row is None:
                raise DataError(source, line, None, error or "unreadable row")
            parser = parser or _detect_parser(row, settings, name)
            problem = parser(row, source, line)
            if len(problem.question) > settings.max_question_chars:
                field = settings.question_field or ("problem" if "problem" in row else "question")
                raise DataError(
                    source,
                    line,
                    field,
                    f"{len(problem.question):,} characters, over the cap of {settings.max_question_chars:,}"
                    " (dataset.max_question_chars)",
                )
            seen = first_line.setdefault(problem.source_id, line)
            if seen != line:
                raise DataError(source, line, "id", f"duplicate id {problem.source_id!r} (first at line {seen})")
        except DataError as data_error:
            if not (settings.skip_bad_rows or collect_all):
                raise
            report.skipped += 1
            if len(report.skip_reasons) < MAX_KEPT_REASONS:
                report.skip_reasons.append(str(data_error))
            continue
        yield problem


def _refuse_unknown_name(name: str) -> None:
    """A bare name that is not built in is a typo far more often than an un-namespaced hub dataset:
    say so at once, offline, instead of retrying the hub for a minute."""
    if name in HUB_DATASETS or "/" in name:
        return
    close = difflib.get_close_matches(name.lower(), list(HUB_DATASETS), n=1, cutoff=0.6)
    hint = f"did you mean {close[0]}? " if close else ""
    raise DataError(
        f"--dataset {name}",
        None,
        None,
        f"unknown dataset name. {hint}Built in: {', '.join(HUB_DATASETS)}; a hub dataset is ORG/NAME;"
        " a local file is PATH.jsonl, .json or .csv (and must exist)",
    )


def _iter_hub(settings: DatasetSettings, report: LoadReport, *, collect_all: bool) -> Iterator[SourceProblem]:
    _refuse_unknown_name(settings.name)
    import datasets

    repo, config = HUB_DATASETS.get(settings.name, (settings.name, None))
    configs: list[str | None] = list(MATH_HUB_CONFIGS) if settings.name == "math" else [config]
    name = settings.name if settings.name in HUB_DATASETS else repo.split("/")[-1]
    loaded = []
    for hub_config in configs:
        try:
            loaded.append(datasets.load_dataset(repo, hub_config, split=settings.split))
        except Exception as error:  # the hub raises many types (connection, offline mode, missing repo)
            raise DataError(
                f"hub:{repo}" + (f"/{hub_config}" if hub_config else ""),
                None,
                None,
                f"could not load from the Hugging Face hub ({type(error).__name__}: {str(error)[:200]}). "
                "If this machine is offline, pass a local file instead: --dataset PATH.jsonl "
                "(GSM8K: question/answer with '#### N'; MATH: problem/solution/level/type)",
            ) from None

    def rows() -> Iterator[tuple[int, dict[str, Any] | None, str | None]]:
        offset = 0
        for dataset in loaded:
            for index, row in enumerate(dataset):
                yield offset + index + 1, dict(row), None
            offset += len(dataset)

    yield from _parse_rows(rows(), f"hub:{repo}", settings, name, report, collect_all=collect_all)


def _local_path(settings: DatasetSettings) -> Path | None:
    path = Path(settings.path) if settings.path else None
    if path is None and settings.name not in HUB_DATASETS and Path(settings.name).suffix:
        path = Path(settings.name)
    return path


def iter_source(
    settings: DatasetSettings, report: LoadReport | None = None, *, collect_all: bool = False
) -> Iterator[SourceProblem]:
    """Every usable problem of the configured source (before filters), read lazily."""
    report = report if report is not None else LoadReport(source="")
    path = _local_path(settings)
    if path is not None:
        if not path.is_file():
            raise DataError(str(path), None, None, "file not found")
        report.source = str(path)
        name = settings.name if settings.path else Path(path.name.removesuffix(".gz")).stem
        yield from _parse_rows(_read_rows(path), str(path), settings, name, report, collect_all=collect_all)
        return
    report.source = f"hub:{settings.name}"
    yield from _iter_hub(settings, report, collect_all=collect_all)


def load_source(settings: DatasetSettings) -> tuple[list[SourceProblem], LoadReport]:
    """Load every problem of the configured source (before filters)."""
    report = LoadReport(source="")
    return list(iter_source(settings, report)), report


def _selects(settings: DatasetSettings) -> Callable[[SourceProblem], bool]:
    levels = {_normalize_level(level) for level in settings.levels}
    types = {t.strip().lower() for t in settings.types}
    ids = set(settings.ids)

    def keep(problem: SourceProblem) -> bool:
        if levels and not (problem.level and _normalize_level(problem.level) in levels):
            return False
        if types and not (problem.type and problem.type.strip().lower() in types):
            return False
        return not ids or problem.source_id in ids or problem.problem_id in ids

    return keep


def _sampled(problems: Iterable[SourceProblem], size: int, total: int, seed: int) -> Iterator[SourceProblem]:
    """The same seeded sample ``random.sample`` draws from a list of ``total``, holding only ``size``."""
    positions = random.Random(seed).sample(range(total), min(size, total))
    wanted = {index: position for position, index in enumerate(positions)}
    chosen: dict[int, SourceProblem] = {}
    for index, problem in enumerate(problems):
        if index in wanted:
            chosen[wanted[index]] = problem
    for position in range(len(positions)):
        yield chosen[position]


def iter_problems(
    settings: DatasetSettings, report: LoadReport | None = None, *, matching: int | None = None
) -> Iterator[SourceProblem]:
    """The selected problems, streamed: levels, types and ids select; then seeded sampling; then limit.

    ``matching`` (how many rows pass the filters, from :func:`scan_source`) spares ``--sample`` a
    counting pass over the source.
    """
    keep = _selects(settings)
    selected: Iterable[SourceProblem] = (p for p in iter_source(settings, report) if keep(p))
    if settings.sample is not None:
        if matching is None:
            matching = sum(1 for p in iter_source(settings, LoadReport(source="")) if keep(p))
        selected = _sampled(selected, settings.sample, matching, settings.seed)
    if settings.limit is not None:
        selected = itertools.islice(selected, settings.limit)
    return iter(selected)


def apply_filters(problems: list[SourceProblem], settings: DatasetSettings) -> list[SourceProblem]:
    """Levels, types and ids select; then seeded sampling; then limit."""
    keep = _selects(settings)
    selected = [problem for problem in problems if keep(problem)]
    if settings.sample is not None:
        selected = list(_sampled(selected, settings.sample, len(selected), settings.seed))
    if settings.limit is not None:
        selected = selected[: settings.limit]
    return selected


def scan_source(settings: DatasetSettings) -> LoadReport:
    """Read the whole source once, before a run starts, and report every bad row and filter miss.

    Raises :class:`DataError` listing every bad row (file:line:field) unless ``skip_bad_rows`` is
    set, and when the filters select nothing.
    """
    report = LoadReport(source="")
    keep = _selects(settings)
    found_ids: set[str] = set()
    for problem in iter_source(settings, report, collect_all=True):
        if keep(problem):
            report.matching += 1
            if settings.ids:
                found_ids.update({problem.source_id, problem.problem_id})
    if report.skipped and not settings.skip_bad_rows:
        shown = "\n  ".join(report.skip_reasons[:MAX_SHOWN_REASONS])
        more = report.skipped - min(report.skipped, MAX_SHOWN_REASONS)
        raise DataError(
            report.source,
            None,
            None,
            f"{report.skipped} bad rows of {report.rows_read}:\n  {shown}"
            + (f"\n  ... and {more} more" if more else "")
            + "\nFix them, or pass --skip-bad-rows to skip them (each skip is listed in `repro status`"
            " and the dataset card).",
        )
    report.missing_ids = [identifier for identifier in settings.ids if identifier not in found_ids]
    if report.matching == 0:
        filters = ", ".join(
            f"{name} {values}"
            for name, values in (("--levels", settings.levels), ("--types", settings.types), ("--ids", settings.ids))
            if values
        )
        raise DataError(
            report.source,
            None,
            None,
            f"no problem matches {filters or 'the source'} ({report.rows_read} rows read, {report.skipped} skipped)",
        )
    return report


def load_problems(settings: DatasetSettings) -> tuple[list[SourceProblem], LoadReport]:
    report = LoadReport(source="")
    return list(iter_problems(settings, report)), report


def iter_seeded_order(
    settings: DatasetSettings, total: int, *, matching: int | None = None, chunk_size: int = 10_000
) -> Iterator[SourceProblem]:
    """The selected problems in :func:`seeded_order`, holding at most ``chunk_size`` problems.

    ``random.shuffle`` permutes by position only, so shuffling the positions ``0..total-1`` gives
    the same order as shuffling the problems. Each chunk of that order is collected in one pass over
    the source; ``--target`` usually stops within the first chunk, so the source is rarely read twice.
    """
    order = list(range(total))
    random.Random(settings.seed).shuffle(order)
    positions = array("q", order)
    del order
    for start in range(0, total, chunk_size):
        chunk = positions[start : start + chunk_size]
        wanted = {index: slot for slot, index in enumerate(chunk)}
        found: dict[int, SourceProblem] = {}
        for index, problem in enumerate(iter_problems(settings, matching=matching)):
            if index in wanted:
                found[wanted[index]] = problem
                if len(found) == len(chunk):
                    break
        for slot in range(len(chunk)):
            if slot in found:
                yield found[slot]


def seeded_order(problems: list[SourceProblem], seed: int) -> list[SourceProblem]:
    """A reproducible shuffled drawing order, used by ``--target`` to draw until enough are retained."""
    ordered = list(problems)
    random.Random(seed).shuffle(ordered)
    return ordered


def _normalize_level(level: str) -> str:
    return level.strip().lower().removeprefix("level").strip()
