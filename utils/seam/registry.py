"""Backends, chosen by name.

A backend is a package below the seam, registered by where it sits: the package
utils/backends/<name>/ IS the backend `<name>` (adding one touches no file outside it). Its
`__init__.py` exposes `open_provider(**options)`. Wherever a name is accepted, a dotted module
path is too (`--backend mypkg.mybackend`): a backend that lives outside this checkout.

Options (`--backend_option KEY=VALUE`, `--ray_address` for Ray) reach the backend as keyword
arguments of its `open_provider`, values as given (strings from the command line). An option
the backend's `open_provider` does not name is refused here, for every backend alike, with
one SandboxError naming it.
"""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path
from types import ModuleType

from .errors import SandboxError
from .protocol import SandboxProvider

BACKENDS_DIR = Path(__file__).resolve().parent.parent / "backends"
_BACKENDS_PACKAGE = __package__.rsplit(".", 1)[0] + ".backends"


def registered_backends() -> dict[str, str]:
    """name -> module of every backend package under utils/backends/: what users can pick."""
    return {path.name: f"{_BACKENDS_PACKAGE}.{path.name}" for path in sorted(BACKENDS_DIR.iterdir())
            if (path / "__init__.py").is_file()}


# name -> the module whose open_provider opens it; tests add their own (the fake backend) or
# point a name elsewhere.
BACKENDS: dict[str, str] = registered_backends()


def is_backend(name: str) -> bool:
    """A registered name, or a dotted path (checked when opened: importing it may be costly)."""
    return name in BACKENDS or "." in name


def backend_module(name: str) -> ModuleType:
    """The module of backend `name` (a registered name or a dotted module path)."""
    if not is_backend(name):
        raise SandboxError(f"unknown sandbox backend {name!r} (known: {', '.join(sorted(BACKENDS))}; "
                           f"or a dotted module path)")
    module_name = BACKENDS.get(name, name)
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise SandboxError(f"sandbox backend {name!r}: cannot import {module_name}: {error}") from error
    if not callable(getattr(module, "open_provider", None)):
        raise SandboxError(f"sandbox backend {name!r}: {module_name} has no open_provider(**options)")
    return module


def open_provider(name: str = "docker", **options: object) -> SandboxProvider:
    """The provider of backend `name`, opened with `options` (see the module docstring)."""
    opener = backend_module(name).open_provider
    _check_options(name, opener, options)
    return opener(**options)


def _check_options(name: str, opener, options: dict[str, object]) -> None:
    parameters = inspect.signature(opener).parameters
    if any(parameter.kind is inspect.Parameter.VAR_KEYWORD for parameter in parameters.values()):
        return  # the backend checks its options itself
    known = [key for key, parameter in parameters.items()
             if parameter.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    for key in options:
        if key not in known:
            raise SandboxError(f"sandbox backend {name!r} takes no option {key!r} "
                               f"(its options: {', '.join(known) or 'none'})")
