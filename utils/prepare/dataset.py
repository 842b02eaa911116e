"""The preparation: exercises -> instance repos + metadata JSON in a staging directory beside the
output, renamed into place at the end (on any error the previous output stays as it was)."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Sequence, TypeVar

from ..checkout import HOME_VARIABLE, UPSTREAM_METADATA_LINK, is_inside_checkout
from ..languages import get_language
from ..records.dataset import DEFAULT_DATASET_DIR, METADATA_FILENAME, instance_id_for
from .exercises import (CheckoutError, ExerciseLocation, InstancePlan, PrepareError, discover_exercises, plan_instance,
                        read_exercise, write_instance, write_metadata)
from .recording import FAST_COSTS, record_references


Item = TypeVar("Item")
Result = TypeVar("Result")


@dataclass(frozen=True)
class PrepareSummary:
    output_dir: Path
    instances_by_language: Mapping[str, int]
    seconds: float

    @property
    def instance_count(self) -> int:
        return sum(self.instances_by_language.values())


def prepare_dataset(
    benchmark_dir: Path,
    output_dir: Path = DEFAULT_DATASET_DIR,
    languages: Sequence[str] | None = None,
    workers: int | None = None,
    record_expected: bool = True,
    log: Callable[[str], None] = print,
    instance_ids: Sequence[str] | None = None,
) -> PrepareSummary:
    """`instance_ids`: prepare only these (of `languages`, or of every language).
    `record_expected` (the default) grades every reference solution and stub in Docker and
    records what grading's checks need (recording.py); False is the fast
    preparation, whose datasets are graded with those checks off (FAST_COSTS)."""
    started = time.monotonic()
    benchmark_dir = Path(benchmark_dir).resolve()
    output_dir = Path(output_dir).resolve()
    for language in languages or ():
        get_language(language)
    _check_output_location(benchmark_dir, output_dir)
    is_default = output_dir == DEFAULT_DATASET_DIR.resolve()
    if is_default:
        _check_default_outside_checkout(output_dir)
    locations = _only(discover_exercises(benchmark_dir, languages), instance_ids)
    workers = workers or os.cpu_count() or 1
    with ThreadPoolExecutor(max_workers=workers) as pool:
        plans = _all_or_first_error(pool, _plan, locations)
    output_dir.parent.mkdir(parents=True, exist_ok=True)
    staging_dir = Path(tempfile.mkdtemp(prefix=f".{output_dir.name}.staging-", dir=output_dir.parent))
    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            entries = _all_or_first_error(pool, lambda plan: write_instance(plan, staging_dir), plans)
        write_metadata(staging_dir, entries)
        if record_expected:
            record_references(staging_dir, entries, workers, log)
        else:
            log(f"fast preparation (no reference runs): {FAST_COSTS}")
        _replace_directory(staging_dir, output_dir)
    finally:
        shutil.rmtree(staging_dir, ignore_errors=True)
    if is_default:
        _link_upstream_metadata_path(output_dir)
    counts = Counter(plan.exercise.location.language for plan in plans)
    return PrepareSummary(output_dir, dict(sorted(counts.items())), time.monotonic() - started)


def _check_default_outside_checkout(output_dir: Path) -> None:
    """The default dataset holds the answers; the loops copy the checkout into what their meta
    agent edits (utils/checkout.py), so it never goes inside the checkout, even when told so."""
    if is_inside_checkout(output_dir):
        raise PrepareError(f"the default dataset folder {output_dir} is inside the checkout, where the loops' "
                           f"copies of their repository would hold the answers; set {HOME_VARIABLE} to a "
                           f"folder outside it (or pass --output_dir)")


def _link_upstream_metadata_path(dataset_dir: Path) -> None:
    """The metadata also at the path upstream's preparation wrote it (checkout.py says why): a
    link to the dataset outside the checkout (absolute: it leaves the checkout), so one file
    stays the only copy and the checkout itself holds none."""
    link = UPSTREAM_METADATA_LINK
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(dataset_dir / METADATA_FILENAME)


def _only(locations: list[ExerciseLocation], instance_ids: Sequence[str] | None) -> list[ExerciseLocation]:
    if instance_ids is None:
        return locations
    chosen = [location for location in locations
              if instance_id_for(location.language, location.slug) in instance_ids]
    unknown = sorted(set(instance_ids) - {instance_id_for(location.language, location.slug) for location in chosen})
    if unknown:
        raise CheckoutError(f"the checkout has no exercise for {', '.join(unknown)}")
    return chosen


def _plan(location: ExerciseLocation) -> InstancePlan:
    return plan_instance(read_exercise(location))


def _all_or_first_error(pool: ThreadPoolExecutor, work: Callable[[Item], Result], items: Sequence[Item]) -> list[Result]:
    """Results in input order; if some items fail, the first failure (in input order),
    mentioning how many others failed, so the message does not depend on scheduling."""
    futures: list[Future[Result]] = [pool.submit(work, item) for item in items]
    errors = [future.exception() for future in futures]
    failed = [error for error in errors if error is not None]
    if not failed:
        return [future.result() for future in futures]
    first = failed[0]
    if len(failed) > 1 and isinstance(first, PrepareError):
        raise PrepareError(f"{first} (and {len(failed) - 1} more exercise(s) with problems)") from first
    raise first


def _check_output_location(benchmark_dir: Path, output_dir: Path) -> None:
    if output_dir.is_relative_to(benchmark_dir) or benchmark_dir.is_relative_to(output_dir):
        raise PrepareError(f"output directory {output_dir} and benchmark checkout {benchmark_dir} must not contain each other")
    if output_dir.exists() and (not output_dir.is_dir() or _is_foreign_directory(output_dir)):
        raise PrepareError(f"refusing to replace {output_dir}: it exists and is not a prepared dataset")


def _is_foreign_directory(directory: Path) -> bool:
    return any(directory.iterdir()) and not (directory / METADATA_FILENAME).is_file()


def _replace_directory(new_dir: Path, target: Path) -> None:
    """Move `new_dir` to `target`; an existing target is swapped out, then deleted."""
    if not target.exists():
        os.rename(new_dir, target)
        return
    old_dir = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
    os.rename(target, old_dir / "dataset")
    try:
        os.rename(new_dir, target)
    except OSError:
        os.rename(old_dir / "dataset", target)
        raise
    finally:
        if target.exists():
            shutil.rmtree(old_dir, ignore_errors=True)
