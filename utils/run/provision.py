"""Where a run executes: the backend opened and prepared, its images built or found, the run's
agent network, the per-container limits and a job per attempt still to run; and the clean-up."""

from __future__ import annotations

import os
import secrets
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from ..languages import LANGUAGES
from ..pipeline.agent_phase import AgentRunSettings
from ..pipeline.instance import InstanceJob
from ..seam.errors import SandboxError
from ..seam.image_settings import ImageSettings
from ..seam.protocol import ImageSet, Limits, SandboxProvider
from ..seam.registry import open_provider
from .plan import RunPlan
from .settings import HarnessError, size_in_bytes


@dataclass(frozen=True)
class Provisioned:
    """Where the run executes: its provider, images, run id, agent network and jobs."""
    provider: SandboxProvider
    images: ImageSet
    run_id: str
    jobs: tuple[InstanceJob, ...]


def provision(plan: RunPlan, workdir: Path) -> Provisioned:
    """The backend ready, its images built or found, the run's network made, a job per
    instance still to run."""
    config = plan.config
    provider = open_backend(config.backend, config.backend_options)
    log = lambda message: print(message, file=sys.stderr)  # noqa: E731
    provider.prepare(log)
    languages = sorted({instance.language for instance in plan.instances})
    images = provider.ensure_images([LANGUAGES[language] for language in languages], plan.agent,
                                    ImageSettings.from_env(ca_bundle=config.ca_bundle), workdir, log)
    limits = default_limits(config.max_workers, config.cpus, config.memory, config.pids_limit, config.disk)
    run_id = f"{time.strftime('%m%d%H%M%S')}{secrets.token_hex(2)}"
    # Agents of one run must not reach each other: "bridge" means the run's own network.
    own_network = config.agent_network == "bridge" and not plan.agent.builtin and plan.predicted is None
    network = _run_network(provider, run_id) if own_network else config.agent_network
    agent_settings = AgentRunSettings(config.agent_timeout, config.model, network,
                                      config.environment(plan.agent.environment), limits)
    predicted = plan.predicted
    # Attempt-major: every instance's attempt 1 queues before any attempt 2, so the attempts of
    # one instance seldom wait on each other (--num_evals_parallel).
    jobs = tuple(InstanceJob(instance=instance, agent=plan.agent, agent_image=images.agent[instance.language], grading_image=images.grading[instance.language],
                             agent_settings=agent_settings, test_timeout=config.test_timeout, grading_limits=limits, run_id=run_id, model_name_or_path=config.name, output_dir=config.run_dir,
                             predicted_patch=predicted.get(instance.instance_id) if predicted is not None else None, tries=config.tries,
                             attempt=attempt, variants=config.variants)
                 for attempt in range(1, config.attempts + 1) for instance in plan.instances
                 if instance.instance_id not in plan.previous
                 and attempt not in plan.finished_attempts.get(instance.instance_id, {}))
    return Provisioned(provider, images, run_id, jobs)


def open_backend(backend: str, options: Mapping[str, str]) -> SandboxProvider:
    """The backend's provider with its options (--backend_option); an option the backend does
    not take is a SandboxError naming it (utils/seam/registry.py)."""
    return open_provider(backend, **options)


def clean_up_run(provider: SandboxProvider, run_id: str) -> None:
    """Remove the run's sandboxes and network; what the backend cannot remove now (it went
    away), the next run reaps."""
    provider.clean_up_run(run_id)
    try:
        left = provider.run_sandboxes(run_id)
    except SandboxError as error:
        left = [str(error)]
    if left:
        print(f"warning: could not remove all of this run's sandboxes ({left[0]}, ...); the next run removes them",
              file=sys.stderr)


def _run_network(provider: SandboxProvider, run_id: str) -> str:
    try:
        return provider.create_run_network(run_id)
    except SandboxError as error:
        raise HarnessError(str(error)) from error


def default_limits(workers: int, cpus: float | None, memory: str | None, pids: int, disk: str | None) -> Limits:
    cores = os.cpu_count() or 1
    total_memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    default_memory = f"{max(1, min(8, total_memory // (1 << 30) // max(1, workers)))}g"
    return Limits(cpus=cpus or float(cores), memory=memory or default_memory, pids=pids,
                  disk=size_in_bytes(disk) if disk else None)
