import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

theorem amc_demo (x : ℕ) (h : 2 * x + 1 = 7) : x = 3 := by
have h2 : x = 3 ∨ x ≠ 3 := by
  by_cases hx : x = 3
  · left; exact hx
  · right; exact hx
rcases h2 with h3 | h3
· exact h3
· exfalso
  omega
