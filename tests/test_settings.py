"""Settings and lineage patches are checked at the boundary, before any container starts:
one line naming the setting, exit 2, nothing run. No Docker needed (the checks come first)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from polyglot_harness.utils.run import HarnessError, harness
from polyglot_harness.utils.agents.prepare import AgentPatchError, prepare_agent

PROJECT_ROOT = Path(__file__).resolve().parent.parent
WRITER = PROJECT_ROOT / "tests" / "fixtures" / "agents" / "writer"


@pytest.mark.parametrize("setting, value, named", [
    ("test_timeout", -5, "--test_timeout"), ("test_timeout", 0, "--test_timeout"),
    ("agent_timeout", 0, "--agent_timeout"), ("max_workers", 0, "--max_workers"),
    ("memory", "lots", "--memory"), ("memory", "-4g", "--memory"), ("cpus", 0.0, "--cpus"),
    ("cpus", 10_000.0, "--cpus"), ("pids_limit", 1, "--pids_limit"), ("agent_network", "weird", "--agent_network"),
])
def test_bad_setting_is_refused_before_anything_runs(setting, value, named, tmp_path):
    with pytest.raises(HarnessError, match=named):
        harness(dataset=tmp_path / "no-dataset", output_dir=tmp_path / "runs", agent="oracle", progress=False,
                **{setting: value})
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("arguments, named", [
    (["--test_timeout", "-5"], "--test_timeout"), (["--max_workers", "0"], "--max_workers"),
    (["--memory", "lots"], "--memory"), (["--agent_network", "weird"], "--agent_network"),
])
def test_cli_names_the_bad_setting_in_one_line_and_exits_2(arguments, named, tmp_path):
    completed = subprocess.run([sys.executable, "harness.py", "--agent", "oracle", "--output_dir", str(tmp_path),
                                *arguments], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60)
    assert completed.returncode == 2
    assert completed.stderr.count("\n") == 1 and named in completed.stderr, completed.stderr


def test_default_agent_without_a_model_stops_the_run_before_the_first_container(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_MODEL", raising=False)
    with pytest.raises(HarnessError, match="needs a model"):
        harness(dataset=tmp_path / "no-dataset", output_dir=tmp_path / "runs", progress=False)
    monkeypatch.setenv("OPENAI_MODEL", "some-model")
    with pytest.raises(HarnessError, match="needs a model"):  # set, but not passed to the agent
        harness(dataset=tmp_path / "no-dataset", output_dir=tmp_path / "runs", progress=False, pass_env=[])


def test_lineage_patch_that_is_not_a_diff_is_an_error_and_stays_untouched(tmp_path):
    patch = tmp_path / "gen_2.diff"
    patch.write_text("this is not a diff\n")
    with pytest.raises(AgentPatchError, match="holds no diff"):
        prepare_agent(str(WRITER), [patch], tmp_path / "work")
    assert patch.read_text() == "this is not a diff\n"


def test_lineage_patch_with_no_change_for_the_agent_is_an_error(tmp_path):
    patch = tmp_path / "gen_2.diff"
    patch.write_text("--- a/../outside.py\n+++ b/../outside.py\n@@ -1 +1 @@\n-a\n+b\n")
    with pytest.raises(AgentPatchError, match="no change for the agent"):
        prepare_agent(str(WRITER), [patch], tmp_path / "work")


def test_lineage_patch_that_does_not_apply_is_an_error(tmp_path):
    patch = tmp_path / "gen_2.diff"
    patch.write_text("--- a/run_task_agent.py\n+++ b/run_task_agent.py\n@@ -1 +1 @@\n-no such line\n+x\n")
    with pytest.raises(AgentPatchError, match="does not apply"):
        prepare_agent(str(WRITER), [patch], tmp_path / "work")
