"""The study report: coverage, pass@j with intervals, overlap, failure taxonomy and cost, from the store alone."""

from __future__ import annotations

from collections import Counter, defaultdict
from itertools import combinations
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from repro.records import ReasonCode
from repro.study.estimators import (
    best_budget_split,
    bootstrap_interval,
    estimator_name,
    statement_pass_at,
)
from repro.study.records import SampleOutcome, StudyStatement
from repro.study.store import StudyStore


class Estimate(BaseModel):
    value: float
    low: float
    high: float


class GroupFigures(BaseModel):
    statements: int
    covered: int
    coverage: float
    pass_at: dict[str, float]  # same estimator as the prover's overall pass@j, over this group's statements


class CostFigures(BaseModel):
    """Totals, and per verified (covered) statement; per-statement figures are None when none was covered."""

    samples: int
    tokens_in: int
    tokens_out: int
    model_seconds: float
    lean_seconds: float
    samples_per_verified: float | None
    tokens_in_per_verified: float | None
    tokens_out_per_verified: float | None
    model_seconds_per_verified: float | None
    lean_seconds_per_verified: float | None


class SalvageFigures(BaseModel):
    """Coverage when a salvaged sample counts too (a statement covered by a raw or a salvaged sample)."""

    salvaged_samples: int  # failed samples whose repaired text the screen and then the judge passed
    covered: int
    coverage: float
    by_level: dict[str, float] = Field(default_factory=dict)
    by_type: dict[str, float] = Field(default_factory=dict)
    checks: int  # Lean checks salvage made (no model call)
    lean_seconds: float
    kinds: dict[str, int] = Field(default_factory=dict)  # repair kinds of the verified variants


class ProverFigures(BaseModel):
    name: str
    model: str
    statements: int
    incomplete_pairs: int
    samples: int
    verified_samples: int  # samples the screen passed and the kernel judge passed: what coverage counts
    unjudged_samples: int
    # samples the screen passed, and of them those the judge rejected (the screen and the judge disagreed:
    # the judge won)
    screened_samples: int = 0
    judge_rejected_samples: int = 0
    covered: int
    coverage: float
    pass_at: dict[str, Estimate]
    by_level: dict[str, GroupFigures] = Field(default_factory=dict)
    by_type: dict[str, GroupFigures] = Field(default_factory=dict)
    failed_samples: int
    # statements that do not elaborate under this prover's toolchain: not asked, not among its failures
    incompatible_statements: int = 0
    taxonomy: dict[str, float] = Field(default_factory=dict)
    reasons: dict[str, float] = Field(default_factory=dict)
    lean_error_classes: dict[str, float] = Field(default_factory=dict)
    cost: CostFigures
    verified_by_real_lean: bool
    # every success was passed by a real kernel judge (False when a stand-in judged any, or none was covered)
    verified_by_real_judge: bool = False
    salvage: SalvageFigures | None = None


class PairSplit(BaseModel):
    first: str
    second: str
    budget: int
    curve: list[float]  # expected coverage with j samples from the first prover, budget - j from the second
    best_j: int
    best_coverage: float


class OverlapFigures(BaseModel):
    only: dict[str, int]
    all: int
    none: int
    union: int
    union_coverage: float
    splits: list[PairSplit]


class StudyReport(BaseModel):
    study_dir: str
    statements: int
    k: int
    strategy: str
    estimator: str
    lean_backend: str
    # always 0: studies run no Lean-feedback rounds (see StudySettings.feedback_rounds)
    feedback_rounds: int = 0
    provers: list[ProverFigures]
    overlap: OverlapFigures
    # statements the run's own Lean checks found vacuous or refuted, in all and per level and type
    statement_checks: dict[str, Any] = Field(default_factory=dict)


def _round(value: float) -> float:
    return round(value, 6)


def _per(total: float, covered: int) -> float | None:
    return _round(total / covered) if covered else None


def _groups(
    statements: list[StudyStatement], covered: set[str], per_statement: dict[str, list[float]], key: str
) -> dict[str, GroupFigures]:
    members: dict[str, list[str]] = defaultdict(list)
    for statement in statements:
        value = getattr(statement, key)
        if value:
            members[str(value)].append(statement.id)
    figures = {}
    for group, ids in sorted(members.items()):
        hits = sum(1 for i in ids if i in covered)
        columns = zip(*(per_statement[i] for i in ids), strict=True)
        figures[group] = GroupFigures(
            statements=len(ids),
            covered=hits,
            coverage=_round(hits / len(ids)),
            pass_at={f"pass@{j}": _round(sum(column) / len(ids)) for j, column in enumerate(columns, start=1)},
        )
    return figures


def _shares(counter: Counter[str], total: int) -> dict[str, float]:
    return {name: _round(count / total) for name, count in counter.most_common()} if total else {}


def build_report(
    statements: list[StudyStatement],
    samples: list[SampleOutcome],
    provers: list[tuple[str, str]],
    *,
    k: int,
    strategy: str,
    study_dir: str = "",
    lean_backend: str = "",
    bootstrap_seed: int = 0,
    feedback_rounds: int = 0,
) -> StudyReport:
    """Every figure of the report from the stored samples. ``provers`` is [(name, model id)]."""
    by_pair: dict[tuple[str, str], list[SampleOutcome]] = defaultdict(list)
    for sample in samples:
        by_pair[(sample.prover, sample.statement_id)].append(sample)
    sequential = strategy == "sequential"
    figures: list[ProverFigures] = []
    covered_sets: dict[str, set[str]] = {}
    counts: dict[str, list[tuple[int, int]]] = {}
    for name, model in provers:
        per_statement: dict[int, list[float]] = {j: [] for j in range(1, k + 1)}
        covered: set[str] = set()
        pair_counts: list[tuple[int, int]] = []
        by_statement: dict[str, list[float]] = {}
        incomplete = 0
        own = [s for s in samples if s.prover == name]
        for statement in statements:
            drawn = sorted(by_pair.get((name, statement.id), []), key=lambda s: s.sample_index)
            verified = [s for s in drawn if s.verified]
            n, c = len(drawn), len(verified)
            pair_counts.append((n, c))
            if c:
                covered.add(statement.id)
            if not (n >= k or (sequential and c > 0)) or any(not s.judged for s in drawn):
                incomplete += 1  # samples not drawn yet, or a verdict missing (Lean or the judge gave none)
            first = min((s.sample_index for s in verified), default=None)
            for j in range(1, k + 1):  # the one definition of pass@j (repro.pass_at), as status and report use
                per_statement[j].append(statement_pass_at(n, c, j, sequential=sequential, first_success=first))
            by_statement[statement.id] = [per_statement[j][-1] for j in range(1, k + 1)]
        pass_figures = {}
        for j, values in per_statement.items():
            low, high = bootstrap_interval(values, seed=bootstrap_seed + j)
            mean = sum(values) / len(values) if values else 0.0
            pass_figures[f"pass@{j}"] = Estimate(value=_round(mean), low=_round(low), high=_round(high))
        apart = ReasonCode.statement_incompatible_toolchain.value
        incompatible = [s for s in own if apart in s.reasons]
        failed = [s for s in own if s.judged and not s.verified and apart not in s.reasons]
        taxonomy: Counter[str] = Counter(fact for s in failed for fact in s.taxonomy)
        reasons: Counter[str] = Counter(reason for s in failed for reason in s.reasons)
        lean_classes: Counter[str] = Counter(label for s in failed for label in s.lean_error_classes)
        cost_totals = {
            "tokens_in": sum(s.tokens_in for s in own),
            "tokens_out": sum(s.tokens_out for s in own),
            "model_seconds": round(sum(s.model_seconds for s in own), 4),
            "lean_seconds": round(sum(s.lean_seconds for s in own), 4),
        }
        figures.append(
            ProverFigures(
                name=name,
                model=model,
                statements=len(statements),
                incomplete_pairs=incomplete,
                samples=len(own),
                verified_samples=sum(1 for s in own if s.verified),
                unjudged_samples=sum(1 for s in own if not s.judged),
                screened_samples=sum(1 for s in own if s.screened),
                judge_rejected_samples=sum(1 for s in own if s.judge_status == "rejected"),
                covered=len(covered),
                coverage=_round(len(covered) / len(statements)) if statements else 0.0,
                pass_at=pass_figures,
                by_level=_groups(statements, covered, by_statement, "level"),
                by_type=_groups(statements, covered, by_statement, "type"),
                failed_samples=len(failed),
                incompatible_statements=len({s.statement_id for s in incompatible}),
                taxonomy=_shares(taxonomy, len(failed)),
                reasons=_shares(reasons, len(failed)),
                lean_error_classes=_shares(lean_classes, len(failed)),
                cost=CostFigures(
                    samples=len(own),
                    samples_per_verified=_per(len(own), len(covered)),
                    tokens_in_per_verified=_per(cost_totals["tokens_in"], len(covered)),
                    tokens_out_per_verified=_per(cost_totals["tokens_out"], len(covered)),
                    model_seconds_per_verified=_per(cost_totals["model_seconds"], len(covered)),
                    lean_seconds_per_verified=_per(cost_totals["lean_seconds"], len(covered)),
                    **cost_totals,
                ),
                verified_by_real_lean=any(s.verified for s in own) and all(s.real_lean for s in own if s.verified),
                verified_by_real_judge=any(s.verified for s in own) and all(s.judge_real for s in own if s.verified),
            )
        )
        figures[-1].salvage = _salvage_figures(statements, own, covered)
        covered_sets[name] = covered
        counts[name] = pair_counts
    return StudyReport(
        study_dir=study_dir,
        statements=len(statements),
        k=k,
        strategy=strategy,
        estimator=estimator_name(sequential),
        lean_backend=lean_backend,
        feedback_rounds=feedback_rounds,
        provers=figures,
        overlap=_overlap(statements, covered_sets, counts, k, sequential),
        statement_checks=_statement_checks(statements),
    )


def _salvage_figures(
    statements: list[StudyStatement], own: list[SampleOutcome], covered: set[str]
) -> SalvageFigures | None:
    if not any(sample.salvage_checks for sample in own):
        return None
    salvaged = [sample for sample in own if sample.salvage_verified]
    with_salvage = covered | {sample.statement_id for sample in salvaged}

    def shares(key: str) -> dict[str, float]:
        members: dict[str, list[str]] = defaultdict(list)
        for statement in statements:
            if getattr(statement, key):
                members[str(getattr(statement, key))].append(statement.id)
        return {
            group: _round(sum(1 for i in ids if i in with_salvage) / len(ids)) for group, ids in sorted(members.items())
        }

    return SalvageFigures(
        salvaged_samples=len(salvaged),
        covered=len(with_salvage),
        coverage=_round(len(with_salvage) / len(statements)) if statements else 0.0,
        by_level=shares("level"),
        by_type=shares("type"),
        checks=sum(sample.salvage_checks for sample in own),
        lean_seconds=round(sum(sample.salvage_lean_seconds for sample in own), 4),
        kinds=dict(Counter("+".join(sample.salvage_kinds) for sample in salvaged).most_common()),
    )


def _statement_checks(statements: list[StudyStatement]) -> dict[str, Any]:
    """Vacuous and refuted statements of the set, in all and per level and type."""
    table: dict[str, Any] = {"vacuous": 0, "refuted": 0, "by_level": {}, "by_type": {}}
    for statement in statements:
        found = statement.statement_check
        if found not in ("vacuous", "refuted"):
            continue
        table[found] += 1
        for key, group in (("by_level", statement.level), ("by_type", statement.type)):
            if group:
                counts = table[key].setdefault(group, {"vacuous": 0, "refuted": 0})
                counts[found] += 1
    return table


def _overlap(
    statements: list[StudyStatement],
    covered: dict[str, set[str]],
    counts: dict[str, list[tuple[int, int]]],
    k: int,
    sequential: bool,
) -> OverlapFigures:
    ids = [s.id for s in statements]
    names = list(covered)
    union = set().union(*covered.values()) if covered else set()
    everyone = set(ids).intersection(*covered.values()) if covered else set()
    only = {name: len(covered[name] - set().union(*(covered[o] for o in names if o != name))) for name in names}
    splits = []
    if not sequential:  # a budget split needs unbiased per-sample rates, which early stopping does not give
        for first, second in combinations(names, 2):
            curve = [_round(value) for value in best_budget_split(counts[first], counts[second], k)]
            best_j = max(range(len(curve)), key=lambda j: (curve[j], -abs(j - k / 2)))
            splits.append(
                PairSplit(first=first, second=second, budget=k, curve=curve, best_j=best_j, best_coverage=curve[best_j])
            )
    return OverlapFigures(
        only=only,
        all=len(everyone),
        none=len(ids) - len(union),
        union=len(union),
        union_coverage=_round(len(union) / len(ids)) if ids else 0.0,
        splits=splits,
    )


def study_report(study_dir: str | Path, *, bootstrap_seed: int = 0) -> StudyReport:
    """``repro study-report DIR``."""
    with StudyStore(study_dir, create=False) as store:
        settings = store.settings()
        return build_report(
            store.statements(),
            store.samples(),
            [(p.name, p.settings.model) for p in store.provers()],
            k=settings.k,
            strategy=settings.strategy,
            study_dir=str(study_dir),
            lean_backend=settings.lean.backend.value,
            bootstrap_seed=bootstrap_seed,
            feedback_rounds=settings.feedback_rounds,
        )
