import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by
  have h₁ : Nat.add 1 1 = 2 := by exact (Nat.add_comm 1 1).trans rfl
  subst h₀
  norm_num
