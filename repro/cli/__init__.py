"""The ``repro`` command. Thin: parse arguments, call the library, print.

One module per command group (``run``, ``inspect``, ``release``, ``study``, ``evaluate``,
``repair``, ``lean``), each adding its sub-commands with ``register``; ``_common`` holds what they
share (consoles, exit codes, interrupts, error lines).
"""

from __future__ import annotations

import argparse
import sys
import warnings

from repro import __version__
from repro.cli import evaluate, inspect, lean, provers, release, repair, run, study
from repro.cli._common import EXIT_CODES_HELP, ExitCode, resolve_run_dirs, run_handler

__all__ = ["EXIT_UNFINISHED", "ExitCode", "build_parser", "main"]

# `repro run` finished but left problems for --resume (distinct from 2: bad input, nothing ran)
EXIT_UNFINISHED = ExitCode.unfinished

DESCRIPTION = """\
repro builds contamination-resistant math benchmarks whose reference answers are backed by Lean 4
proofs, lets you audit everything that was rejected, and repairs cached reasoning traces.

Typical session:
  repro doctor --config configs/gsm8k.yaml      # what is installed and reachable
  repro run --config configs/gsm8k.yaml --target 100 --run-dir runs/gsm8k
  repro status runs/gsm8k                       # funnel, generation rates, pass@k, cost
  repro audit runs/gsm8k --stage verify         # why candidates were rejected
  repro release runs/gsm8k --out release/gsm8k  # JSONL + Parquet + dataset card
Offline demonstration (scripted models, recorded Lean; nothing is verified), from any directory:
  repro run --run-dir runs/demo                 # then as above; release needs --allow-unverified
"""

# the order of `repro --help`: a run's journey first, then the other jobs
_GROUPS = (run, inspect, release, lean, repair, evaluate, study, provers)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="repro", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"repro {__version__}")
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", help="what to do (each has --help)"
    )
    for group in _GROUPS:
        group.register(commands)
    for choice in commands._choices_actions:  # `repro status --help` opens with what `repro --help` says of it
        sub = commands.choices[choice.dest]
        if not sub.description and choice.help:
            sub.description = choice.help[0].upper() + choice.help[1:] + "."
    _document_exit_codes([parser, *commands.choices.values()])
    return parser


def _document_exit_codes(parsers: list[argparse.ArgumentParser]) -> None:
    """Every ``--help`` ends with the exit statuses (a command may say more in its own epilog)."""
    for parser in parsers:
        parser.formatter_class = argparse.RawDescriptionHelpFormatter
        if not parser.epilog:
            parser.epilog = EXIT_CODES_HELP
        elif "exit status" not in parser.epilog:
            parser.epilog = f"{parser.epilog}\n\n{EXIT_CODES_HELP}"
        elif "130" not in parser.epilog:
            parser.epilog = f"{parser.epilog}\n130 interrupted (Ctrl-C or SIGTERM)."
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                _document_exit_codes(list(action.choices.values()))


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    if not (argv if argv is not None else sys.argv[1:]):  # bare `repro`: the help, not a usage error (n15)
        parser.print_help()
        return ExitCode.ok
    arguments = parser.parse_args(argv)
    resolve_run_dirs(arguments)
    with warnings.catch_warnings():
        # pydantic's serializer warnings speak of our internals (a field's declared type), not of
        # anything a user can act on; tests still see them (they call the library, not main)
        warnings.filterwarnings("ignore", message="Pydantic serializer warnings", category=UserWarning)
        return run_handler(arguments.handler, arguments)
