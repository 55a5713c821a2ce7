import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

@[simp] theorem one_eq : (1 : ℕ) = 1 := rfl
attribute [instance] one_eq
theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by
  subst h₀; norm_num
