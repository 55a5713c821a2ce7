import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

def gen : ℕ → ℕ := fun n => n
theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by
  subst h₀
  first | my_aesop_frontend (add safe tactic gen) | norm_num
