"""The fake backend: an in-process stand-in for fast tests of the seam, no engine and no images.
It is the tests' own, not a backend users pick: tests/conftest.py registers it as `fake` for the
test session (by its dotted module path, as any backend outside utils/backends/ is named). A sandbox is a host directory and its commands are host processes in a
cgroup and a network namespace of their own, so it needs root. Good for the conformance suite
and pipeline tests whose commands use relative paths; never for running an agent.

Options: none.
"""

from .provider import FakeProvider, FakeSandbox, open_provider

__all__ = ["FakeProvider", "FakeSandbox", "open_provider"]
