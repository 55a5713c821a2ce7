import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

def slow (n : ℕ) : ℕ := (List.range (10 ^ n)).length
theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by
  have : eval%(slow 12) = 10 ^ 12 := rfl
  subst h₀; norm_num
