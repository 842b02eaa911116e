"""Pre-started sandboxes: pools follow the queue, and never delay an instance that needs one now.

Pure scheduling behaviour over a counting in-memory provider (no engine): what the pools
start, when, and for whom. The Docker side is covered by the conformance suite and the e2e
tests; the speed it buys is measured by `bench/run.py --sleep_agent`.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, replace

import pytest

from polyglot_harness.utils.run import _AgentPrefetch
from polyglot_harness.utils.seam.protocol import Limits, SandboxSpec
from polyglot_harness.utils.pipeline.pools import Sandboxes, StartGate


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
    sandboxes.add_pool(SPEC, demand=3, spares=0)
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
    sandboxes.add_pool(SPEC, demand=2, spares=1)
    try:
        sandboxes.activate("")
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
    sandboxes.add_pool(SPEC, demand=5, spares=0)
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
    sandboxes.add_pool(SPEC, demand=4, spares=4)
    sandboxes.activate("")
    assert wait_until(lambda: len(provider.starts) == 4)
    sandboxes.close()
    assert len(boxes) == 4 and all(box.closed for box in boxes)


# --- the queue: which agent sandboxes to hold ready ---------------------------------------------

@dataclass(frozen=True)
class FakeInstance:
    language: str


@dataclass(frozen=True)
class FakeJob:
    instance: FakeInstance
    predicted_patch: str | None = None


class RecordingSandboxes:
    def __init__(self) -> None:
        self.targets: dict[str, int] = {}

    def set_target(self, spec: SandboxSpec, target: int) -> None:
        self.targets[spec.image] = target


def prefetch_for(languages: str, workers: int, predicted: set[int] = frozenset()):
    jobs = [FakeJob(FakeInstance(language), "patch" if index in predicted else None)
            for index, language in enumerate(languages.split())]
    sandboxes = RecordingSandboxes()
    specs = {language: replace(SPEC, image=language) for language in set(languages.split())}
    return _AgentPrefetch(sandboxes, jobs, workers, specs), sandboxes  # type: ignore[arg-type]


def test_the_agent_sandboxes_held_ready_are_those_of_the_next_queued_instances():
    prefetch, sandboxes = prefetch_for("go go go py py go rs rs", workers=3)
    prefetch.starting(0)
    assert sandboxes.targets == {"go": 2, "py": 1, "rs": 0}  # jobs 1..3 take the places that free up next
    prefetch.starting(4)
    assert sandboxes.targets == {"go": 1, "py": 0, "rs": 2}
    prefetch.starting(7)
    assert sandboxes.targets == {"go": 0, "py": 0, "rs": 0}, "nothing queued: nothing held"


def test_a_late_thread_of_an_earlier_job_does_not_turn_the_targets_back():
    prefetch, sandboxes = prefetch_for("go go py py rs rs", workers=2)
    prefetch.starting(3)
    after = dict(sandboxes.targets)
    prefetch.starting(1)
    assert sandboxes.targets == after


def test_instances_with_predicted_patches_need_no_agent_sandbox():
    prefetch, sandboxes = prefetch_for("go go go go", workers=3, predicted={1, 2})
    prefetch.starting(0)
    assert sandboxes.targets == {"go": 1}


# --- which providers start agent sandboxes ahead -------------------------------------------------

def jobs_for(languages: str):
    from types import SimpleNamespace

    from polyglot_harness.utils.pipeline.agent_phase import AgentRunSettings

    settings = AgentRunSettings(limits=Limits())
    return [SimpleNamespace(instance=FakeInstance(language), predicted_patch=None, agent_image=f"agent-{language}",
                            agent=SimpleNamespace(builtin=True), agent_settings=settings,
                            grading_image=f"grading-{language}", grading_limits=Limits())
            for language in languages.split()]


@pytest.mark.parametrize("starts_ahead, expected", [(True, 2), (False, 0)])
def test_agent_sandboxes_are_started_ahead_only_where_idle_ones_cost_nothing_scarce(starts_ahead, expected):
    # A Ray sandbox holds a node slot: started ahead, idle ones would take the slots the
    # running instances need for their grading (a deadlock until the start timeout).
    from polyglot_harness.utils.run import _sandboxes_for

    provider = CountingProvider()
    provider.starts_ahead = starts_ahead
    roles: list[str] = []
    original = provider.sandbox

    def recording(spec, run_id, instance_id):
        roles.append(spec.role)
        return original(spec, run_id, instance_id)

    provider.sandbox = recording  # type: ignore[method-assign]
    sandboxes, prefetch = _sandboxes_for(provider, jobs_for("python python python python"), 2, "run")  # type: ignore[arg-type]
    try:
        prefetch.starting(0)
        wait_until(lambda: roles.count("agent") >= expected, timeout=2.0)
        time.sleep(0.3)
        assert roles.count("agent") == expected
    finally:
        sandboxes.close()
