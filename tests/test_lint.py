"""The linter the suite runs (ruff, configured in pyproject.toml, pinned in requirements.txt) passes on
the checkout, and its configuration is the one read: a planted finding is reported. No Docker."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent


def ruff(*arguments: str, cwd: Path = PROJECT_ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", *arguments], cwd=cwd, capture_output=True, text=True,
                          timeout=300)


def test_the_checkout_passes_the_linter():
    checked = ruff("check", "--no-cache", ".")
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_the_linter_reports_a_planted_unused_import(tmp_path: Path):
    shutil.copy(PROJECT_ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "planted.py").write_text("import os\n")
    checked = ruff("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path)
    assert checked.returncode == 1 and "planted.py:1:8: F401" in checked.stdout


def test_no_test_module_looks_the_benchmark_fixtures_up_by_name():
    """conftest orders the modules that use the gate's dataset or the benchmark's checkout last
    by their tests' fixture names; one looked up at run time (`request.getfixturevalue`) is
    invisible there, and its module then waits for the gate's preparation among the others
    (test_rust_variants held a CI run up 427 s so)."""
    from .conftest import BENCHMARK_FIXTURES

    tests = Path(__file__).resolve().parent
    lookups = [f"{path.name}: {name}" for path in sorted(tests.glob("test_*.py")) for name in BENCHMARK_FIXTURES
               if f'getfixturevalue("{name}")' in path.read_text() or f"getfixturevalue('{name}')" in path.read_text()]
    assert lookups == []


def test_a_module_beside_the_gate_uses_no_gate_dataset():
    """A module marked beside_gate runs while the gate's preparation runs (tests/conftest.py):
    one that also takes the gate's dataset would wait for it there, holding back every module
    after it (conftest refuses such a run at collection; this names the module first)."""
    from .conftest import BESIDE_GATE, GATE_FIXTURE

    tests = Path(__file__).resolve().parent
    both = [path.name for path in sorted(tests.glob("test_*.py"))
            if f"mark.{BESIDE_GATE}" in path.read_text() and GATE_FIXTURE in path.read_text()]
    assert both == []
