"""The kernel judge over stored code (``repro reverify``): every request built from a stored text is screened first.

A run's judge is given the screen's ``checked_code`` of a reply it has just read (:mod:`repro.stages.judge`).
A stored text is another matter: a released row's ``verified_code`` was written by whatever repro made the
release, and a row's file can be rewritten since. Before the judge landed (issue 27), ``verified_code`` was the
prover's code block as it wrote it, ``import`` lines included; compiled after the trusted header that is
Lean's "invalid 'import' command" for every Goedel, DeepSeek and Kimina proof, a false rejection. So a stored
text reaches the judge only through :func:`stored_request`: the same static layer that made the text Lean
checked (:func:`repro.judge.screen.screen_code`, the screen's :func:`~repro.judge.policy.scan`) reads it again.
What it refuses is never judged; what it passes is judged as the text Lean checks (identical, byte for byte, to
what a current repro stores; the old form's imports blanked to spaces).
"""

from __future__ import annotations

from dataclasses import dataclass

from repro.config import StaticLimits
from repro.exit_codes import ExitCode
from repro.judge.screen import screen_code
from repro.judge.verdict import JudgeRequest, JudgeStatus, JudgeVerdict, Verdict
from repro.lean.tables import DEFAULT_OPEN_ALLOWLIST


@dataclass(frozen=True)
class StoredSubmission:
    """A stored code text as the judge may see it: ``request`` is None when the screen refuses the text."""

    stored: str
    screen: Verdict  # the static layer's reading of ``stored`` (no Lean)
    request: JudgeRequest | None

    @property
    def refused(self) -> bool:
        return self.request is None

    @property
    def old_form(self) -> bool:
        """The stored text was not yet the text Lean checks (an older repro's raw block, its imports in it)."""
        return self.request is not None and self.request.submission != self.stored

    def refusal(self) -> str:
        return "; ".join(self.screen.details[:3]) or "the screen refuses it"


def stored_request(
    key: str,
    header: str,
    statement: str,
    code: str,
    toolchain: str | None = None,
    *,
    theorem_name: str | None = None,
    allow_native_decide: bool = False,
    open_allowlist: frozenset[str] = DEFAULT_OPEN_ALLOWLIST,
    limits: StaticLimits | None = None,
) -> StoredSubmission:
    """The judge's request for a stored ``code`` (our ``statement`` after the trusted ``header``), or none.

    ``theorem_name``: the row's own (what the run judged), else the one our statement declares.
    """
    screen = screen_code(
        statement,
        code,
        header=header,
        allow_native_decide=allow_native_decide,
        open_allowlist=open_allowlist,
        limits=limits,
    )
    if not screen.static_passed or screen.checked_code is None:
        return StoredSubmission(code, screen, None)
    request = JudgeRequest(
        key=key,
        header=header,
        statement=statement,
        theorem_name=theorem_name or screen.theorem_name or "",
        submission=screen.checked_code,
        toolchain=toolchain,
    )
    return StoredSubmission(code, screen, request)


def judge_exit_code(verdicts: list[JudgeVerdict]) -> ExitCode:
    """1 when the judge rejected a row; 3 when some row got no verdict; 4 when only a stand-in spoke; else 0."""
    if any(v.status == JudgeStatus.rejected for v in verdicts):
        return ExitCode.rejected
    if any(not v.passed for v in verdicts):
        return ExitCode.unfinished
    if any(not v.real for v in verdicts):
        return ExitCode.fake_backend
    return ExitCode.ok
