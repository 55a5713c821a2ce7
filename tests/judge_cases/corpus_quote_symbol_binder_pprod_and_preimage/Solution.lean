import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by
  have hb : (n : ℕ) ×' n = x := ⟨x, rfl⟩
  have hi : (fun n : ℕ => n)⁻¹' {3600} = {3600} := rfl
  subst h₀
  norm_num
