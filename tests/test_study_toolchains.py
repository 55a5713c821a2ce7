"""A study mixing provers on different Lean toolchains (issue 18, finding 3).

A prover is checked under its own profile's toolchain; a statement that does not elaborate there is
recorded as ``statement_incompatible_toolchain`` and the prover is not asked, apart from its failures.
The fake REPL stands in for Lean v4.9.0 with a rule: the statement's target does not elaborate there
(as a lemma renamed between Mathlib releases would not).
"""

from __future__ import annotations

import json
from pathlib import Path

from repro.study.app import prove_study
from repro.study.provers import parse_prover_spec
from repro.study.records import StudySettings
from repro.study.report import study_report
from repro.study.store import StudyStore
from tests import study_world as world
from tests.doubles.fake_lean import fake_lean_settings
from tests.doubles.judge import STAND_IN_SETTINGS
from tests.doubles.openai_server import OpenAITestServer

OLD_MATHLIB_REFUSES = {
    "match": r"^theorem repro_target_\w+ \(x : ℕ\) \(h₀ : x = 99\)",
    "action": "reply",
    "messages": [
        {
            "severity": "error",
            "pos": {"line": 1, "column": 0},
            "endPos": {"line": 1, "column": 7},
            "data": "unknown identifier 'Nat.renamed_later'",
        }
    ],
}


def test_a_statement_that_does_not_elaborate_under_a_provers_toolchain_is_counted_apart(tmp_path: Path) -> None:
    rows = [row for row in world.statement_rows(100) if row["id"] in ("s05", "s06", "s99")]
    statements = tmp_path / "statements.jsonl"
    statements.write_text("\n".join(json.dumps(row, ensure_ascii=False) for row in rows) + "\n")
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([OLD_MATHLIB_REFUSES]))
    lean = fake_lean_settings(str(rules), workers=1, toolchain="v4.15.0")
    with OpenAITestServer(world.http_responder) as server:
        goedel = tmp_path / "goedel.yaml"
        goedel.write_text(
            f"profile: goedel-prover-v2-8b\nbackend: openai\nmodel: slow\nbase_url: {server.base_url}\n"
            "api_key_env: null\nmax_tokens: 512\nmax_model_len: null\n"
        )
        provers = [parse_prover_spec(f"old={goedel}"), parse_prover_spec(f"new=slow@{server.base_url}")]
        assert provers[0].settings.profile == "goedel-prover-v2-8b"
        summary = prove_study(
            tmp_path / "study",
            statements_path=statements,
            provers=provers,
            settings=StudySettings(k=2, lean=lean, judge=STAND_IN_SETTINGS),
        )
        asked = [body for body in server.requests if "study_99" in json.dumps(body)]
    assert summary.incompatible_pairs == 1
    assert len(asked) == 1, "only the prover on the study's own toolchain was asked for s99"
    with StudyStore(tmp_path / "study", create=False) as store:
        old = {s.statement_id: s for s in store.samples(prover="old")}
        new = {s.statement_id: s for s in store.samples(prover="new")}
    assert old["s99"].reasons == ["statement_incompatible_toolchain"] and not old["s99"].verified
    assert "unknown identifier" in old["s99"].details[0] and old["s99"].toolchain == "leanprover/lean4:v4.9.0"
    assert old["s05"].verified and old["s05"].toolchain == "leanprover/lean4:v4.9.0"
    assert new["s05"].verified and new["s05"].toolchain == "leanprover/lean4:v4.15.0"
    assert "statement_incompatible_toolchain" not in new["s99"].reasons
    figures = {prover.name: prover for prover in study_report(tmp_path / "study").provers}
    assert figures["old"].incompatible_statements == 1 and figures["new"].incompatible_statements == 0
    assert "statement_incompatible_toolchain" not in figures["old"].reasons, "not among the prover's failures"
