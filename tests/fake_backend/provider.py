"""The fake backend's sandboxes and provider (see __init__.py): no engine, no images.

A sandbox is a directory on the host (its paths mapped under it: /conformance -> <root>/conformance)
and its commands are host processes: in a session of their own (a timeout kills the whole
group), run as the spec's user (setuid, so the host must run the tests as root), in a new
network namespace for network "none" (unshare(CLONE_NEWNET)), with RLIMIT_AS and RLIMIT_NPROC for the
memory limit, a cgroup (v1 pids controller) for the pids limit and for finding every process
of the sandbox, and a poller for the disk cap. Commands see the sandbox's paths only
through their working directory: it is a fake, good for the conformance suite and for
pipeline tests whose commands use relative paths, never for running an agent.
"""

from __future__ import annotations

import ctypes
import functools
import io
import os
import resource
import shutil
import signal
import subprocess
import tarfile
import tempfile
import threading
import weakref
import time
from pathlib import Path

from polyglot_harness.utils.seam.protocol import KILL_GRACE_S, ExecResult, ImageSet, SandboxSpec
from polyglot_harness.utils.seam.errors import CommandNotStarted, SandboxError
from polyglot_harness.utils.seam.transfer import CappedOutput, files_from_tar, tar_directory

_LIBC = ctypes.CDLL(None, use_errno=True)
CLONE_NEWNET = 0x40000000
PIDS_CGROUPS = Path("/sys/fs/cgroup/pids/polyglot-fake")
_UNITS = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


def _bytes(size: str) -> int:
    size = size.lower()
    return int(float(size[:-1]) * _UNITS[size[-1]]) if size[-1] in _UNITS else int(size)


class FakeSandbox:
    def __init__(self, provider: "FakeProvider", spec: SandboxSpec, run_id: str, instance_id: str) -> None:
        self.provider, self.spec, self.run_id, self.instance_id = provider, spec, run_id, instance_id
        self.root: Path | None = None
        self.cgroup: Path | None = None
        self.stopped = False

    # --- life cycle ------------------------------------------------------------------------

    def start(self) -> "FakeSandbox":
        self.root = Path(tempfile.mkdtemp(prefix=f"fake-{self.run_id}-", dir=self.provider.base))
        self.root.chmod(0o755)  # the sandbox's user must reach what is copied in
        self.cgroup = PIDS_CGROUPS / self.root.name
        try:
            self.cgroup.mkdir(parents=True)
            (self.cgroup / "pids.max").write_text(str(self.spec.limits.pids))
        except OSError as error:
            shutil.rmtree(self.root, ignore_errors=True)
            raise SandboxError(f"the fake backend needs the pids cgroup controller as root: {error}") from error
        self.provider.opened(self)
        return self

    def __enter__(self) -> "FakeSandbox":
        return self.start() if self.root is None else self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        if self.root is None:
            return
        self.kill_all_processes()
        shutil.rmtree(self.root, ignore_errors=True)
        self.cgroup.rmdir()
        self.provider.closed(self)
        self.root = None

    def running(self) -> bool:
        return self.root is not None and not self.stopped

    def stop(self) -> None:
        self.kill_all_processes()
        self.stopped = True

    def kill_all_processes(self) -> None:
        """Every process of the sandbox is in its cgroup, whatever session it made."""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                pids = [int(pid) for pid in (self.cgroup / "cgroup.procs").read_text().split()]
            except FileNotFoundError:
                return  # closed
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.05)

    # --- commands --------------------------------------------------------------------------

    def exec(self, command: str, timeout: int, workdir: str = "/testbed",
             environment: dict[str, str] | None = None, guard_disk: bool = False,
             uid: int | None = None) -> ExecResult:
        if self.root is None or self.stopped:
            raise CommandNotStarted("the fake sandbox is not running")
        cwd = self._host_path(workdir)
        cwd.mkdir(parents=True, exist_ok=True)
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(cwd), **dict(self.spec.environment),
               **(environment or {})}
        started = time.monotonic()
        process = subprocess.Popen(["sh", "-c", command], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                                   preexec_fn=functools.partial(self._limit, self.spec.user if uid is None else uid))
        timed_out, exceeded = threading.Event(), threading.Event()
        watchers = [threading.Timer(timeout, self._end_group, (process.pid, timed_out))]
        if guard_disk and self.spec.limits.disk:
            watchers.append(threading.Thread(target=self._guard_disk, args=(process, exceeded), daemon=True))
        for watcher in watchers:
            watcher.start()
        collector = CappedOutput()
        for chunk in iter(lambda: process.stdout.read(65536), b""):
            collector.add(chunk)
        exit_code = process.wait()
        watchers[0].cancel()
        return ExecResult(exit_code=exit_code if exit_code >= 0 else 128 - exit_code, output=collector.text(), timed_out=timed_out.is_set(),
                          seconds=time.monotonic() - started, truncated=collector.truncated, disk_exceeded=exceeded.is_set())

    def _limit(self, user: int | None) -> None:
        """In the child, before exec: network namespace, limits, then the user."""
        (self.cgroup / "cgroup.procs").write_text("0")
        if self.spec.network == "none" and _LIBC.unshare(CLONE_NEWNET) != 0:
            os._exit(126)
        memory = _bytes(self.spec.limits.memory)
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        if user is not None:
            os.setgroups([])
            os.setgid(user)
            os.setuid(user)

    def _end_group(self, group: int, timed_out: threading.Event) -> None:
        timed_out.set()
        for sig, wait in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, 0)):
            try:
                os.killpg(group, sig)
            except ProcessLookupError:
                return
            time.sleep(wait)

    def _guard_disk(self, process: subprocess.Popen, exceeded: threading.Event) -> None:
        while process.poll() is None:
            try:
                used = sum(path.stat().st_size for path in self.root.rglob("*") if path.is_file())
            except (OSError, AttributeError):
                continue  # a file removed while counting; the sandbox closed
            if used > (self.spec.limits.disk or 0):
                exceeded.set()
                self.kill_all_processes()
                return
            time.sleep(0.2)

    # --- files -----------------------------------------------------------------------------

    def _host_path(self, path: str) -> Path:
        if self.root is None:
            raise SandboxError("the fake sandbox is closed")
        return self.root / path.lstrip("/")

    def put_directory(self, source: Path, destination: str) -> None:
        archive = tar_directory(source, prefix=destination.strip("/"), owner=self.spec.user)
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(self.root, numeric_owner=True, filter="fully_trusted")

    def get_files(self, path: str, max_bytes: int = 32 * 1024 * 1024) -> dict[str, bytes]:
        host = self._host_path(path)
        if not host.exists():
            return {}
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as tar:
            tar.add(host, arcname=host.name)
        return files_from_tar(buffer.getvalue(), path, max_bytes)


class FakeProvider:
    name = "fake"
    starts_ahead = True

    def __init__(self, base: Path | None = None) -> None:
        self.base = base or Path(tempfile.mkdtemp(prefix="polyglot-fake-backend-"))
        self.base.chmod(0o755)
        if base is None:  # its own directory goes with it, whoever forgot remove() (no /tmp litter)
            weakref.finalize(self, shutil.rmtree, str(self.base), True)
        self._open: dict[str, list[FakeSandbox]] = {}
        self._lock = threading.Lock()

    def __enter__(self) -> "FakeProvider":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.remove()

    def remove(self) -> None:
        """Remove the provider's directory (its sandboxes' roots are removed as they close)."""
        shutil.rmtree(self.base, ignore_errors=True)

    def opened(self, box: FakeSandbox) -> None:
        with self._lock:
            self._open.setdefault(box.run_id, []).append(box)

    def closed(self, box: FakeSandbox) -> None:
        with self._lock:
            self._open.get(box.run_id, []).remove(box)

    def prepare(self, log) -> None:
        if os.geteuid() != 0:
            raise SandboxError("the fake backend runs commands as another user, in a cgroup and in a new network "
                               "namespace: it needs root")
        self.base.mkdir(parents=True, exist_ok=True)

    def ensure_images(self, specs, agent, settings, workdir: Path, log) -> ImageSet:
        images = {spec.name: f"fake-{spec.name}" for spec in specs}
        return ImageSet(images, dict(images) if agent else {})

    def build_images(self, settings, languages, log) -> list:
        return []

    def sandbox(self, spec: SandboxSpec, run_id: str, instance_id: str) -> FakeSandbox:
        return FakeSandbox(self, spec, run_id, instance_id)

    def create_run_network(self, run_id: str) -> str:
        return "bridge"  # the fake cannot isolate sandboxes of a run from each other

    def run_sandboxes(self, run_id: str) -> list[str]:
        with self._lock:
            return [f"{box.run_id}-{box.instance_id}" for box in self._open.get(run_id, [])]

    def clean_up_run(self, run_id: str) -> int:
        with self._lock:
            boxes = list(self._open.get(run_id, []))
        for box in boxes:
            box.close()
        return len(boxes)

    def remove_caches(self) -> int:
        return 0


def open_provider() -> FakeProvider:
    """The backend's registration hook (utils/seam/registry.py); it takes no options."""
    return FakeProvider()
