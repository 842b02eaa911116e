"""Views: renderers of one loaded run (utils/records/loaded_run.py: loaded and scored once).

A view is ONE module in this package that defines

    VIEW = RunView(name="my_view", file_name="report.my_view.txt", render=render)

where `render(loaded: LoadedRun, prices: PriceTable | None) -> str` renders the run from the
LoadedRun alone (it reads no result file or run_settings.json itself). report.py finds every
module's VIEW here (`registered_views`): `python report.py --output_dir runs/ --view my_view`
writes `runs/report.my_view.txt`; nothing else changes. report.json (report.py) and report.html
(html.py) are views too. Views import only utils/records, utils/outcomes and each other
(tests/test_import_rules.py).
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:  # annotations only: the view modules import this one
    from ..records.loaded_run import LoadedRun
    from .pricing import PriceTable


@dataclass(frozen=True)
class RunView:
    """A report view of a loaded output directory."""

    name: str                                                   # --view NAME
    file_name: str                                              # written as <output_dir>/<file_name>
    render: Callable[["LoadedRun", "PriceTable | None"], str]  # the file's text


SHOWN_K = (2, 3, 5, 10)  # the k a summary shows besides 1 and K (report.json keeps every k)


def shown_k(attempts: int) -> list[str]:
    """The k (report.json's keys) of pass@k and pass^k that the console and the page show
    besides 1: SHOWN_K and K itself (--attempts 40 printed all 78 estimates)."""
    return [str(k) for k in range(2, attempts + 1) if k in SHOWN_K or k == attempts]


def registered_views() -> dict[str, RunView]:
    """Every view of this package by name: the VIEW of each of its modules."""
    views: dict[str, RunView] = {}
    for module_info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name):
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        view = getattr(module, "VIEW", None)
        if isinstance(view, RunView):
            views[view.name] = view
    return views
