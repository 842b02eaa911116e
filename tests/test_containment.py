"""A hostile agent is contained: each chaos test runs the hostile instance next to a
well-behaved neighbour in the same run, through the harness CLI in its own process, and
checks the hostile instance's bucket and reason, the neighbour's verdict, what is left behind
and the harness's own peak memory."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from utils.agent_run import MAX_PATCH_BYTES

pytestmark = pytest.mark.docker

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SAMPLES = PROJECT_ROOT / "samples"
WRITER = PROJECT_ROOT / "tests" / "fixtures" / "agents" / "writer"
PYTHON = "python__running-total"
GO = "go__word-tally"
GO_SOLUTION = {"word_tally.go": (SAMPLES / "go" / "exercises" / "practice" / "word-tally" / ".meta" / "example.go").read_text()}

# Runs harness() and prints its own peak resident memory (KiB) as the last line.
HARNESS_WITH_PEAK_MEMORY = """
import json, resource, sys
sys.path.insert(0, sys.argv[1])
from harness import harness
settings = json.loads(sys.argv[2])
outcome = harness(progress=False, **settings)
print(json.dumps({"peak_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def run_measured(tmp_path: Path, plan: dict, **settings) -> tuple[dict[str, dict], int]:
    settings = {"agent": str(WRITER), "model_name_or_path": "chaos", "output_dir": str(tmp_path),
                "pass_env": ["TEST_AGENT_PLAN"], "max_workers": 2, **settings}
    completed = subprocess.run([sys.executable, "-c", HARNESS_WITH_PEAK_MEMORY, str(PROJECT_ROOT), json.dumps(settings)],
                               capture_output=True, text=True, timeout=600,
                               env={**__import__("os").environ, "TEST_AGENT_PLAN": json.dumps(plan)})
    assert completed.returncode == 0, completed.stderr[-3000:]
    peak_kib = json.loads(completed.stdout.strip().splitlines()[-1])["peak_kib"]
    run_dir = tmp_path / "chaos_0"
    results = {path.stem: json.loads(path.read_text()) for path in run_dir.glob("*__*.json")}
    return results, peak_kib


def test_oversized_patch_is_unresolved_once_with_its_size_and_memory_stays_bounded(
        sample_dataset, tmp_path, no_leftover_containers):
    huge = 300 * 1024 * 1024
    results, peak_kib = run_measured(tmp_path, {PYTHON: {"patch_bytes": huge}, GO: {"files": GO_SOLUTION}},
                                     dataset=str(sample_dataset), instance_ids=[PYTHON, GO])
    hostile, neighbour = results[PYTHON], results[GO]
    assert (hostile["eval_result"], hostile["reason"]) == ("unresolved", "patch_too_large"), hostile["detail"]
    assert str(huge) in hostile["detail"] and str(MAX_PATCH_BYTES) in hostile["detail"]
    assert hostile["attempts"] == 1 and hostile["model_patch"] == ""  # the agent's output, not an infrastructure retry
    assert (neighbour["eval_result"], neighbour["reason"]) == ("resolved", "tests_passed"), neighbour["detail"]
    assert peak_kib < 300 * 1024, f"the harness peaked at {peak_kib // 1024} MiB"


@pytest.mark.parametrize("role", ["agent", "grading"])
def test_containers_run_without_capabilities_or_new_privileges(role, docker_client, language_images,
                                                               no_leftover_containers):
    from utils.sandbox import Sandboxes, SandboxSpec

    spec = SandboxSpec(image=language_images["python"], role=role, network="none")
    with Sandboxes(docker_client, "caps-check").start(spec, "caps-check") as box:
        status = box.exec("grep -E '^(CapEff|CapBnd|NoNewPrivs):' /proc/self/status; chown nobody /tmp; echo $?", 30, workdir="/")
    fields = dict(line.split(":\t", 1) for line in status.output.splitlines() if ":\t" in line)
    assert fields["CapEff"].strip() == fields["CapBnd"].strip() == "0000000000000000", status.output
    assert fields["NoNewPrivs"].strip() == "1"
    assert status.output.strip().splitlines()[-1] != "0", "root in the container could still chown"
