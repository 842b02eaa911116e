"""utils/judging/canaries.py, each language module's planter (utils/languages/<name>.py) and the
canary rules of utils/judging/verdict.py: pure, no Docker.

Planting is checked on small test files shaped like the upstream ones; that every planted
canary compiles, fails for the reference and leaves the real tests passing is checked for
real on all 225 exercises by the real-benchmark gate (preparation records the tests whose
canary behaved) and on the samples by the Docker tests.
"""

from __future__ import annotations

import random
import re

import pytest

from polyglot_harness.utils.judging.canaries import Canary, neighbour_name, separate
from polyglot_harness.utils.judging.runner_results import TestCase, TestResults
from polyglot_harness.utils.languages import cpp, go, java, javascript, python, rust
from polyglot_harness.utils.outcomes import Reason
from polyglot_harness.utils.judging.verdict import decide_separated

CANARY = Canary(source="test_a", hidden_name="test_b_c", expected=12345, actual=67890)


class FixedRandom(random.Random):
    """Deterministic stand-in for secrets.SystemRandom."""


PYTHON_FILE = '''import unittest

from thing import f


class ThingTest(unittest.TestCase):
    def test_a(self):
        self.assertEqual(f(1), 2)

    def test_b_c(self):
        self.assertEqual(f(2), 3)

    @unittest.skip("x")
    def test_skipped(self):
        pass


if __name__ == "__main__":
    unittest.main()
'''


def test_python_real_test_keeps_its_place_renamed_and_the_canary_follows_under_its_name():
    units = python.find_units(PYTHON_FILE)
    assert [unit.name for unit in units] == ["test_a", "test_b_c"]  # decorated tests left alone
    planted = python.plant_file(PYTHON_FILE, [(units[0], Canary(source="test_a", hidden_name="test_b_a", expected=11111, actual=22222))])
    assert planted.index("def test_b_a(self):") < planted.index("def test_a(self, *args):") \
        < planted.index("def test_b_c(self):") < planted.index('if __name__')
    assert "self.test_b_a()\n        self.assertEqual(11111, 22222)" in planted
    compile(planted, "thing_test.py", "exec")


GO_FILE = '''package thing

import "testing"

func TestA(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := F(tc.in); got != tc.want {
				t.Fatalf("F(%d) = %d, want {%d}", tc.in, got, tc.want)
			}
		})
	}
}

func TestBothWays(t *testing.T) {
	s := `raw } brace`
	_ = s
}

func BenchmarkA(b *testing.B) {}
'''


def test_go_canary_runs_the_renamed_test_and_fails_only_when_it_passed():
    units = go.find_units(GO_FILE)
    assert [unit.name for unit in units] == ["TestA", "TestBothWays"]
    assert GO_FILE[units[1].start:units[1].end].endswith("}\n")
    planted = go.plant_file(GO_FILE, [(units[0], Canary(source="TestA", hidden_name="TestBothA", expected=11111, actual=22222))])
    assert "func TestA(t *testing.T) {\n\tTestBothA(t)\n\tif !t.Failed() {" in planted
    assert planted.index("func TestBothA(") < planted.index("func TestA(") < planted.index("func TestBothWays(")
    assert "func TestBothWays(t *testing.T) {\n\ts := `raw } brace`\n\t_ = s\n}\n" in planted


RUST_FILE = '''use thing::*;

#[test]
fn first_case() {
    assert_eq!(f("}"), 1);
}

#[test]
#[ignore]
/// documented
fn second_case() {
    assert_eq!(f("a"), 2);
}

#[test]
#[should_panic]
fn panics() {
    f("");
}

#[cfg(feature = "advanced")]
#[test]
fn only_with_a_feature() {}
'''


def test_rust_canary_is_appended_and_the_real_test_renamed_in_place():
    units = rust.find_units(RUST_FILE)
    assert [unit.name for unit in units] == ["first_case", "second_case"]  # should_panic left alone
    planted = rust.plant_file(RUST_FILE, [(units[1], Canary(source="second_case", hidden_name="first_second", expected=11111, actual=22222))])
    assert "#[ignore]\n/// documented\nfn first_second() {" in planted
    assert planted.rstrip().endswith("fn second_case() {\n    first_second();\n    assert_eq!(11111, 22222);\n}")


JAVA_FILE = '''import org.junit.jupiter.api.Test;

public class ThingTest {
    @Test
    public void firstCase() {
        assertThat(new Thing().f("{")).isEqualTo(1);
    }

    @Test
    @DisplayName("second")
    void secondCase() throws Exception {
        assertThat(new Thing().f("a")).isEqualTo(2);
    }

    @ParameterizedTest
    @Test
    public void notPlain() {
    }

    static class Nested {
        @Test
        public void insideNested() {
        }
    }
}
'''


def test_java_canary_calls_the_renamed_method_and_asserts_with_junit():
    units = java.find_units(JAVA_FILE)
    assert [unit.name for unit in units] == ["firstCase", "secondCase"]
    planted = java.plant_file(JAVA_FILE, [(units[1], Canary(source="secondCase", hidden_name="firstSecond", expected=11111, actual=22222))])
    assert "void firstSecond() throws Exception {" in planted
    assert ("public void secondCase() throws Throwable {\n        firstSecond();\n"
            "        org.junit.jupiter.api.Assertions.assertEquals(11111, 22222);") in planted
    assert planted.rstrip().endswith("}\n}")


JS_FILE = '''import { f } from './thing';

describe('Thing', () => {
  test('first case', () => {
    expect(f(1)).toEqual(2);
  });
  test('first case', () => {});
  test('async case', async () => {
    expect(await f(2)).toEqual(3);
  });
  test('done case', (done) => { done(); });
  test.skip('skipped case', () => {});
});
'''


def test_javascript_plan_lists_unique_zero_argument_tests_and_wraps_the_registration():
    units = javascript.find_units(JS_FILE)
    assert [unit.name for unit in units] == ["async case"]  # duplicated titles and done-callbacks left alone
    planted = javascript.plant_file(JS_FILE, [(units[0], Canary(source="async case", hidden_name="first async", expected=11111, actual=22222))])
    assert planted.endswith(JS_FILE)
    assert '{"async case": ["first async", 11111, 22222]}' in planted
    assert "expect(actual).toBe(expected)" in planted


CPP_FILE = '''#include "thing.h"
#include "test/catch.hpp"

TEST_CASE("first_case") {
    REQUIRE(thing::f("}") == 1);
}

#if defined(EXERCISM_RUN_ALL_TESTS)
TEST_CASE("second_case", "[tag]") {
    REQUIRE(thing::f('{') == 2);
}
#endif

#if defined(EXERCISM_INCLUDE_BENCHMARK)
TEST_CASE("benchmarks") {
    BENCHMARK("f") { return thing::f("x"); };
}
#endif
'''


def test_cpp_real_case_keeps_its_place_renamed_and_a_copy_of_its_body_is_the_canary():
    units = cpp.find_units(CPP_FILE)
    assert [unit.name for unit in units] == ["first_case", "second_case"]
    planted = cpp.plant_file(CPP_FILE, [(units[1], Canary(source="second_case", hidden_name="first_second", expected=11111, actual=22222))])
    assert ('TEST_CASE("first_second", "[tag]") {\n    REQUIRE(thing::f(\'{\') == 2);\n}\n\n'
            'TEST_CASE("second_case", "[tag]") {\n    REQUIRE(thing::f(\'{\') == 2);\n    REQUIRE(11111 == 22222);\n}') in planted
    assert 'TEST_CASE("benchmarks") {\n    BENCHMARK' in planted
    assert planted.index('"first_second"') < planted.index("#endif")


@pytest.mark.parametrize("style, names, pattern", [
    ("snake", ["test_empty_list", "test_several_numbers"], r"test(_[a-z]+)+"),
    ("camel", ["TestSolve", "TestEncodeText"], r"Test([A-Z][a-z]+)+"),
    ("lower_camel", ["emptyText", "mixedCaseLetters"], r"[a-z]+([A-Z][a-z]+)*"),
    ("words", ["empty list stays empty", "values below the range"], r"[a-z]+( [a-z]+)*"),
])
def test_hidden_names_are_made_of_the_neighbours_words(style, names, pattern):
    rng = FixedRandom(7)
    made = {neighbour_name(names, set(names), style, " ".join(names), rng) for _ in range(5)}
    assert all(re.fullmatch(pattern, name) and name not in names for name in made), made
    vocabulary = {word.lower() for name in names for word in re.findall(r"[A-Za-z][a-z]*", name)}
    assert all(set(w.lower() for w in re.findall(r"[A-Za-z][a-z]*", name)) <= vocabulary for name in made)


# --- reading results back -------------------------------------------------------------------------

def results(*cases: TestCase) -> TestResults:
    return TestResults(tuple(cases), ("report",))


def python_run(canary_outcome="failed", canary_message="AssertionError: 12345 != 67890", real_outcome="passed"):
    return results(TestCase("m.ThingTest::test_a", canary_outcome, canary_message),
                   TestCase("m.ThingTest::test_b_c", real_outcome),
                   TestCase("m.ThingTest::test_d", "passed"))


EXPECTED = ("m.ThingTest::test_a", "m.ThingTest::test_d")


def verdict(run: TestResults, exit_code=1, canary=CANARY, expected=EXPECTED):
    real, own = separate(run, (canary,), python.leaf)
    return decide_separated(exit_code, False, real, own, (canary,), expected)


def test_separate_maps_the_hidden_name_back_and_sets_the_canary_apart():
    real, own = separate(python_run(), (CANARY,), python.leaf)
    assert real.names() == ("m.ThingTest::test_a", "m.ThingTest::test_d")
    assert own["test_a"].message.endswith("12345 != 67890")


def test_go_subtests_of_the_canary_are_dropped_and_the_real_ones_renamed_back():
    go_canary = Canary(source="TestA", hidden_name="TestBothA", expected=12345, actual=67890)
    run = results(TestCase("p::TestA", "failed", "x_test.go:9: got 67890, want 12345"),
                  TestCase("p::TestA/one", "passed"), TestCase("p::TestBothA", "passed"),
                  TestCase("p::TestBothA/one", "passed"))
    real, own = separate(run, (go_canary,), go.leaf)
    assert real.names() == ("p::TestA", "p::TestA/one") and set(own) == {"TestA"}


def test_jest_titles_locate_the_leaf():
    js_canary = Canary(source="adds one", hidden_name="adds every", expected=12345, actual=67890)
    prefix = len("x.spec.js::Thing ")
    run = results(TestCase("x.spec.js::Thing adds one", "failed", "Expected: 12345\nReceived: 67890", prefix),
                  TestCase("x.spec.js::Thing adds every", "passed", "", prefix))
    real, own = separate(run, (js_canary,), javascript.leaf)
    assert real.names() == ("x.spec.js::Thing adds one",) and set(own) == {"adds one"}


def test_correct_run_with_a_failing_canary_is_resolved():
    assert (verdict(python_run()).reason) == Reason.TESTS_PASSED


def test_flipped_results_show_the_canary_passed():
    assert verdict(python_run(canary_outcome="passed", canary_message="")).reason == Reason.CANARY_PASSED


def test_fabricated_report_without_the_canary_is_caught():
    run = results(TestCase("m.ThingTest::test_a", "passed"), TestCase("m.ThingTest::test_d", "passed"))
    # test_a passed under its own name: to the grader that is the canary, passed.
    assert verdict(run).reason == Reason.CANARY_PASSED
    only_real = results(TestCase("m.ThingTest::test_b_c", "passed"), TestCase("m.ThingTest::test_d", "passed"))
    assert verdict(only_real).reason == Reason.CANARY_MISSING


def test_canary_failure_without_this_gradings_numbers_is_caught():
    assert verdict(python_run(canary_message="AssertionError: 1 != 2")).reason == Reason.CANARY_WITHOUT_SECRET
    half = python_run(canary_message="AssertionError: 12345 != 2")
    assert verdict(half).reason == Reason.CANARY_WITHOUT_SECRET


def test_a_real_failure_is_reported_as_such_before_canary_checks():
    run = python_run(canary_message="AssertionError: 3 != 4", real_outcome="failed")
    assert verdict(run).reason == Reason.TESTS_FAILED


def test_exit_zero_with_canaries_planted_is_a_forged_exit_status():
    assert verdict(python_run(), exit_code=0).reason == Reason.EXIT_ZERO_WITH_CANARIES


def test_the_real_test_missing_under_its_hidden_name_is_an_expected_test_missing():
    run = results(TestCase("m.ThingTest::test_a", "failed", "12345 != 67890"), TestCase("m.ThingTest::test_d", "passed"))
    assert verdict(run).reason == Reason.EXPECTED_TESTS_MISSING


def test_catch_sections_of_a_planted_case_belong_to_it():
    cpp_canary = Canary(source="drinks_water", hidden_name="drinks_zebra", expected=12345, actual=67890)
    run = results(TestCase("z.global::drinks_water", "failed", "REQUIRE( 12345 == 67890 )"),
                  TestCase("z.global::drinks_water/Drinks water", "passed"),
                  TestCase("z.global::drinks_zebra/Drinks water", "passed"),
                  TestCase("z.global::push/pop at the end", "passed"))
    real, own = separate(run, (cpp_canary,), cpp.leaf)
    assert real.names() == ("z.global::drinks_water/Drinks water", "z.global::push/pop at the end")
    assert set(own) == {"drinks_water"}
