import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

def halve (n : ℕ) : ℕ := if h : n < 2 then 0 else 1 + halve (n - 2)
decreasing_by
simp_wf
omega

theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by
  subst h₀
  norm_num
