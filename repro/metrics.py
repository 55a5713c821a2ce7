"""Run metrics from the store alone: funnel, generation rates, pass@j, cost per retained instance.

Every figure comes from an aggregate query over indexed columns or a running total kept by the
store, never from loading attempts or model calls, so the cost does not grow with the run.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from repro.config import LeanBackendName, ModelBackendName, RunConfig
from repro.pass_at import run_pass_at
from repro.records import STAGE_ORDER, Stage
from repro.store import STAGE_RANK, RunReader


def funnel(store: RunReader) -> dict[str, Any]:
    """How many candidates reached each stage, passed it, and stopped there rejected (by reason).

    A candidate that reached (passed) a stage reached (passed) every stage before it, so the
    furthest rank stored per candidate is enough.
    """
    reached: Counter[int] = Counter()
    passed: Counter[int] = Counter()
    for reached_rank, passed_rank, count in store.reach_counts():
        # a candidate that passed a stage has reached the next one, even if no attempt of it was stored yet
        # (in flight when the run was killed): it is unfinished there, so each row still adds up
        reached[max(reached_rank, passed_rank + 1)] += count
        passed[passed_rank] += count
    # a rejected candidate is counted where it stopped (the stage after the last one it passed), so each
    # row adds up: reached - passed = rejected here + unfinished here. A candidate rejected as
    # proof_not_found passed prove (samples came back) and stopped at verify (none was verified).
    rejected: dict[str, dict[str, int]] = defaultdict(dict)
    last = len(STAGE_ORDER) - 1
    for stopped, reason, count in store.stop_counts():
        stage = STAGE_ORDER[min(max(stopped, 0), last)].value
        rejected[stage][reason or "?"] = rejected[stage].get(reason or "?", 0) + count
    table = {}
    for stage in STAGE_ORDER:
        rank = STAGE_RANK[stage.value]
        table[stage.value] = {
            "reached": sum(count for value, count in reached.items() if value >= rank),
            "passed": sum(count for value, count in passed.items() if value >= rank),
            "rejected": dict(sorted(rejected[stage.value].items())),
        }
    return table


def _rate(numerator: int, denominator: int) -> float | None:
    return round(numerator / denominator, 4) if denominator else None


def generation_rates(store: RunReader, k: int, strategy: str = "parallel") -> dict[str, Any]:
    outcomes = store.outcome_counts()
    drawn = sum(outcomes.values())
    finished = drawn - outcomes.get(None, 0)
    positions = store.retained_proof_positions()
    retained = sum(positions.values())
    by_level: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    by_type: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for level, kind, outcome, count in store.level_type_outcomes():
        for table, key in ((by_level, level), (by_type, kind)):
            if key:
                table[key][0] += count if outcome == "retained" else 0
                table[key][1] += count
    # pass@j: the prover's, over the formal statements it was asked to prove (one definition: repro.pass_at)
    pass_at = run_pass_at(store, k, strategy)
    return {
        "drawn": drawn,
        "finished": finished,
        "retained": retained,
        "generation_rate": _rate(retained, finished),
        "by_level": {key: _rate(*value) for key, value in sorted(by_level.items())},
        "by_type": {key: _rate(*value) for key, value in sorted(by_type.items())},
        "pass_at": pass_at.model_dump(),
        "levers": lever_rates(store, by_level, by_type, finished),
    }


LEVERS = ("none", "salvage", "feedback")


def lever_rates(
    store: RunReader, by_level: dict[str, list[int]], by_type: dict[str, list[int]], finished: int
) -> dict[str, Any]:
    """The generation rate without any lever, with salvage, and with salvage and feedback rounds.

    Cumulative: "salvage" counts raw-sample proofs and salvaged ones, "feedback" all the run's prover's
    proofs; a study's proof taken by ``--reprove-with`` is in no rate, counted apart (``from_study``). Each is a
    lower bound of what the run would reach with only those levers on (a proof a lever found ended that
    candidate's search, so its later samples were never drawn). Per level and type, and the levers' cost.
    """
    totals: Counter[str] = Counter()
    from_study = 0
    per_level: dict[str, Counter[str]] = defaultdict(Counter)
    per_type: dict[str, Counter[str]] = defaultdict(Counter)
    for level, kind, lever, count in store.retained_by_lever():
        name = lever or "none"
        if name not in LEVERS:
            from_study += count  # another prover's proof (``--reprove-with``): in no lever's rate
            continue
        totals[name] += count
        if level:
            per_level[level][name] += count
        if kind:
            per_type[kind][name] += count

    def cumulative(counts: Counter[str], denominator: int) -> dict[str, float | None]:
        running, rates = 0, {}
        for name in LEVERS:
            running += counts[name]
            rates[name] = _rate(running, denominator)
        return rates

    return {
        "rate": cumulative(totals, finished),
        "retained": {name: totals[name] for name in LEVERS},
        "from_study": from_study,
        "by_level": {key: cumulative(per_level[key], value[1]) for key, value in sorted(by_level.items())},
        "by_type": {key: cumulative(per_type[key], value[1]) for key, value in sorted(by_type.items())},
        "cost": store.lever_costs(),
    }


def lever_lines(levers: dict[str, Any]) -> list[str]:
    """Plain lines for a terminal: the generation rate without levers, with salvage, with feedback rounds."""
    rate = levers["rate"]
    lines = [
        f"generation rate without levers {rate['none']}, with salvage {rate['salvage']},"
        f" with salvage and feedback rounds {rate['feedback']}"
        f" (retained by a raw sample {levers['retained']['none']}, by salvage {levers['retained']['salvage']},"
        f" by a feedback round {levers['retained']['feedback']}"
        + (f", from a prove-study {levers['from_study']}" if levers.get("from_study") else "")
        + ")"
    ]
    for label in ("by_level", "by_type"):
        for key, row in levers[label].items():
            lines.append(f"  {key}: none {row['none']}, salvage {row['salvage']}, feedback {row['feedback']}")
    for lever, cost in levers["cost"].items():
        lines.append(
            f"{lever}: {cost['attempts']} checks, {cost['verified']} verified, {cost['lean_seconds']} Lean s,"
            f" {cost['model_calls']} model calls, {cost['tokens_in']}+{cost['tokens_out']} tokens"
            + (f"; {cost['failed']} failed (an endpoint or Lean gave no verdict)" if cost.get("failed") else "")
        )
    return lines


def statement_checks(store: RunReader) -> dict[str, Any]:
    """Statements our Lean checks found vacuous (before proving) or refuted (after every sample failed),
    in all and per level and type: candidates, not problems (a problem may be reformalized)."""
    totals: Counter[str] = Counter()
    by_level: dict[str, Counter[str]] = defaultdict(Counter)
    by_type: dict[str, Counter[str]] = defaultdict(Counter)
    for level, kind, reason, count in store.statement_check_counts():
        name = reason.removeprefix("statement_")
        totals[name] += count
        if level:
            by_level[level][name] += count
        if kind:
            by_type[kind][name] += count
    return {
        "vacuous": totals["vacuous"],
        "refuted": totals["refuted"],
        "by_level": {key: dict(value) for key, value in sorted(by_level.items())},
        "by_type": {key: dict(value) for key, value in sorted(by_type.items())},
    }


def judge_figures(store: RunReader) -> dict[str, Any]:
    """What the kernel judge said over the run, from the running attempt counts and the retained rows.

    The judge is asked only about texts the screen passed, so every rejection is a disagreement between the
    two, and the judge won (``overruled``). ``verified`` counts retained candidates a real judge passed: a
    stand-in judge's pass (tests, the demo) is retained but never verified.
    """
    counts: Counter[str] = Counter()
    for stage, state, reason, count in store.stage_status_counts():
        if stage == Stage.judge.value:
            counts[reason or state] += count
    from repro.judge.currency import judge_outdated

    tools: dict[str, int] = {}
    verified = unjudged = outdated = 0
    for tool, real, revision, toolchain, checks, count in store.retained_judge_pins():
        if tool is None:
            unjudged += count
            continue
        label = f"{tool}{'' if real else ' (stand-in)'}"
        tools[label] = tools.get(label, 0) + count
        if real and judge_outdated(tool, revision, toolchain, checks) is not None:
            outdated += count  # not today's judge's pass: never released as verified; a resume judges it again
        elif real:
            verified += count
    return {
        "judged": sum(counts.values()),
        "passed": counts["passed"],
        "overruled": counts["judge_rejected"],
        "unavailable": counts["judge_unavailable"],
        "retained_verified": verified,
        "retained_unjudged": unjudged,
        "retained_outdated_judge": outdated,
        "retained_by_tool": tools,
    }


def judge_lines(judge: dict[str, Any], retained: int) -> list[str]:
    """Plain lines for a terminal: what the judge passed, where it overruled the screen, what is verified."""
    lines = [
        f"kernel judge: {judge['judged']} judgements of texts the screen passed: passed {judge['passed']},"
        f" rejected {judge['overruled']} (the screen and the judge disagreed: the judge won),"
        f" no verdict {judge['unavailable']}"
    ]
    tools = ", ".join(f"{tool} {count}" for tool, count in judge["retained_by_tool"].items())
    lines.append(
        f"verified (retained on a real judge's pass) {judge['retained_verified']} of {retained} retained"
        + (f"; judged by {tools}" if tools else "")
    )
    if judge.get("retained_outdated_judge"):
        lines.append(
            f"{judge['retained_outdated_judge']} retained were passed by a kernel judge that is not today's (another"
            " pinned revision or an older version of repro's checks): `repro run --resume` judges them again"
        )
    if retained and judge["retained_verified"] < retained:
        lines.append("NOT VERIFIED: retained rows that no real kernel judge passed verify nothing")
    return lines


def not_verified_because(config: RunConfig | None, store: RunReader, judge: dict[str, Any]) -> list[str]:
    """Why a run's figures are no real result, in a reader's words; empty when nothing says so. The one
    list ``repro status`` (text and ``--json``) and the HTML report's banner show.

    From the run's config (a demonstration, scripted models, the fake Lean backend) and from what the
    retained candidates record (the Lean backend and the kernel judge that passed them).
    """
    reasons = []
    if config is not None and config.demonstration:
        reasons.append("the run's config is a demonstration config")
    scripted = sorted(
        stage
        for stage, settings in (config.models.items() if config is not None else [])
        if settings.backend in (ModelBackendName.scripted, ModelBackendName.replay)
    )
    if scripted:
        reasons.append("scripted (not model) outputs at stages: " + ", ".join(scripted))
    fake = sorted({str(backend) for backend, real, _ in store.retained_lean() if not real})
    if not fake and config is not None and config.lean.backend == LeanBackendName.fake:
        fake = ["fake (configured)"]
    if fake:
        reasons.append("Lean verdicts from a backend that is not real Lean: " + ", ".join(fake))
    stand_ins = sorted(tool.removesuffix(" (stand-in)") for tool in judge["retained_by_tool"] if "(stand-in)" in tool)
    if stand_ins:
        reasons.append("kernel-judge verdicts from a stand-in, not Lean's kernel: " + ", ".join(stand_ins))
    return reasons


def model_accounting(store: RunReader) -> dict[str, dict[str, Any]]:
    table: dict[str, dict[str, Any]] = {}
    for row in store.model_totals():
        table[f"{row['stage']} | {row['model_id']}"] = {
            "calls": row["calls"],
            "cache_hits": row["cache_hits"],
            "failed": row["failed"],
            "retries": row["retries"],
            "tokens_in": row["tokens_in"],
            "tokens_out": row["tokens_out"],
            "latency_s": round(row["latency_s"], 3),
        }
    return table


def cost_per_retained(store: RunReader) -> dict[str, float | None]:
    retained = sum(store.retained_proof_positions().values())
    totals = store.model_totals()
    calls = sum(row["calls"] for row in totals)
    tokens = sum(row["tokens_in"] + row["tokens_out"] for row in totals)
    lean_seconds = store.total("lean_seconds")
    return {
        "model_calls": _rate(calls, retained),
        "tokens": _rate(tokens, retained),
        "lean_seconds": _rate(int(lean_seconds * 1000), retained * 1000) if retained else None,
    }


def answer_metrics(store: RunReader, finished: int) -> dict[str, Any]:
    """Per answer form, the retained instances and the generation rate; verified statements with no answer,
    and why (issue 29): ``no_answer`` by reason (:class:`repro.records.NoAnswerReason`), ``not_final`` by
    class, ``unfinished`` where Lean gave no verdict."""
    answered: Counter[str] = Counter()
    no_answer: Counter[str] = Counter()
    not_final: Counter[str] = Counter()
    reached = unfinished = 0
    for status, form, reason, gap, answer_class, count in store.answer_outcomes():
        reached += count
        if status == "retained":
            answered[form or "unrecorded"] += count
        elif reason == "answer_not_grounded":
            no_answer[gap or "unrecorded"] += count
        elif reason == "answer_not_final":
            not_final[gap if gap == "unevaluated" else answer_class or "unknown"] += count
        else:
            unfinished += count
    return {
        "reached": reached,
        "answered": dict(sorted(answered.items())),
        "generation_rate": {form: _rate(count, finished) for form, count in sorted(answered.items())},
        "answer_rate": _rate(sum(answered.values()), reached),
        "no_answer": dict(no_answer.most_common()),
        "not_final": dict(not_final.most_common()),
        "unfinished": unfinished,
    }


def answer_lines(answers: dict[str, Any]) -> list[str]:
    """Plain lines for ``repro status`` and the report: answers per form, and why statements gave none."""
    if not answers or not answers.get("reached"):
        return []
    answered = answers.get("answered", {})
    rates = answers.get("generation_rate", {})
    lines = [
        f"answers: {sum(answered.values())} of {answers['reached']} verified statements gave a final answer"
        f" (rate {answers.get('answer_rate')})",
        "  by form: "
        + (
            ", ".join(f"{form} {count} (generation rate {rates.get(form)})" for form, count in answered.items())
            or "none"
        ),
    ]
    if answers.get("no_answer"):
        lines.append("  no answer: " + ", ".join(f"{reason} {count}" for reason, count in answers["no_answer"].items()))
    if answers.get("not_final"):
        lines.append("  not final: " + ", ".join(f"{kind} {count}" for kind, count in answers["not_final"].items()))
    if answers.get("unfinished"):
        lines.append(f"  Lean gave no verdict: {answers['unfinished']} (unfinished, resumable)")
    return lines


def run_metrics(
    store: RunReader, k: int, strategy: str = "parallel", *, config: RunConfig | None = None
) -> dict[str, Any]:
    rates = generation_rates(store, k, strategy)
    judge = judge_figures(store)
    return {
        # first, so a pasted figure cannot travel without it: why these are not real results
        "not_verified": not_verified_because(config, store, judge),
        "funnel": funnel(store),
        "rates": rates,
        "answers": answer_metrics(store, rates["finished"]),
        "statement_checks": statement_checks(store),
        "judge": judge,
        "models": model_accounting(store),
        "cost_per_retained": cost_per_retained(store),
        "stage_order": [stage.value for stage in Stage],
    }
