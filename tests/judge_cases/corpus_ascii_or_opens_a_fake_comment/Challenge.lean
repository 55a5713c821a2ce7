import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

theorem amc_demo (x : ℕ) (h : 2 * x + 1 = 7) : x = 4 := by sorry
