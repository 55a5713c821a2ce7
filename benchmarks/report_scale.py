"""Size and render time of `repro report` for a synthetic run store of N candidates (default 5,000).

The store is written through the store's public API with the demo's hand-written texts (rewrites,
statements, Goedel-style prover replies of every failure kind), spread over a realistic funnel:
some candidates die at the screen, formalization or alignment, most reach the prover with k samples.
With Chromium on PATH and Playwright installed it also opens the page and times the first rows and a
reason filter.

    python -m benchmarks.report_scale --candidates 5000 --out /tmp/report-scale
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import time
from pathlib import Path

from repro.demo import prover_reply, script, statement
from repro.records import (
    AttemptStatus,
    Candidate,
    CandidateStatus,
    LeanMessageRecord,
    ReasonCode,
    SourceProblem,
    Stage,
    StageAttempt,
)
from repro.report import embed_json, write_report
from repro.report.page import read_embedded
from repro.store import RunStore

KINDS = ("ok", "corrupt", "restated", "repeat", "truncated", "sorry", "prose")
FAILURE_REASON = {
    "corrupt": ReasonCode.boundary_corruption,
    "restated": ReasonCode.statement_mismatch,
    "repeat": ReasonCode.statement_mismatch,
    "truncated": ReasonCode.statement_mismatch,
    "prose": ReasonCode.statement_mismatch,
    "sorry": ReasonCode.forbidden_construct,
}
TAXONOMY = {
    "corrupt": ["boundary_corruption", "target_corruption"],
    "restated": ["target_corruption"],
    "repeat": ["repetitive_tactics", "target_corruption"],
    "truncated": ["truncation", "target_corruption"],
    "prose": ["natural_language_intrusion", "truncation"],
    "sorry": ["forbidden_construct"],
}


def build_store(run_dir: Path, candidates: int, k: int, seed: int = 0) -> None:
    random.seed(seed)
    rewrites = [(p, r) for p in script() for r in p.rewrites if r.feasible]
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "config.yaml").write_text(
        f"name: synthetic-{candidates}\ndemonstration: true\nprove: {{k: {k}, strategy: parallel}}\n"
        "lean: {backend: recorded}\ndataset: {name: math, path: synthetic}\n",
        encoding="utf-8",
    )
    with RunStore(run_dir) as store:
        problems = [
            SourceProblem(
                problem_id=f"p{i}",
                source="synthetic",
                source_id=str(i),
                question=rewrites[i % len(rewrites)][0].original + " (original problem text)",
                answer="0",
                level=f"Level {1 + i % 5}",
                type=("Algebra", "Prealgebra", "Number Theory", "Counting & Probability")[i % 4],
            )
            for i in range(candidates)
        ]
        store.add_problems(problems)
        for index, problem in enumerate(problems):
            _, base = rewrites[index % len(rewrites)]
            # numbers differ from candidate to candidate, as in a real run: texts compress less
            factor = random.randint(2, 97)
            given = [(n, str(int(v) * factor) if v.isdigit() else v) for n, v in base.given]
            rewrite = base.model_copy(update={"given": given, "question": f"{base.question} (variant {factor})"})
            candidate = Candidate(
                candidate_id=f"{problem.problem_id}#r0", problem_id=problem.problem_id, rewrite_index=0
            )
            name = f"repro_{index:08x}"

            def record(
                stage: Stage,
                number: int,
                status: AttemptStatus,
                reason: ReasonCode | None,
                candidate: Candidate = candidate,
                **fields: object,
            ) -> None:
                attempt = StageAttempt(
                    candidate_id=candidate.candidate_id,
                    problem_id=candidate.problem_id,
                    stage=stage,
                    attempt_number=number,
                    status=status,
                    reason=reason,
                    **fields,  # type: ignore[arg-type]
                )
                store.record_attempt(attempt, candidate)

            candidate.rewritten_question = rewrite.question
            record(Stage.rewrite, 0, AttemptStatus.passed, None, output={"rewritten_question": rewrite.question})
            fate = random.random()
            outcome = "retained"
            if fate < 0.08:
                record(
                    Stage.screen,
                    0,
                    AttemptStatus.rejected,
                    ReasonCode.infeasible,
                    output={"verdict": "no", "analysis": "negative quantity"},
                )
                outcome = "rejected:screen:infeasible"
            else:
                record(Stage.screen, 0, AttemptStatus.passed, None, output={"verdict": "yes", "answer": rewrite.answer})
                formal = statement(rewrite, name)
                candidate.lean_statement = formal
                sorry = [LeanMessageRecord(severity="warning", line=1, column=0, text="declaration uses `sorry`")]
                record(
                    Stage.formalize,
                    0,
                    AttemptStatus.passed,
                    None,
                    output={"statement": formal},
                    lean_messages=sorry,
                    lean_seconds=0.4,
                )
                if fate < 0.16:
                    record(
                        Stage.align,
                        0,
                        AttemptStatus.rejected,
                        ReasonCode.semantic_mismatch,
                        output={"verdicts": ["Consistent", "Inconsistent", "Consistent"]},
                    )
                    outcome = "rejected:align:semantic_mismatch"
                else:
                    record(Stage.align, 0, AttemptStatus.passed, None, output={"verdicts": ["Consistent"] * 3})
                    kinds = [random.choice(KINDS) for _ in range(k)]
                    if fate < 0.45:
                        kinds = [kind if kind != "ok" else "corrupt" for kind in kinds]
                    for number, kind in enumerate(kinds):
                        text, finish = prover_reply(kind, rewrite, name)
                        record(
                            Stage.prove,
                            number,
                            AttemptStatus.passed,
                            None,
                            output={"text": text, "finish_reason": finish},
                        )
                        axioms = LeanMessageRecord(
                            severity="info",
                            line=9,
                            column=0,
                            text=f"'{name}' depends on axioms: [propext, Classical.choice, Quot.sound]",
                        )
                        if kind == "ok":
                            record(
                                Stage.verify,
                                number,
                                AttemptStatus.passed,
                                None,
                                lean_messages=[axioms],
                                output={
                                    "checked_code": text.split("```lean4\n")[-1].rstrip("`\n"),
                                    "lean_backend": "fake-repl",
                                    "real_lean": False,
                                },
                                lean_seconds=1.2,
                            )
                            if candidate.proof_attempt_number is None:
                                candidate.proof_attempt_number = number
                        else:
                            record(
                                Stage.verify,
                                number,
                                AttemptStatus.rejected,
                                FAILURE_REASON[kind],
                                taxonomy=TAXONOMY[kind],
                                output={"details": [f"{kind} sample"], "lean_backend": "fake-repl", "real_lean": False},
                            )
                    if candidate.proof_attempt_number is None:
                        outcome = "rejected:prove:proof_not_found"
                    else:
                        record(
                            Stage.answer,
                            0,
                            AttemptStatus.passed,
                            None,
                            output={"candidate": rewrite.answer, "answer_class": "final", "method": "deterministic"},
                        )
            if outcome == "retained":
                candidate.status = CandidateStatus.retained
                candidate.new_answer = rewrite.answer
            else:
                _, stage, reason = outcome.split(":")
                candidate.status = CandidateStatus.rejected
                candidate.reject_stage, candidate.reject_reason = Stage(stage), ReasonCode(reason)
            store.save_candidate(candidate)
            store.set_problem_outcome(problem.problem_id, "retained" if outcome == "retained" else "rejected")


def browser_timings(html: Path) -> dict[str, float] | None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if chromium is None:
        return None
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page()
        started = time.perf_counter()
        page.goto(html.as_uri())
        page.wait_for_selector("#audit-body tr.row")
        loaded = time.perf_counter() - started
        started = time.perf_counter()
        page.select_option("#filter-reason", "boundary_corruption")
        page.wait_for_function("document.querySelector('#audit-count').textContent.length > 0")
        filtered = time.perf_counter() - started
        started = time.perf_counter()
        page.fill("#filter-text", "bicycles")
        text_search = time.perf_counter() - started
        browser.close()
    return {
        "load_to_first_rows_s": round(loaded, 3),
        "reason_filter_s": round(filtered, 3),
        "text_search_s": round(text_search, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--candidates", type=int, default=5000)
    parser.add_argument("--k", type=int, default=4)
    parser.add_argument("--out", default="/tmp/repro-report-scale")
    arguments = parser.parse_args()
    run_dir = Path(arguments.out) / "run"
    shutil.rmtree(run_dir, ignore_errors=True)
    started = time.perf_counter()
    build_store(run_dir, arguments.candidates, arguments.k)
    store_seconds = time.perf_counter() - started
    result = write_report(run_dir, Path(arguments.out) / "report.html")
    audit_json = embed_json(read_embedded(Path(result.path).read_text(encoding="utf-8")))
    figures = {
        "candidates": result.candidates,
        "store_build_s": round(store_seconds, 1),
        "store_mb": round((run_dir / "run.sqlite").stat().st_size / 1e6, 2),
        "report_mb": round(result.size_bytes / 1e6, 2),
        "audit_json_uncompressed_mb": round(len(audit_json.encode("utf-8")) / 1e6, 2),
        "report_render_s": result.seconds,
        "browser": browser_timings(Path(result.path)),
    }
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
