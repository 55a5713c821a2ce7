import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

theorem robe_total (y : ℕ) (hy : y = 3600) : y / 12 = 300 := by
  subst hy
  norm_num
