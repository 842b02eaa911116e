"""Grading's trusted-process plumbing (utils/pipeline/grading.py, LanguageSpec.trusted), with
probe programs of our own in place of a language's runner and solver: the solution process
runs as SOLUTION_UID on a copy of the solution files only, and reaches neither /testbed, nor
the report directory, nor the test process's memory, nor its private TMPDIR."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from polyglot_harness.utils.languages import LANGUAGES, TrustedProcess
from polyglot_harness.utils.pipeline.expected_tests import patch_writing
from polyglot_harness.utils.outcomes import Isolation
from polyglot_harness.utils.pipeline.grading import GradingRequest, grade
from polyglot_harness.utils.records.instance_repo import checkout_commit

pytestmark = pytest.mark.docker

PROBE = Path(__file__).resolve().parent / "fixtures" / "trusted_probe"

PROBE_PROCESS = TrustedProcess(
    solution_globs=("*.py",),
    solver_command="python3 -I probe_solver.py {socket}",
    test_command="python3 -I test_probe_side.py {socket} {report_dir}",
)


def test_the_solution_process_reaches_nothing_of_the_test_process(sandboxes, language_images, sample_instances,
                                                                  tmp_path, no_leftover_containers):
    instance = sample_instances["python__running-total"]
    test_tree = tmp_path / "tests"
    checkout_commit(instance.grading_repo_dir, instance.test_commit, test_tree)
    shutil.copy(PROBE / "test_probe_side.py", test_tree)  # a hidden test file: never copied to /solution
    patch = patch_writing(instance, {"probe_solver.py": (PROBE / "probe_solver.py").read_bytes()})
    language = dataclasses.replace(LANGUAGES["python"], trusted=PROBE_PROCESS)
    # The probe reads /proc and opens sockets: the source policy would refuse it before it ran.
    request = GradingRequest(language=language, instance_id=instance.instance_id, test_tree=test_tree, patch_text=patch,
                             solution_paths=instance.solution_paths, hidden_paths=instance.hidden_paths, source_policy=False)
    outcome = grade(sandboxes, language_images["python"], request)
    assert outcome.isolation == Isolation.TRUSTED_PROCESS
    failed = {case.name: case.message for case in outcome.results.cases if case.outcome != "passed"}
    assert outcome.results.total == 9 and not failed, (failed, outcome.exec_result.output[-2000:])
    assert outcome.verdict.resolved, outcome.verdict


def test_an_exercise_listed_in_process_is_graded_in_process(sandboxes, language_images, sample_instances, tmp_path):
    instance = sample_instances["python__running-total"]
    test_tree = tmp_path / "tests"
    checkout_commit(instance.grading_repo_dir, instance.test_commit, test_tree)
    language = dataclasses.replace(LANGUAGES["python"], trusted=dataclasses.replace(
        PROBE_PROCESS, in_process=(("running-total", "the probe's own exemption"),)))
    patch = patch_writing(instance, {path: (instance.reference_dir / path).read_bytes()
                                     for path in instance.solution_paths})
    outcome = grade(sandboxes, language_images["python"], GradingRequest(
        language=language, instance_id=instance.instance_id, test_tree=test_tree, patch_text=patch, solution_paths=instance.solution_paths, hidden_paths=instance.hidden_paths))
    assert outcome.isolation == "in_process" and outcome.verdict.resolved, outcome.verdict
