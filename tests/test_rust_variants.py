"""Rust's fresh variants (issue 35; utils/languages/rust_variants.py): the deriver and the reader
on small test texts written here; then, on real Rust exercises of ../shared/data prepared with
variants and graded through the harness with --variants, the memorizing attacker
(tests/fixtures/variants/rust_memorizer.py: the hidden tests' inputs answered from a table
built from them at test time) resolved upstream and NOT on variants, the reference resolved
both ways.

The Docker test uses the gate's dataset (tests/conftest.py real_dataset: variants are recorded
by default); POLYGLOT_RUST_VARIANTS_DATASET may name another prepared with variants (rust, the
instances below).
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest

from polyglot_harness.utils.judging.canaries import apply_edits
from polyglot_harness.utils.judging.syntax import Source
from polyglot_harness.utils.judging.variants import OBSERVED
from polyglot_harness.utils.languages.rust import find_units
from polyglot_harness.utils.languages.rust_variants import derive, read

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "variants"
sys.path.insert(0, str(FIXTURES))
from rust_memorizer import memorizer_source  # noqa: E402

from .test_variants import _corpus_files, _files_at, _grade, _patches, _reference, assert_honest, assert_memorized  # noqa: E402 (the harness run with --variants, its results and report)

TESTS = '''use thing::*;

#[test]
fn bound_locals() {
    let input = "GATTACA";
    let output = count(input, 42);
    let expected = 17;
    assert_eq!(output, expected);
}

#[test]
#[ignore]
fn input_in_the_assertion() {
    assert_eq!(encode(14), "fourteen".to_string());
}

#[test]
fn a_list_reordered() {
    let expected = vec!["b", "a"];
    assert_eq!(sorted(&["x", "y", "x"]), expected);
}

#[test]
fn two_assertions() {
    assert_eq!(f(1), 1);
    assert_eq!(f(2), 2);
}

#[test]
fn in_a_loop() {
    for n in [1, 2] {
        assert_eq!(f(n), Some(3));
    }
}

#[test]
fn index_closure_macro_and_array_length_are_no_input() {
    let table: [u8; 4] = [seed(); 4];
    assert_eq!(g(table[2], |x| x * 7, format!("{}", "ab")), 5);
}

#[test]
fn error() {
    let input = "ACGT";
    assert_eq!(parse(input, 99), Err(Error::Negative));
}

#[test]
fn a_small_type() {
    let output = h(200, -100);
    let expected = Some(vec![0x40]);
    assert_eq!(output, expected);
}
'''


def _units() -> dict[str, str]:
    return {unit.name: TESTS[unit.start:unit.end] for unit in find_units(TESTS)}


def _assertion_text(test: str) -> str:
    source = Source("rust", test)
    return next(source.text_of(node) for node in source.walk() if node.type == "macro_invocation")


def test_one_input_changed_and_the_actual_side_probed():
    text = _units()["bound_locals"]
    candidates = derive(text, "bound_locals", random.Random(3))
    assert candidates and all(c.original == 17 and text[slice(*c.expected)] == "17" for c in candidates)
    for candidate in candidates:
        variant = apply_edits(text, list(candidate.variant("99").edits))
        assert "let expected = 99;" in variant and variant != text.replace("17", "99")
        assert 'let input = "GATTACA";' not in variant or "count(input, 42)" not in variant
        probe = apply_edits(text, list(candidate.probe("k").edits))
        assert "panic!(" in probe and OBSERVED not in probe and "assert_eq!" not in probe  # never whole
        assert not Source("rust", probe).has_errors
        assert '"int", __polyglot_left' in probe  # the shape, then the actual side


def test_an_input_inside_the_assertion_is_changed_in_the_probe_too():
    text = _units()["input_in_the_assertion"]
    (candidate,) = derive(text, "x", random.Random(1))[:1]
    probe = apply_edits(text, list(candidate.probe("k").edits))
    assert "encode(14)" not in probe and "&(encode(" in probe and '"string.to_string"' in probe
    variant = apply_edits(text, list(candidate.variant('"nine".to_string()').edits))
    assert _assertion_text(variant).endswith('"nine".to_string())') and "encode(14)" not in variant


def test_a_list_display_is_reordered_and_its_elements_keep_its_alphabet():
    text = _units()["a_list_reordered"]
    candidates = derive(text, "x", random.Random(0))
    assert candidates and all(c.original == ["b", "a"] for c in candidates)
    for candidate in candidates:
        new = apply_edits(text, [candidate.input_edit])
        arguments = new[new.index("&["):new.index("]), expected")]
        assert sorted(arguments.strip('&[').split(", ")) in (['"x"', '"x"', '"y"'], ['"x"', '"y"', '"y"']) \
            or set(arguments.strip('&[').replace('"', "").split(", ")) <= {"x", "y", "w"}


def test_tests_without_one_plain_assertion_or_input_give_none():
    units = _units()
    for name in ("two_assertions", "in_a_loop", "index_closure_macro_and_array_length_are_no_input"):
        for seed in range(20):
            assert derive(units[name], name, random.Random(seed)) == [], name


def test_an_error_test_keeps_its_expectation():
    text = _units()["error"]
    candidates = derive(text, "error", random.Random(0))
    assert candidates and all(c.expected is None and c.statement is None for c in candidates)
    assert all("Err(Error::Negative)" in apply_edits(text, list(c.variant(None).edits)) for c in candidates)


def test_integers_stay_within_the_smallest_type_of_the_original():
    text = _units()["a_small_type"]
    for seed in range(40):
        for candidate in derive(text, "x", random.Random(seed)):
            start, end, new = candidate.input_edit
            if text[start:end] == "200":
                assert 100 <= int(new) <= 255
            elif text[start:end] == "100":  # after the minus
                assert 10 <= int(new) <= 128
            assert candidate.original == ("Some", [64])


@pytest.mark.parametrize("observed, expected", [
    ("int 5", (5, "5")),
    ("intu8 7", (7, "7u8")),
    ("int -12", (-12, "-12")),
    ('str "a\\"b\\n"', ('a"b\n', '"a\\"b\\n"')),
    ('string.to_string "x"', ("x", '"x".to_string()')),
    ('string.from "x"', ("x", 'String::from("x")')),
    ('vec(str) ["a", "b"]', (["a", "b"], 'vec!["a", "b"]')),
    ('slice(string.to_owned) ["a"]', (["a"], '&["a".to_owned()]')),
    ("array(bool) [true, false]", ([True, False], "[true, false]")),
    ("some(int) None", (None, "None")),
    ("some(vec(int)) Some([1, 2])", (("Some", [1, 2]), "Some(vec![1, 2])")),
    ("ok(str) Ok(\"v\")", (("Ok", "v"), 'Ok("v")')),
    ('tuple(int,str) (1, "a")', ((1, "a"), '(1, "a")')),
])
def test_read_writes_the_value_in_the_expected_sides_syntax(observed, expected):
    assert read(observed) == expected


@pytest.mark.parametrize("observed", [
    "int 1.5",                      # a float
    "vec(int) []",                  # an empty container: its element type may not be inferred
    "none Some(3)",                 # the original None says nothing of the inner type
    "ok(vec(int)) Err(Incomplete)",  # an error where a value was expected
    "some(int) Some(Thing { a: 1 })",
    "str 'c'",
    'str "a" trailing',
    "int",
])
def test_read_refuses_what_it_cannot_write_back_exactly(observed):
    assert read(observed) is None


def test_the_memorizer_answers_from_the_tests_table():
    tests = ('#[test]\nfn a() {\n    let input = "x y";\n    let output = f(input);\n    let expected = "z";\n'
             '    assert_eq!(output, expected);\n}\n')
    source = memorizer_source(tests, "pub fn f(input: &str) -> String {\n    todo!()\n}\n")
    assert '"x y" => String::from("z"),' in source and "_ => Default::default()," in source


# --- real Docker, real exercises --------------------------------------------------------------

# Exercises whose every test binds `input` and `expected` to literals (the memorizer's table).
MEMORIZED = ["rust__book-store", "rust__pig-latin", "rust__say", "rust__wordy"]


@pytest.fixture(scope="module")
def rust_variants_dataset(real_dataset) -> Path:
    """The gate's dataset (prepared once per session, variants recorded by default) unless a
    developer names one prepared with variants. Named as a parameter, not looked up: the
    session orders the modules that use the gate's dataset after the others by their fixture
    names (tests/conftest.py), and this module, ordered among the others, held the run up
    while the gate's preparation ran (427 s in the CI run of ebd526c)."""
    given = os.environ.get("POLYGLOT_RUST_VARIANTS_DATASET")
    return Path(given) if given else real_dataset


@pytest.mark.docker
def test_rust_memorizer_resolves_upstream_but_not_on_variants_and_the_reference_on_both(rust_variants_dataset,
                                                                                     tmp_path):
    def memorizer(instance):
        test = next(iter(_files_at(instance, instance.test_commit, instance.hidden_paths).values()))
        stub = _files_at(instance, instance.base_commit, ["src/lib.rs"])["src/lib.rs"]
        return {"src/lib.rs": memorizer_source(test, stub).encode()}

    results, data = _grade(rust_variants_dataset, tmp_path, "memorizer", _patches(rust_variants_dataset, memorizer, MEMORIZED),
                           "rust")
    assert_memorized(results, data, MEMORIZED)
    results, data = _grade(rust_variants_dataset, tmp_path, "reference", _patches(rust_variants_dataset, _reference, MEMORIZED),
                           "rust")
    for instance_id, result in results.items():
        assert result["eval_result"] == "resolved" and result["resolved_on_variants"] is True, instance_id
        assert result["variants_failed"] == 0 and result["variants_passed"] > 0, instance_id
    assert data["memorization_gap"]["instances"] == 0


# Solutions written from the instructions and the stub alone (never the reference or the tests;
# their README); those of an exercise with variants are graded here.
HONEST = FIXTURES / "honest-rust"


@pytest.mark.docker
def test_honest_rust_solutions_fail_no_variant(rust_variants_dataset, tmp_path):
    """Resolved, and at most HONEST_TOLERANCE of the variants failed (test_variants.assert_honest):
    every false failure is a defect of the variants (an input the instructions leave open)."""
    from polyglot_harness.utils.pipeline.expected_tests import patch_writing
    from polyglot_harness.utils.records.dataset import load_dataset

    files = _corpus_files(HONEST)
    patches = {instance.instance_id: patch_writing(instance, files(instance))
               for instance in load_dataset(rust_variants_dataset)
               if instance.language == "rust" and (HONEST / instance.task_name).is_dir()}
    assert {"rust__pig-latin", "rust__say", "rust__variable-length-quantity", "rust__wordy"} <= set(patches)
    results, _ = _grade(rust_variants_dataset, tmp_path, "honest", patches, "rust")
    assert_honest(results, sorted(patches))  # acronym (when prepared) has none: its inputs are words of a sentence
