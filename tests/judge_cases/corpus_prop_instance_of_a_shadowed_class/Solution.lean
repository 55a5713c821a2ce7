import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

def Nat.Fact (p : Prop) : Type := Decidable p
instance : Fact (3600 / 12 = 300) := isTrue (by norm_num)
theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by
  subst h₀; norm_num
