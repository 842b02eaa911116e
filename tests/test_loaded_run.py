"""A run is loaded and scored once (utils/records/loaded_run.py) and every view renders that
object: report.json stays byte-identical on a stored run, each result file is read once per
report.py call (the compare page included), and a new view is one new module in utils/views/.
Pure, no Docker."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from polyglot_harness.utils.records import results as results_module
from polyglot_harness.utils.records.loaded_run import LoadError, load_output_dir, load_run_dir
from polyglot_harness.utils.records.run_dir import RunDirectory
from polyglot_harness.utils.views import registered_views
from polyglot_harness.utils.views import report as report_module

PROJECT_ROOT = Path(__file__).resolve().parent.parent
# A run made by the harness before the run directory had one owner (oracle on the samples):
# its result files, run_settings.json, run report and report.json as that version wrote them.
STORED_RUN = PROJECT_ROOT / "tests" / "fixtures" / "runs" / "demo"


@pytest.fixture
def stored_run(tmp_path: Path) -> Path:
    copy = tmp_path / "demo"
    shutil.copytree(STORED_RUN, copy)
    (copy / "report.json").unlink()
    return copy


def cli(*args: str, cwd: Path = PROJECT_ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "report.py", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_report_json_is_byte_identical_on_the_stored_run(stored_run: Path):
    completed = cli("--output_dir", str(stored_run))
    assert completed.returncode == 0, completed.stderr
    assert (stored_run / "report.json").read_bytes() == (STORED_RUN / "report.json").read_bytes()


def test_the_run_report_of_the_stored_run_is_byte_identical(stored_run: Path):
    """The harness's <name>_0.0.json, recomputed from the loaded results."""
    loaded = load_run_dir(stored_run / "demo_oracle_0")
    recomputed = results_module.build_run_report("demo_oracle", list(loaded.results), loaded.results).run_report_json()
    stored = RunDirectory(stored_run / "demo_oracle_0").report_path
    assert json.dumps(recomputed, indent=2) + "\n" == stored.read_text()


def test_a_loaded_run_knows_its_settings_and_where_each_result_came_from(stored_run: Path):
    loaded = load_output_dir(stored_run)
    run = RunDirectory(stored_run / "demo_oracle_0")
    assert len(loaded.results) == 8 and set(loaded.run_dirs.values()) == {run}
    assert loaded.dataset_hash == "fb9641f0267f61c7" and loaded.allowed_tries == 1
    assert loaded.files("go__word-tally").transcript == run.path / "go__word-tally.md"
    assert loaded.files("go__missing") is None
    assert loaded.report.score_json()["total_instances"] == 8


def test_loading_a_missing_directory_is_a_load_error(tmp_path: Path):
    with pytest.raises(LoadError, match="output directory .* does not exist"):
        load_output_dir(tmp_path / "missing")
    with pytest.raises(LoadError, match="run directory .* does not exist"):
        load_run_dir(tmp_path / "missing_0")


@pytest.fixture
def reads(monkeypatch) -> Counter:
    """Counts the candidate result files read (("result", path): run_settings.json is one, skipped
    as not a result) and the settings read (("settings", run directory))."""
    counted: Counter = Counter()
    read_result, read_settings = results_module.read_instance_result, RunDirectory.read_settings

    def counting_read_result(path: Path):
        counted["result", path.resolve()] += 1
        return read_result(path)

    def counting_read_settings(run_dir: RunDirectory):
        counted["settings", run_dir.path.resolve()] += 1
        return read_settings(run_dir)

    monkeypatch.setattr(results_module, "read_instance_result", counting_read_result)
    monkeypatch.setattr(RunDirectory, "read_settings", counting_read_settings)
    return counted


def test_compare_with_table_json_and_page_loads_each_run_once(stored_run: Path, tmp_path: Path, reads: Counter, capsys):
    other = tmp_path / "other"
    shutil.copytree(stored_run, other)
    run_a, run_b = stored_run / "demo_oracle_0", other / "demo_oracle_0"
    code = report_module.main(["--compare", str(run_a), str(run_b), "--json", str(tmp_path / "cmp.json"),
                               "--html", str(tmp_path / "cmp.html")])
    assert code == 0, capsys.readouterr().err
    expected = {("result", path.resolve()) for run in (run_a, run_b) for path in run.glob("*.json")}
    assert set(reads) == expected | {("settings", run_a.resolve()), ("settings", run_b.resolve())} and set(reads.values()) == {1}, reads
    assert (tmp_path / "cmp.html").is_file() and json.loads((tmp_path / "cmp.json").read_text())["common_instances"] == 8


def test_report_page_and_every_view_load_the_output_dir_once(stored_run: Path, tmp_path: Path, reads: Counter, capsys):
    views = sorted(registered_views())
    code = report_module.main(["--output_dir", str(stored_run), "--html", *sum((["--view", v] for v in views), [])])
    assert code == 0, capsys.readouterr().err
    run = stored_run / "demo_oracle_0"
    expected = {("result", path.resolve()) for path in run.glob("*.json")} | {("settings", run.resolve())}
    assert set(reads) == expected and set(reads.values()) == {1}, reads
    assert {"json", "html"} <= set(views)


NEW_VIEW = '''"""A view added by tests/test_loaded_run.py: one line per bucket."""

from . import RunView


def render(loaded, prices) -> str:
    return "".join(f"{bucket} {len(ids)}\\n" for bucket, ids in loaded.report.ids.items())


VIEW = RunView("bucket_counts", "report.buckets.txt", render)
'''


def test_a_new_view_is_one_new_module_in_utils_views(stored_run: Path, tmp_path: Path):
    """A copy of the package with one file added, and nothing else changed, offers the view."""
    checkout = tmp_path / "checkout"
    shutil.copytree(PROJECT_ROOT / "utils", checkout / "utils", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("_standalone.py", "report.py"):
        shutil.copy(PROJECT_ROOT / name, checkout / name)
    (checkout / "utils" / "views" / "bucket_counts.py").write_text(NEW_VIEW)
    completed = cli("--output_dir", str(stored_run), "--view", "bucket_counts", cwd=checkout)
    assert completed.returncode == 0, completed.stderr
    assert f"bucket_counts: {stored_run / 'report.buckets.txt'}" in completed.stdout
    assert (stored_run / "report.buckets.txt").read_text().splitlines() == [
        "resolved 8", "unresolved 0", "empty_patch 0", "incomplete 0", "error 0"]
    assert cli("--output_dir", str(stored_run), "--view", "bucket_counts").returncode == 2  # not in this checkout


def _relative_imports(path: Path) -> set[str]:
    """The package-relative modules `path` imports, as dotted paths from utils/ ('records.results')."""
    package = path.relative_to(PROJECT_ROOT / "utils").parent.parts
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[:len(package) - node.level + 1]
            found.add(".".join([*base, *(node.module.split(".") if node.module else [])]))
    return found


@pytest.mark.parametrize("path", sorted((PROJECT_ROOT / "utils" / "views").glob("*.py")), ids=lambda path: path.name)
def test_views_import_only_records_the_vocabulary_and_other_views(path: Path):
    allowed = ("records", "outcomes", "views")
    assert [module for module in _relative_imports(path) if module.split(".")[0] not in allowed] == []


@pytest.mark.parametrize("path", sorted((PROJECT_ROOT / "utils" / "records").glob("*.py")), ids=lambda path: path.name)
def test_records_import_neither_the_pipeline_nor_the_seam_nor_backends_nor_views(path: Path):
    forbidden = ("pipeline", "seam", "backends", "views", "run")
    assert [module for module in _relative_imports(path) if module.split(".")[0] in forbidden] == []
