import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

theorem cheat_simp : (3600 : ℕ) / 12 = 300 := by norm_num
attribute [local simp] cheat_simp in
theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by
  subst h₀; simp
