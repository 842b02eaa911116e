"""The architecture, held against the code: which package may import which (read from the AST
of every module, function-local and TYPE_CHECKING imports included), and the placement rule
(the checkout works inside a host repository with its own `utils`, `agent` and `tests`).

Layers, lowest first (docs/architecture.md): the vocabulary and the checkout's paths;
judging (pure); languages; records; the seam; backends (below the seam, the only importers of
docker and ray); pipeline; views (records and the vocabulary only); the run and the CLIs; the
entry points. A module may import its own package and the layers its row allows, nothing else.
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
    "pipeline": {"base", "judging", "languages", "records", "seam"},
    "views": {"base", "records"},
    "top": {"base", "judging", "languages", "records", "seam", "pipeline", "views"},
    "entry": {"top", "views"},
}


def layer_of(module: str) -> str:
    """`utils.pipeline.grading` -> "pipeline"; the package's own top-level modules by name."""
    parts = module.split(".")
    if parts[0] != "utils":
        return "entry"
    if len(parts) == 1 or parts[1] in ("outcomes", "checkout"):
        return "base"
    return parts[1] if parts[1] in ALLOWED else "top"


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
            if target_layer != layer and target_layer not in ALLOWED[layer]:
                violations.append(f"{_where(item)} ({layer} may not import {target_layer})")
    return violations


def test_layers_import_only_downwards():
    assert layering_violations(package_modules()) == []


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
    ("from polyglot_harness.utils.run import harness\n", "utils/records/x.py", "records may not import top"),
])
def test_an_upward_import_is_reported(tmp_path, monkeypatch, source, where, expected):
    module = PROJECT_ROOT / where
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: source)
    assert any(expected in line for line in layering_violations([module]))


def test_a_top_level_utils_import_is_reported(monkeypatch):
    monkeypatch.setattr(Path, "read_text", lambda self, encoding=None: "from utils.dataset import load_dataset\n")
    item, = imports_of(PROJECT_ROOT / "tests" / "test_x.py")
    assert (item.target, item.inside) == ("utils.dataset", False)
