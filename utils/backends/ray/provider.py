"""The Ray backend: instances run on the nodes of a Ray cluster, each beside its own Docker engine.

    harness.py --backend ray --ray_address auto|HOST:PORT

The driver (harness.py) keeps selection, resume, results, progress and the report. Below the
seam, a sandbox is a Ray actor placed on a node that offers the custom resource RESOURCE (its
docker slots: how many containers it runs at once; `ray start --resources
'{"polyglot_docker_slots": 16}'`); the actor drives a Docker sandbox (the Docker backend's
public API, utils/backends/docker/__init__.py) on that node's engine (the engine the node's
`ray start` was given, e.g. by DOCKER_HOST). Files travel as tar bytes between the driver and
the actor. Nodes get only the code they import (shipping.py), under the driver's package name.

Images without a registry: the driver picks one node as the image source; its base image is
saved (`docker save`) once, shipped through Ray's object store and loaded on every node that
lacks it with the same id; then every node builds what it lacks from the same
content-addressed recipes (the Docker backend's images.py), so tags agree across nodes, and the provider
refuses to run when they do not.

Faults: actors are never restarted and their calls never retried by Ray (an agent phase
costs model money). A node lost mid-command (or a worker killed by Ray's memory monitor)
surfaces as a SandboxError: an agent phase ends `incomplete` (`agent_interrupted`), a
sandbox that could not start is retried on another node, grading is retried and then ends
`incomplete` (`grading_infrastructure_failed`); a resume re-runs exactly those. Containers
of a lost node keep their labels; `prepare()` on the next run reaps them on every node whose
owning process is gone.
"""

from __future__ import annotations

import io
import os
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Callable

from ...languages import LANGUAGES
from ...seam.agent import PreparedAgent, agent_images
from ...seam.errors import SandboxError
from ...seam.image_settings import ImageSettings
from ...seam.protocol import ExecResult, ImageSet, Log, SandboxSpec
from ...seam.transfer import tar_directory
from ..docker import (DockerProvider, DockerSandbox, create_run_network, docker_client, ensure_agent_image,
                      ensure_base_image, ensure_language_image, list_run_containers, remove_run_containers,
                      remove_run_network, remove_stale_containers, remove_stale_networks)
from .shipping import stage

RESOURCE = "polyglot_docker_slots"
ADDRESS_ENV = "POLYGLOT_RAY_ADDRESS"
START_TIMEOUT_S = 600  # waiting for a free docker slot somewhere in the cluster
NODE_TASK_TIMEOUT_S = 3600  # image builds on a fresh node included


def _ray():
    try:
        import ray
    except ImportError as error:
        raise SandboxError("the ray backend needs Ray: pip install -r requirements-ray.txt") from error
    return ray


def _lost(error: BaseException) -> bool:
    """Ray's own failures (a node or worker gone, an actor dead): not the sandbox's errors."""
    ray = _ray()
    return isinstance(error, (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError,
                              ray.exceptions.ObjectLostError, ray.exceptions.NodeDiedError,
                              ray.exceptions.OutOfMemoryError, ray.exceptions.GetTimeoutError))


def _get(refs, what: str, timeout: float | None = None):
    ray = _ray()
    try:
        return ray.get(refs, timeout=timeout)
    except SandboxError:
        raise
    except Exception as error:  # noqa: BLE001 - every Ray failure is the sandbox's failure here
        cause = "the Ray node or worker was lost" if _lost(error) else "Ray failed"
        raise SandboxError(f"{what}: {cause}: {type(error).__name__}: {str(error).splitlines()[0][:300]}") from error


def _submitted(submit: Callable[[], object], what: str):
    """`submit()` (an actor created, a task submitted): a failure there (an actor already dead,
    a driver reconnecting) is the sandbox's failure too, so a grading retries it like any other
    infrastructure failure instead of ending in `unexpected_error`."""
    try:
        return submit()
    except Exception as error:  # noqa: BLE001 - every Ray failure is the sandbox's failure here
        raise SandboxError(f"{what}: Ray refused it: {type(error).__name__}: {str(error)[:300]}") from error


# --- on the nodes ----------------------------------------------------------------------------

class _SandboxActor:
    """Lives on a node; drives one container of that node's engine."""

    def __init__(self, spec: SandboxSpec, run_id: str, instance_id: str) -> None:
        self.box = DockerSandbox(docker_client(), spec, run_id, instance_id)

    def start(self) -> str:
        self.box.start()
        return os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")

    def exec(self, command: str, timeout: int, workdir: str, environment: dict[str, str] | None,
             guard_disk: bool, uid: int | None = None) -> ExecResult:
        return self.box.exec(command, timeout, workdir, environment, guard_disk, uid)

    def put_tar(self, archive: bytes, destination: str) -> None:
        self.box.put_tar(archive, destination)

    def get_files(self, path: str, max_bytes: int) -> dict[str, bytes]:
        return self.box.get_files(path, max_bytes)

    def kill_all_processes(self) -> None:
        self.box.kill_all_processes()

    def stop(self) -> None:
        self.box.stop()

    def running(self) -> bool:
        return self.box.running()

    def close(self) -> None:
        self.box.close()


def _node_prepare() -> dict:
    """Make sure the node's engine answers; reap containers and networks of dead owners."""
    client = docker_client()
    client.ping()
    return {"containers": remove_stale_containers(client), "networks": remove_stale_networks(client)}


def _save_base(settings: ImageSettings) -> tuple[str, bytes]:
    """The source node's base image (built when missing) as (id, `docker save` bytes)."""
    client = docker_client(timeout=NODE_TASK_TIMEOUT_S)
    ensure_base_image(client, settings.base_image, log=lambda message: None)
    image = client.images.get(settings.base_image)
    return image.id, b"".join(image.save(named=True))


def _node_images(settings: ImageSettings, languages: list[str], agent_name: str | None, agent_hash: str | None,
                 agent_tar: bytes | None, base_id: str, base_ref: list) -> dict:
    """Load the shipped base image unless the node has it with the same id, then build what
    the node lacks; the tags and how long it took."""
    started = time.monotonic()
    client = docker_client(timeout=NODE_TASK_TIMEOUT_S)
    loaded = False
    try:
        present = client.images.get(settings.base_image).id == base_id
    except Exception:  # noqa: BLE001 - missing or unreadable: load it
        present = False
    if not present:
        client.images.load(_ray().get(base_ref[0]))
        loaded = True
    messages: list[str] = []
    grading = {name: ensure_language_image(client, LANGUAGES[name], settings, messages.append).tag
               for name in languages}
    with tempfile.TemporaryDirectory(prefix="polyglot-ray-agent-") as workdir:
        agent = _unpacked_agent(agent_name, agent_hash, agent_tar, Path(workdir))
        agents = agent_images(agent, grading, lambda language, image: ensure_agent_image(
            client, agent, language, image, Path(workdir), messages.append).tag)
    return {"grading": grading, "agent": agents, "base_loaded": loaded,
            "seconds": round(time.monotonic() - started, 1), "engine": os.environ.get("DOCKER_HOST", "")}


def _unpacked_agent(name: str | None, agent_hash: str | None, tar: bytes | None, workdir: Path) -> PreparedAgent | None:
    """The driver's PreparedAgent again, its tree (shipped as tar bytes) unpacked under `workdir`."""
    if name is None:
        return None
    tree = None
    if tar is not None:
        tree = workdir / "agent"
        with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
            archive.extractall(workdir, filter="data")
    return PreparedAgent(name=name, tree=tree, agent_hash=agent_hash or "")


def _node_sandboxes(run_id: str) -> list[str]:
    return [container.name for container in list_run_containers(docker_client(), run_id)]


def _node_clean_up(run_id: str) -> int:
    client = docker_client()
    removed = remove_run_containers(client, run_id)
    remove_run_network(client, run_id)
    return removed


def _node_network(run_id: str) -> str:
    return create_run_network(docker_client(), run_id)


def _node_remove_caches() -> int:
    return DockerProvider().remove_caches()


def _node_build_images(settings: ImageSettings, languages: list[str] | None) -> list:
    return DockerProvider().build_images(settings, languages, log=lambda message: None)


# --- on the driver ---------------------------------------------------------------------------

_remote_actor = None


def _actor_class():
    """_SandboxActor as a Ray actor class, registered once per driver (not once per sandbox)."""
    global _remote_actor
    if _remote_actor is None:
        _remote_actor = _ray().remote(_SandboxActor)
    return _remote_actor


class RaySandbox:
    """A sandbox on some node of the cluster (see the module docstring)."""

    def __init__(self, provider: "RayProvider", spec: SandboxSpec, run_id: str, instance_id: str) -> None:
        self.provider, self.spec, self.run_id, self.instance_id = provider, spec, run_id, instance_id
        self.actor = None
        self.engine = ""  # the node's engine, once started

    def start(self) -> "RaySandbox":
        try:
            self.actor = _submitted(lambda: _actor_class().options(
                num_cpus=0, resources={RESOURCE: 1}, max_restarts=0, max_task_retries=0, max_concurrency=4,
                scheduling_strategy="SPREAD").remote(self.spec, self.run_id, self.instance_id),
                f"creating a {self.spec.role} sandbox's actor")
            what = f"starting a {self.spec.role} sandbox"
            self.engine = _get(_submitted(self.actor.start.remote, what), what, START_TIMEOUT_S)
        except SandboxError:
            self._kill_actor()
            raise
        return self

    def __enter__(self) -> "RaySandbox":
        return self.start() if self.actor is None else self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _call(self, method: str, *args):
        if self.actor is None:
            raise SandboxError("the sandbox is not started")
        what = f"{method} in the {self.spec.role} sandbox"
        return _get(_submitted(lambda: getattr(self.actor, method).remote(*args), what), what)

    def exec(self, command: str, timeout: int, workdir: str = "/testbed",
             environment: dict[str, str] | None = None, guard_disk: bool = False,
             uid: int | None = None) -> ExecResult:
        return self._call("exec", command, timeout, workdir, environment, guard_disk, uid)

    def put_directory(self, source: Path, destination: str) -> None:
        self._call("put_tar", tar_directory(source, prefix=destination.strip("/"), owner=self.spec.user),
                   destination)

    def get_files(self, path: str, max_bytes: int = 32 * 1024 * 1024) -> dict[str, bytes]:
        return self._call("get_files", path, max_bytes)

    def kill_all_processes(self) -> None:
        self._call("kill_all_processes")

    def stop(self) -> None:
        self._call("stop")

    def running(self) -> bool:
        try:
            return bool(self._call("running"))
        except SandboxError:
            return False

    def close(self) -> None:
        if self.actor is None:
            return
        try:
            self._call("close")
        except SandboxError:
            pass  # the node is gone: its containers are reaped when it comes back (labels)
        self._kill_actor()

    def _kill_actor(self) -> None:
        actor, self.actor = self.actor, None
        try:
            _ray().kill(actor, no_restart=True)
        except Exception:  # noqa: BLE001 - already dead
            pass


class RayProvider:
    name = "ray"
    starts_ahead = False  # an idle actor would hold a node slot (see SandboxProvider)

    def __init__(self, address: str | None = None) -> None:
        self.address = address or os.environ.get(ADDRESS_ENV, "auto")
        self.image_report: dict[str, dict] = {}  # node id -> what _node_images said

    # --- cluster -------------------------------------------------------------------------------

    def prepare(self, log: Log) -> None:
        ray = _ray()
        if not ray.is_initialized():
            with tempfile.TemporaryDirectory(prefix="polyglot-ray-ship-") as staged:
                stage(Path(staged))
                try:
                    ray.init(address=self.address, runtime_env={"working_dir": staged}, log_to_driver=False,
                             logging_level="WARNING")
                except Exception as error:  # noqa: BLE001 - one line for the user
                    raise SandboxError(f"cannot join the Ray cluster at {self.address}: {error}") from error
        nodes = self.nodes()
        if not nodes:
            raise SandboxError(f"no live Ray node offers the {RESOURCE} resource; start each Docker machine with "
                               f"ray start --address ... --resources '{{\"{RESOURCE}\": N}}'")
        reaped = self._on_every_node(_node_prepare, "preparing the node")
        log(f"ray: {len(nodes)} node(s) with {RESOURCE}; reaped "
            f"{sum(item['containers'] for item in reaped.values())} stale container(s)")

    def nodes(self) -> list[str]:
        ray = _ray()
        return sorted(node["NodeID"] for node in ray.nodes()
                      if node.get("Alive") and node.get("Resources", {}).get(RESOURCE, 0) > 0)

    def _on_every_node(self, function, what: str, *args) -> dict[str, object]:
        ray = _ray()
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        remote = ray.remote(function)
        refs = {node: remote.options(num_cpus=0, max_retries=0, scheduling_strategy=NodeAffinitySchedulingStrategy(
                    node, soft=False)).remote(*args) for node in self.nodes()}
        return {node: _get(ref, f"{what} on node {node[:12]}", NODE_TASK_TIMEOUT_S) for node, ref in refs.items()}

    # --- images --------------------------------------------------------------------------------

    def ensure_images(self, specs, agent, settings: ImageSettings, workdir: Path, log: Log) -> ImageSet:
        ray = _ray()
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        source = self.nodes()[0]
        save = ray.remote(_save_base).options(num_cpus=0, max_retries=0, scheduling_strategy=
                                              NodeAffinitySchedulingStrategy(source, soft=False))
        started = time.monotonic()
        base_id, base_tar = _get(save.remote(settings), "saving the base image on the source node",
                                 NODE_TASK_TIMEOUT_S)
        base_ref = ray.put(base_tar)
        log(f"ray: base image {base_id[:19]} ({len(base_tar) >> 20} MiB) saved on node {source[:12]} "
            f"in {time.monotonic() - started:.1f}s")
        agent_tar = None
        if agent is not None and agent.tree is not None:
            agent_tar = tar_directory(agent.tree, prefix="agent")
        reports = self._on_every_node(_node_images, "building images", settings, [spec.name for spec in specs],
                                      agent.name if agent is not None else None,
                                      agent.agent_hash if agent is not None else None, agent_tar, base_id,
                                      [base_ref])
        self.image_report = reports
        first = next(iter(reports.values()))
        for node, report in reports.items():
            log(f"ray: node {node[:12]} ({report['engine'] or 'default engine'}): images ready in "
                f"{report['seconds']}s, base {'loaded' if report['base_loaded'] else 'present'}")
            if (report["grading"], report["agent"]) != (first["grading"], first["agent"]):
                raise SandboxError(f"the nodes disagree on image tags (node {node[:12]}: {report['grading']} "
                                   f"vs {first['grading']}); their recipes or base images differ")
        return ImageSet(dict(first["grading"]), dict(first["agent"]))

    def build_images(self, settings: ImageSettings, languages: list[str] | None, log: Log) -> list:
        results = self._on_every_node(_node_build_images, "building images", settings, languages)
        return next(iter(results.values()))

    # --- sandboxes -----------------------------------------------------------------------------

    def sandbox(self, spec: SandboxSpec, run_id: str, instance_id: str) -> RaySandbox:
        return RaySandbox(self, spec, run_id, instance_id)

    def create_run_network(self, run_id: str) -> str:
        names = set(self._on_every_node(_node_network, "creating the run's network", run_id).values())
        return names.pop()

    def run_sandboxes(self, run_id: str) -> list[str]:
        listed = self._on_every_node(_node_sandboxes, "listing the run's containers", run_id)
        return [name for names in listed.values() for name in names]

    def clean_up_run(self, run_id: str) -> int:
        try:
            return sum(self._on_every_node(_node_clean_up, "removing the run's containers", run_id).values())
        except SandboxError:
            return 0  # a node went away: its containers are reaped when it comes back

    def remove_caches(self) -> int:
        return sum(self._on_every_node(_node_remove_caches, "removing caches").values())


def open_provider(address: str | None = None) -> RayProvider:
    """The backend's registration hook (utils/seam/registry.py): `address` is the cluster's
    (auto | HOST:PORT; default $POLYGLOT_RAY_ADDRESS, else auto)."""
    return RayProvider(address)
