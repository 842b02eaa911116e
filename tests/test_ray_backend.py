"""The Ray backend: two Ray nodes on this machine, each beside its own Docker engine (the
first engine and a second dockerd the test starts and stops). Instances land on both engines
with identical image tags, verdicts equal the Docker backend's, a node lost mid-run ends its
instances `incomplete` and a resume (with the node back) completes them, and nothing is left
on either engine. Plus Ray-only checks of the provider on a two-node local cluster, and what
the nodes get of the checkout, also when a host repository imports it under its own name."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import docker
import pytest

import ray  # run_tests.sh installs requirements-ray.txt: a missing Ray fails, never skips
from ray.cluster_utils import Cluster  # noqa: E402

from polyglot_harness.utils.run import harness  # noqa: E402
from . import second_engine  # noqa: E402
from .conftest import made_by_the_background  # noqa: E402
from polyglot_harness.utils.backends.docker.provider import LABEL_ROLE, LABEL_RUN  # noqa: E402
from polyglot_harness.utils.backends.ray.provider import RESOURCE, RayProvider, _get  # noqa: E402
from polyglot_harness.utils.seam.errors import SandboxError  # noqa: E402
from polyglot_harness.utils.records.dataset import load_dataset  # noqa: E402
from polyglot_harness.utils.prepare.dataset import prepare_dataset  # noqa: E402

PROJECT_ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.beside_gate  # its own 8 instances (ray_dataset), not the gate's

WRITER = PROJECT_ROOT / "tests" / "fixtures" / "agents" / "writer"
SLOTS = 4


# --- Ray alone (no engine) ------------------------------------------------------------------

@pytest.fixture
def bare_cluster():
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False})
    yield cluster
    ray.shutdown()
    cluster.shutdown()


def test_provider_uses_only_nodes_that_offer_docker_slots(bare_cluster):
    bare_cluster.add_node(num_cpus=1, resources={RESOURCE: 3})
    ray.init(address=bare_cluster.address, log_to_driver=False)
    nodes = RayProvider(bare_cluster.address).nodes()
    assert len(nodes) == 1 and len(ray.nodes()) == 2


def test_a_cluster_without_docker_slots_is_refused_with_one_line(bare_cluster):
    with pytest.raises(SandboxError, match=f"no live Ray node offers the {RESOURCE} resource"):
        RayProvider(bare_cluster.address).prepare(log=lambda message: None)


def test_a_lost_worker_is_a_sandbox_error_not_a_ray_retry(bare_cluster):
    ray.init(address=bare_cluster.address, log_to_driver=False)

    @ray.remote(max_restarts=0, max_task_retries=0, num_cpus=0)
    class Sleeper:
        def pid(self) -> int:
            import os
            return os.getpid()

        def sleep(self) -> None:
            time.sleep(60)

    actor = Sleeper.remote()
    ray.get(actor.pid.remote())
    pending = actor.sleep.remote()
    ray.kill(actor, no_restart=True)
    with pytest.raises(SandboxError, match="the Ray node or worker was lost"):
        _get(pending, "sleeping", timeout=30)


# --- what the nodes get ---------------------------------------------------------------------------

def hosted_checkout(tmp_path: Path) -> Path:
    """A host repository holding the checkout as hostrepo/polyglot, with a top-level `utils`
    of its own that fails when imported (as HyperAgents' would shadow ours)."""
    host = tmp_path / "host"
    (host / "hostrepo").mkdir(parents=True)
    (host / "hostrepo" / "polyglot").symlink_to(PROJECT_ROOT)
    (host / "utils").mkdir()
    (host / "utils" / "__init__.py").write_text("raise ImportError('the host repository's own utils')\n")
    return host


def python_in(directory: Path, script: str, timeout: int = 120) -> subprocess.CompletedProcess:
    """`script` in a fresh interpreter whose only path of ours is `directory` (cwd elsewhere)."""
    completed = subprocess.run([sys.executable, "-c", f"import sys; sys.path.insert(0, {str(directory)!r})\n{script}"],
                               cwd=directory.parent, capture_output=True, text=True, timeout=timeout)
    assert completed.returncode == 0, completed.stderr[-3000:]
    return completed


def test_nodes_get_only_the_packages_the_backend_imports_under_the_drivers_package_name(tmp_path):
    host, staged = hosted_checkout(tmp_path), tmp_path / "staged"
    shipped = python_in(host, "from pathlib import Path\nfrom hostrepo.polyglot.utils.backends.ray import shipping\n"
                              f"print('\\n'.join(shipping.stage(Path({str(staged)!r}))))").stdout.split()
    assert {"utils/backends/ray/provider.py", "utils/backends/docker/images.py", "utils/seam/protocol.py",
            "utils/languages/__init__.py", "docker"} <= set(shipped)
    assert not [path for path in shipped if path.split("/")[:2] in (["utils", "pipeline"], ["utils", "records"],
                                                                    ["utils", "views"])
                or path.startswith(("tests", "agent"))], shipped
    # A node: only the staged tree (and the host's own `utils`) on its path.
    python_in(staged, f"sys.path.append({str(host)!r})\n"
                      "import hostrepo.polyglot.utils.backends.ray.provider as provider\n"
                      f"assert provider.__file__.startswith({str(staged)!r}), provider.__file__\n"
                      "from hostrepo.polyglot.utils.checkout import RECIPES_DIR\n"
                      f"assert RECIPES_DIR.is_relative_to({str(staged)!r}) and (RECIPES_DIR / 'python').is_dir()\n"
                      "assert 'utils' not in sys.modules and 'polyglot_harness' not in sys.modules")


@pytest.mark.docker
def test_a_checkout_imported_under_a_host_package_name_runs_sandboxes_on_ray(tmp_path, language_images):
    host = hosted_checkout(tmp_path)
    script = f"""
import ray
from ray.cluster_utils import Cluster
from hostrepo.polyglot.utils.backends.ray.provider import RESOURCE
from hostrepo.polyglot.utils.seam.conformance import run_conformance
from hostrepo.polyglot.utils.seam.registry import open_provider

cluster = Cluster(initialize_head=True, head_node_args={{"num_cpus": 1, "include_dashboard": False,
                                                        "resources": {{RESOURCE: 2}}}})
try:
    provider = open_provider("ray", address=cluster.address)
    provider.prepare(lambda message: None)
    print(run_conformance(provider, {language_images["python"]!r}, "hosted",
                          only=("files_go_in_and_out_owned_by_the_user",)))
finally:
    ray.shutdown()
    cluster.shutdown()
assert "utils" not in sys.modules and "polyglot_harness" not in sys.modules
"""
    assert python_in(host, script, timeout=600).stdout.strip().splitlines()[-1] == "[]"


# --- two nodes, two engines ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def engine_b():
    process = second_engine.start()
    client = docker.DockerClient(base_url=second_engine.HOST, timeout=120)
    yield client
    for container in client.containers.list(all=True, filters={"label": LABEL_RUN}, ignore_removed=True):
        container.remove(force=True)
    client.close()
    second_engine.stop(process)


@pytest.fixture(scope="module")
def two_nodes(engine_b, docker_client):
    cluster = Cluster(initialize_head=True,
                      head_node_args={"num_cpus": 1, "include_dashboard": False, "resources": {RESOURCE: SLOTS}})
    node_b = cluster.add_node(num_cpus=1, resources={RESOURCE: SLOTS},
                              env_vars={"DOCKER_HOST": second_engine.HOST})
    yield cluster, node_b
    ray.shutdown()
    cluster.shutdown()


# The equivalence sample: enough instances that both nodes grade (4 workers over two nodes of
# 4 slots), both isolation modes (paasio is graded in process, the others in the trusted
# process), and a slow one (bowling). The Docker backend's verdicts on every python instance
# are the gate's own (tests/test_real_benchmark.py records them at preparation): grading all 34
# twice here cost ~150 s of a CI run and tested the backend no more than 8 do.
EQUIVALENCE_SAMPLE = ("python__bowling", "python__paasio", "python__list-ops", "python__zipper",
                      "python__tree-building", "python__book-store", "python__dot-dsl", "python__wordy")


@pytest.fixture(scope="module")
def ray_dataset(benchmark_checkout, language_images, tmp_path_factory) -> Path:
    """The 8 instances prepared here, expected tests recorded as the gate records them (~16
    python gradings): the module then runs beside the gate's preparation (marker beside_gate),
    where its nodes' start-up and its agents' sleeps cost the run nothing, instead of after it."""
    output = tmp_path_factory.mktemp("ray-dataset") / "polyglot"
    prepare_dataset(benchmark_checkout, output, languages=["python"], instance_ids=list(EQUIVALENCE_SAMPLE),
                    workers=2, log=lambda message: None)
    return output


class Created:
    """role -> how many harness containers were created on an engine while this is open, from
    a live event stream read in a thread (a query after the fact sees only the engine's last
    256 events, which the gate's preparation beside this module can fill in seconds); the
    preparation's own containers are left out."""

    def __init__(self, client) -> None:
        self.client, self.found = client, {}

    def __enter__(self) -> dict[str, int]:
        self.stream = self.client.events(decode=True, filters={"type": "container", "event": "create",
                                                                 "label": LABEL_ROLE})
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        return self.found

    def _read(self) -> None:
        try:
            for event in self.stream:
                attributes = event.get("Actor", {}).get("Attributes", {})
                if not made_by_the_background(attributes):
                    role = attributes.get(LABEL_ROLE, "?")
                    self.found[role] = self.found.get(role, 0) + 1
        except Exception:  # noqa: BLE001 - the stream closed under the reader
            pass

    def __exit__(self, *exc) -> None:
        time.sleep(1)  # the last create events reach the stream
        self.stream.close()
        self.reader.join(timeout=10)


def agents_running(client) -> list:
    """Agent containers whose agent process runs (pool spares idle until they serve one)."""
    running = []
    for container in client.containers.list(filters={"label": f"{LABEL_ROLE}=agent"}, ignore_removed=True):
        try:
            processes = container.top().get("Processes") or []
        except docker.errors.APIError:
            continue
        if any("run_task_agent" in " ".join(process) for process in processes):
            running.append(container)
    return running


def leftovers(client) -> list[str]:
    listed = client.containers.list(all=True, filters={"label": LABEL_RUN}, ignore_removed=True)
    return [container.name for container in listed
            if not made_by_the_background(container.labels or {})]


@pytest.mark.docker
def test_two_nodes_grade_with_identical_tags_and_the_docker_backends_verdicts(
        ray_dataset, two_nodes, engine_b, docker_client, tmp_path):
    cluster, _ = two_nodes
    ids = sorted(EQUIVALENCE_SAMPLE)
    local = harness(dataset=ray_dataset, instance_ids=ids, agent="oracle", output_dir=tmp_path / "local",
                    model_name_or_path="local", progress=False, max_workers=2)
    with Created(docker_client) as created_a, Created(engine_b) as created_b:
        remote = harness(dataset=ray_dataset, instance_ids=ids, agent="oracle", output_dir=tmp_path / "ray",
                         model_name_or_path="ray", progress=False, max_workers=4, backend="ray",
                         ray_address=cluster.address)

    def verdicts(outcome):
        return {i: (r.eval_result, r.reason, tuple(sorted(r.test_names))) for i, r in outcome.results.items()}

    errors = {i: r.detail[-2000:] for outcome in (local, remote) for i, r in outcome.results.items()
              if r.eval_result == "error"}
    assert verdicts(remote) == verdicts(local), f"errors and their tracebacks: {errors}"
    assert remote.report["resolved_instances"] == len(ids) == len(EQUIVALENCE_SAMPLE)
    assert {r.grading_isolation for r in remote.results.values()} == {"trusted_process", "in_process"}
    graded_a, graded_b = created_a.get("grading", 0), created_b.get("grading", 0)
    assert graded_a and graded_b, f"grading landed on one engine only: a={graded_a} b={graded_b}"
    print(f"grading containers: engine a {graded_a}, engine b {graded_b}")
    tags_a = {tag for image in docker_client.images.list() for tag in image.tags}
    tags_b = {tag for image in engine_b.images.list() for tag in image.tags}
    assert remote.images.grading["python"] in tags_a & tags_b, "both nodes graded with the same python tag"
    assert docker_client.images.get("debian:bookworm-slim").id == engine_b.images.get("debian:bookworm-slim").id
    assert leftovers(docker_client) == [] and leftovers(engine_b) == []


@pytest.mark.docker
def test_a_node_lost_mid_run_leaves_its_instances_incomplete_and_resume_completes_them(
        ray_dataset, two_nodes, engine_b, docker_client, tmp_path, monkeypatch):
    cluster, node_b = two_nodes
    instances = {instance.instance_id: instance for instance in load_dataset(ray_dataset)}
    ids = sorted(EQUIVALENCE_SAMPLE)
    plan = {instance_id: {"sleep": 20, "files": {
        path.relative_to(instances[instance_id].reference_dir).as_posix(): path.read_text()
        for path in instances[instance_id].reference_dir.rglob("*") if path.is_file()}} for instance_id in ids}
    settings = dict(dataset=ray_dataset, instance_ids=ids, agent=str(WRITER), model_name_or_path="faults",
                    output_dir=tmp_path, progress=False, max_workers=4, backend="ray", ray_address=cluster.address,
                    pass_env=["TEST_AGENT_PLAN"])
    monkeypatch.setenv("TEST_AGENT_PLAN", json.dumps(plan))
    outcome: dict = {}
    runner = threading.Thread(target=lambda: outcome.update(first=harness(**settings)))
    runner.start()
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        agents_b = agents_running(engine_b)
        if agents_b:
            break
        time.sleep(0.5)
    assert agents_b, "no agent ran on node b"
    time.sleep(3)  # the agents on node b are mid-run (they sleep 20 s)
    cluster.remove_node(node_b)
    runner.join(timeout=600)
    first = outcome["first"]
    buckets = {i: (r.eval_result, r.reason) for i, r in first.results.items()}
    lost = {i for i, (bucket, _) in buckets.items() if bucket == "incomplete"}
    assert lost, f"no instance was lost with node b: {buckets}"
    assert {buckets[i][1] for i in lost} <= {"agent_interrupted", "grading_infrastructure_failed"}
    assert all(buckets[i] == ("resolved", "tests_passed") for i in set(ids) - lost), buckets
    assert leftovers(docker_client) == []
    assert leftovers(engine_b), "the lost node's containers are still there (reaped when it comes back)"
    # The node comes back on the same engine; the resume reaps what the lost node left and
    # re-runs exactly the incomplete instances.
    cluster.add_node(num_cpus=1, resources={RESOURCE: SLOTS}, env_vars={"DOCKER_HOST": second_engine.HOST})
    before = {i: (Path(tmp_path) / "faults_0" / f"{i}.json").stat().st_mtime for i in set(ids) - lost}
    second = harness(**settings)
    assert {i: r.eval_result for i, r in second.results.items()} == {i: "resolved" for i in ids}
    assert {i: (Path(tmp_path) / "faults_0" / f"{i}.json").stat().st_mtime for i in set(ids) - lost} == before
    assert leftovers(docker_client) == [] and leftovers(engine_b) == []
