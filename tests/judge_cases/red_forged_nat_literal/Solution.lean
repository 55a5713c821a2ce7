import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

open Lean Elab Command in
#eval show CommandElabM Unit from do
  let forged : Nat := unsafeCast (Int.neg ((2 : Int) ^ 100))
  let bad := mkRawNatLit forged
  let zero := mkRawNatLit 0
  let refl (b : Name) := mkApp2 (mkConst ``Eq.refl [levelOne]) (mkConst ``Bool) (mkConst b)
  let le := mkApp3 (mkConst ``Nat.le_of_ble_eq_true) bad zero (refl ``Bool.true)
  let ne := mkApp3 (mkConst ``Nat.ne_of_beq_eq_false) bad zero (refl ``Bool.false)
  let proof := mkApp ne (mkApp2 (mkConst ``Nat.eq_zero_of_le_zero) bad le)
  liftCoreM <| addDecl <| .thmDecl
    { name := `reproForged, levelParams := [], type := mkConst ``False, value := proof }

theorem robe_total (x : ℕ) (h₀ : x = 3600) : x / 12 = 300 :=
  reproForged.elim
