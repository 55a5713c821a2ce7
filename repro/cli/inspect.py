"""Reading a run: `repro status`, `audit`, `report` and `reasons`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.table import Table

from repro.cli._common import add_run_dir, console
from repro.records import REASON_DESCRIPTIONS, Stage

if TYPE_CHECKING:
    from repro.cli._common import Commands


def _print_status(metrics: dict[str, Any]) -> None:
    reasons = metrics.get("not_verified") or []
    if reasons:  # as the HTML report's banner: a pasted figure must not read as a real result
        console.print("NOT VERIFIED: " + "; ".join(reasons) + ". These figures show the pipeline, not a result.")
    table = Table(title="funnel (candidates)")
    for column in ("stage", "reached", "passed", "rejected here (by reason)", "unfinished here"):
        table.add_column(column)
    for stage, row in metrics["funnel"].items():
        rejected = ", ".join(f"{reason} {count}" for reason, count in row["rejected"].items())
        # the rest of the gap: candidates still in progress at this stage (unfinished problems)
        open_here = row["reached"] - row["passed"] - sum(row["rejected"].values())
        table.add_row(stage, str(row["reached"]), str(row["passed"]), rejected, str(open_here) if open_here else "")
    console.print(table)
    rates = metrics["rates"]
    console.print(
        f"problems drawn {rates['drawn']}, finished {rates['finished']}, retained {rates['retained']}, "
        f"generation rate {rates['generation_rate']} (retained / finished problems)"
    )
    pass_at = rates["pass_at"]
    console.print(
        f"{pass_at['label']}: " + ", ".join(f"{j} {value}" for j, value in pass_at["values"].items())
        if pass_at["statements"]
        else "prover pass@j: no formal statement was proved yet"
    )
    for label in ("by_level", "by_type"):
        if rates[label]:
            console.print(f"{label}: " + ", ".join(f"{k} {v}" for k, v in rates[label].items()))
    if rates.get("levers"):
        from repro.metrics import lever_lines

        for line in lever_lines(rates["levers"]):
            console.print(line, soft_wrap=True)
    if metrics.get("judge"):
        from repro.metrics import judge_lines

        for line in judge_lines(metrics["judge"], rates["retained"]):
            console.print(line, soft_wrap=True)
    checks = metrics.get("statement_checks") or {}
    console.print(
        f"statements our Lean checks found vacuous {checks.get('vacuous', 0)}, refuted {checks.get('refuted', 0)}"
    )
    for label in ("by_level", "by_type"):
        if checks.get(label):
            console.print(
                f"  {label}: "
                + ", ".join(
                    f"{k} vacuous {v.get('vacuous', 0)} refuted {v.get('refuted', 0)}" for k, v in checks[label].items()
                )
            )
    from repro.metrics import answer_lines

    for line in answer_lines(metrics.get("answers") or {}):
        console.print(line, soft_wrap=True)
    models = Table(title="model calls (per stage and model)")
    for column in (
        "stage",
        "model",
        "calls",
        "cache hits",
        "failed",
        "retries",
        "tokens in",
        "tokens out",
        "latency s",
    ):
        models.add_column(column)
    for key, row in metrics["models"].items():
        models.add_row(
            *key.split(" | ", 1),
            *(
                str(row[name])
                for name in ("calls", "cache_hits", "failed", "retries", "tokens_in", "tokens_out", "latency_s")
            ),
        )
    console.print(models)
    attempts = Table(title="attempts by stage, status and reason")
    for column in ("stage", "status", "reason", "count"):
        attempts.add_column(column)
    for row in metrics["attempts"]:
        attempts.add_row(row["stage"], row["status"], row["reason"] or "", str(row["count"]))
    console.print(attempts)
    cost = metrics["cost_per_retained"]
    console.print(
        "cost per retained instance: "
        + ", ".join(f"{_number(cost.get(key))} {label}" for key, label in _COST_LABELS.items())
    )
    skipped = metrics.get("skipped_rows") or []
    if skipped:
        console.print(f"skipped source rows ({len(skipped)}, --skip-bad-rows):")
        for reason in skipped:
            console.print(f"  {reason}")
    unfinished = metrics.get("unfinished") or {"count": 0}
    live = unfinished.get("live")
    if live:
        console.print(f"live: the run is in progress ({live}); status shows what it has stored so far", soft_wrap=True)
    if unfinished["count"]:
        hint = "in flight or still to come" if live else "repro run --resume continues them"
        console.print(f"unfinished problems: {unfinished['count']} ({hint})", soft_wrap=True)
        for row in unfinished["first"]:
            cause = row["cause"] or ("in progress" if live else "interrupted before it finished")
            console.print(f"  {row['problem_id']}: {cause}", soft_wrap=True)


_COST_LABELS = {"model_calls": "model calls", "tokens": "tokens", "lean_seconds": "Lean seconds"}


def _number(value: object) -> str:
    """A figure as a reader wants it: no ``None``, no 16-digit floats."""
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def command_status(arguments: argparse.Namespace) -> int:
    from repro.app import metrics_json, status

    metrics = status(Path(arguments.run_dir))
    if arguments.json:
        print(metrics_json(metrics))
    else:
        _print_status(metrics)
    return 0


def command_report(arguments: argparse.Namespace) -> int:
    from repro.report import write_report

    result = write_report(Path(arguments.directory), Path(arguments.out) if arguments.out else None)
    print(
        f"wrote {result.path} ({result.size_bytes / 1e6:.2f} MB; {', '.join(result.kinds)};"
        f" {result.contents}; {result.seconds:.1f} s)"
    )
    return 0


def _print_block(label: str, text: str | None, *, indent: str = "    ") -> None:
    if text:
        console.print(f"  {label}:")
        for line in str(text).splitlines() or [""]:
            console.print(f"{indent}{line}")


def command_audit(arguments: argparse.Namespace) -> int:
    from repro.audit import audit_rows

    rows = audit_rows(
        Path(arguments.run_dir),
        stage=arguments.stage,
        reason=arguments.reason,
        limit=arguments.limit,
        candidate_id=arguments.candidate,
    )
    if arguments.json:
        print(json.dumps(rows, indent=2, default=str, ensure_ascii=False))
        return 0
    for row in rows:
        taxonomy = f"; taxonomy: {', '.join(row['taxonomy'])}" if row["taxonomy"] else ""
        console.print(
            f"== {row['candidate_id']} ({row['candidate_status']})  {row['reject_stage']} #{row['attempt']}:"
            f" {row['status']}" + (f": {row['reject_reason']}" if row["reject_reason"] else "") + taxonomy
        )
        console.print(f"  original: {row['original_question']}")
        if row["rewritten_question"]:
            console.print(f"  rewritten: {row['rewritten_question']}")
        source = row["statement_from"]
        _print_block(f"statement (of formalize #{source['attempt']})" if source else "statement", row["lean_statement"])
        analysis = row["analysis"]
        if isinstance(analysis, list):  # one per ask: identical analyses are shown once
            distinct = list(dict.fromkeys(text for text in analysis if text))
            analysis = "\n".join(distinct) if distinct else None
        _print_block("alignment analysis", analysis)
        if not row["prover_output"] and not analysis:  # the replies an analysis came from would say it again
            for text in dict.fromkeys(row["texts"]):
                _print_block("model output", text)
        _print_block("prover output", row["prover_output"])
        _print_block("checked code", row["checked_code"])
        details = row["details"]
        _print_block("details", "\n".join(map(str, details)) if isinstance(details, list) else details)
        for message in row["lean_messages"]:
            console.print(f"  lean {message['severity']} line {message['line']}: {message['text']}")
        if row["error"]:
            console.print(f"  error: {row['error']}")
    shown = f" shown (--limit {arguments.limit})" if arguments.limit is not None else ""
    console.print(f"{len(rows)} rejected attempts{shown}")
    return 0


def command_reasons(arguments: argparse.Namespace) -> int:
    from repro.lean.taxonomy import FACT_DESCRIPTIONS
    from repro.records import NO_ANSWER_DESCRIPTIONS

    if arguments.json:
        print(
            json.dumps(
                {
                    "reasons": {code.value: text for code, text in REASON_DESCRIPTIONS.items()},
                    "no_answer": {reason.value: text for reason, text in NO_ANSWER_DESCRIPTIONS.items()},
                    "taxonomy": {fact.value: text for fact, text in FACT_DESCRIPTIONS.items()},
                },
                indent=2,
                ensure_ascii=False,
            )
        )
        return 0
    for code, text in REASON_DESCRIPTIONS.items():
        console.print(f"{code.value}: {text}")
    console.print("\nwhy a verified statement gave no answer (answer_not_grounded's `no_answer`):")
    for reason, text in NO_ANSWER_DESCRIPTIONS.items():
        console.print(f"  {reason.value}: {text}")
    console.print("\nfailure-taxonomy tags of a rejected sample (audit and report; RePro App. J):")
    for fact, text in FACT_DESCRIPTIONS.items():
        console.print(f"  {fact.value}: {text}")
    return 0


def register(commands: Commands) -> None:
    status = commands.add_parser("status", help="funnel, generation rates, pass@k and cost of a run")
    add_run_dir(status)
    status.add_argument("--json", action="store_true", help="the same figures as one JSON object")
    status.set_defaults(handler=command_status)

    audit = commands.add_parser(
        "audit",
        help="list every rejected attempt with its texts, alignment analysis, prover output, Lean messages and"
        " the kernel judge's answer",
    )
    add_run_dir(audit)
    audit.add_argument("--stage", help="only this stage's attempts: " + " | ".join(stage.value for stage in Stage))
    audit.add_argument("--candidate", help="only this candidate's attempts (or, given a problem id, its candidates')")
    audit.add_argument("--reason", help="a reason code (see `repro reasons`)")
    audit.add_argument("--limit", type=int, help="show at most N attempts (0 shows none)")
    audit.add_argument("--json", action="store_true", help="the rows as a JSON list (every field, untruncated)")
    audit.set_defaults(handler=command_audit)

    report = commands.add_parser("report", help="one self-contained HTML report of a run, study or evaluation")
    add_run_dir(report, dest="directory", what="a run, study or evaluation directory")
    report.add_argument("--out", help="the HTML file to write (default: DIRECTORY/report.html)")
    report.set_defaults(handler=command_report)

    reasons = commands.add_parser(
        "reasons", help="list every rejection reason code and failure-taxonomy tag, and what each means"
    )
    reasons.add_argument("--json", action="store_true", help="the same as one JSON object")
    reasons.set_defaults(handler=command_reasons)
