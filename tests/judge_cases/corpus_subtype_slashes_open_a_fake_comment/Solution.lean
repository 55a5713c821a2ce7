import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

def S := {x : ℤ //-x = x}

axiom amc_demo (x : ℕ) (h : 2 * x + 1 = 7) : x = 4

-- -/ theorem amc_demo (x : ℕ) (h : 2 * x + 1 = 7) : x = 4 := by omega
