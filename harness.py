"""Run agents on polyglot instances in parallel and grade them in fresh containers.

    python harness.py --subset small --max_workers 5
    python harness.py --dataset datasets/polyglot --subset samples --agent oracle
    python harness.py --build_images_only
    python harness.py --stages small:0.4,medium --model gpt-4o-mini   # staged (utils/stages.py)

Python API for loops: `harness(...)` (same settings as the CLI) and `report(...)` (report.py).
"""

from __future__ import annotations

if not __package__:  # run from the checkout (python harness.py, or imported beside it): see _standalone.py
    import _standalone
    __package__ = _standalone.PACKAGE

import sys

from .utils.run import HarnessError, RunOutcome, harness, main  # noqa: F401 - the API

if __name__ == "__main__":
    sys.exit(main())
