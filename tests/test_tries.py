"""`--tries 2`, Aider's two-try protocol: the feedback a second try gets, the pass rates, and the
whole protocol end to end (real Docker, the bundled samples, tests/fixtures/agents/two_tries).

The end-to-end run plays three instances at once: python (a first try that fails two tests and
prints the hidden test file and the planted canaries into the test output, then a second try
that hunts the container for the tests and writes the right solution), go (right at once: no
second try) and java (nothing written, twice: empty_patch is retried like any failure).
"""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from polyglot_harness.utils.records.dataset import load_dataset
from polyglot_harness.utils.records.run_dir import RunSettings
from polyglot_harness.utils.run import HarnessError, harness
from polyglot_harness.utils.judging.canaries import Canary
from polyglot_harness.utils.languages.javascript import PLANTER as JS_PLANTER
from polyglot_harness.utils.languages.python import PLANTER as PYTHON_PLANTER
from polyglot_harness.utils.judging.feedback import (FEEDBACK_MAX_CHARS, TryVerdict, drop_lines_containing, hidden_lines_not_shown,
                            scrub_canaries, trim_middle, try_feedback as make_feedback)
from polyglot_harness.utils.outcomes import Bucket, Reason
from polyglot_harness.utils.records.results import InstanceResult, PhaseSeconds, build_run_report, combine_tries

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SAMPLES = PROJECT_ROOT / "samples"
TWO_TRIES = PROJECT_ROOT / "tests" / "fixtures" / "agents" / "two_tries"
PYTHON, GO, JAVA = "python__running-total", "go__word-tally", "java__vowel-count"
PYTHON_DIR = SAMPLES / "python" / "exercises" / "practice" / "running-total"
PYTHON_TESTS = (PYTHON_DIR / "running_total_test.py").read_text()
PYTHON_REFERENCE = (PYTHON_DIR / ".meta" / "example.py").read_text()
GO_REFERENCE = (SAMPLES / "go" / "exercises" / "practice" / "word-tally" / ".meta" / "example.go").read_text()

# Right running_total, wrong first_over; first_over prints the hidden test file as it is on
# disk during grading (canaries planted), each canary's numbers, the real tests' hidden names
# and the runner's command line (the report directory) - pytest shows a failing test's stdout.
LEAKING_FIRST_TRY = '''\
import glob
import re
import sys


def running_total(numbers):
    totals, total = [], 0
    for number in numbers:
        total += number
        totals.append(total)
    return totals


def first_over(numbers, threshold):
    for path in glob.glob("/testbed/*_test.py"):
        text = open(path).read()
        print(text)
        for hidden in re.findall(r"def (test_\\w+)\\(", text):
            print("LEAK-HIDDEN", hidden)
    print("LEAK-ARGV", " ".join(sys.argv))
    return -1
'''
FAILING = ("test_first_position_over_threshold", "test_total_never_exceeds_threshold")
PASSING_LINE = "self.assertEqual(running_total([5, -2, -7, 10]), [5, 3, -4, 6])"


# --- the feedback, without Docker ------------------------------------------------------------

def test_feedback_maps_hidden_names_back_and_drops_canary_numbers_and_report_dir():
    canary = Canary(source="test_empty_list", hidden_name="test_empty_numbers", expected=31337, actual=42424)
    output = ("FAILED running_total_test.py::RunningTotalTest::test_empty_numbers - AssertionError: None != []\n"
              "FAILED running_total_test.py::RunningTotalTest::test_empty_list - AssertionError: 31337 != 42424\n"
              "    self.assertEqual(31337, 42424)\n"
              "--junitxml=/tmp/report-0123456789abcdef/junit.xml\n")

    scrubbed = scrub_canaries(output, [canary])

    assert "31337" not in scrubbed and "42424" not in scrubbed
    assert "test_empty_numbers" not in scrubbed
    assert "RunningTotalTest::test_empty_list - AssertionError: None != []" in scrubbed
    assert "/tmp/report-" not in scrubbed and "<report-dir>" in scrubbed


def test_only_lines_of_failing_tests_may_reproduce_the_hidden_test_file():
    forbidden = hidden_lines_not_shown({"running_total_test.py": PYTHON_TESTS},
                                       ["running_total_test.py::RunningTotalTest::test_several_numbers"],
                                       PYTHON_PLANTER.find_units)
    printed = PYTHON_TESTS + "\nE   AssertionError: Lists differ: [3, 4, 8] != [3, 4, 8, 9]\n"

    kept, dropped = drop_lines_containing(printed, forbidden)

    assert "self.assertEqual(running_total([3, 1, 4, 1]), [3, 4, 8, 9])" in kept  # the failing test's line
    assert PASSING_LINE not in kept and "class RunningTotalTest" not in kept and "from running_total" not in kept
    assert "AssertionError: Lists differ" in kept
    assert dropped >= 10


def test_planted_canary_code_is_left_out_and_renamed_real_tests_read_as_upstream():
    canary = Canary(source="test_empty_list", hidden_name="test_first_empty_list", expected=58505, actual=81783)
    printed = PYTHON_TESTS.replace("def test_empty_list(self):", "def test_first_empty_list(self):") + (
        "    def test_empty_list(self, *args):\n        self.test_first_empty_list()\n"
        "        self.assertEqual(58505, 81783)\n")
    verdict = TryVerdict(1, "unresolved", "tests_failed", "1 failed", ("x::RunningTotalTest::test_empty_list",), 6)

    text = make_feedback(verdict, printed, [canary], {"running_total_test.py": PYTHON_TESTS}, PYTHON_PLANTER)

    assert "def test_empty_list(self):" in text  # the real, failing test's header, mapped back
    assert "self, *args" not in text and "self.test_empty_list()" not in text and "58505" not in text
    assert "test_first_empty_list" not in text


def test_a_jest_test_body_counts_as_the_failing_test():
    spec = ("describe('clamp', () => {\n  test('clamps below the range', () => {\n"
            "    expect(clamp([-5], 0, 10)).toEqual([0]);\n  });\n"
            "  test('keeps values inside', () => {\n    expect(clamp([5], 0, 10)).toEqual([5]);\n  });\n});\n")

    forbidden = hidden_lines_not_shown({"clamp.spec.js": spec}, ["clamp clamps below the range"],
                                       JS_PLANTER.find_units)

    assert "expect(clamp([-5], 0, 10)).toEqual([0]);" not in forbidden
    assert "expect(clamp([5], 0, 10)).toEqual([5]);" in forbidden


def test_feedback_is_capped_keeps_head_and_tail_and_names_the_failing_tests():
    output = "compile error at the top\n" + "noise line\n" * 5000 + "2 failed, 4 passed\n"
    verdict = TryVerdict(1, "unresolved", "tests_failed", "2 failed, 0 errored of 6",
                         ("running_total_test.py::RunningTotalTest::test_empty_list",), 6)

    text = make_feedback(verdict, output, (), {}, None)

    assert len(text) <= FEEDBACK_MAX_CHARS
    assert "compile error at the top" in text and "2 failed, 4 passed" in text and "characters trimmed" in text
    assert "- running_total_test.py::RunningTotalTest::test_empty_list" in text
    assert text.startswith("# Try 1: unresolved (tests_failed)")


def test_trim_middle_leaves_short_text_alone_and_marks_the_cut():
    assert trim_middle("short", 100) == "short"
    trimmed = trim_middle("a" * 300 + "b" * 300, 200)
    assert len(trimmed) <= 200 and trimmed.startswith("a") and trimmed.endswith("b")
    assert re.search(r"\[\.\.\. \d+ characters trimmed \.\.\.\]", trimmed)


def test_feedback_without_a_test_run_is_the_verdict_alone():
    text = make_feedback(TryVerdict(1, "empty_patch", "empty_patch", "nothing left to grade after filtering"),
                         None, (), {}, None)
    assert "empty_patch" in text and "Test output" not in text


# --- pass rates and the combined result ------------------------------------------------------

def _result(instance_id: str, bucket: Bucket, **fields) -> InstanceResult:
    return InstanceResult(instance_id=instance_id, model_name_or_path="run", eval_result=bucket, language=instance_id.split("__")[0], **fields)


def test_pass_rates_count_resolved_by_each_try_over_all_instances_and_per_language():
    results = [_result("python__a", Bucket.RESOLVED, resolved_at_try=1),
               _result("python__b", Bucket.RESOLVED, resolved_at_try=2),
               _result("python__c", Bucket.UNRESOLVED),
               _result("go__d", Bucket.RESOLVED, resolved_at_try=2),
               _result("go__e", Bucket.EMPTY_PATCH),
               _result("rust__f", Bucket.RESOLVED)]  # a file from before tries: resolved at try 1
    by_id = {result.instance_id: result for result in results}

    data = build_run_report("run", list(by_id) + ["java__unfinished"], by_id).score_json()

    assert (data["pass_rate_1"], data["pass_rate_2"]) == (round(2 / 7, 6), round(4 / 7, 6))
    assert data["pass_rate_2"] == data["accuracy_score"]
    assert data["pass_rates_per_language"] == {
        "go": {"pass_rate_1": 0.0, "pass_rate_2": 0.5},
        "python": {"pass_rate_1": round(1 / 3, 6), "pass_rate_2": round(2 / 3, 6)},
        "rust": {"pass_rate_1": 1.0, "pass_rate_2": 1.0}}


def test_one_try_runs_report_pass_rate_2_equal_to_pass_rate_1():
    results = {"python__a": _result("python__a", Bucket.RESOLVED, resolved_at_try=1),
               "python__b": _result("python__b", Bucket.UNRESOLVED)}
    data = build_run_report("run", list(results), results).run_report_json()
    assert data["pass_rate_1"] == data["pass_rate_2"] == 0.5


def test_combined_result_is_the_last_try_with_usage_and_seconds_summed():
    usage = lambda n: {"model": "m", "prompt_tokens": 100 * n, "completion_tokens": 10 * n,  # noqa: E731
                       "total_tokens": 110 * n, "calls": 1, "stop_reason": f"try{n}"}
    first = _result(PYTHON, Bucket.UNRESOLVED, reason=Reason.TESTS_FAILED, model_patch="p1", agent_usage=usage(1),
                    seconds=PhaseSeconds(agent=1.0, grading=2.0, tests=1.5, total=3.0))
    second = _result(PYTHON, Bucket.RESOLVED, reason=Reason.TESTS_PASSED, model_patch="p2", agent_usage=usage(2),
                     seconds=PhaseSeconds(agent=4.0, grading=2.0, tests=1.0, total=6.0))

    final = InstanceResult.from_dict(json.loads(combine_tries([first, second]).to_json()))

    assert (final.eval_result, final.model_patch, final.resolved_at_try) == (Bucket.RESOLVED, "p2", 2)
    assert [(t.try_number, t.eval_result, t.model_patch) for t in final.tries] == [
        (1, "unresolved", "p1"), (2, "resolved", "p2")]
    assert [(t.transcript, t.eval_output, t.feedback_file) for t in final.tries] == [
        (f"{PYTHON}.try1.md", f"{PYTHON}.try1_eval.md", ""),
        (f"{PYTHON}.md", f"{PYTHON}_eval.md", f"{PYTHON}.try2_feedback.md")]
    assert final.agent_usage == {"model": "m", "prompt_tokens": 300, "completion_tokens": 30, "total_tokens": 330,
                                 "calls": 2, "stop_reason": "try2"}
    assert (final.seconds.agent, final.seconds.grading, final.seconds.tests) == (5.0, 4.0, 2.5)


# --- settings and resume -----------------------------------------------------------------------

@pytest.mark.parametrize("arguments, message", [
    (["--tries", "0"], "--tries must be 1 or 2"),
    (["--tries", "3"], "--tries must be 1 or 2"),
    (["--tries", "2", "--predictions", "preds.jsonl"], "--tries 2 needs an agent"),
])
def test_bad_tries_are_one_error_line_and_exit_2(tmp_path, arguments, message):
    completed = subprocess.run([sys.executable, "harness.py", "--no_progress", "--output_dir", str(tmp_path),
                                "--agent", "null", *arguments], cwd=PROJECT_ROOT, capture_output=True, text=True,
                               timeout=60)
    assert completed.returncode == 2
    assert completed.stderr.strip().splitlines() == [completed.stderr.strip()]
    assert completed.stderr.startswith("error: ") and message in completed.stderr
    assert list(tmp_path.iterdir()) == []


def test_settings_written_before_tries_existed_resume_as_one_try():
    timeouts = {"test_timeout": 120, "agent_timeout": 600, "model": None}
    key = RunSettings("oracle", None, "abc", timeouts | {"tries": 1})
    saved = RunSettings.from_json({"agent": "oracle", "agent_hash": None, "dataset_hash": "abc", "test_timeout": 120,
                                   "agent_timeout": 600, "model": None})
    assert key.differing(saved) == []
    assert RunSettings("oracle", None, "abc", timeouts | {"tries": 2}).differing(saved) == ["tries"]


# --- end to end ----------------------------------------------------------------------------------

@pytest.mark.docker
def test_second_try_starts_from_the_first_tree_reads_the_feedback_and_resolves(
        sample_dataset, tmp_path, monkeypatch, no_leftover_containers):
    plan = {PYTHON: {"first": {"running_total.py": LEAKING_FIRST_TRY}, "second": {"running_total.py": PYTHON_REFERENCE},
                     "search": ["RunningTotalTest", "running_total_test", "[5, -2, -7, 10]"]},
            GO: {"first": {"word_tally.go": GO_REFERENCE}, "second": {"word_tally.go": "package wordtally\n"}},
            JAVA: {}}
    monkeypatch.setenv("TEST_AGENT_PLAN", json.dumps(plan))
    # The feedback on its own: the source policy refuses the leaking try before it runs
    # (tests/test_source_policy.py), and in the trusted process (issue 24) the solution cannot
    # read the hidden tests at all; both are switched off here to let the leak reach the output.
    from polyglot_harness.utils.pipeline import grading
    from polyglot_harness.utils.languages import LANGUAGES
    monkeypatch.setattr(grading, "source_policy_refusals", lambda *args: ())
    monkeypatch.setitem(LANGUAGES, "python", dataclasses.replace(LANGUAGES["python"], trusted=None))

    outcome = harness(dataset=sample_dataset, output_dir=tmp_path, progress=False, model_name_or_path="two",
                      agent=str(TWO_TRIES), instance_ids=[PYTHON, GO, JAVA], pass_env=["TEST_AGENT_PLAN"],
                      max_workers=2, tries=2)

    run_dir = outcome.run_dir
    python = json.loads((run_dir / f"{PYTHON}.json").read_text())
    first, second = python["tries"]
    # Try 1: two tests failed; try 2 resolved it, graded like any patch (a diff against the base).
    # A drawn canary whose changed value is first_over's constant answer passes too, and
    # canary_passed then decides first (test_html_report's two-try run met it in CI, 2026-11-28).
    assert first["eval_result"] == "unresolved" and first["reason"] in ("tests_failed", "canary_passed"), first["detail"]
    assert sorted(name.rsplit("::", 1)[-1] for name in first["failed_tests"]) == sorted(FAILING)
    assert (second["eval_result"], python["eval_result"], python["resolved_at_try"]) == ("resolved",) * 2 + (2,)
    assert python["model_patch"] == second["model_patch"] and "LEAK" not in python["model_patch"]
    assert python["model_patch"].count("-    pass") == 2  # against the base stub, not try 1's tree
    assert first["canaries"] and second["canaries"] and python["canaries"] == second["canaries"]
    # Both tries kept: transcripts, test output, the feedback; usage summed.
    assert (run_dir / f"{PYTHON}.try1.md").read_text().startswith(f"# {PYTHON}: try 1")
    assert (run_dir / f"{PYTHON}.md").read_text().startswith(f"# {PYTHON}: try 2")
    assert (run_dir / f"{PYTHON}.try1_eval.md").is_file() and (run_dir / f"{PYTHON}_eval.md").is_file()
    assert python["agent_usage"]["prompt_tokens"] == 300 and python["agent_usage"]["calls"] == 2
    # Try 2 started from try 1's working tree and got the feedback file, by argument and variable.
    usage = second["agent_usage"]
    assert usage["started_with"] == {"running_total.py": LEAKING_FIRST_TRY}
    assert usage["feedback_env"] == "/feedback/test_feedback.md"
    feedback = usage["feedback"]
    assert feedback == (run_dir / f"{PYTHON}.try2_feedback.md").read_text()
    # The hunt for the hidden tests finds the feedback file and nothing else.
    assert usage["found"] == ["/feedback/test_feedback.md"]
    # The feedback names the failing tests, is capped, and leaks nothing beyond what pytest shows.
    assert all(name in feedback for name in FAILING) and len(feedback) <= FEEDBACK_MAX_CHARS
    assert "self.assertEqual(first_over([3, 1, 4, 1], 7), 2)" in feedback  # the failing test's own line
    assert PASSING_LINE not in feedback and "class RunningTotalTest" not in feedback
    raw = (run_dir / f"{PYTHON}.try1_eval.md").read_text()
    # Every test of a file holding a canary runs under a drawn name: the leak printed them all.
    leaked_names = set(re.findall(r"LEAK-HIDDEN (\w+)", raw))
    real_names = set(re.findall(r"def (test_\w+)", PYTHON_TESTS))
    assert leaked_names - real_names, "the first try did print the hidden names"
    assert not any(re.search(rf"\b{name}\b", feedback) for name in leaked_names - real_names)
    assert re.search(r"/tmp/report-[0-9a-f]+", raw) and "/tmp/report-" not in feedback

    go = json.loads((run_dir / f"{GO}.json").read_text())
    assert (go["eval_result"], go["resolved_at_try"], len(go["tries"])) == ("resolved", 1, 1)
    assert go["agent_usage"]["try"] == 1 and not list(run_dir.glob(f"{GO}.try*"))
    java = json.loads((run_dir / f"{JAVA}.json").read_text())
    assert [entry["eval_result"] for entry in java["tries"]] == ["empty_patch", "empty_patch"]
    assert "empty_patch" in (run_dir / f"{JAVA}.try2_feedback.md").read_text()

    report = outcome.report
    assert (report["pass_rate_1"], report["pass_rate_2"]) == (round(1 / 3, 6), round(2 / 3, 6))
    assert report["pass_rates_per_language"]["python"] == {"pass_rate_1": 0.0, "pass_rate_2": 1.0}
    assert report["resolved_ids"] == sorted([PYTHON, GO])
    assert json.loads((run_dir / "run_settings.json").read_text())["tries"] == 2
    with pytest.raises(HarnessError, match=r"other settings \(tries differ\)"):
        harness(dataset=sample_dataset, output_dir=tmp_path, progress=False, model_name_or_path="two",
                agent=str(TWO_TRIES), instance_ids=[PYTHON, GO, JAVA], pass_env=["TEST_AGENT_PLAN"], tries=1)


# A first try that answers the real tests' inputs from a table (one real test wrong on purpose,
# so that a second try follows) and an empty list for any other input: every variant fails,
# and unittest prints each failing variant's line and its expected list.
MEMORIZING_FIRST_TRY = '''\
TABLE = {(): [], (3, 1, 4, 1): [3, 4, 8, 9], (5, -2, -7, 10): [5, 3, -4, 6], (2, 2, 2): [2, 4, 6]}


def running_total(numbers):
    return list(TABLE.get(tuple(numbers), []))


def first_over(numbers, threshold):
    return 0
'''


@pytest.mark.docker
def test_a_second_try_is_never_shown_the_variants_of_the_first(sample_dataset, tmp_path, monkeypatch,
                                                               no_leftover_containers):
    """Red team 13: with --tries 2 --variants, a failing variant's traceback in try 1's output
    showed its fresh input and the reference's answer; try 2 copied them and passed every
    variant (python__wordy 10 of 10, memorization gap 0). The feedback now comes from a
    grading of the same tree without variants (the try's verdict stays the first grading's):
    every assertion line and every list the feedback shows is the hidden test file's or the
    solution's own."""
    plan = {PYTHON: {"first": {"running_total.py": MEMORIZING_FIRST_TRY},
                     "second": {"running_total.py": PYTHON_REFERENCE}}}
    monkeypatch.setenv("TEST_AGENT_PLAN", json.dumps(plan))
    outcome = harness(dataset=sample_dataset, output_dir=tmp_path, progress=False, model_name_or_path="memo",
                      agent=str(TWO_TRIES), instance_ids=[PYTHON], pass_env=["TEST_AGENT_PLAN"], tries=2,
                      variants=True)
    run_dir = outcome.run_dir
    python = json.loads((run_dir / f"{PYTHON}.json").read_text())
    assert python["tries"][0]["eval_result"] == "unresolved", python["tries"][0]
    assert python["resolved_on_variants"] is True  # try 2, the reference
    # The variants' own values (their edits' texts), those that are not text of the test file.
    (instance,) = [i for i in load_dataset(sample_dataset) if i.instance_id == PYTHON]
    values = {text for variant in instance.variants for _, _, text in variant.edits
              if len(text) > 2 and text not in PYTHON_TESTS}
    raw = (run_dir / f"{PYTHON}.try1_eval.md").read_text()
    assert any(value in raw for value in values), "try 1's own output shows the variants (they ran, and failed)"
    feedback = (run_dir / f"{PYTHON}.try2_feedback.md").read_text()
    assert "first_over([3, 1, 4, 1], 7), 2)" in feedback  # the control: the real failing test is shown
    assert [value for value in values if value in feedback] == [], feedback
    shown = {line.strip().lstrip(">").strip() for line in feedback.splitlines() if "assertEqual(" in line}
    assert shown and all(line in PYTHON_TESTS for line in shown), shown


def test_a_mutated_copys_failure_section_is_left_out_of_the_feedback(tmp_path):
    """A copy's failure shows values that are not upstream's: unittest's `Lists differ` and its
    diff are no single line the copy's failure pattern catches, and once the names are mapped
    back they read as the real test failing with another expected value (closing note of
    session 10). Real planting on the sample's tests, a real pytest run of a wrong solution:
    the copies' sections and summary lines are gone, the real tests' failures stay. The
    solution fails every real test (so each has its section, whichever tests get copies)."""
    from polyglot_harness.utils.judging.canaries import plant
    from polyglot_harness.utils.languages import matches_any

    (tmp_path / "running_total_test.py").write_text(PYTHON_TESTS)
    (tmp_path / "running_total.py").write_text(
        "def running_total(numbers):\n    return [n + 1 for n in numbers] + [0]\n\n\n"
        "def first_over(numbers, threshold):\n    return -1\n")
    canaries = plant(tmp_path, PYTHON_PLANTER, matches_any, None, None)
    copies = [canary for canary in canaries if canary.mutation is not None]
    assert copies, "the sample's tests have mutable assertions"
    output = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-o", "addopts=",
                             "running_total_test.py"], cwd=tmp_path, capture_output=True, text=True).stdout
    section = re.compile(r"^_{3,} RunningTotalTest\.(\w+) _{3,}$", re.M)
    assert len(section.findall(output)) == 2 * len(canaries)  # each real test and each canary failed
    failed = tuple(f"running_total_test.py::RunningTotalTest::{canary.source}" for canary in canaries)
    verdict = TryVerdict(1, "unresolved", "tests_failed", "failed", failed, 6)

    text = make_feedback(verdict, output, canaries, {"running_total_test.py": PYTHON_TESTS}, PYTHON_PLANTER)

    shown = section.findall(text)
    assert set(shown) == {canary.source for canary in canaries}, text
    # A copy's section is gone: its source shows once (a fallback canary runs under its
    # source's own name, its lines holding the numbers left out, so that source shows twice).
    assert all(shown.count(canary.source) == 1 for canary in copies), text
    assert not [canary.name for canary in copies if canary.name in text]
    assert not [line for line in text.splitlines() for canary in copies
                if len(canary.mutation.literal) > 2 and line.rstrip().endswith(canary.mutation.literal)], text
    assert "Lists differ" in text  # the real tests' own failures stay
    assert len(re.findall(r"^FAILED ", text, re.M)) == len(canaries) + len(canaries) - len(copies)


def test_jest_feedback_leaves_out_the_copies_sections_and_survives_their_multiline_patterns(tmp_path):
    """jest's failure of a copy comparing arrays is a multi-line diff whose pattern holds a
    group across lines (`(?:.*\\n)*?`): splitting it line by line made an unbalanced regex and
    the feedback raised (any `--tries 2` run of such an instance). Real planting on the clamp-list
    sample; the output in jest's own format (`● describe › title` sections, the summary)."""
    from polyglot_harness.utils.judging.canaries import plant
    from polyglot_harness.utils.languages import matches_any
    from polyglot_harness.utils.languages.javascript import unskip_javascript

    sample = SAMPLES / "javascript" / "exercises" / "practice" / "clamp-list" / "clamp-list.spec.js"
    pristine = unskip_javascript(sample.read_text())
    (tmp_path / "clamp-list.spec.js").write_text(pristine)
    canaries = plant(tmp_path, JS_PLANTER, matches_any, None, None)
    copies = [canary for canary in canaries if canary.mutation is not None]
    assert copies and any("(?:" in canary.mutation.failure for canary in copies)

    def section(name: str, value: str) -> str:
        return (f"  ● Clamp List › {name}\n\n    expect(received).toEqual(expected) // deep equality\n\n"
                f"    - Expected  - 1\n    + Received  + 1\n\n      Array [\n    -   {value},\n    +   1,\n      ]\n\n")
    output = ("".join(section(canary.hidden_name, "REAL") for canary in canaries)
              + "".join(section(canary.name, "COPY") for canary in copies)
              + f"Tests:       {len(canaries) + len(copies)} failed, {len(canaries) + len(copies)} total\n")
    verdict = TryVerdict(1, "unresolved", "tests_failed", "failed", tuple(c.source for c in canaries), len(canaries))

    text = make_feedback(verdict, output, canaries, {"clamp-list.spec.js": pristine}, JS_PLANTER)

    assert "COPY" not in text and text.count("-   REAL,") == len(canaries)
    assert sorted(re.findall(r"● Clamp List › (.+)", text)) == sorted(canary.source for canary in canaries)
    assert "Tests:" in text
