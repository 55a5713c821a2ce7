import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by sorry
