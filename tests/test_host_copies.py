"""What the loops copy of this checkout holds no answers. HyperAgents' `setup_initial_gen` copies
its whole repository, this checkout at domains/polyglot/ included, into the generation repository
its meta agent edits, leaving out only a few names (`polyglot/polyglot-benchmark`,
`polyglot/polyglot_benchmark_metadata.json`, `polyglot/predictions`, `polyglot/logs`, ...). Here
its real function (from ../shared/data/hyperagents-59a68f6.tar.gz, unmodified) copies a hosted
checkout after HyperAgents' documented preparation into the default dataset folder: no reference
solution, hidden test file or instance repository may reach the copy. (DGM's image build leaves
out its whole `polyglot/` in its .dockerignore.)"""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from polyglot_harness.utils.checkout import default_dataset_dir
from polyglot_harness.utils.records.dataset import METADATA_FILENAME, load_dataset

from .hosts import hyperagents_root, run_python

SLUG = "leak-probe"
INSTANCE_ID = f"python__{SLUG}"

COPY_GENERATION = """
import os, sys
sys.path.insert(0, os.getcwd())
from utils.gl_utils import setup_initial_gen

root_dir, _ = setup_initial_gen(sys.argv[1], ["polyglot"], copy_eval=False)
print(root_dir)
"""


def write_probe_exercise(benchmark: Path, reference_marker: str, test_marker: str) -> None:
    """One exercise of our own whose reference solution and hidden test each carry a marker
    that appears nowhere else (the checkout's own samples/ hold references too)."""
    exercise = benchmark / "python" / "exercises" / "practice" / SLUG
    files = {
        ".docs/instructions.md": "# Leak probe\n\nReturn the answer.\n",
        ".meta/config.json": json.dumps({"authors": ["tests"], "files": {
            "solution": ["leak_probe.py"], "test": ["leak_probe_test.py"], "example": [".meta/example.py"]}}),
        ".meta/example.py": f"def answer():\n    return {reference_marker!r}\n",
        "leak_probe.py": "def answer():\n    pass\n",
        "leak_probe_test.py": ("import unittest\nfrom leak_probe import answer\n\n\n"
                               "class LeakProbeTest(unittest.TestCase):\n    def test_answer(self):\n"
                               f"        self.assertTrue(answer())  # {test_marker}\n"),
    }
    for relative, text in files.items():
        (exercise / relative).parent.mkdir(parents=True, exist_ok=True)
        (exercise / relative).write_text(text, encoding="utf-8")


def files_holding(root: Path, markers: list[str]) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*")
                  if path.is_file() and any(marker.encode() in path.read_bytes() for marker in markers))


def git_repositories(root: Path) -> list[str]:
    return sorted(str(path.parent.relative_to(root)) for path in root.rglob("HEAD")
                  if (path.parent / "objects").is_dir())


def test_hyperagents_generation_repository_holds_no_reference_hidden_test_or_instance_repo(tmp_path):
    root = hyperagents_root(tmp_path)
    markers = [f"reference-{uuid.uuid4().hex}", f"hidden-test-{uuid.uuid4().hex}"]
    write_probe_exercise(tmp_path / "benchmark", *markers)
    completed = run_python(root, "-m", "domains.polyglot.prepare_polyglot_dataset", "--benchmark_dir",
                           str(tmp_path / "benchmark"), "--fast", timeout=600)  # HyperAgents' command, default folder
    assert completed.returncode == 0, completed.stderr[-3000:]
    dataset = default_dataset_dir(root / "domains" / "polyglot")
    instance, = load_dataset(dataset)
    assert instance.instance_id == INSTANCE_ID and files_holding(dataset, markers), "the probe holds the answers"
    assert json.loads((root / "domains/polyglot" / METADATA_FILENAME).read_text())[0]["instance_id"] == INSTANCE_ID

    completed = run_python(root, "-c", COPY_GENERATION, str(tmp_path / "outputs"), timeout=600)
    assert completed.returncode == 0, completed.stderr[-3000:]
    copied = Path(completed.stdout.strip().splitlines()[-1]) / "domains" / "polyglot"
    assert (copied / "harness.py").is_file(), "the checkout itself is copied"
    assert files_holding(copied, markers) == [], "a reference solution or hidden test reached the copy"
    assert [path for path in copied.rglob("*") if INSTANCE_ID in path.parts] == [], "an instance's folder"
    assert git_repositories(copied) == [], "an instance repository reached the copy"
