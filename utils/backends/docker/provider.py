"""The Docker backend: sandboxes are containers, the provider talks to one Docker engine.

Below the seam (utils/seam/protocol.py): the only module that creates, runs commands in,
copies to/from and removes containers. How it keeps the sandbox contract:
- a container runs an idle init (`sleep infinity` under Docker's tini), labelled (run id,
  instance id, role, owning process and host) so `remove_stale_containers` can clean up after
  a killed harness; no capabilities, no-new-privileges; network "none" unless asked;
- a command runs under GNU `timeout`, which signals its whole process group (TERM, then KILL
  KILL_GRACE_S later); a host-side watchdog kills every process in the container if even
  that does not end it;
- the disk cap: overlay2 on ext4 has no quota, so a watchdog polls the writable layer's size
  and, past the cap, kills every process in the container;
- shared caches are named volumes; the run's agent network is a bridge with inter-container
  traffic off.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import struct
import threading
import time
from pathlib import Path
from typing import Iterator

import docker
import docker.errors
import requests.exceptions

from ...seam.protocol import KILL_GRACE_S, RUNNER_UID, SHARED_CACHE_PREFIX, ExecResult, ImageSet, Log, SandboxSpec
from ...seam.agent import agent_images
from ...seam.errors import CommandNotStarted, SandboxError
from ...seam.transfer import CappedOutput, files_from_tar, sandbox_name, strip_end_marker, tar_directory
from .engine import EngineError, engine_answers, ensure_engine
from .images import docker_client, ensure_agent_image, ensure_all_images, ensure_language_image, prune_agent_images

# What talking to the engine raises when it fails or goes away mid-call (a restart, a crash):
# the SDK's own errors, and the HTTP layer's below it.
ENGINE_ERRORS = (docker.errors.DockerException, requests.exceptions.RequestException, ConnectionError, OSError)

LABEL_PREFIX = "polyglot-harness"
LABEL_RUN = f"{LABEL_PREFIX}.run_id"
LABEL_INSTANCE = f"{LABEL_PREFIX}.instance_id"
LABEL_ROLE = f"{LABEL_PREFIX}.role"
LABEL_PID = f"{LABEL_PREFIX}.pid"
LABEL_HOST = f"{LABEL_PREFIX}.host"


DISK_POLL_S = 1.0


CPU_SHARES_VARIABLE = "POLYGLOT_SANDBOX_CPU_SHARES"


def sandbox_cpu_shares() -> int | None:
    """The CPU weight of this process's sandboxes against other containers when the CPUs are
    all busy (the engine's default, 1024, when unset): a preparation run in the background
    beside other work (the test suite's gate) gives its sandboxes less, so they take idle CPU
    and never slow the foreground's."""
    value = os.environ.get(CPU_SHARES_VARIABLE, "").strip()
    if not value:
        return None
    if not value.isdigit() or int(value) < 2:
        raise SandboxError(f"{CPU_SHARES_VARIABLE}={value!r}: a whole number >= 2 (the engine's default weight is 1024)")
    return int(value)


class DockerSandbox:
    """A container serving one instance in one role (see the module docstring)."""

    def __init__(self, client: docker.DockerClient, spec: SandboxSpec, run_id: str, instance_id: str,
                 start_slots: threading.Semaphore | None = None) -> None:
        """`start_slots`: shared by the sandboxes of one engine, bounds the starts in flight."""
        self.client, self.spec, self.run_id, self.instance_id = client, spec, run_id, instance_id
        self.start_slots = start_slots or contextlib.nullcontext()
        self.container = None
        self._other_uids: set[int] = set()  # uids exec ran as besides spec.user: kill_all_processes ends theirs too

    @property
    def role(self) -> str:
        return self.spec.role

    @property
    def limits(self):
        return self.spec.limits

    def start(self) -> "DockerSandbox":
        spec = self.spec
        labels = {
            LABEL_RUN: self.run_id, LABEL_INSTANCE: self.instance_id, LABEL_ROLE: spec.role,
            LABEL_PID: str(os.getpid()), LABEL_HOST: socket.gethostname(),
        }
        try:
            with self.start_slots:
                self.container = self._create_and_start(labels)
        except ENGINE_ERRORS as error:
            self.close()
            raise SandboxError(f"cannot start a {spec.role} container from {spec.image}: {error}") from error
        return self

    def _create_and_start(self, labels: dict[str, str]):
        spec = self.spec
        container = self.client.containers.create(
                spec.image, command=["sleep", "infinity"], detach=True, init=True,
                name=sandbox_name(self.run_id, self.instance_id, spec.role, secrets.token_hex(3)),
                labels=labels, network_mode=spec.network, working_dir="/", environment=dict(spec.environment),
                # Only the idle init and its `sleep infinity` run as root; every command runs
                # as spec.user (see exec), so kill_all_processes can end that user's processes
                # from inside without ending the container.
                user="0:0",
                nano_cpus=int(spec.limits.cpus * 1e9), cpu_shares=sandbox_cpu_shares(), mem_limit=spec.limits.memory,
                memswap_limit=spec.limits.memory, pids_limit=spec.limits.pids,
                # No toolchain needs a capability: root in the container owns what it writes.
                cap_drop=["ALL"], security_opt=["no-new-privileges"],
                volumes={name: {"bind": path, "mode": mode} for name, path, mode in spec.volumes},
                # The engine's /dev/shm is world-writable (1777): a directory the solution
                # process (SOLUTION_UID) and the test process would share. No shared IPC
                # namespace; /dev/shm a private tmpfs only the runner's group may write.
                ipc_mode="none", tmpfs={"/dev/shm": f"rw,nosuid,nodev,noexec,size=64m,mode=1770,gid={RUNNER_UID}"},
            )
        self.container = container  # removed by close() even when it never starts
        container.start()
        return container

    def __enter__(self) -> "DockerSandbox":
        return self.start() if self.container is None else self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        if self.container is None:
            return
        container, self.container = self.container, None
        _remove_container(container)

    # --- commands ------------------------------------------------------------------------

    def exec(self, command: str, timeout: int, workdir: str = "/testbed",
             environment: dict[str, str] | None = None, guard_disk: bool = False,
             uid: int | None = None) -> ExecResult:
        try:
            return self._exec(command, timeout, workdir, environment, guard_disk, uid)
        except CommandNotStarted:
            raise
        except ENGINE_ERRORS as error:
            raise SandboxError(f"the engine failed during a command in the {self.role} container: "
                               f"{type(error).__name__}: {error}") from error

    def _exec(self, command: str, timeout: int, workdir: str, environment: dict[str, str] | None,
              guard_disk: bool, uid: int | None = None) -> ExecResult:
        # The outer shell (outside the command's process group, so a timeout spares it) ends
        # the output with a marker nobody else knows: without it the stream was cut short.
        # stderr joins stdout in ONE pipe first: the engine copies two pipes independently, so
        # a late stderr chunk could land after the marker (1 exec in 12 did) and the order of
        # interleaved lines was not kept.
        marker = f"polyglot-end-{secrets.token_hex(8)}"
        wrapped = ["sh", "-c", f'exec 2>&1; timeout -k {KILL_GRACE_S} {timeout} sh -c "$1"; code=$?; '
                               f'printf "\\n{marker}\\n"; exit $code', "sh", command]
        api = self.client.api
        started = time.monotonic()
        try:
            exec_id = api.exec_create(self._id(), wrapped, workdir=workdir, environment=environment or {},
                                      stdout=True, stderr=True, user=self._exec_user(uid))["Id"]
        except ENGINE_ERRORS as error:
            raise CommandNotStarted(f"the command did not start in the {self.role} container: {error}") from error
        stream = exec_output(api, exec_id, read_timeout=timeout + KILL_GRACE_S + 60)
        watchdog = threading.Timer(timeout + KILL_GRACE_S + 10, self.kill_all_processes)
        watchdog.daemon = True
        watchdog.start()
        disk_guard = _DiskGuard(self) if guard_disk and self.limits.disk else None
        collector = CappedOutput()
        try:
            for chunk in stream:
                collector.add(chunk)
        finally:
            watchdog.cancel()
            if disk_guard is not None:
                disk_guard.stop()
        exit_code = api.exec_inspect(exec_id).get("ExitCode")
        seconds = time.monotonic() - started
        exceeded = disk_guard is not None and disk_guard.exceeded
        timed_out = exit_code in (124, 137) and seconds >= timeout - 0.5 and not exceeded
        output, complete = strip_end_marker(collector.text(), marker)
        return ExecResult(exit_code=exit_code, output=output, timed_out=timed_out, seconds=seconds, truncated=collector.truncated, disk_exceeded=exceeded, complete=complete)

    def running(self) -> bool:
        try:
            container = self._container()
            container.reload()
            return container.status == "running"
        except ENGINE_ERRORS:
            return False

    def writable_layer_bytes(self) -> int:
        listed = self.client.api.containers(all=True, size=True, filters={"id": self._id()})
        return int(listed[0].get("SizeRw") or 0) if listed else 0

    def _exec_user(self, uid: int | None = None) -> str:
        if uid is None:
            uid = self.spec.user
        else:
            self._other_uids.add(uid)
        return "0:0" if uid is None else f"{uid}:{uid}"

    def kill_all_processes(self) -> None:
        """End every process of the sandbox's user, its files intact; exec still works.

        `kill -KILL -1` run as that user signals, in one pass the kernel makes under the task
        list lock (no fork slips through), every process the user may signal: all of its
        own, never root's idle init and `sleep infinity`. One exec, where restarting the
        container cost 0.3 s idle and several seconds on a busy engine. When that exec
        cannot run (a root sandbox, or the pids limit reached by a fork bomb), the container
        is killed and started again instead: killing its init makes the kernel kill
        everything in its PID namespace."""
        uids = (self.spec.user, *sorted(self._other_uids - {self.spec.user}))
        if None not in uids and all(self._kill_user_processes(uid) for uid in uids):
            return
        self._restart()

    def _kill_user_processes(self, uid: int) -> bool:
        try:
            exec_id = self.client.api.exec_create(self._id(), ["sh", "-c", "kill -KILL -1; kill -KILL -1; true"],
                                                  user=f"{uid}:{uid}", stdout=True, stderr=True)["Id"]
            self.client.api.exec_start(exec_id)
            return self.client.api.exec_inspect(exec_id).get("ExitCode") == 0
        except (SandboxError, *ENGINE_ERRORS):
            return False

    def _restart(self) -> None:
        try:
            container = self.client.containers.get(self._id())
            if container.status == "running":
                container.kill()
            container.wait(timeout=30)
            container.start()
        except ENGINE_ERRORS:
            pass  # a container that is gone shows up in the next exec or copy

    def stop(self) -> None:
        """Kill every process in the container and leave it stopped: its files can still be
        copied out (get_files), but nothing runs any more and exec is no longer possible."""
        try:
            container = self._container()
            container.kill()
            container.wait(timeout=30)
        except ENGINE_ERRORS as error:
            if "is not running" not in str(error):
                raise SandboxError(f"cannot stop {self.role} container: {error}") from error

    # --- files -----------------------------------------------------------------------------

    def put_directory(self, source: Path, destination: str) -> None:
        """Copy a host directory's contents to `destination` (created, parents included)."""
        self.put_tar(tar_directory(source, prefix=destination.strip("/"), owner=self.spec.user), destination)

    def put_tar(self, tar_bytes: bytes, destination: str) -> None:
        """Unpack a tar whose entries carry their full path below "/" (transfer.tar_directory
        with prefix `destination`): one put_archive, no mkdir exec. `destination` names the
        copy in errors. The Ray backend ships such tars from the driver."""
        try:
            if not self._container().put_archive("/", tar_bytes):
                raise SandboxError(f"copy into {destination} was refused")
        except ENGINE_ERRORS as error:
            raise SandboxError(f"copy into {destination} failed: {error}") from error

    def get_tar(self, path: str) -> bytes:
        try:
            chunks, _ = self._container().get_archive(path)
            return b"".join(chunks)
        except docker.errors.NotFound:
            return b""
        except ENGINE_ERRORS as error:
            raise SandboxError(f"copy out of {path} failed: {error}") from error

    def get_files(self, path: str, max_bytes: int = 32 * 1024 * 1024) -> dict[str, bytes]:
        """Regular files under `path` (a directory or file) as {relative name: content}."""
        return files_from_tar(self.get_tar(path), path, max_bytes)

    def _id(self) -> str:
        return self._container().id

    def _container(self):
        if self.container is None:
            raise SandboxError("the sandbox is not started")
        return self.container


def exec_output(api: docker.APIClient, exec_id: str, read_timeout: float | None = None) -> Iterator[bytes]:
    """Start an attached exec and yield its output frames (stdout and stderr, multiplexed) until
    the stream ends.

    Read through the buffered reader the HTTP client parsed the response headers with, not
    the raw socket under it as docker-py's exec_start does: output that arrives together with
    the headers already sits in that reader's buffer, and the raw socket never sees it again
    (docker/docker-py#3332). Seen here as whole outputs lost on a loaded machine: 26 of 60
    quick execs through the Ray backend, whose actors read more slowly.

    `read_timeout`: how long the stream may stay silent (the client's API timeout otherwise):
    a command that prints nothing for minutes (a slow test suite whose runner reports at the
    end) is not a dead engine; the command's own timeout and the watchdog end it."""
    response = api._post_json(api._url("/exec/{0}/start", exec_id), headers={"Connection": "Upgrade", "Upgrade": "tcp"},
                              data={"Tty": False, "Detach": False}, stream=True)
    api._raise_for_status(response)
    reader = response.raw._fp.fp
    if read_timeout is not None:
        reader.raw._sock.settimeout(read_timeout)  # the socket under the reader (a SocketIO)
    try:
        while True:
            header = reader.read(8)
            if len(header) < 8:
                return
            size = struct.unpack(">BxxxL", header)[1]
            payload = reader.read(size)
            if payload:
                yield payload
            if len(payload) < size:
                return
    finally:
        response.close()


class _DiskGuard:
    """Polls a container's writable-layer size while a command runs; past Limits.disk it
    kills every process in the container (the command then ends) and says so."""

    def __init__(self, box: DockerSandbox) -> None:
        self.box = box
        self.exceeded = False
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True, name="disk-guard")
        self._thread.start()

    def _watch(self) -> None:
        while not self._stopped.wait(DISK_POLL_S):
            try:
                used = self.box.writable_layer_bytes()
            except ENGINE_ERRORS:
                continue
            if used > (self.box.limits.disk or 0):
                self.exceeded = True
                self.box.kill_all_processes()
                return

    def stop(self) -> None:
        self._stopped.set()
        self._thread.join(timeout=30)


# --- removal ----------------------------------------------------------------------------------

def _remove_container(container) -> None:
    try:
        container.remove(force=True, v=True)
    except docker.errors.NotFound:
        pass
    except ENGINE_ERRORS:
        # Removal races with engine shutdown; remove_stale_containers retries later.
        pass


# --- clean-up -------------------------------------------------------------------------------

def list_run_containers(client: docker.DockerClient, run_id: str | None = None) -> list:
    label = f"{LABEL_RUN}={run_id}" if run_id else LABEL_RUN
    # Containers are removed concurrently (background removal, other runs): one removed
    # between the engine's listing and its inspection is simply gone, not an error.
    return client.containers.list(all=True, filters={"label": label}, ignore_removed=True)


def remove_run_containers(client: docker.DockerClient, run_id: str) -> int:
    """Remove the run's containers; 0 when the engine does not answer (a later run reaps them)."""
    try:
        containers = list_run_containers(client, run_id)
    except ENGINE_ERRORS:
        return 0
    for container in containers:
        _remove_container(container)
    return len(containers)


def remove_stale_containers(client: docker.DockerClient) -> int:
    """Remove labelled containers whose owning harness process (on this host) is gone."""
    removed = 0
    for container in list_run_containers(client):
        if _owner_is_gone(container.labels or {}):
            _remove_container(container)
            removed += 1
    return removed


def _owner_is_gone(labels: dict[str, str]) -> bool:
    """Labelled by a harness process on this host that no longer runs."""
    if labels.get(LABEL_HOST) != socket.gethostname():
        return False
    try:
        pid = int(labels.get(LABEL_PID, "0"))
    except ValueError:
        pid = 0
    return not (pid > 0 and process_alive(pid))


# --- the run's agent network ------------------------------------------------------------------

RUN_NETWORK_PREFIX = "polyglot-harness-net-"


NETWORK_ATTEMPTS = 3


def create_run_network(client: docker.DockerClient, run_id: str) -> str:
    """A bridge network of this run with inter-container traffic off: its agents reach the
    model API (NAT through the host) but not each other. Labelled like the run's containers."""
    name = f"{RUN_NETWORK_PREFIX}{run_id}"
    labels = {LABEL_RUN: run_id, LABEL_PID: str(os.getpid()), LABEL_HOST: socket.gethostname()}
    for attempt in range(1, NETWORK_ATTEMPTS + 1):
        try:
            if not any(network.name == name for network in client.networks.list(names=[name])):
                client.networks.create(name, driver="bridge", labels=labels,
                                       options={"com.docker.network.bridge.enable_icc": "false"})
            return name
        except docker.errors.DockerException as error:
            # The engine rewrites the host's FORWARD chain for a new bridge; another writer of
            # it at the same moment (a second engine on the host) makes that fail, once.
            if "iptables" not in str(error) or attempt == NETWORK_ATTEMPTS:
                raise SandboxError(f"cannot create the run's agent network {name}: {error}") from error
            time.sleep(0.5 * attempt)
    raise AssertionError("unreachable")


def remove_run_network(client: docker.DockerClient, run_id: str) -> None:
    for network in client.networks.list(filters={"label": f"{LABEL_RUN}={run_id}"}):
        _remove_network(network)


def remove_stale_networks(client: docker.DockerClient) -> int:
    """Remove run networks whose owning harness process (on this host) is gone."""
    removed = 0
    for network in client.networks.list(filters={"label": LABEL_RUN}):
        if _owner_is_gone(network.attrs.get("Labels") or {}):
            removed += _remove_network(network)
    return removed


def _remove_network(network) -> int:
    try:
        network.remove()
        return 1
    except docker.errors.NotFound:
        return 0
    except docker.errors.APIError:
        return 0  # still has endpoints (a container being removed): a later run reaps it


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


# --- the provider ----------------------------------------------------------------------------

ENGINE_RETURN_WAIT_S = 60
# Container starts in flight at once per engine. The engine's throughput is the same from
# about 8 on (2 cores: ~0.19 s of engine time per start at 8 or 32 at once); beyond that each
# start only waits longer inside the engine, and the first instances of a wave no longer
# get theirs first.
START_CONCURRENCY = 8


class DockerProvider:
    """Sandboxes as containers of the Docker engine the SDK finds (DOCKER_HOST honoured)."""

    name = "docker"
    starts_ahead = True

    def __init__(self, client: docker.DockerClient | None = None) -> None:
        self._client = client
        self._start_slots = threading.BoundedSemaphore(START_CONCURRENCY)

    @property
    def client(self) -> docker.DockerClient:
        if self._client is None:
            self._client = docker_client()
        return self._client

    def prepare(self, log: Log) -> None:
        if self._client is None:
            try:
                ensure_engine(log=log)
            except EngineError as error:
                raise SandboxError(str(error)) from error
        try:
            remove_stale_containers(self.client)
            remove_stale_networks(self.client)
        except ENGINE_ERRORS as error:
            raise SandboxError(f"the Docker engine failed while removing stale containers: {error}") from error

    def ensure_images(self, specs, agent, settings, workdir: Path, log: Log) -> ImageSet:
        grading = {spec.name: ensure_language_image(self.client, spec, settings, log).tag for spec in specs}
        agents = agent_images(agent, grading, lambda language, image: ensure_agent_image(
            self.client, agent, language, image, workdir, log).tag)
        return ImageSet(grading, agents)

    def build_images(self, settings, languages: list[str] | None, log: Log) -> list:
        """Every image (base, common, each language's), built when missing; ImageResults."""
        return ensure_all_images(self.client, settings, languages, log=log)

    def sandbox(self, spec: SandboxSpec, run_id: str, instance_id: str) -> DockerSandbox:
        return DockerSandbox(self.client, spec, run_id, instance_id, self._start_slots)

    def create_run_network(self, run_id: str) -> str:
        return create_run_network(self.client, run_id)

    def run_sandboxes(self, run_id: str) -> list[str]:
        try:
            return [container.name for container in list_run_containers(self.client, run_id)]
        except ENGINE_ERRORS as error:
            raise SandboxError(f"cannot list the run's containers: {error}") from error

    def clean_up_run(self, run_id: str) -> int:
        """When the engine went away (a restart), wait a while for it to come back; failing
        that, the next run reaps what is left (labels)."""
        deadline = time.monotonic() + ENGINE_RETURN_WAIT_S
        while not engine_answers(timeout=2.0) and time.monotonic() < deadline:
            time.sleep(1.0)
        try:
            removed = remove_run_containers(self.client, run_id)
            remove_run_network(self.client, run_id)
            return removed
        except ENGINE_ERRORS:
            return 0

    def remove_caches(self) -> int:
        """Every build-cache volume no container uses, and every agent layer image."""
        removed = prune_agent_images(self.client)
        for volume in self.client.volumes.list():
            if not volume.name.startswith(SHARED_CACHE_PREFIX):
                continue
            try:
                volume.remove()
                removed += 1
            except docker.errors.APIError:
                pass  # in use by a running grading: keep it
        return removed


def open_provider() -> DockerProvider:
    """The backend's registration hook (utils/seam/registry.py); it takes no options."""
    return DockerProvider()
