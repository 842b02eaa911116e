"""Repeated attempts (--attempts, HyperAgents' num_evals): the finished ones a resume reuses,
the gate on how many of one instance run at once, and the collector that combines them."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Mapping

from ..outcomes import FINISHED_BUCKETS
from ..records.results import InstanceResult, combine_attempts, load_instance_results, read_instance_result
from ..records.run_dir import RunDirectory, write_atomic


class AttemptCollector:
    """The attempts of each instance as they finish; once all of an instance's are in, its
    result (utils/records/results.py combine_attempts), written to its result file. With one
    attempt the attempt's result is the instance's (run_instance wrote it already)."""

    def __init__(self, attempts: int, run_dir: Path, finished: Mapping[str, Mapping[int, InstanceResult]]) -> None:
        self.attempts, self.run_dir = attempts, RunDirectory(run_dir)
        self.done: dict[str, dict[int, InstanceResult]] = {key: dict(value) for key, value in finished.items()}

    @property
    def finished_count(self) -> int:
        return sum(len(attempts) for attempts in self.done.values())

    def add(self, instance_id: str, number: int, result: InstanceResult) -> InstanceResult | None:
        """Attempt `number`'s result; the instance's result when it was the last one missing."""
        if self.attempts == 1:
            return result
        attempts = self.done.setdefault(instance_id, {})
        attempts[number] = result
        if len(attempts) < self.attempts:
            return None
        combined = combine_attempts([attempts[k] for k in range(1, self.attempts + 1)])
        write_atomic(self.run_dir.instance(instance_id).result, combined.to_json())
        return combined


def finished_attempts(run_dir: RunDirectory, instance_ids: set[str],
                      attempts: int) -> dict[str, dict[int, InstanceResult]]:
    """{instance id: {attempt number: its finished result}}: attempt 1 from the instance's own
    result file (its top-level keys), attempt k from attempt<k>/ (RunDirectory.attempt)."""
    found: dict[str, dict[int, InstanceResult]] = {}
    for instance_id, result in load_instance_results(run_dir.path).items():
        if instance_id in instance_ids and result.eval_result in FINISHED_BUCKETS:
            found.setdefault(instance_id, {})[1] = result.without_attempts()
    for number in range(2, attempts + 1):
        for instance_id in sorted(instance_ids):
            result = read_instance_result(run_dir.attempt(instance_id, number).result)
            if result is not None and result.instance_id == instance_id and result.eval_result in FINISHED_BUCKETS:
                found.setdefault(instance_id, {})[number] = result
    return found


class AttemptGate:
    """At most `parallel` attempts of one instance at once (--num_evals_parallel)."""

    def __init__(self, parallel: int) -> None:
        self.parallel = max(1, parallel)
        self._gates: dict[str, threading.Semaphore] = {}
        self._lock = threading.Lock()

    def of(self, instance_id: str) -> threading.Semaphore:
        with self._lock:
            return self._gates.setdefault(instance_id, threading.Semaphore(self.parallel))
