/-
repro's own check of a compiled submission, run by the kernel judge (`repro/judge/kernel.py`) as
`lake env lean --run Rebuild.lean Target.olean Submission.olean` beside `ImportsOf.lean`, sandboxed, on
read-only copies of both compiled modules, for each pinned toolchain (v4.9.0 and v4.15.0). It prints
`repro-rebuild-passed` (exit 0), or one line `repro-rebuild-refused<TAB>KIND<TAB>WHY` (exit 2); anything
else is no answer.

Why (read, not assumed):

* At the commits repro pins, SafeVerify's `Main.lean` (`replayFile`) checks `dv.safety != .safe` only on
  the constants of the environment *after* `env.replay`, and Lean's `Environment.replay`
  (`src/Lean/Replay.lean`: "We skip unsafe constants, and also partial constants") never adds them, so
  its refusal "unsafe/partial function ... detected" cannot fire. Upstream moved the check before the
  replay (d2df831, 2026-01-04) and later exempted the `_unsafe_rec` shims (241dfb0), both after the pins.
* Prover code that runs while the submission is elaborated can build `Expr`, `Level` or `Nat` objects
  with `unsafeCast` whose cached data lies (a negative big number as a `Nat` literal, a level parameter
  the cached flags do not admit); the kernel trusts that data, so it accepts the declaration at
  elaboration and again when SafeVerify replays the objects read from the `.olean`. SafeVerify answered
  in March 2026 (bea2fbd, 73196d3, f06ecb5, 29ef514, 5cafc55) by rebuilding expressions and levels
  node by node before the kernel sees them; none of that is in the pinned commits.

What this check does, written for repro from those descriptions (no code taken from them):

1. Every constant of the submission's module is rebuilt from scratch: each `Name`, `Level` and `Expr`
   node made again with its constructor (so every cached hash and flag is computed afresh), each `Nat`
   made again from the digits it prints as (a number object that is not the numeral it prints as is
   refused), each `String` from its characters, `mdata` dropped (the kernel ignores it). The rebuild keeps
   the sharing of the original (one rebuilt node per original node), so its size is the module's.
2. Unsafe and partial constants are refused, but for what the code generator of these toolchains writes
   for honest code: the stage caches `X._cstage1`/`X._cstage2` (unsafe definitions, `register_stage1_decl`
   and `register_stage2_decl` in `src/library/compiler/util.cpp`) and the `_unsafe_rec` shim of a
   recursive definition (`addAndCompilePartialRec`, `DefinitionSafety.partial`). A `partial def` (an
   opaque constant with such a shim, `addAndCompilePartial`) is refused.
3. The rebuilt constants are replayed into the environment of the module's imports with
   `Environment.replay` (every declaration sent to the kernel through `addDecl`), and every theorem of
   our target must be there, a theorem of the same type and universe parameters (as rebuilt from the
   target's own module), depending only on `propext`, `Quot.sound` and `Classical.choice`.

So a proof passes only if the kernel accepted it as Lean would have written it from its text, whatever
objects prover code put in the file.
-/
import Lean
import Lean.Replay

open Lean

namespace ReproRebuild

structure Refusal where
  kind : String
  message : String
  deriving Inhabited

/-- One rebuilt node per original node (keyed by address: the originals live as long as the module). -/
abbrev Cache := PersistentHashMap USize Expr

abbrev M := StateT Cache (Except Refusal)

def corrupted {α : Type} (message : String) : M α :=
  throwThe Refusal { kind := "corrupted", message := message }

/-- `n` made again from the digits it prints as. -/
def freshNat (n : Nat) : M Nat := do
  let shown := toString n
  match shown.toNat? with
  | some again =>
    if again == n then
      pure again
    else
      corrupted s!"a natural number object that is not the numeral {shown.take 40} it prints as"
  | none => corrupted s!"a natural number object that prints as {shown.take 40}"

def freshString (text : String) : M String := do
  let again := String.mk text.toList
  if again == text then
    pure again
  else
    corrupted "a string object that is not the text it decodes to"

unsafe def freshName : Name → M Name
  | .anonymous => pure .anonymous
  | .str pre part => do pure (.str (← freshName pre) (← freshString part))
  | .num pre index => do pure (.num (← freshName pre) (← freshNat index))

unsafe def freshNames (names : List Name) : M (List Name) :=
  names.mapM freshName

unsafe def freshLevel : Level → M Level
  | .zero => pure .zero
  | .succ l => do pure (.succ (← freshLevel l))
  | .max a b => do pure (.max (← freshLevel a) (← freshLevel b))
  | .imax a b => do pure (.imax (← freshLevel a) (← freshLevel b))
  | .param name => do pure (.param (← freshName name))
  | .mvar id => do pure (.mvar { name := (← freshName id.name) })

def freshBinderInfo : BinderInfo → BinderInfo
  | BinderInfo.default => BinderInfo.default
  | BinderInfo.implicit => BinderInfo.implicit
  | BinderInfo.strictImplicit => BinderInfo.strictImplicit
  | BinderInfo.instImplicit => BinderInfo.instImplicit

def freshBool (b : Bool) : Bool :=
  if b then true else false

mutual
  unsafe def freshExpr (e : Expr) : M Expr := do
    let key := ptrAddrUnsafe e
    match (← get).find? key with
    | some done => pure done
    | none =>
      let fresh ← freshNode e
      modify fun cache => cache.insert key fresh
      pure fresh

  unsafe def freshNode : Expr → M Expr
    | .bvar index => do pure (.bvar (← freshNat index))
    | .fvar id => do pure (.fvar { name := (← freshName id.name) })
    | .mvar id => do pure (.mvar { name := (← freshName id.name) })
    | .sort l => do pure (.sort (← freshLevel l))
    | .const name levels => do pure (.const (← freshName name) (← levels.mapM freshLevel))
    | .app f a => do pure (.app (← freshExpr f) (← freshExpr a))
    | .lam name type body info => do
      pure (.lam (← freshName name) (← freshExpr type) (← freshExpr body) (freshBinderInfo info))
    | .forallE name type body info => do
      pure (.forallE (← freshName name) (← freshExpr type) (← freshExpr body) (freshBinderInfo info))
    | .letE name type value body nonDep => do
      pure (.letE (← freshName name) (← freshExpr type) (← freshExpr value) (← freshExpr body) (freshBool nonDep))
    | .lit (.natVal n) => do pure (.lit (.natVal (← freshNat n)))
    | .lit (.strVal s) => do pure (.lit (.strVal (← freshString s)))
    | .mdata _ inner => freshExpr inner
    | .proj struct index inner => do
      pure (.proj (← freshName struct) (← freshNat index) (← freshExpr inner))
end

-- (full names: `unsafe`, `partial`, `opaque` and `abbrev` are keywords)
def freshSafety : DefinitionSafety → DefinitionSafety
  | DefinitionSafety.unsafe => DefinitionSafety.unsafe
  | DefinitionSafety.safe => DefinitionSafety.safe
  | DefinitionSafety.partial => DefinitionSafety.partial

def freshHints : ReducibilityHints → ReducibilityHints
  | ReducibilityHints.opaque => ReducibilityHints.opaque
  | ReducibilityHints.abbrev => ReducibilityHints.abbrev
  | ReducibilityHints.regular height => ReducibilityHints.regular height

unsafe def freshRule (rule : RecursorRule) : M RecursorRule := do
  pure { rule with ctor := (← freshName rule.ctor), nfields := (← freshNat rule.nfields), rhs := (← freshExpr rule.rhs) }

/-- The constant made again field by field (the fields every pinned toolchain has): names, levels, terms and
numbers rebuilt, the `Bool` flags the kernel reads (`isUnsafe`, a recursor's `k`) made canonical, the rest copied. -/
unsafe def freshConstant : ConstantInfo → M ConstantInfo
  | .axiomInfo v => do
    pure (.axiomInfo { v with
      name := (← freshName v.name), levelParams := (← freshNames v.levelParams), type := (← freshExpr v.type),
      isUnsafe := freshBool v.isUnsafe })
  | .defnInfo v => do
    pure (.defnInfo { v with
      name := (← freshName v.name), levelParams := (← freshNames v.levelParams), type := (← freshExpr v.type),
      value := (← freshExpr v.value), all := (← freshNames v.all), safety := freshSafety v.safety,
      hints := freshHints v.hints })
  | .thmInfo v => do
    pure (.thmInfo { v with
      name := (← freshName v.name), levelParams := (← freshNames v.levelParams), type := (← freshExpr v.type),
      value := (← freshExpr v.value), all := (← freshNames v.all) })
  | .opaqueInfo v => do
    pure (.opaqueInfo { v with
      name := (← freshName v.name), levelParams := (← freshNames v.levelParams), type := (← freshExpr v.type),
      value := (← freshExpr v.value), isUnsafe := freshBool v.isUnsafe })
  | .quotInfo v => do
    pure (.quotInfo { v with
      name := (← freshName v.name), levelParams := (← freshNames v.levelParams), type := (← freshExpr v.type) })
  | .inductInfo v => do
    pure (.inductInfo { v with
      name := (← freshName v.name), levelParams := (← freshNames v.levelParams), type := (← freshExpr v.type),
      numParams := (← freshNat v.numParams), numIndices := (← freshNat v.numIndices),
      all := (← freshNames v.all), ctors := (← freshNames v.ctors), isUnsafe := freshBool v.isUnsafe })
  | .ctorInfo v => do
    pure (.ctorInfo { v with
      name := (← freshName v.name), levelParams := (← freshNames v.levelParams), type := (← freshExpr v.type),
      induct := (← freshName v.induct), cidx := (← freshNat v.cidx), numParams := (← freshNat v.numParams),
      numFields := (← freshNat v.numFields), isUnsafe := freshBool v.isUnsafe })
  | .recInfo v => do
    pure (.recInfo { v with
      name := (← freshName v.name), levelParams := (← freshNames v.levelParams), type := (← freshExpr v.type),
      all := (← freshNames v.all), numParams := (← freshNat v.numParams), numIndices := (← freshNat v.numIndices),
      numMotives := (← freshNat v.numMotives), numMinors := (← freshNat v.numMinors),
      rules := (← v.rules.mapM freshRule), k := freshBool v.k, isUnsafe := freshBool v.isUnsafe })

unsafe def freshConstants (constants : Array ConstantInfo) : M (Array ConstantInfo) :=
  constants.mapM freshConstant

def lastPart : Name → Option (Name × String)
  | .str base part => some (base, part)
  | _ => none

/-- Why a constant that is unsafe or partial is refused, or none for what the code generator writes for
honest code (see the header: the stage caches, and the `_unsafe_rec` shim of a recursive definition). -/
def unsafeRefusal (constants : Array ConstantInfo) (ci : ConstantInfo) : Option Refusal := Id.run do
  if ci.isUnsafe then
    if let .defnInfo _ := ci then
      if let some (_, part) := lastPart ci.name then
        if part == "_cstage1" || part == "_cstage2" then
          return none
    return some { kind := "unsafe", message := s!"unsafe constant {ci.name}: repro's check refuses unsafe code" }
  if ci.isPartial then
    if let some (base, part) := lastPart ci.name then
      if part == "_unsafe_rec" then
        if let some (.defnInfo _) := constants.find? (fun other => other.name == base) then
          return none
        return some {
          kind := "unsafe"
          message := s!"partial definition {base}: repro's check refuses partial definitions" }
    return some {
      kind := "unsafe"
      message := s!"partial constant {ci.name}: repro's check refuses partial definitions" }
  return none

def allowedAxioms : List Name := [`propext, `Quot.sound, `Classical.choice]

/-- The expressions whose constants a constant depends on (as `#print axioms` collects them). -/
def dependsOn : ConstantInfo → Array Expr
  | .defnInfo v => #[v.type, v.value]
  | .thmInfo v => #[v.type, v.value]
  | .opaqueInfo v => #[v.type, v.value]
  | ci => #[ci.type]

/-- Every axiom `start` depends on in `env`, transitively. -/
def axiomsOf (env : Environment) (start : Name) : Array Name := Id.run do
  let mut todo : List Name := [start]
  let mut seen : NameSet := NameSet.empty.insert start
  let mut found : Array Name := #[]
  while true do
    match todo with
    | [] => break
    | name :: rest =>
      todo := rest
      match env.find? name with
      | none => pure ()
      | some ci =>
        if let .axiomInfo _ := ci then
          found := found.push name
        let mut next : Array Name := #[]
        for e in dependsOn ci do
          next := next ++ e.getUsedConstants
        if let .inductInfo v := ci then
          next := next ++ v.ctors.toArray
        for used in next do
          unless seen.contains used do
            seen := seen.insert used
            todo := used :: todo
  return found

/-- `action`'s value, or the words of the error it threw. -/
def attempt {α : Type} (action : IO α) : IO (Except String α) := do
  try
    let value ← action
    return .ok value
  catch error =>
    return .error (toString error)

/-- `constants` replayed into `env`: the map is built as SafeVerify's `replayFile` builds it, which each
pinned toolchain's `Environment.replay` takes under its own `HashMap`. -/
def replayAll (env : Environment) (constants : Array ConstantInfo) : IO Environment := do
  let mut newConstants := {}
  for ci in constants do
    newConstants := newConstants.insert ci.name ci
  env.replay newConstants

abbrev CheckM := ExceptT Refusal IO

def refuse {α : Type} (kind message : String) : CheckM α :=
  throwThe Refusal { kind := kind, message := message }

unsafe def rebuilt (path : System.FilePath) : CheckM (ModuleData × Array ConstantInfo) := do
  let (mod, _) ← readModuleData path
  match (freshConstants mod.constants).run' PersistentHashMap.empty with
  | .ok constants => pure (mod, constants)
  | .error refusal => throwThe Refusal refusal

unsafe def check (targetPath submissionPath : System.FilePath) : CheckM Unit := do
  let (_, target) ← rebuilt targetPath
  let (mod, constants) ← rebuilt submissionPath
  if mod.constNames.size != constants.size then
    refuse "corrupted" "the module lists another number of names than of constants"
  let mut seen : NameSet := NameSet.empty
  for name in mod.constNames, ci in constants do
    if name != ci.name then
      refuse "corrupted" s!"the module lists {name} for a constant named {ci.name}"
    if seen.contains ci.name then
      refuse "corrupted" s!"two constants named {ci.name}"
    seen := seen.insert ci.name
    if let some refusal := unsafeRefusal constants ci then
      throwThe Refusal refusal
  let imported ← importModules mod.imports {} 0
  let replayed ← attempt (replayAll imported constants)
  let env ← match replayed with
    | .ok found => pure found
    | .error why => refuse "kernel" s!"the kernel refused the rebuilt declarations: {why}"
  for requirement in target do
    if let .thmInfo wanted := requirement then
      match env.find? wanted.name with
      | none => refuse "not_found" s!"{wanted.name} not found in the rebuilt submission"
      | some (.thmInfo found) =>
        if found.type != wanted.type || found.levelParams != wanted.levelParams then
          refuse "type_mismatch" s!"theorem {wanted.name} does not have the same type as the requirement (rebuilt)"
        for axiomName in axiomsOf env wanted.name do
          unless allowedAxioms.contains axiomName do
            refuse "axiom" s!"{axiomName} is not in the allowed set of standard axioms (rebuilt)"
      | some _ => refuse "kind_mismatch" s!"{wanted.name} is not a theorem in the rebuilt submission"

def oneLine (text : String) : String :=
  (text.replace "\n" " ").replace "\t" " "

end ReproRebuild

unsafe def main (args : List String) : IO UInt32 := do
  match args with
  | [target, submission] =>
    initSearchPath (← findSysroot)
    let answer ← (ReproRebuild.check (System.FilePath.mk target) (System.FilePath.mk submission)).run
    match answer with
    | .ok _ =>
      IO.println "repro-rebuild-passed"
      return 0
    | .error refusal =>
      IO.println s!"repro-rebuild-refused\t{refusal.kind}\t{ReproRebuild.oneLine refusal.message}"
      return 2
  | _ =>
    IO.eprintln "usage: lean --run Rebuild.lean TARGET.olean SUBMISSION.olean"
    return 64
