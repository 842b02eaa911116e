"""A correct solution resolves whether or not it has unit tests of its own (issue 25), on the
real benchmark in Docker. CI fails, never skips, without the benchmark tarball (conftest).

The references of rust__fizzy and rust__decimal carry a `#[cfg(test)]` module in src/lib.rs;
a correct solution written from the stub has none. Expected tests used to be recorded from
every test the reference run reported, so such a solution was `expected_tests_missing`.
Every such instance of the benchmark is prepared here with recorded expected tests, then its
reference is graded with the module removed and as it is: both resolve.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .conftest import GATE_WORKERS
from polyglot_harness.utils.judging.canaries import matching_brace
from polyglot_harness.utils.languages import LANGUAGES
from polyglot_harness.utils.outcomes import Reason
from polyglot_harness.utils.pipeline.expected_tests import patch_writing
from polyglot_harness.utils.pipeline.grading import GradingRequest, grade
from polyglot_harness.utils.records.dataset import load_dataset
from polyglot_harness.utils.records.instance_repo import checkout_commit

pytestmark = pytest.mark.beside_gate  # its own two rust instances, not the gate's dataset

# Every reference of the 225 with tests of its own that its runner runs (the search is
# test_the_search_finds_exactly_these_references), with how many it has.
OWN_TESTS = {"rust__fizzy": 7, "rust__decimal": 1}
# go__counter's reference is a test file (a test-writing exercise, graded build-only): its
# TestX functions sit in counter.go, which `go test` does not run as tests.
TESTS_ARE_THE_SOLUTION = {"go__counter"}

_OWN_TEST_PATTERNS = {  # per language: reference files, and what marks a test of their own
    "rust": ("*.rs", r"#\[test\]"),
    "go": ("*.go", r"^func (Test|Benchmark|Example|Fuzz)\w*\("),
    "python": ("*.py", r"^\s*def test_|unittest|pytest"),
    "java": ("**/*.java", r"@Test\b|org\.junit"),
    "javascript": ("*.js", r"^\s*(x?test|x?it|describe)\(\s*['\"`]"),
    "cpp": ("*.[ch]*", r"TEST_CASE|catch\.hpp"),
}
_RUST_TEST = re.compile(r"^\s*#\[test\]\s*\n(?:\s*#\[[^\n]*\]\s*\n)*\s*fn (\w+)\(", re.M)
_RUST_TEST_MODULE = re.compile(r"^#\[cfg\(test\)\]\s*\nmod \w+ \{", re.M)


def references_with_own_tests(checkout: Path) -> set[str]:
    found = set()
    for language, (glob, pattern) in _OWN_TEST_PATTERNS.items():
        for meta in sorted(checkout.glob(f"{language}/exercises/practice/*/.meta")):
            if any(re.search(pattern, path.read_text(errors="replace"), re.M) for path in meta.glob(glob)):
                found.add(f"{language}__{meta.parent.name}")
    return found


def test_the_search_finds_exactly_these_references(benchmark_checkout):
    assert references_with_own_tests(benchmark_checkout) == set(OWN_TESTS) | TESTS_ARE_THE_SOLUTION


def without_own_tests(source: str) -> str:
    """The Rust source less its `#[cfg(test)] mod NAME { ... }` block."""
    match = _RUST_TEST_MODULE.search(source)
    assert match, "no #[cfg(test)] module"
    end = matching_brace(source, match.end() - 1, quotes="\"")
    return source[:match.start()] + source[end:]


@pytest.fixture(scope="module")
def own_tests_dataset(benchmark_checkout, tmp_path_factory, language_images) -> Path:
    """Just these instances, prepared with expected tests recorded (their references and stubs
    graded for real), as the real-benchmark gate prepares all 225."""
    from polyglot_harness.utils.prepare.dataset import prepare_dataset

    output = tmp_path_factory.mktemp("own-tests-dataset") / "polyglot"
    prepare_dataset(benchmark_checkout, output, workers=GATE_WORKERS, record_expected=True,
                    instance_ids=sorted(OWN_TESTS), log=lambda message: print(message, flush=True))
    return output


@pytest.fixture(scope="module")
def own_tests_instances(own_tests_dataset):
    return {instance.instance_id: instance for instance in load_dataset(own_tests_dataset)}


def reference_files(instance) -> dict[str, bytes]:
    root = instance.reference_dir
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in root.rglob("*") if path.is_file()}


def grade_files(instance, files: dict[str, bytes], sandboxes, language_images, tmp_path: Path):
    """Grade `files` written over the stub the way the harness grades an agent's patch: the
    recorded expected tests required, canaries planted."""
    test_tree = tmp_path / "tests"
    checkout_commit(instance.grading_repo_dir, instance.test_commit, test_tree)
    request = GradingRequest(language=LANGUAGES[instance.language], instance_id=instance.instance_id, test_tree=test_tree,
                             patch_text=patch_writing(instance, files), solution_paths=instance.solution_paths, hidden_paths=instance.hidden_paths,
                             expected_tests=instance.expected_tests, expected_skips=instance.expected_skips or (),
                             grading_mode=instance.grading_mode, canary_sources=instance.canary_sources)
    return grade(sandboxes, language_images[instance.language], request)


@pytest.mark.docker
@pytest.mark.parametrize("instance_id", sorted(OWN_TESTS))
def test_expected_tests_are_exactly_the_hidden_files_tests(instance_id, own_tests_instances, benchmark_checkout):
    instance = own_tests_instances[instance_id]
    slug = instance_id.split("__", 1)[1]
    hidden = {name for path in instance.hidden_paths
              for name in _RUST_TEST.findall((benchmark_checkout / "rust/exercises/practice" / slug / path).read_text())}
    own = _RUST_TEST.findall((instance.reference_dir / "src/lib.rs").read_text())
    assert len(own) == OWN_TESTS[instance_id]
    assert instance.expected_tests is not None, "the reference did not resolve at preparation"
    assert set(instance.expected_tests) == hidden
    assert not any(name.endswith(tuple(f"::{test}" for test in own)) for name in instance.expected_tests)
    assert instance.canary_sources and set(instance.canary_sources) <= hidden


@pytest.mark.docker
@pytest.mark.parametrize("instance_id", sorted(OWN_TESTS))
def test_reference_without_its_own_tests_resolves(instance_id, own_tests_instances, sandboxes, language_images,
                                                  tmp_path, no_leftover_containers):
    instance = own_tests_instances[instance_id]
    files = reference_files(instance)
    files["src/lib.rs"] = without_own_tests(files["src/lib.rs"].decode()).encode()
    assert b"#[test]" not in files["src/lib.rs"]
    outcome = grade_files(instance, files, sandboxes, language_images, tmp_path)
    assert outcome.verdict.resolved, outcome.verdict
    assert outcome.verdict.reason == Reason.TESTS_PASSED
    assert outcome.canaries, "canaries were planted"
    assert set(outcome.real_results.names()) == set(instance.expected_tests)


@pytest.mark.docker
@pytest.mark.parametrize("instance_id", sorted(OWN_TESTS))
def test_reference_with_its_own_tests_still_resolves(instance_id, own_tests_instances, sandboxes, language_images,
                                                     tmp_path, no_leftover_containers):
    instance = own_tests_instances[instance_id]
    outcome = grade_files(instance, reference_files(instance), sandboxes, language_images, tmp_path)
    assert outcome.verdict.resolved, outcome.verdict
    own = [case for case in outcome.real_results.cases if case.origin == "src/lib.rs"]
    assert len(own) == OWN_TESTS[instance_id] and all(case.outcome == "passed" for case in own)
