import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

def spin : ℕ → ℕ
  | 0 => 0
  | n + 1 => spin n
theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by
  try have h := include_str ⟨toString (spin 1000000000)⟩
  subst h₀
  norm_num
