import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

theorem trace_two (A : Matrix (Fin 2) (Fin 2) ℕ) (h : A = 1) : Matrix.trace A = 2 := by sorry
