"""Shared fixtures: the Docker engine, the built images, the prepared sample dataset.

Tests that need Docker take the `docker_client` fixture. Without an engine they are
skipped on a developer machine but FAIL under CI=true: CI must prove the real thing.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

import pytest

# Every checkout's default data folder (utils/checkout.py: default dataset, default runs) is
# under this session's own folder, set before the package is imported and inherited by every
# command a test runs: no test reads or writes the user's data, and a fresh clone depends on no
# dataset another checkout prepared.
TEST_DATA_HOME = Path(tempfile.mkdtemp(prefix="polyglot-harness-home-"))
os.environ["POLYGLOT_HARNESS_HOME"] = str(TEST_DATA_HOME)
atexit.register(shutil.rmtree, TEST_DATA_HOME, ignore_errors=True)

from polyglot_harness.utils.records.dataset import load_dataset
from polyglot_harness.utils.backends.docker.engine import engine_answers
from polyglot_harness.utils.backends.docker.images import docker_client as make_client, ensure_language_image
from polyglot_harness.utils.seam.image_settings import ImageSettings
from polyglot_harness.utils.languages import LANGUAGES
from polyglot_harness.utils.backends.docker.provider import LABEL_PID, DockerProvider, list_run_containers, process_alive
from polyglot_harness.utils.pipeline.pools import Sandboxes
from polyglot_harness.utils.seam import registry

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SAMPLES_DIR = PROJECT_ROOT / "samples"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
# The real benchmark (../shared/data/README.md): CI fails, never skips, without it.
BENCHMARK_TARBALL = PROJECT_ROOT.parent / "shared" / "data" / "polyglot-benchmark-7e0611e.tar.gz"
BENCHMARK_SHA256 = "e9e6cdcbde4aaae8cfd6c7738dfb2e8c84985e778e5c936f64afe26e9668ddfd"
GATE_WORKERS = int(os.environ.get("POLYGLOT_GATE_WORKERS", "2"))

# The fake backend (tests/fake_backend/) is the tests' own, never a backend users pick: registered
# here, for this session, by its module path.
registry.BACKENDS.setdefault("fake", f"{__package__}.fake_backend")


@pytest.fixture(scope="session")
def docker_client():
    if not engine_answers():
        message = "the Docker engine does not answer (run docker/ensure_engine.sh)"
        if IN_CI:
            pytest.fail(f"CI=true: {message}", pytrace=False)
        pytest.skip(message)
    client = make_client()
    yield client
    client.close()


@pytest.fixture(scope="session")
def provider(docker_client) -> DockerProvider:
    """The Docker backend on the test session's engine."""
    return DockerProvider(docker_client)


@pytest.fixture(scope="module")
def made(request, tmp_path_factory) -> Path:
    """A directory of the module's own, for forgers and controls its tests make once
    (tests/fixtures/forgers/check.py: `once`, `reference_copy`): the gradings a module asks for
    ahead and its tests name the same directory."""
    return tmp_path_factory.mktemp(request.module.__name__.rsplit(".", 1)[-1])


@pytest.fixture
def sandboxes(provider):
    """Sandboxes of one test (run id "pytest"), closed after it."""
    pool = Sandboxes(provider, "pytest")
    yield pool
    pool.close()


@pytest.fixture(scope="session")
def image_settings() -> ImageSettings:
    return ImageSettings.from_env()


@pytest.fixture(scope="session")
def language_images(docker_client, image_settings) -> dict[str, str]:
    """Every language image, built once per session when missing (cached otherwise)."""
    return {name: ensure_language_image(docker_client, spec, image_settings, log=lambda m: None).tag
            for name, spec in LANGUAGES.items()}


@pytest.fixture(scope="session")
def sample_dataset(tmp_path_factory, language_images) -> Path:
    """The bundled samples prepared into a fresh dataset directory, expected tests recorded
    from each reference solution's real run (so grading requires every one of them)."""
    from polyglot_harness.utils.prepare.cli import main as prepare_main

    output = tmp_path_factory.mktemp("dataset") / "polyglot"
    assert prepare_main(["--benchmark_dir", str(SAMPLES_DIR), "--output_dir", str(output)]) == 0
    return output


@pytest.fixture(scope="session")
def sample_instances(sample_dataset):
    return {instance.instance_id: instance for instance in load_dataset(sample_dataset)}


@pytest.fixture
def no_leftover_containers(docker_client):
    """Asserts the test leaves no labelled harness container behind: none owned by this
    process, and none owned by a process that has ended (a harness CLI the test ran).
    Containers of other live processes (a concurrent run) are not this test's."""
    before = {container.id for container in list_run_containers(docker_client)}
    yield
    leftover = [c.name for c in list_run_containers(docker_client)
                if c.id not in before and _owned_by_us_or_dead(c.labels.get(LABEL_PID, ""))]
    assert not leftover, f"containers left behind: {leftover}"


def _owned_by_us_or_dead(pid_label: str) -> bool:
    try:
        pid = int(pid_label)
    except ValueError:
        return True
    return pid == os.getpid() or not process_alive(pid)


# --- the real benchmark -------------------------------------------------------------------


def _extract_benchmark() -> Path:
    """The pinned benchmark extracted once per session (checked against its digest)."""
    global _CHECKOUT
    if _CHECKOUT is None:
        digest = hashlib.sha256(BENCHMARK_TARBALL.read_bytes()).hexdigest()
        assert digest == BENCHMARK_SHA256, f"{BENCHMARK_TARBALL} is not the pinned benchmark (sha256 {digest})"
        destination = Path(tempfile.mkdtemp(prefix="polyglot-benchmark-"))
        atexit.register(shutil.rmtree, destination, ignore_errors=True)
        with tarfile.open(BENCHMARK_TARBALL) as archive:
            archive.extractall(destination, filter="data")
        _CHECKOUT = destination / "polyglot-benchmark"
    return _CHECKOUT


_CHECKOUT: Path | None = None


@pytest.fixture(scope="session")
def benchmark_checkout() -> Path:
    if not BENCHMARK_TARBALL.is_file():
        message = f"the real benchmark {BENCHMARK_TARBALL} is missing (see ../shared/data/README.md)"
        if IN_CI:
            pytest.fail(f"CI=true: {message}", pytrace=False)
        pytest.skip(message)
    return _extract_benchmark()


@pytest.fixture(scope="session")
def real_dataset(benchmark_checkout, tmp_path_factory, language_images) -> Path:
    from polyglot_harness.utils.prepare.dataset import prepare_dataset

    reuse = _reused_gate_dataset()
    if reuse is not None:
        return reuse
    if BACKGROUND_GATE.started:
        return BACKGROUND_GATE.result()
    output = tmp_path_factory.mktemp("real-dataset") / "polyglot"
    summary = prepare_dataset(benchmark_checkout, output, workers=GATE_WORKERS, record_expected=True,
                              log=lambda message: print(message, flush=True))
    print(f"gate: prepared {summary.instance_count} instances with recorded tests in {summary.seconds:.0f}s")
    return output


def _reused_gate_dataset() -> Path | None:
    """A developer's already prepared copy of the gate's dataset (never in CI)."""
    reuse = os.environ.get("POLYGLOT_GATE_DATASET")
    if reuse and not IN_CI and Path(reuse, "polyglot_benchmark_metadata.json").is_file():
        return Path(reuse)
    return None


def pytest_configure(config):
    """Say it at once when POLYGLOT_GATE_DATASET is set but not used: the gate's preparation
    of all 225 then runs (~15 min) where the developer expected none."""
    reuse = os.environ.get("POLYGLOT_GATE_DATASET")
    if reuse and _reused_gate_dataset() is None:
        why = "CI=true (CI always prepares its own)" if IN_CI else f"no polyglot_benchmark_metadata.json in {reuse}"
        print(f"conftest: POLYGLOT_GATE_DATASET is ignored: {why}; a test that uses the gate's dataset prepares all 225 anew", file=sys.stderr)


# --- the gate's preparation in the background (docs/ci-time.md) ---------------------------
# The gate's preparation of all 225 is CPU-bound and takes most of a run. It starts in a
# process of its own as soon as the tests that must not run beside it are done (they restart
# THE engine, or measure its disk: marker before_background), with a low CPU
# weight for its sandboxes (they take the CPU the other tests leave idle, and never slow
# them), while every module that does not use the benchmark runs; the modules that use it
# (its dataset, or its checkout to prepare instances whose recordings the gate's preparation
# then caches) run last. A module marked `beside_gate` uses the checkout but not the gate's
# dataset and records little or nothing itself (its own few instances, or repositories only):
# it runs beside the preparation, where its waiting (sleeps, container starts) costs the run
# nothing. POLYGLOT_GATE_BACKGROUND=0: prepared in the foreground, as before.
GATE_FIXTURE = "real_dataset"
BENCHMARK_FIXTURES = (GATE_FIXTURE, "benchmark_checkout")
BESIDE_GATE = "beside_gate"
BACKGROUND_CPU_SHARES = 128  # of the engine's default 1024 for every other container
BACKGROUND_STOP_S = 120


class BackgroundGate:
    """`prepare_polyglot_dataset.py` for the whole benchmark, run beside the other tests."""

    def __init__(self) -> None:
        self.process: subprocess.Popen | None = None
        self.output: Path | None = None
        self.log_path: Path | None = None
        self.started_at = 0.0

    @property
    def started(self) -> bool:
        return self.process is not None

    def start(self) -> None:
        workdir = Path(tempfile.mkdtemp(prefix="polyglot-gate-"))
        atexit.register(shutil.rmtree, workdir, ignore_errors=True)
        self.output, self.log_path = workdir / "polyglot", workdir / "prepare.log"
        command = ["nice", "-n", "10", sys.executable, str(PROJECT_ROOT / "prepare_polyglot_dataset.py"), "--benchmark_dir",
                   str(_extract_benchmark()), "--output_dir", str(self.output), "--workers", str(GATE_WORKERS)]
        environment = dict(os.environ, POLYGLOT_SANDBOX_CPU_SHARES=str(BACKGROUND_CPU_SHARES), PYTHONUNBUFFERED="1")
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                            env=environment, start_new_session=True)
        self.started_at = time.monotonic()
        TIMELINE.gate_started = time.time()

    def result(self) -> Path:
        waited = time.monotonic()
        code = self.process.wait()
        TIMELINE.gate_ended, TIMELINE.gate_waited = time.time(), time.monotonic() - waited
        log = self.log_path.read_text(encoding="utf-8", errors="replace")
        print(f"gate: preparation in the background ended {code} after {time.monotonic() - self.started_at:.0f}s "
              f"(this test waited {time.monotonic() - waited:.0f}s for it); its log ends:\n"
              + "\n".join(log.splitlines()[-12:]))
        if code != 0 or not (self.output / "polyglot_benchmark_metadata.json").is_file():
            pytest.fail(f"the gate's preparation failed (exit {code}); its log ends:\n" + "\n".join(log.splitlines()[-40:]),
                        pytrace=False)
        return self.output

    def stop(self) -> None:
        """Interrupt it like ^C (it removes its containers), then kill what is left."""
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGINT)
        try:
            self.process.wait(BACKGROUND_STOP_S)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


BACKGROUND_GATE = BackgroundGate()


def made_by_the_background(labels: dict[str, str]) -> bool:
    """Whether a harness container (its labels) is the gate's preparation's: tests beside it
    that count or list THE engine's containers leave these out."""
    process = BACKGROUND_GATE.process
    return process is not None and labels.get(LABEL_PID) == str(process.pid)


def _uses(item, fixtures: tuple[str, ...]) -> bool:
    return any(name in getattr(item, "fixturenames", ()) for name in fixtures)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config, items):
    """The tests that must not run beside the background preparation first, the modules that
    use the benchmark last (each module's tests stay together and in order)."""
    if not any(_uses(item, (GATE_FIXTURE,)) for item in items):
        return
    first = [item for item in items if item.get_closest_marker("before_background")]
    beside = {item.path for item in items if item.get_closest_marker(BESIDE_GATE)}
    waiting = sorted({item.path.name for item in items if item.path in beside and _uses(item, (GATE_FIXTURE,))})
    if waiting:
        raise pytest.UsageError(f"marked {BESIDE_GATE} but use the gate's dataset (they would wait for it among the "
                                f"others): {', '.join(waiting)}")
    last = {item.path for item in items if _uses(item, BENCHMARK_FIXTURES) and item.path not in beside}
    rest = [item for item in items if item not in first]
    items[:] = first + [item for item in rest if item.path not in last] + [item for item in rest if item.path in last]


def pytest_collection_finish(session):
    """Wanted when a selected test (after -m, -k and deselection) uses the gate's dataset."""
    session.config.stash[_GATE_WANTED] = (any(_uses(item, (GATE_FIXTURE,)) for item in session.items)
                                          and _background_allowed())


def pytest_runtest_setup(item):
    """Start it once, at the first test not marked before_background (with no engine, never:
    the gate's tests then skip, or fail under CI=true, as without it)."""
    if item.config.stash.get(_GATE_WANTED, False) and not item.get_closest_marker("before_background"):
        item.config.stash[_GATE_WANTED] = False
        if engine_answers():
            BACKGROUND_GATE.start()


def pytest_unconfigure(config):
    BACKGROUND_GATE.stop()


def _background_allowed() -> bool:
    return (os.environ.get("POLYGLOT_GATE_BACKGROUND", "1") != "0" and _reused_gate_dataset() is None
            and BENCHMARK_TARBALL.is_file())


_GATE_WANTED = pytest.StashKey[bool]()


# --- where a run's time went (printed at its end: docs/ci-time.md) ---------------------------
def machine_cpu_seconds() -> float | None:
    """CPU seconds the whole machine has been busy (user, nice, system, irq, softirq of
    /proc/stat), or None where there is no /proc/stat."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:8]
    except OSError:
        return None
    user, nice, system, _idle, _iowait, irq, softirq = (int(field) for field in fields)
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


class Timeline:
    """Wall seconds per module (setup, call and teardown of its tests, in run order), the
    machine's CPU seconds while its tests ran (the whole machine's: beside the gate's
    preparation they include its share), and the gate's preparation: when it started and
    ended, and how long a test waited for it."""

    SHOWN_FROM_S = 2.0  # modules that took at least this long, in the order they ran

    def __init__(self) -> None:
        self.started = time.time()  # the clock of pytest's reports
        self.started_cpu = machine_cpu_seconds()
        self.modules: dict[str, list[float]] = {}  # module -> [first start offset, seconds]
        self.cpu: dict[str, float] = {}  # module -> the machine's CPU seconds during its tests
        self.gate_started = self.gate_ended = self.gate_waited = None

    def add(self, module: str, start: float, seconds: float) -> None:
        entry = self.modules.setdefault(module, [start - self.started, 0.0])
        entry[1] += seconds

    def add_cpu(self, module: str, cpu_seconds: float) -> None:
        self.cpu[module] = self.cpu.get(module, 0.0) + cpu_seconds

    def lines(self) -> list[str]:
        def at(moment: float | None) -> str:
            return "-" if moment is None else f"{moment - self.started:.0f}s"

        def cpu(module: str) -> str:
            return f"{self.cpu[module]:7.1f} CPU s" if module in self.cpu else "      - CPU s"

        lines = [f"gate's preparation: started at {at(self.gate_started)}, ended at {at(self.gate_ended)}, "
                 f"a test waited {self.gate_waited or 0:.0f}s for it"]
        now = machine_cpu_seconds()
        if now is not None and self.started_cpu is not None:
            wall = time.time() - self.started
            lines.append(f"the machine: {now - self.started_cpu:.0f} CPU s over {wall:.0f} s "
                         f"({(now - self.started_cpu) / (wall * (os.cpu_count() or 1)):.0%} of {os.cpu_count()} cores)")
        shown = sorted((item for item in self.modules.items() if item[1][1] >= self.SHOWN_FROM_S),
                       key=lambda item: item[1][0])
        lines += [f"{seconds:8.1f}s  from {start:6.0f}s  {cpu(module)}  {module}" for module, (start, seconds) in shown]
        return lines


TIMELINE = Timeline()


def pytest_runtest_logreport(report):
    TIMELINE.add(report.nodeid.split("::")[0], report.start, report.duration)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    before = machine_cpu_seconds()
    yield
    after = machine_cpu_seconds()
    if before is not None and after is not None:
        TIMELINE.add_cpu(item.nodeid.split("::")[0], after - before)


def pytest_terminal_summary(terminalreporter):
    if TIMELINE.modules:
        terminalreporter.section("where the time went (wall and machine CPU seconds per module, in run order)")
        for line in TIMELINE.lines():
            terminalreporter.write_line(line)
