"""Expected test names per instance, recorded by grading each reference solution for real.

`prepare_polyglot_dataset.py --record_expected_tests` calls `record_expected_tests` on the
staged dataset before moving it into place. Grading then requires every recorded name to
appear as passed, so a solution that ends the run early (or a runner that silently collects
fewer tests) cannot resolve. A reference that does not resolve gets no record (null) and is
reported: that is the task-health gate for the dataset.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from utils.dataset import Instance, load_dataset
from utils.engine import ensure_engine
from utils.grading import GradingRequest, grade
from utils.images import ImageSettings, docker_client, ensure_language_image
from utils.instance_repo import checkout_commit
from utils.languages import LANGUAGES


@dataclass(frozen=True)
class ReferenceRun:
    instance_id: str
    test_names: tuple[str, ...] | None  # None when the reference did not resolve
    reason: str
    seconds: float


def reference_patch(instance: Instance) -> str:
    """The diff an agent would produce by writing the reference files over the base repo."""
    return patch_writing(instance, {path.relative_to(instance.reference_dir).as_posix(): path.read_bytes()
                                    for path in instance.reference_dir.rglob("*") if path.is_file()})


def patch_writing(instance: Instance, files: dict[str, bytes]) -> str:
    """The diff (against the base commit, new files included) of writing `files` over the
    instance's base repo; the repo itself is not touched."""
    with tempfile.TemporaryDirectory(prefix="polyglot-reference-") as workdir:
        clone = Path(workdir) / "repo"
        shutil.copytree(instance.agent_repo_dir, clone)
        for path, content in files.items():
            (clone / path).parent.mkdir(parents=True, exist_ok=True)
            (clone / path).write_bytes(content)
        git = ["git", "-c", "core.autocrlf=false", "-c", "core.safecrlf=false"]
        env = {"PATH": "/usr/bin:/bin", "GIT_INDEX_FILE": str(Path(workdir) / "index"), "HOME": workdir,
               "GIT_CEILING_DIRECTORIES": workdir}
        subprocess.run(git + ["read-tree", instance.base_commit], cwd=clone, check=True, env=env)
        subprocess.run(git + ["add", "-A"], cwd=clone, check=True, env=env)
        return subprocess.run(git + ["diff", "--cached", "--binary", "--no-color", instance.base_commit],
                              cwd=clone, check=True, env=env, capture_output=True, text=True).stdout


def run_reference(client, image: str, instance: Instance, test_timeout: int = 300) -> ReferenceRun:
    spec = LANGUAGES[instance.language]
    with tempfile.TemporaryDirectory(prefix="polyglot-reference-tests-") as workdir:
        test_tree = Path(workdir) / "tree"
        checkout_commit(instance.grading_repo_dir, instance.test_commit, test_tree)
        request = GradingRequest(spec, instance.instance_id, test_tree, reference_patch(instance),
                                 instance.solution_paths, instance.hidden_paths, test_timeout=test_timeout)
        outcome = grade(client, image, request, "record-expected")
    names = outcome.results.names() if outcome.verdict.resolved else None
    return ReferenceRun(instance.instance_id, names, outcome.verdict.reason, outcome.seconds)


def record_expected_tests(dataset_dir: Path, workers: int = 2, ca_bundle: str | None = None,
                          log: Callable[[str], None] = print) -> dict[str, ReferenceRun]:
    instances = load_dataset(dataset_dir)
    ensure_engine(log=log)
    client = docker_client()
    settings = ImageSettings.from_env(ca_bundle=ca_bundle)
    images = {language: ensure_language_image(client, LANGUAGES[language], settings, log).tag
              for language in sorted({instance.language for instance in instances})}
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        runs = list(pool.map(lambda instance: run_reference(client, images[instance.language], instance), instances))
    return {run.instance_id: run for run in runs}
