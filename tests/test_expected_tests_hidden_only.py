"""Expected tests come only from the hidden test files (issue 25), on constructed and captured
runner reports. No Docker; tests/test_solution_own_tests.py plays the real benchmark's cases.

rust__fizzy's and rust__decimal's references carry a `#[cfg(test)]` module in src/lib.rs. Its
tests ran in the reference run and used to be recorded as expected, so a correct solution
written from the stub (no such module) was `expected_tests_missing`. Each runner says where a
test came from (TestCase.origin); the language reads the file from it (LanguageSpec.test_file)
and preparation records only the tests of the hidden files (LanguageSpec.hidden_tests).
"""

from __future__ import annotations

import json

import pytest

from .fixtures.reports.captured import load
from polyglot_harness.utils.judging.canaries import Canary, separate
from polyglot_harness.utils.judging.runner_results import (FAILED, PASSED, parse_go_test_json, parse_jest_json,
                                                           parse_junit_reports, parse_libtest_logfiles)
from polyglot_harness.utils.judging.runner_results import TestCase as Case  # not a pytest test class
from polyglot_harness.utils.judging.runner_results import TestResults as RunnerResults  # not a pytest test class
from polyglot_harness.utils.judging.verdict import decide_separated
from polyglot_harness.utils.languages import LANGUAGES
from polyglot_harness.utils.outcomes import Reason

RUST = LANGUAGES["rust"]
FIZZY_HIDDEN = ("tests/fizzy.rs",)

# What docker/rust/polyglot-rust-test leaves for fizzy's reference: the lib's unit-test
# binary (its own `mod test`) and the integration binary of the hidden tests/fizzy.rs.
FIZZY_REFERENCE_REPORT = {
    "libtest-1.source": "src/lib.rs\n",
    "libtest-1.list": "test::fizz_buzz_u8: test\ntest::map: test\n",
    "libtest-1.log": "ok test::fizz_buzz_u8\nok test::map\n",
    "libtest-2.source": "tests/fizzy.rs\n",
    "libtest-2.list": "simple: test\nu8: test\n",
    "libtest-2.log": "ok simple\nok u8\n",
}


def test_libtest_cases_carry_their_binarys_target_source():
    results = parse_libtest_logfiles(FIZZY_REFERENCE_REPORT)
    assert {case.name: case.origin for case in results.cases} == {
        "test::fizz_buzz_u8": "src/lib.rs", "test::map": "src/lib.rs", "simple": "tests/fizzy.rs", "u8": "tests/fizzy.rs"}


def test_a_references_own_rust_unit_tests_are_not_expected():
    results = parse_libtest_logfiles(FIZZY_REFERENCE_REPORT)
    assert RUST.hidden_tests(results, FIZZY_HIDDEN).names() == ("simple", "u8")


def test_an_unfinished_rust_test_keeps_its_origin():
    report = dict(FIZZY_REFERENCE_REPORT, **{"libtest-2.log": "ok simple\n"})
    hidden = RUST.hidden_tests(parse_libtest_logfiles(report), FIZZY_HIDDEN)
    assert [(case.name, case.outcome) for case in hidden.cases] == [("simple", PASSED), ("u8", "error")]


def test_a_rust_report_without_target_sources_keeps_every_test():
    """An image older than the .source files: nothing is dropped (the old behaviour)."""
    report = {name: text for name, text in FIZZY_REFERENCE_REPORT.items() if not name.endswith(".source")}
    assert len(RUST.hidden_tests(parse_libtest_logfiles(report), FIZZY_HIDDEN).cases) == 4


def test_a_captured_run_with_a_unit_test_module_records_only_the_integration_tests():
    """Captured from the real runner: checked-sum's reference plus a `mod tests` in src/lib.rs
    whose `tests::several_values` shares a hidden test's leaf name."""
    results = RUST.parse_results(load("rust", "own_unit_tests").report)
    own = {case.name for case in results.cases if case.origin == "src/lib.rs"}
    assert own == {"tests::several_values", "tests::overflow_of_a_byte"}
    hidden = RUST.hidden_tests(results, ("tests/checked_sum.rs",))
    assert set(hidden.names()) == {"empty_slice_sums_to_zero", "several_values", "negative_values",
                                   "largest_sum_that_fits", "overflow_is_an_error", "underflow_is_an_error"}
    assert {case.origin for case in hidden.cases} == {"tests/checked_sum.rs"}


def test_a_java_test_class_in_main_code_is_not_expected():
    xml = ('<testsuite><testcase classname="FizzyTest" name="simple()"/>'
           '<testcase classname="FizzyTest$Nested" name="deeper()"/>'
           '<testcase classname="OwnChecks" name="mine()"/></testsuite>')
    results = parse_junit_reports({"TEST-junit-jupiter.xml": xml})
    hidden = LANGUAGES["java"].hidden_tests(results, ("src/test/java/FizzyTest.java",))
    assert hidden.names() == ("FizzyTest::simple()", "FizzyTest$Nested::deeper()")


def test_a_jest_test_of_another_file_is_not_expected():
    report = {"testResults": [
        {"name": "/testbed/fizzy.spec.js", "assertionResults": [{"title": "simple", "fullName": "Fizzy simple",
                                                                "status": "passed"}]},
        {"name": "/testbed/lib/own.spec.js", "assertionResults": [{"title": "mine", "fullName": "mine",
                                                                  "status": "passed"}]}]}
    results = parse_jest_json({"jest.json": json.dumps(report)})
    assert [case.origin for case in results.cases] == ["/testbed/fizzy.spec.js", "/testbed/lib/own.spec.js"]
    hidden = LANGUAGES["javascript"].hidden_tests(results, ("fizzy.spec.js",))
    assert hidden.names() == ("fizzy.spec.js::Fizzy simple",)


def test_go_cases_carry_their_package():
    events = [{"Action": "run", "Package": "fizzy", "Test": "TestSimple"},
              {"Action": "pass", "Package": "fizzy", "Test": "TestSimple"}]
    results = parse_go_test_json({"go-test.json": "\n".join(json.dumps(event) for event in events)})
    assert [case.origin for case in results.cases] == ["fizzy"]


@pytest.mark.parametrize("runner, hidden_paths", [
    ("python", ("running_total_test.py",)),
    ("go", ("word_tally_test.go",)),
    ("rust", ("tests/checked_sum.rs",)),
    ("javascript", ("clamp-list.spec.js",)),
    ("java", ("src/test/java/VowelCountTest.java",)),
    ("cpp", ("digit_sum_test.cpp",)),
])
def test_every_test_of_a_captured_reference_run_is_a_hidden_test(runner, hidden_paths):
    """Real reports of the samples' references (tests/fixtures/reports): nothing is dropped."""
    results = LANGUAGES[runner].parse_results(load(runner, "all_passed").report)
    assert results.total > 0
    assert LANGUAGES[runner].hidden_tests(results, hidden_paths) == results


def test_a_solutions_own_test_sharing_a_canarys_leaf_stays_a_real_test():
    """decimal's hidden `add` chosen as a canary, and a solution's own `tests::add` in
    src/lib.rs (leaf `add` too): the own test is neither the canary nor the renamed test."""
    canary = Canary(source="add", hidden_name="add_borrow_id", expected=12345, actual=67890)
    run = RunnerResults((
        Case("tests::add", PASSED, origin="src/lib.rs"),
        Case("add_borrow_id", PASSED, origin="tests/decimal.rs"),
        Case("add", FAILED, "assertion `left == right` failed\n  left: 12345\n right: 67890",
                 origin="tests/decimal.rs"),
    ), ("libtest-1.log", "libtest-2.log"))
    hidden = ("tests/decimal.rs",)
    real, own = separate(run, (canary,), RUST.canaries.leaf, lambda case: RUST.defined_in_hidden(case, hidden))
    assert real.names() == ("tests::add", "add")
    assert own["add"].outcome == FAILED
    verdict = decide_separated(101, False, real, own, (canary,), expected_tests=("add",))
    assert verdict.reason == Reason.TESTS_PASSED


def test_a_solutions_own_failing_test_still_fails_the_verdict():
    """Kept on purpose: every reported test must pass, a solution's own included (its binary
    exits non-zero too, so cargo's status already says failed)."""
    run = RunnerResults((Case("tests::mine", FAILED, origin="src/lib.rs"),
                         Case("simple", PASSED, origin="tests/fizzy.rs")), ("libtest-1.log",))
    verdict = decide_separated(101, False, run, {}, (), expected_tests=("simple",))
    assert verdict.reason == Reason.TESTS_FAILED
