"""`check-proof --batch` keeps an earlier verdict only for the very row text, header, backend and judge it was
given for (red team red1, finding R3: rows were kept by id alone).

The Lean and judge caches key their answers by what was checked and by whom (repro/lean/cached.py,
repro/judge/cached.py); a resumed batch keys its kept rows the same way, so a fake backend's pass never
counts as real Lean's on a rerun with the real backend, and a changed row is checked again.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from repro.exit_codes import ExitCode
from repro.judge.batch import check_batch
from repro.lean.fake_backend import fake_repl_verifier
from tests.doubles.judge import stand_in_judge
from tests.test_check_proof_judge import ClaimingJudge, JudgeStatus, real_claiming_pool

STATEMENT = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry"
HONEST = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num"
CHEAT = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  sorry"
HEADER = "import Mathlib\nimport Aesop\nset_option maxHeartbeats 400000\nopen BigOperators Real Nat Topology Rat\n"


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def _out(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_batch_resumed_on_real_lean_checks_again_what_only_a_fake_checked(tmp_path: Path) -> None:
    batch = _jsonl(tmp_path / "in.jsonl", [{"id": "a", "statement": STATEMENT, "output": HONEST}])
    out = tmp_path / "out.jsonl"
    fake = fake_repl_verifier(workers=1)
    try:
        first = asyncio.run(check_batch(batch, out, fake, header=HEADER, judge=stand_in_judge(), concurrency=1))
    finally:
        asyncio.run(fake.close())
    assert first.exit_code == ExitCode.fake_backend and _out(out)[0]["real_lean"] is False
    real = real_claiming_pool(tmp_path)
    judge = ClaimingJudge(JudgeStatus.passed)
    try:
        resumed = asyncio.run(check_batch(batch, out, real, header=HEADER, judge=judge, concurrency=1))
    finally:
        asyncio.run(real.close())
    # checked again, on the backend and by the judge of today: its verdict is theirs
    assert resumed.checked_now == 1 and resumed.kept_from_before == 0 and len(judge.requests) == 1
    assert resumed.exit_code == ExitCode.verified
    rows = _out(out)
    assert len(rows) == 1 and rows[0]["real_lean"] is True and rows[0]["judge"]["tool"] == "claims-real"


def test_a_stand_in_judges_pass_is_judged_again_by_another_judge(tmp_path: Path) -> None:
    batch = _jsonl(tmp_path / "in.jsonl", [{"id": "a", "statement": STATEMENT, "output": HONEST}])
    out = tmp_path / "out.jsonl"
    fake = fake_repl_verifier(workers=1)
    try:
        first = asyncio.run(check_batch(batch, out, fake, header=HEADER, judge=stand_in_judge(), concurrency=1))
        again = asyncio.run(check_batch(batch, out, fake, header=HEADER, judge=stand_in_judge(), concurrency=1))
        rejecting = ClaimingJudge(JudgeStatus.rejected)
        other = asyncio.run(check_batch(batch, out, fake, header=HEADER, judge=rejecting, concurrency=1))
    finally:
        asyncio.run(fake.close())
    assert first.passed == 1 and again.kept_from_before == 1 and again.checked_now == 0
    # the same row under another judge: checked again, and that judge's refusal is the verdict
    assert other.checked_now == 1 and len(rejecting.requests) == 1
    assert other.passed == 0 and other.judge_rejected == 1 and other.exit_code == ExitCode.rejected


def test_a_changed_row_under_the_same_id_is_checked_again(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    batch = _jsonl(tmp_path / "in.jsonl", [{"id": "a", "statement": STATEMENT, "output": HONEST}])
    verifier = fake_repl_verifier(workers=1)
    try:
        first = asyncio.run(check_batch(batch, out, verifier, header=HEADER, judge=stand_in_judge(), concurrency=1))
        _jsonl(batch, [{"id": "a", "statement": STATEMENT, "output": CHEAT}])
        summary = asyncio.run(check_batch(batch, out, verifier, header=HEADER, judge=stand_in_judge(), concurrency=1))
        # the trusted header changed: the verdict was given under another header
        renamed = asyncio.run(
            check_batch(batch, out, verifier, header=HEADER + "open Finset\n", judge=stand_in_judge(), concurrency=1)
        )
    finally:
        asyncio.run(verifier.close())
    assert first.passed == 1
    assert summary.checked_now == 1 and summary.passed == 0 and summary.rejected == 1
    assert renamed.checked_now == 1
    assert len(_out(out)) == 1  # the stale verdicts are gone from the file, not left beside the new one
