"""Where a variant is planted says nothing of which test it came from (red team 4: beside its
source, the last known input before it named the source). Pure: `draw_gap`'s distribution
against its source's position, and `plant_variants` on small test files of our own in the
languages whose runners run tests in declaration order (jest, Catch) and in blocks whose setup
the copy must keep (a describe, a class, a C++ run of tests between helpers)."""

from __future__ import annotations

import ast
import random
from collections import Counter

from polyglot_harness.utils.judging.canaries import TestUnit
from polyglot_harness.utils.judging.variants import Variant, beside_source, draw_gap, plant_variants, same_block
from polyglot_harness.utils.languages import cpp, javascript, python

DRAWS = 3000
# The chi-square value a 5 x 6 table of independent counts (20 degrees of freedom) exceeds
# with probability 0.001.
CHI_SQUARE_20_DF_0_001 = 45.31


def chi_square(table: list[list[int]]) -> float:
    """Pearson's statistic of independence of a table's rows and columns."""
    total = sum(map(sum, table))
    columns = [sum(column) for column in zip(*table)]
    return sum((count - sum(row) * column / total) ** 2 / (sum(row) * column / total)
               for row in table for count, column in zip(row, columns) if column)


def gap_counts(gap, block: list[TestUnit], seed: int) -> list[list[int]]:
    """Per source position, how often each of the block's gaps was drawn (gap i: before test i;
    the last: after the last test)."""
    rng = random.Random(seed)
    table = []
    for source in block:
        counts = Counter()
        for _ in range(DRAWS):
            unit, before = gap(block, source, rng)
            counts[block.index(unit) + (0 if before else 1)] += 1
        table.append([counts[index] for index in range(len(block) + 1)])
    return table


BLOCK = [TestUnit(f"test_{index}", index * 10, index * 10 + 5) for index in range(5)]


def test_the_drawn_gap_is_independent_of_the_source_and_uniform():
    table = gap_counts(draw_gap, BLOCK, seed=7)
    assert chi_square(table) < CHI_SQUARE_20_DF_0_001
    expected = DRAWS / (len(BLOCK) + 1)
    assert all(abs(count - expected) < 0.15 * expected for row in table for count in row)


def test_the_former_placement_beside_the_source_fails_the_same_test():
    assert chi_square(gap_counts(beside_source, BLOCK, seed=7)) > 1000


JS = """describe('first', () => {
  let thing;
  beforeEach(() => { thing = make(1); });
  test('one', () => {
    expect(thing.value(1)).toEqual(1);
  });
  test('two', () => {
    expect(thing.value(2)).toEqual(2);
  });
  test('three', () => {
    expect(thing.value(3)).toEqual(3);
  });
});

describe('second', () => {
  test('four', () => {
    expect(other(4)).toEqual(4);
  });
  test('five', () => {
    expect(other(5)).toEqual(5);
  });
});
"""


def _variant_of(text: str, units, name: str, old: str, new: str) -> Variant:
    unit = next(unit for unit in units if unit.name == name)
    body = text[unit.start:unit.end]
    at = body.index(old)
    return Variant(name, ((at, at + len(old), new),))


def test_a_jest_variant_stays_in_its_describe_and_runs_anywhere_in_it(tmp_path):
    units = javascript.find_units(JS)
    variant = _variant_of(JS, units, "two", "value(2)", "value(7)")
    before = Counter()
    for seed in range(600):
        (tmp_path / "x.spec.js").write_text(JS)
        planted = plant_variants(tmp_path, javascript.PLANTER, lambda path, globs: path.endswith(".spec.js"),
                                 [variant], javascript.rename, random.Random(seed))
        text = (tmp_path / "x.spec.js").read_text()
        (name,) = planted
        order = [unit.name for unit in javascript.find_units(text)]  # jest runs them in this order
        at = order.index(name)
        assert text.index(name) < text.index("describe('second'")  # in the first describe: its beforeEach
        before[order[at - 1] if at and order[at - 1] in ("one", "two", "three") else None] += 1
    # Four gaps: before one (nothing before it), before two, before three, after three.
    assert set(before) == {None, "one", "two", "three"}
    assert all(100 < count < 200 for count in before.values())


PY = """import unittest


class FirstTest(unittest.TestCase):
    def setUp(self):
        self.base = 1

    def test_one(self):
        self.assertEqual(f(self.base, 1), 1)

    def test_two(self):
        self.assertEqual(f(self.base, 2), 2)


class SecondTest(unittest.TestCase):
    def test_three(self):
        self.assertEqual(g(3), 3)
"""


def test_a_python_variant_stays_in_its_test_case_class(tmp_path):
    units = python.find_units(PY)
    assert [key == python.scopes(PY, units)[0] for key in python.scopes(PY, units)] == [True, True, False]
    variant = _variant_of(PY, units, "test_one", "1), 1)", "5), 1)")
    for seed in range(50):
        (tmp_path / "x_test.py").write_text(PY)
        (name,) = plant_variants(tmp_path, python.PLANTER, lambda path, globs: path.endswith("_test.py"), [variant],
                                 python.rename, random.Random(seed))
        text = (tmp_path / "x_test.py").read_text()
        ast.parse(text)
        assert text.index("def setUp") < text.index(f"def {name}(") < text.index("class SecondTest")


CPP = """#include "example.h"
#include "test/catch.hpp"

TEST_CASE("one") { REQUIRE(f(1) == 1); }

#if defined(EXERCISM_RUN_ALL_TESTS)
TEST_CASE("two") { REQUIRE(f(2) == 2); }

// a comment between tests
TEST_CASE("three") { REQUIRE(f(3) == 3); }

static int helper(int n) { return n; }

TEST_CASE("four") { REQUIRE(f(helper(4)) == 4); }
#endif
"""


def test_a_cpp_run_of_tests_ends_at_a_helper_not_at_the_run_all_switch():
    units = cpp.find_units(CPP)
    blocks = same_block(CPP, units, cpp.PLANTER)
    assert [unit.name for unit in blocks["one"]] == ["one", "two", "three"]
    assert [unit.name for unit in blocks["four"]] == ["four"]
