"""Containers: the only module that creates, runs commands in, copies to/from and removes them.

Contract
- `Sandbox.start()` creates a labelled, resource-limited container running an idle init
  (`sleep infinity` under Docker's tini), network "none" unless asked otherwise.
- `Sandbox.exec(command, timeout)` runs `sh -c command` and returns `ExecResult(exit_code,
  output, timed_out, seconds, truncated)`. The command runs under GNU `timeout`, which
  signals the command's whole process group (TERM, then KILL 5 s later); a host-side
  watchdog kills every process in the container if even that does not end it. Output
  (stdout+stderr interleaved) is capped at `OUTPUT_CAP` bytes: the head and the tail are
  kept, with a visible marker where the middle was dropped.
- `kill_all_processes()` ends every process in the container (it kills the container's
  init, then starts the container again with its files intact), e.g. after an agent timed
  out, so nothing changes files while they are copied out.
- `close()` removes the container (force). Sandboxes are context managers; removal also
  happens on exceptions. Every container carries labels (run id, instance id, role, the
  owning process) so `remove_stale_containers` can clean up after a killed harness run.
"""

from __future__ import annotations

import io
import os
import secrets
import socket
import tarfile
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import docker
import docker.errors
import requests.exceptions

# What talking to the engine raises when it fails or goes away mid-call (a restart, a crash):
# the SDK's own errors, and the HTTP layer's below it.
ENGINE_ERRORS = (docker.errors.DockerException, requests.exceptions.RequestException, ConnectionError, OSError)

LABEL_PREFIX = "polyglot-harness"
LABEL_RUN = f"{LABEL_PREFIX}.run_id"
LABEL_INSTANCE = f"{LABEL_PREFIX}.instance_id"
LABEL_ROLE = f"{LABEL_PREFIX}.role"
LABEL_PID = f"{LABEL_PREFIX}.pid"
LABEL_HOST = f"{LABEL_PREFIX}.host"
OUTPUT_CAP = 2 * 1024 * 1024
KILL_GRACE_S = 5
# The unprivileged user (and group) of every language image (docker/common/Dockerfile): agents
# and tests run as it, and the files copied in for them are its own.
RUNNER_UID = 10001


class SandboxError(RuntimeError):
    """The container could not be created, started, copied to or from."""


class CommandNotStarted(SandboxError):
    """The engine refused to start a command (e.g. the container is gone): nothing ran."""


@dataclass(frozen=True)
class ExecResult:
    exit_code: int | None
    output: str
    timed_out: bool
    seconds: float
    truncated: bool = False
    disk_exceeded: bool = False  # the container's writable layer outgrew Limits.disk: processes killed


@dataclass(frozen=True)
class Limits:
    cpus: float = 1.0
    memory: str = "4g"
    pids: int = 1024
    # Bytes the container may add to its writable layer (None: no cap). Overlay2 on ext4 has
    # no quota, so a watchdog polls the layer's size during an exec run with guard_disk (the
    # agent, the tests) and, past the cap, kills every process in the container: disk use
    # stays near the cap plus one poll interval of writing.
    disk: int | None = None


DISK_POLL_S = 1.0


@dataclass
class Sandbox:
    client: docker.DockerClient
    image: str
    run_id: str
    instance_id: str
    role: str  # "agent" | "grading" | ...
    network: str = "none"
    limits: Limits = field(default_factory=Limits)
    environment: dict[str, str] = field(default_factory=dict)
    container: object | None = None
    # When set, close() hands the container to this background remover instead of waiting
    # for the engine (removal is off the critical path; the owner drains it before exiting).
    remover: "Remover | None" = None
    # Named volumes to mount: ((volume name, mount path, "ro" | "rw"), ...).
    volumes: tuple[tuple[str, str, str], ...] = ()
    # The uid (and gid) every process and copied-in file gets; None: root.
    user: int | None = RUNNER_UID

    def _new_name(self) -> str:
        safe_instance = "".join(c if c.isalnum() or c in "-_." else "-" for c in self.instance_id)
        return f"polyglot-{self.run_id}-{safe_instance}-{self.role}-{secrets.token_hex(3)}"

    def start(self) -> "Sandbox":
        labels = {
            LABEL_RUN: self.run_id, LABEL_INSTANCE: self.instance_id, LABEL_ROLE: self.role,
            LABEL_PID: str(os.getpid()), LABEL_HOST: socket.gethostname(),
        }
        try:
            self.container = self.client.containers.run(
                self.image, command=["sleep", "infinity"], detach=True, init=True, name=self._new_name(),
                labels=labels, network_mode=self.network, working_dir="/", environment=self.environment,
                user="0:0" if self.user is None else f"{self.user}:{self.user}",
                nano_cpus=int(self.limits.cpus * 1e9), mem_limit=self.limits.memory,
                memswap_limit=self.limits.memory, pids_limit=self.limits.pids,
                # No toolchain needs a capability: root in the container owns what it writes.
                cap_drop=["ALL"], security_opt=["no-new-privileges"],
                volumes={name: {"bind": path, "mode": mode} for name, path, mode in self.volumes},
            )
        except ENGINE_ERRORS as error:
            self.close()
            raise SandboxError(f"cannot start a {self.role} container from {self.image}: {error}") from error
        return self

    def __enter__(self) -> "Sandbox":
        return self.start() if self.container is None else self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        if self.container is None:
            return
        container, self.container = self.container, None
        if self.remover is not None:
            self.remover.remove(container)
        else:
            _remove_container(container)

    # --- commands ------------------------------------------------------------------------

    def exec(self, command: str, timeout: int, workdir: str = "/testbed",
             environment: dict[str, str] | None = None, guard_disk: bool = False) -> ExecResult:
        try:
            return self._exec(command, timeout, workdir, environment, guard_disk)
        except CommandNotStarted:
            raise
        except ENGINE_ERRORS as error:
            raise SandboxError(f"the engine failed during a command in the {self.role} container: "
                               f"{type(error).__name__}: {error}") from error

    def _exec(self, command: str, timeout: int, workdir: str, environment: dict[str, str] | None,
              guard_disk: bool) -> ExecResult:
        wrapped = ["timeout", "-k", str(KILL_GRACE_S), str(timeout), "sh", "-c", command]
        api = self.client.api
        started = time.monotonic()
        try:
            exec_id = api.exec_create(self._id(), wrapped, workdir=workdir, environment=environment or {},
                                      stdout=True, stderr=True)["Id"]
        except ENGINE_ERRORS as error:
            raise CommandNotStarted(f"the command did not start in the {self.role} container: {error}") from error
        stream = api.exec_start(exec_id, stream=True, demux=False)
        watchdog = threading.Timer(timeout + KILL_GRACE_S + 10, self.kill_all_processes)
        watchdog.daemon = True
        watchdog.start()
        disk_guard = _DiskGuard(self) if guard_disk and self.limits.disk else None
        collector = _CappedOutput(OUTPUT_CAP)
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
        return ExecResult(exit_code, collector.text(), timed_out, seconds, collector.truncated, exceeded)

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

    def kill_all_processes(self) -> None:
        """End every process in the container, then start it again, its files intact.

        Killing the container's init makes the kernel kill everything in its PID namespace,
        forks in flight included. (`kill -KILL -1` from inside also killed the idle
        `sleep infinity`, so tini exited and the container stopped: every later exec failed.)
        """
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
        self._put_at_root(tar_directory(source, prefix=destination.strip("/"), owner=self.user), destination)

    def _put_at_root(self, tar_bytes: bytes, destination: str) -> None:
        # Entries carry the destination path, so one put_archive at "/" needs no mkdir exec.
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
        archive = self.get_tar(path)
        files: dict[str, bytes] = {}
        if not archive:
            return files
        total = 0
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            for member in tar.getmembers():
                if not member.isfile():
                    continue
                total += member.size
                if total > max_bytes:
                    raise SandboxError(f"{path} holds more than {max_bytes} bytes")
                name = member.name.split("/", 1)[1] if "/" in member.name else member.name
                files[name] = tar.extractfile(member).read()
        return files

    def _id(self) -> str:
        return self._container().id

    def _container(self):
        if self.container is None:
            raise SandboxError("the sandbox is not started")
        return self.container


class _DiskGuard:
    """Polls a container's writable-layer size while a command runs; past Limits.disk it
    kills every process in the container (the command then ends) and says so."""

    def __init__(self, box: "Sandbox") -> None:
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


class _CappedOutput:
    """Keeps the first and last `cap/2` bytes of a stream."""

    def __init__(self, cap: int) -> None:
        self.half = cap // 2
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        if len(self.head) < self.half:
            room = self.half - len(self.head)
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > self.half:
                excess = len(self.tail) - self.half
                self.dropped += excess
                del self.tail[:excess]

    @property
    def truncated(self) -> bool:
        return self.dropped > 0

    def text(self) -> str:
        marker = f"\n[... {self.dropped} bytes of output dropped ...]\n".encode() if self.dropped else b""
        return (bytes(self.head) + marker + bytes(self.tail)).decode("utf-8", errors="replace")


def _parent_entries(tar: tarfile.TarFile, prefix: str, owner: int | None) -> None:
    parts = [part for part in prefix.split("/") if part]
    for depth in range(1, len(parts) + 1):
        info = tarfile.TarInfo("/".join(parts[:depth]))
        info.type = tarfile.DIRTYPE
        info.mode = 0o755
        info.mtime = int(time.time())
        tar.addfile(_owned(info, owner if depth == len(parts) else None))


def _owned(info: tarfile.TarInfo, owner: int | None) -> tarfile.TarInfo:
    """The entry owned by `owner` (uid and gid), or by root."""
    info.uid = info.gid = owner or 0
    info.uname = info.gname = ""
    return info


def _joined(prefix: str, name: str) -> str:
    return f"{prefix}/{name}" if prefix else name


def tar_directory(source: Path, prefix: str = "", owner: int | None = None) -> bytes:
    """`source`'s contents under `prefix`, every entry owned by `owner` (None: root); the
    parents of `prefix` are root's, `prefix` itself is the owner's."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        _parent_entries(tar, prefix, owner)
        for path in sorted(source.rglob("*")):
            info = tar.gettarinfo(path, arcname=_joined(prefix, path.relative_to(source).as_posix()))
            if info.isreg():
                with path.open("rb") as content:
                    tar.addfile(_owned(info, owner), content)
            else:
                tar.addfile(_owned(info, owner))
    return buffer.getvalue()


# --- removal off the critical path, and pre-started containers --------------------------------

def _remove_container(container) -> None:
    try:
        container.remove(force=True, v=True)
    except docker.errors.NotFound:
        pass
    except ENGINE_ERRORS:
        # Removal races with engine shutdown; remove_stale_containers retries later.
        pass


class Remover:
    """Removes containers in the background; `drain()` waits until every one is gone."""

    def __init__(self, workers: int = 2) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="remover")
        self._futures: list[Future] = []
        self._lock = threading.Lock()

    def remove(self, container) -> None:
        with self._lock:
            self._futures.append(self._pool.submit(_remove_container, container))

    def drain(self) -> None:
        with self._lock:
            futures, self._futures = self._futures, []
        for future in futures:
            future.result()


@dataclass(frozen=True)
class SandboxSpec:
    """Everything that defines a container except the instance it serves."""
    image: str
    role: str
    network: str = "none"
    limits: Limits = field(default_factory=Limits)
    environment: tuple[tuple[str, str], ...] = ()
    volumes: tuple[tuple[str, str, str], ...] = ()
    user: int | None = RUNNER_UID

    def sandbox(self, client: docker.DockerClient, run_id: str, instance_id: str,
                remover: "Remover | None") -> Sandbox:
        return Sandbox(client, self.image, run_id, instance_id, self.role, network=self.network,
                       limits=self.limits, environment=dict(self.environment), remover=remover,
                       volumes=self.volumes, user=self.user)


class SandboxPool:
    """Keeps up to `spares` started containers of one SandboxSpec ready, but never more than
    the instances still to come need, so start-up overlaps other work. A container serves
    one instance only and is never reused: every grading still starts from a fresh image."""

    def __init__(self, client: docker.DockerClient, spec: SandboxSpec, run_id: str, demand: int, spares: int,
                 remover: Remover | None) -> None:
        self.client, self.spec, self.run_id, self.remover = client, spec, run_id, remover
        self._demand = demand
        self._spares = spares
        self._ready: list[Sandbox] = []
        self._starting = 0
        self._closed = False
        self._active = False
        self._condition = threading.Condition()
        self._thread = threading.Thread(target=self._fill, name=f"pool-{spec.role}", daemon=True)
        self._thread.start()

    def _new(self, instance_id: str) -> Sandbox:
        return self.spec.sandbox(self.client, self.run_id, instance_id, self.remover)

    def _fill(self) -> None:
        while True:
            with self._condition:
                while not self._closed and (not self._active or
                                            len(self._ready) + self._starting >= min(self._spares, self._demand)):
                    self._condition.wait()
                if self._closed:
                    return
                self._starting += 1
            box = None
            try:
                box = self._new("pool").start()
            except SandboxError:
                time.sleep(1.0)  # acquire() starts its own and reports the error
            with self._condition:
                self._starting -= 1
                if box is not None and not self._closed:
                    self._ready.append(box)
                    box = None
                self._condition.notify_all()
            if box is not None:
                box.close()

    def activate(self) -> None:
        """Start filling (pools wait until their group is first used, so a run does not
        pre-start containers for languages whose turn has not come)."""
        with self._condition:
            self._active = True
            self._condition.notify_all()

    def acquire(self, instance_id: str) -> Sandbox:
        with self._condition:
            self._active = True
            self._demand = max(0, self._demand - 1)
            # A container already starting is sooner ready than a new one, and starting a
            # second would leave one unused.
            deadline = time.monotonic() + 60
            while not self._ready and self._starting and not self._closed and time.monotonic() < deadline:
                self._condition.wait(timeout=1.0)
            box = self._ready.pop(0) if self._ready else None
            self._condition.notify_all()
        if box is not None and box.running():
            return box
        if box is not None:
            box.close()  # stopped while it waited (e.g. the engine restarted): never handed out
        return self._new(instance_id).start()

    def close(self) -> None:
        with self._condition:
            self._closed = True
            ready, self._ready = self._ready, []
            self._condition.notify_all()
        self._thread.join(timeout=60)
        for box in ready:
            box.close()


class Sandboxes:
    """Where pipeline code gets its containers: from a pool when the run set one up for that
    SandboxSpec, else started on the spot. Removal goes through one background remover."""

    def __init__(self, client: docker.DockerClient, run_id: str, background_removal: bool = False) -> None:
        self.client, self.run_id = client, run_id
        self.remover = Remover() if background_removal else None
        self._pools: dict[SandboxSpec, SandboxPool] = {}
        self._groups: dict[SandboxSpec, str] = {}

    def add_pool(self, spec: SandboxSpec, demand: int, spares: int, group: str = "") -> None:
        """Pre-start containers of `spec` for `demand` future uses, `spares` at a time, once
        any pool of the same `group` (e.g. a language: agent then grading) is first used."""
        if demand > 0 and spares > 0 and spec not in self._pools:
            self._pools[spec] = SandboxPool(self.client, spec, self.run_id, demand, spares, self.remover)
            self._groups[spec] = group

    def activate(self, group: str) -> None:
        """Start pre-starting containers for `group` (e.g. the language of an instance whose
        turn is near)."""
        for spec, pool in self._pools.items():
            if self._groups[spec] == group:
                pool.activate()

    def start(self, spec: SandboxSpec, instance_id: str) -> Sandbox:
        pool = self._pools.get(spec)
        if pool is not None:
            self.activate(self._groups[spec])
            return pool.acquire(instance_id)
        return spec.sandbox(self.client, self.run_id, instance_id, self.remover).start()

    def close(self) -> None:
        for pool in self._pools.values():
            pool.close()
        self._pools.clear()
        if self.remover is not None:
            self.remover.drain()


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


def create_run_network(client: docker.DockerClient, run_id: str) -> str:
    """A bridge network of this run with inter-container traffic off: its agents reach the
    model API (NAT through the host) but not each other. Labelled like the run's containers."""
    name = f"{RUN_NETWORK_PREFIX}{run_id}"
    labels = {LABEL_RUN: run_id, LABEL_PID: str(os.getpid()), LABEL_HOST: socket.gethostname()}
    try:
        client.networks.create(name, driver="bridge", labels=labels,
                               options={"com.docker.network.bridge.enable_icc": "false"})
    except docker.errors.DockerException as error:
        raise SandboxError(f"cannot create the run's agent network {name}: {error}") from error
    return name


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
