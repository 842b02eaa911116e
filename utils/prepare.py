"""Prepare the Aider polyglot benchmark: exercises -> instance repos + metadata JSON.

    python prepare_polyglot_dataset.py --benchmark_dir PATH [--output_dir DIR]
    python prepare_polyglot_dataset.py [--benchmark_url URL] [--output_dir DIR]
        [--languages rust,go] [--instance_ids rust__fizzy,rust__decimal] [--fast]

By default every reference solution and untouched stub is graded once in Docker and what
grading's checks need is recorded (expected tests and skips, canary sources, stub verdicts):
minutes, with progress lines, an estimate up front and a resume after an interruption (each
run is kept in RECORDINGS_DIR as it finishes). --fast skips that (seconds; FAST_COSTS says
which checks are then off).

The input is a checkout in the upstream layout (`<language>/exercises/practice/<slug>/`);
without --benchmark_dir, --benchmark_url (default: the upstream repository) is cloned
shallowly into ~/.cache/polyglot-harness/benchmarks/<hash>/ and reused afterwards. The
output layout is documented in utils/records/dataset.py; its default location, DEFAULT_DATASET_DIR,
is where harness.py looks without flags: in the checkout's data folder, never inside the checkout
(utils/checkout.py says why).

Re-running gives byte-identical output. Everything is written to a staging directory
beside the output and renamed into place at the end: on any error the previous output
stays as it was. The input checkout is only read.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence, TypeVar

from .records.dataset import (
    AGENT_REPO_DIRNAME,
    DatasetError,
    DEFAULT_DATASET_DIR,
    GRADING_REPO_DIRNAME,
    METADATA_FILENAME,
    MetadataEntry,
    instance_id_for,
    instance_repos_relpath,
    reference_relpath,
)
from .checkout import DATA_HOME, HOME_VARIABLE, UPSTREAM_METADATA_LINK, is_inside_checkout
from .seam.errors import ImageError
from .seam.errors import SandboxError
from .records.instance_repo import RepoFile, new_files_patch, write_instance_repos, write_worktree
from .languages import LANGUAGES, ExerciseNameError, LanguageSpec, UnknownLanguageError, get_language
from .judging.variants import RECORDING_FAILED
from .judging.verdict import GRADING_BUILD_ONLY, GRADING_TESTS

if TYPE_CHECKING:  # grading reference runs needs Docker: imported only to record expected tests
    from .pipeline.expected_tests import ReferenceRun

DEFAULT_BENCHMARK_URL = "https://github.com/Aider-AI/polyglot-benchmark"
CLONE_TIMEOUT_S = 900

Item = TypeVar("Item")
Result = TypeVar("Result")

# Concatenated in this order into the problem statement; hints.md stays out of it.
STATEMENT_DOCS = (".docs/introduction.md", ".docs/instructions.md", ".docs/instructions.append.md")


class PrepareError(Exception):
    """Preparation cannot go on; the message is one line for the user."""


class CheckoutError(PrepareError):
    """The benchmark checkout is missing, not in the upstream layout, or cannot be fetched."""


class ExerciseError(PrepareError):
    """One exercise is malformed."""

    def __init__(self, exercise: str, problem: str) -> None:
        super().__init__(f"{exercise}: {problem}")
        self.exercise = exercise
        self.problem = problem


# --- reading an exercise ----------------------------------------------------------------


@dataclass(frozen=True)
class ExerciseLocation:
    language: str
    slug: str
    directory: Path

    @property
    def label(self) -> str:
        """How errors name the exercise: its path inside the checkout."""
        return f"{self.language}/exercises/practice/{self.slug}"


@dataclass(frozen=True)
class ExerciseConfig:
    """The parts of .meta/config.json preparation uses."""

    files: Mapping[str, tuple[str, ...]]
    raw: Mapping[str, Any]

    @property
    def solution(self) -> tuple[str, ...]:
        return self.files.get("solution", ())

    @property
    def test(self) -> tuple[str, ...]:
        return self.files.get("test", ())

    @property
    def example(self) -> tuple[str, ...]:
        return self.files.get("example", ())


@dataclass(frozen=True)
class Exercise:
    location: ExerciseLocation
    language: LanguageSpec
    config: ExerciseConfig
    # Every file of the exercise directory except build artifacts, by POSIX path.
    files: Mapping[str, RepoFile]

    @property
    def label(self) -> str:
        return self.location.label

    def text(self, path: str) -> str:
        try:
            return self.files[path].content.decode("utf-8")
        except UnicodeDecodeError:
            raise ExerciseError(self.label, f"{path} is not UTF-8 text") from None


def discover_exercises(checkout: Path, languages: Sequence[str] | None) -> list[ExerciseLocation]:
    """Exercise directories of the checkout, sorted by language then slug."""
    if not checkout.is_dir():
        raise CheckoutError(f"benchmark checkout {checkout} does not exist or is not a directory")
    practice_dirs = {path.parent.parent.name: path for path in checkout.glob("*/exercises/practice") if path.is_dir()}
    if not practice_dirs:
        raise CheckoutError(
            f"{checkout} is not a polyglot benchmark checkout: it has no <language>/exercises/practice/ directory"
        )
    chosen = _chosen_languages(checkout, practice_dirs, languages)
    locations = [
        ExerciseLocation(language, directory.name, directory)
        for language in chosen
        for directory in sorted(practice_dirs[language].iterdir())
        if directory.is_dir() and not directory.name.startswith(".")
    ]
    if not locations:
        raise CheckoutError(f"{checkout} has no exercises for {', '.join(chosen)}")
    return locations


def _chosen_languages(checkout: Path, practice_dirs: Mapping[str, Path], languages: Sequence[str] | None) -> list[str]:
    if languages is None:
        unknown = sorted(set(practice_dirs) - set(LANGUAGES))
        if unknown:
            raise CheckoutError(
                f"{checkout / unknown[0]}: unknown language {unknown[0]!r} (known: {', '.join(sorted(LANGUAGES))}); "
                "pass --languages to prepare only known languages"
            )
        return sorted(practice_dirs)
    absent = [language for language in languages if language not in practice_dirs]
    if absent:
        raise CheckoutError(f"{checkout} has no {absent[0]}/exercises/practice/ directory")
    return sorted(set(languages))


def read_exercise(location: ExerciseLocation) -> Exercise:
    language = get_language(location.language)
    files = _read_exercise_files(location, language)
    config = _read_config(location, files)
    return Exercise(location, language, config, files)


def _read_exercise_files(location: ExerciseLocation, language: LanguageSpec) -> dict[str, RepoFile]:
    files: dict[str, RepoFile] = {}
    for root, dirnames, filenames in os.walk(location.directory):
        relative_root = Path(root).relative_to(location.directory).as_posix()
        prefix = "" if relative_root == "." else relative_root + "/"
        for name in dirnames + filenames:
            if os.path.islink(os.path.join(root, name)):
                raise ExerciseError(location.label, f"{prefix}{name} is a symbolic link; links are not supported")
        dirnames[:] = sorted(d for d in dirnames if d != ".git" and not language.is_artifact(f"{prefix}{d}/"))
        for name in sorted(filenames):
            path = prefix + name
            if name == ".git" or language.is_artifact(path):
                continue
            full_path = os.path.join(root, name)
            with open(full_path, "rb") as handle:
                content = handle.read()
            files[path] = RepoFile(path, content, bool(os.stat(full_path).st_mode & 0o100))
    return files


def _read_config(location: ExerciseLocation, files: Mapping[str, RepoFile]) -> ExerciseConfig:
    config_path = ".meta/config.json"
    if config_path not in files:
        raise ExerciseError(location.label, f"{config_path} is missing")
    try:
        raw = json.loads(files[config_path].content.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ExerciseError(location.label, f"{config_path} is not valid JSON ({error})") from None
    listed = raw.get("files") if isinstance(raw, dict) else None
    if not isinstance(listed, dict) or not all(
        isinstance(paths, list) and all(isinstance(p, str) for p in paths) for paths in listed.values()
    ):
        raise ExerciseError(location.label, f"{config_path} has no \"files\" object of path lists")
    config = ExerciseConfig({role: tuple(paths) for role, paths in listed.items()}, raw)
    for role in ("solution", "test", "example"):
        if not config.files.get(role):
            raise ExerciseError(location.label, f"{config_path} lists no {role} files")
        for path in config.files[role]:
            if path not in files:
                raise ExerciseError(location.label, f"{role} file {path} listed in {config_path} does not exist")
    return config


# --- planning an instance ---------------------------------------------------------------


@dataclass(frozen=True)
class InstancePlan:
    instance_id: str
    exercise: Exercise
    # What the agent sees (base commit).
    base_files: tuple[RepoFile, ...]
    # What the test commit adds: tests and test-case files, never .meta/.
    hidden_files: tuple[RepoFile, ...]
    # The reference solution, at the repo paths it replaces (outside every repo).
    reference_files: tuple[RepoFile, ...]
    problem_statement: str


def plan_instance(exercise: Exercise) -> InstancePlan:
    name_line = exercise.language.exercise_name_line
    if name_line is not None and name_line.path not in exercise.files:
        raise ExerciseError(exercise.label, f"{name_line.path} is missing")
    base_files, hidden_files = _split_visible_and_hidden(exercise)
    if not hidden_files:
        raise ExerciseError(exercise.label, "has no test files to hide")
    base_paths = {repo_file.path for repo_file in base_files}
    for path in exercise.config.solution:
        if path not in base_paths:
            raise ExerciseError(exercise.label, f"solution file {path} would be hidden from the agent")
    return InstancePlan(
        instance_id=instance_id_for(exercise.location.language, exercise.location.slug),
        exercise=exercise,
        base_files=tuple(_transformed(exercise, repo_file) for repo_file in base_files),
        hidden_files=hidden_files,
        reference_files=reference_files(exercise),
        problem_statement=problem_statement(exercise),
    )


def _split_visible_and_hidden(exercise: Exercise) -> tuple[tuple[RepoFile, ...], tuple[RepoFile, ...]]:
    base: list[RepoFile] = []
    hidden: list[RepoFile] = []
    config = exercise.config
    for path, repo_file in sorted(exercise.files.items()):
        if path.startswith(".meta/") or path in config.example:
            continue  # reference material: in no repository
        if path in config.test or exercise.language.is_hidden(path):
            _check_diffable_path(exercise, path)
            hidden.append(repo_file)
        else:
            base.append(repo_file)
    return tuple(base), tuple(hidden)


_NEEDS_QUOTING = re.compile(r'[^\x20-\x7e]|["\\]')


def _check_diffable_path(exercise: Exercise, path: str) -> None:
    # git would C-quote such names in test_patch; no exercise needs them.
    if _NEEDS_QUOTING.search(path):
        raise ExerciseError(exercise.label, f"unsupported characters in the name of hidden file {path!r}")


def _transformed(exercise: Exercise, repo_file: RepoFile) -> RepoFile:
    """The base file as the agent gets it: a build file that names the exercise after its
    directory names it explicitly, so it builds wherever the repo is checked out."""
    name_line = exercise.language.exercise_name_line
    if name_line is None or repo_file.path != name_line.path:
        return repo_file
    try:
        text = name_line.named(exercise.location.slug, exercise.text(repo_file.path))
    except ExerciseNameError as error:
        raise ExerciseError(exercise.label, str(error)) from None
    return RepoFile(repo_file.path, text.encode("utf-8"), repo_file.executable)


# --- reference solution -----------------------------------------------------------------


def reference_files(exercise: Exercise) -> tuple[RepoFile, ...]:
    """The reference solution and reference-only manifests, keyed by repo path."""
    by_destination: dict[str, RepoFile] = {}
    sources = [(example, reference_destination(exercise, example)) for example in exercise.config.example]
    sources += [(source, dest) for source, dest in exercise.language.reference_overrides if source in exercise.files]
    for source, destination in sources:
        if destination in by_destination:
            raise ExerciseError(exercise.label, f"two reference files map to {destination}")
        by_destination[destination] = RepoFile(destination, exercise.files[source].content)
    return tuple(by_destination[path] for path in sorted(by_destination))


def reference_destination(exercise: Exercise, example: str) -> str:
    """Where a reference file goes in the repo.

    Same file name as a solution file (Java's .meta/src/reference/java/X.java); else a
    Gradle reference tree maps onto src/main/ (Java helper classes); else the one
    solution file with the same extension (.meta/example.py, .meta/proof.ci.js,
    .meta/example.h and .cpp).
    """
    solution = exercise.config.solution
    name = PurePosixPath(example).name
    same_name = [path for path in solution if PurePosixPath(path).name == name]
    if len(same_name) == 1:
        return same_name[0]
    relative = example.removeprefix(".meta/")
    if relative.startswith("src/reference/"):
        return "src/main/" + relative.removeprefix("src/reference/")
    suffix = PurePosixPath(example).suffix
    same_suffix = [path for path in solution if PurePosixPath(path).suffix == suffix]
    if len(same_suffix) == 1:
        return same_suffix[0]
    raise ExerciseError(exercise.label, f"cannot tell which solution file the reference file {example} replaces")


# --- problem statement ------------------------------------------------------------------


def problem_statement(exercise: Exercise) -> str:
    sections = [exercise.text(path).strip() for path in STATEMENT_DOCS if path in exercise.files]
    sections = [section for section in sections if section]
    if not sections:
        raise ExerciseError(exercise.label, "has no .docs/instructions.md (nor introduction.md)")
    return "\n\n".join(sections + [closing_paragraph(exercise.config.solution)]) + "\n"


def closing_paragraph(solution_paths: Sequence[str]) -> str:
    return (
        "####\n\n"
        f"Use the above instructions to modify the supplied files: {' '.join(solution_paths)}\n"
        "The tests are hidden: they are not in the repository, and they will be run against your changes.\n"
        "Don't change the names of existing functions or classes, as they may be referenced from other code like unit tests, etc.\n"
        "Only use the standard library; don't add dependencies or install packages."
    )


# --- writing the dataset ----------------------------------------------------------------


def write_instance(plan: InstancePlan, staging_dir: Path) -> MetadataEntry:
    """Write the instance's repos and references; return its metadata entry."""
    repos_dir = staging_dir / instance_repos_relpath(plan.instance_id)
    commits = write_instance_repos(
        repos_dir / AGENT_REPO_DIRNAME,
        repos_dir / GRADING_REPO_DIRNAME,
        plan.instance_id,
        plan.base_files,
        plan.hidden_files,
    )
    reference_dir = staging_dir / reference_relpath(plan.instance_id)
    reference_dir.mkdir(parents=True)
    write_worktree(reference_dir, plan.reference_files)
    return metadata_entry(plan, commits.base_commit, commits.test_commit, new_files_patch(plan.hidden_files, commits.hidden_blobs))


def metadata_entry(plan: InstancePlan, base_commit: str, test_commit: str, test_patch: str) -> MetadataEntry:
    exercise = plan.exercise
    raw = exercise.config.raw
    return MetadataEntry(
        instance_id=plan.instance_id,
        language=exercise.location.language,
        task_name=exercise.location.slug,
        files=exercise.config.files,
        authors=tuple(raw.get("authors", ())),
        contributors=tuple(raw.get("contributors", ())),
        blurb=raw.get("blurb", ""),
        source=raw.get("source", ""),
        source_url=raw.get("source_url"),
        problem_statement=plan.problem_statement,
        base_commit=base_commit,
        test_commit=test_commit,
        reference_tests={f.path: _utf8(exercise, f) for f in plan.hidden_files},
        reference_answers={f.path: _utf8(exercise, f) for f in plan.reference_files},
        test_patch=test_patch,
        repo=instance_repos_relpath(plan.instance_id),
        hidden_paths=tuple(f.path for f in plan.hidden_files),
        solution_paths=exercise.config.solution,
        reference_dir=reference_relpath(plan.instance_id),
        grading_mode=grading_mode(exercise),
    )


# Exercism's marker for exercises whose tests the track's CI does not run (test-writing
# exercises such as go/counter, where the hidden test file is an empty placeholder).
SKIP_TESTS_MARKER = ".meta/.skip_tests"


def grading_mode(exercise: Exercise) -> str:
    return GRADING_BUILD_ONLY if SKIP_TESTS_MARKER in exercise.files else GRADING_TESTS


def _utf8(exercise: Exercise, repo_file: RepoFile) -> str:
    try:
        return repo_file.content.decode("utf-8")
    except UnicodeDecodeError:
        raise ExerciseError(exercise.label, f"{repo_file.path} is not UTF-8 text") from None


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
    records what grading's checks need (module `recording` below); False is the fast
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
        _write_metadata(staging_dir, entries)
        if record_expected:
            _record_expected_tests(staging_dir, entries, workers, log)
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


def _record_expected_tests(staging_dir: Path, entries: list[MetadataEntry], workers: int,
                           log: Callable[[str], None]) -> None:
    """Grade every reference solution and every untouched stub in Docker; store the
    reference's test names (expected_tests, expected_skips), the tests that carry a canary
    and whether the stub passes. Each run is kept in the recordings cache as it finishes, and
    taken from it when its inputs are unchanged: an interrupted preparation resumes there."""
    from .pipeline.expected_tests import record_expected_tests

    cache = RecordingCache(RECORDINGS_DIR, {entry.instance_id: recording_key(entry) for entry in entries})
    earlier = cache.load()
    todo = [entry for entry in entries if entry.instance_id not in earlier]
    log(_estimate_line(todo, len(earlier), workers))
    progress = Progress(len(todo), workers, log)
    runs = record_expected_tests(staging_dir, workers=workers, log=log, earlier=earlier,
                                 on_done=lambda run: (cache.store(run), progress.done(run)))
    recorded = [_with_reference_run(entry, runs[entry.instance_id]) for entry in entries]
    _write_metadata(staging_dir, recorded)
    _log_recording(runs, recorded, log)


# --- recording: the cache that lets a preparation resume, progress, the estimate ----------

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
    root = Path(__file__).resolve().parent.parent
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
        from .pipeline.expected_tests import ReferenceRun

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


def _with_reference_run(entry: MetadataEntry, run: ReferenceRun) -> MetadataEntry:
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
                              if entry.grading_mode != GRADING_BUILD_ONLY and entry.canary_sources == ())
    if without_canaries:
        log(f"warning: {len(without_canaries)} instance(s) have no test that can carry a canary (their verdicts "
            f"rest on the runner's report alone): {', '.join(without_canaries)}")
    build_only = sorted(entry.instance_id for entry in entries if entry.grading_mode == GRADING_BUILD_ONLY)
    if build_only:
        log(f"{len(build_only)} build-only instance(s) (test-writing, no tests to run): {', '.join(build_only)}")


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


def _write_metadata(staging_dir: Path, entries: Iterable[MetadataEntry]) -> None:
    ordered = sorted(entries, key=lambda entry: entry.instance_id)
    text = json.dumps([entry.to_json() for entry in ordered], indent=2, ensure_ascii=False) + "\n"
    (staging_dir / METADATA_FILENAME).write_text(text, encoding="utf-8")


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


# --- fetching the benchmark -------------------------------------------------------------


def default_cache_root() -> Path:
    cache_home = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache_home) / "polyglot-harness" / "benchmarks"


def fetch_benchmark(url: str, cache_root: Path | None = None, log: Callable[[str], None] = print) -> Path:
    """A shallow clone of `url`, made once and reused (keyed by a hash of the URL)."""
    cache_root = cache_root or default_cache_root()
    checkout = cache_root / hashlib.sha256(url.encode()).hexdigest()[:16]
    if (checkout / ".git").exists():
        log(f"Using the cached clone of {url} in {checkout}")
        return checkout
    log(f"Cloning {url} into {checkout}")
    cache_root.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".clone-", dir=cache_root))
    try:
        _shallow_clone(url, staging / "checkout")
        if not checkout.exists():
            os.rename(staging / "checkout", checkout)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return checkout


def _shallow_clone(url: str, destination: Path) -> None:
    # core.autocrlf/eol: file bytes (and so commit hashes) must not depend on user config.
    command = ["git", "-c", "core.autocrlf=false", "-c", "core.eol=lf", "clone", "--depth", "1", "--quiet", "--", url, str(destination)]
    hint = "without network access, pass --benchmark_dir with a local checkout"
    try:
        result = subprocess.run(
            command, capture_output=True, text=True, timeout=CLONE_TIMEOUT_S,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
        )
    except FileNotFoundError:
        raise CheckoutError(f"cannot clone {url}: git is not installed; {hint}") from None
    except subprocess.TimeoutExpired:
        raise CheckoutError(f"cannot clone {url}: no answer within {CLONE_TIMEOUT_S}s; {hint}") from None
    if result.returncode != 0:
        lines = [line.strip() for line in result.stderr.splitlines() if line.strip()]
        reason = lines[-1] if lines else f"git exited with {result.returncode}"
        raise CheckoutError(f"cannot clone {url}: {reason}; {hint}")


# --- command line -----------------------------------------------------------------------


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--benchmark_dir", type=Path, help="a local checkout in the upstream layout")
    source.add_argument(
        "--benchmark_url", default=DEFAULT_BENCHMARK_URL,
        help=f"git URL cloned (shallow, cached) when --benchmark_dir is not given (default: {DEFAULT_BENCHMARK_URL})",
    )
    parser.add_argument(
        "--output_dir", type=Path, default=DEFAULT_DATASET_DIR,
        help=f"dataset directory, replaced atomically (default: {DEFAULT_DATASET_DIR}, this checkout's data folder "
             f"outside it ({HOME_VARIABLE}), where harness.py looks)",
    )
    parser.add_argument(
        "--languages",
        help=f"prepare only these (comma-separated: {','.join(sorted(LANGUAGES))}); default: all",
    )
    parser.add_argument("--instance_ids", help="prepare only these (comma-separated, e.g. rust__fizzy); default: all")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="parallel workers (default: CPU count)")
    parser.add_argument(
        "--fast", "--no_record", dest="fast", action="store_true",
        help="skip the reference runs (seconds instead of minutes, no Docker needed); " + FAST_COSTS
             + ". Grading names the checks that are off in every result and refuses such a dataset with --strict",
    )
    parser.add_argument(
        "--record_expected_tests", action="store_true",
        help="accepted so older commands work; does nothing: recording is the default (every reference solution "
             "and stub is graded in Docker; what grading needs is recorded; references that fail are reported)",
    )
    return parser.parse_args(argv)


def _language_list(value: str | None) -> list[str] | None:
    if value is None:
        return None
    languages = [language.strip() for language in value.split(",") if language.strip()]
    if not languages:
        raise PrepareError("--languages names no language")
    for language in languages:
        get_language(language)
    return languages


def _id_list(value: str | None) -> list[str] | None:
    if value is None:
        return None
    instance_ids = [instance_id.strip() for instance_id in value.split(",") if instance_id.strip()]
    if not instance_ids:
        raise PrepareError("--instance_ids names no instance")
    return instance_ids


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.record_expected_tests:
        print("note: --record_expected_tests is the default now and changes nothing (--fast skips the recording)",
              file=sys.stderr)
    try:
        if args.fast and args.record_expected_tests:
            raise PrepareError("--fast and --record_expected_tests contradict each other")
        languages = _language_list(args.languages)
        benchmark_dir = args.benchmark_dir or fetch_benchmark(args.benchmark_url)
        summary = prepare_dataset(benchmark_dir, args.output_dir, languages, max(1, args.workers),
                                  record_expected=not args.fast, instance_ids=_id_list(args.instance_ids),
                                  log=lambda message: print(message, flush=True))
    except (ImageError, SandboxError) as error:
        print(f"prepare_polyglot_dataset: error: {error} (the reference runs recorded so far are kept: the same "
              f"command resumes there; --fast prepares without Docker, with checks off)", file=sys.stderr)
        return 1
    except (PrepareError, UnknownLanguageError, OSError, DatasetError) as error:
        print(f"prepare_polyglot_dataset: error: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("prepare_polyglot_dataset: interrupted; the previous output is unchanged, and the reference runs "
              "recorded so far are kept: the same command resumes there", file=sys.stderr)
        return 130
    per_language = ", ".join(f"{language} {count}" for language, count in summary.instances_by_language.items())
    print(
        f"Prepared {summary.instance_count} instances ({per_language}) in {summary.seconds:.1f}s "
        f"into {summary.output_dir}"
    )
    return 0

