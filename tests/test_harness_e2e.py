"""The harness end to end: real Docker, real images, real git, on the bundled samples.

Each test runs `harness(...)` (or the CLI, where the CLI is what is tested) with the oracle,
the null agent or one of the small test agents under tests/fixtures/agents/, and checks what
a user would: buckets, result files, the run report, containers left, images built.
Most tests use one or two fast instances (python, go); only the oracle test runs all eight.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from polyglot_harness.utils.backends.docker import images as docker_images
from polyglot_harness.utils.run import HarnessError, RunOutcome, harness
from polyglot_harness.utils.agents.prepare import prepare_agent
from polyglot_harness.utils.backends.docker.provider import LABEL_PID, LABEL_ROLE

pytestmark = pytest.mark.docker

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SAMPLES = PROJECT_ROOT / "samples"
AGENTS = PROJECT_ROOT / "tests" / "fixtures" / "agents"
WRITER = AGENTS / "writer"
PYTHON = "python__running-total"
GO = "go__word-tally"
JAVA = "java__vowel-count"

# Tests each sample's test files hold (go: the parent test + one subtest per case).
EXPECTED_TEST_COUNTS = {
    "python__running-total": 6,
    "go__word-tally": 7,
    "rust__checked-sum": 6,
    "javascript__clamp-list": 6,
    "javascript__roman-lite": 7,
    "java__stack-calc": 7,
    "java__vowel-count": 6,
    "cpp__digit-sum": 7,
}
REPORT_KEYS = {
    "total_instances", "submitted_instances", "completed_instances", "resolved_instances",
    "unresolved_instances", "empty_patch_instances", "error_instances", "completed_ids", "resolved_ids",
    "unresolved_ids", "empty_patch_ids", "error_ids", "incomplete_ids", "unfinished_ids",
}
RESULT_KEYS = {
    "instance_id", "model_name_or_path", "model_patch", "eval_result", "success", "language", "reason",
    "agent", "agent_hash", "agent_exit_code", "agent_timed_out", "agent_usage", "patch_source", "tamper",
    "tests", "test_names", "seconds",
}
INSTANCE_FILES = ("{id}.json", "{id}_docker.log", "{id}_eval.sh", "{id}_eval.md", "{id}.md")


# --- helpers ----------------------------------------------------------------------------------

def run(dataset: Path, output_dir: Path, **settings) -> RunOutcome:
    settings.setdefault("model_name_or_path", "e2e")
    settings.setdefault("max_workers", 2)
    return harness(dataset=dataset, output_dir=output_dir, progress=False, **settings)


@dataclass(frozen=True)
class CliRun:
    pid: int  # the harness process: its containers carry it as a label
    returncode: int
    stdout: str
    stderr: str


def start_cli(*arguments: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "harness.py", "--no_progress", *arguments], cwd=PROJECT_ROOT,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run_cli(*arguments: str, timeout: float = 300) -> CliRun:
    process = start_cli(*arguments)
    stdout, stderr = process.communicate(timeout=timeout)
    return CliRun(process.pid, process.returncode, stdout, stderr)


def read_result(run_dir: Path, instance_id: str) -> dict:
    return json.loads((run_dir / f"{instance_id}.json").read_text())


def result_file(outcome: RunOutcome, instance_id: str) -> dict:
    return read_result(outcome.run_dir, instance_id)


PYTHON_REFERENCE = SAMPLES / "python" / "exercises" / "practice" / "running-total" / ".meta" / "example.py"
PYTHON_SOLUTION = {"running_total.py": PYTHON_REFERENCE.read_text()}


def writer_plan(monkeypatch, plan: dict) -> list[str]:
    """Hand the writer agent its plan through the environment; returns the pass_env list."""
    monkeypatch.setenv("TEST_AGENT_PLAN", json.dumps(plan))
    return ["TEST_AGENT_PLAN"]


def static_test_count(instance_id: str) -> int:
    """Count the tests in a sample's hidden test files, independently of any runner."""
    language, slug = instance_id.split("__")
    exercise = SAMPLES / language / "exercises" / "practice" / slug
    patterns = {"python": (r"^\s*def test_", "*_test.py"), "rust": (r"#\[test\]", "tests/*.rs"),
                "javascript": (r"^\s*x?(test|it)\(", "*.spec.js"), "java": (r"@Test\b", "src/test/**/*.java"),
                "cpp": (r"TEST_CASE\(", "*_test.cpp"), "go": (r"^func Test", "*_test.go")}
    pattern, glob = patterns[language]
    count = sum(len(re.findall(pattern, path.read_text(), re.M)) for path in exercise.glob(glob))
    if language == "go":  # one subtest per case
        count += len(re.findall(r"description:", (exercise / "cases_test.go").read_text()))
    return count


def containers_of_process(client, pid: int) -> list:
    return client.containers.list(all=True, filters={"label": f"{LABEL_PID}={pid}"}, ignore_removed=True)


def containers_created_by(client, pid: int, since: float) -> list[dict]:
    """`create` events since `since` of containers labelled with harness process `pid`."""
    events = client.events(since=int(since) - 1, until=int(time.time()) + 1, decode=True,
                           filters={"type": "container", "event": "create", "label": [f"{LABEL_PID}={pid}"]})
    return list(events)


def lineage_patch(original: str, changed: str, name: str = "run_task_agent.py") -> str:
    lines = difflib.unified_diff(original.splitlines(keepends=True), changed.splitlines(keepends=True),
                                 fromfile=f"a/{name}", tofile=f"b/{name}")
    return f"diff --git a/{name} b/{name}\n" + "".join(lines)


class BuildSpy:
    """Records every image build (tag, log path, seconds) while still building."""

    def __init__(self, monkeypatch) -> None:
        self.builds: list[tuple[str, Path, float]] = []
        self._real = docker_images._build
        monkeypatch.setattr(docker_images, "_build", self)

    def __call__(self, tag, context, buildargs, labels, log_path) -> None:
        started = time.monotonic()
        self._real(tag, context, buildargs, labels, log_path)
        self.builds.append((tag, Path(log_path), time.monotonic() - started))

    def tags(self) -> list[str]:
        return [tag for tag, _, _ in self.builds]


# --- tests --------------------------------------------------------------------------------------

def test_oracle_resolves_every_sample_with_every_test(sample_dataset, tmp_path, no_leftover_containers):
    assert {instance_id: static_test_count(instance_id) for instance_id in EXPECTED_TEST_COUNTS} \
        == EXPECTED_TEST_COUNTS

    outcome = run(sample_dataset, tmp_path, agent="oracle", model_name_or_path="oracle", max_workers=3)

    assert outcome.report_path == tmp_path / "oracle_0.0.json"
    report = json.loads(outcome.report_path.read_text())
    assert REPORT_KEYS <= set(report)
    assert report["total_instances"] == report["submitted_instances"] == report["completed_instances"] == 8
    assert report["resolved_instances"] == 8
    assert report["unresolved_instances"] == report["empty_patch_instances"] == report["error_instances"] == 0
    assert report["resolved_ids"] == sorted(EXPECTED_TEST_COUNTS)
    assert report["incomplete_ids"] == report["error_ids"] == report["unfinished_ids"] == []
    for instance_id, test_count in EXPECTED_TEST_COUNTS.items():
        result = result_file(outcome, instance_id)
        assert RESULT_KEYS <= set(result), instance_id
        assert result["instance_id"] == instance_id and result["model_name_or_path"] == "oracle"
        assert (result["eval_result"], result["success"]) == ("resolved", True), (instance_id, result["detail"])
        assert result["tests"]["total"] == result["tests"]["passed"] == test_count, (instance_id, result["tests"])
        assert result["tamper"] == [] and result["model_patch"].startswith("diff --git")
        for pattern in INSTANCE_FILES:
            assert (outcome.run_dir / pattern.format(id=instance_id)).is_file(), pattern.format(id=instance_id)
        assert "grading" in (outcome.run_dir / f"{instance_id}_docker.log").read_text()


def test_null_agent_leaves_every_instance_empty_patch(sample_dataset, tmp_path, no_leftover_containers):
    selected = [PYTHON, JAVA, "cpp__digit-sum"]

    outcome = run(sample_dataset, tmp_path, agent="null", instance_ids=selected)

    assert outcome.report["empty_patch_ids"] == sorted(selected)
    assert outcome.report["resolved_instances"] == outcome.report["error_instances"] == 0
    for instance_id in selected:
        result = result_file(outcome, instance_id)
        assert (result["eval_result"], result["reason"], result["model_patch"]) == ("empty_patch", "empty_patch", "")
        assert not (outcome.run_dir / f"{instance_id}_eval.md").exists()  # nothing was tested


def test_tampering_agent_is_not_resolved_and_tamper_is_recorded(sample_dataset, tmp_path, no_leftover_containers):
    outcome = run(sample_dataset, tmp_path, agent=str(AGENTS / "tamper"), instance_ids=[PYTHON, GO], pass_env=[])

    python, go = result_file(outcome, PYTHON), result_file(outcome, GO)
    assert outcome.report["resolved_instances"] == 0
    assert {entry["path"] for entry in python["tamper"]} == {"running_total_test.py", "conftest.py", "pytest.ini"}
    assert {entry["path"]: entry["why"] for entry in go["tamper"]} == {
        "word_tally_test.go": "test_file", "cases_test.go": "test_file", "go.mod": "build_or_config_file"}
    for result, instance_id in ((python, PYTHON), (go, GO)):
        # The agent's patch is kept as produced; grading ran the pristine hidden tests.
        assert "conftest.py" in result["model_patch"] or "cases_test.go" in result["model_patch"]
        assert (result["eval_result"], result["reason"]) == ("unresolved", "tests_failed"), result["detail"]
        assert result["tests"]["total"] == EXPECTED_TEST_COUNTS[instance_id]
        assert result["agent_exit_code"] == 0
        assert "PASSED" in (outcome.run_dir / f"{instance_id}_docker.log").read_text()


def test_solution_code_that_fakes_runner_output_and_exits_early_is_not_resolved(
    sample_dataset, tmp_path, monkeypatch, no_leftover_containers
):
    monkeypatch.setenv("TAMPER_SPOOF_RUNNER", "1")

    outcome = run(sample_dataset, tmp_path, agent=str(AGENTS / "tamper"), instance_ids=[GO],
                  pass_env=["TAMPER_SPOOF_RUNNER"])

    result = result_file(outcome, GO)
    assert "zz_pass.go" in result["kept_paths"]  # a new source file: grading takes it
    assert result["eval_result"] == "unresolved", result["detail"]


def test_timed_out_agent_is_graded_on_what_it_wrote(sample_dataset, tmp_path, monkeypatch, no_leftover_containers):
    pass_env = writer_plan(monkeypatch, {PYTHON: {"files": PYTHON_SOLUTION, "sleep": 120}})

    started = time.monotonic()
    outcome = run(sample_dataset, tmp_path, agent=str(WRITER), instance_ids=[PYTHON], agent_timeout=5,
                  pass_env=pass_env)

    result = result_file(outcome, PYTHON)
    assert result["agent_timed_out"] is True and result["agent_exit_code"] in (124, 137)
    assert 5 <= result["seconds"]["agent"] < 15
    assert result["agent_usage"]["signature"] == "writer agent, unpatched"  # left before it slept
    assert (result["patch_source"], result["kept_paths"]) == ("harness", ["running_total.py"])
    assert (result["eval_result"], result["reason"]) == ("resolved", "tests_passed"), result["detail"]
    assert time.monotonic() - started < 60


def test_model_patch_paths_change_the_agent_that_runs(sample_dataset, tmp_path, monkeypatch, no_leftover_containers):
    original = (WRITER / "run_task_agent.py").read_text()
    patched = original.replace('SIGNATURE = "writer agent, unpatched"', 'SIGNATURE = "writer agent, patched"')
    assert patched != original
    patch_path = tmp_path / "lineage.diff"
    patch_path.write_text(lineage_patch(original, patched))
    patch_bytes = patch_path.read_bytes()
    pass_env = writer_plan(monkeypatch, {"*": {"files": PYTHON_SOLUTION}})

    outcome = run(sample_dataset, tmp_path / "runs", agent=str(WRITER), model_patch_paths=[str(patch_path)],
                  instance_ids=[PYTHON], pass_env=pass_env)

    result = result_file(outcome, PYTHON)
    assert result["agent_usage"]["signature"] == "writer agent, patched"
    assert result["agent_hash"] != prepare_agent(str(WRITER), [], tmp_path / "unpatched").agent_hash
    assert result["eval_result"] == "resolved", result["detail"]
    assert patch_path.read_bytes() == patch_bytes
    assert (WRITER / "run_task_agent.py").read_text() == original


def test_patch_that_does_not_apply_fails_in_one_line_before_any_container(
    docker_client, sample_dataset, tmp_path, no_leftover_containers
):
    original = (WRITER / "run_task_agent.py").read_text()
    stale = original.replace('SIGNATURE = "writer agent, unpatched"', 'SIGNATURE = "some older signature"')
    patch_path = tmp_path / "stale.diff"
    patch_path.write_text(lineage_patch(stale, stale.replace("some older", "a newer")))
    patch_bytes = patch_path.read_bytes()
    started = time.time()

    completed = run_cli("--dataset", str(sample_dataset), "--output_dir", str(tmp_path / "runs"),
                        "--agent", str(WRITER), "--model_patch_paths", str(patch_path),
                        "--instance_ids", PYTHON, "--model_name_or_path", "stale")

    assert completed.returncode != 0
    error_lines = completed.stderr.strip().splitlines()
    assert len(error_lines) == 1, completed.stderr
    assert error_lines[0].startswith("error: ") and str(patch_path) in error_lines[0]
    assert "Traceback" not in completed.stderr
    assert patch_path.read_bytes() == patch_bytes
    assert not (tmp_path / "runs" / "stale_0").exists()
    assert containers_created_by(docker_client, completed.pid, started) == []


def test_sigint_leaves_no_containers_and_resume_finishes_only_unfinished(
    docker_client, sample_dataset, tmp_path, monkeypatch, no_leftover_containers
):
    output_dir = tmp_path / "runs"
    selected = [PYTHON, GO, JAVA]
    plan = {PYTHON: {"files": PYTHON_SOLUTION, "sleep": 0}, "*": {"sleep": 60}}
    run_dir = output_dir / "interrupted_0"
    process = start_cli("--dataset", str(sample_dataset), "--output_dir", str(output_dir), "--agent", str(WRITER),
                        "--instance_ids", ",".join(selected), "--model_name_or_path", "interrupted",
                        "--pass_env", "TEST_AGENT_PLAN", "--max_workers", "3",
                        env=dict(os.environ, TEST_AGENT_PLAN=json.dumps(plan)))
    try:
        _wait_for(lambda: (run_dir / f"{PYTHON}.json").is_file()
                  and len(containers_of_process(docker_client, process.pid)) >= 2, timeout=120)
        interrupted_at = time.monotonic()
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=30)
        stop_seconds = time.monotonic() - interrupted_at
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()

    assert process.returncode != 0, stdout + stderr
    assert stop_seconds < 20
    assert containers_of_process(docker_client, process.pid) == []
    report = json.loads((output_dir / "interrupted_0.0.json").read_text())
    assert report["resolved_ids"] == [PYTHON]
    assert report["unfinished_ids"] == sorted([GO, JAVA])
    finished = run_dir / f"{PYTHON}.json"
    finished_bytes, finished_mtime = finished.read_bytes(), finished.stat().st_mtime_ns

    pass_env = writer_plan(monkeypatch, {"*": {"sleep": 0}})
    outcome = run(sample_dataset, output_dir, agent=str(WRITER), instance_ids=selected,
                  model_name_or_path="interrupted", pass_env=pass_env, max_workers=3)

    assert (finished.read_bytes(), finished.stat().st_mtime_ns) == (finished_bytes, finished_mtime)
    assert outcome.report["total_instances"] == outcome.report["completed_instances"] == 3
    assert outcome.report["unfinished_ids"] == []
    assert outcome.report["resolved_ids"] == [PYTHON]
    assert outcome.report["empty_patch_ids"] == sorted([GO, JAVA])  # re-run: no sleep, no files
    for instance_id in (GO, JAVA):
        assert result_file(outcome, instance_id)["agent_usage"]["sleep"] == 0


def test_second_run_with_the_same_agent_builds_no_image(
    sample_dataset, tmp_path, monkeypatch, no_leftover_containers
):
    pass_env = writer_plan(monkeypatch, {"*": {"files": PYTHON_SOLUTION}})
    first = run(sample_dataset, tmp_path, agent=str(WRITER), instance_ids=[PYTHON], pass_env=pass_env,
                model_name_or_path="first")
    spy = BuildSpy(monkeypatch)

    second = run(sample_dataset, tmp_path, agent=str(WRITER), instance_ids=[PYTHON], pass_env=pass_env,
                 model_name_or_path="second")

    assert spy.builds == []
    assert second.images == first.images
    assert second.images.agent["python"].startswith("polyglot-harness/agent-python:")
    assert result_file(second, PYTHON)["agent_image"] == second.images.agent["python"]
    assert result_file(second, PYTHON)["eval_result"] == "resolved"


def test_predictions_are_graded_without_an_agent(docker_client, sample_dataset, tmp_path, no_leftover_containers):
    oracle = run(sample_dataset, tmp_path / "oracle", agent="oracle", instance_ids=[PYTHON, GO])
    predictions = tmp_path / "predictions.jsonl"
    records = [{"instance_id": instance_id, "model_name_or_path": "someone",
                "model_patch": oracle.results[instance_id].model_patch} for instance_id in (PYTHON, GO)]
    records.append({"instance_id": JAVA, "model_name_or_path": "someone", "model_patch": ""})
    predictions.write_text("".join(json.dumps(record) + "\n" for record in records))
    started = time.time()

    completed = run_cli("--dataset", str(sample_dataset), "--output_dir", str(tmp_path / "runs"),
                        "--subset", "samples", "--predictions", str(predictions), "--model_name_or_path", "graded")

    assert completed.returncode == 0, completed.stderr
    report = json.loads((tmp_path / "runs" / "graded_0.0.json").read_text())
    assert report["total_instances"] == 3
    assert report["resolved_ids"] == sorted([PYTHON, GO])
    assert report["empty_patch_ids"] == [JAVA]
    for record in records:
        result = json.loads((tmp_path / "runs" / "graded_0" / f"{record['instance_id']}.json").read_text())
        assert (result["patch_source"], result["model_patch"]) == ("predictions", record["model_patch"])
    roles = [event["Actor"]["Attributes"].get(LABEL_ROLE)
             for event in containers_created_by(docker_client, completed.pid, started)]
    assert sorted(roles) == ["grading", "grading"]  # python and go; no agent container at all


def test_staged_run_goes_on_after_a_passed_stage_and_grades_each_instance_once(
        sample_dataset, tmp_path, monkeypatch, no_leftover_containers):
    from polyglot_harness.utils.run import execute as execute_module
    from polyglot_harness.utils.run import plan as plan_module

    subsets = tmp_path / "subsets"
    subsets.mkdir()
    (subsets / "first.json").write_text(json.dumps([PYTHON]))
    (subsets / "second.json").write_text(json.dumps([GO]))
    monkeypatch.setattr(plan_module, "SUBSETS_DIR", subsets)
    ran: list[str] = []
    real_run_instance = execute_module.run_instance

    def counted(sandboxes, job, stop, after_agent=lambda: None):
        ran.append(job.instance.instance_id)
        return real_run_instance(sandboxes, job, stop, after_agent=after_agent)

    monkeypatch.setattr(execute_module, "run_instance", counted)

    outcome = run(sample_dataset, tmp_path / "runs", agent="oracle", stages="first:1.0,second:0.5",
                  model_name_or_path="staged")

    assert sorted(ran) == sorted([PYTHON, GO]), "the first stage's instance is not graded again"
    assert sorted(path.name for path in (tmp_path / "runs").iterdir()) == ["staged_0", "staged_0.0.json"]
    report = json.loads(outcome.report_path.read_text())
    assert [(stage["subset"], stage["instances"], stage["resolved"], stage["passed"]) for stage in report["stages"]] \
        == [("first", 1, 1, True), ("second", 2, 2, True)]
    assert (report["ended_at_stage"], report["ended_because"]) == ("second", "all stages run")
    assert report["resolved_ids"] == sorted([PYTHON, GO])


def test_resume_refuses_to_mix_agents_unless_forced(sample_dataset, tmp_path, no_leftover_containers):
    run(sample_dataset, tmp_path, agent="oracle", instance_ids=[PYTHON], model_name_or_path="mixed")

    with pytest.raises(HarnessError, match=r"other settings \(agent, agent_hash differ\).*--force"):
        run(sample_dataset, tmp_path, agent="null", instance_ids=[PYTHON], model_name_or_path="mixed")
    assert read_result(tmp_path / "mixed_0", PYTHON)["eval_result"] == "resolved"

    forced = run(sample_dataset, tmp_path, agent="null", instance_ids=[PYTHON], model_name_or_path="mixed",
                 force=True)

    assert result_file(forced, PYTHON)["eval_result"] == "empty_patch"
    assert json.loads((forced.run_dir / "run_settings.json").read_text())["agent"] == "null"


def test_agent_requirements_install_once_and_code_changes_reuse_the_pip_layer(
    docker_client, sample_dataset, tmp_path, monkeypatch, no_leftover_containers
):
    # A fresh copy (unique code) so its agent image is built in this test whatever is cached.
    agent = tmp_path / "agent"
    shutil.copytree(AGENTS / "with_requirements", agent)
    source = agent / "run_task_agent.py"
    source.write_text(source.read_text() + f"\n# build {uuid.uuid4().hex}\n")
    spy = BuildSpy(monkeypatch)
    built_tags: list[str] = []
    try:
        first = run(sample_dataset, tmp_path / "runs", agent=str(agent), instance_ids=[PYTHON],
                    model_name_or_path="first", pass_env=[])
        again = run(sample_dataset, tmp_path / "runs", agent=str(agent), instance_ids=[PYTHON],
                    model_name_or_path="again", pass_env=[])
        built_tags += spy.tags()
        assert spy.tags() == [first.images.agent["python"]]  # built once, then reused
        assert again.images == first.images
        assert result_file(first, PYTHON)["agent_usage"]["six"] == "1.16.0"

        source.write_text(source.read_text().replace('EDITION = "first"', 'EDITION = "second"'))
        edited = run(sample_dataset, tmp_path / "runs", agent=str(agent), instance_ids=[PYTHON],
                     model_name_or_path="edited", pass_env=[])
        built_tags += spy.tags()[1:]
    finally:
        for tag in set(built_tags):  # unique tags: don't pile them up across sessions
            try:
                docker_client.images.remove(tag, force=True)
            except Exception:  # noqa: BLE001 - best-effort clean-up
                pass

    assert edited.images.agent["python"] != first.images.agent["python"]
    assert spy.tags()[1:] == [edited.images.agent["python"]]
    tag, log_path, seconds = spy.builds[1]
    build_log = log_path.read_text()
    pip_step = build_log[build_log.index("RUN python3 -m venv"):]
    assert pip_step.split("Step ", 1)[0].count("Using cache") == 1, build_log
    assert seconds < 30
    usage = result_file(edited, PYTHON)["agent_usage"]
    assert (usage["six"], usage["edition"]) == ("1.16.0", "second")


def _wait_for(condition, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not reached in time")
        time.sleep(0.2)
