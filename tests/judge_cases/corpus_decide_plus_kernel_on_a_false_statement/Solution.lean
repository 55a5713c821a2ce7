import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

theorem pow_ne : Nat.pow 0 1 ≠ 0 := by
  decide +kernel
theorem amc_demo (x : ℕ) (h : 2 * x + 1 = 7) : x = 4 :=
  absurd h (by decide +kernel)
