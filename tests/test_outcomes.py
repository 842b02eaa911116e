"""utils/outcomes.py and the result file's typed fields: the strings users read never change,
and result files written before (or by this version) load back. Pure, no Docker."""

from __future__ import annotations

import json
from pathlib import Path

from polyglot_harness.utils.outcomes import BUCKETS, FINISHED_BUCKETS, Bucket, GradingMode, Reason
from polyglot_harness.utils.judging.patches import SuspiciousLine, TamperRecord
from polyglot_harness.utils.records.results import InstanceResult, PhaseSeconds, load_instance_results

BUCKET_STRINGS = {
    "RESOLVED": "resolved", "UNRESOLVED": "unresolved", "EMPTY_PATCH": "empty_patch",
    "INCOMPLETE": "incomplete", "ERROR": "error",
}
REASON_STRINGS = {
    "TESTS_PASSED": "tests_passed", "BUILD_ONLY_PASSED": "build_only_passed", "TEST_TIMEOUT": "test_timeout",
    "UNREADABLE_TEST_RESULTS": "unreadable_test_results", "BUILD_OR_RUN_FAILED": "build_or_run_failed",
    "NO_TEST_RESULTS": "no_test_results", "TESTS_FAILED": "tests_failed", "TESTS_SKIPPED": "tests_skipped",
    "NONZERO_EXIT": "nonzero_exit", "EXPECTED_TESTS_MISSING": "expected_tests_missing",
    "SIGNATURE_CHANGED": "signature_changed",
    "CANARY_PASSED": "canary_passed", "CANARY_MISSING": "canary_missing",
    "OBSERVATION_MISSING": "observation_missing", "OBSERVATION_MISMATCH": "observation_mismatch",
    "CANARY_WITHOUT_SECRET": "canary_without_secret", "EXIT_ZERO_WITH_CANARIES": "exit_zero_with_canaries",
    "BRIDGE_BROKEN": "bridge_broken",
    "SOLUTION_SWALLOWED_ASSERTION": "solution_swallowed_assertion",
    "DUNDER_RESULT_NOT_PLAIN": "dunder_result_not_plain",
    "TEST_OBJECT_REFUSED": "test_object_refused",
    "HANDLE_OPERATOR_WITH_VALUE": "handle_operator_with_value",
    "HANDLE_COMPARED_WITH_VALUE": "handle_compared_with_value",
    "HANDLES_WITHOUT_DATA": "handles_without_data",
    "PATCH_APPLY_FAILED": "patch_apply_failed", "NOT_A_REGULAR_FILE": "not_a_regular_file",
    "SOLUTION_NEEDS_TESTS": "solution_needs_tests", "DISK_LIMIT": "disk_limit",
    "FORBIDDEN_CONSTRUCT": "forbidden_construct", "PATCH_TOO_LARGE": "patch_too_large",
    "PATCH_UNPARSEABLE": "patch_unparseable", "EMPTY_PATCH": "empty_patch",
    "INFRASTRUCTURE_FAILED": "infrastructure_failed", "AGENT_INTERRUPTED": "agent_interrupted",
    "GRADING_INFRASTRUCTURE_FAILED": "grading_infrastructure_failed", "UNEXPECTED_ERROR": "unexpected_error",
}

# A result file as the harness wrote it before tamper/suspicious/seconds were typed, and before
# some keys existed at all (no suspicious, canaries, grading_mode, stub_passes, agent_stopped).
OLD_RESULT_FILE = """{
  "instance_id": "go__leap",
  "model_name_or_path": "before",
  "model_patch": "diff --git a/leap.go b/leap.go\\n",
  "eval_result": "unresolved",
  "success": false,
  "language": "go",
  "reason": "tests_failed",
  "detail": "1 failed, 0 errored of 5",
  "kept_paths": ["leap.go"],
  "tamper": [{"path": "leap_test.go", "why": "test_file"}],
  "tests": {"total": 5, "passed": 4, "failed": 1, "errored": 0, "skipped": 0},
  "seconds": {"agent": 12.5, "grading": 3.25, "tests": 2, "total": 16.0},
  "a_key_from_some_other_version": 1
}"""


def test_bucket_strings_are_stable():
    assert {bucket.name: bucket.value for bucket in Bucket} == BUCKET_STRINGS
    assert BUCKETS == tuple(Bucket)
    assert FINISHED_BUCKETS == ("resolved", "unresolved", "empty_patch")


def test_reason_strings_are_stable():
    assert {reason.name: reason.value for reason in Reason} == REASON_STRINGS


def test_every_member_is_named_after_its_string():
    for member in [*Bucket, *Reason]:
        assert member.name == member.value.upper()


def test_resolved_bucket_and_resolved_reason_have_distinct_names():
    assert Bucket.RESOLVED == "resolved" and Reason.TESTS_PASSED == "tests_passed"
    assert "RESOLVED" not in Reason.__members__


def test_members_are_written_as_plain_strings():
    text = json.dumps({Bucket.EMPTY_PATCH: [Reason.EMPTY_PATCH, Bucket.ERROR]})
    assert text == '{"empty_patch": ["empty_patch", "error"]}'
    assert f"{Reason.TEST_TIMEOUT}" == str(Reason.TEST_TIMEOUT) == "test_timeout"


def typed_result() -> InstanceResult:
    return InstanceResult(
        instance_id="python__pig", model_name_or_path="run", eval_result=Bucket.RESOLVED, success=True,
        language="python", reason=Reason.TESTS_PASSED,
        tamper=[TamperRecord("pig_test.py", "test_file"), TamperRecord("conftest.py", "new_file")],
        suspicious=[SuspiciousLine("pig.py", "early_exit", "sys.exit(0)")],
        seconds=PhaseSeconds(agent=1.5, grading=2.0, tests=1.25, total=4.0))


def test_result_json_keeps_the_shapes_of_tamper_suspicious_and_seconds():
    data = json.loads(typed_result().to_json())
    assert data["eval_result"] == "resolved" and data["reason"] == "tests_passed"
    assert data["tamper"] == [{"path": "pig_test.py", "why": "test_file"}, {"path": "conftest.py", "why": "new_file"}]
    assert data["suspicious"] == [{"path": "pig.py", "kind": "early_exit", "line": "sys.exit(0)"}]
    assert data["seconds"] == {"agent": 1.5, "grading": 2.0, "tests": 1.25, "total": 4.0}
    single_attempt = [name for name in InstanceResult.__dataclass_fields__ if name != "attempt_results"]
    assert list(data) == single_attempt, "every field in order; attempt_results only with attempts"


def test_result_json_round_trips():
    result = typed_result()
    loaded = InstanceResult.from_dict(json.loads(result.to_json()))
    assert loaded == result
    assert loaded.to_json() == result.to_json()
    assert type(loaded.eval_result) is Bucket and type(loaded.reason) is Reason
    assert type(loaded.grading_mode) is GradingMode


def test_seconds_leaves_out_the_phases_that_did_not_run():
    assert PhaseSeconds(total=0.5).to_dict() == {"total": 0.5}
    assert list(PhaseSeconds(total=3.0, agent=1.0, tests=2.0).to_dict()) == ["agent", "tests", "total"]
    assert json.loads(InstanceResult(instance_id="x", model_name_or_path="run").to_json())["seconds"] == {}


def test_old_result_file_loads_typed_and_writes_back_the_same_values():
    result = InstanceResult.from_dict(json.loads(OLD_RESULT_FILE))
    assert (result.eval_result, result.reason) == (Bucket.UNRESOLVED, Reason.TESTS_FAILED)
    assert result.tamper == [TamperRecord("leap_test.go", "test_file")]
    assert result.suspicious == [] and result.canaries == [] and result.stub_passes is None
    assert result.seconds == PhaseSeconds(agent=12.5, grading=3.25, tests=2, total=16.0)
    written = json.loads(result.to_json())
    old = json.loads(OLD_RESULT_FILE)
    assert {key: written[key] for key in old if key in written} == {key: value for key, value in old.items()
                                                                      if key != "a_key_from_some_other_version"}


def test_strings_outside_the_vocabulary_are_kept_as_they_are():
    result = InstanceResult.from_dict({"instance_id": "x", "model_name_or_path": "m",
                                       "eval_result": "skipped_by_someone", "reason": "their_reason"})
    assert (result.eval_result, result.reason) == ("skipped_by_someone", "their_reason")
    assert json.loads(result.to_json())["eval_result"] == "skipped_by_someone"


def test_malformed_typed_fields_load_as_empty_rather_than_failing():
    result = InstanceResult.from_dict({"instance_id": "x", "model_name_or_path": "m", "eval_result": "error",
                                       "tamper": [{"path": "a.py"}, "not an object"], "suspicious": "nope",
                                       "seconds": {"agent": "slow", "total": 2.5, "queueing": 1.0}})
    assert result.tamper == [TamperRecord("a.py", "")]
    assert result.suspicious == []
    assert result.seconds == PhaseSeconds(total=2.5)


def test_run_dir_loader_reads_results_only(tmp_path: Path):
    (tmp_path / "go__leap.json").write_text(OLD_RESULT_FILE)
    (tmp_path / "python__pig.json").write_text(typed_result().to_json())
    (tmp_path / "run_settings.json").write_text('{"agent": "oracle"}')
    (tmp_path / "broken.json").write_text("{not json")
    (tmp_path / "odd.json").write_text('{"instance_id": 7, "eval_result": "resolved"}')
    results = load_instance_results(tmp_path)
    assert list(results) == ["go__leap", "python__pig"]
    assert results["python__pig"] == typed_result()
    assert load_instance_results(tmp_path / "missing") == {}


def test_grading_modes_are_the_strings_datasets_and_results_hold():
    assert {mode.name: str(mode) for mode in GradingMode} == {"TESTS": "tests", "BUILD_ONLY": "build_only"}
    result = InstanceResult.from_dict({"instance_id": "x", "model_name_or_path": "m", "eval_result": "resolved",
                                       "grading_mode": "build_only"})
    assert result.grading_mode is GradingMode.BUILD_ONLY
    assert json.loads(result.to_json())["grading_mode"] == "build_only"

