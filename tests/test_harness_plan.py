"""The run's shape without an engine: the frozen config, plan -> provision -> execute ->
report over the in-process fake backend, and what happens to an exception nothing expected."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from polyglot_harness.utils import run as harness_module
from polyglot_harness.utils.run import execute as execute_module
from polyglot_harness.utils.run.plan import plan_run
from polyglot_harness.utils.run.settings import RunConfig
from polyglot_harness.utils.seam import registry as sandbox_registry
from .conftest import IN_CI, SAMPLES_DIR
from .fake_backend.provider import FakeProvider


@pytest.fixture(scope="module")
def plain_dataset(tmp_path_factory) -> Path:
    """The samples prepared without recorded expected tests (no engine needed)."""
    from polyglot_harness.utils.prepare.cli import main as prepare_main

    output = tmp_path_factory.mktemp("plain") / "polyglot"
    assert prepare_main(["--benchmark_dir", str(SAMPLES_DIR), "--output_dir", str(output), "--fast"]) == 0
    return output


@pytest.fixture
def fake_backend(monkeypatch):
    import os

    if os.geteuid() != 0:
        if IN_CI:
            pytest.fail("CI=true: the fake backend needs root")
        pytest.skip("the fake backend needs root")
    providers: list[FakeProvider] = []

    def open_fake() -> FakeProvider:
        providers.append(FakeProvider())
        return providers[-1]

    monkeypatch.setitem(sandbox_registry.BACKENDS, "fake", f"{__package__}.fake_backend.provider")
    monkeypatch.setattr(f"{__package__}.fake_backend.provider.open_provider", open_fake)
    yield providers
    for provider in providers:
        provider.remove()


def test_unexpected_exception_is_recorded_as_an_error_not_dropped(plain_dataset, tmp_path, fake_backend, monkeypatch,
                                                                   capsys):
    def explode(sandboxes, job, stop, after_agent=lambda: None):
        raise KeyError(f"surprise in {job.instance.instance_id}")

    monkeypatch.setattr(execute_module, "run_instance", explode)
    ids = ["python__running-total", "go__word-tally"]
    outcome = harness_module.harness(dataset=plain_dataset, instance_ids=ids, agent="null", output_dir=tmp_path,
                                     model_name_or_path="surprise", progress=False, backend="fake", max_workers=2)
    assert outcome.report["error_ids"] == sorted(ids)
    for instance_id in ids:
        saved = json.loads((outcome.run_dir / f"{instance_id}.json").read_text())
        assert (saved["eval_result"], saved["reason"]) == ("error", "unexpected_error")
        assert "KeyError" in saved["error"] and "surprise in" in saved["detail"]
    assert "unexpected KeyError" in capsys.readouterr().err
    provider = fake_backend[0]
    assert all(provider.run_sandboxes(run_id) == [] for run_id in list(provider._open))
    assert not any(provider.base.iterdir()), "the fake sandboxes (pool spares included) were all removed"


def test_config_is_frozen_and_checked_before_anything_starts(plain_dataset, tmp_path, fake_backend):
    with pytest.raises(harness_module.HarnessError, match="--backend must be one of"):
        harness_module.harness(dataset=plain_dataset, agent="null", output_dir=tmp_path, backend="kubernetes")
    assert fake_backend == [] and not any(tmp_path.iterdir()), "nothing may start for a bad setting"
    config = RunConfig(
        subset=("samples",), max_workers=1, model_name_or_path="x", output_dir=tmp_path, dataset=plain_dataset,
        agent="null", agent_timeout=1, test_timeout=1, pids_limit=64, disk=None, agent_network="none",
        progress=False, backend="fake")
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.max_workers = 50  # type: ignore[misc]
    plan = plan_run(config, tmp_path)
    assert len(plan.instances) == 8 and plan.previous == {} and plan.agent.name == "null"


