"""Shared fixtures: the Docker engine, the built images, the prepared sample dataset.

Tests that need Docker take the `docker_client` fixture. Without an engine they are
skipped on a developer machine but FAIL under CI=true: CI must prove the real thing.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tarfile
import tempfile
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

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SAMPLES_DIR = PROJECT_ROOT / "samples"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
# The real benchmark (../shared/data/README.md): CI fails, never skips, without it.
BENCHMARK_TARBALL = PROJECT_ROOT.parent / "shared" / "data" / "polyglot-benchmark-7e0611e.tar.gz"
BENCHMARK_SHA256 = "e9e6cdcbde4aaae8cfd6c7738dfb2e8c84985e778e5c936f64afe26e9668ddfd"
GATE_WORKERS = int(os.environ.get("POLYGLOT_GATE_WORKERS", "2"))


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
    from polyglot_harness.utils.prepare import main as prepare_main

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


@pytest.fixture(scope="session")
def benchmark_checkout(tmp_path_factory) -> Path:
    if not BENCHMARK_TARBALL.is_file():
        message = f"the real benchmark {BENCHMARK_TARBALL} is missing (see ../shared/data/README.md)"
        if IN_CI:
            pytest.fail(f"CI=true: {message}", pytrace=False)
        pytest.skip(message)
    digest = hashlib.sha256(BENCHMARK_TARBALL.read_bytes()).hexdigest()
    assert digest == BENCHMARK_SHA256, f"{BENCHMARK_TARBALL} is not the pinned benchmark (sha256 {digest})"
    destination = tmp_path_factory.mktemp("benchmark")
    with tarfile.open(BENCHMARK_TARBALL) as archive:
        archive.extractall(destination, filter="data")
    return destination / "polyglot-benchmark"


@pytest.fixture(scope="session")
def real_dataset(benchmark_checkout, tmp_path_factory, language_images) -> Path:
    from polyglot_harness.utils.prepare import prepare_dataset

    reuse = os.environ.get("POLYGLOT_GATE_DATASET")  # a developer's already prepared copy (never in CI)
    if reuse and not IN_CI and Path(reuse, "polyglot_benchmark_metadata.json").is_file():
        return Path(reuse)
    output = tmp_path_factory.mktemp("real-dataset") / "polyglot"
    summary = prepare_dataset(benchmark_checkout, output, workers=GATE_WORKERS, record_expected=True,
                              log=lambda message: print(message, flush=True))
    print(f"gate: prepared {summary.instance_count} instances with recorded tests in {summary.seconds:.0f}s")
    return output
