"""The report as one HTML file: header, figures, tables, and the audit table's data and script.

Every text from the store goes through ``html.escape`` (markup) or ``embed_compressed`` (the data block),
and the page's Content-Security-Policy allows exactly one script, ours, by its hash: an injected
``<script>`` or ``onerror=`` in a model's output could not run even if it escaped escaping.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
from html import escape
from importlib import resources
from typing import Any

from repro.report.collect import RunReport
from repro.report.svg import OTHER, PASSED, color_for, legend, line_chart, rate_bars, stacked_bars

STYLE = """
body{font-family:system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:0 16px 40px;color:#1d1d1d}
h1{margin:16px 0 4px}h2{border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:32px}
table{border-collapse:collapse;font-size:13px;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 6px;
text-align:left;vertical-align:top}th{background:#f4f4f4}
.banner{background:#b00020;color:#fff;padding:14px 18px;font-size:17px;font-weight:bold;position:sticky;top:0;
z-index:5;border-radius:0 0 6px 6px}.banner ul{margin:6px 0 0;font-weight:normal;font-size:14px}
.ok{background:#e7f4e4;padding:8px 12px;border-radius:6px}
.legend{display:flex;flex-wrap:wrap;gap:6px 14px;font-size:12px;margin:4px 0 12px}
.swatch{display:inline-block;width:11px;height:11px;margin-right:4px;vertical-align:middle}
.filters{display:flex;flex-wrap:wrap;gap:8px;align-items:center;margin:8px 0}
.filters input{min-width:260px}#audit tr.row{cursor:pointer}#audit tr.row:hover{background:#f3f7ff}
tr.status-retained td:nth-child(4){color:#2f7d32;font-weight:bold}
tr.status-rejected td:nth-child(4){color:#b00020}
.details{padding:6px 4px}.details h4{margin:10px 0 2px;font-size:13px}
pre{white-space:pre-wrap;word-break:break-word;background:#f7f7f7;padding:6px;margin:0;font-size:12px;max-height:420px;
overflow:auto}pre.code{background:#f4f1fb}
.sample{border-left:4px solid #ccc;padding-left:8px;margin:8px 0}.sample-passed{border-color:#59a14f}
.sample-rejected{border-color:#e15759}.lean-messages{font-family:monospace;font-size:12px;margin:2px 0}
.severity-error{color:#b00020}.taxonomy,.gate-details{font-size:12px;margin:2px 0;color:#444}
.grid{display:flex;flex-wrap:wrap;gap:24px}.note{color:#555;font-size:13px}
.share{display:inline-block;height:10px;background:#e15759;vertical-align:middle}
"""


def embed_json(value: Any) -> str:
    """JSON safe inside a <script type="application/json"> block: no '<', '>' or '&' survive as such."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def embed_compressed(value: Any) -> str:
    """Escaped JSON, gzipped, in base64: the page's script inflates it with the browser's DecompressionStream.

    Thousands of candidates with k prover samples each are tens of MB of text; compressed they are a
    few MB. Base64 has no character that could end the <script> block, whatever the texts hold.
    """
    return base64.b64encode(gzip.compress(embed_json(value).encode("utf-8"), mtime=0)).decode("ascii")


def read_embedded(html: str) -> Any:
    """The audit data of a written report (for tests and tools)."""
    start = html.index('id="report-data">') + len('id="report-data">')
    encoded = html[start : html.index("</script>", start)]
    return json.loads(gzip.decompress(base64.b64decode(encoded)).decode("utf-8"))


# What every page's script starts with (the data block, the paged table, element helpers): the page
# allows one script by its hash, so the shared part is put in front of the page's own, not loaded apart.
SHARED_SCRIPT = "shared.js"


def _script(name: str = "audit.js") -> str:
    files = resources.files("repro.report")
    return "\n".join(files.joinpath(part).read_text(encoding="utf-8") for part in (SHARED_SCRIPT, name))


def _table(headers: list[str], rows: list[list[Any]], table_id: str | None = None) -> str:
    head = "".join(f"<th>{escape(str(h))}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{escape(_cell(c))}</td>" for c in row) + "</tr>" for row in rows)
    identifier = f' id="{escape(table_id)}"' if table_id else ""
    return f"<table{identifier}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _cell(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def unverified_banner(sources: list[str], subject: str = "results in this report") -> str:
    """The red NOT VERIFIED banner naming every unverified source, or a green line when there is none."""
    if not sources:
        return '<p class="ok">Every model output came from a model backend and every Lean verdict from real Lean.</p>'
    items = "".join(f"<li>{escape(s)}</li>" for s in sources)
    return (
        f'<div class="banner" id="unverified-banner" role="alert">NOT VERIFIED: {escape(subject)} come from'
        f" scripted or stand-in backends. Nothing here is a real model result or a real Lean verdict."
        f"<ul>{items}</ul></div>"
    )


def _banner(report: RunReport) -> str:
    return unverified_banner(report.header.unverified_sources)


def _header(report: RunReport) -> str:
    header = report.header
    config = _table(["setting", "value"], [[k, v] for k, v in header.config_summary.items()])
    models = _table(["stage", "model", "backend"], [[m.stage, m.model, m.backend] for m in header.models])
    lean = _table(
        ["Lean backend", "toolchain", "Mathlib revision", "real Lean", "checks"],
        [[x.backend, x.toolchain, x.mathlib_revision, "yes" if x.real_lean else "NO", x.checks] for x in header.lean],
    )
    judges = _table(
        ["kernel judge", "revision", "toolchain", "real judge", "confinement", "judgements"],
        [
            [x.tool, x.revision, x.toolchain, "yes" if x.real else "NO (stand-in)", x.confinement, x.judgements]
            for x in header.judges
        ]
        or [["none asked yet", "", "", "", "", 0]],
        "judge-table",
    )
    meta = f"run directory {header.run_dir} · created {header.created_at or '?'} · repro {header.repro_version or '?'}"
    return (
        f"<h1>repro report: {escape(header.run_name)}</h1><p class=note>{escape(meta)}</p>"
        f'<div class="grid"><div><h3>Configuration</h3>{config}</div><div><h3>Models per stage</h3>{models}</div>'
        f"<div><h3>Lean</h3>{lean}</div><div><h3>Kernel judge</h3>{judges}</div></div>"
    )


def _judge(report: RunReport) -> str:
    """What the kernel judge passed, where it overruled the screen (the judge wins), and what is verified."""
    judge = report.judge
    if not judge:
        return ""
    retained = report.rates.get("retained", 0)
    rows = [
        ["judgements (texts the screen passed)", judge["judged"]],
        ["passed", judge["passed"]],
        ["rejected where the screen had passed (the judge won)", judge["overruled"]],
        ["no verdict (unfinished, --resume judges them)", judge["unavailable"]],
        ["retained, verified by a real judge", f"{judge['retained_verified']} of {retained}"],
    ]
    note = (
        "<p class=note>The screen (the static layer and the REPL check) runs beside the prover's code; its pass"
        " only makes a candidate for the kernel judge, which compiles our statement and the submission apart"
        " and replays the submission in Lean's kernel. A candidate is retained only on the judge's pass, and"
        " counts as verified only when that judge is real.</p>"
    )
    return f"<h2 id=judge>Kernel judge</h2>{_table(['', 'count'], rows, 'judge-figures')}{note}"


def _funnel(report: RunReport) -> str:
    reasons = sorted({r for stage in report.funnel.values() for r in stage["rejected"]})
    rows = []
    for stage in report.stage_order:
        counts = report.funnel.get(stage, {"reached": 0, "passed": 0, "rejected": {}})
        rejected = counts["rejected"]
        retried = max(counts["reached"] - counts["passed"] - sum(rejected.values()), 0)
        segments = [("passed", counts["passed"], PASSED)]
        segments += [(r, n, color_for(r, reasons)) for r, n in sorted(rejected.items())]
        segments.append(("failed here, retried earlier stage", retried, OTHER))
        note = f"{counts['passed']}/{counts['reached']} passed" + (
            f", {sum(rejected.values())} rejected here" if rejected else ""
        )
        rows.append((stage, segments, note))
    figure = stacked_bars(rows, title="Funnel: candidates reaching each stage", figure_id="figure-funnel")
    keys = [("passed", PASSED)] + [(r, color_for(r, reasons)) for r in reasons]
    keys.append(("failed here, candidate went back to an earlier stage (or in progress)", OTHER))
    return f"<h2 id=funnel>Funnel</h2>{figure}{legend(keys)}"


def _rates(report: RunReport) -> str:
    counts = report.rate_counts
    rows: list[tuple[str, float | None, str]] = []
    for group, label in (("overall", ""), ("level", "level "), ("type", "type ")):
        for key, (hit, total) in sorted(counts.get(group, {}).items()):
            name = "overall" if group == "overall" else f"{label}{key}"
            rows.append((name, hit / total if total else None, f"{hit}/{total} = {hit / total:.1%}" if total else "—"))
    if not rows:
        return "<h2 id=rates>Generation rate</h2><p>No problem has finished yet.</p>"
    figure = rate_bars(rows, title="Generation rate (retained / finished problems)", figure_id="figure-rates")
    return f"<h2 id=rates>Generation rate</h2>{figure}"


def _levers(report: RunReport) -> str:
    """The generation rate without any lever, with salvage, and with feedback rounds, and what they cost."""
    levers = report.rates.get("levers")
    if not levers:
        return ""
    rows: list[list[Any]] = [["overall", *(levers["rate"][name] for name in ("none", "salvage", "feedback"))]]
    for group, label in (("by_level", "level "), ("by_type", "type ")):
        rows += [[f"{label}{key}", row["none"], row["salvage"], row["feedback"]] for key, row in levers[group].items()]
    rates = _table(["", "no lever", "+ salvage", "+ salvage + feedback rounds"], rows, "lever-table")
    costs = _table(
        [
            "lever",
            "checks",
            "verified",
            "failed (no verdict)",
            "Lean seconds",
            "model calls",
            "tokens in",
            "tokens out",
        ],
        [
            [
                name,
                c["attempts"],
                c["verified"],
                c.get("failed", 0),
                c["lean_seconds"],
                c["model_calls"],
                c["tokens_in"],
                c["tokens_out"],
            ]
            for name, c in levers["cost"].items()
        ]
        or [["—", 0, 0, 0, 0, 0, 0, 0]],
    )
    retained = levers["retained"]
    note = (
        "<p class=note>Retained by a raw prover sample "
        f"{retained['none']}, by salvage {retained['salvage']}, by a Lean-feedback round {retained['feedback']}"
        + (f", from a prove-study (--reprove-with) {levers['from_study']}" if levers.get("from_study") else "")
        + "."
        " Every lever's proof passed the same screen and the same kernel judge. The rates are cumulative and each"
        " is a lower bound of a run with only those levers: a proof a lever found ended that candidate's search.</p>"
    )
    return f"<h2 id=levers>Salvage and feedback rounds</h2>{rates}{costs}{note}"


def _pass_at(report: RunReport) -> str:
    prover = [(float(key.split("@")[1]), value) for key, value in report.prover_pass_at.items() if value is not None]
    figure = line_chart(
        [(f"prover pass@j ({report.prover_statements} formal statements)", prover, "#f28e2b")],
        title="pass@j",
        figure_id="figure-pass-at",
        x_label="j (prover samples)",
        y_label="pass@j",
    )
    note = (
        f"<p class=note>{escape(report.prover_pass_at_label)}: the share of formal statements given to the"
        " prover for which one of j samples passes the kernel judge, the same figure as `repro status`."
        " Proofs found by salvage or feedback rounds are levers, counted in their own section.</p>"
    )
    return f"<h2 id=pass-at>pass@j</h2>{figure}{note}"


def _costs(report: RunReport) -> str:
    headers = ["stage | model", "calls", "cache hits", "failed", "retries", "tokens in", "tokens out", "latency s"]
    rows = [
        [key, v["calls"], v["cache_hits"], v["failed"], v["retries"], v["tokens_in"], v["tokens_out"], v["latency_s"]]
        for key, v in report.models.items()
    ]
    tokens = [
        (
            key.split(" | ")[0],
            [("in", v["tokens_in"], "#4e79a7"), ("out", v["tokens_out"], "#f28e2b")],
            f"{v['tokens_in'] + v['tokens_out']} tokens, {v['calls']} calls",
        )
        for key, v in report.models.items()
    ]
    figure = stacked_bars(tokens, title="Model tokens per stage (in | out)", figure_id="figure-tokens")
    lean = _table(["stage", "Lean seconds"], [[s, v] for s, v in report.lean_seconds.items()] or [["—", 0]])
    cost = _table(["per retained instance", "value"], [[k, v] for k, v in report.cost_per_retained.items()])
    return (
        f"<h2 id=costs>Model calls, tokens, latency, Lean time</h2>{_table(headers, rows, 'model-table')}{figure}"
        f"{legend([('tokens in', '#4e79a7'), ('tokens out', '#f28e2b')])}"
        f'<div class="grid"><div>{lean}</div><div>{cost}</div></div>'
    )


def _statement_checks(report: RunReport) -> str:
    checks = report.statement_checks or {}
    rows = [["all", "", checks.get("vacuous", 0), checks.get("refuted", 0)]]
    for group in ("by_level", "by_type"):
        for key, counts in (checks.get(group) or {}).items():
            rows.append([group.removeprefix("by_"), key, counts.get("vacuous", 0), counts.get("refuted", 0)])
    table = _table(["grouping", "value", "vacuous", "refuted"], rows, "statement-checks-table")
    return (
        "<h2 id=statement-checks>Statements Lean found vacuous or refuted</h2>"
        "<p class=note>Our own Lean commands, never the prover's: vacuous statements (hypotheses that derive"
        " False, or a conclusion that restates a hypothesis) are refused before proving; refuted ones (Lean"
        " proved the negation after every sample failed) go back to formalization. Candidates, not problems.</p>"
        f"{table}"
    )


def _answers(report: RunReport) -> str:
    """Answers per form (count, generation rate) and the verified statements that gave none, by reason."""
    answers = report.answers or {}
    if not answers.get("reached"):
        return ""
    rates = answers.get("generation_rate", {})
    rows: list[list[Any]] = [
        ["answer", form, count, rates.get(form)] for form, count in answers.get("answered", {}).items()
    ]
    rows += [["no answer", reason, count, ""] for reason, count in answers.get("no_answer", {}).items()]
    rows += [["not final", kind, count, ""] for kind, count in answers.get("not_final", {}).items()]
    if answers.get("unfinished"):
        rows.append(["no verdict", "Lean gave none (unfinished)", answers["unfinished"], ""])
    table = _table(["outcome", "form or reason", "candidates", "generation rate"], rows, "answers-table")
    return (
        "<h2 id=answers>Answers by form, and statements that gave none</h2>"
        f"<p class=note>{answers['reached']} verified statements reached the answer stage. Every answer is the"
        " value our own Lean commands confirmed from the statement (never the prover's text); sets, intervals,"
        " bounds and symbolic expressions give none and are counted apart.</p>"
        f"{table}"
    )


def _taxonomy(report: RunReport) -> str:
    if not report.taxonomy:
        return "<h2 id=taxonomy>Failure taxonomy</h2><p>No prover sample was rejected.</p>"
    rows = "".join(
        f"<tr><td>{escape(row['fact'])}</td><td>{row['count']}</td><td>{row['share']:.1%} "
        f'<span class="share" style="width:{int(row["share"] * 160)}px"></span></td>'
        f'<td><a class="example" href="#candidate={escape(row["example"])}">{escape(row["example"])}</a></td></tr>'
        for row in report.taxonomy
    )
    return (
        "<h2 id=taxonomy>Failure taxonomy of rejected prover samples</h2>"
        f"<p class=note>{report.rejected_samples} rejected samples; a sample can show several facts, so shares"
        " can add up to more than 100%. Each example opens in the audit table.</p>"
        '<table id="taxonomy-table"><thead><tr><th>fact</th><th>samples</th><th>share</th><th>example</th></tr>'
        f"</thead><tbody>{rows}</tbody></table>"
    )


def _audit() -> str:
    selects = "".join(
        f'<label>{name} <select id="filter-{name}"><option value="">all</option></select></label>'
        for name in ("stage", "reason", "level", "type")
    )
    return (
        "<h2 id=audit>Audit: every candidate</h2><p class=note>Stage is where a rejected candidate stopped (or"
        " its status); reason filters match the final reason or any attempt's reason. Click a row to open it.</p>"
        f'<div class="filters">{selects}<input id="filter-text" type="search" placeholder="free text'
        ' (question, statement, proof)"><span id="audit-count"></span></div>'
        '<table id="audit"><thead><tr><th>candidate</th><th>level</th><th>type</th><th>status</th><th>stage</th>'
        '<th>reason</th><th>all reasons</th><th>rewritten question</th></tr></thead><tbody id="audit-body"></tbody>'
        '</table><div id="audit-pager"></div>'
    )


def render_page(title: str, body: str, data: dict[str, Any], script_name: str = "audit.js") -> str:
    """The page with its one script (``shared.js`` followed by ``audit.js`` for a run, ``study.js`` for a
    study, ``evaluation.js`` for an evaluation), allowed by the Content-Security-Policy through its hash
    and nothing else."""
    script = _script(script_name)
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    policy = f"default-src 'none'; script-src 'sha256-{digest}'; style-src 'unsafe-inline'; img-src data:"
    return (
        "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{escape(title)}</title>'
        f"<style>{STYLE}</style></head><body>{body}"
        f'<script type="application/gzip+base64" id="report-data">{embed_compressed(data)}</script>'
        f"<script>{script}</script></body></html>\n"
    )


def run_sections(report: RunReport) -> str:
    return (
        _banner(report)
        + _header(report)
        + _funnel(report)
        + _rates(report)
        + _levers(report)
        + _judge(report)
        + _pass_at(report)
        + _costs(report)
        + _statement_checks(report)
        + _answers(report)
        + _taxonomy(report)
        + _audit()
    )
