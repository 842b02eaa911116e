"""Sandboxes for a run: the pre-start policy, pools per spec, leases, background removal.
Above the seam: it sees only the protocol (utils/seam/protocol.py).

The policy, all of it, is Prestart's: which sandboxes are started before an instance asks
for one, and when. A provider only declares whether it may (SandboxProvider.starts_ahead);
the run (utils/run/execute.py) only reports where its queue is (`starting`, `agent_done`).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from ..seam.protocol import Sandbox, SandboxProvider, SandboxSpec
from ..seam.errors import SandboxError

class Remover:
    """Closes sandboxes in the background; `drain()` waits until every one is gone."""

    def __init__(self, workers: int = 2) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="remover")
        self._futures: list[Future] = []
        self._lock = threading.Lock()

    def remove(self, box: Sandbox) -> None:
        with self._lock:
            self._futures.append(self._pool.submit(_close_quietly, box))

    def drain(self) -> None:
        with self._lock:
            futures, self._futures = self._futures, []
        for future in futures:
            future.result()


def _close_quietly(box: Sandbox) -> None:
    try:
        box.close()
    except SandboxError:
        pass  # the run's clean-up (or the next run) removes it


class _Lease:
    """A sandbox handed to pipeline code: closing it hands it to the background remover."""

    def __init__(self, box: Sandbox, remover: Remover | None) -> None:
        self._box, self._remover = box, remover

    def __getattr__(self, name: str):
        return getattr(self._box, name)

    def __enter__(self) -> "_Lease":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        box, self._box = self._box, _CLOSED
        if box is _CLOSED:
            return
        if self._remover is not None:
            self._remover.remove(box)
        else:
            box.close()


class _Closed:
    def __getattr__(self, name: str):
        raise SandboxError("the sandbox is closed")


_CLOSED = _Closed()


class StartGate:
    """Counts sandboxes being started on demand (an instance waiting for one). Pools start
    their spares only while none is, so pre-starting never delays an instance that needs a
    sandbox now: on a busy engine, starts queue up and every one in the queue is slower."""

    def __init__(self) -> None:
        self._on_demand = 0
        self._condition = threading.Condition()

    @contextmanager
    def on_demand(self) -> Iterator[None]:
        with self._condition:
            self._on_demand += 1
        try:
            yield
        finally:
            with self._condition:
                self._on_demand -= 1
                self._condition.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        with self._condition:
            return self._condition.wait_for(lambda: self._on_demand == 0, timeout=timeout)


class SandboxPool:
    """Keeps up to `target` started sandboxes of one SandboxSpec ready (or starting), but
    never more than the instances still to come need, so start-up overlaps other work. A
    sandbox serves one instance only and is never reused: every grading still starts from a
    fresh image. The target is 0 (nothing started ahead) until the policy sets it."""

    def __init__(self, provider: SandboxProvider, spec: SandboxSpec, run_id: str, demand: int,
                 remover: Remover | None, gate: StartGate) -> None:
        self.provider, self.spec, self.run_id, self.remover, self.gate = provider, spec, run_id, remover, gate
        self._demand = demand
        self._target = 0
        self._ready: list[Sandbox] = []
        self._starting = 0
        self._closed = False
        self._condition = threading.Condition()
        self._thread = threading.Thread(target=self._fill, name=f"pool-{spec.role}", daemon=True)
        self._thread.start()

    def _new(self, instance_id: str) -> Sandbox:
        return self.provider.sandbox(self.spec, self.run_id, instance_id)

    def _short(self) -> bool:
        return len(self._ready) + self._starting < min(self._target, self._demand)

    def _fill(self) -> None:
        while True:
            with self._condition:
                self._condition.wait_for(lambda: self._closed or self._short())
                if self._closed:
                    return
            if not self.gate.wait_idle(timeout=1.0):
                continue  # instances are waiting for sandboxes of their own: they go first
            with self._condition:
                if self._closed or not self._short():
                    continue
                self._starting += 1
            self._start_one()

    def _start_one(self) -> None:
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
            _close_quietly(box)

    def set_target(self, target: int) -> None:
        """Hold `target` sandboxes ready from now on (e.g. one per queued instance that will
        start when a running one ends); surplus ready ones stay until used or closed."""
        with self._condition:
            self._target = max(0, target)
            self._condition.notify_all()

    def acquire(self, instance_id: str) -> Sandbox:
        with self._condition:
            self._demand = max(0, self._demand - 1)
            # A sandbox already starting is sooner ready than a new one, and starting a
            # second would leave one unused.
            deadline = time.monotonic() + 60
            while not self._ready and self._starting and not self._closed and time.monotonic() < deadline:
                self._condition.wait(timeout=1.0)
            box = self._ready.pop(0) if self._ready else None
            self._condition.notify_all()
        if box is not None and box.running():
            return box
        if box is not None:
            _close_quietly(box)  # stopped while it waited (e.g. the engine restarted): never handed out
        with self.gate.on_demand():
            return self._new(instance_id).start()

    def close(self) -> None:
        with self._condition:
            self._closed = True
            ready, self._ready = self._ready, []
            self._condition.notify_all()
        self._thread.join(timeout=60)
        for box in ready:
            _close_quietly(box)


class Sandboxes:
    """Where pipeline code gets its sandboxes: from a pool when the run set one up for that
    SandboxSpec, else started on the spot. With background removal, closing one hands it to
    a background remover (removal is off the critical path; `close()` drains it)."""

    def __init__(self, provider: SandboxProvider, run_id: str, background_removal: bool = False) -> None:
        self.provider, self.run_id = provider, run_id
        self.remover = Remover() if background_removal else None
        self._pools: dict[SandboxSpec, SandboxPool] = {}
        self.gate = StartGate()

    def add_pool(self, spec: SandboxSpec, demand: int) -> None:
        """A pool for `demand` future uses of `spec`; it starts sandboxes ahead once a target
        is set (`set_target`)."""
        if demand > 0 and spec not in self._pools:
            self._pools[spec] = SandboxPool(self.provider, spec, self.run_id, demand, self.remover, self.gate)

    def set_target(self, spec: SandboxSpec, target: int) -> None:
        """Keep `target` sandboxes of `spec` ready (no-op without a pool for it)."""
        pool = self._pools.get(spec)
        if pool is not None:
            pool.set_target(target)

    def start(self, spec: SandboxSpec, instance_id: str) -> Sandbox:
        pool = self._pools.get(spec)
        if pool is not None:
            box = pool.acquire(instance_id)
        else:
            with self.gate.on_demand():
                box = self.provider.sandbox(spec, self.run_id, instance_id).start()
        return _Lease(box, self.remover)  # type: ignore[return-value]

    def close(self) -> None:
        for pool in self._pools.values():
            pool.close()
        self._pools.clear()
        if self.remover is not None:
            self.remover.drain()


# --- the policy ---------------------------------------------------------------------------------

# Grading sandboxes held ready per language once its turn is near (at most one per worker).
GRADING_SPARES = 2


@dataclass(frozen=True)
class QueuedInstance:
    """What the policy knows of one instance of the run's queue."""
    group: str                   # its language: a language's grading pool fills once its turn is near
    agent: SandboxSpec | None    # its agent's sandbox; None when no agent runs (a predicted patch)
    grading: SandboxSpec | None  # its grading sandbox; None when nothing is graded (a predicted empty patch)


class Prestart:
    """The run's pre-start policy: sandboxes started before an instance asks, so their
    start-up overlaps work instead of delaying it.

    - Agents mostly wait on a model: while they do, the agent sandboxes of the instances
      that take their places next (the `workers` queued after the one starting) are started,
      so a wave does not queue its starts behind each other. Only where the provider says
      idle sandboxes cost nothing scarce (`starts_ahead`): a Ray sandbox holds a node slot.
    - Grading sandboxes: GRADING_SPARES per language are held ready from the moment an
      instance of that language starts, and for the languages of the next 2 x `workers`
      instances from the moment a running agent ends (not earlier: its own agent's sandbox
      comes first).
    - Pools never start more than the queue still needs, and start only while no instance
      waits for a sandbox of its own (StartGate)."""

    def __init__(self, sandboxes: Sandboxes, queue: list[QueuedInstance], workers: int) -> None:
        self.sandboxes, self.queue, self.workers = sandboxes, queue, workers
        self.agents_ahead = sandboxes.provider.starts_ahead
        self.grading_spares = min(GRADING_SPARES, workers)
        for spec, demand in Counter(entry.agent for entry in queue if entry.agent is not None).items():
            sandboxes.add_pool(spec, demand)
        for spec, demand in Counter(entry.grading for entry in queue if entry.grading is not None).items():
            sandboxes.add_pool(spec, demand)
        self._agent_specs = list(dict.fromkeys(entry.agent for entry in queue if entry.agent is not None))
        self._grading_specs: dict[str, set[SandboxSpec]] = {}
        for entry in queue:
            if entry.grading is not None:
                self._grading_specs.setdefault(entry.group, set()).add(entry.grading)
        self._latest = -1
        self._lock = threading.Lock()

    def starting(self, index: int) -> None:
        """Instance `index` of the queue begins (instances begin in queue order, their
        threads not quite: a late one never turns the targets back)."""
        self._hold_grading(self.queue[index].group)
        if not self.agents_ahead:
            return
        with self._lock:
            if index <= self._latest:
                return
            self._latest = index
            upcoming = Counter(entry.agent for entry in self.queue[index + 1:index + 1 + self.workers]
                               if entry.agent is not None)
            for spec in self._agent_specs:
                self.sandboxes.set_target(spec, upcoming.get(spec, 0))

    def agent_done(self, index: int) -> None:
        """Instance `index`'s (first) agent ended: hold grading sandboxes for what comes next."""
        for group in sorted({entry.group for entry in self.queue[index + 1:index + 1 + 2 * self.workers]}):
            self._hold_grading(group)

    def _hold_grading(self, group: str) -> None:
        for spec in self._grading_specs.get(group, ()):
            self.sandboxes.set_target(spec, self.grading_spares)
