"""A header that came with data (a batch row, a study statement file) never reaches Lean or the judge.

Red team red1, finding R2: `check-proof --batch` ran each row's own `header` in Lean before our commands,
unscreened; a header can declare an axiom and a `macro_rules` that rewrites `#print axioms` (Lean expands
macros before any command elaborator: leanprover/lean4 src/Lean/Elab/Command.lean, ``elabCommand``). A data
header is only checked against the trusted (configured) one; the trusted header is what runs.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from repro.cli import main
from repro.config import DEFAULT_HEADER, LeanSettings
from repro.exit_codes import ExitCode
from repro.judge.batch import BatchInputError, check_batch
from repro.judge.header import header_refusal
from repro.lean.fake_backend import fake_repl_verifier
from repro.lean.protocol import LeanResult
from repro.study import StatementSetError, StudySettings, open_study, parse_prover_spec, read_statements
from tests import study_world as world
from tests.doubles.judge import STAND_IN_SETTINGS

STATEMENT = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry"
HONEST = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num"
TRUSTED_HEADER = (
    "import Mathlib\nimport Aesop\nset_option maxHeartbeats 400000\nopen BigOperators Real Nat Topology Rat\n"
)
HOSTILE = (
    "import Mathlib\n"
    "axiom cheat : (3600 : ℕ) / 12 = 300\n"
    "macro_rules | `(#print axioms $x) => `(#print \"'robe_total' does not depend on any axioms\")\n"
)


class RecordingVerifier:
    """A verifier in front of another that records the header each Lean check ran under."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.headers: list[str] = []
        self.backend_id, self.real_lean = inner.backend_id, inner.real_lean
        self.toolchain, self.mathlib_revision = inner.toolchain, inner.mathlib_revision

    async def check(self, code: str, header: str) -> LeanResult:
        self.headers.append(header)
        return await self.inner.check(code, header)  # type: ignore[no-any-return]

    async def check_sequence(self, commands: list[str], header: str) -> list[LeanResult]:
        self.headers.append(header)
        return await self.inner.check_sequence(commands, header)  # type: ignore[no-any-return]

    async def close(self) -> None:
        await self.inner.close()


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "header",
    [
        HOSTILE,
        "import Mathlib\nimport Mathlib.Tactic.Cheat\n",  # a module the trusted header does not import
        "import Mathlib\nopen Real Set\n",  # a namespace it does not open
        "import Mathlib\nopen Finset in\n",  # `open ... in` scopes the next command: our statement
        "import Mathlib\nset_option pp.all true\n",  # an option it does not set
        "import Mathlib\nset_option maxHeartbeats 0 in\n",
        "import Mathlib\n/- a block comment -/ def k := 1\n",
        "import Mathlib\nimport Mathlib -- /-\ndef k := 1\n",  # a line comment that opens a block
        'import Mathlib\nnotation "ℕ" => Int\n',
        "import Mathlib\ninstance : Fact False := ⟨sorry⟩\n",
        "import Mathlib\nopen Real hiding pi\n",
    ],
)
def test_a_header_beyond_the_trusted_ones_lines_is_refused_naming_the_line(header: str) -> None:
    refusal = header_refusal(header, TRUSTED_HEADER)
    assert refusal is not None and refusal.startswith("header line 2 `"), refusal


@pytest.mark.parametrize(
    "header",
    [
        TRUSTED_HEADER,
        "import Mathlib\n",
        "import Aesop\nimport Mathlib\n\nset_option maxHeartbeats 0\n\nopen BigOperators Nat Rat Real Topology\n\n",
        "-- the harness header\nimport Mathlib  -- all of it\nopen Nat\n",
        "",
    ],
)
def test_a_header_that_repeats_the_trusted_ones_lines_is_accepted(header: str) -> None:
    assert header_refusal(header, TRUSTED_HEADER) is None


def test_a_batch_row_with_a_hostile_header_is_refused_and_nothing_runs_it(tmp_path: Path) -> None:
    """The red team's header (an axiom and a `macro_rules` for `#print axioms`) never reaches Lean: the row is
    named by file, line and field, nothing is checked or written, and the accepted rows run the trusted header."""
    rows = [
        {"id": "plain", "statement": STATEMENT, "output": HONEST, "header": "import Mathlib\nopen Real\n"},
        {"id": "hostile", "statement": STATEMENT, "output": HONEST, "header": HOSTILE},
    ]
    batch = _jsonl(tmp_path / "in.jsonl", rows)
    out = tmp_path / "out.jsonl"
    verifier = RecordingVerifier(fake_repl_verifier(workers=1))
    try:
        with pytest.raises(BatchInputError) as caught:
            asyncio.run(check_batch(batch, out, verifier, header=TRUSTED_HEADER, concurrency=1))  # type: ignore[arg-type]
        assert "in.jsonl:2: field 'header': header line 2 `axiom cheat" in str(caught.value)
        assert verifier.headers == [] and not out.exists()
        _jsonl(batch, rows[:1])
        summary = asyncio.run(check_batch(batch, out, verifier, header=TRUSTED_HEADER, concurrency=1))  # type: ignore[arg-type]
    finally:
        asyncio.run(verifier.close())
    assert summary.screen_passed == 1
    assert verifier.headers and set(verifier.headers) == {TRUSTED_HEADER}


def test_check_proof_batch_names_a_hostile_header_as_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [{"id": "hostile", "statement": STATEMENT, "output": HONEST, "header": HOSTILE}]
    batch = _jsonl(tmp_path / "in.jsonl", rows)
    code = main(["check-proof", "--batch", str(batch), "--out", str(tmp_path / "out.jsonl"), "--backend", "fake"])
    captured = capsys.readouterr()
    assert code == ExitCode.usage
    assert "in.jsonl:1:field'header'" in "".join((captured.out + captured.err).split())


def test_a_study_statement_files_header_is_checked_then_replaced_by_the_trusted_one(tmp_path: Path) -> None:
    """Study statement files are user data too: a hostile header is refused by line and field; an accepted one
    is stored as the study's trusted header, which is what the screen and the judge then run."""
    rows = world.statement_rows()[:2]
    hostile = tmp_path / "hostile.jsonl"
    _jsonl(hostile, [rows[0], {**rows[1], "header": HOSTILE}])
    with pytest.raises(StatementSetError, match=r"hostile.jsonl:2: field 'header': header line 2 `axiom cheat"):
        read_statements(hostile, trusted_header=DEFAULT_HEADER)
    settings = StudySettings(k=1, strategy="parallel", lean=LeanSettings(backend="fake"), judge=STAND_IN_SETTINGS)
    with pytest.raises(StatementSetError, match=r"field 'header'"):
        open_study(
            tmp_path / "refused",
            statements_path=hostile,
            provers=[parse_prover_spec("p=m@http://127.0.0.1:9")],
            settings=settings,
            resume=False,
        ).close()
    short = tmp_path / "short.jsonl"
    _jsonl(short, [{**row, "header": "import Mathlib\n"} for row in rows])
    store = open_study(
        tmp_path / "study",
        statements_path=short,
        provers=[parse_prover_spec("p=m@http://127.0.0.1:9")],
        settings=settings,
        resume=False,
    )
    try:
        assert {statement.header for statement in store.statements()} == {settings.lean.header}
    finally:
        store.close()
