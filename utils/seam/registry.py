"""Backends, chosen by name: a backend is a package below the seam (utils/backends/<name>/)
whose module has `open_provider(**options)`; `register` adds one (a dotted module path also
works wherever a name does)."""

from __future__ import annotations

import importlib

from .protocol import SandboxError, SandboxProvider

BACKENDS = {"docker": "..backends.docker.provider", "ray": "..backends.ray.provider"}


def open_provider(name: str = "docker", **options: str) -> SandboxProvider:
    """The provider of backend `name`: its module's `open_provider(**options)` (options the
    backend takes, e.g. the Ray backend's `address`)."""
    if name not in BACKENDS:
        raise SandboxError(f"unknown sandbox backend {name!r} (known: {', '.join(sorted(BACKENDS))})")
    return importlib.import_module(BACKENDS[name], __package__).open_provider(**options)
