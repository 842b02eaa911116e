"""LLM-bound agents at high concurrency: the harness around agents that only wait.

A real agent spends most of its time waiting on a model. `bench/agents/sleep` is such an
agent without the model: it sleeps `seconds`, changes nothing (so no grading), and leaves
its transcript and usage. N of them run through `harness()` at each `--max_workers` W; the
ideal wall time is ceil(N / W) waves of `seconds`. What is measured around it:

- wall / ideal: the whole `harness()` call (plan, images, network, agents, clean-up) over
  the waves of sleeping;
- outside the agent, per instance: `seconds.total - seconds.agent` (waiting for a container,
  copying the repo in, the harness's diff, copying out);
- waiting for a container: `Sandboxes.start` for the agent role, as the instance sees it
  (a pre-started container is handed over at once);
- the engine: every container create+start of the run (pre-starts included), the engine's
  own time for it (not the wait for a start slot, see docker_backend.START_CONCURRENCY), and
  how many failed or took longer than SLOW_START_S;
- CPU: the machine's busy CPU-seconds during the run (/proc/stat: engine, harness and agents
  together) per agent, and the harness process's own share of it. Sleeping costs no CPU, so
  this is container life (start, copies, execs, removal), the agent's interpreter start and
  the harness; on a machine with few cores it, not the engine's concurrency, bounds a wave of
  many short agents.
"""

from __future__ import annotations

import math
import os
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from bench.table import spread
import _standalone  # noqa: F401,E402 - the checkout as the package polyglot_harness
from polyglot_harness.utils.run import HarnessError, harness
from polyglot_harness.utils.backends.docker.provider import DockerSandbox
from polyglot_harness.utils.outcomes import Bucket
from polyglot_harness.utils.pipeline.pools import Sandboxes

SLEEP_AGENT_DIR = Path(__file__).resolve().parent / "agents" / "sleep"
SLEEP_ENV = "BENCH_AGENT_SLEEP_S"
SLOW_START_S = 5.0
TARGET_SLEEP_RATIO = 1.3


@dataclass
class StartLog:
    """Container starts and agent-container waits seen in this process during one run."""
    engine_starts: list[float] = field(default_factory=list)
    failed_starts: int = 0
    agent_waits: list[float] = field(default_factory=list)
    first_wait_at: float | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def engine_start(self, seconds: float, failed: bool) -> None:
        with self.lock:
            self.engine_starts.append(seconds)
            self.failed_starts += failed

    def agent_wait(self, began: float, seconds: float) -> None:
        with self.lock:
            self.agent_waits.append(seconds)
            self.first_wait_at = began if self.first_wait_at is None else min(self.first_wait_at, began)


@contextmanager
def recording(log: StartLog) -> Iterator[None]:
    engine_start, sandboxes_start = DockerSandbox._create_and_start, Sandboxes.start

    def timed_engine_start(self, *args, **kwargs):
        began, failed = time.monotonic(), True
        try:
            result = engine_start(self, *args, **kwargs)
            failed = False
            return result
        finally:
            log.engine_start(time.monotonic() - began, failed)

    def timed_sandboxes_start(self, spec, instance_id):
        began = time.monotonic()
        try:
            return sandboxes_start(self, spec, instance_id)
        finally:
            if spec.role == "agent":
                log.agent_wait(began, time.monotonic() - began)

    DockerSandbox._create_and_start, Sandboxes.start = timed_engine_start, timed_sandboxes_start
    try:
        yield
    finally:
        DockerSandbox._create_and_start, Sandboxes.start = engine_start, sandboxes_start


def busy_cpu_seconds() -> float:
    """CPU-seconds the whole machine has spent not idle since boot (Linux /proc/stat)."""
    with open("/proc/stat", encoding="ascii") as handle:
        fields = [int(value) for value in handle.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def sleep_run(dataset: Path, instance_ids: list[str], seconds: float, workers: int,
              output_dir: Path) -> dict[str, Any]:
    """One run of len(instance_ids) sleeping agents at `workers`; its figures."""
    log = StartLog()
    previous = os.environ.get(SLEEP_ENV)
    os.environ[SLEEP_ENV] = str(seconds)
    try:
        with recording(log):
            began, cpu_before, own_before = time.monotonic(), busy_cpu_seconds(), time.process_time()
            outcome = harness(instance_ids=instance_ids, dataset=dataset, agent=str(SLEEP_AGENT_DIR),
                              max_workers=workers, output_dir=output_dir, model_name_or_path=f"sleep_{workers}",
                              pass_env=[SLEEP_ENV], force=True, progress=False)
            wall, cpu = time.monotonic() - began, busy_cpu_seconds() - cpu_before
            own_cpu = time.process_time() - own_before
    finally:
        if previous is None:
            os.environ.pop(SLEEP_ENV, None)
        else:
            os.environ[SLEEP_ENV] = previous
    if outcome.interrupted:
        raise KeyboardInterrupt
    results = list(outcome.results.values())
    if len(results) != len(instance_ids):
        raise HarnessError(f"the sleep run at {workers} workers left {len(instance_ids) - len(results)} "
                           f"instance(s) without a result")
    ideal = math.ceil(len(instance_ids) / workers) * seconds
    outside = [(result.seconds.total or 0.0) - (result.seconds.agent or 0.0) for result in results]
    return {
        "workers": workers, "instances": len(results), "agent_seconds": seconds,
        "wall_seconds": round(wall, 2), "ideal_seconds": ideal, "ratio": round(wall / ideal, 3),
        "set_up_seconds": round((log.first_wait_at or began) - began, 2),
        "cpu_seconds": round(cpu, 2), "cpu_per_agent": round(cpu / len(results), 3),
        "harness_cpu_per_agent": round(own_cpu / len(results), 3),
        "outside_agent": spread(outside),
        "agent_container_wait": spread(log.agent_waits),
        "engine_starts": {**spread(log.engine_starts), "failed": log.failed_starts,
                          "slow": sum(1 for seconds_ in log.engine_starts if seconds_ > SLOW_START_S),
                          "max": round(max(log.engine_starts, default=0.0), 3)},
        "buckets": {bucket: sum(1 for result in results if result.eval_result == bucket)
                    for bucket in sorted({str(result.eval_result) for result in results})},
        "retried": sum(1 for result in results if (result.attempts or 1) > 1),
        "not_empty_patch": sum(1 for result in results if result.eval_result != Bucket.EMPTY_PATCH),
    }


def concurrency_figures(dataset: Path, instance_ids: list[str], seconds: float, workers: list[int],
                        workdir: Path, log) -> dict[str, Any]:
    runs = []
    for count in workers:
        log(f"concurrency: {len(instance_ids)} sleeping agents ({seconds:g} s) at max_workers {count}")
        runs.append(sleep_run(dataset, instance_ids, seconds, count, workdir / f"sleep_{count}"))
        log(f"concurrency: {runs[-1]['wall_seconds']} s wall, ideal {runs[-1]['ideal_seconds']:g} s")
    return {"agent_seconds": seconds, "instances": len(instance_ids), "runs": runs}
