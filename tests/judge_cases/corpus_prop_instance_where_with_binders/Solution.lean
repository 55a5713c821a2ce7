import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

private instance twelve_ne_zero {n : ℕ} [Fact (n = 12)] : NeZero n where
  out := by simp [(Fact.out : n = 12)]

theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by
  subst h₀; norm_num
