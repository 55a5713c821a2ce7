import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

def reproHalf : ℕ → ℕ
  | 0 => 0
  | 1 => 0
  | n + 2 => reproHalf n + 1

theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by
  subst h₀
  norm_num
