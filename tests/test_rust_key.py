"""Rust's answer key, pure (utils/languages/rust_key.py, docs/answer-key.md "Rust"): which
assertions convert and what is observed, the rewrite (expected values gone, line numbers kept),
the stub's enums rendered by pattern, the probe build's refusals mapped to ids, the source
policy, and variants kept apart from keyed tests. Our own small fixture, no benchmark code."""

from __future__ import annotations

import random

from polyglot_harness.utils.languages import rust, rust_key

STUB = """pub enum Shape {
    Round,
    Square,
    Sized(u32, bool),
    Named { label: String },
}

pub enum Holder {
    Boxed(std::rc::Rc<u8>),
}

pub fn measure(input: &str) -> Result<u32, Shape> {
    todo!()
}
"""

TEST = """use shapes::*;

#[test]
fn plain() {
    let input = "abc";
    let output = measure(input);
    let expected = Ok(3);
    assert_eq!(output, expected);
}

#[test]
#[ignore]
fn reversed_and_enums() {
    assert_eq!(Err(Shape::Sized(4, true)), measure("x"));
    assert_eq!(measure("y"), Err(Shape::Round));
}

#[test]
fn truths() {
    let shape = measure("z");
    assert!(shape.is_ok());
    assert!(!measure("").is_ok());
    assert!(measure("w") == Ok(1));
}

#[test]
fn stays_in_process() {
    let expected = 5;
    assert_eq!(measure("five"), Ok(expected));
    assert_eq!(expected, 5);
    assert_eq!(measure("m"), Ok(2), "with a message");
    assert_ne!(measure("n"), Ok(0));
    assert!(measure("a").unwrap() < 3);
    assert_eq!(measure("b"), measure("c"));
    assert_eq!(measure("d"), Ok(measure_other()));
    for case in [1, 2] {
        assert_eq!(measure("e"), Ok(case));
    }
}

#[test]
#[should_panic]
fn panics() {
    assert_eq!(measure("p"), Ok(1));
}
"""


def _ids(test: str = TEST) -> dict[str, rust_key.Candidate]:
    return {c.id: c for c in rust_key.candidates(test, rust_key.stub_enums(STUB), "shapes")}


def test_which_assertions_convert_and_what_is_observed():
    found = _ids()
    assert {i: (c.observed, c.truth) for i, c in found.items()} == {
        "L8": ("output", False),
        "L14": ('measure("x")', False),
        "L15": ('measure("y")', False),
        "L21": ("shape.is_ok()", True),
        "L22": ('measure("").is_ok()', True),  # the `!` dropped: the key holds false
        "L23": ('measure("w")', False),
    }
    assert len(found["L8"].deleted) == 1  # `let expected = Ok(3);`, nothing else reads it


def test_a_local_another_statement_reads_keeps_its_assertion_in_process():
    assert not any(i.startswith(("L2", "L3")) and int(i[1:]) >= 27 for i in _ids())


def test_the_rewrite_deletes_expected_values_and_keeps_line_numbers():
    chosen = list(_ids().values())
    enums = rust_key.stub_enums(STUB)
    out = rust_key.rewrite(TEST, chosen, "tests/shapes.rs:", rust_key.enum_impls(TEST, enums, "shapes"))
    lines, original = out.splitlines(), TEST.splitlines()
    assert lines[7].strip() == 'crate::polyglot_key::observe("tests/shapes.rs:L8", &(output));'
    assert lines[6].strip() == "" and "Ok(3)" not in out.split("mod polyglot_key")[0]
    assert lines[21].strip() == 'crate::polyglot_key::observe("tests/shapes.rs:L22", &(measure("").is_ok()));'
    assert "!measure" not in out and "Sized(4, true)" not in out
    for number in (26, 33, 40):  # untouched lines keep their numbers
        assert lines[number] == original[number]
    assert "mod polyglot_key" in out and "impl crate::polyglot_key::Observe for ::shapes::Shape" in out


def test_the_stubs_enums_render_by_pattern_each_named_variant_by_name():
    enums = rust_key.stub_enums(STUB)
    assert enums["Shape"].variants == (("Round", None), ("Square", None), ("Sized", ("u32", "bool")),
                                       ("Named", (("label", "String"),)))
    impls = rust_key.enum_impls(TEST, enums, "shapes")
    assert '::shapes::Shape::Round => crate::polyglot_key::variant("Round", out),' in impls
    assert "::shapes::Shape::Sized(f0, f1) =>" in impls
    assert "Square" not in impls  # not named by the tests: by discriminant (`unnamed`)
    assert "_ => crate::polyglot_key::unnamed(self, out)" in impls
    assert "Holder" not in impls  # a field the observer cannot render: no impl, stays in-process


def test_compiler_refusals_map_to_the_observing_line_or_the_next_assertion():
    output = ("error[E0277]: the trait bound `Thing: Observe` is not satisfied\n  --> tests/shapes.rs:14:5\n"
              "warning: unused\n  --> tests/shapes.rs:8:1\n"
              "error[E0282]: type annotations needed\n  --> tests/shapes.rs:20:9\n")
    ids = frozenset({"tests/shapes.rs:L8", "tests/shapes.rs:L14", "tests/shapes.rs:L15", "tests/shapes.rs:L21"})
    assert rust_key.error_ids(output, ["tests/shapes.rs"], ids) == {"tests/shapes.rs:L14", "tests/shapes.rs:L21"}


def test_only_the_keys_ids_are_converted():
    found = rust_key.candidates(TEST, rust_key.stub_enums(STUB), "shapes", frozenset({"L15"}))
    assert [c.id for c in found] == ["L15"]


def test_strings_comments_and_raw_strings_are_not_code():
    test = '#[test]\nfn t() {\n    // assert_eq!(a, 1);\n    assert_eq!(measure(r#"a, "b""#), Ok(1));\n}\n'
    assert [(c.id, c.observed) for c in rust_key.candidates(test, {}, "shapes")] == [("L4", 'measure(r#"a, "b""#)')]


def test_the_source_policy_refuses_the_observers_names():
    rule = next(r for r in rust.SOURCE_POLICY.rules if r.name == "answer_key_observer")
    facts = rust.rust_facts("pub mod polyglot_key { pub fn observe() {} }\nfn f() { crate::polyglot_key::observe(); }\n")
    assert [fact.line for fact in facts if fact.kind == rule.kind and rule.regex.search(fact.text)]
    clean = rust.rust_facts("pub fn key_observe() -> u32 { 1 }\n")
    assert not [fact for fact in clean if fact.kind == rule.kind and rule.regex.search(fact.text)]


def test_variants_leave_out_tests_with_a_keyed_assertion_beside_another():
    texts = {"tests/shapes.rs": TEST}
    key = {"tests/shapes.rs:L14": ("err(enum:Sized(4,true))",), "tests/shapes.rs:L8": ("ok(3)",)}
    derive = rust.variants_apart_from_key(texts, key)
    two = TEST[TEST.index("#[test]\n#[ignore]\nfn reversed"):TEST.index("#[test]\nfn truths")]
    assert derive(two, "reversed_and_enums", random.Random(1)) == []
    one = TEST[TEST.index("#[test]"):TEST.index("#[test]\n#[ignore]")]
    assert derive(one, "plain", random.Random(1)) == rust.rust_variants.derive(one, "plain", random.Random(1))
