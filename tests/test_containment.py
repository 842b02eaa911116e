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

from polyglot_harness.utils.pipeline.agent_phase import MAX_PATCH_BYTES

# Two tests restart THE engine or measure its disk: they are marked before_background and run
# before the gate's preparation starts in the background (tests/conftest.py); the others run
# beside it, like any module that does not use the benchmark.
pytestmark = [pytest.mark.docker]

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
import _standalone  # the checkout as the package polyglot_harness
from polyglot_harness.utils.run import harness
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
def test_containers_run_without_capabilities_or_new_privileges(role, provider, language_images,
                                                               no_leftover_containers):
    from polyglot_harness.utils.pipeline.pools import Sandboxes
    from polyglot_harness.utils.seam.protocol import SandboxSpec

    spec = SandboxSpec(image=language_images["python"], role=role, network="none", user=None)
    with Sandboxes(provider, "caps-check").start(spec, "caps-check") as box:
        status = box.exec("grep -E '^(CapEff|CapBnd|NoNewPrivs):' /proc/self/status; chown nobody /tmp; echo $?", 30, workdir="/")
    fields = dict(line.split(":\t", 1) for line in status.output.splitlines() if ":\t" in line)
    assert fields["CapEff"].strip() == fields["CapBnd"].strip() == "0000000000000000", status.output
    assert fields["NoNewPrivs"].strip() == "1"
    assert status.output.strip().splitlines()[-1] != "0", "root in the container could still chown"


# What the code under test tries to change; each must be refused. Per language, the toolchain's
# own files are in the list too.
SYSTEM_FILES = ("/etc/passwd", "/usr/bin/env")
NEW_SYSTEM_FILES = ("/usr/lib/python3/dist-packages/forged.pth", "/usr/local/bin/forged", "/root/forged", "/etc/forged")
TOOLCHAIN_FILES = {
    "python": "/usr/local/lib/python3.11/dist-packages/pytest/__init__.py",
    "go": "/usr/lib/go-1.23/src/testing/testing.go",
    "rust": "/usr/bin/cargo",
    "javascript": "/usr/local/bin/polyglot-js-test",
    "java": "/usr/local/bin/polyglot-java-test",
    "cpp": "/usr/local/bin/polyglot-cpp-test",
}


@pytest.mark.parametrize("language", sorted(TOOLCHAIN_FILES))
def test_tests_run_unprivileged_and_cannot_change_the_system_or_toolchain(language, provider, language_images,
                                                                        tmp_path, no_leftover_containers):
    from polyglot_harness.utils.pipeline.grading import TESTBED, grading_sandbox_spec
    from polyglot_harness.utils.languages import LANGUAGES
    from polyglot_harness.utils.seam.protocol import Limits, RUNNER_UID
    from polyglot_harness.utils.pipeline.pools import Sandboxes

    (tmp_path / "solution.txt").write_text("the agent's file\n")
    spec = grading_sandbox_spec(language_images[language], Limits(), LANGUAGES[language])
    existing = (*SYSTEM_FILES, TOOLCHAIN_FILES[language])
    probe = ("id -u; id -g; " + "; ".join(f"test -e {path} || echo missing {path}" for path in existing) + "; "
             + "; ".join(f"(: >> {path}) 2>/dev/null && echo wrote {path}" for path in (*existing, *NEW_SYSTEM_FILES))
             + f"; echo more >> {TESTBED}/solution.txt && mkdir {TESTBED}/build && echo tree-writable"
             + "; touch $HOME/x /tmp/x && echo home-writable")
    with Sandboxes(provider, "priv-check").start(spec, "priv-check") as box:
        box.put_directory(tmp_path, TESTBED)
        lines = box.exec(probe, 30, workdir=TESTBED).output.split()
    assert lines[:2] == [str(RUNNER_UID)] * 2
    assert "wrote" not in lines and "missing" not in lines, lines
    assert "tree-writable" in lines and "home-writable" in lines, lines


# --- network ---------------------------------------------------------------------------------

REACH = ("python3 -c \"import socket,sys; socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=3); "
         "print('reached')\" {host} {port}")


def _serve(box) -> str:
    box.exec("nohup python3 -m http.server 8765 --bind 0.0.0.0 > /dev/null 2>&1 &", 10, workdir="/")
    box.exec("for i in $(seq 50); do python3 -c \"import socket; socket.create_connection(('127.0.0.1', 8765), 1)\" "
             "2>/dev/null && break; sleep 0.1; done", 20, workdir="/")
    box.container.reload()
    return next(iter(box.container.attrs["NetworkSettings"]["Networks"].values()))["IPAddress"]


def _two_agents(provider, image: str, network: str, run_id: str):
    from polyglot_harness.utils.pipeline.pools import Sandboxes
    from polyglot_harness.utils.seam.protocol import SandboxSpec

    sandboxes = Sandboxes(provider, run_id)
    spec = SandboxSpec(image=image, role="agent", network=network)
    return sandboxes.start(spec, "agent-a"), sandboxes.start(spec, "agent-b")


def test_agents_of_a_run_cannot_reach_each_other_but_reach_the_host(docker_client, provider, language_images,
                                                                     no_leftover_containers):
    import socket
    import threading

    from polyglot_harness.utils.backends.docker.provider import create_run_network, remove_run_network

    run_id = "net-check"
    network = create_run_network(docker_client, run_id)
    listener = socket.socket()
    listener.bind(("0.0.0.0", 0))
    listener.listen()
    threading.Thread(target=lambda: listener.accept(), daemon=True).start()
    try:
        first, second = _two_agents(provider, language_images["python"], network, run_id)
        with first, second:
            address = _serve(first)
            blocked = second.exec(REACH.format(host=address, port=8765), 30, workdir="/")
            gateway = docker_client.networks.get(network).attrs["IPAM"]["Config"][0]["Gateway"]
            outward = second.exec(REACH.format(host=gateway, port=listener.getsockname()[1]), 30, workdir="/")
    finally:
        listener.close()
        remove_run_network(docker_client, run_id)
    assert "reached" not in blocked.output, "one agent reached another on the run network"
    assert "reached" in outward.output, f"the agent could not reach the host: {outward.output[-500:]}"
    assert not docker_client.networks.list(names=[network])


def test_on_the_default_bridge_the_same_probe_does_connect(provider, language_images, no_leftover_containers):
    """The probe above can fail: without the run network, agents reach each other."""
    first, second = _two_agents(provider, language_images["python"], "bridge", "net-control")
    with first, second:
        address = _serve(first)
        reached = second.exec(REACH.format(host=address, port=8765), 30, workdir="/")
    assert "reached" in reached.output, reached.output[-500:]


def test_a_run_removes_its_network(sample_dataset, tmp_path, docker_client, no_leftover_containers):
    before = {network.name for network in docker_client.networks.list()}
    results, _ = run_measured(tmp_path, {GO: {"files": GO_SOLUTION}}, dataset=str(sample_dataset), instance_ids=[GO])
    assert results[GO]["eval_result"] == "resolved"
    log = (tmp_path / "chaos_0" / f"{GO}_docker.log").read_text()
    assert "(network polyglot-harness-net-" in log
    assert {network.name for network in docker_client.networks.list()} == before


# --- disk ------------------------------------------------------------------------------------

PYTHON_SOLUTION = {"running_total.py": (SAMPLES / "python" / "exercises" / "practice" / "running-total" / ".meta"
                                        / "example.py").read_text()}


@pytest.mark.before_background  # measures the engine's free disk
def test_disk_hog_is_stopped_at_the_cap_and_graded_on_what_it_left(sample_dataset, tmp_path, docker_client,
                                                                   no_leftover_containers):
    import shutil

    free_before = shutil.disk_usage("/var/lib/docker").free
    plan = {PYTHON: {"files": PYTHON_SOLUTION, "disk_bytes": 6 << 30, "sleep": 60}, GO: {"files": GO_SOLUTION}}
    results, _ = run_measured(tmp_path, plan, dataset=str(sample_dataset), instance_ids=[PYTHON, GO], disk="512m")
    hostile, neighbour = results[PYTHON], results[GO]
    assert hostile["agent_stopped"] == "disk_limit" and not hostile["agent_timed_out"], hostile
    assert hostile["seconds"]["agent"] < 60, "the disk hog ran to its end"
    assert (hostile["eval_result"], hostile["kept_paths"]) == ("resolved", ["running_total.py"]), hostile["detail"]
    log = (tmp_path / "chaos_0" / f"{PYTHON}_docker.log").read_text()
    assert "outgrew the 536870912-byte disk cap" in log and "filler.bin" in log
    assert (neighbour["eval_result"], neighbour["agent_stopped"]) == ("resolved", "")
    assert shutil.disk_usage("/var/lib/docker").free > free_before - (1 << 30)


def test_disk_setting_is_checked(tmp_path):
    from polyglot_harness.utils.run import HarnessError, harness

    for bad in ("lots", "1m", "-5g"):
        with pytest.raises(HarnessError, match="--disk"):
            harness(dataset=tmp_path, output_dir=tmp_path / "runs", agent="oracle", progress=False, disk=bad)


# --- the engine going away -----------------------------------------------------------------------

@pytest.mark.before_background  # restarts THE engine
def test_engine_restart_mid_run_ends_cleanly_and_a_resume_finishes_the_broken_instances(
        sample_dataset, tmp_path, docker_client):
    """Restarts THE engine the suite uses, so it needs one this project started (CI always
    does: run_tests.sh). The agents sleep; the restart kills their containers mid-run."""
    import os
    import time

    from .conftest import IN_CI
    from polyglot_harness.utils.backends.docker.engine import ENGINE_PIDFILE, engine_answers, ensure_engine, stop_engine
    from polyglot_harness.utils.backends.docker.provider import LABEL_PID, LABEL_ROLE, list_run_containers

    if not ENGINE_PIDFILE.is_file():
        message = "the engine was not started by this project (no pidfile): not restarting someone else's"
        if IN_CI:
            pytest.fail(message)
        pytest.skip(message)
    plan = {PYTHON: {"files": PYTHON_SOLUTION, "sleep": 40}, GO: {"files": GO_SOLUTION, "sleep": 40}}
    settings = {"agent": str(WRITER), "model_name_or_path": "chaos", "output_dir": str(tmp_path),
                "pass_env": ["TEST_AGENT_PLAN"], "max_workers": 2, "dataset": str(sample_dataset),
                "instance_ids": [PYTHON, GO]}
    env = {**os.environ, "TEST_AGENT_PLAN": json.dumps(plan)}
    command = [sys.executable, "-c", HARNESS_WITH_PEAK_MEMORY, str(PROJECT_ROOT), json.dumps(settings)]
    run = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            agents = [c for c in list_run_containers(docker_client)
                      if c.labels.get(LABEL_PID) == str(run.pid) and c.labels.get(LABEL_ROLE) == "agent"
                      and c.status == "running"]
            if len(agents) == 2:
                break
            time.sleep(0.5)
        assert len(agents) == 2, "the agents never ran"
        time.sleep(3)  # the agent commands are running
        assert stop_engine(log=lambda message: None)
        assert ensure_engine(log=lambda message: None) and engine_answers()
        stdout, stderr = run.communicate(timeout=300)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 0, stderr[-3000:]
    first = {path.stem: json.loads(path.read_text()) for path in (tmp_path / "chaos_0").glob("*__*.json")}
    assert {r["eval_result"] for r in first.values()} == {"incomplete"}, {i: r["detail"] for i, r in first.items()}
    assert {r["reason"] for r in first.values()} <= {"agent_interrupted", "infrastructure_failed"}
    assert [c.name for c in list_run_containers(docker_client) if c.labels.get(LABEL_PID) == str(run.pid)] == []

    plan = {PYTHON: {"files": PYTHON_SOLUTION}, GO: {"files": GO_SOLUTION}}
    resumed, _ = run_measured(tmp_path, plan, dataset=str(sample_dataset), instance_ids=[PYTHON, GO])
    assert {i: r["eval_result"] for i, r in resumed.items()} == {PYTHON: "resolved", GO: "resolved"}


# --- what was contained before, kept that way ----------------------------------------------------

HOSTILE = PROJECT_ROOT / "tests" / "fixtures" / "agents" / "hostile"
# behaviour -> (bucket, reason, what else the hostile result must show)
EXPECTED = {
    "fork_bomb": ("resolved", "tests_passed", {"agent_timed_out": True}),
    "allocate": ("resolved", "tests_passed", {"agent_exit_code": 137}),
    "ignore_sigterm": ("resolved", "tests_passed", {"agent_timed_out": True}),
    "daemon": ("resolved", "tests_passed", {}),
    "flood_stdout": ("resolved", "tests_passed", {}),
    "garbage_patch": ("unresolved", "patch_unparseable", {}),
    # It runs as the images' unprivileged user and cannot become root or change the system.
    "escalate": ("resolved", "tests_passed",
                 {"agent_usage": {"behaviour": "escalate", "calls": 0,
                                  "escalation": {"uid": 10001, "euid": 10001, "gid": 10001, "achieved": []}}}),
}


@pytest.mark.parametrize("behaviour", sorted(EXPECTED))
def test_hostile_agent_is_contained_and_its_neighbour_resolves(behaviour, sample_dataset, tmp_path, docker_client,
                                                               no_leftover_containers):
    import os
    import shutil

    free_before = shutil.disk_usage("/var/lib/docker").free
    plan = {PYTHON: {"files": PYTHON_SOLUTION, "behaviour": behaviour}, GO: {"files": GO_SOLUTION}}
    settings = {"agent": str(HOSTILE), "model_name_or_path": "chaos", "output_dir": str(tmp_path),
                "pass_env": ["HOSTILE_AGENT_PLAN"], "max_workers": 2, "dataset": str(sample_dataset),
                "instance_ids": [PYTHON, GO], "agent_timeout": 20, "memory": "1g", "pids_limit": 256}
    completed = subprocess.run([sys.executable, "-c", HARNESS_WITH_PEAK_MEMORY, str(PROJECT_ROOT), json.dumps(settings)],
                               capture_output=True, text=True, timeout=600,
                               env={**os.environ, "HOSTILE_AGENT_PLAN": json.dumps(plan)})
    assert completed.returncode == 0, completed.stderr[-3000:]
    peak_kib = json.loads(completed.stdout.strip().splitlines()[-1])["peak_kib"]
    results = {path.stem: json.loads(path.read_text()) for path in (tmp_path / "chaos_0").glob("*__*.json")}
    hostile, neighbour = results[PYTHON], results[GO]
    bucket, reason, extra = EXPECTED[behaviour]
    assert (hostile["eval_result"], hostile["reason"]) == (bucket, reason), hostile["detail"]
    assert {key: hostile[key] for key in extra} == extra
    assert hostile["seconds"]["agent"] < 20 + 15, "the agent outlived its timeout"
    assert (neighbour["eval_result"], neighbour["reason"]) == ("resolved", "tests_passed"), neighbour["detail"]
    assert peak_kib < 300 * 1024, f"the harness peaked at {peak_kib // 1024} MiB"
    assert shutil.disk_usage("/var/lib/docker").free > free_before - (1 << 30)
    # The only volumes the harness keeps are the shared build caches (one per language image).
    left = [v.name for v in docker_client.volumes.list(filters={"dangling": True})
            if "polyglot" in v.name and not v.name.startswith("polyglot-harness-cache-")]
    assert not left
