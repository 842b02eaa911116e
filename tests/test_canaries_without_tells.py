"""Canaries without tells (issue 25, layer 4): pure, no Docker.

A canary is a copy of a real test with ONE assertion's expected literal mutated to a fresh
value of the same type, every test of its file renamed; it must fail with the framework's
own message for that assertion. Every failure message is capped, whatever its JSON type,
before anything matches it. That the formats below are the frameworks' real ones is checked
for real by preparation (a canary is recorded only when its message matched on the
reference run) on the real benchmark.
"""

from __future__ import annotations

import itertools
import json
import random
import re
from pathlib import Path

import pytest

from polyglot_harness.utils.judging.canaries import (Canary, LiteralSyntax, Mutation, appearance_profile, fresh_value,
                                                     plant, plant_text, separate)
from polyglot_harness.utils.judging.runner_results import (FAILED, PASSED, TestCase, TestResults, parse_go_test_json,
                                                           parse_jest_json, parse_junit_reports,
                                                           parse_libtest_logfiles)
from polyglot_harness.utils.judging.verdict import decide_separated
from polyglot_harness.utils.languages import cpp, go, java, javascript, python, rust
from polyglot_harness.utils.languages.spec import matches_any
from polyglot_harness.utils.outcomes import Reason


class FixedRandom(random.Random):
    """Deterministic stand-in for secrets.SystemRandom."""


def de_bruijn(alphabet: str, length: int) -> str:
    """A string holding every `length`-long word over `alphabet` (every 5-digit number)."""
    k = len(alphabet)
    a = [0] * k * length
    sequence: list[int] = []

    def db(t: int, p: int) -> None:
        if t > length:
            if length % p == 0:
                sequence.extend(a[1:p + 1])
        else:
            a[t] = a[t - p]
            db(t + 1, p)
            for j in range(a[t - p] + 1, k):
                a[t] = j
                db(t + 1, t)

    db(1, 1)
    text = "".join(alphabet[i] for i in sequence)
    return text + text[:length - 1]


DE_BRUIJN = de_bruijn("0123456789", 5)

# --- one small test file per language, the framework's real message for a mutated value -----

FILES = {
    python: ("thing_test.py", '''import unittest

from thing import f


class ThingTest(unittest.TestCase):
    def test_one(self):
        self.assertEqual(f(1), 12)

    def test_two_words(self):
        self.assertEqual(f(2), "two words")

    def test_three(self):
        self.assertTrue(f(3))
'''),
    javascript: ("thing.spec.js", '''import { f } from './thing';

describe('thing', () => {
  test('one thing', () => {
    expect(f(1)).toEqual(12);
  });

  test('two things', () => {
    const expected = 'two words';
    expect(f(2)).toBe(expected);
  });

  test('three things', () => expect(f(3)).toBeTruthy());
});
'''),
    rust: ("tests/thing.rs", '''use thing::*;

#[test]
fn one() {
    assert_eq!(f(1), 12);
}

#[test]
fn two_words() {
    let expected = "two words";
    assert_eq!(f(2), expected);
}

#[test]
fn three() {
    // With a message (a bare assert! gets a copy: tests/test_truth_canaries.py).
    assert!(f(3) > 0, "f(3) is positive");
}
'''),
    java: ("src/test/java/ThingTest.java", '''import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

public class ThingTest {
    @Test
    public void one() {
        assertThat(new Thing().f(1)).isEqualTo(12);
    }

    @Test
    public void twoWords() {
        assertThat(new Thing().g(2)).isEqualTo("two words");
    }

    @Test
    public void three() {
        assertThat(new Thing().f(3)).isPositive();
    }
}
'''),
    cpp: ("thing_test.cpp", '''#include "thing.h"
#include "test/catch.hpp"

TEST_CASE("one") {
    REQUIRE(thing::f(1) == 12);
}

TEST_CASE("two_words") {
    REQUIRE("two words" == thing::g(2));
}

TEST_CASE("three") {
    REQUIRE(thing::f(3) > 0);
}
'''),
}

# (what a correct solution returns, the framework's failure message for an expected value)
MESSAGES = {
    python: lambda actual, expected: f"AssertionError: {actual!r} != {expected!r}",
    javascript: lambda actual, expected: (
        f"Error: expect(received).{'toEqual' if isinstance(expected, int) else 'toBe'}(expected) // "
        f"{'deep equality' if isinstance(expected, int) else 'Object.is equality'}\n\n"
        f"Expected: {json.dumps(expected)}\nReceived: {json.dumps(actual)}\n    at Object.<anonymous> (thing.spec.js:5:18)"),
    rust: lambda actual, expected: (
        f"thread 'one' panicked at tests/thing.rs:5:5:\nassertion `left == right` failed\n"
        f"  left: {json.dumps(actual)}\n right: {json.dumps(expected)}\n"
        "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"),
    java: lambda actual, expected: (
        f"\nexpected: {json.dumps(expected)}\n but was: {json.dumps(actual)}\n"
        "org.opentest4j.AssertionFailedError: \nexpected: ...\n\tat ThingTest.one(ThingTest.java:8)"),
}


def catch_message(expression: str, expansion: str) -> str:
    return f"{expression}\nFAILED:\n  REQUIRE( {expression} )\nwith expansion:\n  {expansion}\nat /testbed/thing_test.cpp:5"


def planted(language, seed: int = 3, tmp_path: Path | None = None):
    name, text = FILES[language]
    units = language.PLANTER.find_units(text)
    rng = FixedRandom(seed)
    return text, units, rng


def plant_fixture(language, tmp_path: Path, seed: int = 3):
    name, text = FILES[language]
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    canaries = plant(tmp_path, language.PLANTER, matches_any, None, None, FixedRandom(seed))
    return text, path.read_text(), canaries


LANGUAGES_WITH_MUTANTS = [python, javascript, rust, java, cpp]


@pytest.mark.parametrize("language", LANGUAGES_WITH_MUTANTS, ids=lambda module: module.__name__.rsplit(".", 1)[-1])
def test_a_canary_is_a_copy_of_a_real_test_with_one_expected_value_mutated(language, tmp_path: Path):
    pristine, text, canaries = plant_fixture(language, tmp_path)
    by_source = {canary.source: canary for canary in canaries}
    one, two, three = (unit.name for unit in language.PLANTER.find_units(pristine))
    assert by_source[one].mutation and by_source[two].mutation and by_source[three].mutation is None
    for canary in (by_source[one], by_source[two]):
        literal = canary.mutation.literal
        assert literal not in pristine and text.count(literal) == 1
        assert canary.hidden_name in text and canary.name in text
    # No upstream test name is left in the planted file: names tell nothing.
    assert {unit.name for unit in language.PLANTER.find_units(text)}.isdisjoint({one, two, three})
    assert len(language.PLANTER.find_units(text)) >= 5  # three tests, two mutated copies (+ the fallback)
    # The real test's body is unchanged under its hidden name.
    renamed = language.PLANTER.find_units(text)
    real = next(unit for unit in renamed if unit.name == by_source[one].hidden_name)
    original = next(unit for unit in language.PLANTER.find_units(pristine) if unit.name == one)
    assert language.PLANTER.mutator.rename(text[real.start:real.end], real.name, one) == pristine[original.start:original.end]


@pytest.mark.parametrize("language", LANGUAGES_WITH_MUTANTS, ids=lambda module: module.__name__.rsplit(".", 1)[-1])
def test_a_mutated_canary_sits_next_to_its_real_test_in_a_drawn_order(language, tmp_path: Path):
    orders = set()
    for seed in range(12):
        _, text, canaries = plant_fixture(language, tmp_path / str(seed), seed)
        canary = next(canary for canary in canaries if canary.source == language.PLANTER.find_units(FILES[language][1])[0].name)
        names = [unit.name for unit in language.PLANTER.find_units(text)]
        pair = {names.index(canary.name), names.index(canary.hidden_name)}
        assert max(pair) - min(pair) == 1
        orders.add(names.index(canary.name) < names.index(canary.hidden_name))
    assert orders == {True, False}


@pytest.mark.parametrize("language", [python, javascript, rust, java], ids=lambda module: module.__name__.rsplit(".", 1)[-1])
def test_the_failure_format_matches_the_frameworks_message_and_nothing_else(language, tmp_path: Path):
    _, _, canaries = plant_fixture(language, tmp_path)
    for canary in (canary for canary in canaries if canary.mutation):
        original = 12 if canary.source in ("test_one", "one thing", "one") else "two words"
        expected = _value_of(canary)
        assert canary.carries_secret(MESSAGES[language](original, expected)), canary
        assert not canary.carries_secret(MESSAGES[language](original, _other(expected))), canary
        assert not canary.carries_secret(DE_BRUIJN + "\n" + MESSAGES[language](original, expected)[:30])


def test_catch_format_needs_the_expression_and_its_expansion(tmp_path: Path):
    _, _, canaries = plant_fixture(cpp, tmp_path)
    one = next(canary for canary in canaries if canary.source == "one")
    value = _value_of(one)
    assert one.carries_secret(catch_message(f"thing::f(1) == {value}", f"12 == {value}"))
    assert not one.carries_secret(catch_message(f"thing::f(1) == {value}", f"12 == {value + 1}"))
    assert not one.carries_secret(f"{value} == {value} " + DE_BRUIJN)
    two = next(canary for canary in canaries if canary.source == "two_words")
    shown = json.dumps(_value_of(two))
    assert two.carries_secret(catch_message(f'{shown} == thing::g(2)', f'{shown} == "two words"'))
    fallback = Canary(source="three", hidden_name="x", expected=25455, actual=74937, fallback_failure=cpp.PLANTER.fallback_failure(25455, 74937))
    assert fallback.carries_secret(catch_message("25455 == 74937", "25455 (0x636f) == 74937 (0x124b9)"))  # Catch's hex
    assert not fallback.carries_secret(catch_message("25455 == 74937", "25455 == 74937"))


def _value_of(canary: Canary):
    literal = canary.mutation.literal
    return int(literal) if re.fullmatch(r"-?\d+", literal) else literal[1:-1]


def _other(value):
    return value + 1 if isinstance(value, int) else value + "x"


def test_go_tests_are_renamed_and_its_canaries_fall_back_with_the_exact_format(tmp_path: Path):
    source = '''package thing

import "testing"

func TestOne(t *testing.T) {
\tfor _, tc := range cases {
\t\tif got := F(tc.in); got != tc.want {
\t\t\tt.Fatalf("F(%d) = %d, want %d", tc.in, got, tc.want)
\t\t}
\t}
}

func TestTwo(t *testing.T) {}
'''
    (tmp_path / "thing_test.go").write_text(source)
    canaries = plant(tmp_path, go.PLANTER, matches_any, ["TestOne"], 3, FixedRandom(1))
    text = (tmp_path / "thing_test.go").read_text()
    (canary,) = canaries
    assert "func TestOne(" not in text and "func TestTwo(" not in text
    assert f"func {canary.name}(t *testing.T) {{\n\t{canary.hidden_name}(t)" in text
    output = f"=== RUN   {canary.name}\n    thing_test.go:17: got {canary.actual}, want {canary.expected}\n--- FAIL"
    assert canary.carries_secret(output)
    assert not canary.carries_secret(DE_BRUIJN)


# --- fresh values -------------------------------------------------------------------------

@pytest.mark.parametrize("value", [0, 7, 12, 255, 300, 40_000, -3, -128, 2**40, "two words", "AB-12", "x", True, False])
def test_a_fresh_value_has_the_type_and_shape_of_the_original_and_differs(value):
    rng = FixedRandom(5)
    for _ in range(200):
        new = fresh_value(value, [], rng)
        assert type(new) is type(value) and new != value
        if isinstance(value, int) and not isinstance(value, bool):
            assert (new < 0) == (value < 0) and len(str(abs(new))) == len(str(abs(value)))
            assert abs(new) <= max(abs(value), 127) if abs(value) <= 127 else True
        if isinstance(value, str):
            assert len(new) == len(value) and [c.isalpha() for c in new] == [c.isalpha() for c in value]


def test_an_integer_stays_within_the_width_its_original_fits():
    rng = FixedRandom(2)
    assert all(fresh_value(200, [], rng) <= 255 for _ in range(500))  # a u8 literal stays a u8
    assert all(fresh_value(100, [], rng) <= 127 for _ in range(500))  # an i8 stays an i8


def test_a_fresh_value_appears_where_the_original_appears_no_more_no_less():
    """Issue 32: a value drawn from the file's other expected values is always another test's
    real value, so the real test of a pair was the one whose value appears nowhere else. The
    copy's value now has the original's appearance profile."""
    rng = FixedRandom(4)
    own, rest, docs = "f(3)", "assert f(1) == 34\nassert f(2) == 56\n", "the answer is 12 or 21"
    profile = lambda value: appearance_profile(value, own, rest, docs)  # noqa: E731
    drawn = {fresh_value(12, [12, 34, 56, 7, "ab"], rng, ("21",), profile) for _ in range(100)}
    assert drawn == {21}  # in the docs once, nowhere else: as 12
    profile_34 = lambda value: appearance_profile(value, own, rest.replace("34", "99"), docs)  # noqa: E731
    assert {fresh_value(99, [99, 56], rng, (), profile_34) for _ in range(50)} == {56}  # another test's: another's


def test_a_local_counts_as_the_expected_value_only_when_the_assertion_is_its_one_use():
    syntax = LiteralSyntax('"', ("false", "true"), re.compile(r"\blet (?P<name>\w+) = (?P<value>[^;]+);"))
    once = 'let expected = "ab";\nassert_eq!(f(), expected);'
    twice = 'let expected = "ab";\nassert_eq!(f(expected), expected);'
    span = (once.rindex("expected"), once.rindex("expected") + len("expected"))
    assert syntax.side(once, span) == (15, 19, "ab")
    span = (twice.rindex("expected"), twice.rindex("expected") + len("expected"))
    assert syntax.side(twice, span) is None
    ranged = 'let trials = 100;\nfor _ in 0..trials {}\nassert_eq!(keys.len(), trials);'
    span = (ranged.rindex("trials"), ranged.rindex("trials") + len("trials"))
    assert syntax.side(ranged, span) is None  # `0..trials` is a use too


def test_grading_plants_canaries_of_mutable_tests_first(tmp_path: Path):
    _, text = FILES[python]
    (tmp_path / "thing_test.py").write_text(text)
    for seed in range(10):
        (tmp_path / "thing_test.py").write_text(text)
        canaries = plant(tmp_path, python.PLANTER, matches_any, ["test_one", "test_two_words", "test_three"], 2,
                         FixedRandom(seed))
        assert all(canary.mutation for canary in canaries)


# --- results read back, verdict ---------------------------------------------------------

def _mutated(source="test_one") -> Canary:
    return Canary(source=source, hidden_name="test_hidden", expected=11111, actual=22222, name="test_canary",
                  mutation=Mutation(0, 1, "5", "^AssertionError: .* != 5$", False),
                  renames=(("test_other_renamed", "test_other"),))


def test_every_renamed_test_maps_back_and_the_canary_is_set_apart_by_its_own_name():
    canary = _mutated()
    results = TestResults((TestCase("t.py::T::test_hidden", PASSED), TestCase("t.py::T::test_other_renamed", PASSED),
                           TestCase("t.py::T::test_canary", FAILED, "AssertionError: 12 != 5")))
    real, own = separate(results, [canary], python.leaf)
    assert real.names() == ("t.py::T::test_one", "t.py::T::test_other")
    assert own["test_one"].name == "t.py::T::test_canary"
    verdict = decide_separated(1, False, real, own, [canary], ("t.py::T::test_one", "t.py::T::test_other"))
    assert verdict.resolved, verdict


def test_a_canary_failing_with_a_de_bruijn_message_has_no_secret():
    canary = _mutated()
    real = TestResults((TestCase("t.py::T::test_one", PASSED),))
    own = {"test_one": TestCase("t.py::T::test_canary", FAILED, DE_BRUIJN + "\nAssertionError: 12 != 5")}
    verdict = decide_separated(1, False, real, own, [canary])
    assert verdict.reason == Reason.CANARY_WITHOUT_SECRET
    fallback = Canary(source="test_one", hidden_name="test_hidden", expected=11111, actual=22222)  # the substring scheme a language may keep
    assert not fallback.carries_secret(DE_BRUIJN)  # capped before the substring test


def test_feedback_planting_is_redone_from_the_canaries_alone(tmp_path: Path):
    pristine, text, canaries = plant_fixture(python, tmp_path)
    units = python.PLANTER.find_units(pristine)
    chosen = [(unit, canary) for unit in units for canary in canaries if canary.source == unit.name]
    assert plant_text(python.PLANTER, pristine, chosen) == text


# --- every failure message capped, whatever its type --------------------------------------

CAP = 4000


@pytest.mark.parametrize("messages", [
    DE_BRUIJN,                                   # one huge string (the attacker)
    [DE_BRUIJN],
    [str(n) for n in range(10_000, 99_999)],     # one entry per number
    {"message": DE_BRUIJN},                      # an object
    [[DE_BRUIJN], {"x": DE_BRUIJN}, 12345],
])
def test_jest_failure_messages_are_capped_whatever_their_json_type(messages):
    report = {"testResults": [{"name": "/testbed/thing.spec.js", "assertionResults": [
        {"title": "one", "fullName": "one", "status": "failed", "failureMessages": messages}]}]}
    (case,) = parse_jest_json({"jest.json": json.dumps(report)}).cases
    assert len(case.message) <= CAP
    assert not all(str(number) in case.message for number in range(10_000, 99_999))


def test_junit_failure_messages_are_capped_in_length_and_count():
    failures = "".join(f'<failure message="{DE_BRUIJN}">{DE_BRUIJN}</failure>' for _ in range(40))
    xml = f'<testsuite><testcase classname="T" name="one">{failures}</testcase></testsuite>'
    (case,) = parse_junit_reports({"junit.xml": xml}).cases
    assert len(case.message) <= CAP


def test_go_test_output_is_capped():
    lines = [{"Action": "run", "Package": "p", "Test": "TestOne"}]
    lines += [{"Action": "output", "Package": "p", "Test": "TestOne", "Output": chunk}
              for chunk in (DE_BRUIJN[i:i + 1000] for i in range(0, len(DE_BRUIJN), 1000))]
    lines += [{"Action": "fail", "Package": "p", "Test": "TestOne"}, {"Action": "fail", "Package": "p"}]
    results = parse_go_test_json({"go.json": "\n".join(json.dumps(line) for line in lines)})
    assert all(len(case.message) <= CAP for case in results.cases)


def test_libtest_panic_sections_are_capped():
    console = f"---- one stdout ----\n{DE_BRUIJN}\n\nfailures:\n    one\n"
    results = parse_libtest_logfiles({"libtest-0.log": "failed one\n", "libtest-0.out": console})
    assert len(results.cases[0].message) <= CAP


def test_the_de_bruijn_string_does_hold_every_five_digit_number():
    """The attacker's message is what the issue says it is (the tests above are not vacuous)."""
    assert all(str(number) in DE_BRUIJN for number in itertools.islice(range(10_000, 99_999), 0, None, 997))
    assert len(DE_BRUIJN) > 100_000


def test_a_flat_list_literal_expected_value_has_its_first_plain_element_mutated():
    text = '''    def test_best(self):
        self.assertEqual(best_hands(["4S 5H", "7S 8S"]), ["7S 8S", 3])
'''
    (assertion,) = python.assertions(text)
    assert text[assertion.start:assertion.end] == '"7S 8S"' and assertion.value == "7S 8S"
    unittest_message = ("AssertionError: Lists differ: ['7S 8S', 3] != ['4S 5H', 3]\n\n"
                        "First differing element 0:\n'7S 8S'\n'4S 5H'\n\n- ['7S 8S', 3]\n+ ['4S 5H', 3]")
    assert re.search(assertion.failure("4S 5H"), unittest_message, re.M)
    assert not re.search(assertion.failure("4S 5X"), unittest_message, re.M)
    spec = """  test('x', () => {
    expect(f(1)).toEqual(['a', 2]);
  });"""
    (element,) = javascript.assertions(spec)
    jest_message = ('Error: expect(received).toEqual(expected) // deep equality\n\n- Expected  - 1\n+ Received  + 1\n\n'
                    '  Array [\n-   "zz",\n+   "a",\n    2,\n  ]\n    at Object.toEqual (x.spec.js:2:18)')
    assert re.search(element.failure("zz"), jest_message, re.M)
    assert not re.search(element.failure("zy"), jest_message, re.M)


def test_assertj_is_true_becomes_is_false_with_assertjs_message():
    text = """@Test
    public void ok() {
        assertThat(new Thing().ok(1)).isTrue();
    }"""
    (assertion,) = java.assertions(text)
    assert text[assertion.start:assertion.end] == "isTrue" and assertion.written(not assertion.value) == "isFalse"
    failure = assertion.failure(False)
    assert re.search(failure, "\nExpecting value to be false but was true\n\tat ThingTest.ok", re.M)
    assert not re.search(failure, "\nExpecting value to be true but was false", re.M)


def test_a_canary_reported_only_by_its_catch_sections_is_read_from_the_failed_one():
    canary = Canary(source="owns_zebra", hidden_name="drinks_owns", expected=11111, actual=22222, name="zebra_owns",
                    mutation=Mutation(0, 1, '"Japanese"', '^  REQUIRE\\( .* == "Japanese" \\)$', False))
    results = TestResults((TestCase("z.global::drinks_owns/Owns zebra", PASSED),
                           TestCase("z.global::zebra_owns/Other", PASSED),
                           TestCase("z.global::zebra_owns/Owns zebra", FAILED,
                                    '  REQUIRE( solution.ownsZebra == "Japanese" )')))
    real, own = separate(results, [canary], cpp.leaf)
    assert real.names() == ("z.global::owns_zebra/Owns zebra",)
    assert own["owns_zebra"].outcome == FAILED and canary.carries_secret(own["owns_zebra"].message)
    flipped = TestResults(tuple(replace_outcome(case) for case in results.cases))
    assert separate(flipped, [canary], cpp.leaf)[1]["owns_zebra"].outcome == PASSED


def replace_outcome(case: TestCase) -> TestCase:
    from dataclasses import replace
    return replace(case, outcome=PASSED)


def test_which_drawn_name_the_real_test_gets_is_a_coin(tmp_path: Path):
    """In a file of one test, the second name drawn runs longer (`neighbour_name` runs out of
    pairs); when the real test always took the first, its name told it from its copy (red team
    9: go__wordy's real test was TestAnswerAnswer in 30 of 30 plantings, and a Go solution
    reading the test table from memory chose by that)."""
    import secrets

    from polyglot_harness.utils.judging.canaries import plant

    text = "package w\n\nimport \"testing\"\n\nfunc TestAnswer(t *testing.T) {\n\tif Answer(2) != 5 {\n\t\tt.Fatalf(\"got %d, want %d\", Answer(2), 5)\n\t}\n}\n"
    longer_real = 0
    for _ in range(40):
        (tmp_path / "w_test.go").write_text(text)
        (canary,) = plant(tmp_path, go.PLANTER, matches_any, None, None, secrets.SystemRandom())
        longer_real += len(canary.hidden_name) > len(canary.name)
    assert 6 <= longer_real <= 34, longer_real  # a coin: P(outside) < 1e-5
