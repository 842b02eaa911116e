"""Canaries no solution-defined type can fool, and copies no reader can tell apart (issue 32).

A solution can define the equality of a type the tests compare (an enum's operator==, a
class's equals(), a PartialEq impl) to always hold. Where every canary was a fallback (run
the real test, then fail on two fresh numbers) such a type passed exactly as a correct
solution does. A canary now also swaps an expected named constant for another the tests
write under its qualifier, or changes a value inside an expected expression of constants:
a correct solution fails the copy, an always-equal type passes it (canary_passed).

The copy's value has the original's appearance profile (where else it appears: its own test,
the other tests, the instructions), so a reader holding the planted text cannot pick the
real test of a pair by where its value appears.
"""

from __future__ import annotations

import json
import random
import re
import shutil
from pathlib import Path

import pytest

from .fixtures.forgers.check import grade_forger, graded_ahead, reference_copy, selected
from polyglot_harness.utils.judging.canaries import Symbol, _first_assertion, plant, symbol_value
from polyglot_harness.utils.languages import cpp, java, rust
from polyglot_harness.utils.languages.spec import matches_any
from polyglot_harness.utils.outcomes import Reason

ATTACKS_DIR = Path(__file__).resolve().parent / "fixtures" / "always_equal"
ATTACKS = sorted(path.parent for path in ATTACKS_DIR.glob("*/*/forger.json"))


class FixedRandom(random.Random):
    """Deterministic stand-in for secrets.SystemRandom."""


def exercise(benchmark: Path, language: str, slug: str) -> Path:
    return benchmark / language / "exercises" / "practice" / slug


def planted_tree(source: Path, tmp_path: Path, globs: tuple[str, ...]) -> Path:
    """The exercise's test files (and instructions) in a fresh tree, as grading sees them."""
    tree = tmp_path / "tree"
    shutil.rmtree(tree, ignore_errors=True)
    for path in source.rglob("*"):
        relative = path.relative_to(source).as_posix()
        if path.is_file() and (matches_any(relative, globs) or relative.startswith(".docs/")):
            (tree / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, tree / relative)
    return tree


# --- which values a canary changes (pure) ---------------------------------------------------

@pytest.mark.parametrize("language, slug, qualifier", [
    (cpp, "perfect-numbers", "perfect_numbers::classification::"),
    (java, "connect", "Winner."),
])
def test_an_expected_enum_constant_is_swapped_for_another_of_its_enum(language, slug, qualifier, benchmark_checkout,
                                                                       tmp_path):
    source = exercise(benchmark_checkout, language.LANGUAGE.name, slug)
    tree = planted_tree(source, tmp_path, language.PLANTER.file_globs)
    canaries = plant(tree, language.PLANTER, matches_any, None, None, FixedRandom(3))
    mutated = [canary for canary in canaries if canary.mutation]
    assert mutated, slug
    for canary in mutated:
        assert canary.mutation.literal.startswith(qualifier)
    planted = "\n".join(path.read_text() for path in tree.rglob("*") if path.suffix in (".cpp", ".java"))
    assert all(canary.name in planted and canary.hidden_name in planted for canary in mutated)


def test_a_field_of_an_expected_struct_literal_is_changed(benchmark_checkout, tmp_path):
    """rust__two-bucket: `let expected = Some(BucketStats { moves: 4, .. });` then
    `assert_eq!(output, expected)`: the copy changes the first value inside it."""
    source = exercise(benchmark_checkout, "rust", "two-bucket")
    tree = planted_tree(source, tmp_path, rust.PLANTER.file_globs)
    canaries = plant(tree, rust.PLANTER, matches_any, None, None, FixedRandom(5))
    mutated = [canary for canary in canaries if canary.mutation]
    assert mutated and all(re.fullmatch(r"\d+", canary.mutation.literal) for canary in mutated)
    message = "assertion `left == right` failed\n  left: Some(BucketStats { moves: 4 })\n right: Some(BucketStats { moves: %s })"
    canary = mutated[0]
    assert canary.carries_secret(message % canary.mutation.literal)
    assert not canary.carries_secret(message % (int(canary.mutation.literal) + 100))


def test_catch_shows_the_swapped_constant_in_the_expression_it_reports(benchmark_checkout, tmp_path):
    source = exercise(benchmark_checkout, "cpp", "perfect-numbers")
    tree = planted_tree(source, tmp_path, cpp.PLANTER.file_globs)
    canary = next(c for c in plant(tree, cpp.PLANTER, matches_any, None, None, FixedRandom(1)) if c.mutation)
    message = (f"  REQUIRE( {canary.mutation.literal} == perfect_numbers::classify(6) )\nwith expansion:\n"
               f"  2 == 1")
    assert canary.carries_secret(message)
    other = "perfect_numbers::classification::" + ("perfect" if "abundant" in canary.mutation.literal else "abundant")
    assert not canary.carries_secret(message.replace(canary.mutation.literal, other))


def test_a_constant_with_no_other_under_its_qualifier_is_not_mutable():
    text = 'TEST_CASE("a") {\n    REQUIRE(ns::kind::only == ns::f(1));\n}\n'
    unit = cpp.find_units(text)[0]
    assert _first_assertion(cpp.PLANTER, text, unit, text) is None
    two = text + 'TEST_CASE("b") {\n    REQUIRE(ns::kind::other == ns::f(2));\n}\n'
    assertion = _first_assertion(cpp.PLANTER, two, cpp.find_units(two)[0], two)
    assert assertion is not None and assertion.value == Symbol("ns::kind::", "only")


def test_a_variables_field_is_no_named_constant():
    """`t.expected` and `t.input` need not share a type: swapping them could break the build
    at grading (another draw than preparation's)."""
    assert symbol_value("t.expected") is None
    assert symbol_value("Winner.NONE") == Symbol("Winner.", "NONE")
    assert symbol_value("sublist::List_comparison::equal") == Symbol("sublist::List_comparison::", "equal")


# --- a reader holding the test text (pure, real exercises) ----------------------------------

def value_token(literal: str) -> str:
    literal = literal.strip()
    return literal[1:-1] if literal[:1] in "\"'" else re.split(r"::|\.", literal)[-1]


@pytest.mark.parametrize("language, slug", [(rust, "pig-latin"), (java, "pig-latin"), (cpp, "perfect-numbers")])
def test_a_reader_choosing_the_real_test_by_where_its_value_appears_wins_a_coin(language, slug, benchmark_checkout,
                                                                               tmp_path):
    """Before issue 32 the copy's value was another test's real one: "the member whose value
    appears elsewhere in the tests is the copy" won 7/7 on rust__pig-latin and java__pig-latin."""
    source = exercise(benchmark_checkout, language.LANGUAGE.name, slug)
    rng = FixedRandom(11)
    wins = pairs = 0.0
    for _ in range(40):
        tree = planted_tree(source, tmp_path, language.PLANTER.file_globs)
        originals = {path: path.read_text() for path in tree.rglob("*") if matches_any(
            path.relative_to(tree).as_posix(), language.PLANTER.file_globs)}
        canaries = plant(tree, language.PLANTER, matches_any, None, 3, rng)
        planted = "\n".join(path.read_text() for path in originals)
        for canary in canaries:
            if canary.mutation is None:
                continue
            original = next(text for text in originals.values() if canary.source in text)
            unit = next(u for u in language.PLANTER.find_units(original) if u.name == canary.source)
            real = value_token(original[unit.start + canary.mutation.start:unit.start + canary.mutation.end])
            copy = value_token(canary.mutation.literal)
            seen = [len(re.findall(rf"(?<![\w.]){re.escape(value)}(?![\w.])", planted)) for value in (real, copy)]
            wins += 1.0 if seen[0] < seen[1] else 0.0 if seen[0] > seen[1] else 0.5
            pairs += 1
    assert pairs >= 40
    assert 0.3 <= wins / pairs <= 0.7, (slug, wins / pairs)


# --- an always-equal type through the real pipeline (Docker) ---------------------------------

# The canaries on their own: C++'s answer key off (with it, cpp__perfect-numbers' assertions
# are all converted and the key catches the attack: tests/test_cpp_key_grading.py).
KEY_OFF = {"key": False}


@pytest.fixture(scope="module")
def ahead(request, provider, real_dataset, made):
    def control(attack: Path) -> Path:
        return reference_copy(made, real_dataset, json.loads((attack / "forger.json").read_text()))

    with graded_ahead(provider, real_dataset, selected(request, {
        "test_an_always_equal_type_passes_its_copy_and_is_caught": lambda p: [(p["attack"], KEY_OFF)],
        "test_the_reference_with_the_same_canaries_resolves": lambda p: [(control(p["attack"]), KEY_OFF)],
    })):
        yield


@pytest.mark.docker
@pytest.mark.parametrize("attack", ATTACKS, ids=[f"{p.parent.name}/{p.name}" for p in ATTACKS])
def test_an_always_equal_type_passes_its_copy_and_is_caught(attack: Path, provider, real_dataset, ahead):
    """cpp__perfect-numbers and rust__two-bucket resolved before issue 32 (every canary a
    fallback; measured with the former planter). java__connect's Winner is an editor file:
    replacing it is dropped, so there the real tests fail as well."""
    meta = json.loads((attack / "forger.json").read_text())
    outcome = grade_forger(provider, real_dataset, attack, **KEY_OFF)
    assert any(canary.mutation for canary in outcome.canaries), meta["instance_id"]
    assert not outcome.verdict.resolved, outcome.verdict
    if meta.get("expect") == "provided_type":
        assert outcome.verdict.reason in (Reason.CANARY_PASSED, Reason.TESTS_FAILED), outcome.verdict
        assert outcome.results.summary()["failed"] > len(outcome.canaries), outcome.results.summary()
    else:
        assert outcome.verdict.reason == Reason.CANARY_PASSED, outcome.verdict


@pytest.mark.docker
@pytest.mark.parametrize("attack", ATTACKS, ids=[f"{p.parent.name}/{p.name}" for p in ATTACKS])
def test_the_reference_with_the_same_canaries_resolves(attack: Path, provider, real_dataset, made, ahead):
    """Control: the instance's reference solution, graded the same way, resolves."""
    meta = json.loads((attack / "forger.json").read_text())
    control = reference_copy(made, real_dataset, meta)
    outcome = grade_forger(provider, real_dataset, control, **KEY_OFF)  # as the attack runs
    assert any(canary.mutation for canary in outcome.canaries), meta["instance_id"]
    assert outcome.verdict.resolved, outcome.verdict
