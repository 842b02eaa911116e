"""The checkout works as a subpackage of a host repository that has its own `utils`, `agent`
and `tests` (HyperAgents keeps it as `domains/polyglot/`, DGM as `polyglot/`), and still as
its own repository. Each host here is a real directory tree run by a real interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from .conftest import PROJECT_ROOT, SAMPLES_DIR
from .hosts import hyperagents_root, place_checkout


def host_with_own_names(root: Path) -> Path:
    """A host repository whose top-level utils/agent/tests would shadow ours if we imported
    them by those names: each one's modules say whose they are."""
    for name in ("utils", "agent", "tests"):
        (root / name).mkdir(parents=True)
        (root / name / "__init__.py").write_text(f"OWNER = 'host {name}'\n")
    for module in ("dataset", "languages", "outcomes", "sandbox"):
        (root / "utils" / f"{module}.py").write_text("raise ImportError('the host utils was imported')\n")
    place_checkout(root / "evals" / "polyglot")
    return root


def run_in(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=root, capture_output=True, text=True, timeout=600)


def test_the_entry_points_run_as_a_subpackage_beside_the_hosts_own_utils_agent_tests(tmp_path):
    host = host_with_own_names(tmp_path / "host")
    for entry in ("harness", "report", "prepare_polyglot_dataset"):
        completed = run_in(host, "-m", f"evals.polyglot.{entry}", "--help")
        assert completed.returncode == 0, completed.stderr
        assert "usage:" in completed.stdout
    probe = ("import utils, agent, tests\n"
             "from evals.polyglot.harness import harness\n"
             "from evals.polyglot.report import report\n"
             "import evals.polyglot.utils.pipeline.grading\n"
             "print(utils.OWNER, agent.OWNER, tests.OWNER, harness.__module__)")
    completed = run_in(host, "-c", probe)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split() == ["host", "utils", "host", "agent", "host", "tests",
                                        "evals.polyglot.utils.run"]


def test_a_dataset_prepared_from_inside_a_host_repository(tmp_path):
    host = host_with_own_names(tmp_path / "host")
    output = tmp_path / "dataset"
    completed = run_in(host, "-m", "evals.polyglot.prepare_polyglot_dataset", "--benchmark_dir", str(SAMPLES_DIR),
                       "--output_dir", str(output))
    assert completed.returncode == 0, completed.stderr
    metadata = json.loads((output / "polyglot_benchmark_metadata.json").read_text())
    assert len(metadata) == len(list(SAMPLES_DIR.glob("*/exercises/practice/*")))


def test_report_of_an_empty_folder_inside_a_host_repository_is_one_line(tmp_path):
    host = host_with_own_names(tmp_path / "host")
    completed = run_in(host, "-m", "evals.polyglot.report", "--compare", str(tmp_path / "a"), str(tmp_path / "b"))
    assert completed.returncode == 2
    assert len(completed.stderr.strip().splitlines()) == 1


def test_hyperagents_documented_preparation_command_runs_with_its_own_utils_on_the_path(tmp_path):
    """HyperAgents' README: `python -m domains.polyglot.prepare_polyglot_dataset` from its root,
    where its own top-level `utils` package lives (`--benchmark_dir`: offline)."""
    root = hyperagents_root(tmp_path)
    assert (root / "utils" / "gl_utils.py").is_file() and not (root / "utils" / "dataset.py").exists()
    output = tmp_path / "dataset"
    completed = run_in(root, "-m", "domains.polyglot.prepare_polyglot_dataset", "--benchmark_dir", str(SAMPLES_DIR),
                       "--output_dir", str(output))
    assert completed.returncode == 0, completed.stderr
    assert (output / "polyglot_benchmark_metadata.json").is_file()
    completed = run_in(root, "-c", "from domains.polyglot.harness import harness\n"
                                   "from domains.polyglot.report import report\n"
                                   "import utils.constants  # HyperAgents' own, still importable\n"
                                   "assert utils.constants.REPO_NAME == 'hyperagents'\n")
    assert completed.returncode == 0, completed.stderr


def test_standalone_script_and_import_beside_it_still_work():
    completed = run_in(PROJECT_ROOT, "harness.py", "--help")
    assert completed.returncode == 0 and "usage:" in completed.stdout
    completed = run_in(PROJECT_ROOT, "-c", "from harness import harness; from report import report; "
                                           "print(harness.__module__)")
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "polyglot_harness.utils.run"
