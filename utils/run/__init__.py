"""One run, above the pipeline: every setting declared once (settings.py), the plan made before
any sandbox exists (plan.py), the backend provisioned (provision.py), the jobs executed
(execute.py, attempts.py), staged evaluation (stages.py), `harness()` tying them together and
writing the run report (flow.py), one patch at a time (evaluate.py) and the command line
(cli.py). The API users import (README.md) is re-exported here and by the entry point harness.py."""

from .flow import RunOutcome, harness, run
from .settings import HarnessError

__all__ = ["HarnessError", "RunOutcome", "harness", "run"]
