"""Run agents on polyglot instances in parallel and grade them in fresh containers: the
command line (utils/cli.py) and the Python API `harness(...)` (utils/run.py); every setting is
declared once in utils/settings.py. `python harness.py --help` lists them.
"""

from __future__ import annotations

if not __package__:  # run from the checkout (python harness.py, or imported beside it): see _standalone.py
    import _standalone
    __package__ = _standalone.PACKAGE

import sys

from .utils.cli import main  # noqa: F401 - the API
from .utils.run import HarnessError, RunOutcome, harness  # noqa: F401 - the API

if __name__ == "__main__":
    sys.exit(main())
