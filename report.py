"""Score, compare and render runs: the CLI (`python report.py --help`, utils/views/report.py)
and the Python API `report(...)`, `compare_runs`, `format_comparison`, `load_price_table`."""

from __future__ import annotations

if not __package__:  # run from the checkout (python report.py, or imported beside it): see _standalone.py
    import _standalone
    __package__ = _standalone.PACKAGE

import sys

from .utils.views.report import ReportError, main, report  # noqa: F401 - the API
from .utils.views.compare import compare_runs, format_comparison  # noqa: F401 - the API
from .utils.views.pricing import load_price_table  # noqa: F401 - the API

if __name__ == "__main__":
    sys.exit(main())
