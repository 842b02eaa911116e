"""Run from the checkout itself (`python harness.py`, `import harness` beside it, the tests,
bench/): the checkout becomes the package `polyglot_harness`, so the code inside it imports
itself relatively wherever the checkout sits (its own repository, HyperAgents'
`domains/polyglot/`, DGM's `polyglot/`). A host repository imports it by its own path and never
loads this file."""

from __future__ import annotations

import sys
import types
from pathlib import Path

PACKAGE = "polyglot_harness"

if PACKAGE not in sys.modules:
    _package = types.ModuleType(PACKAGE, __doc__)
    _package.__path__ = [str(Path(__file__).resolve().parent)]
    sys.modules[PACKAGE] = _package
