"""Run agents on polyglot instances in parallel and grade them in fresh containers.

    python harness.py --subset small --max_workers 5
    python harness.py --dataset datasets/polyglot --subset samples --agent oracle
    python harness.py --build_images_only
    python harness.py --stages small:0.4,medium --model gpt-4o-mini   # staged (utils/stages.py)

Python API for loops: `harness(...)` (same settings as the CLI) and `report(...)` (report.py).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import re
import secrets
import signal
import sys
import tempfile
import threading
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from tqdm import tqdm

from .checkout import DEFAULT_AGENT_DIR, DEFAULT_OUTPUT_DIR
from .seam.agent import AgentPatchError, PreparedAgent, prepare_agent
from .pipeline.agent_phase import AgentRunSettings
from .records.dataset import (DEFAULT_DATASET_DIR, SUBSETS_DIR, DatasetError, Instance, available_subsets, load_dataset,
                           select_instances)
from .pipeline.build_cache import prune_caches
from .seam.image_settings import ImageSettings
from .languages import LANGUAGES
from .outcomes import BUCKETS, FINISHED_BUCKETS, Bucket, Reason
from .records.results import InstanceResult, build_run_report, load_instance_results, write_atomic, write_json
from .pipeline.instance import InstanceJob, RunCancelled, queued, run_instance
from .pipeline.stages import (Stage, StageError, StageResult, check_stages, ended_because, judge_stage,
                          parse_stages, staged_report_json)
from .seam.registry import BACKENDS, is_backend, open_provider
from .seam.protocol import ImageSet, Limits, SandboxProvider
from .seam.errors import SandboxError
from .pipeline.pools import Prestart, Sandboxes

DEFAULT_DISK = "10g"  # per container: what an agent or a test run may write
DEFAULT_PASS_ENV = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "OPENAI_ORG_ID", "ANTHROPIC_API_KEY",
                    "ANTHROPIC_BASE_URL", "GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENROUTER_API_KEY",
                    "DEEPSEEK_API_KEY", "AZURE_OPENAI_API_KEY", "AZURE_OPENAI_ENDPOINT", "AGENT_MAX_SECONDS",
                    # The default agent's settings (agent/README.md):
                    "AGENT_MAX_STEPS", "AGENT_MAX_WALL_TIME", "AGENT_MAX_TOKENS", "AGENT_CALL_TIMEOUT",
                    "AGENT_COMMAND_TIMEOUT", "AGENT_MAX_RETRIES", "AGENT_RETRY_BASE_DELAY", "AGENT_OUTPUT_LIMIT")


class HarnessError(RuntimeError):
    """A setting or input the run cannot start with."""


@dataclass
class RunOutcome:
    run_dir: Path
    report_path: Path
    results: dict[str, InstanceResult]
    report: dict
    interrupted: bool = False
    images: ImageSet = ImageSet({}, {})
    # A staged run (utils/stages.py): each stage run, the last one's subset, and why the run ended there.
    stages: tuple[StageResult, ...] = ()
    ended_at_stage: str | None = None
    ended_because: str | None = None


@dataclass(frozen=True)
class RunConfig:
    """Every setting of one run, checked (check_settings) before anything starts."""
    subsets: tuple[str, ...]
    num_samples: int
    max_workers: int
    name: str
    model_patch_paths: tuple[Path, ...]
    output_dir: Path
    dataset: Path
    instance_ids: tuple[str, ...] | None
    languages: tuple[str, ...] | None
    agent: str
    model: str | None
    agent_timeout: int
    test_timeout: int
    predictions: Path | None
    cpus: float | None
    memory: str | None
    pids_limit: int
    disk: str | None
    pass_env: tuple[str, ...] | None
    agent_network: str
    ca_bundle: str | None
    force: bool
    progress: bool
    backend: str
    ray_address: str | None = None  # --backend ray: the cluster (default: $POLYGLOT_RAY_ADDRESS, else auto)
    stages: tuple[Stage, ...] | None = None  # staged evaluation (utils/stages.py); None: one plain run
    tries: int = 1  # Aider's protocol: 2 gives a failed instance a second try with the test output

    def provider_options(self) -> dict[str, str]:
        return provider_options(self.backend, self.ray_address)

    @property
    def run_dir(self) -> Path:
        return self.output_dir / f"{self.name}_0"

    @property
    def report_path(self) -> Path:
        return self.output_dir / f"{self.name}_0.0.json"

    def environment(self) -> dict[str, str]:
        """The variables passed to the agent (those set on this machine)."""
        names = self.pass_env if self.pass_env is not None else DEFAULT_PASS_ENV
        return {key: os.environ[key] for key in names if key in os.environ}


def provider_options(backend: str, ray_address: str | None) -> dict[str, str]:
    """The options open_provider passes to the backend (the Ray backend's cluster address)."""
    return {"address": ray_address} if backend == "ray" and ray_address else {}


@dataclass(frozen=True)
class RunPlan:
    """What the run will do, decided before any sandbox exists."""
    config: RunConfig
    instances: tuple[Instance, ...]
    agent: PreparedAgent
    resume_key: "ResumeKey"  # run_settings.json: what a resume must match
    previous: dict[str, InstanceResult]  # finished verdicts reused
    predicted: dict[str, str] | None = None  # --predictions: instance id -> patch


@dataclass(frozen=True)
class Provisioned:
    """Where the run executes: its provider, images, run id, agent network and jobs."""
    provider: SandboxProvider
    images: ImageSet
    run_id: str
    jobs: tuple[InstanceJob, ...]


def harness(
    subset: list[str] | str | None = None,
    num_samples: int = -1,
    max_workers: int = 5,
    model_name_or_path: str | None = None,
    model_patch_paths: list[str] | None = None,
    output_dir: str | Path = DEFAULT_OUTPUT_DIR,
    dataset: str | Path = DEFAULT_DATASET_DIR,
    instance_ids: list[str] | None = None,
    languages: list[str] | None = None,
    agent: str = str(DEFAULT_AGENT_DIR),
    model: str | None = None,
    agent_timeout: int = 600,
    test_timeout: int = 120,
    predictions: str | Path | None = None,
    cpus: float | None = None,
    memory: str | None = None,
    pids_limit: int = 2048,
    disk: str | None = DEFAULT_DISK,
    pass_env: list[str] | None = None,
    agent_network: str = "bridge",
    ca_bundle: str | None = None,
    force: bool = False,
    progress: bool = True,
    backend: str = "docker",
    ray_address: str | None = None,
    stages: str | Sequence[Stage] | None = None,
    tries: int = 1,
) -> RunOutcome:
    """Run (or resume) one evaluation; returns the results, the report and their paths.

    `stages` ("small:0.4,medium" or a list of Stage) runs a staged evaluation instead of one
    selection (it excludes subset, instance_ids, num_samples and predictions): stage k runs the
    instances of stages 1..k and the run goes on only while the accuracy over those instances
    reaches the stage's threshold (utils/stages.py defines it); RunOutcome.stages,
    ended_at_stage and ended_because say where and why it ended.

    `tries=2` is Aider's two-try protocol: an instance unresolved (or empty_patch) after its
    first try gets a second agent run from that try's working tree, with the trimmed test
    output as a file (agent/README.md); the report adds pass_rate_1 and pass_rate_2."""
    config = RunConfig(
        subsets=(subset,) if isinstance(subset, str) else tuple(subset or ()), num_samples=num_samples,
        max_workers=max_workers, name=model_name_or_path or time.strftime("%Y%m%d_%H%M%S"),
        model_patch_paths=tuple(Path(path) for path in model_patch_paths or ()), output_dir=Path(output_dir),
        dataset=Path(dataset), instance_ids=tuple(instance_ids) if instance_ids is not None else None,
        languages=tuple(languages) if languages is not None else None, agent=agent, model=model,
        agent_timeout=agent_timeout, test_timeout=test_timeout,
        predictions=Path(predictions) if predictions else None, cpus=cpus, memory=memory, pids_limit=pids_limit,
        disk=disk, pass_env=tuple(pass_env) if pass_env is not None else None, agent_network=agent_network,
        ca_bundle=ca_bundle, force=force, progress=progress, backend=backend, ray_address=ray_address,
        stages=_stages_of(stages), tries=tries)
    check_config(config)
    return _run_stages(config) if config.stages is not None else _run(config)


def _run(config: RunConfig, earlier: dict[str, InstanceResult] | None = None) -> RunOutcome:
    """plan -> provision -> execute -> report; the `earlier` verdicts (an earlier stage's) are
    reused like a resume's, whatever their bucket."""
    with tempfile.TemporaryDirectory(prefix="polyglot-agent-") as workdir:
        plan = _reusing(plan_run(config, Path(workdir)), earlier or {})
        provisioned = provision(plan, Path(workdir))
        try:
            results, interrupted = execute(plan, provisioned)
        finally:
            _clean_up_run(provisioned.provider, provisioned.run_id)
    return write_report(plan, results, interrupted, provisioned.images)


def _reusing(plan: RunPlan, earlier: dict[str, InstanceResult]) -> RunPlan:
    return dataclasses.replace(plan, previous={**plan.previous, **_selected(earlier, list(plan.instances))})


def _run_stages(config: RunConfig) -> RunOutcome:
    """Stage after stage in one run directory, each over the instances of the stages so far,
    reusing every verdict of the earlier ones; stops after the first stage below its threshold."""
    judged: list[StageResult] = []
    results: dict[str, InstanceResult] = {}
    for number, stage in enumerate(config.stages, 1):
        subsets = tuple(earlier.subset for earlier in config.stages[:number])
        outcome = _run(dataclasses.replace(config, subsets=subsets, stages=None), results)
        results = outcome.results
        judged.append(judge_stage(stage, outcome.report["total_instances"], outcome.report["resolved_instances"]))
        reason = ended_because(judged[-1], number == len(config.stages), outcome.interrupted)
        if reason is not None:
            break
    return _staged_outcome(outcome, tuple(judged), reason)


def _staged_outcome(outcome: RunOutcome, judged: tuple[StageResult, ...], reason: str) -> RunOutcome:
    """The last stage's outcome, its report (rewritten) saying which stage ended the run and why."""
    report = {**outcome.report, **staged_report_json(judged, reason)}
    write_json(outcome.report_path, report)
    return dataclasses.replace(outcome, report=report, stages=judged, ended_at_stage=judged[-1].subset,
                               ended_because=reason)


def _stages_of(stages: str | Sequence[Stage] | None) -> tuple[Stage, ...] | None:
    try:
        parsed = parse_stages(stages) if isinstance(stages, str) else None if stages is None else tuple(stages)
    except StageError as error:
        raise HarnessError(str(error)) from None
    if parsed is not None and not all(isinstance(stage, Stage) for stage in parsed):
        raise HarnessError("stages must be a string such as 'small:0.4,medium' or a list of Stage")
    return parsed


def check_stage_settings(config: RunConfig) -> None:
    """--stages names its own subsets: it excludes the other ways of selecting instances."""
    if config.stages is None:
        return
    given = [name for name, is_given in (("--subset", bool(config.subsets)),
                                         ("--instance_ids", config.instance_ids is not None),
                                         ("--num_samples", config.num_samples != -1),
                                         ("--predictions", config.predictions is not None)) if is_given]
    if given:
        raise HarnessError(f"--stages cannot be combined with {', '.join(given)}: each stage names its subset")
    try:
        check_stages(config.stages, available_subsets(SUBSETS_DIR))
    except StageError as error:
        raise HarnessError(str(error)) from None


TRIES = (1, 2)  # Aider's leaderboard reports pass_rate_1 and pass_rate_2


def check_tries(config: RunConfig) -> None:
    if isinstance(config.tries, bool) or config.tries not in TRIES:
        raise HarnessError(f"--tries must be 1 or 2 (Aider's two-try protocol), got {config.tries!r}")
    if config.tries > 1 and config.predictions is not None:
        raise HarnessError("--tries 2 needs an agent to run again; --predictions grades fixed patches")


def check_config(config: RunConfig) -> None:
    check_tries(config)
    check_stage_settings(config)
    check_settings(max_workers=config.max_workers, agent_timeout=config.agent_timeout,
                   test_timeout=config.test_timeout, cpus=config.cpus, memory=config.memory,
                   pids_limit=config.pids_limit, agent_network=config.agent_network, disk=config.disk,
                   backend=config.backend)
    if config.predictions is None:
        check_agent_model(config.agent, config.model, config.pass_env)
    for path in config.model_patch_paths:
        if not path.is_file():
            raise HarnessError(f"model patch {path} does not exist")


def plan_run(config: RunConfig, workdir: Path) -> RunPlan:
    """Select the instances, read predictions, prepare the agent, find what a resume reuses."""
    instances = _select(config.dataset, list(config.subsets), config.instance_ids, config.languages,
                        config.num_samples)
    predicted = _read_predictions(config.predictions, instances) if config.predictions else None
    if predicted is not None:
        instances = [instance for instance in instances if instance.instance_id in predicted]
    agent = (PreparedAgent("predictions", None, "predictions") if predicted is not None
             else prepare_agent(config.agent, list(config.model_patch_paths), workdir))
    for warning in agent.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    key = ResumeKey.of(agent, config.dataset, config.test_timeout, config.agent_timeout, config.model, config.tries)
    previous = _selected(_check_resume(config.run_dir, key, config.force), instances)
    return RunPlan(config, tuple(instances), agent, key, previous, predicted)


def provision(plan: RunPlan, workdir: Path) -> Provisioned:
    """The backend ready, its images built or found, the run's network made, a job per
    instance still to run."""
    config = plan.config
    provider = open_provider(config.backend, **config.provider_options())
    log = lambda message: print(message, file=sys.stderr)  # noqa: E731
    provider.prepare(log)
    languages = sorted({instance.language for instance in plan.instances})
    images = provider.ensure_images([LANGUAGES[language] for language in languages], plan.agent,
                                    ImageSettings.from_env(ca_bundle=config.ca_bundle), workdir, log)
    limits = _default_limits(config.max_workers, config.cpus, config.memory, config.pids_limit, config.disk)
    run_id = f"{time.strftime('%m%d%H%M%S')}{secrets.token_hex(2)}"
    # Agents of one run must not reach each other: "bridge" means the run's own network.
    own_network = config.agent_network == "bridge" and not plan.agent.builtin and plan.predicted is None
    network = _run_network(provider, run_id) if own_network else config.agent_network
    agent_settings = AgentRunSettings(config.agent_timeout, config.model, network, config.environment(), limits)
    predicted = plan.predicted
    jobs = tuple(InstanceJob(instance, plan.agent, images.agent[instance.language], images.grading[instance.language],
                             agent_settings, config.test_timeout, limits, run_id, config.name, config.run_dir,
                             predicted.get(instance.instance_id) if predicted is not None else None, config.tries)
                 for instance in plan.instances if instance.instance_id not in plan.previous)
    return Provisioned(provider, images, run_id, jobs)


def execute(plan: RunPlan, provisioned: Provisioned) -> tuple[dict[str, InstanceResult], bool]:
    """Every job run; (results, interrupted) with the reused results included."""
    run_dir = plan.config.run_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    write_json(run_dir / "run_settings.json", plan.resume_key.to_json())
    results = dict(plan.previous)
    interrupted = _execute(provisioned.provider, list(provisioned.jobs), results, max(1, plan.config.max_workers),
                           provisioned.run_id, plan.config.progress, len(plan.previous))
    return results, interrupted


def write_report(plan: RunPlan, results: dict[str, InstanceResult], interrupted: bool,
                 images: ImageSet) -> RunOutcome:
    config = plan.config
    report = build_run_report(config.name, [instance.instance_id for instance in plan.instances],
                              results).run_report_json()
    write_json(config.report_path, report)
    return RunOutcome(config.run_dir, config.report_path, results, report, interrupted, images)


AGENT_NETWORKS = ("bridge", "host", "none")
_MEMORY = re.compile(r"[1-9][0-9]*(?:\.[0-9]+)?[bkmg]?", re.I)


def check_settings(max_workers: int, agent_timeout: int, test_timeout: int, cpus: float | None, memory: str | None,
                   pids_limit: int, agent_network: str, disk: str | None = None, backend: str = "docker") -> None:
    """Every run setting checked before anything starts: one line naming the setting."""
    if not isinstance(max_workers, int) or max_workers < 1:
        raise HarnessError(f"--max_workers must be a whole number >= 1, got {max_workers!r}")
    for name, value in (("--agent_timeout", agent_timeout), ("--test_timeout", test_timeout)):
        if not isinstance(value, int) or value < 1:
            raise HarnessError(f"{name} must be a whole number of seconds >= 1, got {value!r}")
    cores = os.cpu_count() or 1
    if cpus is not None and not (0 < cpus <= cores):
        raise HarnessError(f"--cpus must be above 0 and at most this machine's {cores} cores, got {cpus!r}")
    if memory is not None and not _MEMORY.fullmatch(str(memory)):
        raise HarnessError(f"--memory must be a size such as 512m or 4g, got {memory!r}")
    if not isinstance(pids_limit, int) or pids_limit < 64:
        raise HarnessError(f"--pids_limit must be a whole number >= 64, got {pids_limit!r}")
    if disk is not None and (not _MEMORY.fullmatch(str(disk)) or size_in_bytes(disk) < 64 << 20):
        raise HarnessError(f"--disk must be a size of at least 64m such as 10g, got {disk!r}")
    if agent_network not in AGENT_NETWORKS:
        raise HarnessError(f"--agent_network must be one of {', '.join(AGENT_NETWORKS)}, got {agent_network!r}")
    if not is_backend(backend):
        raise HarnessError(f"--backend must be one of {', '.join(sorted(BACKENDS))} or a dotted module path, "
                           f"got {backend!r}")


def size_in_bytes(size: str) -> int:
    """'512m', '10g', '1.5g', '4096' (bytes) -> bytes."""
    units = {"b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    text = str(size).strip().lower()
    factor = units.get(text[-1], None)
    return int(float(text[:-1]) * factor) if factor else int(float(text))


def check_agent_model(agent: str, model: str | None, pass_env: list[str] | None) -> None:
    """The default agent cannot run without a model: stop before the first container rather
    than grade 225 empty patches."""
    if Path(agent).resolve() != DEFAULT_AGENT_DIR.resolve() or model:
        return
    passed = pass_env if pass_env is not None else DEFAULT_PASS_ENV
    if "OPENAI_MODEL" in passed and os.environ.get("OPENAI_MODEL"):
        return
    raise HarnessError("the default agent needs a model: pass --model NAME (or set OPENAI_MODEL)")


def _clean_up_run(provider: SandboxProvider, run_id: str) -> None:
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


def _select(dataset: Path, subsets, instance_ids, languages, num_samples) -> list[Instance]:
    instances = load_dataset(dataset)
    selection = select_instances(instances, subsets or None, instance_ids, languages, num_samples, SUBSETS_DIR)
    if selection.duplicate_ids:
        print(f"note: {len(selection.duplicate_ids)} instance id(s) named more than once, counted once: "
              f"{', '.join(selection.duplicate_ids)}", file=sys.stderr)
    if not selection.instances:
        raise HarnessError("the selection is empty")
    return list(selection.instances)


def _read_predictions(path: Path, instances: list[Instance]) -> dict[str, str]:
    """SWE-bench JSONL: one {instance_id, model_name_or_path, model_patch} object per line."""
    if not path.is_file():
        raise HarnessError(f"predictions file {path} does not exist")
    known = {instance.instance_id for instance in instances}
    patches: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            instance_id, patch = record["instance_id"], record["model_patch"]
        except (ValueError, KeyError, TypeError) as error:
            raise HarnessError(f"{path}:{number}: not a prediction record ({error})") from None
        if instance_id not in known:
            raise HarnessError(f"{path}:{number}: instance {instance_id} is not in the selection")
        patches[instance_id] = patch or ""
    return patches


@dataclass(frozen=True)
class ResumeKey:
    """What results of a run directory were made with (run_settings.json): a resume must match
    every field, or its verdicts would mix agents, datasets or timeouts."""
    agent: str
    agent_hash: str | None
    dataset_hash: str
    test_timeout: int
    agent_timeout: int
    model: str | None
    # --tries: a one-try run keeps no test output for a second try, so a run directory is
    # resumed with the tries it was made with (settings written before tries existed: 1).
    tries: int = 1

    @staticmethod
    def of(agent: PreparedAgent, dataset: Path, test_timeout: int, agent_timeout: int,
           model: str | None, tries: int = 1) -> "ResumeKey":
        metadata = dataset / "polyglot_benchmark_metadata.json"
        dataset_hash = hashlib.sha256(metadata.read_bytes()).hexdigest()[:16] if metadata.is_file() else ""
        return ResumeKey(agent.name, agent.agent_hash, dataset_hash, test_timeout, agent_timeout, model, tries)

    def to_json(self) -> dict[str, object]:
        return dataclasses.asdict(self)

    def differing(self, saved: dict) -> list[str]:
        defaults = {"tries": 1}
        return sorted(key for key, value in self.to_json().items() if saved.get(key, defaults.get(key)) != value)


def _check_resume(run_dir: Path, key: ResumeKey, force: bool) -> dict[str, InstanceResult]:
    """Finished verdicts to reuse; refuses to mix runs whose settings differ."""
    if force or not run_dir.is_dir():
        return {}
    settings_path = run_dir / "run_settings.json"
    if settings_path.is_file():
        differing = key.differing(json.loads(settings_path.read_text(encoding="utf-8")))
        if differing:
            raise HarnessError(f"{run_dir} holds results made with other settings ({', '.join(differing)} differ); "
                               f"use another --model_name_or_path or --force")
    return {instance_id: result for instance_id, result in load_instance_results(run_dir).items()
            if result.eval_result in FINISHED_BUCKETS}


def _selected(results: dict[str, InstanceResult], instances: list[Instance]) -> dict[str, InstanceResult]:
    wanted = {instance.instance_id for instance in instances}
    return {instance_id: result for instance_id, result in results.items() if instance_id in wanted}


def _default_limits(workers: int, cpus: float | None, memory: str | None, pids: int, disk: str | None) -> Limits:
    cores = os.cpu_count() or 1
    total_memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    default_memory = f"{max(1, min(8, total_memory // (1 << 30) // max(1, workers)))}g"
    return Limits(cpus=cpus or float(cores), memory=memory or default_memory, pids=pids,
                  disk=size_in_bytes(disk) if disk else None)


def _run_queued(job: InstanceJob, index: int, stop: threading.Event, sandboxes: Sandboxes,
                prestart: Prestart) -> InstanceResult:
    prestart.starting(index)
    return run_instance(sandboxes, job, stop, after_agent=lambda: prestart.agent_done(index))


def _execute(provider: SandboxProvider, jobs: list[InstanceJob], results: dict[str, InstanceResult], workers: int, run_id: str,
             progress: bool, reused: int) -> bool:
    stop = threading.Event()
    previous_handlers = _install_signal_handlers(stop)
    bar = tqdm(total=len(jobs) + reused, initial=reused, disable=not progress, unit="inst", dynamic_ncols=True)
    _update_bar(bar, results)
    sandboxes = Sandboxes(provider, run_id, background_removal=True)
    prestart = Prestart(sandboxes, [queued(job) for job in jobs], workers)
    try:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="instance") as executor:
            pending: dict[Future, InstanceJob] = {
                executor.submit(_run_queued, job, index, stop, sandboxes, prestart): job
                for index, job in enumerate(jobs)}
            while pending:
                done, _ = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
                if stop.is_set():
                    for future in pending:
                        future.cancel()
                    provider.clean_up_run(run_id)
                for future in done:
                    job = pending.pop(future)
                    try:
                        result = future.result()
                    except RunCancelled:  # the run is stopping: left unfinished, a resume runs it
                        continue
                    except Exception as error:  # noqa: BLE001 - recorded, never dropped
                        if stop.is_set():
                            continue
                        result = record_unexpected(job, error)
                    results[job.instance.instance_id] = result
                    bar.update(1)
                    _update_bar(bar, results)
                pending = {future: job for future, job in pending.items() if not future.cancelled()}
    finally:
        bar.close()
        sandboxes.close()  # the run's leftovers go in _clean_up_run, once the engine answers
        _restore_signal_handlers(previous_handlers)
    return stop.is_set()


def record_unexpected(job: InstanceJob, error: Exception) -> InstanceResult:
    """An exception that escaped the instance's own handling: an `error` result with the
    traceback, in the result file and on stderr."""
    trace = "".join(traceback.format_exception(error))
    print(f"error: {job.instance.instance_id}: unexpected {type(error).__name__}: {error}", file=sys.stderr)
    result = InstanceResult(instance_id=job.instance.instance_id, model_name_or_path=job.model_name_or_path,
                            language=job.instance.language, agent=job.agent.name, agent_hash=job.agent.agent_hash,
                            eval_result=Bucket.ERROR, reason=Reason.UNEXPECTED_ERROR,
                            error=f"{type(error).__name__}: {error}", detail=trace[-4000:])
    try:
        write_atomic(job.output_dir / f"{job.instance.instance_id}.json", result.to_json())
    except OSError as write_error:
        print(f"error: cannot write {job.instance.instance_id}'s result: {write_error}", file=sys.stderr)
    return result


def _update_bar(bar: tqdm, results: dict[str, InstanceResult]) -> None:
    counts = {bucket: 0 for bucket in BUCKETS}
    for result in results.values():
        counts[result.eval_result] = counts.get(result.eval_result, 0) + 1
    bar.set_postfix({bucket: count for bucket, count in counts.items()}, refresh=True)


def _install_signal_handlers(stop: threading.Event):
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(signum, frame):
        if not stop.is_set():
            print(f"\n{signal.Signals(signum).name}: stopping; removing this run's containers", file=sys.stderr)
        stop.set()

    return {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}


def _restore_signal_handlers(previous) -> None:
    for sig, handler in (previous or {}).items():
        signal.signal(sig, handler)


def build_images_only(languages: list[str] | None, ca_bundle: str | None, base_image: str | None,
                      backend: str = "docker", ray_address: str | None = None) -> int:
    log = lambda message: print(message, file=sys.stderr)  # noqa: E731
    provider = open_provider(backend, **provider_options(backend, ray_address))
    provider.prepare(log)
    settings = ImageSettings.from_env(base_image=base_image, ca_bundle=ca_bundle)
    print(f"{'image':<12} {'tag':<44} {'status':<7} {'seconds':>8}")
    for result in provider.build_images(settings, languages, log):
        print(f"{result.name:<12} {result.tag:<44} {'built' if result.built else 'cached':<7} {result.seconds:>8.1f}",
              flush=True)
    return 0


def _comma_list(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--subset", action="append", default=None,
                        help="small | medium | full | samples | any subsets/NAME.json (repeatable or comma list)")
    parser.add_argument("--stages", default=None,
                        help="staged evaluation, e.g. small:0.4,medium: the next stage (with the earlier stages' "
                             "instances) runs only if the accuracy so far reaches the threshold; excludes --subset, "
                             "--instance_ids, --num_samples, --predictions")
    parser.add_argument("--num_samples", type=int, default=-1, help="first N selected instances (-1 = all)")
    parser.add_argument("--max_workers", type=int, default=5)
    parser.add_argument("--model_name_or_path", default=None, help="run name (default: a timestamp)")
    parser.add_argument("--model_patch_paths", type=_comma_list, default=[],
                        help="comma list of patches applied in order to a copy of the agent")
    parser.add_argument("--output_dir", default=str(DEFAULT_OUTPUT_DIR))
    parser.add_argument("--dataset", default=str(DEFAULT_DATASET_DIR), help="prepared dataset directory")
    parser.add_argument("--instance_ids", type=_comma_list, default=None)
    parser.add_argument("--languages", type=_comma_list, default=None)
    parser.add_argument("--agent", default=str(DEFAULT_AGENT_DIR), help="oracle | null | agent directory")
    parser.add_argument("--model", default=None, help="passed to the agent as --model")
    parser.add_argument("--agent_timeout", type=int, default=600)
    parser.add_argument("--test_timeout", type=int, default=120)
    parser.add_argument("--predictions", default=None, help="SWE-bench style JSONL of patches to grade (no agent)")
    parser.add_argument("--cpus", type=float, default=None, help="CPUs per container (default: all cores)")
    parser.add_argument("--memory", default=None, help="memory per container, e.g. 4g (default: RAM / workers)")
    parser.add_argument("--pids_limit", type=int, default=2048)
    parser.add_argument("--disk", default=DEFAULT_DISK,
                        help=f"disk each container may write, e.g. 10g (default {DEFAULT_DISK}); past it the agent "
                             "or test run is stopped (reason recorded)")
    parser.add_argument("--pass_env", type=_comma_list, default=None,
                        help=f"environment variables passed to the agent (default: {','.join(DEFAULT_PASS_ENV[:4])}, ...)")
    parser.add_argument("--agent_network", default="bridge", help="bridge (default) | host | none")
    parser.add_argument("--ca_bundle", default=None,
                        help="PEM bundle installed into every image's trust store (env POLYGLOT_CA_BUNDLE)")
    parser.add_argument("--base_image", default=None, help="base image tag (default debian:bookworm-slim)")
    parser.add_argument("--force", action="store_true", help="re-run finished instances")
    parser.add_argument("--build_images_only", action="store_true", help="build or verify the six images and exit")
    parser.add_argument("--prune_caches", action="store_true",
                        help="remove every agent layer image and shared build-cache volume (both are "
                             "rebuilt on demand) and exit; language images stay")
    parser.add_argument("--no_progress", action="store_true")
    parser.add_argument("--backend", default="docker", help=f"where instances run: {' | '.join(sorted(BACKENDS))}")
    parser.add_argument("--tries", type=int, default=1,
                        help="1 (default) or 2: Aider's two-try protocol, an unresolved or empty_patch instance gets "
                             "a second agent run from its working tree with the trimmed test output; the report "
                             "adds pass_rate_1 and pass_rate_2")
    parser.add_argument("--ray_address", default=None,
                        help="--backend ray: the cluster, auto | HOST:PORT (default $POLYGLOT_RAY_ADDRESS, else auto)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        if args.build_images_only:
            return build_images_only(args.languages, args.ca_bundle, args.base_image, args.backend, args.ray_address)
        if args.prune_caches:
            provider = open_provider(args.backend)
            provider.prepare(lambda message: print(message, file=sys.stderr))
            print(f"removed {prune_caches(provider)} agent image tag(s) and build-cache volume(s)")
            return 0
        # Without --subset: the ids named by --instance_ids, or every instance a --predictions
        # file grades, or else HyperAgents' default, small.
        default_subsets = [] if args.instance_ids or args.stages is not None else ["full"] if args.predictions else ["small"]
        subsets = [name for value in (args.subset or default_subsets) for name in _comma_list(value)]
        outcome = harness(
            subset=subsets, num_samples=args.num_samples, max_workers=args.max_workers,
            model_name_or_path=args.model_name_or_path, model_patch_paths=args.model_patch_paths,
            output_dir=args.output_dir, dataset=args.dataset, instance_ids=args.instance_ids,
            languages=args.languages, agent=args.agent, model=args.model, agent_timeout=args.agent_timeout,
            test_timeout=args.test_timeout, predictions=args.predictions, cpus=args.cpus, memory=args.memory,
            pids_limit=args.pids_limit, disk=args.disk, pass_env=args.pass_env, agent_network=args.agent_network,
            ca_bundle=args.ca_bundle, force=args.force, progress=not args.no_progress, backend=args.backend,
            ray_address=args.ray_address, stages=args.stages, tries=args.tries,
        )
    except (HarnessError, DatasetError, AgentPatchError, SandboxError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    report = outcome.report
    print(f"{report['resolved_instances']}/{report['total_instances']} resolved "
          f"({report['unresolved_instances']} unresolved, {report['empty_patch_instances']} empty_patch, "
          f"{len(report['incomplete_ids'])} incomplete, {len(report['error_ids'])} error"
          + (f", {len(report['unfinished_ids'])} unfinished" if report["unfinished_ids"] else "") + ")")
    if args.tries > 1:
        print(f"pass_rate_1 {report['pass_rate_1']:.4f}, pass_rate_2 {report['pass_rate_2']:.4f}")
    for stage in outcome.stages:
        print(f"stage {stage.subset}: {stage.resolved}/{stage.instances} resolved (accuracy {stage.accuracy:.2f}, "
              f"threshold {stage.threshold if stage.threshold is not None else 'none'})")
    if outcome.stages:
        print(f"ended at stage {outcome.ended_at_stage}: {outcome.ended_because}")
    print(f"results: {outcome.run_dir}\nreport:  {outcome.report_path}")
    if outcome.interrupted:
        return 130
    return 0

