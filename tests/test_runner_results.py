"""utils/runner_results.py: each runner's report files -> TestResults, on captured reports.

The reports under tests/fixtures/reports/ were written by the real runners in the language
images (see its README.md); here they only go through the pure parsers. No Docker.
"""

from __future__ import annotations

from typing import Callable

import pytest

from .fixtures.reports.captured import case_names, load
from polyglot_harness.utils.judging.runner_results import (
    ERROR,
    FAILED,
    PASSED,
    SKIPPED,
    parse_go_test_json,
    parse_jest_json,
    parse_junit_reports,
    parse_libtest_logfiles,
)
from polyglot_harness.utils.judging.runner_results import TestResults as RunnerResults  # not a pytest test class

PARSERS: dict[str, Callable[[dict[str, str]], RunnerResults]] = {
    "python": parse_junit_reports,
    "java": parse_junit_reports,
    "cpp": parse_junit_reports,
    "go": parse_go_test_json,
    "javascript": parse_jest_json,
    "rust": parse_libtest_logfiles,
}

# (passed, failed, errored, skipped) of every captured case.
EXPECTED_COUNTS: dict[tuple[str, str], tuple[int, int, int, int]] = {
    ("python", "all_passed"): (6, 0, 0, 0),
    ("python", "some_failed"): (5, 1, 0, 0),
    ("python", "syntax_error"): (0, 0, 1, 0),
    ("python", "skipped"): (5, 0, 0, 1),
    ("python", "early_exit"): (0, 0, 0, 0),
    ("go", "all_passed"): (7, 0, 0, 0),  # six subtests and their parent TestTally
    ("go", "some_failed"): (4, 3, 0, 0),
    ("go", "build_failed"): (0, 0, 1, 0),
    ("go", "skipped"): (6, 0, 0, 1),
    ("go", "early_exit"): (0, 0, 0, 0),
    ("go", "exit_mid_run"): (2, 2, 0, 0),
    ("go", "syscall_exit_mid_run"): (3, 0, 2, 0),  # the never-ended parent test and package are errors
    ("rust", "all_passed"): (6, 0, 0, 0),
    ("rust", "some_failed"): (4, 2, 0, 0),
    ("rust", "build_failed"): (0, 0, 0, 0),
    ("rust", "ignored_not_run"): (1, 0, 0, 5),
    ("rust", "early_exit"): (0, 0, 6, 0),  # every listed test unfinished
    ("rust", "exit_mid_run"): (5, 0, 1, 0),  # the test that exited never finished
    ("rust", "retargeted_tests"): (6, 0, 0, 0),
    ("rust", "own_unit_tests"): (8, 0, 0, 0),  # the six hidden tests and the solution's own two
    ("javascript", "all_passed"): (6, 0, 0, 0),
    ("javascript", "some_failed"): (4, 2, 0, 0),
    ("javascript", "syntax_error"): (0, 0, 1, 0),
    ("javascript", "skipped"): (1, 0, 0, 5),
    ("javascript", "early_exit"): (0, 0, 0, 0),
    ("java", "all_passed"): (6, 0, 0, 0),
    ("java", "some_failed"): (4, 2, 0, 0),
    ("java", "compile_error"): (0, 0, 0, 0),
    ("java", "skipped"): (1, 0, 0, 5),
    ("java", "early_exit"): (0, 0, 0, 0),
    ("java", "shadowed_assertions"): (6, 0, 0, 0),
    ("cpp", "all_passed"): (7, 0, 0, 0),
    ("cpp", "some_failed"): (6, 1, 0, 0),
    ("cpp", "compile_error"): (0, 0, 0, 0),
    ("cpp", "early_exit"): (0, 0, 0, 0),
    ("cpp", "first_test_only"): (1, 0, 0, 0),
}


def parse(runner: str, case: str) -> RunnerResults:
    return PARSERS[runner](load(runner, case).report)


def test_every_captured_case_has_expected_counts():
    captured = {(runner, case) for runner in PARSERS for case in case_names(runner)}
    assert captured == set(EXPECTED_COUNTS)


@pytest.mark.parametrize("runner, case", sorted(EXPECTED_COUNTS), ids="/".join)
def test_captured_report_is_counted_by_outcome(runner: str, case: str):
    results = parse(runner, case)
    assert (results.passed, results.failed, results.errored, results.skipped) == EXPECTED_COUNTS[(runner, case)]
    assert results.problems == ()
    assert results.total == sum(EXPECTED_COUNTS[(runner, case)])


# --- pytest --junitxml ---------------------------------------------------------------------

def test_pytest_cases_are_named_module_class_and_method():
    results = parse("python", "all_passed")
    assert results.report_files == ("junit.xml",)
    assert "running_total_test.RunningTotalTest::test_empty_list" in results.names(PASSED)
    assert len(set(results.names())) == 6


def test_pytest_failure_names_the_failing_test():
    assert parse("python", "some_failed").names(FAILED) == (
        "running_total_test.RunningTotalTest::test_first_position_over_threshold",)


def test_pytest_collection_error_is_one_errored_case():
    assert parse("python", "syntax_error").names(ERROR) == ("running_total_test",)


def test_pytest_skip_raised_by_the_solution_is_skipped():
    assert parse("python", "skipped").names(SKIPPED) == (
        "running_total_test.RunningTotalTest::test_total_never_exceeds_threshold",)


# --- JUnit Platform console launcher ----------------------------------------------------

def test_console_launcher_reports_every_engine_file_and_empty_ones_add_nothing():
    results = parse("java", "all_passed")
    assert results.report_files == (
        "TEST-junit-jupiter.xml", "TEST-junit-platform-suite.xml", "TEST-junit-vintage.xml")
    assert set(results.names(PASSED)) == {
        "VowelCountTest::emptyText()", "VowelCountTest::mixedCase()", "VowelCountTest::notVowels()",
        "VowelCountTest::mostCommonVowel()", "VowelCountTest::mostCommonTie()",
        "VowelCountTest::mostCommonWithoutVowels()"}


def test_java_disabled_tests_left_in_are_skipped():
    results = parse("java", "skipped")
    assert results.names(PASSED) == ("VowelCountTest::emptyText()",)
    assert "VowelCountTest::mixedCase()" in results.names(SKIPPED)


def test_java_assertion_failures_are_failed_cases():
    assert set(parse("java", "some_failed").names(FAILED)) == {
        "VowelCountTest::mostCommonTie()", "VowelCountTest::mostCommonWithoutVowels()"}


def test_java_compile_error_leaves_no_report():
    results = parse("java", "compile_error")
    assert results.total == 0 and results.report_files == ()


# --- Catch2 --reporter junit --------------------------------------------------------------

def test_catch2_cases_are_named_by_test_case_title():
    results = parse("cpp", "some_failed")
    assert results.names(FAILED) == ("digit-sum.global::digital root repeats until one digit is left",)
    assert "digit-sum.global::digit sum of zero is zero" in results.names(PASSED)


def test_catch2_without_run_all_tests_reports_only_the_first_case():
    assert parse("cpp", "first_test_only").names() == ("digit-sum.global::digit sum of zero is zero",)


# --- go test -json -----------------------------------------------------------------------

def test_go_subtests_and_their_parent_are_separate_cases():
    names = parse("go", "all_passed").names(PASSED)
    assert "wordtally::TestTally" in names
    assert "wordtally::TestTally/case_is_ignored" in names


def test_go_failing_subtest_also_fails_its_parent():
    assert set(parse("go", "some_failed").names(FAILED)) == {
        "wordtally::TestTally/punctuation_separates_words",
        "wordtally::TestTally/equal_counts_in_alphabetical_order",
        "wordtally::TestTally"}


def test_go_build_failure_is_an_errored_package():
    assert parse("go", "build_failed").names(ERROR) == ("wordtally (package)",)


def test_go_t_skip_is_skipped():
    assert parse("go", "skipped").names(SKIPPED) == ("wordtally::TestTally/one_word",)


def test_go_exit_zero_in_init_leaves_a_passing_package_with_no_case():
    results = parse("go", "early_exit")
    assert results.report_files == ("go-test.json",)
    assert results.total == 0


def test_go_os_exit_during_a_test_fails_that_test():
    results = parse("go", "exit_mid_run")
    assert set(results.names(FAILED)) == {"wordtally::TestTally/repeated_word", "wordtally::TestTally"}


def test_go_package_failure_without_a_failed_test_is_an_errored_package():
    report = "\n".join([
        '{"Action":"start","Package":"example"}',
        '{"Action":"run","Package":"example","Test":"TestA"}',
        '{"Action":"pass","Package":"example","Test":"TestA"}',
        '{"Action":"output","Package":"example","Output":"panic: after the tests\\n"}',
        '{"Action":"fail","Package":"example"}',
    ])
    results = parse_go_test_json({"go-test.json": report})
    assert results.names(PASSED) == ("example::TestA",)
    assert results.names(ERROR) == ("example (package)",)


def test_go_test_that_never_ended_is_not_read_as_passed():
    results = parse("go", "syscall_exit_mid_run")
    # TestTally started and never ended; the package never reported pass or fail.
    assert "wordtally::TestTally" in results.names(ERROR) or results.problems


# --- jest --json --outputFile ------------------------------------------------------------

def test_jest_cases_are_named_spec_file_and_full_name():
    names = parse("javascript", "all_passed").names(PASSED)
    assert "clamp-list.spec.js::Clamp List empty list stays empty" in names
    assert "clamp-list.spec.js::Clamp List values above the range are lowered to high" in names  # was xit


def test_jest_xtest_left_in_is_skipped():
    results = parse("javascript", "skipped")
    assert results.names(PASSED) == ("clamp-list.spec.js::Clamp List empty list stays empty",)
    assert results.skipped == 5


def test_jest_failures_are_failed_cases():
    assert set(parse("javascript", "some_failed").names(FAILED)) == {
        "clamp-list.spec.js::Clamp List values below the range are raised to low",
        "clamp-list.spec.js::Clamp List the input list is not changed"}


def test_jest_suite_that_failed_to_run_is_one_errored_case():
    assert parse("javascript", "syntax_error").names(ERROR) == ("clamp-list.spec.js (suite)",)


# --- libtest --logfile -------------------------------------------------------------------

def test_libtest_reads_every_test_binary_log_including_empty_ones():
    results = parse("rust", "all_passed")
    assert results.report_files == ("libtest-1.log", "libtest-2.log")
    assert set(results.names(PASSED)) == {
        "empty_slice_sums_to_zero", "several_values", "negative_values", "largest_sum_that_fits",
        "overflow_is_an_error", "underflow_is_an_error"}


def test_libtest_ignored_tests_not_included_are_skipped():
    results = parse("rust", "ignored_not_run")
    assert results.names(PASSED) == ("empty_slice_sums_to_zero",)
    assert "several_values" in results.names(SKIPPED)


def test_libtest_panicking_tests_are_failed():
    assert set(parse("rust", "some_failed").names(FAILED)) == {"overflow_is_an_error", "underflow_is_an_error"}


def test_rust_build_failure_leaves_only_the_runner_artifact_list_which_is_not_read():
    captured = load("rust", "build_failed")
    assert list(captured.report) == [".cargo-artifacts.json"]
    results = parse_libtest_logfiles(captured.report)
    assert results.total == 0 and results.report_files == ()


def test_libtest_exit_in_the_first_test_leaves_every_listed_test_unfinished():
    results = parse("rust", "early_exit")
    assert results.report_files == ("libtest-1.log", "libtest-2.log")
    assert results.passed == 0 and results.errored == 6  # listed before the run, never logged


# --- missing, truncated and garbage reports ----------------------------------------------

@pytest.mark.parametrize("runner", ["python", "go", "rust", "javascript"])
def test_missing_report_gives_zero_cases(runner: str):
    results = PARSERS[runner]({})
    assert results == RunnerResults()


@pytest.mark.parametrize("runner", ["python", "go", "javascript", "java", "cpp"])
def test_early_exit_report_dir_gives_zero_cases_and_no_problem(runner: str):
    results = parse(runner, "early_exit")
    assert results.total == 0 and results.problems == ()


def test_files_of_other_runners_are_not_read():
    assert parse_junit_reports({"go-test.json": "{}", "libtest-1.log": "ok x\n"}) == RunnerResults()
    assert parse_libtest_logfiles({"junit.xml": "<testsuite/>"}) == RunnerResults()


def _truncate(text: str) -> str:
    """The first half of `text`, as a writer killed mid-file would leave it."""
    return text[:len(text) // 2]


@pytest.mark.parametrize("runner, report_name", [
    ("python", "junit.xml"), ("java", "TEST-junit-jupiter.xml"), ("cpp", "catch-junit.xml"),
    ("javascript", "jest.json"),
])
def test_truncated_whole_file_report_is_a_problem_not_an_exception(runner: str, report_name: str):
    report = load(runner, "all_passed").report
    report[report_name] = _truncate(report[report_name])
    results = PARSERS[runner](report)
    assert len(results.problems) == 1 and report_name in results.problems[0]
    assert report_name not in results.report_files


def test_truncated_go_stream_keeps_complete_events_and_reports_the_cut_line():
    report = load("go", "all_passed").report["go-test.json"]
    truncated = report[:report.index("\n", len(report) // 2) + 10]  # ten characters into a line
    results = parse_go_test_json({"go-test.json": truncated})
    complete_lines = truncated.count("\n")
    assert results.problems == (f"go-test.json:{complete_lines + 1}: not a go test -json event",)
    assert 0 < results.passed < 7


def test_truncated_libtest_log_reports_the_cut_line():
    results = parse_libtest_logfiles({"libtest-1.log": "ok empty_slice_sums_to_zero\nfai"})
    assert results.names(PASSED) == ("empty_slice_sums_to_zero",)
    assert results.problems == ("libtest-1.log: unexpected line 'fai'",)


@pytest.mark.parametrize("parser, file_name", [
    (parse_junit_reports, "junit.xml"), (parse_go_test_json, "go-test.json"),
    (parse_jest_json, "jest.json"), (parse_libtest_logfiles, "libtest-1.log"),
])
@pytest.mark.parametrize("garbage", ["", "\x00\x01binary\xff", "All tests passed (99 assertions)\n", "{"])
def test_garbage_report_is_a_problem_not_an_exception(parser, file_name: str, garbage: str):
    results = parser({file_name: garbage})
    assert results.passed == 0
    if garbage.strip():
        assert results.problems


@pytest.mark.parametrize("line", ["42", "null", '["Action", "pass"]'])
def test_go_json_line_that_is_not_an_object_is_a_problem(line: str):
    results = parse_go_test_json({"go-test.json": line + "\n"})
    assert results.problems


@pytest.mark.parametrize("document", ["null", "[]", '{"testResults": [null]}', '{"testResults": {"a": 1}}'])
def test_jest_json_of_the_wrong_shape_is_a_problem(document: str):
    results = parse_jest_json({"jest.json": document})
    assert results.problems


def test_junit_suite_with_a_non_integer_errors_attribute_is_a_problem():
    results = parse_junit_reports({"junit.xml": '<testsuite name="s" errors="many"></testsuite>'})
    assert results.problems or results.errored
