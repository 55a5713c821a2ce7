"""The trust boundary: the only code that may set ``verified``.

- :mod:`repro.judge.screen`: the cheap screen in front of the judge, a static layer (:mod:`repro.judge.policy`)
  and the REPL check; its "yes" makes a candidate for the judge and its Lean messages feed the levers.
- :mod:`repro.judge.kernel`: the kernel judge, our target and the submission compiled apart in sandboxes and
  the submission replayed into Lean's kernel (SafeVerify per pinned toolchain; :mod:`repro.judge.comparator`
  from v4.21.0-rc3 on); :func:`build_judge` picks it from ``RunConfig.judge``.
- :mod:`repro.judge.cached`: identical code judged once (run and study stores keep the verdicts).
- :mod:`repro.judge.verdict`: what both say, as plain data.

Higher-level users of the judge (``batch``, ``selftest``, ``release``) are imported from their modules.
"""

from repro.judge.cached import CachedJudge
from repro.judge.comparator import COMPARATOR_PINS, ComparatorJudge
from repro.judge.currency import judge_outdated
from repro.judge.kernel import (
    SAFEVERIFY_PINS,
    ByToolchainJudge,
    SafeVerifyJudge,
    build_judge,
    judge_all,
    tool_for,
)
from repro.judge.policy import ScanResult, scan
from repro.judge.screen import forbidden_constructs, reserved_name, verify_proof
from repro.judge.verdict import (
    STANDARD_AXIOMS,
    Judge,
    JudgeCause,
    JudgeRefusal,
    JudgeRequest,
    JudgeStatus,
    JudgeVerdict,
    Verdict,
)

__all__ = [
    "COMPARATOR_PINS",
    "SAFEVERIFY_PINS",
    "STANDARD_AXIOMS",
    "ByToolchainJudge",
    "CachedJudge",
    "ComparatorJudge",
    "Judge",
    "JudgeCause",
    "JudgeRefusal",
    "JudgeRequest",
    "JudgeStatus",
    "JudgeVerdict",
    "SafeVerifyJudge",
    "ScanResult",
    "Verdict",
    "build_judge",
    "forbidden_constructs",
    "judge_all",
    "judge_outdated",
    "reserved_name",
    "scan",
    "tool_for",
    "verify_proof",
]
