"""utils/judging/verdict.py: decide_separated() end to end over the pure parsers and captured
runner reports, with no canary planted (test_canaries.py covers the canary rules).

Each case feeds a report captured from the real runner (tests/fixtures/reports/) and that
run's real exit code through the language's parser into the verdict. No Docker.
"""

from __future__ import annotations

import pytest

from .fixtures.reports.captured import load
from polyglot_harness.utils.languages import LANGUAGES, get_language
from polyglot_harness.utils.judging.runner_results import TestResults as RunnerResults  # not a pytest test class
from polyglot_harness.utils.outcomes import Reason
from polyglot_harness.utils.judging.verdict import Verdict, decide_separated

RUNNERS = list(LANGUAGES)  # every registered language has captured reports


def decide(exit_code: int | None, timed_out: bool, results: RunnerResults, expected_tests=None, **rest) -> Verdict:
    """The pipeline's verdict on results with no canary planted (nothing to separate)."""
    return decide_separated(exit_code, timed_out, results, {}, (), expected_tests, **rest)


def results_of(runner: str, case: str) -> RunnerResults:
    return get_language(runner).parse_results(load(runner, case).report)


def expected_tests(runner: str) -> tuple[str, ...]:
    """What a reference run records: every test name of the all-passed capture."""
    return results_of(runner, "all_passed").names()


def verdict_of(runner: str, case: str, with_expected_tests: bool = True) -> Verdict:
    captured = load(runner, case)
    return decide(captured.exit_code, False, results_of(runner, case),
                  expected_tests(runner) if with_expected_tests else None)


@pytest.mark.parametrize("with_expected_tests", [True, False], ids=["expected_known", "expected_unknown"])
@pytest.mark.parametrize("runner", RUNNERS)
def test_all_tests_passing_with_exit_zero_is_resolved(runner: str, with_expected_tests: bool):
    verdict = verdict_of(runner, "all_passed", with_expected_tests)
    assert verdict.resolved
    assert verdict.reason == Reason.TESTS_PASSED


@pytest.mark.parametrize("runner", RUNNERS)
def test_exit_zero_without_report_is_not_resolved(runner: str):
    # The solution printed a fake success summary and exited 0 before the runner wrote a report.
    captured = load(runner, "early_exit")
    assert captured.exit_code == 0
    verdict = verdict_of(runner, "early_exit", with_expected_tests=False)
    if runner == "rust":  # the binary listed its tests before the run: they show as unfinished
        assert (verdict.resolved, verdict.reason) == (False, Reason.TESTS_FAILED)
    else:
        assert verdict == Verdict(False, Reason.NO_TEST_RESULTS, "exit code 0 but the runner reported no test")


@pytest.mark.parametrize("runner, case", [("go", "syscall_exit_mid_run"), ("rust", "exit_mid_run")])
def test_exit_zero_with_partial_report_is_not_resolved_when_expected_tests_are_known(runner: str, case: str):
    assert load(runner, case).exit_code == 0
    verdict = verdict_of(runner, case)
    assert not verdict.resolved
    # Go's stream shows the unfinished test itself; a Rust logfile can only miss names.
    assert verdict.reason in (Reason.EXPECTED_TESTS_MISSING, Reason.TESTS_FAILED)


@pytest.mark.parametrize("runner, case", [("go", "syscall_exit_mid_run"), ("rust", "exit_mid_run")])
def test_exit_zero_with_partial_report_is_not_resolved_without_expected_tests(runner: str, case: str):
    assert not verdict_of(runner, case, with_expected_tests=False).resolved


@pytest.mark.parametrize("runner, case", [
    ("python", "skipped"), ("go", "skipped"), ("rust", "ignored_not_run"), ("javascript", "skipped"),
    ("java", "skipped"),
])
def test_exit_zero_with_skipped_tests_is_not_resolved(runner: str, case: str):
    assert load(runner, case).exit_code == 0
    verdict = verdict_of(runner, case, with_expected_tests=False)
    assert (verdict.resolved, verdict.reason) == (False, Reason.TESTS_SKIPPED)


@pytest.mark.parametrize("runner", RUNNERS)
def test_failed_tests_are_not_resolved(runner: str):
    verdict = verdict_of(runner, "some_failed")
    assert (verdict.resolved, verdict.reason) == (False, Reason.TESTS_FAILED)


def test_failure_detail_counts_failed_errored_and_total():
    assert verdict_of("go", "some_failed").detail == "3 failed, 0 errored of 7"


@pytest.mark.parametrize("runner, case", [
    ("python", "syntax_error"), ("go", "build_failed"), ("javascript", "syntax_error"),
])
def test_build_error_reported_as_an_errored_case_is_tests_failed(runner: str, case: str):
    verdict = verdict_of(runner, case)
    assert (verdict.resolved, verdict.reason) == (False, Reason.TESTS_FAILED)
    assert verdict.detail.startswith("0 failed, 1 errored")


@pytest.mark.parametrize("runner, case", [
    ("rust", "build_failed"), ("java", "compile_error"), ("cpp", "compile_error"),
])
def test_build_error_without_report_is_build_or_run_failed(runner: str, case: str):
    captured = load(runner, case)
    verdict = verdict_of(runner, case)
    assert verdict == Verdict(False, Reason.BUILD_OR_RUN_FAILED, f"exit code {captured.exit_code} and no test results")


@pytest.mark.parametrize("case", ["all_passed", "some_failed", "early_exit"])
def test_timeout_is_not_resolved_whatever_the_report_says(case: str):
    verdict = decide(0, True, results_of("python", case), expected_tests("python"))
    assert verdict == Verdict(False, Reason.TEST_TIMEOUT, "the test command did not finish in time")


def test_timeout_without_exit_code_or_report_is_a_timeout():
    assert decide(None, True, RunnerResults()).reason == Reason.TEST_TIMEOUT


@pytest.mark.parametrize("exit_code", [1, 2, 137, -9, None])
def test_nonzero_exit_with_all_tests_passed_is_not_resolved(exit_code):
    # e.g. an atexit handler of the solution that fails the process after the report was written
    verdict = decide(exit_code, False, results_of("python", "all_passed"), expected_tests("python"))
    assert (verdict.resolved, verdict.reason) == (False, Reason.NONZERO_EXIT)
    assert f"exit code was {exit_code}" in verdict.detail


def test_nonzero_exit_takes_precedence_over_skipped_tests():
    verdict = decide(1, False, results_of("java", "skipped"))
    assert verdict.reason == Reason.NONZERO_EXIT


def test_expected_tests_missing_from_a_passing_report_is_not_resolved():
    # The C++ suite built without -DEXERCISM_RUN_ALL_TESTS: only the first TEST_CASE ran.
    assert load("cpp", "first_test_only").exit_code == 0
    verdict = verdict_of("cpp", "first_test_only")
    assert (verdict.resolved, verdict.reason) == (False, Reason.EXPECTED_TESTS_MISSING)
    assert verdict.detail.startswith("6 of 7 expected tests did not run: ")
    assert "digit-sum.global::digit sum of several digits" in verdict.detail


def test_unknown_expected_tests_trust_the_report():
    assert verdict_of("cpp", "first_test_only", with_expected_tests=False).resolved


def test_renamed_test_counts_as_missing():
    expected = expected_tests("rust") + ("a_test_the_reference_run_had",)
    verdict = decide(0, False, results_of("rust", "all_passed"), expected)
    assert verdict.reason == Reason.EXPECTED_TESTS_MISSING
    assert verdict.detail == "1 of 7 expected tests did not run: a_test_the_reference_run_had"


def test_unreadable_report_with_no_case_is_unreadable_results():
    report = load("python", "all_passed").report
    report["junit.xml"] = report["junit.xml"][:200]
    verdict = decide(0, False, get_language("python").parse_results(report))
    assert (verdict.resolved, verdict.reason) == (False, Reason.UNREADABLE_TEST_RESULTS)
    assert "junit.xml: unreadable XML" in verdict.detail


def test_passing_cases_beside_an_unreadable_report_file_are_not_resolved():
    # Jupiter's report is fine; a second engine's report is cut short.
    report = load("java", "all_passed").report
    report["TEST-junit-vintage.xml"] = report["TEST-junit-vintage.xml"][:300]
    results = get_language("java").parse_results(report)
    assert results.passed == 6
    verdict = decide(0, False, results, expected_tests("java"))
    assert (verdict.resolved, verdict.reason) == (False, Reason.UNREADABLE_TEST_RESULTS)


def test_failures_are_reported_before_an_unreadable_line():
    report = load("go", "some_failed").report["go-test.json"] + '{"Action": "pa'
    verdict = decide(1, False, get_language("go").parse_results({"go-test.json": report}))
    assert verdict.reason == Reason.TESTS_FAILED


# --- expected skips and build-only instances ------------------------------------------------

from polyglot_harness.utils.judging.runner_results import TestCase  # noqa: E402
from polyglot_harness.utils.outcomes import GradingMode  # noqa: E402


def cases(*pairs: tuple[str, str]) -> RunnerResults:
    return RunnerResults(tuple(TestCase(name, outcome) for name, outcome in pairs), ("report",))


def test_a_test_the_reference_run_also_skipped_may_stay_skipped():
    results = cases(("a", "passed"), ("slow", "skipped"))
    verdict = decide(0, False, results, expected_tests=("a", "slow"), expected_skips=("slow",))
    assert verdict.resolved and "1 skipped" in verdict.detail


def test_any_other_skipped_test_is_still_not_resolved():
    results = cases(("a", "skipped"), ("slow", "skipped"))
    verdict = decide(0, False, results, expected_tests=("a", "slow"), expected_skips=("slow",))
    assert (verdict.resolved, verdict.reason) == (False, Reason.TESTS_SKIPPED)
    assert "a" in verdict.detail and "slow" not in verdict.detail.split(": ", 1)[1]


def test_an_expected_skip_does_not_excuse_a_missing_test():
    results = cases(("slow", "skipped"))
    verdict = decide(0, False, results, expected_tests=("a", "slow"), expected_skips=("slow",))
    assert (verdict.resolved, verdict.reason) == (False, Reason.EXPECTED_TESTS_MISSING)


def test_build_only_instance_resolves_on_a_clean_build_with_no_tests():
    verdict = decide(0, False, RunnerResults(report_files=("go-test.json",)), expected_tests=(),
                     grading_mode=GradingMode.BUILD_ONLY)
    assert (verdict.resolved, verdict.reason) == (True, Reason.BUILD_ONLY_PASSED)


@pytest.mark.parametrize("exit_code", [1, 2, None])
def test_build_only_instance_that_does_not_build_is_not_resolved(exit_code):
    verdict = decide(exit_code, False, RunnerResults(), grading_mode=GradingMode.BUILD_ONLY)
    assert (verdict.resolved, verdict.reason) == (False, Reason.BUILD_OR_RUN_FAILED)


def test_build_only_instance_with_a_failed_build_event_is_not_resolved():
    results = cases(("counter (package)", "error"))
    verdict = decide(1, False, results, grading_mode=GradingMode.BUILD_ONLY)
    assert (verdict.resolved, verdict.reason) == (False, Reason.TESTS_FAILED)


def test_build_only_instance_that_times_out_is_not_resolved():
    verdict = decide(None, True, RunnerResults(), grading_mode=GradingMode.BUILD_ONLY)
    assert (verdict.resolved, verdict.reason) == (False, Reason.TEST_TIMEOUT)


JUNIT_ONE_FAILED = ('<testsuites><testsuite name="pytest"><testcase classname="t_test.T" name="test_a">'
                    '<failure message="no"/></testcase><testcase classname="t_test.T" name="test_b"/>'
                    '</testsuite></testsuites>')


def test_failed_tests_are_named_after_what_the_trusted_process_caught():
    """python's report parser reads bridge.json (written by the trusted test process only);
    the most telling refusal names the reason, and only ever in place of tests_failed."""
    python = get_language("python")
    caught = python.parse_results({"junit.xml": JUNIT_ONE_FAILED, "bridge.json":
                                   '{"handle_compared_with_value": 3, "bridge_broken": 1}'})
    assert caught.caught == ("bridge_broken", "handle_compared_with_value")
    assert decide(1, False, caught).reason == Reason.BRIDGE_BROKEN
    plain = python.parse_results({"junit.xml": JUNIT_ONE_FAILED})
    assert decide(1, False, plain).reason == Reason.TESTS_FAILED
    passing = python.parse_results({"junit.xml": JUNIT_ONE_FAILED.replace('<failure message="no"/>', ''),
                                    "bridge.json": '{"handle_compared_with_value": 3}'})
    assert decide(0, False, passing).resolved
