"""Score a harness output directory: accuracy, buckets, per-language table, reasons, cost;
or compare two runs.

    python report.py --output_dir runs/ [--expected_num_tasks 225] [--prices prices.json]
    python report.py --compare runs/gen_1_0 runs/gen_2_0 [--prices prices.json] [--json FILE|-]
    python report.py --output_dir runs/ --html [FILE]    (or --compare A B --html FILE)
    python report.py --output_dir runs/ --view NAME      (a view of utils/views/, e.g. json, html)

Reads every instance result JSON under the output directory (each `<name>_0/` run dir),
writes `<output_dir>/report.json` and prints a short table. An instance found in several
result files counts once (the most recently written file wins), and the report says so.
accuracy_score = resolved / expected_num_tasks when given, else / submitted instances
(comparable with upstream: build-only and stub-passing instances count like any other).
`graded_by` says which instances were graded by their tests and which by the build alone
(test-writing exercises); `stub_passes_ids` lists instances the untouched stub already
resolves (refactoring exercises and build-only ones), and
`accuracy_score_excluding_stub_passes` scores only the instances a no-op cannot resolve.
`cost` (added after every other key) is utils/views/pricing.py RunCost.to_json with a price table
(`--prices`, utils/views/pricing.py), else null: agent_usage then holds the tokens only.

`--view NAME` (repeatable) also writes a registered view (utils/views/__init__.py: one module
per view) to `<output_dir>/<its file name>`. Every output renders the same loaded run
(utils/records/loaded_run.py): each result file is read once and the run scored once.

`--compare RUN_A RUN_B` (utils/views/compare.py, which states how instance sets, datasets and
incomplete instances are treated) prints B against A as a table, or with `--json FILE` writes
the comparison's JSON to FILE too (`--json -`: prints the JSON instead of the table). It writes
nothing else. `--html` also writes one self-contained page (utils/views/html.py) to FILE,
by default `<output_dir>/report.html`. Bad input (a missing run, runs of different datasets, a bad price table): one line
on stderr, exit 2.
"""

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
