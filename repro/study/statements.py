"""Statement sets: export the aligned statements of a run, and read any statement file back.

The file is JSONL, one :class:`StudyStatement` per line, so a user can bring miniF2F-style statements
with their own header. A bad row is named by file, line and field, because a study over thousands of
statements should not fail with a bare validation dump.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from repro.exit_codes import ReproError
from repro.jsonl import BadRows, iter_json_objects
from repro.judge.header import header_refusal
from repro.lean.text import ends_in_sorry, read_statement
from repro.records import AttemptStatus, Stage, StageAttempt
from repro.store import RunReader
from repro.study.records import StudyStatement


class StatementSetError(ReproError, ValueError):
    """A statement file that cannot be used, named by file, line and field."""


def _run_header_and_name(run_dir: Path) -> tuple[str, str]:
    config_path = run_dir / "config.yaml"
    if not config_path.is_file():
        raise StatementSetError(f"{run_dir}: no config.yaml; is this a run directory?")
    data = yaml.safe_load(config_path.read_text(encoding="utf-8")) or {}
    from repro.config import RunConfig

    config = RunConfig.model_validate(data)
    return config.lean.header, config.name


def statements_from_run(run_dir: str | Path) -> list[StudyStatement]:
    """Every statement that passed alignment, retained or not, in candidate order.

    A candidate may have several aligned statements (a formalization regenerated after its proof
    failed); each distinct one is its own row, identified by candidate and formalization round.
    """
    directory = Path(run_dir)
    header, run_name = _run_header_and_name(directory)
    rows: list[StudyStatement] = []
    with RunReader(directory) as store:
        for candidate in store.candidates():
            attempts = store.attempts(candidate_id=candidate.candidate_id)
            statements = {
                a.attempt_number: a.output.get("statement")
                for a in attempts
                if a.stage == Stage.formalize and a.status == AttemptStatus.passed
            }
            aligned = sorted(
                a.attempt_number for a in attempts if a.stage == Stage.align and a.status == AttemptStatus.passed
            )
            if not aligned:
                continue
            problem = store.problem(candidate.problem_id)
            checks = {a.attempt_number: a for a in attempts if a.stage == Stage.check}
            exported: set[str] = set()
            for round_index in aligned:
                statement = statements.get(round_index)
                if not statement or statement in exported:
                    continue  # a regenerated formalization identical to an earlier one is the same statement
                exported.add(statement)
                rows.append(
                    StudyStatement(
                        id=f"{candidate.candidate_id}/f{round_index}",
                        statement=statement,
                        header=header,
                        theorem_name=candidate.theorem_name or read_statement(statement).name,
                        source_dataset=problem.source,
                        source_id=problem.source_id,
                        level=problem.level,
                        type=problem.type,
                        run=run_name,
                        question=candidate.rewritten_question,
                        statement_check=_check_status(checks, round_index),
                    )
                )
    return rows


def _check_status(checks: dict[int, StageAttempt], round_index: int) -> str | None:
    """The run's statement checks of one formalization round (vacuity at 2r, refutation at 2r + 1)."""
    vacuity, refutation = checks.get(2 * round_index), checks.get(2 * round_index + 1)
    if refutation is not None and refutation.output.get("status") == "refuted":
        return "refuted"
    return str(vacuity.output.get("status")) if vacuity is not None and vacuity.output.get("status") else None


def write_statements(statements: list[StudyStatement], out: str | Path) -> Path:
    path = Path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as handle:
        for row in statements:
            handle.write(row.model_dump_json(exclude={"schema_version"}) + "\n")
    return path


# what the run's own Lean checks found: a proof of such a statement proves nothing about its answer (a
# prover proves a vacuous statement trivially), so a study leaves them out unless asked
CHECKED_OUT = ("vacuous", "refuted")


def export_statements(
    run_dir: str | Path, out: str | Path, *, overwrite: bool = False, include_checked_out: bool = False
) -> tuple[int, dict[str, int]]:
    """``repro statements RUN_DIR --out FILE``: rows written, and those left out per check outcome.

    An existing ``out`` is refused unless ``overwrite`` (a hand-built statement set is not replaced
    unasked); statements the run's checks found vacuous or refuted are left out unless
    ``include_checked_out`` (then exported, marked in ``statement_check``).
    """
    path = Path(out)
    if path.exists() and not overwrite:
        raise StatementSetError(
            f"--out {path} exists; nothing was written. Choose another --out, or pass --overwrite to replace it"
        )
    rows = statements_from_run(run_dir)
    left_out = {outcome: sum(row.statement_check == outcome for row in rows) for outcome in CHECKED_OUT}
    if not include_checked_out:
        rows = [row for row in rows if row.statement_check not in CHECKED_OUT]
    write_statements(rows, path)
    return len(rows), ({} if include_checked_out else {k: v for k, v in left_out.items() if v})


def read_statements(path: str | Path, *, trusted_header: str | None = None) -> list[StudyStatement]:
    """Read a statement file; every row must parse and its theorem must be the one it names.

    The whole file is read before anything is refused, so the error names every bad row (line, field,
    reason), not only the first. With ``trusted_header``, a row's ``header`` must fall within it
    (:func:`repro.judge.header.header_refusal`): the study runs the trusted header, never the file's.
    """
    source = Path(path)
    if not source.is_file():
        raise StatementSetError(f"{source}: statement file not found")
    rows: list[StudyStatement] = []
    bad = BadRows(source, StatementSetError)
    for number, data in iter_json_objects(source, StatementSetError, bad=bad):
        data.pop("schema_version", None)
        row = bad.validated(number, StudyStatement, data)
        if row is None:
            continue
        bad.first_use(number, row.id)
        try:
            name = read_statement(row.statement).name
        except ValueError as error:
            bad.add(number, str(error), field="statement")
            continue
        if not ends_in_sorry(row.statement):
            bad.add(number, "must end in ':= by sorry'", field="statement")
        if name != row.theorem_name:
            bad.add(number, f"{row.theorem_name!r} but the statement declares {name!r}", field="theorem_name")
        refusal = header_refusal(row.header, trusted_header) if trusted_header is not None else None
        if refusal is not None:
            bad.add(number, refusal, field="header")
        if number not in bad:
            rows.append(row)
    bad.raise_if_any()
    if not rows:
        raise StatementSetError(f"{source}: no statements")
    return rows
