"""B.18's ablations, re-decided offline on saved candidates: one row per variant and dataset.

A dataset without saved candidates (GSM8K here) is re-decided on the harm stress candidates built
for its correct traces (``stress.supported_wrong_candidates``), so its rows measure what each guard
prevents: broken answers, not fixes.
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import BaseModel

from repro.repair.answers import answers_equivalent, extract_answer
from repro.repair.runner import RepairSettings, TraceRecord, run_repair
from repro.repair.stress import supported_wrong_candidates


class AblationDataset(BaseModel):
    name: str
    traces: list[TraceRecord]
    candidates: dict[str, list[str]] | None = None


class AblationRow(BaseModel):
    dataset: str
    candidates: str
    variant: str
    mode: str
    initial_correct: int
    total: int
    triggered: int
    accepted: int
    fixed: int
    broken: int
    final_correct: int


def _variants(base: RepairSettings) -> list[tuple[str, RepairSettings]]:
    def varied(change: Callable[[RepairSettings], None]) -> RepairSettings:
        settings = base.model_copy(deep=True)
        change(settings)
        return settings

    return [
        ("main", varied(lambda s: None)),
        ("trigger: content meta score", varied(lambda s: setattr(s.trigger, "meta_score", "content"))),
        ("trigger: no semantic high-risk", varied(lambda s: setattr(s.trigger, "semantic_high_risk", False))),
        ("trigger: every example", varied(lambda s: setattr(s.trigger, "low_meta_score", 2.0))),
        ("graph guard off", varied(lambda s: setattr(s.guards, "graph_guard", False))),
        ("equation support off", varied(lambda s: setattr(s.guards, "equation_support", False))),
        ("relaxed path off", varied(lambda s: setattr(s.guards, "relaxed_support", False))),
        ("dropped-operand guard off", varied(lambda s: setattr(s.guards, "dropped_operand_guard", False))),
        ("relaxed missing_constraint on", varied(lambda s: setattr(s.guards, "relaxed_missing_constraint", True))),
        ("N=1", varied(lambda s: setattr(s, "candidates", 1))),
        ("N=2", varied(lambda s: setattr(s, "candidates", 2))),
        ("N=3", varied(lambda s: setattr(s, "candidates", 3))),
    ]


def stress_candidates(traces: list[TraceRecord]) -> dict[str, list[str]]:
    """Supported-but-wrong candidates for every initially correct trace."""
    built = {}
    for trace in traces:
        if answers_equivalent(extract_answer(trace.initial_reasoning, trace.problem), trace.gold_answer):
            candidates = supported_wrong_candidates(trace.problem, trace.initial_reasoning)
            if candidates:
                built[trace.id] = candidates
    return built


async def run_ablations(datasets: list[AblationDataset], base: RepairSettings) -> list[AblationRow]:
    rows = []
    for dataset in datasets:
        saved = dataset.candidates is not None
        candidates = dataset.candidates if saved else stress_candidates(dataset.traces)
        for variant, settings in _variants(base):
            _, report = await run_repair(dataset.traces, settings, offline_candidates=candidates)
            rows.append(
                AblationRow(
                    dataset=dataset.name,
                    candidates="saved" if saved else "stress",
                    variant=variant,
                    mode=report["settings"]["resolved_mode"],
                    initial_correct=report["initial_correct"],
                    total=report["total"],
                    triggered=report["triggered"],
                    accepted=report["accepted_repairs"],
                    fixed=report["fixed"],
                    broken=report["broken"],
                    final_correct=report["final_correct"],
                )
            )
    return rows
