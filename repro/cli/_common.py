"""What every command module shares: the consoles, the exit-code scheme, the one-line report of a
user error, interrupt handling, and the Lean settings a command's options select."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.console import Console

from repro.config import ConfigError, RunConfig, load_config
from repro.data import DataError
from repro.exit_codes import EXIT_CODES_HELP, ExitCode

if TYPE_CHECKING:
    Commands = argparse._SubParsersAction[argparse.ArgumentParser]

__all__ = [
    "EXIT_CODES_HELP",
    "ExitCode",
    "Handler",
    "PIPE_WIDTH",
    "console",
    "errors",
    "lean_settings",
    "run_handler",
]

PIPE_WIDTH = 100_000


def _make_console(*, stderr: bool = False) -> Console:
    """Printed content is data: brackets must survive. Piped output (logs, ``| grep``) is never
    wrapped at 80 columns nor are table cells cut: a copied command or URL must stay whole."""
    console = Console(stderr=stderr, markup=False, highlight=False, soft_wrap=True)
    if not console.is_terminal:
        console = Console(stderr=stderr, markup=False, highlight=False, soft_wrap=True, width=PIPE_WIDTH)
    return console


console = _make_console()
errors = _make_console(stderr=True)

Handler = Callable[[argparse.Namespace], int]


def lean_settings(arguments: argparse.Namespace) -> Any:
    """The ``lean:`` section of ``--config`` (or the defaults), with ``--backend`` applied."""
    config = load_config(arguments.config) if getattr(arguments, "config", None) else RunConfig()
    lean = config.lean
    if getattr(arguments, "backend", None):
        lean = lean.model_copy(update={"backend": arguments.backend})
    return lean


def _user_errors() -> tuple[type[BaseException], ...]:
    """Errors that mean bad input or setup, reported in one line. Evaluated only when an exception
    is raised, so no command imports a module (the repair package pulls in scipy) just to catch it."""
    from repro.app import RunError
    from repro.audit import AuditError
    from repro.llm.preflight import EndpointPreflightError
    from repro.release import ReleaseError
    from repro.store import StoreError

    found: list[type[BaseException]] = [ConfigError, DataError, RunError, ReleaseError, StoreError, FileNotFoundError]
    found += [EndpointPreflightError, AuditError]
    runner = sys.modules.get("repro.repair.runner")  # loaded only if the repair command ran
    if runner is not None:
        found.append(runner.RepairInputError)
    return tuple(found)


def run_handler(handler: Handler, arguments: argparse.Namespace) -> int:
    """Run one command; a user error becomes one line and status 2, an interrupt status 130."""
    try:
        return int(handler(arguments))
    except _user_errors() as error:
        errors.print(f"error: {error}", style="red")
        return ExitCode.usage
    except BrokenPipeError:
        # the reader went away (`repro audit --json | head`): stop quietly, as other Unix tools do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return ExitCode.ok
    except KeyboardInterrupt:
        errors.print("interrupted; resume with: repro run --resume --run-dir DIR")
        return ExitCode.interrupted
