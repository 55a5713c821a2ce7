import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

lemma div_helper : (3600 : ℕ) / 12 = 300 := by norm_num

theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by
  subst h₀
  exact div_helper
