"""Every sandbox backend keeps the contract of utils/sandbox.py: the conformance suite
(utils/conformance.py) against Docker, and against the in-process fake in the fast tests,
and the suite itself notices a backend that breaks the contract."""

from __future__ import annotations

import os

import pytest

from .conftest import IN_CI
from polyglot_harness.utils.backends.fake.provider import FakeProvider, FakeSandbox
from polyglot_harness.utils.seam.conformance import CHECKS, run_conformance


def _need_root() -> None:
    if os.geteuid() != 0:
        message = "the fake backend runs commands as another user and in a new network namespace: needs root"
        if IN_CI:
            pytest.fail(f"CI=true: {message}")
        pytest.skip(message)


@pytest.mark.docker
@pytest.mark.parametrize("check", [check.name for check in CHECKS])
def test_docker_backend_conforms(check, provider, language_images, no_leftover_containers):
    assert run_conformance(provider, language_images["python"], "conform", only=(check,)) == []


@pytest.mark.parametrize("check", [check.name for check in CHECKS])
def test_fake_backend_conforms(check):
    _need_root()
    with FakeProvider() as fake:
        assert run_conformance(fake, "host", "conform", only=(check,)) == []


class _LeakyTimeouts(FakeSandbox):
    """Ends only the command's own process at its timeout, not its children."""

    def _end_group(self, group, timed_out):
        timed_out.set()
        os.kill(group, 9)


class _Leaky(FakeProvider):
    def __init__(self, sandbox_class):
        super().__init__()
        self.sandbox_class = sandbox_class

    def sandbox(self, spec, run_id, instance_id):
        return self.sandbox_class(self, spec, run_id, instance_id)


class _RootAlways(FakeSandbox):
    """Ignores the spec's user."""

    def _limit(self):
        (self.cgroup / "cgroup.procs").write_text("0")


@pytest.mark.parametrize("broken, failing", [
    (_LeakyTimeouts, "timeout_kills_the_whole_process_tree"),
    (_RootAlways, "files_go_in_and_out_owned_by_the_user"),
])
def test_the_suite_names_what_a_broken_backend_misses(broken, failing):
    _need_root()
    with _Leaky(broken) as fake:
        failures = run_conformance(fake, "host", "conform-broken", only=(failing,))
    assert len(failures) == 1 and failures[0].startswith(f"{failing}: ConformanceFailure"), failures


def test_end_marker_is_stripped_and_its_absence_reported():
    from polyglot_harness.utils.seam.transfer import strip_end_marker

    assert strip_end_marker("out\n\nm-1\n", "m-1") == ("out\n", True)
    assert strip_end_marker("out", "m-1") == ("out", False)
    assert strip_end_marker("m-1\n", "m-1") == ("m-1\n", False)  # the marker is only ever the last line


def test_a_harness_command_whose_output_arrived_cut_short_runs_again():
    from polyglot_harness.utils.pipeline.agent_phase import exec_whole
    from polyglot_harness.utils.seam.protocol import ExecResult

    class Flaky:
        calls = 0

        def exec(self, command, timeout, workdir):
            self.calls += 1
            return ExecResult(0, "" if self.calls == 1 else "42\n", False, 0.1, complete=self.calls > 1)

    box, said = Flaky(), []
    assert exec_whole(box, "wc -c < f", 10, "/", said.append).output == "42\n"
    assert box.calls == 2 and "incomplete" in said[0]
