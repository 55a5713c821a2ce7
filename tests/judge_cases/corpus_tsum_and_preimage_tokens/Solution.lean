import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

lemma tsum_helper : (∑' _n : ℕ, (0 : ℝ)) = 0 ∧ (∏' _n : ℕ, (1 : ℝ)) = 1 := ⟨tsum_zero, tprod_one⟩
lemma pre_helper (s : Set ℕ) : id ⁻¹' s = s ∧ id '' s = s := ⟨Set.preimage_id, Set.image_id s⟩

theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by
  subst h₀
  norm_num
