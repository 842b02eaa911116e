"""The null agent over the whole benchmark: 225 agent containers through the scheduler, every
instance `empty_patch`, nothing graded. It needs the instance repositories only, not the gate's
recordings, so it prepares them itself without reference runs (`record_expected=False`, ~2 s)
and runs beside the gate's preparation (marker beside_gate): its container starts overlap the
preparation instead of following it (tests/conftest.py, docs/ci-time.md)."""

from __future__ import annotations

import subprocess

import pytest

from polyglot_harness.utils.prepare.dataset import prepare_dataset
from polyglot_harness.utils.records.dataset import load_dataset
from polyglot_harness.utils.run import harness

from .conftest import GATE_WORKERS

pytestmark = [pytest.mark.docker, pytest.mark.beside_gate]

BENCHMARK_SIZE = 225


@pytest.fixture(scope="module")
def repositories_only(benchmark_checkout, tmp_path_factory):
    output = tmp_path_factory.mktemp("null-agent") / "polyglot"
    summary = prepare_dataset(benchmark_checkout, output, record_expected=False, log=lambda message: None)
    assert summary.instance_count == BENCHMARK_SIZE
    return output


def test_null_agent_leaves_all_225_empty(repositories_only, language_images, tmp_path, no_leftover_containers):
    outcome = harness(dataset=repositories_only, output_dir=tmp_path, agent="null", model_name_or_path="null",
                      max_workers=GATE_WORKERS, progress=False, subset="full")
    assert sorted(outcome.results) == sorted(i.instance_id for i in load_dataset(repositories_only))
    assert len(outcome.results) == BENCHMARK_SIZE
    assert {(r.eval_result, r.reason) for r in outcome.results.values()} == {("empty_patch", "empty_patch")}, \
        {i: (r.eval_result, r.reason) for i, r in outcome.results.items() if r.eval_result != "empty_patch"}


def test_no_agent_repository_of_the_benchmark_holds_reference_material(repositories_only):
    """Exercism's `.meta/` (the reference), `.approaches/` and `.articles/` (write-ups of
    solutions, with their code: 13 exercises of the benchmark have them) reach no agent."""
    def tree(repo) -> list[str]:
        return subprocess.run(["git", "-C", str(repo), "ls-tree", "-r", "--name-only", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.split()

    held = {instance.instance_id: paths for instance in load_dataset(repositories_only)
            if (paths := [path for path in tree(instance.agent_repo_dir) if path.startswith((".meta/", ".approaches/", ".articles/"))])}
    assert held == {}
