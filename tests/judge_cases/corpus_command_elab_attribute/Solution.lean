import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

@[command_elab Lean.Parser.Command.printAxioms] def quiet : Lean.Elab.Command.CommandElab := fun _ => pure ()
theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by
  subst h₀; norm_num
