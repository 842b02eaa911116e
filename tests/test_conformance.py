"""Every registered sandbox backend keeps the contract of utils/seam/protocol.py: the
conformance suite (utils/seam/conformance.py) runs over every package in utils/backends/ and the
tests' own fake backend (tests/fake_backend/, registered by tests/conftest.py), and the suite
itself notices a backend that breaks the contract.

A backend is opened the way a run opens it (`open_provider(name)`, `prepare`, then its own
`ensure_images` for the python image) unless BACKEND_SETUP says otherwise: Docker runs on the
session's engine and images, Ray on a local one-node cluster beside that engine. A backend
whose `prepare` refuses (no engine, not root) is skipped, and fails under CI=true.

Every check runs over every backend, Ray included: the whole suite over Ray takes about 45 s
on 2 cores (cluster start included; Docker alone about 25 s).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from .conftest import IN_CI
from .fake_backend import FakeProvider, FakeSandbox
from polyglot_harness.utils.languages import LANGUAGES
from polyglot_harness.utils.seam.conformance import CHECKS, run_conformance
from polyglot_harness.utils.seam.errors import SandboxError
from polyglot_harness.utils.seam.image_settings import ImageSettings
from polyglot_harness.utils.seam.registry import BACKENDS, open_provider, registered_backends

RAY_SLOTS = 4
PROJECT_ROOT = Path(__file__).resolve().parent.parent


def _refused(message: str) -> None:
    if IN_CI:
        pytest.fail(f"CI=true: {message}", pytrace=False)
    pytest.skip(message)


def _open_as_a_run_does(name: str):
    """(provider, python image) through the protocol alone: what a new backend gets for free."""
    provider = open_provider(name)
    try:
        provider.prepare(log=lambda message: None)
    except SandboxError as error:
        _refused(f"backend {name}: {error}")
    with tempfile.TemporaryDirectory() as workdir:
        images = provider.ensure_images([LANGUAGES["python"]], None, ImageSettings.from_env(), Path(workdir),
                                        log=lambda message: None)
    return provider, images.grading["python"]


def _docker(request):
    return request.getfixturevalue("provider"), request.getfixturevalue("language_images")["python"]


def _ray(request):
    import ray
    from ray.cluster_utils import Cluster

    from polyglot_harness.utils.backends.ray.provider import RESOURCE

    image = request.getfixturevalue("language_images")["python"]  # the node runs on the session's engine
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False,
                                                            "resources": {RESOURCE: RAY_SLOTS}})

    def shut_down() -> None:
        ray.shutdown()
        cluster.shutdown()

    request.addfinalizer(shut_down)
    provider = open_provider("ray", address=cluster.address)
    provider.prepare(log=lambda message: None)
    return provider, image


# Backends that need more than _open_as_a_run_does: (marks, setup). Every other registered
# backend runs in the fast suite, opened with no options.
BACKEND_SETUP = {"docker": ([pytest.mark.docker], _docker), "ray": ([pytest.mark.docker], _ray)}


def _cases():
    for name in sorted(BACKENDS):
        marks = BACKEND_SETUP.get(name, ([], None))[0]
        for check in CHECKS:
            yield pytest.param(name, check.name, marks=marks, id=f"{name}-{check.name}")


@pytest.fixture(scope="module")
def opened(request):
    """name -> (provider, image), each backend opened once per module (on first use)."""
    providers: dict[str, tuple] = {}

    def open_backend(name: str) -> tuple:
        if name not in providers:
            setup = BACKEND_SETUP.get(name, ([], None))[1]
            providers[name] = setup(request) if setup else _open_as_a_run_does(name)
        return providers[name]

    return open_backend


@pytest.mark.parametrize("name, check", list(_cases()))
def test_every_registered_backend_conforms(name, check, opened, request):
    if name in BACKEND_SETUP:  # an engine's containers: none may be left behind
        request.getfixturevalue("no_leftover_containers")
    provider, image = opened(name)
    assert run_conformance(provider, image, "conform", only=(check,)) == []


def test_every_backend_package_is_registered_by_its_folder():
    assert set(registered_backends()) == {"docker", "ray"}
    assert all(module.endswith(f".backends.{name}") for name, module in registered_backends().items())
    assert BACKENDS["fake"].split(".")[-2:] == ["tests", "fake_backend"], "the tests register their own (conftest.py)"


def test_the_fake_backend_is_not_a_users_choice():
    completed = subprocess.run([sys.executable, "harness.py", "--backend", "fake", "--agent", "oracle"],
                               cwd=PROJECT_ROOT, capture_output=True, text=True)
    assert (completed.returncode, completed.stderr) == (
        2, "error: --backend must be one of docker, ray or a dotted module path, got 'fake'\n")


def test_an_option_a_backend_does_not_take_is_refused_by_name():
    with pytest.raises(SandboxError, match="sandbox backend 'docker' takes no option 'address'"):
        open_provider("docker", address="somewhere")
    with pytest.raises(SandboxError, match="takes no option 'adress' \\(its options: address\\)"):
        open_provider("ray", adress="somewhere")


def test_a_backend_is_also_found_by_its_dotted_module_path():
    provider = open_provider(BACKENDS["fake"])
    try:
        assert isinstance(provider, FakeProvider)
    finally:
        provider.remove()
    with pytest.raises(SandboxError, match="cannot import no_such_package.backend"):
        open_provider("no_such_package.backend")
    with pytest.raises(SandboxError, match="unknown sandbox backend 'kubernetes'"):
        open_provider("kubernetes")


# --- the suite itself ------------------------------------------------------------------------------

def _need_root() -> None:
    if os.geteuid() != 0:
        _refused("the fake backend runs commands as another user and in a new network namespace: needs root")


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

    def _limit(self, user):
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
            return ExecResult(exit_code=0, output="" if self.calls == 1 else "42\n", timed_out=False, seconds=0.1, complete=self.calls > 1)

    box, said = Flaky(), []
    assert exec_whole(box, "wc -c < f", 10, "/", said.append).output == "42\n"
    assert box.calls == 2 and "incomplete" in said[0]
