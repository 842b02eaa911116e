"""Run agents on polyglot instances and grade them: the CLI (`python harness.py --help`,
utils/run/cli.py) and the Python API `harness(...)` (utils/run/flow.py), wherever the checkout
sits; `evaluate(task, patch)` and `tasks(...)` grade one patch at a time (utils/run/evaluate.py)."""

from __future__ import annotations

if not __package__:  # run from the checkout (python harness.py, or imported beside it): see _standalone.py
    import _standalone
    __package__ = _standalone.PACKAGE

import sys

from .utils.run import HarnessError, RunOutcome, harness  # noqa: F401 - the API
from .utils.run.cli import main  # noqa: F401 - the API
from .utils.run.evaluate import EvaluateError, Evaluator, Task, Verdict, evaluate, tasks  # noqa: F401 - one patch at a time

if __name__ == "__main__":
    sys.exit(main())
