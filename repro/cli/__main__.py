"""``python -m repro.cli``: the same as the ``repro`` script."""

import sys

from repro.cli import main

sys.exit(main())
