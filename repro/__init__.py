"""repro: contamination-resistant math benchmarks backed by Lean-checked proofs, and guarded repair."""

__version__ = "0.1.0"
