import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

noncomputable section
noncomputable instance : Fact (1 < 2) := ⟨by norm_num⟩

theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by
  subst h₀
  norm_num
end
