"""The seam between the pipeline and where instances run: the sandbox protocol.

Pipeline code (utils/pipeline/, utils/run/) sees only the seam: what this module defines
(`SandboxSpec`, `Sandbox`, `SandboxProvider`, ...), the errors of errors.py, and the registry
(registry.py) that opens a backend by name. A backend is one package below the seam
(utils/backends/<name>/); conformance.py says what every backend must do.

Contract of a sandbox (each backend keeps it; the conformance suite checks it)
- `start()` makes it exist with `spec.limits` applied, network `spec.network` ("none": no
  network at all), processes and copied-in files owned by `spec.user` (None: root), and the
  named caches of `spec.volumes` mounted. Nothing runs until `exec`.
- `exec(command, timeout)` runs `sh -c command` in `workdir` as `spec.user` (or as `uid` when
  given: e.g. SOLUTION_UID, which cannot read the user's 0700 files nor signal or trace its
  processes) and returns `ExecResult`. Past
  `timeout` seconds the command's whole process tree dies (TERM, then KILL after
  KILL_GRACE_S). Output (stdout+stderr interleaved) is capped at OUTPUT_CAP bytes, head and
  tail kept, with a visible marker where the middle was dropped; `complete` says whether the
  whole stream arrived (callers of idempotent commands retry when it did not). With `guard_disk`, a run
  that writes more than `limits.disk` bytes is stopped (`disk_exceeded`).
- `kill_all_processes()` ends every process commands started, as any uid (whatever they did to escape:
  new sessions, double forks, fork loops), files intact; exec still works afterwards.
  `stop()` ends every process for good; files can still be copied out.
- `put_directory(source, destination)` copies a host directory's contents in (parents
  created); `get_files(path)` copies regular files out, bounded.
- `close()` removes it and everything it wrote (idempotent; also on exceptions: sandboxes are
  context managers).
- Every failure to talk to the backend is a `SandboxError`; a command that never started is
  `CommandNotStarted` (nothing ran: safe to retry).

A provider starts sandboxes for a run, prepares its engine, builds or finds images, makes
the run's agent network, removes what a run (or a dead run) left, and owns the shared caches.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Protocol

from .agent import PreparedAgent
from .image_settings import ImageResult, ImageSettings

if TYPE_CHECKING:
    from ..languages import LanguageSpec

OUTPUT_CAP = 2 * 1024 * 1024
KILL_GRACE_S = 5
# The unprivileged user (and group) of every language image (docker/common/Dockerfile): agents
# and tests run as it, and the files copied in for them are its own.
RUNNER_UID = 10001
# A second unprivileged uid for code that must reach neither RUNNER_UID's files nor its
# processes: grading's solution process (exec(..., uid=SOLUTION_UID)), beside a trusted test
# process running as RUNNER_UID. No passwd entry: HOME is unset.
SOLUTION_UID = 10002

# Shared caches (SandboxSpec.volumes) are named with this prefix; a provider's remove_caches
# removes every one of them.
SHARED_CACHE_PREFIX = "polyglot-harness-cache-"

Log = Callable[[str], None]


@dataclass(kw_only=True, frozen=True)
class ExecResult:
    exit_code: int | None
    output: str
    timed_out: bool
    seconds: float
    truncated: bool = False
    disk_exceeded: bool = False  # the sandbox outgrew Limits.disk: its processes were killed
    # The whole output arrived (the backend saw the command's end in the stream). False when
    # the stream was cut short, or the sandbox's processes were killed before the end.
    complete: bool = True


@dataclass(frozen=True)
class Limits:
    cpus: float = 1.0
    memory: str = "4g"
    # As a harness run's default (utils/run/settings.py: pids_limit): preparation's reference runs
    # grade under the limits an agent's patch is graded under.
    pids: int = 2048
    # Bytes a sandbox may write (None: no cap); enforced during an exec run with guard_disk
    # (the agent, the tests).
    disk: int | None = None


@dataclass(kw_only=True, frozen=True)
class SandboxSpec:
    """Everything that defines a sandbox except the instance it serves."""
    image: str
    role: str  # "agent" | "grading" | "cache-warm" | ...
    network: str = "none"
    limits: Limits = field(default_factory=Limits)
    environment: tuple[tuple[str, str], ...] = ()
    # Named caches shared between sandboxes: ((cache name, mount path, "ro" | "rw"), ...).
    volumes: tuple[tuple[str, str, str], ...] = ()
    user: int | None = RUNNER_UID


@dataclass(frozen=True)
class ImageSet:
    """The images of a run: per language, the grading image and the agent's image."""
    grading: dict[str, str]
    agent: dict[str, str]


class Sandbox(Protocol):
    spec: SandboxSpec
    instance_id: str

    def start(self) -> "Sandbox": ...
    def exec(self, command: str, timeout: int, workdir: str = "/testbed",
             environment: dict[str, str] | None = None, guard_disk: bool = False,
             uid: int | None = None) -> ExecResult: ...
    def put_directory(self, source: Path, destination: str) -> None: ...
    def get_files(self, path: str, max_bytes: int = 32 * 1024 * 1024) -> dict[str, bytes]: ...
    def kill_all_processes(self) -> None: ...
    def stop(self) -> None: ...
    def running(self) -> bool: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Sandbox": ...
    def __exit__(self, *exc_info: object) -> None: ...


class SandboxProvider(Protocol):
    name: str
    # A capability, not a policy (the policy is utils/pipeline/pools.py's Prestart): whether an
    # idle started sandbox costs nothing scarce (a Docker container), so agent sandboxes may
    # be started ahead for the instances that start next. A Ray sandbox is an actor holding
    # one of a node's slots: idle ones started ahead would take the slots the running
    # instances need for their grading.
    starts_ahead: bool

    def prepare(self, log: Log) -> None:
        """Make the backend answer (start its engine if needed) and remove what runs whose
        owner is gone left behind."""

    def ensure_images(self, specs: "list[LanguageSpec]", agent: PreparedAgent | None, settings: ImageSettings,
                      workdir: Path, log: Log) -> ImageSet:
        """The language images, and the agent's image per language when an agent is given
        (a built-in agent runs in the language image)."""

    def build_images(self, settings: ImageSettings, languages: list[str] | None, log: Log) -> list[ImageResult]:
        """Every image the backend uses (all languages, or those named), built when missing."""

    def sandbox(self, spec: SandboxSpec, run_id: str, instance_id: str) -> Sandbox:
        """A sandbox of the run, not started yet."""

    def create_run_network(self, run_id: str) -> str:
        """A network of the run whose sandboxes reach the outside (the model API) but not
        each other; its name goes into SandboxSpec.network."""

    def run_sandboxes(self, run_id: str) -> list[str]:
        """Names of the run's sandboxes that still exist."""

    def clean_up_run(self, run_id: str) -> int:
        """Remove everything of the run (sandboxes, its network); the number of sandboxes
        removed. Waits a while for a backend that went away; never raises."""

    def remove_caches(self) -> int:
        """Remove every shared cache no sandbox uses; they are rebuilt on demand."""
