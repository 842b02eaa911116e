"""pytest plugin of the trusted test process (`-p polyglot_bridge.plugin`).

Imported before collection, it installs a meta-path finder: a module that resolves to a file
under the test root (the working directory) and is not a test file or conftest.py is a
solution module, so the test process gets a SolutionModule proxy served by the solver and
never executes the file. A module that exists outside the root too (the standard library's,
an installed package's) is always that one. POLYGLOT_SOCKET is where the solver connects; POLYGLOT_EVENTS (if
set) receives what the trusted side caught, as JSON, when the session ends.
"""

from __future__ import annotations

import fnmatch
import importlib.abc
import importlib.machinery
import json
import os
import sys
from typing import Any

from .trusted import BRIDGE, EVENTS

TEST_FILE_PATTERNS = ("test_*.py", "*_test.py", "conftest.py")


class SolutionLoader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> Any:
        module = BRIDGE.import_module(spec.name)
        object.__setattr__(module, "__spec__", spec)
        object.__setattr__(module, "__loader__", self)
        return module

    def exec_module(self, module: Any) -> None:
        pass  # the solver ran it


class SolutionFinder(importlib.abc.MetaPathFinder):
    """Every module found under `root` that is not a test file is the solver's."""

    def __init__(self, root: str):
        self.root = os.path.realpath(root)

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if not self._may_be_under_root(fullname, path):
            return None  # the common case (the stdlib, pytest): no second path search
        if path is None:
            # A module that exists outside the root is never the exercise's: the standard
            # library's asyncio, not a patch's asyncio.py, which would be a proxy here and let
            # the solution answer for it (red team 17: unittest.mock, imported late by a test,
            # asked the solution's asyncio whether what it patched was a coroutine function).
            elsewhere = self._outside_root(fullname)
            if elsewhere is not None:
                return elsewhere
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not self._is_solution(spec):
            return None
        return importlib.machinery.ModuleSpec(fullname, SolutionLoader(), origin=spec.origin)

    def _may_be_under_root(self, fullname: str, path: Any) -> bool:
        if path is not None:  # a submodule: only a package under the root has it there
            return any(os.path.realpath(entry).startswith(self.root + os.sep) for entry in path)
        name = os.path.join(self.root, fullname)
        return os.path.isdir(name) or any(entry.startswith(fullname + ".") for entry in self._root_entries())

    def _outside_root(self, fullname: str) -> importlib.machinery.ModuleSpec | None:
        for finder in (importlib.machinery.BuiltinImporter, importlib.machinery.FrozenImporter):
            spec = finder.find_spec(fullname)
            if spec is not None:
                return spec
        entries = [entry for entry in sys.path if not self._under_root(entry)]
        return importlib.machinery.PathFinder.find_spec(fullname, entries)

    def _under_root(self, entry: str) -> bool:
        real = os.path.realpath(entry or os.getcwd())
        return real == self.root or real.startswith(self.root + os.sep)

    def _root_entries(self) -> list[str]:
        try:
            return os.listdir(self.root)
        except OSError:
            return []

    def _is_solution(self, spec: importlib.machinery.ModuleSpec) -> bool:
        locations = [spec.origin] if spec.origin and spec.has_location else []
        locations += list(spec.submodule_search_locations or ())
        inside = [os.path.realpath(location) for location in locations
                  if os.path.realpath(location).startswith(self.root + os.sep)]
        if not inside:
            return False
        name = os.path.basename(inside[0])
        return not any(fnmatch.fnmatchcase(name, pattern) for pattern in TEST_FILE_PATTERNS)


def install(root: str, socket_path: str) -> None:
    BRIDGE.listen(socket_path)
    sys.meta_path.insert(0, SolutionFinder(root))


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    events_path = os.environ.get("POLYGLOT_EVENTS")
    if events_path:
        with open(events_path, "w", encoding="utf-8") as handle:
            json.dump(EVENTS.counts, handle)


def pytest_unconfigure(config: Any) -> None:
    if BRIDGE.channel is not None:
        BRIDGE.channel.sock.close()  # the solver's serve loop ends, and so does the solver
    if BRIDGE.listener is not None:
        BRIDGE.listener.close()


install(os.getcwd(), os.environ["POLYGLOT_SOCKET"])
