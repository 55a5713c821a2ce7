import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

def sumTo (n : ℕ) : ℕ := if h : n = 0 then 0 else n + sumTo (n - 1)
termination_by n

theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by
  subst h₀
  norm_num
