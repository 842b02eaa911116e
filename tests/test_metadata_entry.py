"""utils/dataset.py MetadataEntry: the one definition of the metadata keys, shared by the
writer (prepare_polyglot_dataset.py) and the reader (load_dataset). No Docker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.prepare_speed import write_synthetic_exercise
from polyglot_harness.utils.prepare.dataset import prepare_dataset
from polyglot_harness.utils.outcomes import GradingMode
from polyglot_harness.utils.records.dataset import (METADATA_FILENAME, DatasetError, MetadataEntry, MetadataEntryError,
                                                  load_dataset)

SAMPLES_DIR = Path(__file__).resolve().parents[1] / "samples"
# Keys a metadata file had to hold before MetadataEntry; an entry lacking one is refused.
REQUIRED = ("instance_id", "language", "task_name", "files", "problem_statement", "base_commit", "test_commit",
            "repo", "hidden_paths", "solution_paths", "reference_dir")
# Keys later versions added: files prepared before them must still load.
ADDED_LATER = ("expected_skips", "grading_mode", "stub_passes", "canary_sources")

RECORDED = {
    "instance_id": "go__leap", "language": "go", "task_name": "leap",
    "files": {"solution": ["leap.go"], "test": ["leap_test.go", "cases_test.go"], "example": [".meta/example.go"]},
    "authors": ["someone"], "contributors": [], "blurb": "Leap years.", "source": "JavaRanch",
    "source_url": "https://example.org/leap", "problem_statement": "Do it.\n", "base_commit": "0" * 40,
    "test_commit": "1" * 40, "reference_tests": {"leap_test.go": "package leap\n"},
    "reference_answers": {"leap.go": "package leap\n"}, "test_patch": "diff --git a/leap_test.go b/leap_test.go\n",
    "repo": "repos/go__leap", "hidden_paths": ["cases_test.go", "leap_test.go"], "solution_paths": ["leap.go"],
    "reference_dir": "references/go__leap", "expected_tests": ["TestLeap", "TestLeap/1900"],
    "expected_skips": [], "grading_mode": "tests", "stub_passes": False, "canary_sources": ["TestLeap/1900"],
}


@pytest.fixture(scope="module")
def samples_metadata_text(tmp_path_factory) -> str:
    output = tmp_path_factory.mktemp("samples") / "dataset"
    prepare_dataset(SAMPLES_DIR, output, workers=1, record_expected=False)
    return (output / METADATA_FILENAME).read_text(encoding="utf-8")


def test_prepared_entries_round_trip_to_the_same_bytes(samples_metadata_text):
    entries = json.loads(samples_metadata_text)
    again = [MetadataEntry.from_json(entry).to_json() for entry in entries]
    assert json.dumps(again, indent=2, ensure_ascii=False) + "\n" == samples_metadata_text


def test_recorded_entry_round_trips_with_its_key_order_and_reads_as_tuples():
    entry = MetadataEntry.from_json(RECORDED)
    assert list(entry.to_json().items()) == list(RECORDED.items())
    assert entry.expected_tests == ("TestLeap", "TestLeap/1900") and entry.files["test"] == ("leap_test.go", "cases_test.go")
    assert entry.stub_passes is False and entry.canary_sources == ("TestLeap/1900",)


def test_source_url_is_written_only_when_the_exercise_has_one():
    without = {key: value for key, value in RECORDED.items() if key != "source_url"}
    assert MetadataEntry.from_json(without).to_json() == without
    assert MetadataEntry.from_json(without).source_url is None


def test_required_keys_are_the_ones_older_readers_required():
    for key in REQUIRED:
        with pytest.raises(DatasetError, match=f"lacks {key}$"):
            MetadataEntry.from_json({k: v for k, v in RECORDED.items() if k != key})


def test_unknown_keys_are_ignored_and_unknown_grading_modes_refused():
    assert MetadataEntry.from_json({**RECORDED, "added_by_a_newer_version": 1}) == MetadataEntry.from_json(RECORDED)
    with pytest.raises(DatasetError, match="go__leap has grading_mode 'guess'"):
        MetadataEntry.from_json({**RECORDED, "grading_mode": "guess"})


def test_metadata_prepared_before_the_later_keys_still_loads(tmp_path):
    write_synthetic_exercise(tmp_path / "checkout", "go", "leap")
    prepare_dataset(tmp_path / "checkout", tmp_path / "dataset", workers=1, record_expected=False)
    metadata_path = tmp_path / "dataset" / METADATA_FILENAME
    entries = json.loads(metadata_path.read_text(encoding="utf-8"))
    old = [{key: value for key, value in entry.items() if key not in ADDED_LATER + ("authors", "contributors")}
           for entry in entries]
    old[0]["expected_tests"] = ["TestLeap"]
    metadata_path.write_text(json.dumps(old, indent=2), encoding="utf-8")
    [instance] = load_dataset(tmp_path / "dataset")
    assert instance.expected_tests == ("TestLeap",)
    # Unrecorded skips are what the test files say statically (nothing, for Go).
    assert (instance.expected_skips, instance.grading_mode, instance.stub_passes, instance.canary_sources) == (
        (), "tests", None, None)
    assert instance.checks_off == ("canaries",), "grading names what it cannot check"
    assert instance.agent_repo_dir == tmp_path / "dataset" / "repos" / "go__leap" / "agent"


def test_a_reference_run_fills_the_recorded_keys_and_a_failed_one_leaves_them_null():
    from polyglot_harness.utils.prepare.recording import with_reference_run
    from polyglot_harness.utils.pipeline.expected_tests import ReferenceRun

    unrecorded = MetadataEntry.from_json({**RECORDED, "expected_tests": None, "expected_skips": None,
                                          "stub_passes": None, "canary_sources": None})
    resolved = ReferenceRun(instance_id="go__leap", test_names=("TestLeap", "TestLeap/1900"), reason="resolved", seconds=1.0, skipped_names=(),
                            stub_passes=False, canary_sources=("TestLeap/1900",))
    assert with_reference_run(unrecorded, resolved).to_json() == RECORDED
    failed = ReferenceRun(instance_id="go__leap", test_names=None, reason="test_failed", seconds=1.0, skipped_names=("TestX",), canary_sources=("TestX",))
    assert {key: value for key, value in with_reference_run(unrecorded, failed).to_json().items()
            if key in ("expected_tests", "expected_skips", "stub_passes", "canary_sources")} == dict.fromkeys(
        ("expected_tests", "expected_skips", "stub_passes", "canary_sources"))


def test_grading_mode_is_read_as_the_vocabulary_and_an_unknown_one_refused():
    loaded = MetadataEntry.from_json({**RECORDED, "grading_mode": "build_only"})
    assert loaded.grading_mode is GradingMode.BUILD_ONLY and loaded.to_json()["grading_mode"] == "build_only"
    assert MetadataEntry.from_json({key: value for key, value in RECORDED.items() if key != "grading_mode"}
                                   ).grading_mode is GradingMode.TESTS
    with pytest.raises(MetadataEntryError, match=r"grading_mode 'quiz' \(known: tests, build_only\)"):
        MetadataEntry.from_json({**RECORDED, "grading_mode": "quiz"})
