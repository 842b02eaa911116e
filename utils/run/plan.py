"""What a run will do, decided before any sandbox exists: the checks across settings, the
selection, the predictions, the agent (prepared by utils/agents/), and what a resume reuses."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from ..agents.layouts import LAYOUTS, AgentLayout, detect_layout
from ..agents.prepare import prepare_agent, prepare_layout_agent
from ..checkout import DEFAULT_AGENT_DIR
from ..records.dataset import SUBSETS_DIR, Instance, available_subsets, dataset_hash, load_dataset, select_instances
from ..records.results import InstanceResult, combine_attempts
from ..records.run_dir import RunDirectory, RunSettings
from ..seam.agent import PreparedAgent
from .attempts import finished_attempts
from .settings import DEFAULT_PASS_ENV, RESUME_SETTINGS, SETTINGS, HarnessError, RunConfig
from .stages import StageError, check_stages


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


def check_settings(config: RunConfig) -> None:
    """Each setting's own check (utils/run/settings.py) on a config however it was built: one line
    naming the setting."""
    for name, declared in SETTINGS.items():
        value = getattr(config, name)
        problem = declared.check(value) if declared.check is not None and value is not None else None
        if problem:
            raise HarnessError(f"--{name} {problem}, got {value!r}")


def check_agent_model(agent: str, model: str | None, pass_env: list[str] | None) -> None:
    """The default agent cannot run without a model: stop before the first container rather
    than grade 225 empty patches."""
    if Path(agent).resolve() != DEFAULT_AGENT_DIR.resolve() or model:
        return
    passed = pass_env if pass_env is not None else DEFAULT_PASS_ENV
    if "OPENAI_MODEL" in passed and os.environ.get("OPENAI_MODEL"):
        return
    raise HarnessError("the default agent needs a model: pass --model NAME (or set OPENAI_MODEL)")


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
    agent, the dataset's hash and the settings declared resume=True (utils/run/settings.py); a
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
