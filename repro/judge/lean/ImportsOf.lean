/-
The imports recorded in compiled Lean modules, one `<file>\t<module>\t<runtimeOnly>` line each; run by repro's kernel judge
(`repro/judge/kernel.py`) as `lake env lean --run ImportsOf.lean Target.olean Submission.olean` before
SafeVerify reads the two files.

Why: SafeVerify (at the commits repro pins) imports whatever modules the submission's `.olean` lists
(`Main.lean`, `replayFile`: `importModules mod.imports`) and compares constants by name, so a file that
lists no imports could define its own `Nat`; a compile that ran prover code may have written that file.
SafeVerify later refused such files itself ("require submission imports to be superset of target
imports", bea2fbd). `readModuleData` and `ModuleData.imports` are used exactly as SafeVerify's
`Main.lean` uses them (lines 74 and 78 at 577e953).

The whole `Import` record is printed (`module` and `runtimeOnly`, its only fields at v4.9.0 and v4.15.0,
`src/Lean/Environment.lean`): `importModules` skips every import marked `runtimeOnly`, so a module that
lists our header's modules with that flag set imports nothing and could define its own `Nat` under a
matching module list (red team round 3). Comparing module names alone, as SafeVerify's bea2fbd does, misses it.
-/
import Lean

open Lean

def main (args : List String) : IO UInt32 := do
  for path in args do
    let (mod, _) ← readModuleData (System.FilePath.mk path)
    for entry in mod.imports do
      IO.println s!"{path}\t{entry.module}\t{entry.runtimeOnly}"
  IO.println "repro-imports-done"
  return 0
