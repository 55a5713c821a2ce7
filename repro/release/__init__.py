"""Dataset export, split by job: :mod:`~repro.release.rows` (the one definition of a released row and
its schema), :mod:`~repro.release.card` (the dataset card), :mod:`~repro.release.writer` (``repro
release``), :mod:`~repro.release.files` (manifest, checks, reading), :mod:`~repro.release.reverify`
(``repro reverify``) and :mod:`~repro.release.exports` (inspect_ai and lm-eval tasks beside the data).
"""

import sys
import types
from typing import Any

from repro.release.errors import LeanUnavailableError, ReleaseError
from repro.release.files import MANIFEST, check_release_files, read_parquet_release, read_release, release_files
from repro.release.reverify import ReverifyResult, reverify_release
from repro.release.rows import COLUMNS, NO_LEVER, SPLIT, Column, instance_from_candidate, proof_hash
from repro.release.writer import ReleaseSummary, write_release

__all__ = [
    "COLUMNS",
    "MANIFEST",
    "NO_LEVER",
    "SPLIT",
    "Column",
    "LeanUnavailableError",
    "ReleaseError",
    "ReleaseSummary",
    "ReverifyResult",
    "check_release_files",
    "instance_from_candidate",
    "proof_hash",
    "read_parquet_release",
    "read_release",
    "release_files",
    "reverify_release",
    "write_release",
]


class _CallableRelease(types.ModuleType):
    """``repro.release(RUN_DIR, OUT_DIR, ...)`` is the front door's :func:`repro.api.release`, while
    ``repro.release.NAME`` stays this package: Python binds the package to the name ``release`` of
    ``repro`` once it is imported, so the entry point and the package must be one object."""

    def __call__(self, *args: Any, **kwargs: Any) -> ReleaseSummary:
        from repro.api import release

        return release(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableRelease
