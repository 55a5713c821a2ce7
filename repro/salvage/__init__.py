"""Salvage of near-miss prover outputs: repaired texts, each judged by the soundness gate on its own."""

from repro.salvage.policy import NOT_SALVAGED, worth_salvaging
from repro.salvage.variants import DEFAULT_MAX_VARIANTS, SalvageKind, SalvageVariant, salvage_variants

__all__ = [
    "DEFAULT_MAX_VARIANTS",
    "NOT_SALVAGED",
    "SalvageKind",
    "SalvageVariant",
    "salvage_variants",
    "worth_salvaging",
]
