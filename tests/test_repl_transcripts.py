"""Every reader of REPL output in repro, and the fake REPL, agree with what real Lean printed.

Sources: the Lean REPL's own test suite at its v4.15.0 and v4.9.0 tags (commands and real answers) and
real ``#print axioms`` outputs. A few are transcribed in tests/fixtures/repl/ (see its README) so the
core suite always has them; the full sets in ``../shared/data/`` are read when present.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest

from repro.lean.protocol import InfraStatus, LeanMessage, LeanResult, axioms_reported, result_from_repl_json
from tests.conftest import REPO, SHARED_DATA
from tests.doubles.fake_repl import serve

FIXTURES = REPO / "tests" / "fixtures" / "repl"
SORRY_WARNING = "declaration uses 'sorry'"


def _blocks(text: str) -> list[dict[str, Any]]:
    """The REPL's JSON objects, blank-line separated (its test files' format)."""
    return [json.loads(chunk) for chunk in text.split("\n\n") if chunk.strip()]


def _pairs(root: Path) -> list[tuple[str, list[dict[str, Any]], list[dict[str, Any]]]]:
    found = []
    for version in ("v4.15.0", "v4.9.0"):
        for commands in sorted((root / version).glob("*.in")):
            expected = commands.with_name(commands.name.removesuffix(".in") + ".expected.out")
            if expected.is_file():
                label = f"{version}/{commands.name.removesuffix('.in')}"
                found.append((label, _blocks(commands.read_text("utf-8")), _blocks(expected.read_text("utf-8"))))
    return found


def _shared_pairs() -> list[tuple[str, list[dict[str, Any]], list[dict[str, Any]]]]:
    root = SHARED_DATA / "repl-transcripts"
    if not root.is_dir():
        pytest.skip(f"{root} is absent: the shared benchmark data lives beside the clone on CI and dev machines")
    return _pairs(root)


def _plain(commands: list[dict[str, Any]], replies: list[dict[str, Any]]) -> bool:
    """Only ``cmd`` commands (no tactic mode, pickling or files), one reply each."""
    return len(commands) == len(replies) and all(set(command) <= {"cmd", "env"} for command in commands)


def _check_reader(label: str, reply: dict[str, Any]) -> None:
    result = result_from_repl_json(
        reply, backend_id="real", real_lean=True, elapsed_s=0.0, toolchain=None, mathlib_revision=None
    )
    if set(reply) == {"message"}:
        assert result.infra_status == InfraStatus.lean_error and result.detail == reply["message"], label
        return
    assert result.infra_status == InfraStatus.ok, label
    raw = reply.get("messages") or []
    assert [(m.severity, m.text, m.line, m.column) for m in result.messages] == [
        (m["severity"], m["data"], m["pos"]["line"], m["pos"]["column"]) for m in raw
    ], label
    assert [m.end_line for m in result.messages] == [(m.get("endPos") or {}).get("line") for m in raw], label
    assert len(result.sorries) == len(reply.get("sorries") or []), label
    assert result.has_error == any(m["severity"] == "error" for m in raw), label
    assert result.ok == (not result.has_error and not reply.get("sorries")), label


def _check_fake(label: str, commands: list[dict[str, Any]], replies: list[dict[str, Any]]) -> None:
    """Run the commands through the fake REPL; compare what it imitates: env numbering, the REPL's own
    refusals, sorry positions and the sorry warning's position (Lean puts it on the declaration name)."""
    stdout = io.StringIO()
    serve([], io.StringIO("".join(json.dumps(command) + "\n\n" for command in commands)), stdout)
    fake = _blocks(stdout.getvalue())
    assert len(fake) == len(replies), label
    for real, imitation in zip(replies, fake, strict=True):
        assert imitation.get("env") == real.get("env"), label
        assert imitation.get("message") == real.get("message"), label
        spans = [(s.get("pos"), s.get("endPos")) for s in real.get("sorries") or []]
        assert [(s.get("pos"), s.get("endPos")) for s in imitation.get("sorries") or []] == spans, label

        def warnings(reply: dict[str, Any]) -> list[tuple[Any, Any]]:
            return [(m["pos"], m.get("endPos")) for m in reply.get("messages") or [] if m["data"] == SORRY_WARNING]

        assert warnings(imitation) == warnings(real), label


def _imitable(replies: list[dict[str, Any]]) -> bool:
    """The fake does not elaborate: transcripts whose real answers hold errors are beyond it."""
    return not any(m.get("severity") == "error" for reply in replies for m in reply.get("messages") or [])


def test_the_transcribed_fixtures_are_there() -> None:
    labels = {label for label, _, _ in _pairs(FIXTURES)}
    assert {"v4.15.0/term_sorry", "v4.9.0/dup_sorries", "v4.15.0/unknown_environment"} <= labels


@pytest.mark.parametrize("source", ["fixtures", pytest.param("shared", marks=pytest.mark.shared_data)])
def test_the_reply_reader_agrees_with_real_lean(source: str) -> None:
    pairs = _pairs(FIXTURES) if source == "fixtures" else _shared_pairs()
    checked = 0
    for label, commands, replies in pairs:
        for reply in replies:
            # every real shape is read without error, tactic-mode and pickling replies included
            result_from_repl_json(
                reply, backend_id="real", real_lean=True, elapsed_s=0.0, toolchain=None, mathlib_revision=None
            )
        if _plain(commands, replies):
            for reply in replies:
                _check_reader(label, reply)
                checked += 1
    assert checked >= 5


@pytest.mark.parametrize("source", ["fixtures", pytest.param("shared", marks=pytest.mark.shared_data)])
def test_the_fake_repl_answers_like_real_lean_where_it_imitates_it(source: str) -> None:
    pairs = _pairs(FIXTURES) if source == "fixtures" else _shared_pairs()
    compared = [label for label, commands, replies in pairs if _plain(commands, replies) and _imitable(replies)]
    for label, commands, replies in pairs:
        if label in compared:
            _check_fake(label, commands, replies)
    assert len(compared) >= 3, compared


def _axiom_rows(source: str) -> list[dict[str, Any]]:
    path = FIXTURES / "print_axioms.jsonl"
    if source == "shared":
        path = SHARED_DATA / "realproofs" / "print_axioms_examples.jsonl"
        if not path.is_file():
            pytest.skip(f"{path} is absent: the shared benchmark data lives beside the clone on CI and dev machines")
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("source", ["fixtures", pytest.param("shared", marks=pytest.mark.shared_data)])
def test_the_axiom_reader_reads_every_real_print_axioms_shape(source: str) -> None:
    for row in _axiom_rows(source):
        output = row["output"]
        name = re.match(r"'([^']+)'", output)
        assert name, row
        result = LeanResult(
            infra_status=InfraStatus.ok,
            messages=[LeanMessage(severity="info", line=1, column=0, text=output)],
            backend_id="real",
            real_lean=True,
        )
        listed = axioms_reported(result, name.group(1))
        expected = re.findall(r"[\w.']+", output.split("[", 1)[1]) if "[" in output else []
        assert listed == expected, (row["source"], listed)
        # another name (the prover's own theorem, say) never reads as this report
        assert axioms_reported(result, name.group(1) + "_other") is None


def test_the_fake_repl_prints_axioms_in_the_real_single_line_shape() -> None:
    real = [row["output"] for row in _axiom_rows("fixtures") if "\n" not in row["output"]]
    shape = re.compile(r"'[^']+' (depends on axioms: \[[\w.]+(, [\w.]+)*\]|does not depend on any axioms)")
    assert all(shape.fullmatch(output) for output in real)
    commands = [{"cmd": "axiom my_ax : False"}, {"cmd": "theorem t : 1 = 2 := my_ax.elim", "env": 0}]
    commands.append({"cmd": "#print axioms t", "env": 1})
    stdout = io.StringIO()
    serve([], io.StringIO("".join(json.dumps(command) + "\n\n" for command in commands)), stdout)
    printed = _blocks(stdout.getvalue())[-1]["messages"][0]["data"]
    assert shape.fullmatch(printed) and "my_ax" in printed
