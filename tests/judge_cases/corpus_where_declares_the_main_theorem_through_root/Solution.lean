import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

theorem helper : True := trivial
where
  _root_.robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by omega
