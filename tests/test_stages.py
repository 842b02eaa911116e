"""Staged evaluation (--stages small:0.4,medium): the parsing and the stage decision as pure
functions, bad settings refused in one line before anything starts, and the whole staged flow
over the in-process fake backend with a scripted run_instance (no agent, no grading)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from polyglot_harness.utils.run import execute as execute_module
from polyglot_harness.utils.run import plan as plan_module
from polyglot_harness.utils.run import HarnessError, harness
from .test_harness_plan import fake_backend, plain_dataset  # noqa: F401 - fixtures
from polyglot_harness.utils.outcomes import Bucket, Reason
from polyglot_harness.utils.records.results import InstanceResult
from polyglot_harness.utils.records.run_dir import write_atomic
from polyglot_harness.utils.run.stages import Stage, StageError, check_stages, ended_because, judge_stage, parse_stages

PROJECT_ROOT = Path(__file__).resolve().parent.parent


# --- parsing and checking -----------------------------------------------------------------------

def test_stages_parse_subsets_and_optional_thresholds():
    assert parse_stages("small:0.4,medium") == (Stage("small", 0.4), Stage("medium"))
    assert parse_stages(" small : 1 , medium:0 ") == (Stage("small", 1.0), Stage("medium", 0.0))


@pytest.mark.parametrize("text, says", [
    ("small:abc", "must be a number in [0, 1], got 'abc'"), ("small:1.5", "got 1.5"), ("small:-0.1", "got -0.1"),
    ("small:nan", "got nan"), ("", "at least one stage"), (" , ", "at least one stage"),
    (":0.4", "needs a subset name"), ("small,,medium", "needs a subset name"),
])
def test_bad_stages_syntax_is_one_clear_error(text, says):
    with pytest.raises(StageError, match=None) as caught:
        parse_stages(text)
    assert says in str(caught.value) and "\n" not in str(caught.value)


def test_stage_checks_name_unknown_and_repeated_subsets():
    with pytest.raises(StageError, match="unknown subset 'tiny'; available: medium, small"):
        check_stages((Stage("small"), Stage("tiny")), ["medium", "small"])
    with pytest.raises(StageError, match="named twice: small"):
        check_stages((Stage("small", 0.2), Stage("small")), ["small"])
    with pytest.raises(StageError, match="at least one stage"):
        check_stages((), ["small"])
    with pytest.raises(StageError, match="threshold"):
        Stage("small", True)  # type: ignore[arg-type]


# --- the stage decision -------------------------------------------------------------------------

def test_accuracy_equal_to_the_threshold_passes_exactly():
    assert judge_stage(Stage("small", 0.4), 10, 4).passed
    assert judge_stage(Stage("small", 0.7), 10, 7).passed  # 7/10 in floats is not above 0.7
    assert not judge_stage(Stage("small", 0.4), 10, 3).passed
    assert judge_stage(Stage("small"), 10, 0).passed, "no threshold: always go on"


def test_stage_result_is_what_the_report_shows():
    result = judge_stage(Stage("small", 0.4), 10, 3)
    assert result.to_json() == {"subset": "small", "threshold": 0.4, "instances": 10, "resolved": 3,
                                "accuracy": 0.3, "passed": False}


def test_why_the_run_ends_after_a_stage():
    failed = judge_stage(Stage("small", 0.4), 10, 3)
    assert ended_because(failed, last=False, interrupted=False) == "accuracy 0.30 < 0.40"
    passed = judge_stage(Stage("small", 0.4), 10, 4)
    assert ended_because(passed, last=False, interrupted=False) is None
    assert ended_because(passed, last=True, interrupted=False) == "all stages run"
    assert ended_because(passed, last=False, interrupted=True) == "interrupted"
    near = judge_stage(Stage("small", 0.4), 1000, 399)
    assert ended_because(near, last=False, interrupted=False) == "accuracy 0.399 < 0.40"


# --- refused before anything starts -------------------------------------------------------------

@pytest.mark.parametrize("settings, says", [
    ({"subset": "small"}, "--stages cannot be combined with --subset"),
    ({"instance_ids": ["python__running-total"]}, "with --instance_ids"),
    ({"num_samples": 3}, "with --num_samples"),
    ({"predictions": "preds.jsonl"}, "with --predictions"),
    ({"stages": "small:abc"}, "must be a number"),
    ({"stages": "small:1.5"}, "must be a number"),
    ({"stages": "nosuch:0.5,medium"}, "unknown subset 'nosuch'"),
    ({"stages": ""}, "at least one stage"),
    ({"stages": []}, "at least one stage"),
    ({"stages": ["small"]}, "list of Stage"),
])
def test_bad_staged_settings_are_refused_before_anything_runs(settings, says, tmp_path):
    settings = {"stages": "small:0.4,medium", **settings}
    with pytest.raises(HarnessError) as caught:
        harness(dataset=tmp_path / "no-dataset", output_dir=tmp_path / "runs", agent="oracle", progress=False,
                **settings)
    assert says in str(caught.value)
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("arguments, says", [
    (["--stages", "small:0.4,medium", "--subset", "small"], "--subset"),
    (["--stages", "small:0.4", "--instance_ids", "python__running-total"], "--instance_ids"),
    (["--stages", "small:0.4,medium", "--num_samples", "2"], "--num_samples"),
    (["--stages", "small:abc"], "must be a number"),
    (["--stages", ""], "at least one stage"),
])
def test_cli_refuses_bad_stages_in_one_line_and_exits_2(arguments, says, tmp_path):
    completed = subprocess.run([sys.executable, "harness.py", "--agent", "oracle", "--output_dir", str(tmp_path),
                                *arguments], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60)
    assert completed.returncode == 2
    assert completed.stderr.count("\n") == 1 and says in completed.stderr, completed.stderr
    assert not any(tmp_path.iterdir())


# --- the staged flow over the fake backend ------------------------------------------------------

STAGE_A = ["python__running-total", "go__word-tally"]
STAGE_B = ["rust__checked-sum", "cpp__digit-sum"]
# go__word-tally ends in `error`: a resume would run it again, a later stage must not.
VERDICTS = {"python__running-total": Bucket.RESOLVED, "go__word-tally": Bucket.ERROR,
            "rust__checked-sum": Bucket.RESOLVED, "cpp__digit-sum": Bucket.UNRESOLVED}


@pytest.fixture
def scripted(monkeypatch, tmp_path) -> list[str]:
    """Subsets stage_a and stage_b (in a subsets dir of the test's own), and run_instance
    replaced by one that writes VERDICTS' result; returns the ids run, in order."""
    subsets = tmp_path / "subsets"
    subsets.mkdir()
    (subsets / "stage_a.json").write_text(json.dumps(STAGE_A))
    (subsets / "stage_b.json").write_text(json.dumps(STAGE_B))
    monkeypatch.setattr(plan_module, "SUBSETS_DIR", subsets)
    ran: list[str] = []

    def run_scripted(sandboxes, job, stop, after_agent=lambda: None) -> InstanceResult:
        instance_id = job.instance.instance_id
        ran.append(instance_id)
        bucket = VERDICTS[instance_id]
        result = InstanceResult(instance_id=instance_id, model_name_or_path=job.model_name_or_path,
                                eval_result=bucket, success=bucket == Bucket.RESOLVED,
                                language=job.instance.language, agent=job.agent.name,
                                reason=Reason.TESTS_PASSED if bucket == Bucket.RESOLVED else Reason.TESTS_FAILED)
        write_atomic(job.output_dir / f"{instance_id}.json", result.to_json())
        return result

    monkeypatch.setattr(execute_module, "run_instance", run_scripted)
    return ran


def run_staged(dataset: Path, output_dir: Path, stages: str):
    return harness(dataset=dataset, output_dir=output_dir, stages=stages, agent="null", model_name_or_path="staged",
                   progress=False, backend="fake", max_workers=2)


def test_next_stage_runs_when_the_threshold_is_met_without_rerunning_earlier_instances(
        plain_dataset, tmp_path, fake_backend, scripted):
    output = tmp_path / "runs"
    outcome = run_staged(plain_dataset, output, "stage_a:0.5,stage_b")
    assert sorted(scripted) == sorted(STAGE_A + STAGE_B), "every instance ran exactly once"
    assert sorted(path.name for path in output.iterdir()) == ["staged_0", "staged_0.0.json"], "one run directory"
    report = json.loads(outcome.report_path.read_text())
    assert report["stages"] == [
        {"subset": "stage_a", "threshold": 0.5, "instances": 2, "resolved": 1, "accuracy": 0.5, "passed": True},
        {"subset": "stage_b", "threshold": None, "instances": 4, "resolved": 2, "accuracy": 0.5, "passed": True}]
    assert (report["ended_at_stage"], report["ended_because"]) == ("stage_b", "all stages run")
    assert report["total_instances"] == 4 and report["resolved_ids"] == sorted(["python__running-total",
                                                                                 "rust__checked-sum"])
    assert report["error_ids"] == ["go__word-tally"]
    assert outcome.report == report and outcome.ended_at_stage == "stage_b" and len(outcome.stages) == 2


def test_run_ends_at_the_stage_below_its_threshold(plain_dataset, tmp_path, fake_backend, scripted):
    outcome = run_staged(plain_dataset, tmp_path / "runs", "stage_a:0.6,stage_b")
    assert sorted(scripted) == sorted(STAGE_A), "stage_b never ran"
    report = json.loads(outcome.report_path.read_text())
    assert [stage["subset"] for stage in report["stages"]] == ["stage_a"]
    assert report["stages"][0]["passed"] is False
    assert (report["ended_at_stage"], report["ended_because"]) == ("stage_a", "accuracy 0.50 < 0.60")
    assert (outcome.ended_at_stage, outcome.ended_because) == ("stage_a", "accuracy 0.50 < 0.60")
    assert report["total_instances"] == 2 and not set(STAGE_B) & set(report["unfinished_ids"])


def test_plain_run_report_has_no_stage_keys(plain_dataset, tmp_path, fake_backend, scripted):
    outcome = harness(dataset=plain_dataset, output_dir=tmp_path / "runs", subset="stage_a", agent="null",
                      model_name_or_path="plain", progress=False, backend="fake", max_workers=2)
    assert "stages" not in outcome.report and outcome.stages == () and outcome.ended_because is None
