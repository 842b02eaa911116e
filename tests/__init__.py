"""The test suite; the checkout is imported as the package polyglot_harness (_standalone.py)."""

import _standalone  # noqa: F401
