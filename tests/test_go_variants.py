"""Go's fresh variants (issue 35; utils/languages/go_variants.py, docs/variants-go.md): the
deriver and the reader on small Go texts written here; then, on real Go exercises prepared with
variants and graded through the harness with --variants, the memorizing attacker
(tests/fixtures/variants/go_memorizer.py: the hidden tests' inputs answered from a map built
from their table at test time) resolved upstream and NOT on variants, and every reference
resolved both ways.

The Docker tests use the gate's dataset (tests/conftest.py real_dataset: variants are recorded
by default; POLYGLOT_GATE_DATASET may name a prepared one); POLYGLOT_GO_VARIANTS_DATASET may
name another prepared with variants (go, the instances below).
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest

from polyglot_harness.utils.judging.canaries import apply_edits
from polyglot_harness.utils.judging.runner_results import FAILED, PASSED, TestCase, TestResults
from polyglot_harness.utils.judging.syntax import Source
from polyglot_harness.utils.judging.variants import OBSERVED, TableCandidate, observed_literal, split_variants
from polyglot_harness.utils.languages.go import find_units, leaf
from polyglot_harness.utils.languages.go_variants import derive, read

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "variants"
sys.path.insert(0, str(FIXTURES))
from go_memorizer import memorizer_source, table_of  # noqa: E402

from .test_variants import _corpus_files, _files_at, _grade, _patches, _reference, assert_honest, assert_memorized  # noqa: E402 (the harness run with --variants, its results and report)

CASES = '''package thing

var testCases = []struct {
	description string
	input       int
	word        string
	expected    string
	expectError bool
}{
	{
		description: "first",
		input:       42,
		word:        "apple",
		expected:    "forty-two",
	},
	{
		description: "second",
		input:       317,
		word:        "pear",
		expected:    "three hundred seventeen",
	},
	{
		description: "an error",
		input:       -5,
		word:        "plum",
		expectError: true,
	},
}

type pair struct {
	in   []int
	want []int
	tiny uint8
}

var pairs = []pair{
	{[]int{3, 1, 2}, []int{1, 2, 3}, 200},
	{[]int{5, 4}, []int{4, 5}, 100},
}

var weights = []struct {
	input    int
	expected float64
}{
	{1, 2},
}

var named = []struct {
	input    string
	expected int
}{
	{"cart", 1},
}
'''

TESTS = '''package thing

import (
	"reflect"
	"testing"
)

func TestSay(t *testing.T) {
	for _, tc := range testCases {
		t.Run(tc.description, func(t *testing.T) {
			actual, err := Say(tc.input, tc.word)
			switch {
			case tc.expectError:
				if err == nil {
					t.Fatalf("Say(%d) expected an error", tc.input)
				}
			case err != nil:
				t.Fatalf("Say(%d) returned error %v", tc.input, err)
			case actual != tc.expected:
				t.Fatalf("Say(%d, %q) = %q, want %q", tc.input, tc.word, actual, tc.expected)
			}
		})
	}
}

func TestSort(t *testing.T) {
	for _, p := range pairs {
		if got := Sort(p.in, p.tiny); !reflect.DeepEqual(got, p.want) {
			t.Errorf("Sort(%v) = %v, want %v", p.in, got, p.want)
		}
	}
}

func TestFloat(t *testing.T) {
	for _, tc := range weights {
		if got := Weigh(tc.input); tc.expected != got {
			t.Errorf("got %v", got)
		}
	}
}

func TestTwice(t *testing.T) {
	for _, tc := range named {
		if got := Count(tc.input); got != tc.expected {
			t.Errorf("got %d", got)
		}
	}
	if len(named) != 1 {
		t.Errorf("size")
	}
}
'''


def _units() -> dict[str, str]:
    return {unit.name: TESTS[unit.start:unit.end] for unit in find_units(TESTS)}


def _derive(name: str, seed: int) -> list[TableCandidate]:
    return derive(_units()[name], name, random.Random(seed), CASES + "\n" + TESTS, CASES)


def test_a_copy_ranges_over_one_entry_with_one_input_changed_and_the_answer_written():
    text = _units()["TestSay"]
    for seed in range(10):
        candidates = _derive("TestSay", seed)
        assert candidates, seed
        for candidate in candidates:
            variant = apply_edits(text, list(candidate.variant('"nine"').edits))
            assert "range testCases" not in variant and "range ([]struct {" in variant
            inline = variant[variant.index("range ("):variant.index("}) {") + 2]
            assert inline.count("description:") == 1 and 'expected:    "nine"' in inline
            entry = "first" if '"first"' in inline else "second"
            assert candidate.original == {"first": "forty-two", "second": "three hundred seventeen"}[entry]
            original = {"first": ("42", '"apple"'), "second": ("317", '"pear"')}[entry]
            changed = [value for value in original if value not in inline]
            assert len(changed) == 1, inline  # one input, never the description, the flag or the error entry
            assert variant[variant.index("}) {") + 2:] == text[text.index("testCases {") + len("testCases"):]
            assert not Source("go", "package thing\n" + variant).has_errors


def test_the_probe_reports_the_computed_side_under_the_subtests_t_and_keeps_the_comparison():
    text = _units()["TestSay"]
    candidate = _derive("TestSay", 1)[0]
    probe = apply_edits(text, list(candidate.probe("k").edits))
    assert "case func() bool { t.Fatalf(\"%s%s%s %#v\"" in probe and OBSERVED not in probe
    assert '"str", actual); return actual != tc.expected }():' in probe
    assert "case err != nil:" in probe and "case tc.expectError:" in probe  # the error paths come first, unchanged
    assert not Source("go", "package thing\n" + probe).has_errors


def test_a_deep_equal_call_positional_entries_and_a_slice_input():
    text = _units()["TestSort"]
    seen = set()
    for seed in range(20):
        for candidate in _derive("TestSort", seed):
            probe = apply_edits(text, list(candidate.probe("k").edits))
            assert '"slice:[]int", got); return reflect.DeepEqual(got, p.want) }()' in probe
            assert candidate.original in ([1, 2, 3], [4, 5])
            old, (start, end, new) = candidate.input_context
            seen.add((old[start:end], new))
            if old[start:end] in ("200", "100"):
                assert 100 <= int(new) <= 255  # within uint8: an overflowing constant does not compile
    swapped = {new for old, new in seen if old.startswith("3, 1, 2") or old.startswith("5, 4")}
    assert seen and any(old == "200" for old, _ in seen) and "1, 3, 2" not in swapped  # a sequence keeps its ends


@pytest.mark.parametrize("condition", ["*got != tc.expected", "got + 1 != tc.expected", "tc.expected != got*2",
                                       "tc.expected == nil", "tc.expected != \"\""])
def test_no_candidate_where_the_comparison_reads_more_than_one_operand_or_a_constant(condition):
    test = ("func TestCount(t *testing.T) {\n\tfor _, tc := range named {\n\t\tgot := Count(tc.input)\n"
            f"\t\tif {condition} {{\n\t\t\tt.Errorf(\"no\")\n\t\t}}\n\t}}\n}}\n")
    assert derive(test, "TestCount", random.Random(0), CASES + "\n" + test) == []
    assert derive(test.replace(condition, "got != tc.expected"), "TestCount", random.Random(0), CASES + "\n" + test)


def test_no_candidate_for_a_float_answer_or_a_table_the_test_names_twice():
    for name in ("TestFloat", "TestTwice"):
        for seed in range(10):
            assert _derive(name, seed) == [], name


HEX_TESTS = '''package hex

var cases = []struct {
	in      string
	out     int64
	errCase string
}{
	{"cafe", 0xcafe, "none"},
	{"zz", 0, "syntax"},
}

func TestParse(t *testing.T) {
	for _, test := range cases {
		out, err := Parse(test.in)
		if test.errCase != "none" {
			if err == nil || !strings.Contains(err.Error(), test.errCase) {
				t.Errorf("Parse(%q): want error %s", test.in, test.errCase)
			}
		} else if out != test.out {
			t.Errorf("Parse(%q) = %d", test.in, out)
		}
	}
}
'''


def test_a_mode_flag_is_no_input_and_its_non_default_value_marks_an_error_entry():
    """`errCase != "none"`: the string the test compares the flag to is the value entries'."""
    test = HEX_TESTS[HEX_TESTS.index("func TestParse"):]
    for seed in range(10):
        candidates = derive(test, "TestParse", random.Random(seed), HEX_TESTS)
        assert candidates and all(candidate.original == 0xcafe for candidate in candidates)
        for candidate in candidates:
            entry, (start, end, new) = candidate.input_context
            assert entry[start:end] == '"cafe"' and new != '"cafe"' and len(new) == 6


@pytest.mark.parametrize("observed, expected", [
    ("int 5", (5, "5")),
    ("int -12", (-12, "-12")),
    ("int 0xff", (255, "255")),
    ('str "a\\"b\\n"', ('a"b\n', '"a\\"b\\n"')),
    ('str "\\x01\\u00e9"', ("\x01é", '"\\x01\\u00e9"')),
    ("bool true", (True, "true")),
    ('slice:[]string []string{"a", "b c"}', (["a", "b c"], '[]string{"a", "b c"}')),
    ("slice:[]byte []byte{0x81, 0x0}", ([0x81, 0], "[]byte{0x81, 0x0}")),
    ("slice:[]uint32 []uint32{}", ([], "[]uint32{}")),
    ("slice:[]int []int(nil)", ([], "nil")),
])
def test_read_writes_the_value_back_as_a_go_literal(observed, expected):
    assert read(observed) == expected


@pytest.mark.parametrize("observed", [
    "int 1.5",
    'int "5"',
    "str 5",
    "bool 1",
    "slice:[]int []thing.Row{1}",           # a named type: not written back
    'slice:[]int []string{"a"}',            # an element of another kind
    "slice:[]int [][]int{[]int{1}}",
    "str thing.Kind(3)",
    "int 5 6",
])
def test_read_refuses_what_it_cannot_write_back_exactly(observed):
    assert read(observed) is None


def test_a_variants_subtest_carries_the_observed_value_and_the_parent_the_outcome():
    cases = (TestCase("thing::TestSayAway", PASSED), TestCase("thing::TestDrawn/first", FAILED,
             f"    thing_test.go:9: {OBSERVED}str \"nine\"\n"), TestCase("thing::TestDrawn", FAILED, "=== RUN TestDrawn\n"))
    real, own = split_variants(TestResults(cases), {"TestDrawn": "TestSay#0"}, leaf)
    assert [case.name for case in real.cases] == ["thing::TestSayAway"]
    assert own["TestSay#0"].name == "thing::TestDrawn" and own["TestSay#0"].outcome == FAILED
    assert observed_literal(own["TestSay#0"]) == ('str "nine"', "kept")


def test_the_memorizer_answers_from_the_tests_table():
    """Built from the table of a test with one input field (TestSay reads two), value entries only."""
    say = TESTS.replace(", tc.word)", ")")
    rows = table_of([CASES, say])
    assert rows == [("42", '"forty-two"'), ("317", '"three hundred seventeen"')]  # not the error entry
    source = memorizer_source([CASES, say], "package thing\n\nfunc Say(n int) (string, error) {\n\tpanic(1)\n}\n")
    assert 'fmt.Sprintf("%#v", 42): "forty-two",' in source and 'return "", errors.New("unknown")' in source
    assert "return answer, nil" in source and not Source("go", source).has_errors


# --- real Docker, real exercises --------------------------------------------------------------

# Exercises whose table has one input field and a function of one argument (the memorizer's map).
MEMORIZED = ["go__crypto-square", "go__pig-latin", "go__say", "go__transpose", "go__wordy"]


@pytest.fixture(scope="module")
def go_variants_dataset(real_dataset) -> Path:
    """The gate's dataset unless a developer names one prepared with variants (named as a
    parameter: tests/conftest.py orders the modules using the gate's dataset by fixture name)."""
    given = os.environ.get("POLYGLOT_GO_VARIANTS_DATASET")
    return Path(given) if given else real_dataset


@pytest.mark.docker
def test_go_memorizer_resolves_upstream_but_not_on_variants(go_variants_dataset, tmp_path):
    def memorizer(instance):
        tests = list(_files_at(instance, instance.test_commit, instance.hidden_paths).values())
        (stub_path,) = instance.solution_paths
        stub = _files_at(instance, instance.base_commit, [stub_path])[stub_path]
        return {stub_path: memorizer_source(tests, stub).encode()}

    results, data = _grade(go_variants_dataset, tmp_path, "memorizer", _patches(go_variants_dataset, memorizer, MEMORIZED),
                           "go")
    assert_memorized(results, data, MEMORIZED)


@pytest.mark.docker
def test_every_go_reference_passes_its_variants(go_variants_dataset, tmp_path):
    from polyglot_harness.utils.records.dataset import load_dataset

    with_variants = {instance.instance_id for instance in load_dataset(go_variants_dataset)
                     if instance.language == "go" and instance.variants}
    assert set(MEMORIZED) <= with_variants
    results, data = _grade(go_variants_dataset, tmp_path, "reference",
                           _patches(go_variants_dataset, _reference, with_variants), "go")
    assert sorted(results) == sorted(with_variants)
    for instance_id, result in results.items():
        assert result["eval_result"] == "resolved" and result["resolved_on_variants"] is True, (
            instance_id, result["reason"], result["failed_variants"])
        assert result["variants_failed"] == 0 and result["variants_passed"] > 0, instance_id
    assert data["memorization_gap"]["instances"] == 0


# Solutions written from the instructions and the stub alone (never the reference or the tests).
HONEST = FIXTURES / "honest-go"


@pytest.mark.docker
def test_honest_go_solutions_fail_no_variant(go_variants_dataset, tmp_path):
    """Resolved, and at most HONEST_TOLERANCE of the variants failed (test_variants.assert_honest)."""
    files = _corpus_files(HONEST)
    ids = {f"go__{folder.name}" for folder in HONEST.iterdir() if folder.is_dir()}
    patches = _patches(go_variants_dataset, files, ids)
    assert set(patches) == {"go__pig-latin", "go__say", "go__wordy"}
    results, _ = _grade(go_variants_dataset, tmp_path, "honest", patches, "go")
    assert_honest(results, sorted(patches))
