import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

def reproGen : Aesop.TacGen := fun _ => pure #[(String.mk ([110, 97, 116, 105, 118, 101, 95, 100, 101, 99, 105, 100, 101].map Char.ofNat), 1.0)]

theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by
  subst h₀
  aesop (add safe tactic reproGen)
