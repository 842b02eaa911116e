"""Canaries in expected values built by calls (issue 32, Rust and Java): pure, no Docker.

A test that compares the solution's result with a value of a type the solution defines often
builds that value by calls (`decimal("0.3")`, `new Rational(7, 6)`, a map filled by `put`,
a helper's expected argument): no literal stands in the assertion, so every canary was a
fallback, which an always-equal type passes like a correct solution. The copy now changes a
literal inside the built value. Fixtures are small files written here; the real exercises
are graded in Docker by tests/test_type_proof_canaries.py (fixtures/always_equal/).
"""

from __future__ import annotations

import random
from pathlib import Path

from polyglot_harness.utils.judging.canaries import built_point, plant
from polyglot_harness.utils.languages import java, rust
from polyglot_harness.utils.languages.spec import matches_any


class FixedRandom(random.Random):
    """Deterministic stand-in for secrets.SystemRandom."""


def point_text(text: str, prefer: type = object) -> str | None:
    point = built_point(text, (0, len(text)), prefer=prefer)
    return None if point is None else text[point[0]:point[1]]


# --- the point a copy changes ---------------------------------------------------------------

def test_an_index_and_a_character_literal_are_no_point_but_a_call_argument_is():
    assert point_text('num(TABLE[2]) + num("0.3")') == '"0.3"'
    assert point_text("at('x', 4)") == "4"
    assert point_text("name2(x).v1") is None


def test_an_integer_is_preferred_when_asked():
    assert point_text('put("key", Optional.of(new Spot(3, 1)))', prefer=int) == "3"
    assert point_text('put("key", Optional.empty())', prefer=int) == '"key"'


RUST_TESTS = '''fn check(input: &str, expected: &[&str]) {
    assert_eq!(thing::run(input), expected);
}

#[test]
fn built_by_a_helper() {
    assert_eq!(num("0.1") + num("0.2"), num("0.3"));
}

#[test]
fn compared_with_equals() {
    assert!(num("1.0") + num("0.0") == num("1.00"));
}

#[test]
fn expected_in_a_local() {
    let got = thing::at(when(2000, 1, 1));
    let expected = when(2031, 9, 9);
    assert_eq!(got, expected);
}

#[test]
fn expected_as_the_helpers_last_argument() {
    check("C", &["Cx", "Dx"]);
}

#[test]
fn a_literal_comes_first() {
    assert_eq!(num("0.1") + num("0.2"), num("0.3"));
    assert_eq!(thing::count("ab"), 2);
}
'''


def points(language, text: str, name: str) -> list[str]:
    """The text of each mutable assertion's point in test `name` of `text`."""
    unit = next(unit for unit in language.find_units(text) if unit.name == name)
    test = text[unit.start:unit.end]
    return [test[assertion.start:assertion.end] for assertion in language.assertions(test)]


def rust_points(name: str) -> list[str]:
    return points(rust, RUST_TESTS, name)


def test_rust_a_literal_inside_an_expected_value_built_by_calls_is_the_point():
    assert rust_points("built_by_a_helper") == ['"0.3"']
    assert rust_points("compared_with_equals") == ['"1.00"']
    assert rust_points("expected_in_a_local") == ["2031"]
    assert rust_points("expected_as_the_helpers_last_argument") == ['"Cx"']


def test_rust_two_sides_that_differ_only_in_literals_are_a_relation_with_no_built_point():
    """`assert_eq!(info.name_for("TGT"), info.name_for("TGY"))` (rust__nucleotide-codons): the
    right side's "TGY" is an input, and a copy that changed it to "TGC" (cysteine too) passed
    on the reference at grading, `canary_passed` for a correct solution (1 of 4 oracle gradings,
    the rust variants helper, 2026-11-28). A side built differently keeps its point."""
    relation = ('fn cysteine_tgy() {\n    let info = parse(make_pairs());\n'
                '    assert_eq!(info.name_for("TGT"), info.name_for("TGY"));\n}\n')
    assert rust.built_assertions(relation) == []
    assert rust.built_assertions('assert!(f(12) == f(-3));') == []
    (sum_point,) = rust.built_assertions('assert_eq!(decimal("0.1") + decimal("0.2"), decimal("0.3"));')
    assert sum_point.value == "0.3" and sum_point.built
    (compared,) = rust.built_assertions('assert!(a + b == decimal("2.0"));')
    assert compared.value == "2.0"


def test_rust_a_test_with_a_literal_assertion_keeps_it():
    """Tests that were mutable keep their assertion: preparation's records stay valid."""
    assert rust_points("a_literal_comes_first") == ["2"]


JAVA_TESTS = '''import static org.assertj.core.api.Assertions.assertThat;

public class ThingTest {
    @Test
    public void built() {
        Ratio expected = new Ratio(7, 6);
        Ratio actual = new Ratio(1, 2).add(new Ratio(2, 3));
        assertThat(actual).isEqualTo(expected);
    }

    @Test
    public void filled() {
        Map<String, Optional<Spot>> expectedSpots = new HashMap<>();
        expectedSpots.put("word", Optional.of(new Spot(new Pair(4, 1), new Pair(7, 1))));
        Set<String> words = expectedSpots.keySet();
        assertThat(new Finder().find(words)).isEqualTo(expectedSpots);
    }

    @Test
    public void inline() {
        assertThat(new Ratio(2, 4).reduce()).isEqualTo(new Ratio(1, 2));
    }

    @Test
    public void literal() {
        assertThat(new Ratio(2, 4).numerator()).isEqualTo(1);
    }
}
'''


def java_points(name: str) -> list[str]:
    return points(java, JAVA_TESTS, name)


def test_java_a_literal_inside_an_expected_object_built_by_constructors_is_the_point():
    assert java_points("built") == ["7"]
    assert java_points("filled") == ["4"]  # a coordinate, not the key the search reads too
    assert java_points("inline") == ["1"]
    assert java_points("literal") == ["1"]


# --- planted: the copy and the message it must fail with ------------------------------------

def planted(tmp_path: Path, language, relative: str, text: str) -> tuple[str, list]:
    path = tmp_path / relative
    path.parent.mkdir(parents=True)
    path.write_text(text)
    canaries = plant(tmp_path, language.PLANTER, matches_any, None, None, FixedRandom(7))
    return path.read_text(), canaries


def test_rust_copy_changes_the_built_value_and_must_fail_with_libtests_format(tmp_path):
    text, canaries = planted(tmp_path, rust, "tests/thing.rs", RUST_TESTS)
    canary = next(c for c in canaries if c.source == "built_by_a_helper")
    assert canary.mutation is not None and canary.mutation.literal != '"0.3"'
    assert f"num({canary.mutation.literal})" in text and 'num("0.3")' in text
    assert canary.carries_secret("assertion `left == right` failed\n  left: Num(3)\n right: Num(9)")
    assert not canary.carries_secret("assertion failed: x")
    equals = next(c for c in canaries if c.source == "compared_with_equals")
    assert equals.carries_secret(f"assertion failed: num(\"1.0\") + num(\"0.0\") == num({equals.mutation.literal})")
    assert not equals.carries_secret('assertion failed: num("1.0") + num("0.0") == num("1.00")')


def test_java_copy_changes_the_constructor_argument_and_must_fail_with_assertjs_format(tmp_path):
    text, canaries = planted(tmp_path, java, "src/test/java/ThingTest.java", JAVA_TESTS)
    canary = next(c for c in canaries if c.source == "built")
    assert canary.mutation is not None and canary.mutation.literal != "7"
    assert f"new Ratio({canary.mutation.literal}, 6)" in text and "new Ratio(7, 6)" in text
    assert canary.carries_secret("expected: 3/6\n but was: 7/6")
    assert not canary.carries_secret("expected: <3> but was: <7>")


def test_java_a_multi_line_expected_string_still_shows_assertjs_format(tmp_path):
    """java__transpose: `isEqualTo("A" + "\\n1")`; AssertJ prints both strings over lines."""
    text = JAVA_TESTS.replace("new Ratio(2, 4).reduce()).isEqualTo(new Ratio(1, 2))",
                              'new Grid("A1").turned()).isEqualTo("A" + "\\n1")')
    _, canaries = planted(tmp_path, java, "src/test/java/ThingTest.java", text)
    canary = next(c for c in canaries if c.source == "inline")
    value = canary.mutation.literal.strip('"')
    assert canary.carries_secret(f'expected: "{value}\n1"\n but was: "A\n1"')
    assert not canary.carries_secret('expected: "A\n1"')


def test_points_inside_built_values_are_marked_built_and_literal_ones_not():
    """The real-benchmark gate holds literal points to "none lost at preparation"; a built
    one may leave the value equal on the reference and be dropped (`Assertion.built`)."""
    unit = next(unit for unit in rust.find_units(RUST_TESTS) if unit.name == "built_by_a_helper")
    assert all(assertion.built for assertion in rust.assertions(RUST_TESTS[unit.start:unit.end]))
    unit = next(unit for unit in rust.find_units(RUST_TESTS) if unit.name == "a_literal_comes_first")
    assert not any(assertion.built for assertion in rust.assertions(RUST_TESTS[unit.start:unit.end]))


def test_every_draw_plants_a_built_value_copy_when_the_instance_has_one():
    """Red team 3: python__sgf-parsing's always-equal tree resolved 3 of 3 gradings because the
    draw picked only error-message tests; only a built-value copy catches such a type."""
    import secrets

    from polyglot_harness.utils.judging.canaries import _choose

    units = [(None, SimpleUnit(f"t{i}")) for i in range(30)]
    built = {"t7"}
    for _ in range(200):
        picked = _choose(units, 3, lambda unit: True, secrets.SystemRandom(), lambda unit: True,
                         lambda unit: unit.name in built)
        assert len(picked) == 3 and len({unit.name for _, unit in picked}) == 3
        assert any(unit.name in built for _, unit in picked)
    plain = [_choose(units, 3, lambda unit: True, secrets.SystemRandom()) for _ in range(50)]
    assert all(len(draw) == 3 for draw in plain)
    assert len({unit.name for draw in plain for _, unit in draw}) > 10  # still drawn at random


class SimpleUnit:
    def __init__(self, name: str):
        self.name = name


def test_java_a_verse_of_escaped_strings_is_changed_inside_a_literal(tmp_path):
    """java__food-chain and java__bottle-song (red team 5: `String verse(int)` changed to the
    solution's own type whose equals() always holds): every expected string ends in `\\n`, so
    no literal is plain; the copy changes the first run of plain text inside one, written raw."""
    text = JAVA_TESTS.replace("new Ratio(2, 4).reduce()).isEqualTo(new Ratio(1, 2))",
                              'new Song().verse(1)).isEqualTo(\n            "Ten green bottles,\\n" +\n'
                              '            "There\'ll be nine.\\n")')
    unit = next(unit for unit in java.find_units(text) if unit.name == "inline")
    own = text[unit.start:unit.end]
    [assertion] = java.assertions(own)
    assert own[assertion.start:assertion.end] == "Ten green bottles," and assertion.built
    planted_text, canaries = planted(tmp_path, java, "src/test/java/ThingTest.java", text)
    canary = next(c for c in canaries if c.source == "inline")
    new = canary.mutation.literal
    assert new != "Ten green bottles," and '"' not in new and "\\" not in new
    assert f'"{new}\\n" +' in planted_text and '"Ten green bottles,\\n" +' in planted_text
    assert canary.carries_secret(f'expected: "{new}\nThere\'ll be nine.\n"\n but was: "x"')
    assert not canary.carries_secret("expected: <3> but was: <7>")


def test_a_run_of_plain_text_steps_over_escapes_and_ends_on_a_word():
    from polyglot_harness.utils.judging.canaries import plain_run

    text = '"\\nAbc def\\u00e9gh"'
    assert plain_run(text, 1, len(text) - 1)[2] == "Abc def"
    assert plain_run('"\\n\\t"', 1, 5) is None
    long = '"' + "word " * 20 + '"'
    start, end, run = plain_run(long, 1, len(long) - 1)
    assert len(run) <= 60 and run.endswith("word") and long[start:end] == run


RUST_NESTED = '''mod addition {
    use thing::*;

    #[test]
    fn adds() {
        assert_eq!(run("1 2 +"), [3]);
    }

    #[test]
    fn twice() {
        helper();
    }
}

mod str_slice {
    #[test]
    fn twice() {
        helper();
    }
}

#[test]
fn top() {
    assert_eq!(run("1"), [1]);
}
'''


def test_rust_tests_inside_a_mod_are_planted_beside_themselves(tmp_path):
    """rust__forth (red team 5): every test sits in a `mod`; the planter did not enter them, so
    every canary was a fallback and an always-equal stack passed. A name written in two mods
    (rust__xorcism's munges) names no one test and is left alone."""
    assert [unit.name for unit in rust.find_units(RUST_NESTED)] == ["adds", "top"]
    text, canaries = planted(tmp_path, rust, "tests/thing.rs", RUST_NESTED)
    copy = next(c for c in canaries if c.source == "adds")
    assert copy.mutation is not None and copy.mutation.literal != "3"
    # Inside the mod: the copy (or the real test under its drawn name) stays in `addition`.
    addition = text[:text.index("mod str_slice")]
    assert addition.count("#[test]") == 3 and f"[{copy.mutation.literal}]" in addition
    assert text.count("fn twice()") == 2


def test_rust_a_fallback_inside_a_mod_calls_the_renamed_test_from_that_mod(tmp_path):
    text = RUST_NESTED.replace("assert_eq!(run(\"1 2 +\"), [3]);", "helper();")
    _, canaries = planted(tmp_path, rust, "tests/thing.rs", text)
    fallback = next(c for c in canaries if c.source == "adds")
    assert fallback.mutation is None
    planted_text = (tmp_path / "tests/thing.rs").read_text()
    addition = planted_text[:planted_text.index("mod str_slice")]
    assert f"\n        {fallback.hidden_name}();\n        assert_eq!(" in addition  # the wrapper, in the mod
    assert f"fn {fallback.hidden_name}()" in addition


def test_java_a_built_copy_never_draws_a_literal_its_test_already_writes(tmp_path):
    """java__sgf-parsing (CI of 2026-11-29): the copy of `Map.of("A", List.of("b"), "C",
    List.of("d"))` drew "C" for "A", and the reference threw `duplicate key` instead of failing
    the assertion: a correct solution was graded canary_without_secret."""
    text = JAVA_TESTS.replace("new Ratio(2, 4).reduce()).isEqualTo(new Ratio(1, 2))",
                              'new Parser().parse("(;A[b]C[d])")).isEqualTo(new Node(Map.of("A", List.of("b"), "C", List.of("d"))))')
    unit = next(unit for unit in java.find_units(text) if unit.name == "inline")
    [assertion] = java.assertions(text[unit.start:unit.end])
    assert assertion.value == "A" and assertion.built
    for seed in range(60):
        tree = tmp_path / str(seed)
        path = tree / "src/test/java/ThingTest.java"
        path.parent.mkdir(parents=True)
        path.write_text(text)
        canaries = plant(tree, java.PLANTER, matches_any, None, None, FixedRandom(seed))
        copy = next(c for c in canaries if c.source == "inline")
        assert copy.mutation.literal.strip('"') not in {"A", "C", "b", "d"}, (seed, copy.mutation.literal)
