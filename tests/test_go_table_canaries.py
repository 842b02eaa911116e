"""Go's mutated table canaries (issue 32): a copy of a table-driven test, one entry changed.

Go tests range over tables (`var testCases = []struct{...}{...}`, often in cases_test.go) and
print an entry's expected field with t.Errorf/t.Fatalf when the solution's value differs. The
canary is the test itself, renamed, ranging over its table written inline with one entry's
expected field changed; that entry runs last, behind a `t.Failed()` gate, so the copy shows
its message only when every other case passed. Pure planting functions are tested on small
Go fixtures written here; the attack runs on real exercises in real Docker.
"""

from __future__ import annotations

import json
import re
import secrets
import shutil
from pathlib import Path

import pytest

from .fixtures.forgers.check import grade_forger, graded_ahead, once, reference_copy, selected
from polyglot_harness.utils.judging.canaries import Canary, Mutation, call_arguments, plant, separate
from polyglot_harness.utils.judging.runner_results import FAILED, TestCase, TestResults
from polyglot_harness.utils.languages import go
from polyglot_harness.utils.languages.spec import matches_any
from polyglot_harness.utils.outcomes import Reason

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "go_table_canaries"

CASES = """package f

var cases = []struct {
	description string
	in          int
	want        string
	valid       bool
}{
	{
		description: "one",
		in:          1,
		want:        "one",
		valid:       true,
	},
	{
		description: "two",
		in:          2,
		want:        "two",
		valid:       true,
	},
	{
		description: "three",
		in:          3,
		want:        "three",
		valid:       true,
	},
}
"""

TEST = """package f

import "testing"

func TestF(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.description, func(t *testing.T) {
			got, ok := F(tc.in)
			switch {
			case ok != tc.valid:
				t.Fatalf("F(%d) ok = %t", tc.in, ok)
			case got != tc.want:
				t.Fatalf("F(%d) = %q, want: %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestG(t *testing.T) {
	if G() != 7 {
		t.Fatalf("G() = %d, want 7", G())
	}
}
"""

POSITIONAL = """package p

import "testing"

type row struct {
	input    string
	expected int64
	isErr    bool
}

var rows = []row{
	{"1", 1, false},
	{"10", 8, false},
	{"x", 0, true},
}

func TestParse(t *testing.T) {
	for _, r := range rows {
		got, err := Parse(r.input)
		if !r.isErr && got != r.expected {
			t.Errorf("Parse(%s) = %d, want %d", r.input, got, r.expected)
		}
		if r.isErr && err == nil {
			t.Errorf("Parse(%s): no error", r.input)
		}
	}
}
"""


def assertions(test_file: str, every_test: str):
    unit = go.find_units(test_file)[0]
    return go.PLANTER.mutator.find(test_file[unit.start:unit.end], every_test)


# --- which field a copy changes (pure) -------------------------------------------------------

def test_each_entry_offers_its_expected_field_the_one_compared_and_printed():
    found = assertions(TEST, CASES + TEST)
    assert [assertion.value for assertion in found] == ["one", "two", "three"]
    # `valid` is compared only as a branch (`ok != tc.valid` prints no field): not expected.
    message = '    f_test.go:14: F(1) = "one", want: "nine"'
    assert re.search(found[0].failure("nine"), message, re.M)
    assert not re.search(found[0].failure("nine"), message.replace("nine", "nin"), re.M)
    assert not re.search(found[0].failure("nine"), 'F(1) = "one", want: "nine"', re.M)


def test_positional_entries_map_to_a_named_struct_s_fields():
    found = assertions(POSITIONAL, POSITIONAL)
    assert [assertion.value for assertion in found] == [1, 8, 0]
    assert re.search(found[1].failure(3), "    p_test.go:21: Parse(10) = 8, want 3", re.M)


def test_a_field_compared_only_to_nil_or_a_literal_is_no_expected_value():
    text = TEST.replace("case got != tc.want:", 'case tc.want != "":')
    assert assertions(text, CASES + text) == []
    text = TEST.replace("case got != tc.want:", "case tc.want == nil:")
    assert assertions(text, CASES + text) == []


def test_the_failure_format_follows_fmt_s_verbs():
    call = 't.Fatalf("X(%v)\\n got:%#v\\nwant:%q (%d%%) %t", tc.a, got, tc.want, n, b)'
    assert go.failure_regex(call, 3, "ab") is not None
    assert re.search(go.failure_regex(call, 3, "ab"), '    x_test.go:3: X(1)\n         got:"zz"\n        want:"ab" (4%) true', re.M)
    assert go.failure_regex(call, 3, 5) is None                 # %q of an int: not followed
    assert go.failure_regex('t.Fatalf("%[1]d", tc.want)', 1, 5) is None
    assert go.failure_regex("t.Fatalf(format, tc.want)", 1, 5) is None
    hashed = go.failure_regex('t.Fatalf("want:%#v", tc.want)', 1, lambda flags, verb: go._rendered_slice("string", ["a", "b"], flags, verb))
    assert re.search(hashed, '    x_test.go:3: want:[]string{"a", "b"}', re.M)
    plain = go.failure_regex('t.Fatalf("want %v", tc.want)', 1, lambda flags, verb: go._rendered_slice("int", [1, 2], flags, verb))
    assert re.search(plain, "    x_test.go:3: want [1 2]", re.M)


def test_a_flat_slice_s_first_element_is_the_changed_value():
    cases = CASES.replace("want        string", "want        []string").replace('want:        "one"', 'want:        []string{"o", "n"}')
    found = assertions(TEST.replace("%q, want: %q", "%q, want: %q"), cases + TEST)
    assert found[0].value == "o"
    assert re.search(found[0].failure("z"), '    f_test.go:14: F(1) = ["o" "n"], want: ["z" "n"]', re.M)


# --- the copy as planted (pure) ---------------------------------------------------------------

def planted(tmp_path: Path) -> tuple[str, str, tuple[Canary, ...]]:
    (tmp_path / "cases_test.go").write_text(CASES)
    (tmp_path / "f_test.go").write_text(TEST)
    canaries = plant(tmp_path, go.PLANTER, matches_any, None, None, secrets.SystemRandom())
    return (tmp_path / "f_test.go").read_text(), (tmp_path / "cases_test.go").read_text(), canaries


def test_the_copy_ranges_over_its_table_inline_with_the_changed_entry_last_behind_a_gate(tmp_path):
    test_file, cases_file, canaries = planted(tmp_path)
    (table_canary,) = [canary for canary in canaries if canary.mutation]
    # No test ranges over the package table any more: it is emptied, so a pair's real value
    # is not written a second time there (what told the real test from its copy).
    assert cases_file == CASES[:CASES.index("}{\n")] + "}{}\n"
    copy = test_file[test_file.index(f"func {table_canary.name}("):]
    copy = copy[:copy.index("\n}\n") + 3]
    real = test_file[test_file.index(f"func {table_canary.hidden_name}("):]
    real = real[:real.index("\n}\n") + 3]
    assert "func TestF(" not in test_file
    assert "for polyglotEntry, tc := range ([]struct {" in copy
    assert "if polyglotEntry == 2 && t.Failed() {\n\t\t\tbreak\n\t\t}" in copy  # the last entry only
    entries = re.findall(r'want:\s+"(\w+)"', copy)
    assert entries[:2] == ["two", "three"] and entries[2] != "one"  # the changed entry runs last
    # The real test is written the copy's way with its value unchanged: the pair differs in
    # that value alone, so its shape says nothing of which is the copy (a reader holding the
    # text once found the copy as the one with an inline table).
    assert "range cases {" not in real
    assert re.findall(r'want:\s+"(\w+)"', real) == ["two", "three", "one"]
    def last_value_out(text: str, value: str) -> str:  # the moved entry is the table's last
        head, _, tail = text.rpartition(f'"{value}",\n\t\tvalid')
        return head + "V" + tail
    assert last_value_out(real.replace(table_canary.hidden_name, "N"), "one") == \
        last_value_out(copy.replace(table_canary.name, "N"), entries[2])
    assert re.search(table_canary.mutation.failure, f'    f_test.go:30: F(1) = "one", want: "{entries[2]}"', re.M)
    # TestG has no table: its canary is the fallback, and every test is renamed.
    assert any(canary.mutation is None for canary in canaries)


def test_a_table_another_test_still_reads_is_kept_whole(tmp_path):
    """Emptying is for a table nothing reads: a test that was not chosen, or a helper, still
    ranging over it keeps it whole; a benchmark (never run) does not."""
    reader = "\nfunc TestH(t *testing.T) {\n\tif len(cases) != 3 {\n\t\tt.Fatal(\"three\")\n\t}\n}\n"
    bench = "\nfunc BenchmarkF(b *testing.B) {\n\tfor _, tc := range cases {\n\t\tF(tc.in)\n\t}\n}\n"
    assert go.empty_unranged_tables({"c": CASES, "t": TEST.replace("range cases", "range x") + reader}) == {}
    emptied = go.empty_unranged_tables({"c": CASES, "t": TEST.replace("range cases", "range x") + bench})
    assert emptied == {"c": CASES[:CASES.index("}{\n")] + "}{}\n"}


def test_a_go_canary_s_message_comes_from_its_failed_subtest():
    """test2json files a subtest's message under the subtest; the parent holds none."""
    mutation = Mutation(0, 1, "x", r'^\s+\w+\.go:\d+: F\(1\) = [\s\S]*?, want: "nine"$', True)
    canary = Canary(source="TestF", hidden_name="TestHid", expected=11111, actual=22222, name="TestCopy", mutation=mutation)
    run = TestResults((TestCase("p::TestCopy", FAILED, "=== RUN TestCopy\n--- FAIL: TestCopy (0.00s)\n"),
                       TestCase("p::TestCopy/one", FAILED, '    f_test.go:14: F(1) = "one", want: "nine"\n'),
                       TestCase("p::TestHid/one", "passed")))
    real, own = separate(run, (canary,), go.leaf)
    assert own["TestF"].outcome == FAILED and canary.carries_secret(own["TestF"].message)
    assert [case.name for case in real.cases] == ["p::TestF/one"]


# --- the attack on real exercises (Docker) ----------------------------------------------------

FORGED = ["say", "wordy"]


def forger_dir(directory: Path, slug: str) -> Path:
    """The forger for one real exercise: its wrong solution plus the shared stream rewriter
    (made once under the module's `directory`: a grading asked for ahead may be reading it)."""
    def make(forger: Path) -> None:
        files = forger / "files"
        files.mkdir(parents=True)
        package = re.search(r"^package (\w+)", (FIXTURES / f"{slug}.go.txt").read_text(), re.M)[1]
        shutil.copyfile(FIXTURES / f"{slug}.go.txt", files / f"{slug}.go")
        (files / "forge.go").write_text((FIXTURES / "stream_forger.go.txt").read_text().replace("package PACKAGE", f"package {package}"))
        (forger / "forger.json").write_text(json.dumps({"instance_id": f"go__{slug}"}))
    return once(directory / "forgers" / slug, make)


def control_dir(directory: Path, dataset: Path, slug: str) -> Path:
    """The instance's reference as a forger directory, made once under the module's `directory`."""
    return reference_copy(directory / "controls", dataset, {"instance_id": f"go__{slug}"})


@pytest.fixture(scope="module")
def ahead(request, provider, real_dataset, made):
    with graded_ahead(provider, real_dataset, selected(request, {
        "test_a_stream_rewriter_sparing_only_unexplained_failures_is_caught":
            lambda p: [(forger_dir(made, p["slug"]), {})],
        "test_the_reference_with_table_canaries_resolves":
            lambda p: [(control_dir(made, real_dataset, p["slug"]), {})],
    })):
        yield


@pytest.mark.docker
@pytest.mark.parametrize("slug", FORGED)
def test_a_stream_rewriter_sparing_only_unexplained_failures_is_caught(slug, provider, real_dataset, made, ahead):
    """Wrong on every case but a table's first, it hides its own wrong answers' failures and
    keeps any other: the copy's gate stops at the first hidden failure, its changed case never
    runs, and the copy is reported passed."""
    outcome = grade_forger(provider, real_dataset, forger_dir(made, slug))
    assert any(canary.mutation for canary in outcome.canaries), outcome.canaries
    assert not outcome.verdict.resolved, outcome.verdict
    # Since each test function runs in a process of its own whose exit status decides it
    # (session 10), the rewrite no longer passes a real test the solution fails: the real
    # tests' failures stand (tests_failed). Before, the rewrite worked and the copy's gate,
    # stopped before its changed case, was reported passed (canary_passed).
    assert outcome.verdict.reason == Reason.TESTS_FAILED, outcome.verdict
    assert outcome.real_results.summary()["failed"] > 0, outcome.real_results.summary()


@pytest.mark.docker
@pytest.mark.parametrize("slug", FORGED)
def test_the_reference_with_table_canaries_resolves(slug, provider, real_dataset, made, ahead):
    control = control_dir(made, real_dataset, slug)
    outcome = grade_forger(provider, real_dataset, control)
    assert any(canary.mutation for canary in outcome.canaries), outcome.canaries
    assert outcome.verdict.resolved, outcome.verdict


def test_a_table_another_test_reads_keeps_the_real_test_on_it(tmp_path):
    """Where another test still reads the table (go__hexadecimal's TestHandleErrors indexes
    `testCases[i]`), the table stays whole; written inline as well, the real value would be in
    the test binary twice and the copy's once, which a solution reading memory counted (red
    team 9). So the real test keeps ranging over it. A comment naming the table is no read."""
    reader = "\nfunc TestH(t *testing.T) {\n\tif len(cases) != 3 {\n\t\tt.Fatal(\"three\")\n\t}\n}\n"
    unit = go.find_units(TEST)[0]
    alone = go.PLANTER.mutator.find(TEST[unit.start:unit.end], "// the cases below\n" + CASES + TEST)
    shared = go.PLANTER.mutator.find(TEST[unit.start:unit.end], CASES + TEST + reader)
    assert alone[0].symmetric and not shared[0].symmetric
    (tmp_path / "cases_test.go").write_text(CASES)
    (tmp_path / "f_test.go").write_text(TEST + reader)
    canaries = plant(tmp_path, go.PLANTER, matches_any, ["TestF"], None, secrets.SystemRandom())
    (table_canary,) = [canary for canary in canaries if canary.mutation]
    real = (tmp_path / "f_test.go").read_text()
    real = real[real.index(f"func {table_canary.hidden_name}("):]
    assert "range cases {" in real[:real.index("\n}\n")] and (tmp_path / "cases_test.go").read_text() == CASES


@pytest.mark.parametrize("slug", ["hexadecimal", "wordy", "say"])
def test_a_pair_s_values_are_written_as_often_in_the_planted_files(slug, benchmark_checkout, tmp_path):
    """What a Go solution reading the test binary's memory sees of a pair (red team 9): the
    literals of the planted test files. The real entry is written exactly as often as the copy's
    changed one, whether the table is emptied and both tests range over inline copies (wordy)
    or it stays for another test and the real test keeps ranging over it (hexadecimal); before,
    hexadecimal's real entry was written twice, in the table and in the real test's inline copy."""
    exercise = benchmark_checkout / "go" / "exercises" / "practice" / slug
    pristine = ""
    for path in exercise.glob("*_test.go"):
        shutil.copyfile(path, tmp_path / path.name)
        pristine += path.read_text()
    entry = re.compile(r"\{[^{}]*\}")
    canaries = plant(tmp_path, go.PLANTER, matches_any, None, 3, secrets.SystemRandom())
    text = "\n".join(path.read_text() for path in sorted(tmp_path.glob("*_test.go")))
    mutated = [canary for canary in canaries if canary.mutation]
    assert mutated
    for canary in mutated:
        copy = next(unit for unit in go.find_units(text) if unit.name == canary.name)
        body = text[copy.start:copy.end]
        opening = body.index("range (") + len("range ")
        (inline,) = call_arguments(body, opening, backtick=True)
        (changed,) = [e for e in entry.findall(body[slice(*inline)]) if e not in pristine]
        (real,) = {e for e in entry.findall(pristine) if _one_field_apart(e, changed)}
        assert text.count(real) == text.count(changed) == 1, (slug, real, changed)


def _one_field_apart(a: str, b: str) -> bool:
    """Two table entries (flat: no braces inside) that differ in exactly one field."""
    fields_a, fields_b = re.split(r",\s*", a.strip("{} \n\t")), re.split(r",\s*", b.strip("{} \n\t"))
    return len(fields_a) == len(fields_b) and sum(x != y for x, y in zip(fields_a, fields_b)) == 1
