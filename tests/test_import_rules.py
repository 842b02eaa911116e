"""The architecture, held against the code: which package may import which (read from the AST
of every module, function-local and TYPE_CHECKING imports included), and the placement rule
(the checkout works inside a host repository with its own `utils`, `agent` and `tests`).

Layers, lowest first (docs/architecture.md): the vocabulary and the checkout's paths;
judging (pure); languages; records; the seam; backends (below the seam, the only importers of
docker and ray); the agent's preparation (agents); pipeline; views (records and the vocabulary
only); the dataset's preparation (prepare); the run and its CLI (run); the entry points. A module
may import its own package and the layers its row allows, nothing else; every module of utils/
is in a layer (no flat floor of modules beside the packages). Inside the run and the preparation
the modules are ordered too (RUN_ORDER, PREPARE_ORDER), no module graph has a cycle, and no module
imports another's private name.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "polyglot_harness"
# Third-party modules only a backend may import.
BACKEND_ONLY = ("docker", "ray")
# Top-level names a host repository owns (HyperAgents has utils/, agent/; DGM tests/ too).
HOST_OWNED = ("utils", "agent", "tests", "harness", "report", "prepare_polyglot_dataset")

# layer -> the layers it may import (its own is always allowed).
ALLOWED: dict[str, set[str]] = {
    "base": set(),                                     # utils/outcomes.py, utils/checkout.py
    "judging": {"base"},
    "languages": {"base", "judging"},
    "records": {"base", "judging", "languages"},
    "seam": {"base", "judging", "languages"},
    "backends": {"base", "judging", "languages", "seam"},
    "agents": {"base", "judging", "seam"},
    "pipeline": {"base", "judging", "languages", "records", "seam"},
    "views": {"base", "records"},
    "prepare": {"base", "judging", "languages", "records", "seam", "pipeline"},
    "run": {"base", "judging", "languages", "records", "seam", "agents", "pipeline", "views"},
    "entry": {"run", "prepare", "views"},
}
BASE_MODULES = ("outcomes", "checkout")
# The run's modules, lowest first: each imports only those before it (flow is harness()).
RUN_ORDER = ("stages", "settings", "attempts", "plan", "provision", "execute", "flow", "evaluate", "cli")
PREPARE_ORDER = ("exercises", "recording", "fetch", "dataset", "cli")
ORDERED = {"run": RUN_ORDER, "prepare": PREPARE_ORDER}


def layer_of(module: str) -> str:
    """`utils.pipeline.grading` -> "pipeline"; "unplaced" for a module of utils/ in no layer."""
    parts = module.split(".")
    if parts[0] != "utils":
        return "entry"
    if len(parts) == 1 or parts[1] in BASE_MODULES:
        return "base"
    return parts[1] if parts[1] in ALLOWED else "unplaced"


@dataclass(frozen=True)
class Import:
    path: Path
    line: int
    target: str  # absolute inside the package ("utils.seam.protocol"), else as written
    inside: bool  # a module of this package


def _module_name(path: Path) -> str:
    relative = path.relative_to(PROJECT_ROOT).with_suffix("")
    parts = list(relative.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(path: Path, node: ast.ImportFrom) -> tuple[str, bool]:
    if node.level == 0:
        module = node.module or ""
        if module == PACKAGE or module.startswith(PACKAGE + "."):
            return module[len(PACKAGE) + 1:], True
        return module, False
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    base = package[:len(package) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else [])), True


def imports_of(path: Path) -> list[Import]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                inside = alias.name.startswith(PACKAGE + ".")
                target = alias.name[len(PACKAGE) + 1:] if inside else alias.name
                found.append(Import(path, node.lineno, target, inside))
        elif isinstance(node, ast.ImportFrom):
            target, inside = _resolve(path, node)
            found.append(Import(path, node.lineno, target, inside))
    return found


def package_modules() -> list[Path]:
    entry_points = [PROJECT_ROOT / name for name in ("harness.py", "report.py", "prepare_polyglot_dataset.py")]
    return entry_points + sorted((PROJECT_ROOT / "utils").rglob("*.py"))


def every_python_file() -> list[Path]:
    skipped = {".git", "node_modules", "datasets", "runs"}
    return sorted(path for path in PROJECT_ROOT.rglob("*.py")
                  if not skipped & set(path.relative_to(PROJECT_ROOT).parts)
                  and "fixtures" not in path.relative_to(PROJECT_ROOT).parts[:2])


def _where(item: Import) -> str:
    return f"{item.path.relative_to(PROJECT_ROOT)}:{item.line} imports {item.target}"


def layering_violations(paths: list[Path]) -> list[str]:
    violations = []
    for path in paths:
        layer = layer_of(_module_name(path))
        for item in imports_of(path):
            if not item.inside:
                continue
            target_layer = layer_of(item.target)
            if target_layer != layer and target_layer not in ALLOWED.get(layer, set()):
                violations.append(f"{_where(item)} ({layer} may not import {target_layer})")
    return violations


def order_violations(paths: list[Path]) -> list[str]:
    """Inside utils/run/ and utils/prepare/: a module imports only the modules before it in its
    package's order (the package's __init__ may import any)."""
    violations = []
    for path in paths:
        parts = _module_name(path).split(".")
        order = ORDERED.get(parts[1]) if len(parts) == 3 and parts[0] == "utils" else None
        for item in imports_of(path) if order else ():
            target = item.target.split(".")
            if item.inside and target[:2] == parts[:2] and len(target) > 2:
                rank = order.index(target[2]) if target[2] in order else len(order)
                if rank >= (order.index(parts[2]) if parts[2] in order else -1):
                    violations.append(f"{_where(item)} ({parts[2]} may not import {target[2]}: {' < '.join(order)})")
    return violations


def import_graph(paths: list[Path]) -> dict[str, set[str]]:
    """module -> the modules of this package it imports (a name imported from a package counts
    as the package's __init__, or the submodule when there is one)."""
    known = {_module_name(path) for path in paths}
    graph: dict[str, set[str]] = {}
    for path in paths:
        targets = graph.setdefault(_module_name(path), set())
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith(PACKAGE)):
                target, _ = _resolve(path, node)
                submodules = {f"{target}.{alias.name}" for alias in node.names} & known
                targets.update(submodules or ({target} & known))
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected knot, found by depth-first search."""
    found, state = [], {}

    def visit(module: str, stack: list[str]) -> None:
        state[module] = "open"
        for target in sorted(graph.get(module, ())):
            if state.get(target) == "open":
                found.append(stack[stack.index(target):] + [target])
            elif target not in state:
                visit(target, stack + [target])
        state[module] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    return found


def private_imports(paths: list[Path]) -> list[str]:
    """`from .other import _helper`: a private name borrowed across modules."""
    return [f"{path.relative_to(PROJECT_ROOT)}:{node.lineno} imports {alias.name} from {node.module or '.'}"
            for path in paths for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path)))
            if isinstance(node, ast.ImportFrom) and node.level
            for alias in node.names if alias.name.startswith("_")]


def test_layers_import_only_downwards():
    assert layering_violations(package_modules()) == []


def test_every_module_of_utils_is_in_a_layer():
    """A new module at the top of utils/ (the flat floor issue 34 removed) must join a package."""
    unplaced = [str(path.relative_to(PROJECT_ROOT)) for path in package_modules()
                if layer_of(_module_name(path)) == "unplaced"]
    assert unplaced == []


def test_the_run_and_the_preparation_import_only_backwards_in_their_order():
    listed = {name: {path.stem for path in (PROJECT_ROOT / "utils" / name).glob("*.py")} - {"__init__"}
              for name in ORDERED}
    assert listed == {name: set(order) for name, order in ORDERED.items()}, "a new module takes its place in the order"
    assert order_violations(package_modules()) == []


def test_no_import_cycle():
    assert cycles(import_graph(package_modules())) == []


def test_no_module_borrows_another_modules_private_name():
    assert private_imports(package_modules()) == []


def test_nothing_above_the_seam_imports_docker_or_ray():
    offending = [_where(item) for path in package_modules() for item in imports_of(path)
                 if not item.inside and item.target.split(".")[0] in BACKEND_ONLY
                 and layer_of(_module_name(path)) != "backends"]
    assert offending == []


def test_judging_imports_no_sandbox_and_views_only_records():
    """Spelled out because docs/architecture.md states both: the pure judging code never sees a sandbox,
    and a view renders a loaded run, nothing else."""
    for path in package_modules():
        layer = layer_of(_module_name(path))
        targets = {layer_of(item.target) for item in imports_of(path) if item.inside} - {layer}
        if layer == "judging":
            assert targets <= {"base"}, path
        if layer == "views":
            assert targets <= {"base", "records"}, path


def test_no_module_imports_a_name_a_host_repository_owns():
    """Inside HyperAgents (`domains/polyglot/`) a top-level `utils` is HyperAgents' own: the
    package, its tests and bench import themselves relatively or as polyglot_harness."""
    offending = [_where(item) for path in every_python_file() for item in imports_of(path)
                 if not item.inside and item.target.split(".")[0] in HOST_OWNED]
    assert offending == []


# --- the rule itself can fail ------------------------------------------------------------------

@pytest.mark.parametrize("source, where, expected", [
    ("from ..backends.docker import provider\n", "utils/pipeline/x.py", "pipeline may not import backends"),
    ("from ..pipeline import grading\n", "utils/views/x.py", "views may not import pipeline"),
    ("from ..seam import protocol\n", "utils/judging/x.py", "judging may not import seam"),
    ("from polyglot_harness.utils.run import harness\n", "utils/records/x.py", "records may not import run"),
    ("from ..run.settings import RunConfig\n", "utils/agents/x.py", "agents may not import run"),
    ("from ..run import flow\n", "utils/prepare/x.py", "prepare may not import run"),
    ("from ..prepare.dataset import prepare_dataset\n", "utils/run/x.py", "run may not import prepare"),
    ("from ..agents.prepare import prepare_agent\n", "utils/seam/x.py", "seam may not import agents"),
    ("from .checkout import DATA_HOME\n", "utils/helpers.py", "unplaced may not import base"),
])
def test_an_upward_import_is_reported(tmp_path, monkeypatch, source, where, expected):
    module = PROJECT_ROOT / where
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: source)
    assert any(expected in line for line in layering_violations([module]))


def test_a_top_level_utils_import_is_reported(monkeypatch):
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: "from utils.dataset import load_dataset\n")
    item, = imports_of(PROJECT_ROOT / "tests" / "test_x.py")
    assert (item.target, item.inside) == ("utils.dataset", False)


@pytest.mark.parametrize("source, where, expected", [
    ("from .flow import harness\n", "utils/run/plan.py", "plan may not import flow"),
    ("from .cli import main\n", "utils/run/evaluate.py", "evaluate may not import cli"),
    ("from .settings import RunConfig\n", "utils/run/stages.py", "stages may not import settings"),
    ("from .dataset import prepare_dataset\n", "utils/prepare/exercises.py", "exercises may not import dataset"),
])
def test_an_import_back_up_the_order_is_reported(monkeypatch, source, where, expected):
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: source)
    assert any(expected in line for line in order_violations([PROJECT_ROOT / where]))


def test_a_cycle_is_reported():
    graph = {"utils.run.plan": {"utils.run.provision"}, "utils.run.provision": {"utils.run.plan"}, "utils.x": set()}
    assert cycles(graph) == [["utils.run.plan", "utils.run.provision", "utils.run.plan"]]


def test_a_borrowed_private_name_is_reported(monkeypatch):
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: "from .provision import _default_limits\n")
    assert private_imports([PROJECT_ROOT / "utils" / "run" / "evaluate.py"]) == [
        "utils/run/evaluate.py:1 imports _default_limits from provision"]
