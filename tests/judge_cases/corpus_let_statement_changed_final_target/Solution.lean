import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

theorem price_total (price : ℕ) (h : price = 12) : let count : ℕ := 5
  price * count = price * count := by
  intro count
  rfl
