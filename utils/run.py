"""One run: plan -> provision -> execute -> report, and `harness(...)`, its Python API.

The settings (names, types, defaults, checks, the run file) are declared in utils/settings.py;
the command line is utils/cli.py.
"""

from __future__ import annotations

import dataclasses
import json
import os
import secrets
import signal
import sys
import tempfile
import threading
import time
import traceback
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from tqdm import tqdm

from .checkout import DEFAULT_AGENT_DIR
from .seam.agent import PreparedAgent, prepare_agent, prepare_layout_agent
from .seam.agent_layouts import LAYOUTS, AgentLayout, detect_layout
from .pipeline.agent_phase import AgentRunSettings
from .records.dataset import SUBSETS_DIR, Instance, available_subsets, dataset_hash, load_dataset, select_instances
from .seam.image_settings import ImageSettings
from .languages import LANGUAGES
from .outcomes import BUCKETS, FINISHED_BUCKETS, Bucket, Reason
from .records.results import (InstanceResult, build_run_report, combine_attempts, load_instance_results,
                              read_instance_result)
from .records.run_dir import RunDirectory, RunSettings, write_atomic, write_json
from .pipeline.instance import InstanceJob, RunCancelled, queued, run_instance
from .pipeline.stages import Stage, StageError, StageResult, check_stages, ended_because, judge_stage, staged_report_json
from .seam.registry import open_provider
from .seam.protocol import ImageSet, Limits, SandboxProvider
from .seam.errors import SandboxError
from .pipeline.pools import Prestart, Sandboxes
from .settings import (DEFAULT_PASS_ENV, RESUME_SETTINGS, SETTINGS, HarnessError, RunConfig, resolve, run_config,
                       size_in_bytes)

@dataclass(kw_only=True)
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

    def __iter__(self) -> Iterator[Path]:
        """The run folders, as the loops' harness returned a list of them (DGM stores
        `[str(d) for d in harness(...)]`): this run's one directory."""
        return iter((self.run_dir,))

    def __len__(self) -> int:
        return 1


@dataclass(kw_only=True, frozen=True)
class RunPlan:
    """What the run will do, decided before any sandbox exists."""
    config: RunConfig
    instances: tuple[Instance, ...]
    agent: PreparedAgent
    resume_key: RunSettings  # run_settings.json: what a resume must match
    previous: dict[str, InstanceResult]  # finished verdicts reused (every attempt finished)
    predicted: dict[str, str] | None = None  # --predictions: instance id -> patch
    # --attempts: instance id -> {attempt number: its finished result} for the instances some of
    # whose attempts are still to run (a resume keeps those, runs the rest)
    finished_attempts: dict[str, dict[int, InstanceResult]] = dataclasses.field(default_factory=dict)


@dataclass(frozen=True)
class Provisioned:
    """Where the run executes: its provider, images, run id, agent network and jobs."""
    provider: SandboxProvider
    images: ImageSet
    run_id: str
    jobs: tuple[InstanceJob, ...]


class _Unset:
    def __repr__(self) -> str:
        return "<the run file's value, else the default>"


UNSET: Any = _Unset()  # a keyword not passed to harness(): a run file may set it


def harness(
    *,
    config: str | os.PathLike | None = None,
    subset: str | Sequence[str] = UNSET,
    stages: str | Sequence[Stage] | None = UNSET,
    num_samples: int = UNSET,
    max_workers: int = UNSET,
    model_name_or_path: str = UNSET,
    model_patch_paths: Sequence[str | os.PathLike] = UNSET,
    output_dir: str | os.PathLike = UNSET,
    pred_dname: str | os.PathLike | None = UNSET,
    dataset: str | os.PathLike = UNSET,
    instance_ids: Sequence[str] | None = UNSET,
    languages: Sequence[str] | None = UNSET,
    agent: str = UNSET,
    agent_layout: str = UNSET,
    root_dir: str | os.PathLike | None = UNSET,
    test_timeout: int = UNSET,
    agent_timeout: int = UNSET,
    model: str | None = UNSET,
    predictions: str | os.PathLike | None = UNSET,
    cpus: float | None = UNSET,
    memory: str | None = UNSET,
    pids_limit: int = UNSET,
    disk: str | None = UNSET,
    pass_env: Sequence[str] | None = UNSET,
    agent_network: str = UNSET,
    ca_bundle: str | None = UNSET,
    strict: bool = UNSET,
    force: bool = UNSET,
    progress: bool = UNSET,
    backend: str = UNSET,
    backend_options: Mapping[str, str] = UNSET,
    tries: int = UNSET,
    attempts: int = UNSET,
    num_evals_parallel: int = UNSET,
    variants: bool = UNSET,
    ray_address: str = UNSET,  # an alias: backend_options={"address": ...}
    test_task_list: Sequence[str] | None = UNSET,  # an alias: instance_ids (HyperAgents, DGM)
    dataset_path: str | os.PathLike = UNSET,  # an alias: dataset, its metadata JSON (HyperAgents, DGM)
    num_evals: int = UNSET,  # an alias: attempts (HyperAgents, DGM)
    **unknown: Any,
) -> RunOutcome:
    """Run (or resume) one evaluation; returns the results, the report and their paths.

    Every keyword is the setting of the same name in utils/settings.py (RunConfig: type,
    default, check, help; the command line's --NAME). `config` is a run file (TOML or YAML,
    format in utils/settings.py); a keyword passed here beats the file, which beats the
    default. A bad setting, an unknown keyword or a bad run file raises HarnessError (its
    subclass ConfigFileError for the file) before anything starts.

    `stages` ("small:0.4,medium" or a list of Stage) runs a staged evaluation instead of one
    selection (it excludes subset, instance_ids, num_samples and predictions): stage k runs the
    instances of stages 1..k and the run goes on only while the accuracy over those instances
    reaches the stage's threshold (utils/stages.py defines it); RunOutcome.stages,
    ended_at_stage and ended_because say where and why it ended.

    `tries=2` is Aider's two-try protocol: an instance unresolved (or empty_patch) after its
    first try gets a second agent run from that try's working tree, with the trimmed test
    output as a file (agent/README.md); the report adds pass_rate_1 and pass_rate_2.

    `attempts=K` (HyperAgents' `num_evals`) runs K independent attempts of each instance, each
    from the same starting tree in a fresh container and graded on its own (`num_evals_parallel`
    of one instance at once); accuracy_score is then the mean over attempts and the report adds
    pass@k, pass^k and a 95 % interval (utils/records/results.py RunReport.attempts_json).

    HyperAgents' and DGM's calls work unchanged (docs/usage.md, "HyperAgents / DGM"):
    `test_task_list`, `dataset_path`, `pred_dname` (the run directory's parent), `root_dir` and
    `agent_layout` (whose task agent runs), `num_evals` and `num_evals_parallel`; the
    returned RunOutcome iterates over the run folders as their list did."""
    # The keywords as passed, read back from the frame: the signature is the list of names
    # (tests/test_settings.py holds it to the declarations), not a second place for defaults.
    passed = {name: value for name, value in locals().items() if name not in ("config", "unknown")}
    given = {**{name: value for name, value in passed.items() if value is not UNSET}, **unknown}
    return run(run_config(resolve(config, given)))


def run(config: RunConfig) -> RunOutcome:
    """The run `config` describes: its cross-setting checks, then one run or a staged one."""
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
    previous = {**plan.previous, **_selected(earlier, list(plan.instances))}
    partial = {key: value for key, value in plan.finished_attempts.items() if key not in previous}
    return dataclasses.replace(plan, previous=previous, finished_attempts=partial)


def _run_stages(config: RunConfig) -> RunOutcome:
    """Stage after stage in one run directory, each over the instances of the stages so far,
    reusing every verdict of the earlier ones; stops after the first stage below its threshold."""
    judged: list[StageResult] = []
    results: dict[str, InstanceResult] = {}
    for number, stage in enumerate(config.stages, 1):
        subsets = tuple(earlier.subset for earlier in config.stages[:number])
        outcome = _run(dataclasses.replace(config, subset=subsets, stages=None), results)
        results = outcome.results
        # With attempts, each instance counts its success rate: the threshold is on the mean over attempts.
        resolved = sum((Fraction(result.attempt_count.successes, result.attempt_count.attempts)
                        for result in outcome.results.values()), Fraction(0))
        judged.append(judge_stage(stage, outcome.report["total_instances"], resolved))
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


def check_stage_settings(config: RunConfig) -> None:
    """--stages names its own subsets: it excludes the other ways of selecting instances."""
    if config.stages is None:
        return
    given = [name for name, is_given in (("--subset", bool(config.subset)),
                                         ("--instance_ids", config.instance_ids is not None),
                                         ("--num_samples", config.num_samples != -1),
                                         ("--predictions", config.predictions is not None)) if is_given]
    if given:
        raise HarnessError(f"--stages cannot be combined with {', '.join(given)}: each stage names its subset")
    try:
        check_stages(config.stages, available_subsets(SUBSETS_DIR))
    except StageError as error:
        raise HarnessError(str(error)) from None


def check_tries(config: RunConfig) -> None:
    if config.tries > 1 and config.predictions is not None:
        raise HarnessError("--tries 2 needs an agent to run again; --predictions grades fixed patches")


def check_attempts(config: RunConfig) -> None:
    if config.attempts > 1 and config.predictions is not None:
        raise HarnessError(f"--attempts {config.attempts} needs an agent to run again; --predictions grades "
                           f"fixed patches")


def check_config(config: RunConfig) -> None:
    """What a RunConfig must hold beyond each setting's own check (settings.py), which runs
    again here for a config built directly."""
    check_settings(config)
    check_attempts(config)
    check_tries(config)
    check_stage_settings(config)
    layout = agent_layout_of(config)
    if config.predictions is None and layout is None:
        check_agent_model(config.agent, config.model, config.pass_env)
    for path in config.model_patch_paths:
        if not path.is_file():
            raise HarnessError(f"model patch {path} does not exist")


def plan_run(config: RunConfig, workdir: Path) -> RunPlan:
    """Select the instances, read predictions, prepare the agent, find what a resume reuses."""
    instances = _select(config.dataset, list(config.subset), config.instance_ids, config.languages,
                        config.num_samples)
    predicted = _read_predictions(config.predictions, instances) if config.predictions else None
    if predicted is not None:
        instances = [instance for instance in instances if instance.instance_id in predicted]
    check_recorded(instances, config.dataset, config.strict, config.variants)
    agent = (PreparedAgent(name="predictions", tree=None, agent_hash="predictions") if predicted is not None
             else _prepare_agent(config, workdir))
    for warning in agent.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    key = resume_key(agent, config)
    finished = _check_resume(config.run_dir, key, config.force, instances, config.attempts)
    previous = {instance_id: combine_attempts([attempts[number] for number in range(1, config.attempts + 1)])
                for instance_id, attempts in finished.items() if len(attempts) == config.attempts}
    partial = {instance_id: attempts for instance_id, attempts in finished.items() if instance_id not in previous}
    return RunPlan(config=config, instances=tuple(instances), agent=agent, resume_key=key, previous=previous, predicted=predicted, finished_attempts=partial)


def check_recorded(instances: Sequence[Instance], dataset: Path, strict: bool, variants: bool = False) -> None:
    """Say once, loudly, which grading checks this run cannot make because the dataset lacks
    what they need (prepared with --fast; with `variants`, the run asks for variants too);
    with `strict`, refuse to run instead."""
    problem = missing_recordings(instances, dataset, variants)
    if problem is None:
        return
    if strict:
        raise HarnessError(f"--strict: {problem}")
    print(f"warning: {problem}", file=sys.stderr, flush=True)


def missing_recordings(instances: Sequence[Instance], dataset: Path, variants: bool = False) -> str | None:
    """One line naming the checks off for `instances` (with `variants`: the variants the run
    asks for and cannot plant) and how to prepare properly; None: all on."""
    off: dict[str, int] = {}
    for instance in instances:
        for check in instance.checks_off + (("variants",) if variants and instance.variants_missing else ()):
            off[check] = off.get(check, 0) + 1
    if not off:
        return None
    named = ", ".join(f"{check} ({count} of {len(instances)} instances)" for check, count in off.items())
    return (f"the dataset {dataset} was prepared without reference runs (--fast): grading runs without the checks "
            f"{named}; prepare it again without --fast (python prepare_polyglot_dataset.py --benchmark_dir ...) "
            f"for every check")


def agent_layout_of(config: RunConfig) -> AgentLayout | None:
    """The host loop's agent layout that runs (None: --agent, this project's contract).
    `auto`: the layout whose task agent root_dir (else the current directory) holds, unless
    --agent names an agent; a root_dir that holds none is an error."""
    if config.agent_layout in LAYOUTS:
        return LAYOUTS[config.agent_layout]
    agent_given = Path(config.agent).resolve() != DEFAULT_AGENT_DIR.resolve()
    if config.agent_layout == "own" or agent_given:
        return None
    found = detect_layout(layout_root(config))
    if found is None and config.root_dir is not None:
        raise HarnessError(f"--root_dir {config.root_dir} holds no HyperAgents (task_agent.py, run_task_agent.py) or "
                           f"DGM (coding_agent_polyglot.py) task agent; name --agent_layout or --agent")
    return found


def layout_root(config: RunConfig) -> Path:
    return (config.root_dir or Path.cwd()).resolve()


def _prepare_agent(config: RunConfig, workdir: Path) -> PreparedAgent:
    layout = agent_layout_of(config)
    if layout is None:
        return prepare_agent(config.agent, list(config.model_patch_paths), workdir)
    return prepare_layout_agent(layout, layout_root(config), list(config.model_patch_paths), workdir)


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
    limits = _default_limits(config.max_workers, config.cpus, config.memory, config.pids_limit, config.disk)
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


def execute(plan: RunPlan, provisioned: Provisioned) -> tuple[dict[str, InstanceResult], bool]:
    """Every job run; (results, interrupted) with the reused results included."""
    run_dir = plan.config.run_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    RunDirectory(run_dir).write_settings(plan.resume_key)
    results = dict(plan.previous)
    attempts = AttemptCollector(plan.config.attempts, run_dir, plan.finished_attempts)
    reused = len(plan.previous) * plan.config.attempts + attempts.finished_count
    interrupted = _execute(provisioned.provider, list(provisioned.jobs), results, max(1, plan.config.max_workers),
                           provisioned.run_id, plan.config.progress, reused, attempts,
                           plan.config.num_evals_parallel)
    return results, interrupted


class AttemptCollector:
    """The attempts of each instance as they finish; once all of an instance's are in, its
    result (utils/records/results.py combine_attempts), written to its result file. With one
    attempt the attempt's result is the instance's (run_instance wrote it already)."""

    def __init__(self, attempts: int, run_dir: Path, finished: Mapping[str, Mapping[int, InstanceResult]]) -> None:
        self.attempts, self.run_dir = attempts, RunDirectory(run_dir)
        self.done: dict[str, dict[int, InstanceResult]] = {key: dict(value) for key, value in finished.items()}

    @property
    def finished_count(self) -> int:
        return sum(len(attempts) for attempts in self.done.values())

    def add(self, instance_id: str, number: int, result: InstanceResult) -> InstanceResult | None:
        """Attempt `number`'s result; the instance's result when it was the last one missing."""
        if self.attempts == 1:
            return result
        attempts = self.done.setdefault(instance_id, {})
        attempts[number] = result
        if len(attempts) < self.attempts:
            return None
        combined = combine_attempts([attempts[k] for k in range(1, self.attempts + 1)])
        write_atomic(self.run_dir.instance(instance_id).result, combined.to_json())
        return combined


def write_report(plan: RunPlan, results: dict[str, InstanceResult], interrupted: bool,
                 images: ImageSet) -> RunOutcome:
    config = plan.config
    report = build_run_report(config.name, [instance.instance_id for instance in plan.instances],
                              results).run_report_json()
    write_json(config.report_path, report)
    return RunOutcome(run_dir=config.run_dir, report_path=config.report_path, results=results, report=report, interrupted=interrupted, images=images)


def check_settings(config: RunConfig) -> None:
    """Each setting's own check (utils/settings.py) on a config however it was built: one line
    naming the setting."""
    for name, declared in SETTINGS.items():
        value = getattr(config, name)
        problem = declared.check(value) if declared.check is not None and value is not None else None
        if problem:
            raise HarnessError(f"--{name} {problem}, got {value!r}")


def open_backend(backend: str, options: Mapping[str, str]) -> SandboxProvider:
    """The backend's provider with its options (--backend_option); an option the backend does
    not take is a SandboxError naming it (utils/seam/registry.py)."""
    return open_provider(backend, **options)


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


def resume_key(agent: PreparedAgent, config: RunConfig) -> RunSettings:
    """What this run's results are made with (run_settings.json, utils/records/run_dir.py): the
    agent, the dataset's hash and the settings declared resume=True (utils/settings.py); a
    resume must match every field, or its verdicts would mix agents, datasets or timeouts."""
    return RunSettings(agent.name, agent.agent_hash, dataset_hash(config.dataset),
                       {name: getattr(config, name) for name in RESUME_SETTINGS})


def _check_resume(run_dir: Path, key: RunSettings, force: bool, instances: Sequence[Instance],
                  attempts: int) -> dict[str, dict[int, InstanceResult]]:
    """The finished attempts to reuse, per selected instance; refuses to mix runs whose settings
    differ (more attempts than the run had is no difference: the missing ones run)."""
    if force or not run_dir.is_dir():
        return {}
    saved = RunDirectory(run_dir).read_settings()
    differing = key.resume_conflicts(saved) if saved is not None else []
    if differing:
        raise HarnessError(f"{run_dir} holds results made with other settings ({', '.join(differing)} differ); "
                           f"use another --model_name_or_path or --force")
    wanted = {instance.instance_id for instance in instances}
    return finished_attempts(RunDirectory(run_dir), wanted, attempts)


def finished_attempts(run_dir: RunDirectory, instance_ids: set[str],
                      attempts: int) -> dict[str, dict[int, InstanceResult]]:
    """{instance id: {attempt number: its finished result}}: attempt 1 from the instance's own
    result file (its top-level keys), attempt k from attempt<k>/ (RunDirectory.attempt)."""
    found: dict[str, dict[int, InstanceResult]] = {}
    for instance_id, result in load_instance_results(run_dir.path).items():
        if instance_id in instance_ids and result.eval_result in FINISHED_BUCKETS:
            found.setdefault(instance_id, {})[1] = result.without_attempts()
    for number in range(2, attempts + 1):
        for instance_id in sorted(instance_ids):
            result = read_instance_result(run_dir.attempt(instance_id, number).result)
            if result is not None and result.instance_id == instance_id and result.eval_result in FINISHED_BUCKETS:
                found.setdefault(instance_id, {})[number] = result
    return found


def _selected(results: dict[str, InstanceResult], instances: list[Instance]) -> dict[str, InstanceResult]:
    wanted = {instance.instance_id for instance in instances}
    return {instance_id: result for instance_id, result in results.items() if instance_id in wanted}


def _default_limits(workers: int, cpus: float | None, memory: str | None, pids: int, disk: str | None) -> Limits:
    cores = os.cpu_count() or 1
    total_memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    default_memory = f"{max(1, min(8, total_memory // (1 << 30) // max(1, workers)))}g"
    return Limits(cpus=cpus or float(cores), memory=memory or default_memory, pids=pids,
                  disk=size_in_bytes(disk) if disk else None)


class AttemptGate:
    """At most `parallel` attempts of one instance at once (--num_evals_parallel)."""

    def __init__(self, parallel: int) -> None:
        self.parallel = max(1, parallel)
        self._gates: dict[str, threading.Semaphore] = {}
        self._lock = threading.Lock()

    def of(self, instance_id: str) -> threading.Semaphore:
        with self._lock:
            return self._gates.setdefault(instance_id, threading.Semaphore(self.parallel))


def _run_queued(job: InstanceJob, index: int, stop: threading.Event, sandboxes: Sandboxes,
                prestart: Prestart, gate: AttemptGate) -> InstanceResult:
    with gate.of(job.instance.instance_id):
        if stop.is_set():
            raise RunCancelled()
        prestart.starting(index)
        return run_instance(sandboxes, job, stop, after_agent=lambda: prestart.agent_done(index))


def _execute(provider: SandboxProvider, jobs: list[InstanceJob], results: dict[str, InstanceResult], workers: int,
             run_id: str, progress: bool, reused: int, attempts: AttemptCollector, parallel: int = 1) -> bool:
    """Every job (one attempt of one instance) run; the progress bar counts attempts."""
    stop = threading.Event()
    previous_handlers = _install_signal_handlers(stop)
    unit = "attempt" if attempts.attempts > 1 else "inst"
    bar = tqdm(total=len(jobs) + reused, initial=reused, disable=not progress, unit=unit, dynamic_ncols=True)
    _update_bar(bar, results)
    sandboxes = Sandboxes(provider, run_id, background_removal=True)
    prestart = Prestart(sandboxes, [queued(job) for job in jobs], workers)
    gate = AttemptGate(parallel)
    try:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="instance") as executor:
            pending: dict[Future, InstanceJob] = {
                executor.submit(_run_queued, job, index, stop, sandboxes, prestart, gate): job
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
                    combined = attempts.add(job.instance.instance_id, job.attempt, result)
                    if combined is not None:
                        results[job.instance.instance_id] = combined
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
        write_atomic(RunDirectory(job.output_dir).attempt(job.instance.instance_id, job.attempt).result,
                     result.to_json())
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
