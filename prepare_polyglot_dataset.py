"""Prepare the Aider polyglot benchmark: exercises -> instance repos + metadata JSON.

    python prepare_polyglot_dataset.py --benchmark_dir PATH [--output_dir DIR]
    python prepare_polyglot_dataset.py [--benchmark_url URL] [--output_dir DIR]

The input is a checkout in the upstream layout (`<language>/exercises/practice/<slug>/`);
without --benchmark_dir, --benchmark_url (default: the upstream repository) is cloned
shallowly into ~/.cache/polyglot-harness/benchmarks/<hash>/ and reused afterwards. The
output layout is documented in utils/dataset.py; its default location, DEFAULT_DATASET_DIR,
is where harness.py looks without flags.

Re-running gives byte-identical output. Everything is written to a staging directory
beside the output and renamed into place at the end: on any error the previous output
stays as it was. The input checkout is only read.
"""

from __future__ import annotations

if not __package__:  # run from the checkout (python prepare_polyglot_dataset.py, or imported beside it): see _standalone.py
    import _standalone
    __package__ = _standalone.PACKAGE

import sys

from .utils.prepare import main, prepare_dataset  # noqa: F401 - the API

if __name__ == "__main__":
    sys.exit(main())
