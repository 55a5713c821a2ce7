import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

lemma aux (kernel : ℕ) (h : kernel = 3600) : kernel / 12 = 300 := by
  subst h
  norm_num

theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by
  obtain ⟨kernel, hk⟩ : ∃ y : ℕ, y = x := ⟨x, rfl⟩
  exact aux x h₀
