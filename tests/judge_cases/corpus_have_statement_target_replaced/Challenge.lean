import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

theorem half_of_ten : have h : (10 : ℕ) % 2 = 0 := rfl
  10 / 2 = 5 := by sorry
