"""How fast a run fails when no model endpoint is reachable, and that it leaves nothing behind.

Runs ``repro run --config configs/gsm8k.yaml --limit 3`` in an empty directory with
``OPENAI_API_KEY`` unset (and nothing listening on the vLLM ports), and prints the wall time, the exit
status, the first line of the error, and whether a run directory was created. The requirement is a
non-zero exit with the cause in under 10 s, before any run directory exists.

    python benchmarks/dead_endpoint.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    environment = {key: value for key, value in os.environ.items() if key != "OPENAI_API_KEY"}
    with tempfile.TemporaryDirectory() as work:
        command = [sys.executable, "-m", "repro.cli", "run", "--config", str(REPO / "configs" / "gsm8k.yaml")]
        started = time.perf_counter()
        result = subprocess.run([*command, "--limit", "3"], cwd=work, capture_output=True, text=True, env=environment)
        elapsed = time.perf_counter() - started
        created = sorted(path.name for path in Path(work).iterdir())
    print(
        json.dumps(
            {
                "wall_s": round(elapsed, 2),
                "exit_status": result.returncode,
                "error": result.stderr.strip().splitlines()[0] if result.stderr.strip() else None,
                "left_behind": created,
                "meets_requirement": result.returncode != 0 and elapsed < 10 and not created,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
