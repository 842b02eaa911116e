"""An exercise of the upstream layout read, planned and written as an instance: its repos (the
agent's, without the tests; the grading one, with them), its problem statement and its metadata
entry (utils/records/dataset.py documents the layout)."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Iterable, Mapping, Sequence

from ..languages import LANGUAGES, ExerciseNameError, LanguageSpec, get_language
from ..outcomes import GradingMode
from ..records.dataset import (AGENT_REPO_DIRNAME, GRADING_REPO_DIRNAME, METADATA_FILENAME, MetadataEntry,
                               instance_id_for, instance_repos_relpath, reference_relpath)
from ..records.instance_repo import RepoFile, new_files_patch, write_instance_repos, write_worktree


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


# Exercism's reference material: the exercise's metadata and reference solution (.meta/), and
# its write-ups of solutions (.approaches/, .articles/: whole algorithms in snippet.txt and
# code blocks, e.g. cpp__all-your-base; red team 13 found them in 13 agent repos). None is in
# any repository: an agent that reads a solution there solves nothing.
REFERENCE_MATERIAL = (".meta/", ".approaches/", ".articles/")


def _split_visible_and_hidden(exercise: Exercise) -> tuple[tuple[RepoFile, ...], tuple[RepoFile, ...]]:
    base: list[RepoFile] = []
    hidden: list[RepoFile] = []
    config = exercise.config
    for path, repo_file in sorted(exercise.files.items()):
        if path.startswith(REFERENCE_MATERIAL) or path in config.example:
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


def grading_mode(exercise: Exercise) -> GradingMode:
    return GradingMode.BUILD_ONLY if SKIP_TESTS_MARKER in exercise.files else GradingMode.TESTS


def _utf8(exercise: Exercise, repo_file: RepoFile) -> str:
    try:
        return repo_file.content.decode("utf-8")
    except UnicodeDecodeError:
        raise ExerciseError(exercise.label, f"{repo_file.path} is not UTF-8 text") from None


def write_metadata(staging_dir: Path, entries: Iterable[MetadataEntry]) -> None:
    ordered = sorted(entries, key=lambda entry: entry.instance_id)
    text = json.dumps([entry.to_json() for entry in ordered], indent=2, ensure_ascii=False) + "\n"
    (staging_dir / METADATA_FILENAME).write_text(text, encoding="utf-8")
