from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from repro.config import DatasetSettings
from repro.data import DataError, last_boxed_answer, load_problems, parse_gsm8k_answer
from tests.conftest import shared_file


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("so 9 * 2 = 18\n#### 18", "18"),
        ("#### 1,234", "1234"),
        ("#### -5", "-5"),
        ("#### +7", "7"),
        ("#### 3.50", "3.50"),
        ("#### $1,000", "1000"),
    ],
)
def test_gsm8k_final_numbers(text: str, expected: str) -> None:
    assert parse_gsm8k_answer(text) == expected


def test_gsm8k_without_final_number_is_an_error() -> None:
    with pytest.raises(ValueError, match="####"):
        parse_gsm8k_answer("the answer is 5")
    with pytest.raises(ValueError, match="not a number"):
        parse_gsm8k_answer("#### five")


@pytest.mark.parametrize(
    ("solution", "expected"),
    [
        (r"so $\boxed{\frac{1}{2}}$.", r"\frac{1}{2}"),
        (r"first \boxed{1} then \boxed{\{1, \{2\}\}}", r"\{1, \{2\}\}"),
        (r"\fbox{42} is it", "42"),
        (r"answer \boxed 5.", "5."),
        (r"$\boxed{x^{2^{3}}}$ and \fbox{7}", "7"),
    ],
)
def test_last_boxed_answer_handles_nesting_and_fbox(solution: str, expected: str) -> None:
    assert last_boxed_answer(solution) == expected


def _write(path: Path, rows: Sequence[object]) -> Path:
    path.write_text("\n".join(json.dumps(row) for row in rows) + "\n")
    return path


def test_malformed_row_names_file_line_and_field(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "g.jsonl",
        [
            {"question": "q1", "answer": "x\n#### 1"},
            {"question": "q2", "answer": "no final"},
        ],
    )
    with pytest.raises(DataError) as error:
        load_problems(DatasetSettings(path=str(path)))
    assert f"{path}:2" in str(error.value) and "'answer'" in str(error.value)


def test_skip_bad_rows_counts_instead_of_failing(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    path.write_text(
        json.dumps({"question": "q1", "answer": "#### 1"})
        + "\nnot json\n"
        + json.dumps({"question": "", "answer": "#### 2"})
        + "\n"
    )
    problems, report = load_problems(DatasetSettings(path=str(path), skip_bad_rows=True))
    assert [p.answer for p in problems] == ["1"]
    assert report.skipped == 2 and report.rows_read == 3
    assert any("g.jsonl:2" in reason for reason in report.skip_reasons)


def test_generic_jsonl_and_csv_with_field_mapping(tmp_path: Path) -> None:
    _write(tmp_path / "d.jsonl", [{"uid": "a", "q": "What is 1+1?", "gold": 2}])
    (tmp_path / "d.csv").write_text("uid,q,gold\na,What is 1+1?,2\n")
    for name in ("d.jsonl", "d.csv"):
        problems, _ = load_problems(
            DatasetSettings(path=str(tmp_path / name), question_field="q", answer_field="gold", id_field="uid")
        )
        assert (problems[0].source_id, problems[0].question, problems[0].answer) == ("a", "What is 1+1?", "2")


def test_filters_select_levels_types_ids_and_seeded_samples(tmp_path: Path) -> None:
    rows = [
        {
            "problem": f"p{i}",
            "solution": f"\\boxed{{{i}}}",
            "level": f"Level {i % 5 + 1}",
            "type": "Algebra" if i % 2 else "Geometry",
            "id": str(i),
        }
        for i in range(50)
    ]
    path = _write(tmp_path / "m.jsonl", rows)
    levels, _ = load_problems(DatasetSettings(path=str(path), levels=["5"], types=["algebra"]))
    assert levels and all(p.level == "Level 5" and p.type == "Algebra" for p in levels)
    chosen, _ = load_problems(DatasetSettings(path=str(path), ids=["3", "7"]))
    assert [p.source_id for p in chosen] == ["3", "7"]
    first, _ = load_problems(DatasetSettings(path=str(path), sample=5, seed=1))
    again, _ = load_problems(DatasetSettings(path=str(path), sample=5, seed=1))
    other, _ = load_problems(DatasetSettings(path=str(path), sample=5, seed=2))
    assert [p.source_id for p in first] == [p.source_id for p in again] != [p.source_id for p in other]
    limited, _ = load_problems(DatasetSettings(path=str(path), limit=3))
    assert len(limited) == 3


def test_hub_unreachable_says_so_and_suggests_a_local_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    with pytest.raises(DataError) as error:
        load_problems(DatasetSettings(name="gsm8k"))
    assert "Hugging Face hub" in str(error.value) and "--dataset PATH" in str(error.value)


def test_shipped_gsm8k_sample_loads(sample_gsm8k: Path) -> None:
    problems, report = load_problems(DatasetSettings(path=str(sample_gsm8k)))
    assert len(problems) == 40 and report.skipped == 0
    assert problems[0].answer == "18"


def test_all_gsm8k_test_answers_parse_to_numbers() -> None:
    problems, _ = load_problems(DatasetSettings(path=str(shared_file("gsm8k/test.jsonl"))))
    assert len(problems) == 1319
    for problem in problems:
        float(problem.answer)


def test_every_math_test_problem_has_a_boxed_answer_level_and_type() -> None:
    problems, _ = load_problems(DatasetSettings(path=str(shared_file("math/test.jsonl")), name="math"))
    assert len(problems) == 5000
    assert all(problem.answer.strip() for problem in problems)
    assert {p.level for p in problems} >= {f"Level {i}" for i in range(1, 6)}
    assert len({p.type for p in problems}) == 7


def test_loading_streams_and_the_target_order_matches_the_seeded_shuffle(tmp_path: Path) -> None:
    from repro.data import iter_problems, iter_seeded_order, seeded_order

    path = _write(tmp_path / "g.jsonl", [{"question": f"q{i}", "answer": f"#### {i}"} for i in range(95)])
    settings = DatasetSettings(path=str(path), seed=3, limit=90)
    broken = tmp_path / "broken.jsonl"
    broken.write_text(path.read_text() + "not json\n")
    stream = iter_problems(DatasetSettings(path=str(broken)))
    assert next(stream).answer == "0", "the first problem arrives before the bad last line is read"
    with pytest.raises(DataError, match="broken.jsonl:96"):
        list(stream)
    expected = [p.problem_id for p in seeded_order(list(iter_problems(settings)), 3)]
    chunked = [p.problem_id for p in iter_seeded_order(settings, 90, chunk_size=7)]
    assert chunked == expected and len(set(chunked)) == 90
