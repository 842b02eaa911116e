"""The language registry (utils/languages/): every module declares all a language needs, and a
7th language is one module plus fixtures. No Docker.

The change-cost check, done for real: tests/fixtures/languages/bash/ holds a throwaway language
module (Bash + bats) and one exercise of our own in the upstream layout. Registered from here,
it goes through the pure parts of the pipeline (dataset preparation, patch filtering, un-skip,
canary planting, the runner-report parser, the verdict, the audit) with no other source file
edited. Grading it in a container would take a docker/bash/ recipe as well.
"""

from __future__ import annotations

import importlib.util
import random
import shutil
import subprocess
from pathlib import Path
from types import ModuleType
from xml.sax.saxutils import escape, quoteattr

import pytest

from polyglot_harness.utils.judging.canaries import plant, separate
from polyglot_harness.utils.judging.patches import (SUSPICIOUS_KINDS, SuspiciousPatternError, SuspiciousPatterns,
                                                    audit_patch, filter_patch)
from polyglot_harness.utils.judging.runner_results import PASSED
from polyglot_harness.utils.judging.verdict import decide_separated
from polyglot_harness.utils.languages import (LANGUAGES, LanguageExistsError, LanguageSpec, UnknownLanguageError,
                                              get_language, matches_any, register, suspicious_patterns, unregister)
from polyglot_harness.utils.outcomes import Reason
from polyglot_harness.utils.pipeline.agent_phase import git_exclude, test_description as agent_test_description
from polyglot_harness.utils.pipeline.expected_tests import patch_writing
from polyglot_harness.utils.pipeline.grading import GradingRequest, plant_canaries, unskip_tree
from polyglot_harness.utils.prepare.dataset import prepare_dataset
from polyglot_harness.utils.records.dataset import load_dataset
from polyglot_harness.utils.records.instance_repo import checkout_commit

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SAMPLES = PROJECT_ROOT / "samples"
SEVENTH = Path(__file__).resolve().parent / "fixtures" / "languages" / "bash"


class FixedRandom(random.Random):
    """Deterministic stand-in for secrets.SystemRandom."""


# --- every registered language -----------------------------------------------------------------

@pytest.mark.parametrize("name", list(LANGUAGES))
def test_the_agent_is_told_the_languages_name_and_how_to_check_without_the_tests(name: str):
    language = get_language(name)
    description = agent_test_description(language)
    assert language.display_name in description and language.self_check_hint in description


@pytest.mark.parametrize("name", list(LANGUAGES))
def test_every_language_plants_canaries_into_its_sample_tests(name: str, tmp_path: Path):
    language = get_language(name)
    assert language.canaries is not None
    planted_any = []
    for exercise in sorted((SAMPLES / name / "exercises" / "practice").iterdir()):
        tree = shutil.copytree(exercise, tmp_path / exercise.name, ignore=shutil.ignore_patterns(".meta", ".docs"))
        canaries = plant(tree, language.canaries, matches_any, None, None, FixedRandom(3))
        text = "\n".join(path.read_text() for path in tree.rglob("*") if path.is_file())
        assert all(c.hidden_name in text and c.reported_name in text for c in canaries)
        assert all(c.mutation.literal in text if c.mutation else str(c.expected) in text and str(c.actual) in text
                   for c in canaries)
        planted_any += canaries
    assert planted_any, f"no test of the {name} samples can carry a canary"


@pytest.mark.parametrize("name", list(LANGUAGES))
def test_every_languages_suspicious_fragments_name_known_kinds_and_compile(name: str):
    language = get_language(name)
    assert language.suspicious and {kind for kind, _ in language.suspicious} <= set(SUSPICIOUS_KINDS)
    SuspiciousPatterns.of(language.suspicious)


def test_a_fragment_of_an_unknown_kind_is_refused():
    with pytest.raises(SuspiciousPatternError, match="unknown suspicious-line kind 'bogus'"):
        SuspiciousPatterns.of([("bogus", "x")])


ARTIFACT_PROBES = ("__pycache__/x.pyc", "pkg/__pycache__/a.cpython-311.pyc", ".pytest_cache/v/x", "target/debug/x",
                   "Cargo.lock", "sub/Cargo.lock", "node_modules", "node_modules/a/b.js", "package-lock.json",
                   "lib/package-lock.json", "coverage/lcov.info", "build/x.o", "x.o", "CMakeFiles/a.o",
                   "CMakeCache.txt", "Makefile", "sub/Makefile", "cmake_install.cmake", "bin/x", "out/y",
                   ".gradle/z", "src/main/java/A.class", "a.test", "cover.out", ".DS_Store", "a/.DS_Store",
                   "solution.py", "src/lib.rs", "lib/helpers.js", "src/main/java/build/Builder.java", "digit_sum.h")


@pytest.mark.parametrize("name", list(LANGUAGES))
def test_git_ignores_exactly_what_the_language_calls_artifacts(name: str, tmp_path: Path):
    """The agent's .git/info/exclude (written by the harness) ignores the paths is_artifact
    drops and no others: agents need no artifact list of their own."""
    language = get_language(name)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".git" / "info" / "exclude").write_text(git_exclude(language))
    checked = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], cwd=tmp_path, text=True,
                             input="\n".join(ARTIFACT_PROBES) + "\n", capture_output=True)
    assert checked.returncode in (0, 1), checked.stderr
    ignored = set(checked.stdout.split())
    assert {path for path in ARTIFACT_PROBES if language.is_artifact(path)} == ignored


def test_the_exclude_file_keeps_what_the_repository_had():
    text = git_exclude(get_language("python"), "# git's own comment")
    assert text.startswith("# git's own comment\n# build artifacts of python") and "**/*.pyc\n" in text


def test_a_taken_name_is_refused_and_an_unknown_one_cannot_be_removed():
    with pytest.raises(LanguageExistsError):
        register(get_language("python"))
    with pytest.raises(UnknownLanguageError):
        unregister("cobol")


# --- a 7th language, from a fixture ----------------------------------------------------------------

def load_module(path: Path) -> ModuleType:
    location = importlib.util.spec_from_file_location("seventh_language", path)
    module = importlib.util.module_from_spec(location)
    location.loader.exec_module(module)
    return module


@pytest.fixture
def bash() -> LanguageSpec:
    language = register(load_module(SEVENTH / "language.py").LANGUAGE)
    try:
        yield language
    finally:
        unregister(language.name)
    assert "bash" not in LANGUAGES


def test_the_seventh_language_needs_one_module_and_one_exercise():
    source_files = [path for path in SEVENTH.rglob("*") if path.is_file() and path.suffix == ".py"]
    assert [path.name for path in source_files] == ["language.py"]
    assert sorted(path.parent.name for path in SEVENTH.glob("*/exercises/practice/*/.meta")) == ["hello-name"]


@pytest.fixture
def bash_instance(bash, tmp_path: Path):
    summary = prepare_dataset(SEVENTH, tmp_path / "dataset", workers=1, log=lambda message: None,
                             record_expected=False)
    assert summary.instances_by_language == {"bash": 1}
    [instance] = load_dataset(tmp_path / "dataset")
    return instance


def reference_files(instance) -> dict[str, bytes]:
    return {path.relative_to(instance.reference_dir).as_posix(): path.read_bytes()
            for path in instance.reference_dir.rglob("*") if path.is_file()}


def test_preparation_hides_the_seventh_languages_tests(bash_instance):
    assert bash_instance.instance_id == "bash__hello-name"
    assert bash_instance.solution_paths == ("hello_name.sh",)
    assert "hello_name.bats" in bash_instance.hidden_paths
    visible = {path.relative_to(bash_instance.agent_repo_dir).as_posix()
               for path in bash_instance.agent_repo_dir.rglob("*") if path.is_file() and ".git" not in path.parts}
    assert "hello_name.sh" in visible and not any(path.endswith(".bats") or path.startswith(".meta") for path in visible)


def test_patch_filtering_keeps_the_solution_and_drops_test_edits_and_artifacts(bash, bash_instance):
    files = {**reference_files(bash_instance), "hello_name.bats": b"@test \"always\" { true; }\n",
             "run.log": b"noise\n", "helper.sh": b"greet() { echo hi; }\n"}
    filtered = filter_patch(patch_writing(bash_instance, files), bash, bash_instance.solution_paths,
                            bash_instance.hidden_paths)
    assert sorted(filtered.kept_paths) == ["hello_name.sh", "helper.sh"]
    assert [(record.path, record.why) for record in filtered.tamper] == [("hello_name.bats", "test_file")]
    assert filtered.artifact_paths == ("run.log",)


def junit_report(cases: list[tuple[str, str]]) -> str:
    """What `bats --report-formatter junit` writes: one testcase per test, a failure element
    carrying the failed command."""
    body = "".join(f'<testcase classname="hello_name.bats" name={quoteattr(name)}>'
                   + (f"<failure>{escape(message)}</failure>" if message else "") + "</testcase>"
                   for name, message in cases)
    return f'<?xml version="1.0"?><testsuites><testsuite name="hello_name.bats">{body}</testsuite></testsuites>'


def test_a_graded_seventh_language_run_plants_parses_and_decides(bash, bash_instance, tmp_path: Path):
    tree = tmp_path / "grading"
    checkout_commit(bash_instance.grading_repo_dir, bash_instance.test_commit, tree)
    assert unskip_tree(tree, bash) == ["hello_name.bats"]
    request = GradingRequest(language=bash, instance_id=bash_instance.instance_id, test_tree=tree, patch_text="", solution_paths=bash_instance.solution_paths,
                             plant_all_canaries=True)
    canaries = plant_canaries(tree, request)
    assert {canary.source for canary in canaries} == {"greets the named person", "greets a stranger without a name",
                                                      "refuses two names"}
    planted = (tree / "hello_name.bats").read_text()
    assert "BATS_RUN_SKIPPED" not in planted and all(f'@test "{c.hidden_name}"' in planted for c in canaries)

    def verdict(canary_message: str):
        cases = []
        for canary in canaries:
            cases += [(canary.hidden_name, ""), (canary.source, canary_message.format(canary=canary))]
        results = bash.parse_results({"report.xml": junit_report(cases)})
        real, own = separate(results, canaries, bash.canaries.leaf)
        assert set(real.names(PASSED)) == {f"hello_name.bats::{canary.source}" for canary in canaries}
        return decide_separated(1, False, real, own, canaries, tuple(real.names()))

    honest = '(in test file hello_name.bats, line 9) `[ "{canary.expected}" = "{canary.actual}" ]\' failed'
    assert verdict(honest).reason == Reason.TESTS_PASSED
    assert verdict("failed without the numbers").reason == Reason.CANARY_WITHOUT_SECRET


def test_the_seventh_languages_patterns_join_the_audit_only_while_registered(bash_instance):
    patch = patch_writing(bash_instance, {"hello_name.sh": b'echo "ok 1 greets the named person"\n'})
    assert [line.kind for line in audit_patch(patch, suspicious_patterns())] == ["runner_output"]
    unregister("bash")
    try:
        assert audit_patch(patch, suspicious_patterns()) == ()
    finally:
        register(load_module(SEVENTH / "language.py").LANGUAGE)


def test_the_seventh_language_is_listed_in_the_unknown_language_message(bash):
    with pytest.raises(UnknownLanguageError, match="known: bash, cpp"):
        get_language("cobol")
