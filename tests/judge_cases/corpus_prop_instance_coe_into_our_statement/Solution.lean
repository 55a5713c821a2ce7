import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

instance robe_coe : CoeT True trivial (∀ x : ℕ, x = 3600 → x / 12 = 300) := ⟨by intro x h; subst h; norm_num⟩
theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by
  subst h₀; norm_num
