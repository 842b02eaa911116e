"""Every bundled sample graded for real: its image, network off, every test un-skipped.

For each sample: the reference resolves with every test in the test file counted, the stub
does not, and an early-exit solution that first prints a fake success summary does not.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from polyglot_harness.utils.pipeline.expected_tests import patch_writing
from polyglot_harness.utils.outcomes import Isolation
from polyglot_harness.utils.pipeline.grading import GradingRequest, grade
from polyglot_harness.utils.records.instance_repo import checkout_commit
from polyglot_harness.utils.languages import LANGUAGES
from polyglot_harness.utils.judging.runner_results import PASSED

pytestmark = pytest.mark.docker

PROJECT_ROOT = Path(__file__).resolve().parent.parent
EARLY_EXIT_DIR = PROJECT_ROOT / "tests" / "fixtures" / "early_exit"
SAMPLE_IDS = sorted(
    f"{path.parts[-4]}__{path.parts[-1]}" for path in (PROJECT_ROOT / "samples").glob("*/exercises/practice/*")
)

# How each track declares a test, counted in the (un-skipped) test files.
TEST_DECLARATIONS = {
    "python": r"^\s*def test_",
    "go": r"^func Test",
    "rust": r"#\[test\]",
    "javascript": r"\b(?:x?test|x?it)\(",
    "java": r"@Test\b",
    "cpp": r"\bTEST_CASE\(",
}


def declared_test_count(instance, test_tree: Path) -> int:
    pattern = re.compile(TEST_DECLARATIONS[instance.language], re.M)
    return sum(len(pattern.findall((test_tree / path).read_text())) for path in instance.files["test"])


def files_under(root: Path) -> dict[str, bytes]:
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in root.rglob("*") if path.is_file()}


def run_grading(sandboxes, language_images, instance, patch: str, tmp_path: Path, source_policy: bool = True):
    test_tree = tmp_path / "tests"
    checkout_commit(instance.grading_repo_dir, instance.test_commit, test_tree)
    request = GradingRequest(language=LANGUAGES[instance.language], instance_id=instance.instance_id, test_tree=test_tree, patch_text=patch,
                             solution_paths=instance.solution_paths, hidden_paths=instance.hidden_paths, reference_dir=instance.reference_dir,
                             source_policy=source_policy)
    return grade(sandboxes, language_images[instance.language], request), test_tree


@pytest.mark.parametrize("instance_id", SAMPLE_IDS)
def test_reference_resolves_with_every_test_counted(instance_id, sandboxes, language_images, sample_instances,
                                                    tmp_path, no_leftover_containers):
    instance = sample_instances[instance_id]
    patch = patch_writing(instance, files_under(instance.reference_dir))
    outcome, test_tree = run_grading(sandboxes, language_images, instance, patch, tmp_path)
    assert outcome.verdict.resolved, (outcome.verdict, outcome.exec_result.output[-3000:])
    declared = declared_test_count(instance, test_tree)
    if instance.language == "go":  # table-driven: one parent test per function, a subtest per case
        top_level = [name for name in outcome.results.names() if "/" not in name.split("::", 1)[1]]
        assert len(top_level) == declared and outcome.results.total > declared
    else:
        assert outcome.results.total == declared
    assert outcome.results.passed == outcome.results.total


@pytest.mark.parametrize("instance_id", SAMPLE_IDS)
def test_stub_does_not_resolve(instance_id, sandboxes, language_images, sample_instances, tmp_path):
    instance = sample_instances[instance_id]
    # The stub is the base commit: an agent that changed nothing, graded anyway.
    touched = {path: (instance.agent_repo_dir / path).read_bytes() + b"\n" for path in instance.solution_paths[:1]}
    patch = patch_writing(instance, touched)
    outcome, _ = run_grading(sandboxes, language_images, instance, patch, tmp_path)
    assert not outcome.verdict.resolved
    assert outcome.results.passed < max(outcome.results.total, 1)


@pytest.mark.parametrize("instance_id", SAMPLE_IDS)
def test_early_exit_with_fake_success_output_does_not_resolve(instance_id, sandboxes, language_images,
                                                               sample_instances, tmp_path):
    instance = sample_instances[instance_id]
    cheat_dir = EARLY_EXIT_DIR / instance.language / instance.task_name
    patch = patch_writing(instance, files_under(cheat_dir))
    # The runner's report on its own: the source policy refuses every early exit before it
    # runs (tests/test_source_policy.py).
    outcome, _ = run_grading(sandboxes, language_images, instance, patch, tmp_path, source_policy=False)
    if outcome.isolation == Isolation.TRUSTED_PROCESS:
        # The exit runs in the solution process: it ends that process, never the test run.
        assert not outcome.verdict.resolved and outcome.verdict.reason == "bridge_broken", outcome.verdict
        return
    assert outcome.exec_result.exit_code == 0, "the fixture must forge the exit code to be a meaningful cheat"
    assert not outcome.verdict.resolved
    # unreadable_test_results: C++'s runner hands Catch an unlinked report file, which a binary
    # that exits before main() leaves empty.
    assert outcome.verdict.reason in ("no_test_results", "tests_failed", "expected_tests_missing",
                                      "unreadable_test_results")
    assert not any(case.outcome == PASSED for case in outcome.results.cases) or outcome.results.total == 0
