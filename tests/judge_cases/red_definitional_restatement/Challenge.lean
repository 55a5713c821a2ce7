import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

theorem at_least (x : ℕ) (h : x = 5) : x ≥ 3 := by sorry
