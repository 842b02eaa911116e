"""Per-instance overhead: where the seconds go when neither an agent nor the tests cost any.

- Agent phase with the null agent: `harness(agent="null")` — container create + copy of the
  base repo + the harness's diff + removal. (The null agent's empty patch is never graded.)
- Grading with a no-op test command: `utils.grading.grade` called directly with the language
  spec's test command replaced by `true`, on the oracle's patch, after the same
  `checkout_commit` of the test commit `run_instance` does — so test-tree copy, patch
  application, container, copy in, exec, copy out and removal all happen, the tests don't.

Phase seconds come from timing wrappers put around `Sandbox.start` / `put_directory` / `exec`
/ `get_files` / `close` and `apply_patch` in this process only (`PhaseRecorder.installed`).
Calls nested inside a timed call count once, for the outer one.
"""

from __future__ import annotations

import dataclasses
import tempfile
import threading
import time
from collections import defaultdict
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import docker

import _standalone  # noqa: F401,E402 - the checkout as the package polyglot_harness
from polyglot_harness.utils.pipeline import grading as grading_module
from polyglot_harness.utils.judging import patches as patches_module
from bench.bare import run_parallel
from polyglot_harness.utils.records.dataset import Instance
from polyglot_harness.utils.pipeline.grading import GradingRequest, grade
from polyglot_harness.utils.records.instance_repo import checkout_commit
from polyglot_harness.utils.languages import LANGUAGES
from polyglot_harness.utils.judging.runner_results import TestResults
from polyglot_harness.utils.backends.docker.provider import DockerProvider, DockerSandbox as Sandbox
from polyglot_harness.utils.seam.protocol import Limits
from polyglot_harness.utils.pipeline.pools import Sandboxes

# Sandbox method -> phase name in the table.
SANDBOX_PHASES = {"start": "start", "put_directory": "copy_in", "exec": "exec", "get_files": "copy_out",
                  "close": "close"}
PATCH_PHASE = "apply_patch"
HOST_PHASE = "host"  # the rest: host-side tree copies, checkout, tar building, filtering, results
PHASES = ("start", "copy_in", "exec", "copy_out", PATCH_PHASE, "close", HOST_PHASE)

Key = tuple[str, str]  # (role, instance_id)


class PhaseRecorder:
    """Seconds per (role, instance) and phase, from wrappers installed on the library's calls."""

    def __init__(self) -> None:
        self.seconds: dict[Key, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        self._lock = threading.Lock()
        self._local = threading.local()

    @contextmanager
    def current(self, role: str, instance_id: str) -> Iterator[None]:
        """Attributes calls that do not carry an instance (apply_patch) on this thread."""
        self._local.key = (role, instance_id)
        try:
            yield
        finally:
            self._local.key = None

    @contextmanager
    def installed(self) -> Iterator["PhaseRecorder"]:
        originals = {name: getattr(Sandbox, name) for name in SANDBOX_PHASES}
        original_apply, original_acquire = grading_module.apply_patch, Sandboxes.start
        for name, phase in SANDBOX_PHASES.items():
            setattr(Sandbox, name, self._timed(originals[name], phase, _box_key))
        patched_apply = self._timed(original_apply, PATCH_PHASE, lambda *_: getattr(self._local, "key", None))
        grading_module.apply_patch = patches_module.apply_patch = patched_apply
        Sandboxes.start = self._timed_acquire(original_acquire)  # type: ignore[method-assign]
        try:
            yield self
        finally:
            for name, original in originals.items():
                setattr(Sandbox, name, original)
            grading_module.apply_patch = patches_module.apply_patch = original_apply
            Sandboxes.start = original_acquire  # type: ignore[method-assign]

    def _timed_acquire(self, acquire: Callable) -> Callable:
        """An instance's wait for its sandbox is its `start` (a pre-started one was started by
        a pool, off the instance's path, under the instance id "pool"); the sandbox it gets is
        attributed to the instance from then on."""
        local = self._local

        def wrapper(sandboxes, spec, instance_id):
            local.depth = 1
            started = time.perf_counter()
            try:
                lease = acquire(sandboxes, spec, instance_id)
            finally:
                local.depth = 0
                with self._lock:
                    self.seconds[(spec.role, instance_id)]["start"] += time.perf_counter() - started
            lease._box.bench_instance_id = instance_id  # the pooled one was started as "pool"
            return lease

        return wrapper

    def _timed(self, function: Callable, phase: str, key_of: Callable) -> Callable:
        local = self._local

        def wrapper(*args, **kwargs):
            # Nested calls count once; removal in the background (the harness's remover
            # threads) is off every instance's path and not counted.
            if getattr(local, "depth", 0) or threading.current_thread().name.startswith("remover"):
                return function(*args, **kwargs)
            local.depth = 1
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                local.depth = 0
                key = key_of(*args[:1]) or ("?", "?")
                with self._lock:
                    self.seconds[key][phase] += time.perf_counter() - started

        wrapper.__wrapped__ = function  # type: ignore[attr-defined]
        return wrapper

    def phases_of(self, role: str, instance_id: str, total: float) -> dict[str, float]:
        measured = dict(self.seconds.get((role, instance_id), {}))
        row = {phase: round(measured.get(phase, 0.0), 4) for phase in PHASES if phase != HOST_PHASE}
        row[HOST_PHASE] = round(max(0.0, total - sum(row.values())), 4)
        row["total"] = round(total, 4)
        return row


def _box_key(box) -> tuple[str, str]:
    return box.role, getattr(box, "bench_instance_id", box.instance_id)


@dataclass(frozen=True)
class InstanceOverhead:
    instance_id: str
    language: str
    agent: dict[str, float]    # null agent phase: PHASES + total
    grading: dict[str, float]  # no-op grading: PHASES + total (checkout included in host)

    @property
    def total(self) -> float:
        return self.agent["total"] + self.grading["total"]


def noop_spec(language: str):
    """The language's spec with a test command that does nothing and finds nothing."""
    return dataclasses.replace(LANGUAGES[language], test_command="true", run_command="", parse_results=lambda report: TestResults())


def run_noop_grading(client: docker.DockerClient, instances: list[Instance], patches: dict[str, str],
                     images: dict[str, str], workers: int, limits: Limits, run_id: str,
                     recorder: PhaseRecorder) -> dict[str, float]:
    """Seconds per instance of checkout + grade() with the no-op test command."""

    sandboxes = Sandboxes(DockerProvider(client), run_id)

    def grade_one(instance: Instance) -> float:
        started = time.monotonic()
        with recorder.current("grading", instance.instance_id), \
                tempfile.TemporaryDirectory(prefix="polyglot-bench-noop-") as workdir:
            test_tree = Path(workdir) / "tree"
            checkout_commit(instance.grading_repo_dir, instance.test_commit, test_tree)
            request = GradingRequest(language=noop_spec(instance.language), instance_id=instance.instance_id, test_tree=test_tree,
                                     patch_text=patches.get(instance.instance_id, ""), solution_paths=instance.solution_paths,
                                     hidden_paths=instance.hidden_paths, expected_tests=None, test_timeout=60)
            grade(sandboxes, images[instance.language], request, limits)
        return time.monotonic() - started

    try:
        seconds = run_parallel(grade_one, instances, workers)
    finally:
        sandboxes.close()
    return {instance.instance_id: value for instance, value in zip(instances, seconds)}
