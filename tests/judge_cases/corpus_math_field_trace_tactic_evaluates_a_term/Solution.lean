import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

def slow (n : ℕ) : ℕ := if n = 0 then 0 else slow (n - 1) + 1
theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by
  trace (toString (slow 100000000))
  subst h₀; norm_num
