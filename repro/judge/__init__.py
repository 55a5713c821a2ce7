"""The trust boundary: the only code that may set ``verified``.

- :mod:`repro.judge.screen`: the cheap screen in front of the judge, a static layer (:mod:`repro.judge.policy`)
  and the REPL check; its "yes" makes a candidate for the judge and its Lean messages feed the levers.
- :mod:`repro.judge.kernel`: the kernel judge, our target and the submission compiled apart in sandboxes and
  the submission replayed into Lean's kernel (SafeVerify per pinned toolchain).
- :mod:`repro.judge.verdict`: what both say, as plain data.

Higher-level users of the judge (``batch``, ``selftest``, ``release``) are imported from their modules.
"""

from repro.judge.policy import ScanResult, scan
from repro.judge.screen import forbidden_constructs, reserved_name, verify_proof
from repro.judge.verdict import (
    STANDARD_AXIOMS,
    Judge,
    JudgeRequest,
    JudgeStatus,
    JudgeVerdict,
    Verdict,
)

__all__ = [
    "STANDARD_AXIOMS",
    "Judge",
    "JudgeRequest",
    "JudgeStatus",
    "JudgeVerdict",
    "ScanResult",
    "Verdict",
    "forbidden_constructs",
    "reserved_name",
    "scan",
    "verify_proof",
]
