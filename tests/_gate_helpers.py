"""The honest proof every static-layer test starts from, and the one way they read the gate's refusals.

Shared by the per-rule cases (test_gate_rules), the mutation pins (test_gate_pins) and the syntax-table
tests, so a change to how a refusal is reported (an unterminated comment, the forbidden list) is made once.
"""

from __future__ import annotations

from repro.judge.policy import scan

HEADER = "import Mathlib\nimport Aesop\nset_option maxHeartbeats 400000\nopen BigOperators Real Nat Topology Rat\n"
MAIN = "robe_total"
THEOREM = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\n  subst h₀\n  norm_num\n"
# the same proof with its tactic block laid out at column 0 (issue 19 §3)
COLUMN_ZERO_BLOCK = "theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by\nsubst h₀\nnorm_num\n"


def refusals(code: str, header: str = HEADER, *, main_name: str = MAIN) -> list[str]:
    """Every refusal of the static layer for ``code``: the unterminated token first, then the forbidden forms."""
    result = scan(code, header=header, main_name=main_name)
    return ([result.unterminated] if result.unterminated else []) + result.forbidden
