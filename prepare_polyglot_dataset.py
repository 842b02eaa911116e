"""Prepare the benchmark: exercises -> instance repos + metadata JSON; the CLI
(`python prepare_polyglot_dataset.py --help`) and `prepare_dataset` (utils/prepare/)."""

from __future__ import annotations

if not __package__:  # run from the checkout (python prepare_polyglot_dataset.py, or imported beside it): see _standalone.py
    import _standalone
    __package__ = _standalone.PACKAGE

import sys

from .utils.prepare.cli import main  # noqa: F401 - the API
from .utils.prepare.dataset import prepare_dataset  # noqa: F401 - the API

if __name__ == "__main__":
    sys.exit(main())
