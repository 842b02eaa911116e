"""The reference runs of a preparation: every reference solution and untouched stub graded once
in Docker (utils/pipeline/expected_tests.py), what grading's checks need recorded into the
metadata, each run kept in RECORDINGS_DIR as it finishes so that an interrupted preparation
resumes, with an estimate up front and progress lines."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Mapping, Sequence

from ..checkout import DATA_HOME
from ..judging.variants import RECORDING_FAILED
from ..outcomes import GradingMode
from ..records.dataset import MetadataEntry
from .exercises import write_metadata

if TYPE_CHECKING:  # grading reference runs needs Docker: imported only to record expected tests
    from ..pipeline.expected_tests import ReferenceRun

# What a dataset prepared with --fast lacks, in the words of --help and the log.
FAST_COSTS = ("grading then runs without the checks that need a reference run: expected_tests (every test the "
              "reference ran must run and pass: a solution that ends the run early can resolve) and canaries "
              "(no mutated copies of real tests are planted: a forged report is not caught); stub verdicts "
              "(stub_passes) stay unknown. Skips upstream intends (jest's test.skip) are still known, from the "
              "test files")
# Beside every checkout's data folder (utils/checkout.py): shared by checkouts and their copies in
# host repositories, outside all of them. One file per instance and input key.
RECORDINGS_DIR = DATA_HOME.parent / "recordings"
PROGRESS_EVERY = 10  # a progress line per this many recorded instances (and the last)
# Seconds one reference + stub grading takes per language on one core of a quiet machine: the
# split between languages follows their build costs; the sum is the ~10 minutes the gate's
# preparation of all 225 takes on a quiet 2-core machine. The estimate divides by the workers that
# can run at once; the progress lines then give the time left at the rate measured.
SECONDS_PER_INSTANCE = {"cpp": 10.0, "go": 4.0, "java": 7.0, "javascript": 4.0, "python": 2.0, "rust": 7.0}


def record_references(staging_dir: Path, entries: list[MetadataEntry], workers: int,
                      log: Callable[[str], None]) -> None:
    """Grade every reference solution and every untouched stub in Docker; store the
    reference's test names (expected_tests, expected_skips), the tests that carry a canary
    and whether the stub passes. Each run is kept in the recordings cache as it finishes, and
    taken from it when its inputs are unchanged: an interrupted preparation resumes there."""
    from ..pipeline.expected_tests import record_expected_tests

    cache = RecordingCache(RECORDINGS_DIR, {entry.instance_id: recording_key(entry) for entry in entries})
    earlier = cache.load()
    todo = [entry for entry in entries if entry.instance_id not in earlier]
    log(_estimate_line(todo, len(earlier), workers))
    progress = Progress(len(todo), workers, log)
    runs = record_expected_tests(staging_dir, workers=workers, log=log, earlier=earlier,
                                 on_done=lambda run: (cache.store(run), progress.done(run)))
    recorded = [with_reference_run(entry, runs[entry.instance_id]) for entry in entries]
    write_metadata(staging_dir, recorded)
    _log_recording(runs, recorded, log)


def recording_key(entry: MetadataEntry) -> str:
    """The inputs a reference run depends on: the entry as prepared (before any recording: its
    commits, tests and reference) and the code and image recipes that grade it."""
    prepared = {key: value for key, value in entry.to_json().items() if key not in _RECORDED_FIELDS}
    text = json.dumps(prepared, sort_keys=True, ensure_ascii=False) + _grading_code_hash()
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


_RECORDED_FIELDS = ("expected_tests", "expected_skips", "stub_passes", "canary_sources", "variants", "variant_counts",
                    "observation_key")


_BUILD_OUTPUT = {"__pycache__", ".pytest_cache", "node_modules", "target"}  # not sources: never hashed


@functools.lru_cache(maxsize=1)
def _grading_code_hash() -> str:
    """Every Python file of utils/ and every file of docker/ (the image recipes), by content."""
    digest = hashlib.sha256()
    root = Path(__file__).resolve().parent.parent.parent
    paths = sorted(list((root / "utils").rglob("*.py")) + [p for p in (root / "docker").rglob("*") if p.is_file()])
    for path in paths:
        if not _BUILD_OUTPUT.intersection(path.parts) and path.suffix != ".pyc":
            digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


class RecordingCache:
    """Reference runs by instance, each in `<dir>/<instance_id>/<key>.json`; only a file whose
    key matches the instance's inputs is taken."""

    def __init__(self, directory: Path, keys: Mapping[str, str]) -> None:
        self.directory = directory
        self.keys = dict(keys)

    def path(self, instance_id: str) -> Path:
        return (self.directory / instance_id / self.keys[instance_id]).with_suffix(".json")

    def load(self) -> dict[str, ReferenceRun]:
        from ..pipeline.expected_tests import ReferenceRun

        runs = {}
        for instance_id in self.keys:
            try:
                data = json.loads(self.path(instance_id).read_text(encoding="utf-8"))
                runs[instance_id] = ReferenceRun(**{key: tuple(value) if isinstance(value, list) else value
                                                    for key, value in data.items()})
            except (OSError, ValueError, TypeError):
                continue  # absent or unreadable: recorded again
        return runs

    def store(self, run: ReferenceRun) -> None:
        """Keep a resolved reference run; one that did not resolve (perhaps a busy machine's
        timeout) is graded again by the next preparation."""
        if run.test_names is None or RECORDING_FAILED in (run.variant_counts or {}):
            return
        path = self.path(run.instance_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
        temporary.write_text(json.dumps(dataclasses.asdict(run)), encoding="utf-8")
        os.replace(temporary, path)  # atomic: a kill leaves the old file or the new one


class Progress:
    """One line per PROGRESS_EVERY recorded instances, with the time left at the rate so far
    (the runs' own seconds over the workers: the wait for images before the first is not a rate)."""

    def __init__(self, total: int, workers: int, log: Callable[[str], None]) -> None:
        self.total, self.log, self.count, self.busy = total, log, 0, 0.0
        self.parallel = max(1, min(workers, os.cpu_count() or 1))
        self.started = time.monotonic()
        self.lock = threading.Lock()

    def done(self, run: ReferenceRun) -> None:
        with self.lock:
            self.count += 1
            self.busy += run.seconds
            if self.count % PROGRESS_EVERY and self.count != self.total:
                return
            left = self.busy / self.count * (self.total - self.count) / self.parallel
            self.log(f"recorded {self.count}/{self.total} reference runs in {_duration(time.monotonic() - self.started)}"
                     + (f", about {_duration(left)} left" if self.count < self.total else ""))


def _estimate_line(todo: Sequence[MetadataEntry], reused: int, workers: int) -> str:
    reuse = f"{reused} taken from earlier recordings ({RECORDINGS_DIR})" if reused else ""
    if not todo:
        return f"recording what grading needs: all {reuse}"
    parallel = max(1, min(workers, os.cpu_count() or 1))
    seconds = sum(SECONDS_PER_INSTANCE.get(entry.language, 10.0) for entry in todo) / parallel
    return (f"recording what grading needs: {len(todo)} reference runs in Docker, {workers} at a time, about "
            f"{_duration(seconds)} on this machine (plus any image build){'; ' + reuse if reuse else ''}; an "
            f"interrupted preparation resumes where it stopped (--fast: none, with checks off)")


def _duration(seconds: float) -> str:
    minutes, rest = divmod(int(round(seconds)), 60)
    return f"{minutes}m{rest:02d}s" if minutes else f"{rest}s"


def with_reference_run(entry: MetadataEntry, run: ReferenceRun) -> MetadataEntry:
    """The entry with what the reference run recorded. Names are sorted: the runner reports
    them in run order, which the randomly named canaries of the reference run change, and the
    metadata (whose hash is in every run's resume key) must not change between preparations."""
    resolved = run.test_names is not None
    return replace(entry, expected_tests=tuple(sorted(run.test_names)) if resolved else None,
                   stub_passes=run.stub_passes,
                   expected_skips=tuple(sorted(run.skipped_names)) if resolved else None,
                   canary_sources=run.canary_sources if resolved else None,
                   observation_key=run.observation_key if resolved else None,
                   variants=run.variants if resolved else None,
                   variant_counts=run.variant_counts if resolved else None)


def _log_recording(runs: Mapping[str, ReferenceRun], entries: list[MetadataEntry], log: Callable[[str], None]) -> None:
    failing = sorted(instance_id for instance_id, run in runs.items() if run.test_names is None)
    log(f"recorded expected tests for {len(runs) - len(failing)}/{len(runs)} instances")
    if failing:
        log(f"warning: {len(failing)} reference solution(s) did not resolve (expected_tests left null): "
            + ", ".join(f"{instance_id} ({runs[instance_id].reason})" for instance_id in failing))
    with_variants = [run for run in runs.values() if run.variants is not None]
    if with_variants:
        log(f"variants: {sum(len(run.variants) for run in with_variants)} kept over {len(with_variants)} instance(s), "
            f"{sum(1 for run in with_variants if run.variants)} with at least one")
    stub_passes = sorted(instance_id for instance_id, run in runs.items() if run.stub_passes)
    if stub_passes:
        log(f"{len(stub_passes)} instance(s) resolve with the untouched stub (stub_passes): {', '.join(stub_passes)}")
    without_canaries = sorted(entry.instance_id for entry in entries
                              if entry.grading_mode != GradingMode.BUILD_ONLY and entry.canary_sources == ())
    if without_canaries:
        log(f"warning: {len(without_canaries)} instance(s) have no test that can carry a canary (their verdicts "
            f"rest on the runner's report alone): {', '.join(without_canaries)}")
    build_only = sorted(entry.instance_id for entry in entries if entry.grading_mode == GradingMode.BUILD_ONLY)
    if build_only:
        log(f"{len(build_only)} build-only instance(s) (test-writing, no tests to run): {', '.join(build_only)}")
