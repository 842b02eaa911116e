"""The seam's errors: everything a backend raises when it cannot do what the protocol asks.

Pipeline code catches `SandboxError` (and its subclasses) and turns it into an `incomplete`
verdict or a retry; nothing else a backend raises is expected to cross the seam."""

from __future__ import annotations


class SandboxError(RuntimeError):
    """The sandbox could not be created, started, copied to or from, or its backend failed."""


class CommandNotStarted(SandboxError):
    """The backend refused to start a command (e.g. the sandbox is gone): nothing ran."""


class ImageError(SandboxError):
    """An image could not be found, pulled or built."""
