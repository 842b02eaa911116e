"""report.py: report.json's keys and numbers over run directories of result files, its CLI, and
its one-line errors. It shares the loader and the report dataclass with the harness's run
report (utils/results.py), so both reports must agree. Pure, no Docker."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from polyglot_harness.utils.views import report as report_module
from polyglot_harness.utils.outcomes import Bucket, Reason
from polyglot_harness.utils.judging.patches import SuspiciousLine
from polyglot_harness.utils.records.results import InstanceResult, build_run_report, load_instance_results
from polyglot_harness.utils.outcomes import GradingMode

PROJECT_ROOT = Path(__file__).resolve().parent.parent
REPORT_JSON_KEYS = [
    "accuracy_score", "total_resolved_instances", "total_submitted_instances", "total_instances",
    "total_resolved_ids", "total_unresolved_ids", "total_emptypatch_ids", "total_incomplete_ids", "total_error_ids",
    "per_language", "reasons", "agent_usage", "instances_in_several_result_files", "resolved_with_suspicious_lines",
    "graded_by", "stub_passes_ids", "resolved_stub_passes", "accuracy_score_excluding_stub_passes",
    "checks_off",  # check -> ids graded without it (a --fast dataset; issue 33)
    "pass_rate_1", "pass_rate_2", "pass_rates_per_language",  # --tries (tests/test_tries.py)
    "cost",  # added last: null without --prices (tests/test_compare.py)
]
RUN_REPORT_KEYS = [
    "total_instances", "submitted_instances", "completed_instances", "resolved_instances", "unresolved_instances",
    "empty_patch_instances", "error_instances", "completed_ids", "resolved_ids", "unresolved_ids", "empty_patch_ids",
    "error_ids", "incomplete_ids", "unfinished_ids", "reasons", "model_name_or_path", "build_only_ids",
    "stub_passes_ids", "checks_off", "schema_version", "pass_rate_1", "pass_rate_2", "pass_rates_per_language",
]


def result(instance_id: str, bucket: Bucket, reason: Reason, **fields) -> InstanceResult:
    return InstanceResult(instance_id=instance_id, model_name_or_path="run", eval_result=bucket, success=bucket == Bucket.RESOLVED,
                          language=instance_id.split("__")[0], reason=reason,
                          agent_usage={"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110, "calls": 2},
                          **fields)


RESULTS = [
    result("python__pig", Bucket.RESOLVED, Reason.TESTS_PASSED,
           suspicious=[SuspiciousLine("pig.py", "early_exit", "sys.exit(0)")]),
    result("python__leap", Bucket.UNRESOLVED, Reason.TESTS_FAILED),
    result("go__leap", Bucket.UNRESOLVED, Reason.TESTS_FAILED),
    result("java__bank", Bucket.EMPTY_PATCH, Reason.EMPTY_PATCH),
    result("rust__poker", Bucket.INCOMPLETE, Reason.INFRASTRUCTURE_FAILED),
    result("cpp__queen", Bucket.ERROR, Reason.UNEXPECTED_ERROR),
    result("javascript__tests", Bucket.RESOLVED, Reason.BUILD_ONLY_PASSED, grading_mode=GradingMode.BUILD_ONLY,
           stub_passes=True),
]


def write_run(run_dir: Path, results: list[InstanceResult]) -> Path:
    run_dir.mkdir(parents=True, exist_ok=True)
    for instance_result in results:
        (run_dir / f"{instance_result.instance_id}.json").write_text(instance_result.to_json())
    (run_dir / "run_settings.json").write_text('{"agent": "oracle"}\n')
    return run_dir


@pytest.fixture
def output_dir(tmp_path: Path) -> Path:
    write_run(tmp_path / "runs" / "run_0", RESULTS)
    return tmp_path / "runs"


def tree_state(root: Path) -> dict[str, tuple[bytes, int]]:
    return {str(path.relative_to(root)): (path.read_bytes(), path.stat().st_mtime_ns)
            for path in sorted(root.rglob("*")) if path.is_file()}


def test_report_json_has_its_keys_and_numbers(output_dir: Path):
    data = report_module.report(output_dir)
    assert list(data) == REPORT_JSON_KEYS
    assert json.loads((output_dir / "report.json").read_text()) == data
    assert data["accuracy_score"] == round(2 / 7, 6)
    assert (data["total_resolved_instances"], data["total_submitted_instances"], data["total_instances"]) == (2, 7, 7)
    assert data["total_resolved_ids"] == ["javascript__tests", "python__pig"]
    assert data["total_unresolved_ids"] == ["go__leap", "python__leap"]
    assert data["total_emptypatch_ids"] == ["java__bank"]
    assert data["total_incomplete_ids"] == ["rust__poker"]
    assert data["total_error_ids"] == ["cpp__queen"]
    assert data["per_language"]["python"] == {"resolved": 1, "unresolved": 1, "empty_patch": 0, "incomplete": 0,
                                              "error": 0, "total": 2}
    assert list(data["per_language"]) == ["cpp", "go", "java", "javascript", "python", "rust"]
    assert list(data["reasons"].items())[0] == ("tests_failed", 2)  # most frequent first
    assert data["agent_usage"] == {"prompt_tokens": 700, "completion_tokens": 70, "total_tokens": 770, "calls": 14}
    assert data["instances_in_several_result_files"] == []
    assert data["resolved_with_suspicious_lines"] == ["python__pig"]
    assert data["graded_by"] == {"tests": 6, "build_only": 1, "build_only_ids": ["javascript__tests"]}
    assert (data["stub_passes_ids"], data["resolved_stub_passes"]) == (["javascript__tests"], 1)
    assert data["accuracy_score_excluding_stub_passes"] == round(1 / 6, 6)


def test_expected_num_tasks_is_the_denominator(output_dir: Path):
    data = report_module.report(output_dir, expected_num_tasks=10)
    assert (data["accuracy_score"], data["total_instances"], data["total_submitted_instances"]) == (0.2, 10, 7)
    assert data["accuracy_score_excluding_stub_passes"] == round(1 / 9, 6)


def test_instance_in_several_run_dirs_counts_once_from_the_latest_file(output_dir: Path):
    older = write_run(output_dir / "earlier_0", [result("go__leap", Bucket.RESOLVED, Reason.TESTS_PASSED)])
    a_minute_ago = time.time() - 60
    os.utime(older / "go__leap.json", (a_minute_ago, a_minute_ago))
    data = report_module.report(output_dir)
    assert data["instances_in_several_result_files"] == ["go__leap"]
    assert "go__leap" in data["total_unresolved_ids"] and data["total_submitted_instances"] == 7


def test_report_json_and_the_harness_run_report_agree(output_dir: Path):
    """One loader and one builder: the two files are two views of the same numbers."""
    data = report_module.report(output_dir)
    results = load_instance_results(output_dir / "run_0")
    run_report = build_run_report("run", [*results, "python__unfinished"], results).run_report_json()
    assert list(run_report) == RUN_REPORT_KEYS
    assert run_report["resolved_ids"] == data["total_resolved_ids"]
    assert run_report["unresolved_ids"] == data["total_unresolved_ids"]
    assert run_report["empty_patch_ids"] == data["total_emptypatch_ids"]
    assert run_report["incomplete_ids"] == data["total_incomplete_ids"]
    assert run_report["error_ids"] == data["total_error_ids"]
    assert run_report["submitted_instances"] == data["total_submitted_instances"]
    assert run_report["reasons"] == data["reasons"]
    assert run_report["build_only_ids"] == data["graded_by"]["build_only_ids"]
    assert run_report["stub_passes_ids"] == data["stub_passes_ids"]
    assert (run_report["total_instances"], run_report["unfinished_ids"]) == (8, ["python__unfinished"])
    assert (run_report["completed_instances"], run_report["error_instances"]) == (5, 2)


def test_result_files_from_an_older_version_are_scored(tmp_path: Path):
    run_dir = tmp_path / "runs" / "old_0"
    run_dir.mkdir(parents=True)
    (run_dir / "go__leap.json").write_text(json.dumps({
        "instance_id": "go__leap", "model_name_or_path": "old", "eval_result": "resolved", "success": True,
        "language": "go", "reason": "tests_passed", "tamper": [{"path": "leap_test.go", "why": "test_file"}],
        "seconds": {"agent": 3.0, "total": 5.0}}))
    data = report_module.report(tmp_path / "runs")
    assert (data["accuracy_score"], data["total_resolved_ids"]) == (1.0, ["go__leap"])


def test_cli_prints_the_table_and_writes_report_json(output_dir: Path):
    completed = subprocess.run([sys.executable, str(PROJECT_ROOT / "report.py"), "--output_dir", str(output_dir)],
                               capture_output=True, text=True, cwd=PROJECT_ROOT, timeout=60)
    assert completed.returncode == 0, completed.stderr
    assert "accuracy_score 0.2857 (2/7)" in completed.stdout
    assert "audit: 1 resolved instance(s)" in completed.stdout
    assert completed.stdout.rstrip().splitlines()[-1] == f"report: {output_dir / 'report.json'}"
    assert list(json.loads((output_dir / "report.json").read_text())) == REPORT_JSON_KEYS


@pytest.mark.parametrize("arguments, message", [
    (["--expected_num_tasks", "0"], "error: --expected_num_tasks must be positive"),
    (["--expected_num_tasks", "-3"], "error: --expected_num_tasks must be positive"),
])
def test_bad_setting_is_one_line_exit_2_and_touches_nothing(output_dir: Path, capsys, arguments, message):
    before = tree_state(output_dir)
    assert report_module.main(["--output_dir", str(output_dir), *arguments]) == 2
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", message + "\n")
    assert tree_state(output_dir) == before


def test_missing_output_dir_is_one_line_exit_2(tmp_path: Path):
    missing = tmp_path / "no-runs"
    completed = subprocess.run([sys.executable, str(PROJECT_ROOT / "report.py"), "--output_dir", str(missing)],
                               capture_output=True, text=True, cwd=PROJECT_ROOT, timeout=60)
    assert completed.returncode == 2
    assert (completed.stdout, completed.stderr) == ("", f"error: output directory {missing} does not exist\n")
    assert not missing.exists()
