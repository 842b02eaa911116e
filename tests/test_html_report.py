"""report.py --html (utils/html_report.py): the pure parts (diff classes, per-file patch status,
test order, JSON escaping, cutting long text, which run directory a result came from), the CLI's
output path rules, and the pages themselves opened in headless Chromium: summary, per-language
table, failed tests first, filters and sort by URL hash, flips on the compare page, a screenshot,
and an attacker whose transcript, patch and test names try to run script.

Runs are result files written with the real dataclasses (InstanceResult.to_json; two-try
results through utils.results.combine_tries), plus the transcript, test-output and feedback files
a harness run leaves; no Docker, except one real --tries 2 run (tests/fixtures/agents/two_tries)
opened in the browser. Without chromium the browser tests skip locally and FAIL under CI=true
(tests/ensure_chromium.sh installs it)."""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

from .conftest import IN_CI
from .headless_chromium import chromium_path, dump_dom, screenshot
from .test_report import PROJECT_ROOT, tree_state
from polyglot_harness.utils.views import html as html_view
from polyglot_harness.utils.views.html import (MAX_TEXT_CHARS, clipped, diff_line_class, embed_json, instance_row,
                                               ordered_test_rows, patch_files, render_page, run_tries, try_details)
from polyglot_harness.utils.outcomes import Bucket, Reason
from polyglot_harness.utils.judging.patches import SuspiciousLine, TamperRecord
from polyglot_harness.utils.records.loaded_run import load_output_dir, load_run_dir
from polyglot_harness.utils.records.results import InstanceResult, PhaseSeconds, combine_tries
from polyglot_harness.utils.records.run_dir import RunDirectory, try_files

PRICES = {"model-a": {"input": 1.0, "output": 10.0}}
LEAP_PATCH = """diff --git a/leap.py b/leap.py
index 1111111..2222222 100644
--- a/leap.py
+++ b/leap.py
@@ -1,2 +1,2 @@
 def leap_year(year):
-    pass
+    return year % 4 == 0
diff --git a/leap_test.py b/leap_test.py
index 3333333..4444444 100644
--- a/leap_test.py
+++ b/leap_test.py
@@ -1 +1 @@
-import unittest
+import unittest  # tampered
"""
ATTACK_SCRIPT = "</script><script>document.documentElement.setAttribute('data-pwned','script')</script>"
ATTACK_IMG = "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','img')\">"
ATTACK = f"{ATTACK_IMG} {ATTACK_SCRIPT} <!-- <em>emphasis</em>"


def result(instance_id: str, bucket: Bucket, reason: Reason, seconds: float, **fields) -> InstanceResult:
    usage = {"model": "model-a", "prompt_tokens": 1000, "completion_tokens": 100, "total_tokens": 1100, "calls": 3}
    return InstanceResult(instance_id=instance_id, model_name_or_path="run", eval_result=bucket, success=bucket == Bucket.RESOLVED,
                          language=instance_id.split("__")[0], reason=reason, agent_usage=usage,
                          seconds=PhaseSeconds(agent=seconds / 2, grading=seconds / 2, total=seconds), **fields)


def leap(bucket: Bucket, reason: Reason, failed: list[str]) -> InstanceResult:
    names = ["test_year_not_divisible_by_4", "test_century_is_not_leap", "test_year_divisible_by_400"]
    return result("python__leap", bucket, reason, 12.5, model_patch=LEAP_PATCH, kept_paths=["leap.py"],
                  tamper=[TamperRecord("leap_test.py", "test_file")], test_names=names, failed_tests=failed,
                  tests={"total": 3, "passed": 3 - len(failed), "failed": len(failed), "errored": 0, "skipped": 0})


RUN_A = [
    leap(Bucket.UNRESOLVED, Reason.TESTS_FAILED, ["test_year_divisible_by_400"]),
    result("python__pig", Bucket.RESOLVED, Reason.TESTS_PASSED, 3.0),
    result("go__bob", Bucket.RESOLVED, Reason.TESTS_PASSED, 40.0),
    result("go__leap", Bucket.UNRESOLVED, Reason.TEST_TIMEOUT, 30.0),
    result("java__bank", Bucket.EMPTY_PATCH, Reason.EMPTY_PATCH, 5.0),
    result("rust__poker", Bucket.INCOMPLETE, Reason.INFRASTRUCTURE_FAILED, 1.0),
    result("cpp__queen", Bucket.UNRESOLVED, Reason.BUILD_OR_RUN_FAILED, 20.0,
           suspicious=[SuspiciousLine("queen.cpp", "early_exit", "std::exit(0);")]),
]
RUN_B = [leap(Bucket.RESOLVED, Reason.TESTS_PASSED, []) if r.instance_id == "python__leap"
         else result("go__bob", Bucket.UNRESOLVED, Reason.TESTS_FAILED, 41.0) if r.instance_id == "go__bob"
         else r for r in RUN_A]


def write_run(run_dir: Path, results: list[InstanceResult], transcripts: dict[str, str] | None = None) -> Path:
    """A run directory as the harness leaves it: result JSON, transcript .md, test output _eval.md."""
    run_dir.mkdir(parents=True, exist_ok=True)
    for instance_result in results:
        instance_id = instance_result.instance_id
        (run_dir / f"{instance_id}.json").write_text(instance_result.to_json())
        default = f"# {instance_id} transcript\nthe agent said hello from {run_dir.name}\n"
        (run_dir / f"{instance_id}.md").write_text((transcripts or {}).get(instance_id, default))
        (run_dir / f"{instance_id}_eval.md").write_text(f"# {instance_id}: {instance_result.reason}\n")
    (run_dir / "run_settings.json").write_text(json.dumps({"agent": "agent", "dataset_hash": "d1"}) + "\n")
    return run_dir


# --- a two-try run (--tries 2), combined by the harness's own combine_tries ---------------------

LEAP_RIGHT_PATCH = LEAP_PATCH.replace("+    return year % 4 == 0", "+    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)")


def leap_two_tries(first_patch: str = LEAP_PATCH, first_failed: str = "test_year_divisible_by_400") -> InstanceResult:
    """Try 1 fails one test (its patch keeps leap.py, drops the test file); try 2 resolves."""
    first = leap(Bucket.UNRESOLVED, Reason.TESTS_FAILED, [first_failed])
    first.model_patch, first.detail = first_patch, "1 of 3 tests failed"
    first.agent_usage = first.agent_usage | {"total_tokens": 700}
    second = leap(Bucket.RESOLVED, Reason.TESTS_PASSED, [])
    second.model_patch, second.tamper = LEAP_RIGHT_PATCH, []
    return combine_tries([first, second])


TWO_TRY_RUN = [
    leap_two_tries(),
    combine_tries([result("go__bob", Bucket.RESOLVED, Reason.TESTS_PASSED, 40.0)]),  # right at once
    combine_tries([result("java__bank", Bucket.EMPTY_PATCH, Reason.EMPTY_PATCH, 5.0),
              result("java__bank", Bucket.EMPTY_PATCH, Reason.EMPTY_PATCH, 6.0)]),
    combine_tries([result("rust__poker", Bucket.UNRESOLVED, Reason.TESTS_FAILED, 9.0),
              result("rust__poker", Bucket.UNRESOLVED, Reason.TESTS_FAILED, 8.0)]),
]


def write_two_try_run(run_dir: Path, results: list[InstanceResult], texts: dict[str, str] | None = None) -> Path:
    """A --tries 2 run directory as the harness leaves it: the last try's files under the plain
    names, each earlier try's under try_files, the feedback each later try was given, and
    run_settings.json with tries 2. `texts` overrides a file's content by its name."""
    write_run(run_dir, results, texts)
    for instance_result in results:
        instance_id = instance_result.instance_id
        for record in instance_result.tries[:-1]:
            names = try_files(instance_id, record.try_number, last=False)
            (run_dir / names.transcript).write_text(f"# {instance_id}: try {record.try_number} transcript\n")
            (run_dir / names.eval_output).write_text(f"# {instance_id}: try {record.try_number} test output\n")
            feedback = try_files(instance_id, record.try_number + 1, last=True).feedback
            (run_dir / feedback).write_text(f"# {instance_id}: feedback after try {record.try_number}\n")
    for name, text in (texts or {}).items():
        (run_dir / name).write_text(text)
    (run_dir / "run_settings.json").write_text(json.dumps({"agent": "agent", "dataset_hash": "d1", "tries": 2}) + "\n")
    return run_dir


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    write_run(tmp_path / "runs" / "gen_1_0", RUN_A)
    write_run(tmp_path / "other" / "gen_2_0", RUN_B)
    return tmp_path


def cli(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "report.py", *arguments], cwd=PROJECT_ROOT, capture_output=True, text=True)


# --- pure parts ------------------------------------------------------------------------------

@pytest.mark.parametrize("line, expected", [
    ("diff --git a/x b/x", "meta"), ("index 1..2 100644", "meta"), ("--- a/x", "meta"), ("+++ b/x", "meta"),
    ("@@ -1,2 +1,2 @@ def f():", "hunk"), ("+    return 1", "add"), ("-    pass", "del"), (" context", "ctx"),
    ("\\ No newline at end of file", "ctx"), ("", "ctx"),
])
def test_diff_line_classes(line: str, expected: str):
    assert diff_line_class(line) == expected


def test_patch_files_mark_kept_and_dropped_files_with_why():
    files = patch_files(RUN_A[0])
    assert [(f.path, f.status) for f in files] == [("leap.py", "kept"), ("leap_test.py", "dropped: test_file")]
    assert ("add", "+    return year % 4 == 0") in files[0].lines
    assert ("del", "-    pass") in files[0].lines
    assert ("hunk", "@@ -1,2 +1,2 @@") in files[0].lines


def test_unparseable_patch_is_shown_whole():
    files = patch_files(InstanceResult(instance_id="python__x", model_name_or_path="run", model_patch="I could not do it.\n+ maybe\n"))
    assert [(f.path, f.status) for f in files] == [("(whole patch)", "unparsed")]
    assert [text for _, text in files[0].lines] == ["I could not do it.", "+ maybe"]


def test_test_rows_put_not_passing_tests_first():
    rows = ordered_test_rows(RUN_A[0])
    assert rows == [("not passed", "test_year_divisible_by_400"), ("passed", "test_year_not_divisible_by_4"),
                    ("passed", "test_century_is_not_leap")]


def test_test_rows_do_not_claim_passed_when_the_failure_list_was_capped():
    names = [f"test_{n}" for n in range(80)]
    capped = InstanceResult(instance_id="go__x", model_name_or_path="run", test_names=names, failed_tests=names[:50],
                            tests={"total": 80, "passed": 10, "failed": 70})
    statuses = [status for status, _ in ordered_test_rows(capped)]
    assert statuses == ["not passed"] * 50 + ["not listed"] * 30


def test_embedded_json_cannot_close_its_script_block_and_round_trips():
    data = {"transcript": ATTACK, "line\u2028sep": "a & b > c"}
    embedded = embed_json(data)
    assert "<" not in embedded and ">" not in embedded and "&" not in embedded and "\u2028" not in embedded
    assert json.loads(embedded) == data


def test_the_page_is_its_asset_files_filled_in_when_rendered(tmp_path: Path, monkeypatch):
    """The document, style and script are files beside html.py (assets/), read at each render:
    an edited asset shows in the next page, and every placeholder of the document is filled."""
    page = render_page({"title": "<t>"}, [{"patch": ATTACK}])
    for name in ("page.css", "page.js"):
        assert html_view.asset(name) in page
    assert not re.search(r"%[A-Z]+%", page) and "<title>&lt;t&gt;</title>" in page
    for name in ("page.html", "page.css", "page.js"):
        (tmp_path / name).write_text(html_view.asset(name), encoding="utf-8")
    (tmp_path / "page.css").write_text("h1{color:#123456}", encoding="utf-8")
    monkeypatch.setattr(html_view, "ASSETS_DIR", tmp_path)
    assert "<style>h1{color:#123456}</style>" in render_page({"title": "t"}, [])


def test_long_text_is_cut_and_says_where_the_rest_is():
    text = "x" * (MAX_TEXT_CHARS + 10)
    cut = clipped(text, where="runs/a_0/go__x.md")
    assert cut.startswith("x" * MAX_TEXT_CHARS)
    assert cut.endswith("[... cut: 10 more characters; full text in runs/a_0/go__x.md]")
    assert clipped("short") == "short"


@pytest.mark.parametrize("rewritten", ["old_0", "new_0"])
def test_detail_comes_from_the_run_dir_of_the_counted_result(tmp_path: Path, rewritten: str):
    """The transcript shown must belong to the result report.json counts: the latest written."""
    for name in ("old_0", "new_0"):
        write_run(tmp_path / "out" / name, [leap(Bucket.UNRESOLVED, Reason.TESTS_FAILED, [])])
        result_file = tmp_path / "out" / name / "python__leap.json"
        result_file.write_text(result_file.read_text().replace('"detail": ""', f'"detail": "{name}"'))
    later = time.time() + 5
    os.utime(tmp_path / "out" / rewritten / "python__leap.json", (later, later))
    loaded = load_output_dir(tmp_path / "out")
    assert loaded.results["python__leap"].detail == rewritten
    assert loaded.files("python__leap").transcript == tmp_path / "out" / rewritten / "python__leap.md"


def test_earlier_try_carries_its_own_patch_tests_and_files_and_the_final_try_its_feedback(tmp_path: Path):
    run_dir = write_two_try_run(tmp_path / "two_0", TWO_TRY_RUN[:1])
    first, second = try_details(TWO_TRY_RUN[0], RunDirectory(run_dir).instance("python__leap"))
    assert (first["number"], first["final"], first["bucket"], first["reason"], first["resolved"]) == (
        1, False, "unresolved", "tests_failed", False)
    assert first["failed_tests"] == ["test_year_divisible_by_400"] and first["tests"]["failed"] == 1
    assert [(f["path"], f["status"]) for f in first["patch"]] == [("leap.py", "kept"), ("leap_test.py", "dropped: test_file")]
    assert ["add", "+    return year % 4 == 0"] in first["patch"][0]["lines"]
    assert first["transcript"] == "# python__leap: try 1 transcript\n"
    assert first["test_output"] == "# python__leap: try 1 test output\n"
    assert first["files"] == {"transcript": "python__leap.try1.md", "test_output": "python__leap.try1_eval.md", "feedback": ""}
    assert first["feedback"] is None and first["usage"]["total_tokens"] == 700 and first["seconds"]["total"] == 12.5
    # The final try's patch, transcript and test output are the top-level ones: not repeated.
    assert (second["number"], second["final"], second["resolved"], second["patch"]) == (2, True, True, [])
    assert second["transcript"] is None and second["test_output"] is None
    assert second["feedback"] == "# python__leap: feedback after try 1\n"
    assert second["files"]["feedback"] == "python__leap.try2_feedback.md"


def test_an_instance_with_one_try_has_no_try_sections_and_its_row_says_where_it_resolved(tmp_path: Path):
    go_bob = TWO_TRY_RUN[1]
    assert len(go_bob.tries) == 1 and try_details(go_bob, RunDirectory(tmp_path).instance("go__bob")) == []
    assert (instance_row(go_bob, None)["tries"], instance_row(go_bob, None)["resolved_at_try"]) == (1, 1)
    assert (instance_row(TWO_TRY_RUN[0], None)["tries"], instance_row(TWO_TRY_RUN[0], None)["resolved_at_try"]) == (2, 2)
    assert instance_row(TWO_TRY_RUN[3], None)["resolved_at_try"] is None
    assert instance_row(RUN_A[1], None)["tries"] == 1  # a result file from before tries


def test_a_try_file_name_outside_the_run_directory_is_not_read(tmp_path: Path):
    (tmp_path / "secret.md").write_text("not the page's business")
    run_dir = write_two_try_run(tmp_path / "two_0", TWO_TRY_RUN[:1])
    forged = InstanceResult.from_dict(json.loads(TWO_TRY_RUN[0].to_json()))
    forged.tries[0].transcript, forged.tries[1].feedback_file = "../secret.md", "/etc/hostname"
    first, second = try_details(forged, RunDirectory(run_dir).instance("python__leap"))
    assert (first["files"]["transcript"], first["transcript"]) == ("", None)
    assert (second["files"]["feedback"], second["feedback"]) == ("", None)


def test_run_tries_comes_from_the_settings_or_from_an_instance_with_two_tries(tmp_path: Path):
    one_try_results = [combine_tries([r]) for r in RUN_A]
    settings_two = write_two_try_run(tmp_path / "two_0", one_try_results)  # all resolved or failed at try 1
    settings_one = write_run(tmp_path / "one_0", one_try_results)
    assert run_tries(load_run_dir(settings_two)) == 2
    assert run_tries(load_run_dir(settings_one)) == 1
    assert run_tries(load_run_dir(write_run(tmp_path / "old_0", RUN_A))) == 1  # results from before tries
    assert run_tries(load_run_dir(write_run(tmp_path / "late_0", TWO_TRY_RUN))) == 2
    (settings_one / "run_settings.json").write_text("[not an object]")
    assert run_tries(load_run_dir(settings_one)) == 1
    (settings_one / "run_settings.json").unlink()
    assert run_tries(load_run_dir(settings_one)) == 1


# --- the CLI -----------------------------------------------------------------------------------

def test_html_defaults_to_report_html_in_the_output_dir(runs: Path):
    completed = cli("--output_dir", str(runs / "runs"), "--html")
    assert completed.returncode == 0, completed.stderr
    page = runs / "runs" / "report.html"
    assert f"html: {page}" in completed.stdout
    text = page.read_text()
    assert text.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:|//)""", text), "the page must load nothing from a network"
    assert "default-src 'none'" in text


@pytest.mark.parametrize("target, message", [
    ("runs", "is a directory"),
    ("runs/gen_1_0/python__leap.json", "must end in .html"),
    ("missing/page.html", "does not exist"),
])
def test_bad_html_path_is_one_line_exit_2_and_writes_nothing(runs: Path, target: str, message: str):
    before = tree_state(runs)
    completed = cli("--output_dir", str(runs / "runs"), "--html", str(runs / target))
    assert completed.returncode == 2
    assert completed.stderr.count("\n") == 1 and message in completed.stderr, completed.stderr
    assert tree_state(runs) == before  # not even report.json


def test_compare_html_needs_a_file_and_writes_only_that_file(runs: Path):
    arguments = ("--compare", str(runs / "runs" / "gen_1_0"), str(runs / "other" / "gen_2_0"))
    before = tree_state(runs)
    refused = cli(*arguments, "--html")
    assert refused.returncode == 2 and "--html with --compare needs a FILE" in refused.stderr
    page = runs / "compare.html"
    completed = cli(*arguments, "--html", str(page))
    assert completed.returncode == 0, completed.stderr
    assert tree_state(runs) == before | {"compare.html": tree_state(runs)["compare.html"]}


# --- in the browser ----------------------------------------------------------------------------

class RenderedDom(HTMLParser):
    """What a reader sees: the text outside <script>/<style>, every tag, and the instance rows."""

    def __init__(self, dom: str):
        super().__init__()
        self.texts: list[str] = []
        self.tags: list[tuple[str, dict[str, str]]] = []
        self._hidden = 0
        self.feed(dom)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, {key: value or "" for key, value in attrs}))
        self._hidden += tag in ("script", "style")

    def handle_endtag(self, tag):
        self._hidden -= tag in ("script", "style") and self._hidden > 0

    def handle_data(self, data):
        if not self._hidden:
            self.texts.append(data)

    @property
    def text(self) -> str:
        return " ".join(" ".join(self.texts).split())

    def rows(self) -> list[dict[str, str]]:
        return [attrs for tag, attrs in self.tags if tag == "tr" and "inst" in attrs.get("class", "").split()]

    def root(self) -> dict[str, str]:
        return next(attrs for tag, attrs in self.tags if tag == "html")


@pytest.fixture(scope="session")
def chromium() -> str:
    path = chromium_path()
    if path is None:
        message = "chromium is not installed (run tests/ensure_chromium.sh)"
        if IN_CI:
            pytest.fail(f"CI=true: {message}", pytrace=False)
        pytest.skip(message)
    return path


def write_run_page(runs: Path, *extra: str) -> Path:
    page = runs / "run.html"
    completed = cli("--output_dir", str(runs / "runs"), "--html", str(page), *extra)
    assert completed.returncode == 0, completed.stderr
    return page


def rendered(page: Path, fragment: str = "") -> RenderedDom:
    dom = RenderedDom(dump_dom(page, fragment))
    assert "data-rendered-ms" in dom.root(), "the page's script did not finish rendering"
    return dom


def test_run_page_shows_summary_and_per_language_table(chromium: str, runs: Path, tmp_path: Path):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps(PRICES))
    dom = rendered(write_run_page(runs, "--prices", str(prices)))
    text = dom.text
    assert "28.6% accuracy" in text and "2 / 7 resolved" in text  # python__pig, go__bob of 7
    assert "showing 7 of 7 instances" in text
    # language, total, resolved, unresolved, empty_patch, incomplete, error, accuracy, cost (7 x 0.002 USD)
    assert "go 2 1 1 0 0 0 50.0% 0.0040" in text
    assert "python 2 1 1 0 0 0 50.0% 0.0040" in text
    assert "cpp 1 0 1 0 0 0 0.0% 0.0020" in text
    assert "0.0140 cost USD" in text
    assert [row["data-id"] for row in dom.rows()] == sorted(r.instance_id for r in RUN_A)
    assert "pass_rate" not in text and "tries" not in text  # a one-try run's page: no try columns, cards or filter


def test_opened_instance_lists_failed_tests_first_with_patch_tamper_and_transcript(chromium: str, runs: Path):
    text = rendered(write_run_page(runs), "open=python__leap").text
    failed = text.index("✘ test_year_divisible_by_400 — not passed")
    assert failed < text.index("✔ test_year_not_divisible_by_4 — passed")
    assert failed < text.index("✔ test_century_is_not_leap — passed")
    assert "leap.py — kept" in text and "leap_test.py — dropped: test_file" in text
    assert "+ return year % 4 == 0" in text
    assert "the agent said hello from gen_1_0" in text  # the transcript file
    assert "# python__leap: tests_failed" in text        # the test output file
    assert "seconds total 12.50" in text and "usage total_tokens 1100" in text


def test_bucket_filter_shows_only_that_bucket(chromium: str, runs: Path):
    dom = rendered(write_run_page(runs), "bucket=unresolved")
    rows = dom.rows()
    assert {row["data-bucket"] for row in rows} == {"unresolved"}
    assert sorted(row["data-id"] for row in rows) == ["cpp__queen", "go__leap", "python__leap"]
    assert "showing 3 of 7 instances" in dom.text
    go_only = rendered(write_run_page(runs), "bucket=unresolved&lang=go").rows()
    assert [row["data-id"] for row in go_only] == ["go__leap"]


def test_sort_by_time_puts_the_slowest_first(chromium: str, runs: Path):
    ids = [row["data-id"] for row in rendered(write_run_page(runs), "sort=time").rows()]
    by_time = sorted(RUN_A, key=lambda r: -(r.seconds.total or 0))
    assert ids == [r.instance_id for r in by_time]


def test_compare_page_highlights_flips(chromium: str, runs: Path):
    page = runs / "compare.html"
    completed = cli("--compare", str(runs / "runs" / "gen_1_0"), str(runs / "other" / "gen_2_0"), "--html", str(page))
    assert completed.returncode == 0, completed.stderr
    dom = rendered(page, "open=python__leap")
    flips = {row["data-id"]: row["class"] for row in dom.rows() if row["data-flip"]}
    assert "flip-newly_resolved" in flips.pop("python__leap").split()
    assert "flip-regressed" in flips.pop("go__bob").split()
    assert "flip-excluded" in flips.pop("rust__poker").split()  # incomplete in both: not a flip
    assert flips == {}
    text = dom.text
    assert "1 newly resolved" in text and "1 regressed" in text
    assert "the agent said hello from gen_1_0" in text and "the agent said hello from gen_2_0" in text
    regressed = rendered(page, "flip=regressed").rows()
    assert [row["data-id"] for row in regressed] == ["go__bob"]


def test_attacker_text_is_shown_literally_and_never_runs(chromium: str, tmp_path: Path):
    """Transcript, patch, test names, detail and a suspicious line all carry markup and a
    script-block breakout; the page must render them as text, and no attacker script may run."""
    patch = LEAP_PATCH.replace("+    return year % 4 == 0", f"+    return 1  # {ATTACK}")
    attacker = result("python__leap", Bucket.UNRESOLVED, Reason.TESTS_FAILED, 1.0, model_patch=patch,
                      kept_paths=["leap.py"], test_names=[f"test_{ATTACK}"], failed_tests=[f"test_{ATTACK}"],
                      tests={"total": 1, "failed": 1}, detail=ATTACK, error=ATTACK,
                      suspicious=[SuspiciousLine("leap.py", "early_exit", ATTACK)])
    write_run(tmp_path / "runs" / "evil_0", [attacker], {"python__leap": f"transcript {ATTACK}"})
    page = tmp_path / "evil.html"
    assert cli("--output_dir", str(tmp_path / "runs"), "--html", str(page)).returncode == 0
    raw = page.read_text()
    assert "<img" not in raw and raw.count("</script>") == raw.count("<script")  # no breakout in the file
    dom_text = dump_dom(page, "open=python__leap")
    dom = RenderedDom(dom_text)
    assert "data-rendered-ms" in dom.root()
    assert not [attrs for _, attrs in dom.tags if "data-pwned" in attrs], "an attacker script ran"
    assert not [tag for tag, _ in dom.tags if tag in ("img", "em")], "attacker markup became elements"
    assert dom.text.count(" ".join(ATTACK.split())) >= 6  # transcript, patch, test name x1, detail, error, line


@pytest.fixture
def two_try_runs(tmp_path: Path) -> Path:
    write_two_try_run(tmp_path / "runs" / "two_0", TWO_TRY_RUN)
    return tmp_path


def test_two_try_run_page_shows_pass_rate_1_and_2_overall_and_per_language(chromium: str, two_try_runs: Path):
    dom = rendered(write_run_page(two_try_runs))
    text = dom.text
    # resolved at try 1: go__bob; at try 2: python__leap; of 4 instances
    assert "25.0% pass_rate_1" in text and "50.0% pass_rate_2" in text and "50.0% accuracy" in text
    # language, total, 5 buckets, accuracy, pass_rate_1, pass_rate_2
    assert "python 1 1 0 0 0 0 100.0% 0.0% 100.0%" in text
    assert "go 1 1 0 0 0 0 100.0% 100.0% 100.0%" in text
    assert "java 1 0 0 1 0 0 0.0% 0.0% 0.0%" in text
    assert "resolved at try 2: python__leap" in text
    tries = {row["data-id"]: (row["data-tries"], row["data-resolved-at-try"]) for row in dom.rows()}
    assert tries == {"python__leap": ("2", "2"), "go__bob": ("1", "1"), "java__bank": ("2", ""), "rust__poker": ("2", "")}
    assert "2 tries · resolved at try 2" in text and "1 try · resolved at try 1" in text


@pytest.mark.parametrize("fragment, expected", [
    ("try=2", ["python__leap"]), ("try=1", ["go__bob"]),
    ("try=retried", ["java__bank", "python__leap", "rust__poker"]),
])
def test_try_filter_shows_where_instances_resolved(chromium: str, two_try_runs: Path, fragment: str, expected: list[str]):
    dom = rendered(write_run_page(two_try_runs), fragment)
    assert sorted(row["data-id"] for row in dom.rows()) == expected
    assert f"showing {len(expected)} of 4 instances" in dom.text


def test_opened_two_try_instance_shows_try_1_then_the_feedback_then_the_final_try(chromium: str, two_try_runs: Path):
    text = rendered(write_run_page(two_try_runs), "open=python__leap").text
    assert "python__leap resolved · tests_passed · 2 tries · resolved at try 2" in text
    assert "1 unresolved tests_failed 2/3 700 12.5" in text and "2 (final) resolved tests_passed 3/3 1100 12.5" in text
    order = ["Try 1: unresolved · tests_failed", "1 of 3 tests failed",
             "✘ test_year_divisible_by_400 — not passed",
             "Try 1 patch leap.py — kept", "+ return year % 4 == 0", "leap_test.py — dropped: test_file",
             "Try 1 usage, timings", "usage total_tokens 700",
             "Try 1 agent transcript (python__leap.try1.md) # python__leap: try 1 transcript",
             "Try 1 test output (python__leap.try1_eval.md) # python__leap: try 1 test output",
             "Feedback given to try 2 (python__leap.try2_feedback.md) # python__leap: feedback after try 1",
             "Try 2 (final): resolved · tests_passed",
             "Patch leap.py — kept", "+ return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)",
             "(usage and agent/grading/tests seconds summed over the tries)", "usage total_tokens 1800",
             "Agent transcript # python__leap transcript", "Test output # python__leap: tests_passed"]
    positions = [text.find(part) for part in order]
    assert -1 not in positions, [part for part, at in zip(order, positions) if at == -1]
    assert positions == sorted(positions)
    assert "dropped: test_file" not in text[positions[11]:]  # try 2 dropped nothing


def test_compare_page_of_a_two_try_run_opens_to_its_tries(chromium: str, two_try_runs: Path):
    write_run(two_try_runs / "other" / "one_0", RUN_A)
    page = two_try_runs / "compare.html"
    completed = cli("--compare", str(two_try_runs / "other" / "one_0"), str(two_try_runs / "runs" / "two_0"),
                    "--html", str(page))
    assert completed.returncode == 0, completed.stderr
    dom = rendered(page, "open=python__leap")
    assert "flip-newly_resolved" in next(row for row in dom.rows() if row["data-id"] == "python__leap")["class"].split()
    assert "Try 1 agent transcript (python__leap.try1.md) # python__leap: try 1 transcript" in dom.text


def test_attacker_text_in_an_earlier_try_and_the_feedback_is_shown_literally(chromium: str, tmp_path: Path):
    """Try 1's patch, failed test name, detail, transcript and test output, and the feedback,
    all carry markup and a script-block breakout: text on the page, and no script runs."""
    attacker = leap_two_tries(LEAP_PATCH.replace("+    return year % 4 == 0", f"+    return 1  # {ATTACK}"),
                              f"test_{ATTACK}")
    attacker.tries[0].detail = ATTACK
    texts = {"python__leap.try1.md": f"transcript {ATTACK}", "python__leap.try1_eval.md": f"output {ATTACK}",
             "python__leap.try2_feedback.md": f"feedback {ATTACK}"}
    write_two_try_run(tmp_path / "runs" / "evil_0", [attacker], texts)
    page = tmp_path / "evil.html"
    assert cli("--output_dir", str(tmp_path / "runs"), "--html", str(page)).returncode == 0
    raw = page.read_text()
    assert "<img" not in raw and raw.count("</script>") == raw.count("<script")
    dom = RenderedDom(dump_dom(page, "open=python__leap"))
    assert "data-rendered-ms" in dom.root()
    assert not [attrs for _, attrs in dom.tags if "data-pwned" in attrs], "an attacker script ran"
    assert not [tag for tag, _ in dom.tags if tag in ("img", "em")], "attacker markup became elements"
    shown = " ".join(ATTACK.split())
    for part in (f"+ return 1 # {shown}", f"test_{shown} — not passed", f"transcript {shown}", f"output {shown}",
                 f"feedback {shown}"):
        assert part in dom.text, part
    assert dom.text.count(shown) >= 6  # + try 1's detail


@pytest.mark.docker
def test_a_real_two_try_run_opens_to_both_tries_and_the_feedback(chromium: str, sample_dataset: Path, tmp_path: Path,
                                                                  monkeypatch, no_leftover_containers):
    """The harness's own --tries 2 run (tests/fixtures/agents/two_tries): try 1 writes a wrong
    first_over with attacker markup in a comment, try 2 the reference; the page finds every
    file the harness kept and shows the markup as text."""
    from polyglot_harness.utils.run import harness
    from .test_tries import PYTHON, PYTHON_REFERENCE, TWO_TRIES
    wrong = PYTHON_REFERENCE.replace("return position", f"return position + 1  # {ATTACK}")
    monkeypatch.setenv("TEST_AGENT_PLAN", json.dumps({PYTHON: {"first": {"running_total.py": wrong},
                                                               "second": {"running_total.py": PYTHON_REFERENCE}}}))
    outcome = harness(dataset=sample_dataset, output_dir=tmp_path / "runs", progress=False, model_name_or_path="two",
                      agent=str(TWO_TRIES), instance_ids=[PYTHON], pass_env=["TEST_AGENT_PLAN"], tries=2)
    assert outcome.report["resolved_ids"] == [PYTHON]
    feedback = (outcome.run_dir / f"{PYTHON}.try2_feedback.md").read_text()

    dom = rendered(write_run_page(tmp_path), f"open={PYTHON}")
    text = dom.text
    assert not [attrs for _, attrs in dom.tags if "data-pwned" in attrs], "an attacker script ran"
    assert "0.0% pass_rate_1" in text and "100.0% pass_rate_2" in text
    assert f"{PYTHON} resolved · tests_passed · 2 tries · resolved at try 2" in text
    # Try 1's wrong answer (position + 1) fails real tests, and now and then also passes a drawn
    # canary whose changed value is exactly that (canary_passed decides first: CI, 2026-11-28).
    first = outcome.results[PYTHON].tries[0]
    assert (first.eval_result, first.reason) in {("unresolved", "tests_failed"), ("unresolved", "canary_passed")}
    assert f"Try 1: unresolved · {first.reason}" in text
    assert f"+ return position + 1 # {' '.join(ATTACK.split())}" in text  # try 1's real patch, as text
    for name in (f"{PYTHON}.try1.md", f"{PYTHON}.try1_eval.md", f"{PYTHON}.try2_feedback.md"):
        assert f"({name})" in text
    assert "no transcript file" not in text and "no test output file" not in text and "no feedback file" not in text
    assert " ".join(feedback.split()[:40]) in text  # the feedback file itself, as try 2 got it


def test_screenshot_is_a_real_rendering(chromium: str, runs: Path, tmp_path: Path):
    shot = screenshot(write_run_page(runs), tmp_path / "run.png", "open=python__leap", width=1200, height=1500)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", data[16:24]) == (1200, 1500)
    assert len(data) > 30_000, "a blank page compresses to a few KB; text and tables do not"
