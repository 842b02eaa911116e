"""Pre-started sandboxes: pools follow the queue, and never delay an instance that needs one now.

Pure scheduling behaviour over a counting in-memory provider (no engine): what the pools and
the run's pre-start policy (pools.Prestart) start, when, and for whom. The Docker side is covered by the conformance suite and the e2e
tests; the speed it buys is measured by `bench/run.py --sleep_agent`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import replace

import pytest

from polyglot_harness.utils.pipeline.pools import Prestart, QueuedInstance, Sandboxes, StartGate
from polyglot_harness.utils.seam.protocol import Limits, SandboxSpec


class CountingBox:
    def __init__(self, provider: "CountingProvider", spec: SandboxSpec, instance_id: str) -> None:
        self.provider, self.spec, self.instance_id = provider, spec, instance_id
        self.started = self.closed = False

    def start(self) -> "CountingBox":
        with self.provider.lock:
            self.provider.in_flight += 1
            self.provider.max_in_flight = max(self.provider.max_in_flight, self.provider.in_flight)
            self.provider.starts.append(self.instance_id)
        time.sleep(self.provider.start_seconds)
        with self.provider.lock:
            self.provider.in_flight -= 1
        self.started = True
        return self

    def running(self) -> bool:
        return self.started and not self.closed

    def close(self) -> None:
        self.closed = True


class CountingProvider:
    def __init__(self, start_seconds: float = 0.0) -> None:
        self.start_seconds = start_seconds
        self.lock = threading.Lock()
        self.starts: list[str] = []  # instance ids; "pool" for pre-starts
        self.in_flight = self.max_in_flight = 0
        self.starts_ahead = True

    def sandbox(self, spec: SandboxSpec, run_id: str, instance_id: str) -> CountingBox:
        return CountingBox(self, spec, instance_id)


SPEC = SandboxSpec(image="agent-image", role="agent", limits=Limits())


def wait_until(condition, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


def test_a_pool_pre_starts_up_to_its_target_and_never_beyond_its_demand():
    provider = CountingProvider()
    sandboxes = Sandboxes(provider, "run")
    sandboxes.add_pool(SPEC, demand=3)
    try:
        time.sleep(0.2)
        assert provider.starts == [], "a pool with target 0 starts nothing"
        sandboxes.set_target(SPEC, 10)
        assert wait_until(lambda: len(provider.starts) == 3)
        time.sleep(0.2)
        assert provider.starts == ["pool"] * 3, "demand 3 caps a target of 10"
        boxes = [sandboxes.start(SPEC, f"instance-{n}") for n in range(3)]
        assert all(box.instance_id == "pool" for box in boxes), "every instance got a pre-started sandbox"
        assert len(provider.starts) == 3, "no sandbox was started twice"
    finally:
        sandboxes.close()


def test_a_pre_started_sandbox_serves_one_instance_only():
    provider = CountingProvider()
    sandboxes = Sandboxes(provider, "run")
    sandboxes.add_pool(SPEC, demand=2)
    try:
        sandboxes.set_target(SPEC, 1)
        assert wait_until(lambda: len(provider.starts) == 1)
        first = sandboxes.start(SPEC, "a")
        second = sandboxes.start(SPEC, "b")
        assert first._box is not second._box
    finally:
        sandboxes.close()


def test_pre_starts_wait_while_an_instance_waits_for_a_sandbox_of_its_own():
    provider = CountingProvider(start_seconds=0.3)
    sandboxes = Sandboxes(provider, "run")
    other = replace(SPEC, image="grading-image", role="grading")  # no pool: started on demand
    sandboxes.add_pool(SPEC, demand=5)
    try:
        threads = [threading.Thread(target=lambda n=n: sandboxes.start(other, f"grading-{n}")) for n in range(4)]
        for thread in threads:
            thread.start()
        assert wait_until(lambda: provider.in_flight == 4)
        sandboxes.set_target(SPEC, 5)
        time.sleep(0.15)
        assert "pool" not in provider.starts, "a pre-start began while instances waited for theirs"
        for thread in threads:
            thread.join()
        assert wait_until(lambda: provider.starts.count("pool") == 5)
        order = provider.starts
        assert order.index("pool") > max(order.index(f"grading-{n}") for n in range(4))
    finally:
        sandboxes.close()


def test_the_start_gate_counts_on_demand_starts():
    gate = StartGate()
    assert gate.wait_idle(timeout=0.01)
    with gate.on_demand():
        assert not gate.wait_idle(timeout=0.05)
    assert gate.wait_idle(timeout=0.01)


def test_closing_removes_every_pre_started_sandbox():
    provider = CountingProvider()
    boxes: list[CountingBox] = []
    original = provider.sandbox

    def tracking(spec, run_id, instance_id):
        boxes.append(original(spec, run_id, instance_id))
        return boxes[-1]

    provider.sandbox = tracking  # type: ignore[method-assign]
    sandboxes = Sandboxes(provider, "run")
    sandboxes.add_pool(SPEC, demand=4)
    sandboxes.set_target(SPEC, 4)
    assert wait_until(lambda: len(provider.starts) == 4)
    sandboxes.close()
    assert len(boxes) == 4 and all(box.closed for box in boxes)


# --- the policy: which sandboxes to hold ready, and when ------------------------------------------

GRADING = replace(SPEC, role="grading")


class RecordingSandboxes:
    """Records the targets the policy sets (by image) instead of starting anything."""

    def __init__(self, starts_ahead: bool = True) -> None:
        self.provider = CountingProvider()
        self.provider.starts_ahead = starts_ahead
        self.targets: dict[str, int] = {}
        self.demand: dict[str, int] = {}

    def add_pool(self, spec: SandboxSpec, demand: int) -> None:
        self.demand[spec.image] = demand

    def set_target(self, spec: SandboxSpec, target: int) -> None:
        self.targets[spec.image] = target


def queue_of(languages: str, predicted: dict[int, str] = {}) -> list[QueuedInstance]:
    """One entry per language named; `predicted`: index -> its predicted patch (no agent runs;
    an empty one is not graded either)."""
    queue = []
    for index, language in enumerate(languages.split()):
        patch = predicted.get(index)
        queue.append(QueuedInstance(language, replace(SPEC, image=language) if patch is None else None,
                                    replace(GRADING, image=f"grading-{language}") if patch is None or patch else None))
    return queue


def prestart_for(languages: str, workers: int, predicted: dict[int, str] = {}, starts_ahead: bool = True):
    sandboxes = RecordingSandboxes(starts_ahead)
    return Prestart(sandboxes, queue_of(languages, predicted), workers), sandboxes  # type: ignore[arg-type]


def agent_targets(sandboxes: RecordingSandboxes) -> dict[str, int]:
    return {image: target for image, target in sandboxes.targets.items() if not image.startswith("grading-")}


def test_the_agent_sandboxes_held_ready_are_those_of_the_next_queued_instances():
    prestart, sandboxes = prestart_for("go go go py py go rs rs", workers=3)
    prestart.starting(0)
    assert agent_targets(sandboxes) == {"go": 2, "py": 1, "rs": 0}  # jobs 1..3 take the places that free up next
    prestart.starting(4)
    assert agent_targets(sandboxes) == {"go": 1, "py": 0, "rs": 2}
    prestart.starting(7)
    assert agent_targets(sandboxes) == {"go": 0, "py": 0, "rs": 0}, "nothing queued: nothing held"


def test_a_late_thread_of_an_earlier_job_does_not_turn_the_targets_back():
    prestart, sandboxes = prestart_for("go go py py rs rs", workers=2)
    prestart.starting(3)
    after = agent_targets(sandboxes)
    prestart.starting(1)
    assert agent_targets(sandboxes) == after


def test_instances_with_predicted_patches_need_no_agent_sandbox_and_empty_ones_no_grading():
    prestart, sandboxes = prestart_for("go go go go", workers=3, predicted={1: "patch", 2: ""})
    assert sandboxes.demand == {"go": 2, "grading-go": 3}
    prestart.starting(0)
    assert agent_targets(sandboxes) == {"go": 1}


def test_grading_sandboxes_are_held_for_a_language_once_its_turn_is_near():
    prestart, sandboxes = prestart_for("go go py py py py rs", workers=2)
    prestart.starting(0)
    assert {image for image in sandboxes.targets if image.startswith("grading-")} == {"grading-go"}, \
        "an instance's own language first"
    prestart.agent_done(0)  # the next 2 x 2 instances: go, py, py, py
    assert sandboxes.targets["grading-py"] == 2 and "grading-rs" not in sandboxes.targets
    prestart.agent_done(2)
    assert sandboxes.targets["grading-rs"] == 2


def test_a_single_worker_holds_one_grading_sandbox_per_language():
    prestart, sandboxes = prestart_for("go go", workers=1)
    prestart.starting(0)
    assert sandboxes.targets["grading-go"] == 1


# --- which providers start agent sandboxes ahead -------------------------------------------------

@pytest.mark.parametrize("starts_ahead, expected", [(True, 2), (False, 0)])
def test_agent_sandboxes_are_started_ahead_only_where_idle_ones_cost_nothing_scarce(starts_ahead, expected):
    # A Ray sandbox holds a node slot: started ahead, idle ones would take the slots the
    # running instances need for their grading (a deadlock until the start timeout).
    provider = CountingProvider()
    provider.starts_ahead = starts_ahead
    roles: list[str] = []
    original = provider.sandbox

    def recording(spec, run_id, instance_id):
        roles.append(spec.role)
        return original(spec, run_id, instance_id)

    provider.sandbox = recording  # type: ignore[method-assign]
    sandboxes = Sandboxes(provider, "run")  # type: ignore[arg-type]
    prestart = Prestart(sandboxes, queue_of("python python python python"), 2)
    try:
        prestart.starting(0)
        wait_until(lambda: roles.count("agent") >= expected, timeout=2.0)
        time.sleep(0.3)
        assert roles.count("agent") == expected
    finally:
        sandboxes.close()
