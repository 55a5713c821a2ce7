import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

open CategoryTheory.Limits in
lemma kernel_free : True := trivial

theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by
  have _h := (fun kernel : ℕ => kernel + 0) 0
  subst h₀
  norm_num
