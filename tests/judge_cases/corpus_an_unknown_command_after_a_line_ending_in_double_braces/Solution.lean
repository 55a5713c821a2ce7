import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

def s : Set ℕ := {y : ℕ | y = 2 ∨ y ∈ {3}}
reassoc_axiom robe_total
theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by
  subst h₀
  norm_num
