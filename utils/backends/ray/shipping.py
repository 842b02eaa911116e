"""What a Ray node needs of the checkout, staged for Ray's runtime_env `working_dir`.

Actors and node tasks are pickled by reference to this backend's modules, so a node imports
them under the package name the driver uses (PACKAGE: "polyglot_harness" standalone,
"domains.polyglot" inside HyperAgents). A node needs:
- the packages the Ray backend reaches through its imports, followed transitively from its
  relative imports (and absolute ones through PACKAGE), so a new import ships itself. A
  package reached is shipped with all its own files (a package that finds its members by
  listing its folder still finds them there) and its non-package folders, never with a
  subpackage nothing reaches (the pipeline, records, views, other backends stay home);
- the `__init__.py` of every package above those;
- the image recipes (docker/), which the nodes build from.
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

from ...checkout import PROJECT_ROOT, RECIPES_DIR

PACKAGE = __package__.rsplit(".utils.", 1)[0]
ENTRY = Path(__file__).resolve().parent / "__init__.py"
_IGNORED = shutil.ignore_patterns("__pycache__", "*.pyc")


def _module_file(base: Path) -> Path | None:
    """The module (file.py) or package (dir/__init__.py) at `base` (a path without suffix)."""
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imported(module: Path) -> set[Path]:
    """Files of the checkout that `module` imports (relatively, or through PACKAGE)."""
    found: set[Path] = set()
    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
        targets: list[tuple[Path, list[str]]] = []
        if isinstance(node, ast.ImportFrom):
            names = [alias.name for alias in node.names]
            if node.level:
                base = module.parent
                for _ in range(node.level - 1):
                    base = base.parent
                targets.append((base.joinpath(*(node.module or "").split(".")) if node.module else base, names))
            elif node.module and node.module.startswith(PACKAGE + "."):
                targets.append((PROJECT_ROOT.joinpath(*node.module[len(PACKAGE) + 1:].split(".")), names))
        elif isinstance(node, ast.Import):
            targets += [(PROJECT_ROOT.joinpath(*alias.name[len(PACKAGE) + 1:].split(".")), [])
                        for alias in node.names if alias.name.startswith(PACKAGE + ".")]
        for base, names in targets:
            found.update(path for path in [_module_file(base)] + [_module_file(base / name) for name in names]
                         if path is not None)
    return found


def reached_packages(entry: Path = ENTRY) -> set[Path]:
    """Folders (packages) of every module reached from `entry` by its imports, transitively."""
    seen: set[Path] = set()
    todo = [entry]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        todo += [path for path in _imported(module) if path not in seen]
        # Importing a module imports the packages above it first.
        todo += [package / "__init__.py" for package in module.parents
                 if package.is_relative_to(PROJECT_ROOT) and package != PROJECT_ROOT
                 and (package / "__init__.py").is_file()]
    return {module.parent for module in seen}


def stage(destination: Path) -> list[str]:
    """Copy what nodes need under destination/<PACKAGE as folders>/; the paths shipped,
    relative to the checkout (for the log and the tests)."""
    root = destination.joinpath(*PACKAGE.split("."))
    shipped: list[str] = []
    for package in sorted(reached_packages()):
        for path in sorted(package.iterdir()):
            if path.name == "__pycache__" or (path.is_dir() and (path / "__init__.py").exists()):
                continue  # subpackages ship only when reached
            target = root / path.relative_to(PROJECT_ROOT)
            target.parent.mkdir(parents=True, exist_ok=True)
            if path.is_dir():
                shutil.copytree(path, target, ignore=_IGNORED)
            elif path.suffix != ".pyc":
                shutil.copy2(path, target)
            shipped.append(path.relative_to(PROJECT_ROOT).as_posix())
    shutil.copytree(RECIPES_DIR, root / RECIPES_DIR.relative_to(PROJECT_ROOT), ignore=_IGNORED)
    shipped.append(RECIPES_DIR.relative_to(PROJECT_ROOT).as_posix())
    return shipped
