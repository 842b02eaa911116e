"""A run loaded and scored once: the object every view renders (utils/views/).

    loaded = load_output_dir(Path("runs"))          # report.py --output_dir: every run below
    loaded = load_run_dir(Path("runs/gen_1_0"))     # report.py --compare: one run directory

Each result file is read once, here; the run report is computed once, here (build_run_report).
Views (report.json and the text table, compare, HTML, pricing) take the LoadedRun and read no
result file or run_settings.json themselves; the transcripts and test outputs they show are
found through `files(instance_id)`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from .results import InstanceResult, RunReport, build_run_report, load_results
from .run_dir import InstanceFiles, OutputDirectory, RunDirectory, RunSettings


class LoadError(ValueError):
    """What was asked for cannot be loaded (a missing directory, a bad denominator); one line."""


@dataclass(frozen=True)
class LoadedRun:
    """The counted results of an output directory (every run directory below it) or of one run
    directory, with where each came from, the settings they were made with, and their report."""

    source: Path                                  # the output directory or run directory loaded
    results: Mapping[str, InstanceResult]         # instance id -> its counted result, sorted by id
    run_dirs: Mapping[str, RunDirectory]          # instance id -> the run directory of that result
    settings: Mapping[RunDirectory, RunSettings | None]  # each counted run directory's run_settings.json
    report: RunReport                             # build_run_report over `results`, computed once

    def files(self, instance_id: str) -> InstanceFiles | None:
        """The files of an instance's counted result (None for an instance not loaded)."""
        run_dir = self.run_dirs.get(instance_id)
        return run_dir.instance(instance_id) if run_dir is not None else None

    @property
    def allowed_tries(self) -> int:
        """The most tries any counted run directory's settings allowed (1 when none says)."""
        return max([1, *(settings.tries for settings in self.settings.values() if settings is not None)])

    @property
    def dataset_hash(self) -> str | None:
        """The dataset hash of a run directory's settings (None: absent, empty, or several run
        directories that disagree)."""
        hashes = {settings.known_dataset_hash if settings is not None else None for settings in self.settings.values()}
        return hashes.pop() if len(hashes) == 1 else None

    def scored_over(self, instance_ids: Iterable[str], name: str = "") -> RunReport:
        """The report of these loaded instances alone (compare: the instances both runs hold)."""
        ids = list(instance_ids)
        return build_run_report(name, ids, {instance_id: self.results[instance_id] for instance_id in ids})


def load_output_dir(output_dir: str | Path, expected_num_tasks: int | None = None,
                    run_keyword: str | None = None) -> LoadedRun:
    """Every run directory's results under `output_dir` (with `run_keyword`, those whose name
    holds it, as HyperAgents' report matched its run files), the latest file per instance,
    scored over expected_num_tasks when given (else over the instances found). A folder with
    no result is a LoadError, not a 0/0 report."""
    output = OutputDirectory(output_dir)
    if not output.path.is_dir():
        raise LoadError(f"output directory {output.path} does not exist")
    if expected_num_tasks is not None and expected_num_tasks <= 0:
        raise LoadError("--expected_num_tasks must be positive")
    paths = [path for path in output.result_paths() if run_keyword is None or run_keyword in path.parent.name]
    loaded = _loaded(output.path, paths, run_keyword or "", expected_num_tasks)
    if not loaded.results:
        named = f" of a run named like {run_keyword!r}" if run_keyword is not None else ""
        raise LoadError(f"{output.path} holds no instance results{named} (expected <name>_0/<instance_id>.json)")
    return loaded


def load_run_dir(run_dir: str | Path) -> LoadedRun:
    """One run directory's results (its latest file per instance), scored under its own name."""
    directory = RunDirectory(run_dir)
    if not directory.path.is_dir():
        raise LoadError(f"run directory {directory.path} does not exist")
    return _loaded(directory.path, directory.result_paths(), directory.path.name, None)


def _loaded(source: Path, paths: list[Path], name: str, expected_num_tasks: int | None) -> LoadedRun:
    counted = load_results(paths)
    run_dirs = {instance_id: RunDirectory(path.parent) for instance_id, path in counted.files.items()}
    settings = {run_dir: run_dir.read_settings() for run_dir in sorted(set(run_dirs.values()), key=lambda d: d.path)}
    report = build_run_report(name, list(counted.results), counted.results, expected_num_tasks,
                              counted.in_several_files)
    return LoadedRun(source, counted.results, run_dirs, settings, report)
