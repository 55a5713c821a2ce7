"""Lean results kept in the study store, so identical code is checked once across provers and resumes."""

from __future__ import annotations

from repro.lean import Verifier
from repro.lean.cached import CachedVerifier
from repro.study.store import StudyStore


class StoredLeanResults(CachedVerifier):
    """A :class:`CachedVerifier` whose lasting layer is the study store, so sharing survives a kill.

    ``inner`` is what ``repro.lean.build_verifier`` returns. Only infrastructure-clean results are
    kept: a crash or timeout is asked again next time.
    """

    def __init__(self, inner: Verifier, store: StudyStore) -> None:
        super().__init__(inner, store)

    @property
    def fresh_checks(self) -> int:
        """Checks this study sent to Lean in this process (not answered from memory or the store)."""
        return self.misses

    @property
    def stored_hits(self) -> int:
        return self.hits
