"""Host repositories for the drop-in tests (tests/test_hyperagents_loop.py, tests/test_dgm_loop.py):
HyperAgents' real tree with this checkout at domains/polyglot/, and lineage patches that turn a
host's task agent into an oracle. Nothing here copies another project's code into this one:
HyperAgents comes from ../shared/data at test time, the reference solutions from the prepared
real benchmark."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from polyglot_harness.utils.records.dataset import load_dataset

from .conftest import IN_CI, PROJECT_ROOT

HYPERAGENTS_TARBALL = PROJECT_ROOT.parent / "shared" / "data" / "hyperagents-59a68f6.tar.gz"
# runs/, datasets/ and the metadata link: what older versions, or explicit paths, left in this
# working tree (the link would point at this checkout's dataset, not the copy's).
_NOT_COPIED = shutil.ignore_patterns(".git", "runs", "datasets", "polyglot_benchmark_metadata.json", "__pycache__",
                                     "*.pyc", ".pytest_cache", "node_modules", "target")
# What the oracle needs in the agent's image: HyperAgents' run_task_agent.py imports utils.git_utils,
# which imports GitPython; the rest of its requirements (litellm, balrog, genesis, ...) are trimmed.
TRIMMED_REQUIREMENTS = "GitPython==3.1.44\n"
SOLUTIONS_FILE = "agent/oracle_solutions.json"  # inside the layout, so the patch keeps it


def place_checkout(destination: Path) -> Path:
    """A copy of this checkout (working tree, as it is now) at `destination`."""
    shutil.copytree(PROJECT_ROOT, destination, ignore=_NOT_COPIED, symlinks=True)
    return destination


def hyperagents_root(tmp_path: Path) -> Path:
    """HyperAgents' real tree, unmodified, with this checkout in place of its domains/polyglot/."""
    if not HYPERAGENTS_TARBALL.is_file():
        message = f"HyperAgents' code is not at {HYPERAGENTS_TARBALL} (../shared/data/README.md)"
        if IN_CI:
            pytest.fail(f"CI=true: {message}")
        pytest.skip(message)
    with tarfile.open(HYPERAGENTS_TARBALL) as archive:
        archive.extractall(tmp_path, filter="data")
    root = tmp_path / "hyperagents-59a68f6"
    shutil.rmtree(root / "domains" / "polyglot")
    place_checkout(root / "domains" / "polyglot")
    return root


def run_python(root: Path, *args: str, timeout: int = 3000) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=root, capture_output=True, text=True, timeout=timeout)


def problem_key(problem_statement: str) -> str:
    return hashlib.sha256(problem_statement.encode("utf-8")).hexdigest()


def reference_solutions(dataset_dir: Path, instance_ids: list[str]) -> dict[str, dict[str, str]]:
    """problem statement hash -> {path in /testbed: reference content}, from the prepared dataset."""
    by_id = {instance.instance_id: instance for instance in load_dataset(dataset_dir)}
    solutions: dict[str, dict[str, str]] = {}
    for instance_id in instance_ids:
        instance = by_id[instance_id]
        files = {str(path.relative_to(instance.reference_dir)): path.read_text(encoding="utf-8")
                 for path in sorted(instance.reference_dir.rglob("*")) if path.is_file()}
        solutions[problem_key(instance.problem_statement)] = files
    return solutions


ORACLE_TASK_AGENT = '''"""An oracle TaskAgent (test lineage patch): writes the reference solution of the exercise."""
import hashlib
import json
import os


class TaskAgent:
    def __init__(self, model=None, chat_history_file="./chat_history.md"):
        self.chat_history_file = chat_history_file

    def forward(self, inputs):
        here = os.path.dirname(os.path.abspath(__file__))
        with open(os.path.join(here, "agent", "oracle_solutions.json")) as handle:
            solutions = json.load(handle)
        key = hashlib.sha256(inputs["problem_statement"].encode("utf-8")).hexdigest()
        written = []
        for path, text in solutions.get(key, {}).items():
            with open(os.path.join(inputs["git_tempdir"], path), "w") as handle:
                handle.write(text)
            written.append(path)
        with open(self.chat_history_file, "w") as handle:
            handle.write("oracle wrote: " + ", ".join(written) + "\\n")
            handle.write("METAGEN_ACCESS_TOKEN=" + os.environ.get("METAGEN_ACCESS_TOKEN", "") + "\\n")
        return "done", []
'''


def lineage_patch(root: Path, edits: dict[str, str], destination: Path) -> Path:
    """A diff against the files of `root` (git's a/ b/ prefixes, as the loops' patches are)
    that gives each path of `edits` its new content; `root` itself is left untouched."""
    scratch = destination.parent / f"{destination.stem}-scratch"
    scratch.mkdir(parents=True)
    for relative in edits:
        if (root / relative).is_file():
            (scratch / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / relative, scratch / relative)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(scratch)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "base", "--allow-empty"], check=True)
    for relative, text in edits.items():
        (scratch / relative).parent.mkdir(parents=True, exist_ok=True)
        (scratch / relative).write_text(text, encoding="utf-8")
    subprocess.run([*git, "add", "-A"], check=True)
    diff = subprocess.run([*git, "diff", "--cached"], check=True, capture_output=True, text=True).stdout
    destination.write_text(diff, encoding="utf-8")
    shutil.rmtree(scratch)
    return destination


def hyperagents_oracle_patch(root: Path, dataset_dir: Path, instance_ids: list[str], destination: Path) -> Path:
    """A generation's lineage patch: its TaskAgent becomes an oracle, its requirements are trimmed,
    and it also edits the evaluator (domains/polyglot/harness.py), which must be left out."""
    evaluator = (root / "domains/polyglot/harness.py").read_text(encoding="utf-8")
    return lineage_patch(root, {
        "task_agent.py": ORACLE_TASK_AGENT,
        SOLUTIONS_FILE: json.dumps(reference_solutions(dataset_dir, instance_ids)),
        "requirements.txt": TRIMMED_REQUIREMENTS,
        "domains/polyglot/harness.py": evaluator + "\nRESOLVE_EVERYTHING = True  # an agent editing its evaluator\n",
    }, destination)


def assert_full_strength(results_dir: Path, dataset: Path, covered: list[str]) -> None:
    """Every covered reference resolved with every check on, and canaries planted in every graded
    instance whose tests can carry one (issue 33)."""
    entries = {entry["instance_id"]: entry for entry in json.loads((dataset / "polyglot_benchmark_metadata.json").read_text())}
    for instance_id in covered:
        result = json.loads((results_dir / f"{instance_id}.json").read_text())
        assert (result["eval_result"], result["checks_off"]) == ("resolved", []), (instance_id, result["detail"])
        assert bool(result["canaries"]) == bool(entries[instance_id]["canary_sources"]), instance_id


def gate_recordings_reused() -> bool:
    """Whether this session's gate preparation (`real_dataset`) recorded here, so a preparation of
    the same benchmark takes every reference run from its recordings; not when a developer's copy
    is reused (POLYGLOT_GATE_DATASET, never in CI): the command then records for itself."""
    return IN_CI or not os.environ.get("POLYGLOT_GATE_DATASET")
