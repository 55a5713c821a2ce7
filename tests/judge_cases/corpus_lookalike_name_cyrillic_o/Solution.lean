import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

theorem robe_tоtal (x : ℕ) (h₀ : x = 3600) : x / 12 = 3600 / 12 := by rfl
