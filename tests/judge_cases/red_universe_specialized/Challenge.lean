import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

theorem same (α : Type*) (x : α) : x = x := by sorry
