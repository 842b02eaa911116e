"""Run agents on polyglot instances in parallel and grade them in fresh containers.

    python harness.py --subset small --max_workers 5
    python harness.py --dataset datasets/polyglot --subset samples --agent oracle
    python harness.py --config run.toml --max_workers 8      # a run file; flags override it
    python harness.py --build_images_only
    python harness.py --stages small:0.4,medium --model gpt-4o-mini   # staged (utils/run/stages.py)

Every run setting is declared once (utils/run/settings.py: type, default, check); the same names
are harness()'s keywords and a run file's keys. Python API for loops: `harness(...)` and
`report(...)` (report.py).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from ..agents.prepare import AgentPatchError
from ..pipeline.build_cache import prune_caches
from ..records.dataset import FULL_SUBSET, DatasetError, load_dataset, read_subset
from ..seam.errors import SandboxError
from ..seam.image_settings import ImageSettings
from ..views.report import attempt_lines
from .flow import RunOutcome, run
from .provision import open_backend
from .settings import HarnessError, RunConfig, given_on_command_line, parser, resolve, run_config


def main(argv: list[str] | None = None) -> int:
    """The command line: a run (exit 0; 130 interrupted), --build_images_only or
    --prune_caches; a setting or input the run cannot start with is one line and exit 2."""
    flags, commands = given_on_command_line(parser(__doc__).parse_args(argv))
    try:
        values = resolve(commands.get("config"), flags, from_text=True)
        if commands.get("build_images_only"):
            return build_images_only(run_config(values), commands.get("base_image"))
        if commands.get("prune_caches"):
            return prune_backend_caches(run_config(values))
        if "subset" not in values:
            values["subset"] = command_line_subsets(values, run_config(values).dataset)
        config = run_config(values)
        outcome = run(config)
    except (HarnessError, DatasetError, AgentPatchError, SandboxError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print_summary(outcome, config.tries)
    return 130 if outcome.interrupted else 0


DEFAULT_SUBSET = "small"  # HyperAgents' default


def command_line_subsets(values: dict[str, Any], dataset: Path) -> tuple[str, ...]:
    """Without --subset (on the command line or in the run file): the ids named by
    --instance_ids, or every instance a --predictions file grades, or else HyperAgents'
    default, small, when the dataset holds it; a dataset prepared with --instance_ids or
    --languages that does not is run whole, with a note, rather than refused for ids it was
    never meant to hold. (harness() without a subset selects every instance, as it always did.)"""
    if values.get("instance_ids") or values.get("stages") is not None:
        return ()
    if values.get("predictions"):
        return (FULL_SUBSET,)
    try:
        held = {instance.instance_id for instance in load_dataset(dataset)}
    except DatasetError:
        return (DEFAULT_SUBSET,)  # the run says what is wrong with the dataset, in its own words
    small = read_subset(DEFAULT_SUBSET)
    if held.issuperset(small):
        return (DEFAULT_SUBSET,)
    print(f"note: the dataset holds {len(held.intersection(small))} of the {len(small)} instances of the default "
          f"subset {DEFAULT_SUBSET}: running all {len(held)} of its instances (--subset or --instance_ids to choose)",
          file=sys.stderr)
    return (FULL_SUBSET,)


def build_images_only(config: RunConfig, base_image: str | None) -> int:
    log = lambda message: print(message, file=sys.stderr)  # noqa: E731
    provider = open_backend(config.backend, config.backend_options)
    provider.prepare(log)
    settings = ImageSettings.from_env(base_image=base_image, ca_bundle=config.ca_bundle)
    print(f"{'image':<12} {'tag':<44} {'status':<7} {'seconds':>8}")
    languages = list(config.languages) if config.languages is not None else None
    for result in provider.build_images(settings, languages, log):
        print(f"{result.name:<12} {result.tag:<44} {'built' if result.built else 'cached':<7} {result.seconds:>8.1f}",
              flush=True)
    return 0


def prune_backend_caches(config: RunConfig) -> int:
    provider = open_backend(config.backend, config.backend_options)
    provider.prepare(lambda message: print(message, file=sys.stderr))
    print(f"removed {prune_caches(provider)} agent image tag(s) and build-cache volume(s)")
    return 0


def print_summary(outcome: RunOutcome, tries: int) -> None:
    report = outcome.report
    print(f"{report['resolved_instances']}/{report['total_instances']} resolved "
          f"({report['unresolved_instances']} unresolved, {report['empty_patch_instances']} empty_patch, "
          f"{len(report['incomplete_ids'])} incomplete, {len(report['error_ids'])} error"
          + (f", {len(report['unfinished_ids'])} unfinished" if report["unfinished_ids"] else "") + ")")
    if tries > 1:
        print(f"pass_rate_1 {report['pass_rate_1']:.4f}, pass_rate_2 {report['pass_rate_2']:.4f}")
    for line in attempt_lines(report):  # --attempts K > 1: the buckets above are attempt 1's
        print(line)
    for stage in outcome.stages:
        print(f"stage {stage.subset}: {stage.resolved}/{stage.instances} resolved (accuracy {stage.accuracy:.2f}, "
              f"threshold {stage.threshold if stage.threshold is not None else 'none'})")
    if outcome.stages:
        print(f"ended at stage {outcome.ended_at_stage}: {outcome.ended_because}")
    print(f"results: {outcome.run_dir}\nreport:  {outcome.report_path}")
