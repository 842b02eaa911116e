"""One run: plan -> provision -> execute -> report, and `harness(...)`, its Python API.

The settings (names, types, defaults, checks, the run file) are declared in settings.py; the
steps are plan.py, provision.py, execute.py (attempts.py), the stages stages.py; the command
line is cli.py.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

from ..records.dataset import Instance
from ..records.results import InstanceResult, build_run_report
from ..records.run_dir import write_json
from ..seam.protocol import ImageSet
from .execute import execute
from .plan import RunPlan, check_config, plan_run
from .provision import clean_up_run, provision
from .settings import RunConfig, resolve, run_config
from .stages import Stage, StageResult, ended_because, judge_stage, staged_report_json


@dataclass(kw_only=True)
class RunOutcome:
    run_dir: Path
    report_path: Path
    results: dict[str, InstanceResult]
    report: dict
    interrupted: bool = False
    images: ImageSet = ImageSet({}, {})
    # A staged run (utils/run/stages.py): each stage run, the last one's subset, and why the run ended there.
    stages: tuple[StageResult, ...] = ()
    ended_at_stage: str | None = None
    ended_because: str | None = None

    def __iter__(self) -> Iterator[Path]:
        """The run folders, as the loops' harness returned a list of them (DGM stores
        `[str(d) for d in harness(...)]`): this run's one directory."""
        return iter((self.run_dir,))

    def __len__(self) -> int:
        return 1


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

    Every keyword is the setting of the same name in utils/run/settings.py (RunConfig: type,
    default, check, help; the command line's --NAME). `config` is a run file (TOML or YAML,
    format in utils/run/settings.py); a keyword passed here beats the file, which beats the
    default. A bad setting, an unknown keyword or a bad run file raises HarnessError (its
    subclass ConfigFileError for the file) before anything starts.

    `stages` ("small:0.4,medium" or a list of Stage) runs a staged evaluation instead of one
    selection (it excludes subset, instance_ids, num_samples and predictions): stage k runs the
    instances of stages 1..k and the run goes on only while the accuracy over those instances
    reaches the stage's threshold (utils/run/stages.py defines it); RunOutcome.stages,
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
            clean_up_run(provisioned.provider, provisioned.run_id)
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


def write_report(plan: RunPlan, results: dict[str, InstanceResult], interrupted: bool,
                 images: ImageSet) -> RunOutcome:
    config = plan.config
    report = build_run_report(config.name, [instance.instance_id for instance in plan.instances],
                              results).run_report_json()
    write_json(config.report_path, report)
    return RunOutcome(run_dir=config.run_dir, report_path=config.report_path, results=results, report=report, interrupted=interrupted, images=images)


def _selected(results: dict[str, InstanceResult], instances: list[Instance]) -> dict[str, InstanceResult]:
    wanted = {instance.instance_id for instance in instances}
    return {instance_id: result for instance_id, result in results.items() if instance_id in wanted}
