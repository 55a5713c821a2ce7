import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by
    have h₁ : (3 : ℕ) ∈ {y : ℕ | y ∈ {3}}
      := by simp
    subst h₀
    have h₂ : (2 : ℕ) ∈ {y : ℕ | y ∈ {2}}
  reassoc_axiom robe_total
