"""The fake backend (`--backend fake`): an in-process stand-in for fast tests of the seam, no
engine and no images. A sandbox is a host directory and its commands are host processes in a
cgroup and a network namespace of their own, so it needs root. Good for the conformance suite
and pipeline tests whose commands use relative paths; never for running an agent.

Options: none.
"""

from .provider import FakeProvider, FakeSandbox, open_provider

__all__ = ["FakeProvider", "FakeSandbox", "open_provider"]
