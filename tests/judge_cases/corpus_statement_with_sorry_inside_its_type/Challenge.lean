import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

theorem vacuous (x : ℕ) (h : (sorry : Prop)) : x = 300 := by sorry
