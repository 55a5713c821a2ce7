"""Mutation testing of the soundness gate: how many small breakages do the gate tests notice?

Issue 19, section 6: real Lean cannot run in CI, so the tests are the only guard that a rule keeps
working. This benchmark breaks the gate's modules one small change at a time and runs the gate
tests against each broken copy; a mutant is *killed* when some test fails (or the run times out).
Mutations, chosen to be the ways a rule silently stops working:

- ``compare``: a comparison flipped (``==``/``!=``, ``<``/``>=``, ``in``/``not in``, ``is``/``is not``);
- ``drop-condition``: one operand of an ``and``/``or`` dropped;
- ``negate-if``: an ``if``/``elif``/``while`` test negated;
- ``delete-element``: one element deleted from a literal set/list/tuple/dict of strings (a refuse-list);
- ``widen-allowlist``: a dangerous name added to a literal assigned to an ``ALLOWED*``/``*ALLOWLIST`` name;
- ``skip-check``: a ``*.refuse(...)``/``*.add(...)`` call statement replaced by ``pass``.

Mutants are enumerated from the AST, sampled with a fixed seed, and each runs in a forked child
that imports ``repro`` afresh from an overlay directory holding the one mutated file (the parent
has already imported the heavy third-party modules, so a child starts in about a second). Run it
with ``nice`` on a sample: it is CPU-heavy. Surviving mutants are listed for review; the ones that
cannot change behaviour (equivalent mutants) are named in ``EQUIVALENT`` with the reason.

    nice python benchmarks/gate_mutation.py --sample 120 --out mutation.json
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
# The four modules of issue 19 (source.py and lexer.py now live in repro/lean/text/), and the tables they read
DEFAULT_MODULES = (
    "repro/lean/policy.py",
    "repro/lean/gate.py",
    "repro/lean/text/statement.py",
    "repro/lean/text/lexer.py",
    "repro/lean/tables.py",
)
# Fast files first: ``-x`` stops at the first failure, so most mutants die within seconds.
DEFAULT_TESTS = (
    "tests/test_gate_rules.py",
    "tests/test_syntax_tables.py",
    "tests/test_lexer.py",
    "tests/test_statement_reader.py",
    "tests/test_gate.py",
)
_FLIPS: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_WIDENING = ("Lean", "unsafe", "debug.skipKernelTC", "sorry")
# Mutants reviewed and found unable to change behaviour, by (module, "line kind: description"): why.
# Line numbers are those of the revision the note reports on; re-review after editing these modules.
EQUIVALENT: dict[tuple[str, str], str] = {
    ("repro/lean/text/statement.py", "118 drop-condition: drop operand 2 of and"): (
        "between a depth-0 open bracket and its close no depth-0 token occurs, so the first depth-0 symbol"
        " after group_start is always the closing bracket"
    ),
    ("repro/lean/text/statement.py", "44 drop-condition: drop operand 0 of and"): (
        "only symbol tokens can have the text of a closing bracket"
    ),
    ("repro/lean/text/statement.py", "212 delete-element: delete 'then'"): (
        "`then` only occurs with `if`, which is a connective: top_level_equation returns None first"
    ),
    ("repro/lean/text/statement.py", "212 delete-element: delete 'else'"): (
        "`else` only occurs with `if`, which is a connective: top_level_equation returns None first"
    ),
    ("repro/lean/policy.py", "283 delete-element: delete 'by'"): (
        "`by` right after `open` names is code Lean does not parse; refusing it as a name changes nothing"
    ),
    ("repro/lean/gate.py", "314 drop-condition: drop operand 1 of or"): (
        "changes only the wording of a detail when #print axioms printed nothing; the verdict is the same"
    ),
}


def _equivalent(mutant: Mutant) -> str | None:
    """Why ``mutant`` cannot change behaviour, or None: reviewed cases, and deletions made redundant."""
    reviewed = EQUIVALENT.get((mutant.module, _key(mutant)))
    if reviewed:
        return reviewed
    if mutant.module.endswith("tables.py") and mutant.kind == "delete-element":
        from repro.lean.syntax import gate_tables, keyword_key
        from repro.lean.tables import COMMAND_KEYWORDS

        word = mutant.description.removeprefix("delete ").strip("'")
        if word in COMMAND_KEYWORDS and keyword_key(word) in gate_tables().commands:
            return "the generated syntax tables also hold this command keyword, and COMMAND_KEYWORDS unions them in"
    return None


@dataclass
class Mutant:
    module: str
    index: int  # position in the module's mutation walk: with ``module``, names the mutant across runs
    line: int
    kind: str
    description: str
    status: str = "pending"  # killed | survived | timeout | error
    seconds: float = 0.0


def _constant_strings(node: ast.AST) -> bool:
    elements = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", [])
    return len(elements) >= 2 and all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in elements)


def _assigned_name(tree: ast.Module, target: ast.AST) -> str | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign):
            value = node.value
            if value is not None and any(child is target for child in ast.walk(value)):
                names = node.targets if isinstance(node, ast.Assign) else [node.target]
                return next((n.id for n in names if isinstance(n, ast.Name)), None)
    return None


def _mutations(tree: ast.Module) -> Iterator[tuple[int, str, str, object]]:
    """(line, kind, description, how) for every mutation of the module; ``how`` edits a copy of the node."""
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Compare):
            for index, op in enumerate(node.ops):
                if type(op) in _FLIPS:
                    flipped = _FLIPS[type(op)].__name__
                    yield line, "compare", f"{type(op).__name__}->{flipped} #{index}", ("compare", index)
        elif isinstance(node, ast.BoolOp) and len(node.values) >= 2:
            for index in range(len(node.values)):
                operator = "and" if isinstance(node.op, ast.And) else "or"
                yield line, "drop-condition", f"drop operand {index} of {operator}", ("drop", index)
        elif isinstance(node, ast.If | ast.While):
            yield line, "negate-if", "negate the condition", ("negate", 0)
        elif isinstance(node, ast.Set | ast.List | ast.Tuple | ast.Dict) and _constant_strings(node):
            elements = node.keys if isinstance(node, ast.Dict) else node.elts
            for index, element in enumerate(elements):
                assert isinstance(element, ast.Constant)
                yield line, "delete-element", f"delete {element.value!r}", ("delete", index)
            name = _assigned_name(tree, node) or ""
            if "ALLOW" in name.upper() and not isinstance(node, ast.Dict):
                for word in _WIDENING:
                    yield line, "widen-allowlist", f"add {word!r} to {name}", ("widen", word)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            function = node.value.func
            if isinstance(function, ast.Attribute) and function.attr in ("refuse", "add"):
                yield line, "skip-check", f"skip .{function.attr}(...)", ("skip", 0)


def _apply(tree: ast.Module, target_index: int) -> str:
    """Source of the module with the ``target_index``-th mutation applied."""
    mutated = copy.deepcopy(tree)
    for count, (node, mutation) in enumerate(_numbered(mutated)):
        if count != target_index:
            continue
        kind, argument = mutation
        if kind == "compare":
            assert isinstance(node, ast.Compare) and isinstance(argument, int)
            node.ops[argument] = _FLIPS[type(node.ops[argument])]()
        elif kind == "drop":
            assert isinstance(node, ast.BoolOp) and isinstance(argument, int)
            del node.values[argument]
            if len(node.values) == 1:
                _replace(mutated, node, node.values[0])
        elif kind == "negate":
            assert isinstance(node, ast.If | ast.While)
            node.test = ast.UnaryOp(op=ast.Not(), operand=node.test)
        elif kind == "delete":
            assert isinstance(argument, int)
            if isinstance(node, ast.Dict):
                del node.keys[argument]
                del node.values[argument]
            else:
                del node.elts[argument]  # type: ignore[attr-defined]
        elif kind == "widen":
            node.elts.append(ast.Constant(value=str(argument)))  # type: ignore[attr-defined]
        elif kind == "skip":
            _replace(mutated, node, ast.Pass())
        break
    return ast.unparse(ast.fix_missing_locations(mutated))


def _numbered(tree: ast.Module) -> Iterator[tuple[ast.AST, tuple[str, object]]]:
    """The same walk as :func:`_mutations`, yielding the node each mutation edits."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for index, op in enumerate(node.ops):
                if type(op) in _FLIPS:
                    yield node, ("compare", index)
        elif isinstance(node, ast.BoolOp) and len(node.values) >= 2:
            for index in range(len(node.values)):
                yield node, ("drop", index)
        elif isinstance(node, ast.If | ast.While):
            yield node, ("negate", 0)
        elif isinstance(node, ast.Set | ast.List | ast.Tuple | ast.Dict) and _constant_strings(node):
            elements = node.keys if isinstance(node, ast.Dict) else node.elts
            for index in range(len(elements)):
                yield node, ("delete", index)
            name = _assigned_name(tree, node) or ""
            if "ALLOW" in name.upper() and not isinstance(node, ast.Dict):
                for word in _WIDENING:
                    yield node, ("widen", word)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            function = node.value.func
            if isinstance(function, ast.Attribute) and function.attr in ("refuse", "add"):
                yield node, ("skip", 0)


def _replace(tree: ast.AST, old: ast.AST, new: ast.AST) -> None:
    for parent in ast.walk(tree):
        for field_name, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field_name, new)
                return
            if isinstance(value, list) and any(item is old for item in value):
                value[[i for i, item in enumerate(value) if item is old][0]] = new
                return


def _run_child(overlay: Path, tests: list[str], timeout_s: float) -> str:
    """Run the tests in a forked child importing ``repro`` from ``overlay``: killed, survived or timeout."""
    pid = os.fork()
    if pid == 0:  # child
        try:
            for name in [m for m in sys.modules if m == "repro" or m.startswith(("repro.", "tests"))]:
                del sys.modules[name]
            sys.path.insert(0, str(overlay))
            os.environ["PYTHONPATH"] = os.pathsep.join([str(overlay), str(REPO)])
            os.chdir(REPO)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            import pytest

            code = pytest.main(["-x", "-q", "-p", "no:cacheprovider", "--import-mode=append", *tests])
            os._exit(0 if code == 0 else 1)
        except BaseException:
            os._exit(3)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            code = os.waitstatus_to_exitcode(status)
            return "survived" if code == 0 else "killed" if code == 1 else "error"
        time.sleep(0.2)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return "timeout"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--module", action="append", help="module to mutate (repeatable; default: the gate's four)")
    parser.add_argument("--tests", nargs="+", default=list(DEFAULT_TESTS))
    parser.add_argument("--sample", type=int, default=120, help="mutants to run (sampled with --seed)")
    parser.add_argument("--seed", type=int, default=19)
    parser.add_argument("--timeout-s", type=float, default=600)
    parser.add_argument("--budget-s", type=float, default=3600, help="stop starting mutants after this long")
    parser.add_argument("--out", type=Path, help="write every mutant with its status as JSON")
    parser.add_argument("--rerun", type=Path, help="run only the survivors listed in this earlier --out file")
    parser.add_argument("--summarize", type=Path, help="only print the summary of an earlier --out file")
    arguments = parser.parse_args(argv)
    if arguments.summarize:
        sys.path.insert(0, str(REPO))
        _summarize([Mutant(**m) for m in json.loads(arguments.summarize.read_text(encoding="utf-8"))], None)
        return 0
    modules = arguments.module or [m for m in DEFAULT_MODULES if (REPO / m).is_file()]

    sys.path.insert(0, str(REPO))
    import pytest  # noqa: F401

    import repro.lean  # noqa: F401  (third-party imports stay loaded in the parent: fast children)
    import repro.lean.policy  # noqa: F401

    all_mutants: list[tuple[Mutant, ast.Module, int]] = []
    for module in modules:
        tree = ast.parse((REPO / module).read_text(encoding="utf-8"))
        for index, (line, kind, description, _) in enumerate(_mutations(tree)):
            all_mutants.append((Mutant(module, index, line, kind, description), tree, index))
    random.Random(arguments.seed).shuffle(all_mutants)
    chosen = all_mutants[: arguments.sample]
    if arguments.rerun:
        # a second pass with other tests, over the survivors of a first (fast tests first, slow ones after)
        earlier = json.loads(arguments.rerun.read_text(encoding="utf-8"))
        wanted = {(m["module"], m["index"]) for m in earlier if m["status"] == "survived"}
        chosen = [item for item in all_mutants if (item[0].module, item[0].index) in wanted]
    print(f"{len(all_mutants)} mutants in {len(modules)} modules; running {len(chosen)}", flush=True)

    with tempfile.TemporaryDirectory(prefix="gate-mutation-") as temporary:
        overlay = Path(temporary)
        shutil.copytree(REPO / "repro", overlay / "repro")
        for module in modules:  # unparsed originals: the baseline must pass, or unparse changed something
            tree = ast.parse((REPO / module).read_text(encoding="utf-8"))
            (overlay / module).write_text(ast.unparse(tree), encoding="utf-8")
        baseline = _run_child(overlay, arguments.tests, arguments.timeout_s)
        if baseline != "survived":
            print(f"baseline run failed ({baseline}): fix the tests first", flush=True)
            return 2
        started = time.monotonic()
        for mutant, tree, index in chosen:
            if time.monotonic() - started > arguments.budget_s:
                break
            path = overlay / mutant.module
            original = path.read_text(encoding="utf-8")
            path.write_text(_apply(tree, index), encoding="utf-8")
            began = time.monotonic()
            mutant.status = _run_child(overlay, arguments.tests, arguments.timeout_s)
            mutant.seconds = round(time.monotonic() - began, 1)
            path.write_text(original, encoding="utf-8")
            print(f"{mutant.status:9} {mutant.module}:{mutant.line} {mutant.kind}: {mutant.description}", flush=True)

    ran = [m for m, _, _ in chosen if m.status != "pending"]
    _summarize(ran, arguments.out)
    return 0


def _summarize(ran: list[Mutant], out: Path | None) -> None:
    equivalent = [m for m in ran if m.status == "survived" and _equivalent(m)]
    killed = [m for m in ran if m.status in ("killed", "timeout")]
    non_equivalent = len(ran) - len(equivalent)
    rate = len(killed) / non_equivalent if non_equivalent else 0.0
    print(
        f"ran {len(ran)}: killed {len(killed)}, equivalent {len(equivalent)}, survived {non_equivalent - len(killed)}"
    )
    print(f"killed {rate:.1%} of non-equivalent mutants")
    for mutant in ran:
        if mutant.status == "survived":
            why = _equivalent(mutant)
            label = f"EQUIVALENT ({why})" if why else "SURVIVED"
            print(f"  {label}: {mutant.module}:{mutant.line} {mutant.kind}: {mutant.description}")
    if out:
        out.write_text(json.dumps([asdict(m) for m in ran], indent=1) + "\n", encoding="utf-8")


def _key(mutant: Mutant) -> str:
    return f"{mutant.line} {mutant.kind}: {mutant.description}"


if __name__ == "__main__":
    raise SystemExit(main())
