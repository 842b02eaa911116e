"""`--attempts K` (HyperAgents' `num_evals`): K independent attempts per instance, each graded on
its own; the per-instance counts, pass@k, pass^k and the interval in the report; accuracy_score as
the mean over attempts; resume that keeps finished attempts; costs and stages over attempts.

The end-to-end tests run real Docker on the bundled samples with
tests/fixtures/agents/alternating, an agent that reads POLYGLOT_ATTEMPT and writes the reference
solution on odd attempts and a wrong one on even attempts (per its plan).
"""

from __future__ import annotations

import json
import threading
import time
from fractions import Fraction
from pathlib import Path

import pytest

from polyglot_harness.utils.outcomes import Bucket, Reason
from polyglot_harness.utils.run.stages import Stage, judge_stage
from polyglot_harness.utils.records.estimators import Attempts
from polyglot_harness.utils.records.loaded_run import load_run_dir
from polyglot_harness.utils.records.results import (InstanceResult, PhaseSeconds, build_run_report,
                                                    combine_attempts)
from polyglot_harness.utils.records.run_dir import RunDirectory, RunSettings
from polyglot_harness.utils.run import execute as execute_module
from polyglot_harness.utils.run import plan as plan_module
from polyglot_harness.utils.pipeline.instance import RunCancelled
from polyglot_harness.utils.records.run_dir import write_atomic
from polyglot_harness.utils.run import HarnessError, harness
from polyglot_harness.utils.run.attempts import finished_attempts
from polyglot_harness.utils.run.settings import checked, run_config
from polyglot_harness.utils.views.compare import compare_runs, format_comparison
from polyglot_harness.utils.views.pricing import instance_cost, parse_price_table
from polyglot_harness.utils.views.report import attempt_lines
from polyglot_harness.utils.views.report import report as score_report

from .test_harness_plan import fake_backend, plain_dataset  # noqa: F401 - fixtures

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SAMPLES = PROJECT_ROOT / "samples"
ALTERNATING = PROJECT_ROOT / "tests" / "fixtures" / "agents" / "alternating"
PYTHON, GO = "python__running-total", "go__word-tally"
PYTHON_REFERENCE = (SAMPLES / "python" / "exercises" / "practice" / "running-total" / ".meta" / "example.py").read_text()
GO_REFERENCE = (SAMPLES / "go" / "exercises" / "practice" / "word-tally" / ".meta" / "example.go").read_text()
PYTHON_WRONG = "def running_total(numbers):\n    return []\n\n\ndef first_over(numbers, threshold):\n    return -1\n"


def _attempt(instance_id: str, bucket: Bucket, number: int = 1) -> InstanceResult:
    return InstanceResult(instance_id=instance_id, model_name_or_path="run", eval_result=bucket, language=instance_id.split("__")[0],
                          success=bucket == Bucket.RESOLVED, model_patch=f"patch {number}",
                          agent_usage={"model": "m", "prompt_tokens": 100 * number, "completion_tokens": 10 * number,
                                       "total_tokens": 110 * number, "calls": 1},
                          seconds=PhaseSeconds(agent=1.0, total=2.0 * number),
                          reason=Reason.TESTS_PASSED if bucket == Bucket.RESOLVED else Reason.TESTS_FAILED)


def _instance(instance_id: str, outcomes: str) -> InstanceResult:
    """An instance with one attempt per letter of `outcomes` (r: resolved, u: unresolved)."""
    buckets = {"r": Bucket.RESOLVED, "u": Bucket.UNRESOLVED}
    return combine_attempts([_attempt(instance_id, buckets[letter], number)
                             for number, letter in enumerate(outcomes, 1)])


# --- the combined result and the report, without Docker ----------------------------------------

def test_combined_result_keeps_attempt_1_at_the_top_and_lists_every_attempt():
    combined = InstanceResult.from_dict(json.loads(_instance(PYTHON, "uru").to_json()))

    assert (combined.eval_result, combined.model_patch, combined.agent_usage["prompt_tokens"]) == (
        Bucket.UNRESOLVED, "patch 1", 100), "every reader of the top-level keys sees attempt 1"
    assert [(r.attempt, r.eval_result, r.model_patch) for r in combined.attempt_results] == [
        (1, "unresolved", "patch 1"), (2, "resolved", "patch 2"), (3, "unresolved", "patch 3")]
    assert combined.attempt_count == Attempts(1, 3)
    assert combined.usage_over_attempts["prompt_tokens"] == 600 and combined.usage_over_attempts["model"] == "m"
    assert combined.attempts == 1, "`attempts` still counts infrastructure retries"


def test_a_single_attempt_writes_the_result_file_as_before():
    single = _attempt(PYTHON, Bucket.RESOLVED)
    assert combine_attempts([single]).to_json() == single.to_json()
    assert "attempt_results" not in json.loads(single.to_json())


def test_report_counts_successes_and_gives_pass_at_k_pass_hat_k_by_hand():
    results = {r.instance_id: r for r in (_instance("python__a", "rur"), _instance("go__b", "uuu"),
                                          _instance("rust__c", "rrr"))}
    data = build_run_report("run", list(results), results).score_json()

    assert data["attempts_per_instance"] == 3
    assert data["successes_out_of_attempts"] == {"go__b": [0, 3], "python__a": [2, 3], "rust__c": [3, 3]}
    # pass@1 = mean rate (2/3 + 0 + 1) / 3; pass@2 = (1 + 0 + 1) / 3 (1 - C(1,2)/C(3,2) = 1 for 2 of 3);
    # pass^2 = (C(2,2)/C(3,2) + 0 + 1) / 3 = (1/3 + 1) / 3; pass^3 = (0 + 0 + 1) / 3.
    assert data["pass_at_k"] == {"1": round(5 / 9, 6), "2": round(2 / 3, 6), "3": round(2 / 3, 6)}
    assert data["pass_hat_k"] == {"1": round(5 / 9, 6), "2": round(4 / 9, 6), "3": round(1 / 3, 6)}
    assert data["accuracy_score"] == round(5 / 9, 6), "the mean over attempts, not attempt 1's 1/3"
    assert data["total_resolved_instances"] == 2, "the buckets stay attempt 1's (r, u, r)"
    interval = data["score_interval_95"]
    assert interval["low"] < interval["estimate"] == round(5 / 9, 6) < interval["high"]
    assert data["attempt_scores_per_language"]["python"]["pass_at_k"] == {"1": round(2 / 3, 6), "2": 1.0, "3": 1.0}
    assert data["agent_usage"]["prompt_tokens"] == 3 * 600, "usage adds up over attempts"


def test_one_attempt_adds_no_key_and_keeps_accuracy():
    results = {r.instance_id: r for r in (_attempt("python__a", Bucket.RESOLVED), _attempt("go__b", Bucket.UNRESOLVED))}
    data = build_run_report("run", [*results, "rust__c"], results).score_json()
    assert not {"attempts_per_instance", "pass_at_k", "score_interval_95"} & set(data)
    assert data["accuracy_score"] == round(1 / 3, 6)


def test_text_report_shows_the_estimators_and_the_success_histogram():
    results = {r.instance_id: r for r in (_instance("python__a", "rur"), _instance("go__b", "uuu"))}
    lines = attempt_lines(build_run_report("run", list(results), results).score_json())
    assert lines[0].startswith("attempts 3 per instance: pass@1 0.3333 (95% ")
    assert ", pass@3 0.5000" in lines[0] and ", pass^3 0.0000" in lines[0]
    assert lines[-1] == "instances by successes: 1 at 0/3, 1 at 2/3"


def test_the_console_shows_a_few_k_of_many_attempts_and_report_json_keeps_every_k():
    """--attempts 40 printed pass@2..pass@40 and pass^2..pass^40 on one line per language."""
    results = {"python__a": _instance("python__a", "ru" * 20)}
    scores = build_run_report("run", list(results), results).score_json()
    line = attempt_lines(scores)[0]
    shown = [part.split()[0] for part in line.split(", ")]
    assert shown == ["attempts", "pass@2", "pass@3", "pass@5", "pass@10", "pass@40",
                     "pass^2", "pass^3", "pass^5", "pass^10", "pass^40"], line
    assert len(scores["pass_at_k"]) == 40 and len(scores["pass_hat_k"]) == 40


def test_cost_adds_up_over_attempts():
    table = parse_price_table({"m": {"input": 1.0, "output": 10.0}})
    cost = instance_cost(_instance(PYTHON, "uru"), table)
    assert (cost.prompt_tokens, cost.completion_tokens) == (600, 60)
    assert cost.usd == pytest.approx((600 * 1.0 + 60 * 10.0) / 1e6)


def test_stage_threshold_is_on_the_mean_over_attempts():
    # 2 instances, 2 of 3 and 0 of 3 attempts: mean 1/3; attempt 1 alone would read 1/2.
    assert not judge_stage(Stage("small", 0.4), 2, Fraction(2, 3)).passed
    judged = judge_stage(Stage("small", 0.3), 2, Fraction(2, 3))
    assert judged.passed and (judged.resolved, judged.accuracy) == (round(2 / 3, 6), round(1 / 3, 6))
    assert judge_stage(Stage("small", 0.5), 2, 1).resolved == 1, "one attempt: a count, as before"


def test_compare_pairs_success_rates_and_says_how_many_instances_would_tell(tmp_path):
    runs = []
    for name, outcomes in (("a_0", {"python__a": "uuu", "go__b": "ruu", "rust__c": "uru"}),
                           ("b_0", {"python__a": "rrr", "go__b": "rrr", "rust__c": "rur"})):
        run_dir = RunDirectory(tmp_path / name)
        run_dir.path.mkdir()
        for instance_id, letters in outcomes.items():
            run_dir.instance(instance_id).result.write_text(_instance(instance_id, letters).to_json())
        runs.append(load_run_dir(run_dir.path))

    comparison = compare_runs(*runs)

    paired = comparison.to_json()["paired"]
    # rates A (0, 1/3, 1/3), B (1, 1, 2/3): differences 1, 2/3, 1/3 -> mean 2/3; all 8 sign
    # patterns enumerated, only the two all-same-sign ones reach |2| -> p = 2/8.
    assert (paired["instances"], paired["mean_difference"], paired["p_value"], paired["exact"]) == (
        3, round(2 / 3, 6), 0.25, True)
    # sd of the differences 1/3, mean 2/3: n = ((1.96 + 0.8416) * (1/3) / (2/3))^2 = 1.96 -> 2.
    assert paired["instances_needed"] == 2 and paired["attempts"] == {"a": 3, "b": 3}
    text = format_comparison(comparison)
    assert "mean difference +0.6667, exact sign-flip p = 0.25" in text
    assert "instances needed to tell a difference of +0.6667 from noise" in text and "about 2" in text
    assert "exact McNemar p" in text, "McNemar on the top-level verdicts is kept"


def test_resume_finds_attempt_1_at_the_top_and_later_attempts_in_their_folders(tmp_path):
    run_dir = RunDirectory(tmp_path / "run_0")
    run_dir.path.mkdir()
    run_dir.instance(PYTHON).result.write_text(_instance(PYTHON, "ur").to_json())  # a finished 2-attempt instance
    run_dir.attempt(PYTHON, 2).result.parent.mkdir()
    run_dir.attempt(PYTHON, 2).result.write_text(_attempt(PYTHON, Bucket.RESOLVED, 2).to_json())
    run_dir.instance(GO).result.write_text(_attempt(GO, Bucket.RESOLVED).to_json())  # attempt 2 interrupted
    errored = _attempt(GO, Bucket.ERROR, 3)
    run_dir.attempt(GO, 3).result.parent.mkdir()
    run_dir.attempt(GO, 3).result.write_text(errored.to_json())

    found = finished_attempts(run_dir, {PYTHON, GO}, 3)

    assert sorted(found[PYTHON]) == [1, 2] and sorted(found[GO]) == [1], "an error attempt runs again"
    assert found[PYTHON][1].attempt_results == [] and found[PYTHON][1].model_patch == "patch 1"


def test_num_evals_is_attempts_and_predictions_cannot_be_attempted_twice(tmp_path):
    assert run_config(checked({"num_evals": 3})).attempts == 3
    with pytest.raises(HarnessError, match="given twice"):
        checked({"num_evals": 3, "attempts": 2})
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("")
    with pytest.raises(HarnessError, match="--attempts 2 needs an agent"):
        harness(attempts=2, predictions=predictions, output_dir=tmp_path / "out", dataset=tmp_path)


# --- the run's flow over the in-process fake backend (scripted attempts, no agent, no grading) -----

@pytest.fixture
def scripted_attempts(monkeypatch, tmp_path) -> list[tuple[str, int, int]]:
    """Subsets stage_a (python, go) and stage_b (rust), and run_instance replaced by one that
    resolves python's odd attempts only and every attempt of the others, and records each
    (instance, attempt, tries) it ran, with how many attempts of that instance ran at once."""
    subsets = tmp_path / "subsets"
    subsets.mkdir()
    (subsets / "stage_a.json").write_text(json.dumps([PYTHON, GO]))
    (subsets / "stage_b.json").write_text(json.dumps(["rust__checked-sum"]))
    monkeypatch.setattr(plan_module, "SUBSETS_DIR", subsets)
    ran: list[tuple[str, int, int]] = []
    running: dict[str, int] = {}
    lock = threading.Lock()

    def run_scripted(sandboxes, job, stop, after_agent=lambda: None) -> InstanceResult:
        instance_id = job.instance.instance_id
        with lock:
            running[instance_id] = running.get(instance_id, 0) + 1
            ran.append((instance_id, job.attempt, job.tries, running[instance_id]))
        time.sleep(0.3)
        with lock:
            running[instance_id] -= 1
        resolved = instance_id != PYTHON or job.attempt % 2 == 1
        result = _attempt(instance_id, Bucket.RESOLVED if resolved else Bucket.UNRESOLVED, job.attempt)
        result.model_name_or_path = job.model_name_or_path
        write_atomic(RunDirectory(job.output_dir).attempt(instance_id, job.attempt).result, result.to_json())
        return result

    monkeypatch.setattr(execute_module, "run_instance", run_scripted)
    return ran


def _fake_run(dataset: Path, output_dir: Path, **settings):
    return harness(dataset=dataset, output_dir=output_dir, agent="null", model_name_or_path="fake", progress=False,
                   backend="fake", **settings)


def test_a_stage_threshold_is_on_the_mean_over_attempts(plain_dataset, tmp_path, fake_backend, scripted_attempts):
    # stage_a: python 2 of 3, go 3 of 3 -> mean 5/6 < 0.9 (attempt 1 alone: 2 of 2 would pass).
    outcome = _fake_run(plain_dataset, tmp_path / "runs", stages="stage_a:0.9,stage_b", attempts=3, tries=2,
                        max_workers=4)

    assert outcome.ended_because == "accuracy 0.83 < 0.90"
    assert outcome.report["stages"][0]["resolved"] == round(5 / 3, 6)
    assert sorted((i, a) for i, a, _, _ in scripted_attempts) == [(GO, 1), (GO, 2), (GO, 3),
                                                                  (PYTHON, 1), (PYTHON, 2), (PYTHON, 3)]
    assert {tries for _, _, tries, _ in scripted_attempts} == {2}, "each attempt is a two-try run"


@pytest.mark.parametrize("parallel", [1, 3])
def test_num_evals_parallel_bounds_the_attempts_of_one_instance_at_once(plain_dataset, tmp_path, fake_backend,
                                                                        scripted_attempts, parallel):
    _fake_run(plain_dataset, tmp_path / "runs", subset="stage_a", num_evals=3, num_evals_parallel=parallel,
              max_workers=6)
    at_once = max(count for _, _, _, count in scripted_attempts)
    assert at_once == 1 if parallel == 1 else at_once > 1


def test_a_stopped_run_keeps_its_finished_attempts_and_the_resume_runs_the_rest(
        plain_dataset, tmp_path, fake_backend, scripted_attempts, monkeypatch):
    stop_after = {"count": 0}
    real = execute_module.run_instance

    def stopping(sandboxes, job, stop, after_agent=lambda: None):
        stop_after["count"] += 1
        if stop_after["count"] > 3:  # the 4th attempt on: the run is stopping (Ctrl-C)
            stop.set()
            raise RunCancelled()
        return real(sandboxes, job, stop, after_agent)

    monkeypatch.setattr(execute_module, "run_instance", stopping)
    first = _fake_run(plain_dataset, tmp_path / "runs", subset="stage_a", attempts=3, max_workers=1)
    assert first.interrupted and len(scripted_attempts) == 3
    kept = list(scripted_attempts)
    monkeypatch.setattr(execute_module, "run_instance", real)

    second = _fake_run(plain_dataset, tmp_path / "runs", subset="stage_a", attempts=3, max_workers=2)

    rerun = scripted_attempts[len(kept):]
    assert sorted((i, a) for i, a, _, _ in kept + rerun) == [(GO, 1), (GO, 2), (GO, 3), (PYTHON, 1), (PYTHON, 2),
                                                             (PYTHON, 3)], "every attempt ran exactly once"
    assert second.report["successes_out_of_attempts"] == {GO: [3, 3], PYTHON: [2, 3]}


# --- end to end (real Docker, the bundled samples) ------------------------------------------------

PLAN = {PYTHON: {"odd": {"running_total.py": PYTHON_REFERENCE}, "even": {"running_total.py": PYTHON_WRONG}},
        GO: {"odd": {"word_tally.go": GO_REFERENCE}, "even": {"word_tally.go": GO_REFERENCE}}}


def _run(dataset: Path, output_dir: Path, token: str, monkeypatch, **settings):
    monkeypatch.setenv("TEST_AGENT_PLAN", json.dumps(PLAN))
    monkeypatch.setenv("TEST_RUN_TOKEN", token)
    settings.setdefault("model_name_or_path", "attempts")
    return harness(dataset=dataset, output_dir=output_dir, progress=False, agent=str(ALTERNATING),
                   pass_env=["TEST_AGENT_PLAN", "TEST_RUN_TOKEN"], **settings)


def _attempts_seen(run_dir: Path) -> str:
    """Every attempt's verdict, reason and detail in `run_dir`: what a failed count assertion
    prints, so a failure in CI says which attempt went wrong and why."""
    lines = []
    for path in sorted(run_dir.glob("*.json")):
        result = json.loads(path.read_text())
        for record in result.get("attempt_results") or []:
            lines.append(f"{path.stem} attempt {record['attempt']}: {record['eval_result']} {record['reason']} "
                         f"{record['detail']!r} error={record['error']!r} failed={record['failed_tests']}")
    return "\n".join(lines)


def _tokens(run_dir: Path, instance_id: str) -> list[str]:
    result = json.loads((run_dir / f"{instance_id}.json").read_text())
    return [record["agent_usage"]["run_token"] for record in result["attempt_results"]]


@pytest.mark.docker
def test_alternating_agent_gives_exact_counts_and_estimators(sample_dataset, tmp_path, monkeypatch,
                                                             no_leftover_containers):
    outcome = _run(sample_dataset, tmp_path, "A", monkeypatch, attempts=3, instance_ids=[PYTHON, GO], max_workers=3)

    python = json.loads((outcome.run_dir / f"{PYTHON}.json").read_text())
    assert [(r["attempt"], r["eval_result"]) for r in python["attempt_results"]] == [
        (1, "resolved"), (2, "unresolved"), (3, "resolved")]
    assert [r["agent_usage"]["attempt"] for r in python["attempt_results"]] == [1, 2, 3], "POLYGLOT_ATTEMPT"
    assert python["eval_result"] == "resolved" and "attempt_results" in python
    canaries = [tuple(r["canaries"]) for r in python["attempt_results"]]
    assert all(canaries) and len(set(canaries)) == 3, "each attempt graded with its own fresh canaries"
    for number in (2, 3):  # each attempt's own result and transcript, in its folder
        own = json.loads((outcome.run_dir / f"attempt{number}" / f"{PYTHON}.json").read_text())
        assert own["eval_result"] == python["attempt_results"][number - 1]["eval_result"]
        assert (outcome.run_dir / f"attempt{number}" / f"{PYTHON}.md").read_text() == f"# {PYTHON}: attempt {number}\n"
    report = outcome.report
    assert report["successes_out_of_attempts"] == {GO: [3, 3], PYTHON: [2, 3]}, _attempts_seen(outcome.run_dir)
    assert score_report(tmp_path)["accuracy_score"] == report["pass_at_k"]["1"] == round(5 / 6, 6)
    assert report["pass_at_k"] == {"1": round(5 / 6, 6), "2": 1.0, "3": 1.0}
    assert report["pass_hat_k"] == {"1": round(5 / 6, 6), "2": round(2 / 3, 6), "3": 0.5}
    assert report["resolved_instances"] == 2, "the buckets are attempt 1's"
    low, high = report["score_interval_95"]["low"], report["score_interval_95"]["high"]
    assert low < 5 / 6 <= high <= 1.0
    assert RunDirectory(outcome.run_dir).read_settings().attempts == 3


@pytest.mark.docker
def test_resume_after_an_interrupted_attempt_runs_only_the_missing_ones_and_more_attempts_add(
        sample_dataset, tmp_path, monkeypatch, no_leftover_containers):
    first = _run(sample_dataset, tmp_path, "A", monkeypatch, attempts=2, instance_ids=[PYTHON, GO], max_workers=2)
    run_dir = first.run_dir
    # What a run stopped during python's attempt 2 leaves: attempt 1's own result at the top,
    # no result for attempt 2 (a cancelled attempt writes none).
    combined = InstanceResult.from_dict(json.loads((run_dir / f"{PYTHON}.json").read_text()))
    (run_dir / f"{PYTHON}.json").write_text(combined.without_attempts().to_json())
    (run_dir / "attempt2" / f"{PYTHON}.json").unlink()

    second = _run(sample_dataset, tmp_path, "B", monkeypatch, attempts=3, instance_ids=[PYTHON, GO], max_workers=2)

    assert _tokens(run_dir, PYTHON) == ["A", "B", "B"], "attempt 1 kept, the interrupted attempt 2 and attempt 3 run"
    assert _tokens(run_dir, GO) == ["A", "A", "B"], "raising --attempts adds attempts, keeps the others"
    assert second.report["successes_out_of_attempts"] == {GO: [3, 3], PYTHON: [2, 3]}, _attempts_seen(run_dir)
    with pytest.raises(HarnessError, match="attempts differ"):
        _run(sample_dataset, tmp_path, "C", monkeypatch, attempts=2, instance_ids=[PYTHON, GO])


@pytest.mark.docker
def test_hyperagents_num_evals_gives_the_same_counts(sample_dataset, tmp_path, monkeypatch, no_leftover_containers):
    monkeypatch.setenv("TEST_AGENT_PLAN", json.dumps(PLAN))
    monkeypatch.setenv("TEST_RUN_TOKEN", "H")
    # HyperAgents' run_harness_polyglot keywords, with num_evals above 1.
    outcome = harness(test_task_list=[PYTHON], num_samples=-1, max_workers=3, model_name_or_path="eval_run",
                      model_patch_paths=[], num_evals=3, num_evals_parallel=3, pred_dname=tmp_path / "preds",
                      output_dir=tmp_path / "out", dataset_path=sample_dataset / "polyglot_benchmark_metadata.json",
                      agent=str(ALTERNATING), pass_env=["TEST_AGENT_PLAN", "TEST_RUN_TOKEN"], progress=False)

    report = json.loads((tmp_path / "out" / "eval_run_0.0.json").read_text())
    assert report["successes_out_of_attempts"] == {PYTHON: [2, 3]}, _attempts_seen(outcome.run_dir)
    assert report["pass_at_k"]["1"] == round(2 / 3, 6) and report["pass_hat_k"]["3"] == 0.0
    assert score_report(tmp_path / "preds", "eval_run", 1)["accuracy_score"] == round(2 / 3, 6)
    assert outcome.run_dir == tmp_path / "preds" / "eval_run_0"
    assert RunSettings.from_json(json.loads((outcome.run_dir / "run_settings.json").read_text())).attempts == 3


def test_run_page_shows_the_estimators_the_successes_and_each_attempt(tmp_path):
    from .headless_chromium import chromium_path, dump_dom
    from .test_html_report import RenderedDom
    from polyglot_harness.utils.records.loaded_run import load_output_dir
    from polyglot_harness.utils.views.html import run_page, write_page

    if chromium_path() is None:
        pytest.skip("chromium is not installed (run tests/ensure_chromium.sh)")
    run_dir = RunDirectory(tmp_path / "runs" / "gen_0")
    run_dir.path.mkdir(parents=True)
    for result in (_instance("python__a", "rur"), _instance("go__b", "uuu")):
        run_dir.instance(result.instance_id).result.write_text(result.to_json())
    page = tmp_path / "run.html"
    write_page(page, run_page(load_output_dir(tmp_path / "runs"), None))

    text = RenderedDom(dump_dom(page, "open=python__a")).text

    assert "33.3% accuracy" in text and "33.3% (0.2%–96.0%)" in text and "pass@1 (95% interval)" in text
    assert "50.0% pass@3" in text and "0.0% pass^3" in text
    assert "instances by successes: 1 at 0/3, 1 at 2/3" in text
    assert "Attempts (2 of 3 resolved" in text and "attempt 2: patch" in text
    assert "python__a python resolved tests_passed – 2/3" in text, "the successes column"


def test_report_cli_prints_the_estimators_and_compare_page_shows_the_paired_test(tmp_path):
    import subprocess
    import sys

    from .headless_chromium import chromium_path, dump_dom
    from .test_html_report import RenderedDom

    for name, outcomes in (("a_0", {"python__a": "uuu", "go__b": "ruu", "rust__c": "uru"}),
                           ("b_0", {"python__a": "rrr", "go__b": "rrr", "rust__c": "rur"})):
        run_dir = RunDirectory(tmp_path / "runs" / name)
        run_dir.path.mkdir(parents=True)
        for instance_id, letters in outcomes.items():
            run_dir.instance(instance_id).result.write_text(_instance(instance_id, letters).to_json())
    cli = lambda *arguments: subprocess.run([sys.executable, "report.py", *arguments], cwd=PROJECT_ROOT,  # noqa: E731
                                            capture_output=True, text=True, timeout=120)

    scored = cli("--output_dir", str(tmp_path / "runs"), "--model_name_or_path", "b")
    assert scored.returncode == 0, scored.stderr
    assert "accuracy_score 0.8889 (3/3)" in scored.stdout and "attempts 3 per instance: pass@1 0.8889" in scored.stdout
    assert "instances by successes: 1 at 2/3, 2 at 3/3" in scored.stdout
    page = tmp_path / "compare.html"
    compared = cli("--compare", str(tmp_path / "runs" / "a_0"), str(tmp_path / "runs" / "b_0"), "--html", str(page))
    assert compared.returncode == 0, compared.stderr
    assert "exact sign-flip p = 0.25" in compared.stdout and "exact McNemar p" in compared.stdout
    if chromium_path() is None:
        pytest.skip("chromium is not installed (run tests/ensure_chromium.sh)")
    text = RenderedDom(dump_dom(page)).text
    assert "0.2500 paired p (success rates)" in text and "+66.7 pts mean rate difference" in text
    assert "2 instances needed" in text
