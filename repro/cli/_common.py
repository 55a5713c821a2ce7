"""What every command module shares: the consoles, the exit-code scheme, the one-line report of a
user error, interrupt handling, and the Lean settings a command's options select."""

from __future__ import annotations

import argparse
import errno
import os
import shlex
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.console import Console

from repro.config import RunConfig, load_config
from repro.exit_codes import EXIT_CODES_HELP, ExitCode, ReproError
from repro.runlog import DEFAULT_INTERVAL_S, sigterm_as_sigint
from repro.waiting import describe as describe_waits

if TYPE_CHECKING:
    Commands = argparse._SubParsersAction[argparse.ArgumentParser]

__all__ = [
    "EXIT_CODES_HELP",
    "ExitCode",
    "Handler",
    "PIPE_WIDTH",
    "add_judge_options",
    "add_run_dir",
    "console",
    "errors",
    "describe_os_error",
    "judge_settings",
    "lean_settings",
    "quoted",
    "resolve_run_dirs",
    "run_handler",
]

PIPE_WIDTH = 100_000


class _Console(Console):
    def on_broken_pipe(self) -> None:
        """The reader went away (``repro status | head``): stop quietly with 0, as ``--json`` does, not
        rich's exit 1 (a failed result in our scheme, which fails a ``set -o pipefail`` script)."""
        self.quiet = True
        raise BrokenPipeError


def _make_console(*, stderr: bool = False) -> Console:
    """Printed content is data: brackets must survive. Piped output (logs, ``| grep``) is never
    wrapped at 80 columns nor are table cells cut: a copied command or URL must stay whole."""
    console = _Console(stderr=stderr, markup=False, highlight=False, soft_wrap=True)
    if not console.is_terminal:
        console = _Console(stderr=stderr, markup=False, highlight=False, soft_wrap=True, width=PIPE_WIDTH)
    return console


console = _make_console()
errors = _make_console(stderr=True)

Handler = Callable[[argparse.Namespace], int]


def add_run_dir(parser: argparse.ArgumentParser, *, dest: str = "run_dir", what: str = "the run directory") -> None:
    """``RUN_DIR`` as a positional or as ``--run-dir`` (the spelling ``repro run`` uses), one required."""
    parser.add_argument(dest, nargs="?", metavar=dest.upper(), help=f"{what} (or --run-dir)")
    parser.add_argument("--run-dir", dest=f"{dest}_option", metavar="RUN_DIR", help=f"{what}, as an option")
    pairs = [*(parser.get_default("directory_options") or []), (dest, f"{dest}_option", what)]
    parser.set_defaults(directory_options=pairs, parser=parser)


def resolve_run_dirs(arguments: argparse.Namespace) -> None:
    """Fold ``--run-dir`` into the positional; a missing or contradictory directory is a usage error."""
    for positional, option, what in getattr(arguments, "directory_options", None) or []:
        given, flagged = getattr(arguments, positional), getattr(arguments, option)
        if given and flagged and given != flagged:
            arguments.parser.error(f"{what} given twice, differently: {given} and --run-dir {flagged}")
        if not (given or flagged):
            arguments.parser.error(f"{what} is required: give it as {positional.upper()} or --run-dir")
        setattr(arguments, positional, given or flagged)


def add_lean_options(parser: argparse.ArgumentParser, *, backend_flag: str = "--backend") -> None:
    """``--backend`` (spelled ``backend_flag``) and ``--config``: what :func:`lean_settings` reads."""
    parser.add_argument(
        backend_flag,
        dest="backend",
        choices=["repl", "kimina", "recorded", "fake"],
        help="Lean backend (default: the config's lean.backend)",
    )
    parser.add_argument("--config", help="config whose lean: and judge: sections to use")
    parser.add_argument(
        "--sandbox",
        choices=["bwrap", "unshare", "none"],
        help="confinement of the Lean processes repro starts (default: the config's lean.sandbox, bwrap); a weaker"
        " one only when named here",
    )


def lean_settings(arguments: argparse.Namespace) -> Any:
    """The ``lean:`` section of ``--config`` (or the defaults), with ``--backend`` applied."""
    config = load_config(arguments.config) if getattr(arguments, "config", None) else RunConfig()
    lean = config.lean
    if getattr(arguments, "backend", None):
        lean = lean.model_copy(update={"backend": arguments.backend})
    if getattr(arguments, "sandbox", None):
        lean = lean.model_copy(update={"sandbox": arguments.sandbox})
    return lean


def judge_settings(arguments: argparse.Namespace) -> Any:
    """The ``judge:`` section of ``--config`` (or the defaults: the judge pinned for each toolchain), with
    ``--judge-tools`` and ``--judge-factory`` (:func:`add_judge_options`) applied."""
    from repro.config import JudgeSettings

    config = load_config(arguments.config) if getattr(arguments, "config", None) else RunConfig()
    settings = config.judge
    if getattr(arguments, "judge_tools", None):
        settings = settings.model_copy(update={"tools_dir": str(arguments.judge_tools)})
    if getattr(arguments, "judge_backend", None):
        settings = JudgeSettings(backend=arguments.judge_backend, tools_dir=settings.tools_dir)
    if getattr(arguments, "judge_factory", None):
        settings = JudgeSettings(backend="factory", factory=arguments.judge_factory, tools_dir=settings.tools_dir)
    return settings


def add_judge_options(parser: argparse.ArgumentParser) -> None:
    """``--judge-backend``, ``--judge-factory`` and ``--judge-tools``: what :func:`judge_settings` applies over
    the config's ``judge:``."""
    parser.add_argument(
        "--judge-backend",
        choices=["auto", "safeverify", "comparator", "recorded"],
        help="the kernel judge instead of the config's judge.backend (recorded: the offline demo's stored verdicts,"
        " a stand-in that compiles nothing, so exit 4 at best)",
    )
    parser.add_argument(
        "--judge-factory",
        metavar="MODULE:FUNCTION",
        help="the judge that function builds instead of the config's (a stand-in of the tests; exit 4 at best)",
    )
    parser.add_argument(
        "--judge-tools",
        help="directory with one built judge checkout per toolchain (default: the config's judge.tools_dir,"
        " $REPRO_SAFEVERIFY_DIR or ~/.cache/repro/safeverify)",
    )


def describe_os_error(error: OSError) -> str:
    """``FILE: reason`` (never a bare errno), with a hint when the place is read-only."""
    where = error.filename if error.filename is not None else "?"
    reason = error.strerror or str(error)
    if error.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        reason += " (this command writes there; a read-only run can only be read: status, audit, report --out)"
    return f"{where}: {reason}"


def resume_hint(arguments: argparse.Namespace) -> str | None:
    hint = getattr(arguments, "on_interrupt", None)
    return hint(arguments) if hint is not None else None


def run_handler(handler: Handler, arguments: argparse.Namespace) -> int:
    """Run one command with the exit-code scheme: a :class:`ReproError` is one line and the status it
    carries (2 bad input, 3 an endpoint down or a busy directory), an interrupt (Ctrl-C or SIGTERM)
    130 with how to go on."""
    stop = threading.Event()
    if getattr(arguments, "heartbeat", False):
        threading.Thread(target=_heartbeat, args=(stop, _heartbeat_interval()), daemon=True).start()
    try:
        with sigterm_as_sigint():
            return int(handler(arguments))
    except ReproError as error:  # each says what it means: 2 bad input, 3 not now (an endpoint, Lean, a lock)
        errors.print(f"error: {error}", style="red")
        return error.exit_code
    except BrokenPipeError:
        # the reader went away (`repro audit --json | head`): stop quietly, as other Unix tools do
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return ExitCode.ok
    except OSError as error:
        errors.print(f"error: {describe_os_error(error)}", style="red")
        return ExitCode.usage
    except KeyboardInterrupt:
        hint = resume_hint(arguments)
        errors.print("interrupted; what was stored is kept" + (f"; {hint}" if hint else ""), soft_wrap=True)
        return ExitCode.interrupted
    finally:
        stop.set()


def _heartbeat_interval() -> float:
    return float(os.environ.get("REPRO_PROGRESS_INTERVAL_S", DEFAULT_INTERVAL_S))


def _heartbeat(stop: threading.Event, interval_s: float) -> None:
    """For commands without a progress line of their own (prove-study, evaluate, repair): when a
    model request or a Lean check has been waited on for a whole interval, say what and for how long."""
    while not stop.wait(interval_s):
        waiting = describe_waits(at_least_s=interval_s)
        if waiting:
            errors.print(f"still working: {waiting}", soft_wrap=True)


def quoted(path: object) -> str:
    return shlex.quote(str(path))
