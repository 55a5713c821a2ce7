"""The ``repro`` command. Thin: parse arguments, call the library, print.

One module per command group (``run``, ``inspect``, ``release``, ``study``, ``evaluate``,
``repair``, ``lean``), each adding its sub-commands with ``register``; ``_common`` holds what they
share (consoles, exit codes, interrupts, error lines).
"""

from __future__ import annotations

import argparse

from repro import __version__
from repro.cli import evaluate, inspect, lean, provers, release, repair, run, study
from repro.cli._common import ExitCode, run_handler

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
Offline demonstration (scripted models, fake Lean; nothing is verified):
  repro run --config configs/demo.yaml
"""

# the order of `repro --help`: a run's journey first, then the other jobs
_GROUPS = (run, inspect, release, lean, repair, evaluate, study, provers)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="repro", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--version", action="version", version=f"repro {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in _GROUPS:
        group.register(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    arguments = build_parser().parse_args(argv)
    return run_handler(arguments.handler, arguments)
