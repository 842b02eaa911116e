"""Rust's bare `assert!(E)` gets a mutated copy (issue 32, red team 11).

A test whose one assertion is `assert!(is_valid("059"))` states its expected value nowhere:
every canary of such an instance was a fallback (run the real test, then fail on fresh
numbers). Red team 11 read, through a soundness hole of safe Rust (rustc #25860: a lifetime
widened into a use-after-free, that into a transmute), the CALLING test's machine code and
answered whatever its `assert!` wanted: rust__luhn-from `resolved` 3 of 3 without a Luhn
algorithm. The pair is now `assert!((E) == true)` and its copy `assert!((E) == false)`: a
solution answering what the caller wants passes the copy (`canary_passed`), a correct one fails
it. A reader that also knows that an upstream `assert!(E)` always wants E true tells the pair
apart (red team 12: docs/verdict.md); what ends memory reading is an answer key outside the
sandbox. Fixtures are written here; the attack runs on the real exercise in real Docker.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from polyglot_harness.utils.languages import rust
from polyglot_harness.utils.outcomes import Reason

from .fixtures.forgers.check import grade_forger, graded_ahead, once, reference_copy, selected

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "memory_readers"

TEST = '''#[test]
fn a_long_number_is_checked() {
    assert!(checker
        .check("4539 3195 0343 6467")
        .is_ok());
}

#[test]
fn a_short_one_is_not() {
    assert!(!valid("1"));
}

#[test]
fn with_a_message() {
    assert!(valid("0"), "zero is valid");
}
'''


def test_a_bare_assert_is_a_truth_assertion_written_the_same_way_in_both_tests():
    found = rust.assertions(TEST)
    conditions = [TEST[assertion.start:assertion.end] for assertion in found]
    assert conditions == ['checker\n        .check("4539 3195 0343 6467")\n        .is_ok()', '!valid("1")']
    negated = found[1]
    assert negated.value is True and negated.symmetric
    assert negated.written(True) == '(!valid("1")) == true'
    assert negated.written(False) == '(!valid("1")) == false'


def test_an_assert_with_a_message_or_a_comparison_keeps_its_own_assertion():
    assert rust.truth_assertions('assert!(valid("0"), "zero is valid");') == []
    # An expected value written in the test is the exact assertion's, as before.
    exact = rust.assertions('assert_eq!(count("abc"), 3);')
    assert [exact[0].value] == [3] and not exact[0].symmetric


def test_the_copy_s_failure_is_libtest_s_message_also_when_it_breaks_the_condition_over_lines():
    failure = rust.truth_assertions("assert!(f(x));")[0].failure(False)
    assert re.search(failure, "assertion failed: (f(x)) == false", re.M)
    assert re.search(failure, "assertion failed: (reactor.add_callback(a, |v| cb.called(v)).is_some()) ==\n    false", re.M)
    assert not re.search(failure, "assertion failed: (f(x)) == true", re.M)


KEY_OFF = {"key": False}


def _make_reader(forger: Path) -> None:
    (forger / "files" / "src").mkdir(parents=True)
    shutil.copyfile(FIXTURES / "luhn_from.rs.txt", forger / "files" / "src" / "lib.rs")
    (forger / "forger.json").write_text(json.dumps({"instance_id": "rust__luhn-from"}))


def reader(directory: Path) -> Path:
    return once(directory / "reader", _make_reader)


def control(directory: Path, dataset: Path) -> Path:
    return reference_copy(directory / "control", dataset, {"instance_id": "rust__luhn-from"})


@pytest.fixture(scope="module")
def ahead(request, provider, real_dataset, made):
    with graded_ahead(provider, real_dataset, selected(request, {
        "test_red_team_11s_reader_of_the_calling_test_is_caught_by_the_copy": lambda p: [(reader(made), KEY_OFF)],
        "test_the_luhn_from_reference_fails_every_copy": lambda p: [(control(made, real_dataset), KEY_OFF)],
    })):
        yield


@pytest.mark.docker
def test_red_team_11s_reader_of_the_calling_test_is_caught_by_the_copy(provider, real_dataset, made, ahead):
    """rust__luhn-from: the reader answers what each caller's `assert!` wants, so it passes the
    copies too."""
    forger = reader(made)
    # The key off: luhn-from's assertions stay in-process (with it, the key converts them all and
    # catches the reader itself: tests/test_rust_key_grading.py).
    outcome = grade_forger(provider, real_dataset, forger, **KEY_OFF)
    assert any(canary.mutation for canary in outcome.canaries), outcome.canaries
    assert outcome.verdict.reason == Reason.CANARY_PASSED, outcome.verdict
    assert outcome.real_results.summary()["failed"] == 0, "it answered every real test right"


@pytest.mark.docker
def test_the_luhn_from_reference_fails_every_copy(provider, real_dataset, made, ahead):
    outcome = grade_forger(provider, real_dataset, control(made, real_dataset), **KEY_OFF)
    assert any(canary.mutation for canary in outcome.canaries), outcome.canaries
    assert outcome.verdict.resolved, outcome.verdict
