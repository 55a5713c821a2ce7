"""What a release or a re-verification refuses."""

from __future__ import annotations

from repro.exit_codes import ExitCode, ReproError


class ReleaseError(ReproError, RuntimeError):
    """Bad input or a damaged release: nothing was written, or the files are not what was released."""


class LeanUnavailableError(ReproError, RuntimeError):
    """The Lean backend cannot check trivial code: no proof of the release was checked."""

    exit_code = ExitCode.unfinished
