"""utils/languages/: the per-language specs against the sample exercises, and path_matches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from polyglot_harness.utils.judging import runner_results
from polyglot_harness.utils.languages import javascript, python
from polyglot_harness.utils.languages import (
    LANGUAGES,
    ExerciseNameError,
    UnknownLanguageError,
    get_language,
    path_matches,
)

PROJECT_ROOT = Path(__file__).resolve().parents[1]
SAMPLE_CONFIGS = sorted(PROJECT_ROOT.glob("samples/*/exercises/practice/*/.meta/config.json"))


def sample_files(role: str) -> list[tuple[str, str]]:
    """(language, path) of every sample exercise file listed under files.<role>."""
    pairs = []
    for config_path in SAMPLE_CONFIGS:
        language = config_path.relative_to(PROJECT_ROOT / "samples").parts[0]
        files = json.loads(config_path.read_text())["files"]
        pairs += [(language, path) for path in files.get(role, [])]
    return pairs


def ids(pairs: list[tuple[str, str]]) -> list[str]:
    return [f"{language}:{path}" for language, path in pairs]


def test_every_language_has_a_sample_exercise():
    assert {config.relative_to(PROJECT_ROOT / "samples").parts[0] for config in SAMPLE_CONFIGS} == set(LANGUAGES)


@pytest.mark.parametrize("language, path", sample_files("test"), ids=ids(sample_files("test")))
def test_sample_test_files_are_hidden_from_the_agent(language: str, path: str):
    assert get_language(language).is_hidden(path)


@pytest.mark.parametrize("language, path", sample_files("example"), ids=ids(sample_files("example")))
def test_sample_reference_solutions_are_hidden_from_the_agent(language: str, path: str):
    assert get_language(language).is_hidden(path)


@pytest.mark.parametrize("language, path", sample_files("solution"), ids=ids(sample_files("solution")))
def test_sample_solution_files_are_visible_and_never_artifacts(language: str, path: str):
    lang_spec = get_language(language)
    assert not lang_spec.is_hidden(path)
    assert not lang_spec.is_artifact(path)


@pytest.mark.parametrize("language, path", sample_files("invalidator"), ids=ids(sample_files("invalidator")))
def test_sample_build_files_stay_visible_so_the_agent_can_build(language: str, path: str):
    assert not get_language(language).is_hidden(path)


@pytest.mark.parametrize("language, path", [
    ("python", "__pycache__/x.pyc"),
    ("python", "pkg/__pycache__/running_total.cpython-311.pyc"),
    ("python", "running_total.pyc"),
    ("python", ".pytest_cache/v/cache/nodeids"),
    ("rust", "target/debug/x"),
    ("rust", "target/debug/deps/checked_sum-0123.d"),
    ("rust", "Cargo.lock"),
    ("javascript", "node_modules"),  # the runner's symlink
    ("javascript", "node_modules/a/b.js"),
    ("javascript", "package-lock.json"),
    ("java", "build/x.o"),
    ("java", "build/classes/java/main/VowelCount.class"),
    ("java", ".gradle/8.5/checksums/checksums.lock"),
    ("cpp", "build/x.o"),
    ("cpp", "CMakeFiles/digit-sum.dir/digit_sum.cpp.o"),
    ("cpp", "CMakeCache.txt"),
    ("cpp", "digit_sum.o"),  # a scratch `g++ -c` in the exercise root
    ("go", "wordtally.test"),
    ("go", "cover.out"),
])
def test_build_artifacts_are_recognised(language: str, path: str):
    assert get_language(language).is_artifact(path)


@pytest.mark.parametrize("language", sorted(LANGUAGES))
@pytest.mark.parametrize("path", [".git/config", ".git/objects/ab/cdef", ".DS_Store", "src/.DS_Store"])
def test_git_metadata_and_finder_files_are_artifacts_in_every_language(language: str, path: str):
    assert get_language(language).is_artifact(path)


@pytest.mark.parametrize("language, path", [
    ("python", "build/x.py"),  # Python has no build directory of its own
    ("javascript", "lib/node_modules_helper.js"),
    ("rust", "src/target.rs"),
    ("java", "src/main/java/build/Builder.java"),
])
def test_source_files_with_artifact_like_names_are_not_artifacts(language: str, path: str):
    assert not get_language(language).is_artifact(path)


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_unskip_rewrites_only_files_hidden_from_the_agent(language: str):
    lang_spec = get_language(language)
    for exercise in (PROJECT_ROOT / "samples" / language / "exercises" / "practice").iterdir():
        for file in exercise.rglob("*"):
            path = file.relative_to(exercise).as_posix()
            if file.is_file() and any(path_matches(path, pattern) for pattern in lang_spec.unskip_globs):
                assert lang_spec.is_hidden(path), path


@pytest.mark.parametrize("language, path", [
    ("javascript", "clamp-list.spec.js"),
    ("java", "src/test/java/VowelCountTest.java"),
])
def test_skipping_languages_unskip_their_sample_test_files(language: str, path: str):
    lang_spec = get_language(language)
    assert any(path_matches(path, pattern) for pattern in lang_spec.unskip_globs)


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_test_command_writes_its_report_into_the_report_dir(language: str):
    lang_spec = get_language(language)
    assert "{report_dir}" in lang_spec.test_command
    assert lang_spec.parse_results in (runner_results.parse_junit_reports, runner_results.parse_go_test_json,
                                  runner_results.parse_jest_json, runner_results.parse_libtest_logfiles,
                                  python.parse_report, javascript.parse_report)
    assert (PROJECT_ROOT / "docker" / lang_spec.image_recipe / "Dockerfile").is_file()


def test_unknown_language_names_the_known_ones():
    with pytest.raises(UnknownLanguageError, match="known: " + ", ".join(sorted(LANGUAGES))):
        get_language("cobol")


@pytest.mark.parametrize("path, pattern, matches", [
    ("running_total_test.py", "**/*_test.py", True),
    ("a/b/running_total_test.py", "**/*_test.py", True),
    ("running_total_testXpy", "**/*_test.py", False),  # the dot is literal
    ("src/lib.rs", "src/**.rs", True),
    ("src/a/b.rs", "src/**.rs", True),
    ("lib.rs", "src/**.rs", False),
    ("helper.py", "*.py", True),
    ("pkg/helper.py", "*.py", False),  # * stays inside one segment
    ("a.js", "?.js", True),
    ("ab.js", "?.js", False),
    ("tests/x", "tests/**", True),
    ("tests", "tests/**", False),
    ("xtests/x", "tests/**", False),
])
def test_path_matches_globs_segment_by_segment(path: str, pattern: str, matches: bool):
    assert path_matches(path, pattern) is matches


CMAKE_FROM_DIRECTORY = "project(x)\nget_filename_component(exercise ${CMAKE_CURRENT_SOURCE_DIR} NAME)\nadd_executable(${exercise})\n"


def test_cpp_build_file_names_the_exercise_explicitly():
    name_line = get_language("cpp").exercise_name_line
    assert name_line is not None and name_line.path == "CMakeLists.txt"
    named = name_line.named("two-fer", CMAKE_FROM_DIRECTORY)
    assert named == "project(x)\nset(exercise two-fer)\nadd_executable(${exercise})\n"


def test_build_file_without_the_directory_name_line_is_an_error_quoting_the_line():
    with pytest.raises(ExerciseNameError, match=r"CMakeLists.txt has no `get_filename_component\(exercise"):
        get_language("cpp").exercise_name_line.named("two-fer", "project(two-fer CXX)\n")


def test_cache_key_content_leaves_out_the_exercise_name_only_in_the_named_build_file():
    cpp = get_language("cpp")
    first = cpp.cache_key_content("CMakeLists.txt", cpp.exercise_name_line.named("two-fer", CMAKE_FROM_DIRECTORY).encode())
    second = cpp.cache_key_content("CMakeLists.txt", cpp.exercise_name_line.named("leap", CMAKE_FROM_DIRECTORY).encode())
    assert first == second and b"two-fer" not in first
    assert cpp.cache_key_content("test/CMakeLists.txt", b"set(exercise leap)\n") == b"set(exercise leap)\n"


@pytest.mark.parametrize("language", sorted(set(LANGUAGES) - {"cpp"}))
def test_other_languages_name_no_exercise_in_a_build_file(language: str):
    lang_spec = get_language(language)
    assert lang_spec.exercise_name_line is None
    assert lang_spec.cache_key_content("CMakeLists.txt", b"set(exercise leap)\n") == b"set(exercise leap)\n"
