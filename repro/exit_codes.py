"""The one exit-code scheme of every ``repro`` command, and the one base of the errors a user acts on.

It lives here, outside the CLI package, because library code (``check-proof --batch`` summaries,
study and evaluation summaries) computes the status it ends with; ``repro.cli._common`` re-exports it.
Every error raised for a user to act on derives from :class:`ReproError` and carries its status, so
the CLI reports any of them in one line with that status and keeps no list of classes.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """How a command ended; docs/cli.md's exit-code table and every ``--help`` list these."""

    ok = 0  # done; for a checker: verified by a real Lean backend
    rejected = 1  # the result is a refusal or a failure (a proof rejected, nothing to release)
    usage = 2  # bad arguments or input; the file, row and field are named
    unfinished = 3  # no verdict: Lean unavailable, timeout, endpoint down, work left for --resume
    stand_in = 4  # everything passed, but only a stand-in (recorded, factory; a stand-in judge) checked it
    interrupted = 130  # Ctrl-C or SIGTERM; what was stored is kept

    # the names check-proof has used since it first documented its statuses
    verified = 0
    infrastructure = 3


EXIT_CODES_HELP = """\
exit status: 0 ok; 1 rejected or failed result; 2 usage or input error; 3 unfinished or
infrastructure (Lean unavailable, timeout, endpoint down; resumable); 4 passed only with a stand-in
backend (recorded, factory: never a real verdict); 130 interrupted."""


class ReproError(Exception):
    """An error a user can act on: its message names the file, row or setting and the way out.

    ``exit_code`` says what it means in the scheme above: 2 (bad input or arguments) unless a
    subclass says otherwise (3: an endpoint, Lean or a directory lock cannot be had now; nothing
    stored is lost and the same command can be run again). A raise site may override it per instance.
    """

    exit_code: ExitCode = ExitCode.usage

    def __init__(self, *args: object, exit_code: ExitCode | None = None) -> None:
        super().__init__(*args)
        if exit_code is not None:
            self.exit_code = exit_code
