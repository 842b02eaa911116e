"""The checkout works as a subpackage of a host repository that has its own `utils`, `agent`
and `tests` (HyperAgents keeps it as `domains/polyglot/`, DGM as `polyglot/`), and still as
its own repository. Each host here is a real directory tree run by a real interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from polyglot_harness.utils.checkout import default_dataset_dir
from polyglot_harness.utils.records.dataset import METADATA_FILENAME

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
                                        "evals.polyglot.utils.run.flow"]


def test_a_dataset_prepared_from_inside_a_host_repository(tmp_path):
    host = host_with_own_names(tmp_path / "host")
    output = tmp_path / "dataset"
    completed = run_in(host, "-m", "evals.polyglot.prepare_polyglot_dataset", "--benchmark_dir", str(SAMPLES_DIR),
                       "--output_dir", str(output), "--fast")
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
                       "--output_dir", str(output), "--fast")
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
    assert completed.stdout.strip() == "polyglot_harness.utils.run.flow"


def tree_files(root: Path) -> set[str]:
    return {str(path.relative_to(root)) for path in root.rglob("*")
            if not path.is_dir() and "__pycache__" not in path.parts}


def test_default_preparation_writes_nothing_inside_the_checkout_but_the_metadata_link(tmp_path):
    """The loops copy the checkout into what their meta agent edits (utils/checkout.py): the
    default dataset goes to the checkout's data folder, and the upstream metadata path is a link
    out of the checkout (its name is one both hosts leave out of agents' copies)."""
    host = host_with_own_names(tmp_path / "host")
    checkout = host / "evals" / "polyglot"
    before = tree_files(checkout)
    completed = run_in(host, "-m", "evals.polyglot.prepare_polyglot_dataset", "--benchmark_dir", str(SAMPLES_DIR),
                       "--fast")
    assert completed.returncode == 0, completed.stderr
    dataset = default_dataset_dir(checkout)
    assert completed.stdout.rstrip().endswith(f"into {dataset}")
    assert not dataset.resolve().is_relative_to(checkout.resolve())
    assert tree_files(checkout) - before == {METADATA_FILENAME}
    link = checkout / METADATA_FILENAME
    assert link.is_symlink() and link.resolve() == (dataset / METADATA_FILENAME).resolve()
    probe = ("from evals.polyglot.utils.run.settings import checked, run_config\n"
             f"print(run_config(checked({{'dataset_path': {str(link)!r}}})).dataset)")
    completed = run_in(host, "-c", probe)
    assert completed.returncode == 0, completed.stderr
    assert Path(completed.stdout.strip()) == dataset.resolve(), "upstream's default dataset_path reaches it"


def test_a_data_folder_inside_the_checkout_is_refused_by_the_default_preparation(tmp_path):
    host = host_with_own_names(tmp_path / "host")
    checkout = host / "evals" / "polyglot"
    environment = {**os.environ, "POLYGLOT_HARNESS_HOME": str(checkout / "data")}
    completed = subprocess.run([sys.executable, "-m", "evals.polyglot.prepare_polyglot_dataset", "--benchmark_dir",
                                str(SAMPLES_DIR), "--fast"], cwd=host, env=environment, capture_output=True, text=True, timeout=600)
    assert completed.returncode == 1
    assert len(completed.stderr.strip().splitlines()) == 1 and "inside the checkout" in completed.stderr
    assert not (checkout / "data").exists() and not (checkout / METADATA_FILENAME).exists()
