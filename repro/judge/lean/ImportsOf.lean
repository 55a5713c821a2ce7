/-
The imports recorded in compiled Lean modules, one `<file>\t<module>` line each; run by repro's kernel judge
(`repro/judge/kernel.py`) as `lake env lean --run ImportsOf.lean Target.olean Submission.olean` before
SafeVerify reads the two files.

Why: SafeVerify (at the commits repro pins) imports whatever modules the submission's `.olean` lists
(`Main.lean`, `replayFile`: `importModules mod.imports`) and compares constants by name, so a file that
lists no imports could define its own `Nat`; a compile that ran prover code may have written that file.
SafeVerify later refused such files itself ("require submission imports to be superset of target
imports", bea2fbd). `readModuleData` and `ModuleData.imports` are used exactly as SafeVerify's
`Main.lean` uses them (lines 74 and 78 at 577e953).
-/
import Lean

open Lean

def main (args : List String) : IO UInt32 := do
  for path in args do
    let (mod, _) ← readModuleData (System.FilePath.mk path)
    for entry in mod.imports do
      IO.println s!"{path}\t{entry.module}"
  IO.println "repro-imports-done"
  return 0
