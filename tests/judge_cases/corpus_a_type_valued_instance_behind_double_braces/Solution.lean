import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

instance : Fact ({y : ℕ | y ∈ {3}} = {3}) → OfNat ℕ 4 := fun _ => ⟨5⟩
theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by
  subst h₀
  norm_num
