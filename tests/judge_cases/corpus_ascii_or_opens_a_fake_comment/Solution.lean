import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

theorem helper : True \/-1 = (-1 : ℤ) := Or.inl trivial

axiom amc_demo (x : ℕ) (h : 2 * x + 1 = 7) : x = 4

-- -/ theorem amc_demo (x : ℕ) (h : 2 * x + 1 = 7) : x = 4 := by omega
