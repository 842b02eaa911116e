"""The prepared dataset: layout, `Instance`, loading and selection.

`prepare_polyglot_dataset.py` writes a dataset directory (default: DEFAULT_DATASET_DIR,
which harness.py reads without flags) laid out like this::

    <dataset_dir>/
      polyglot_benchmark_metadata.json   one entry per instance, sorted by instance_id;
                                         holds the answers: never copied to an agent
      repos/<instance_id>/
        agent/                           copied into the agent container as /testbed
          .git/                          objects of the base commit ONLY; branch `main`
          <files of the base commit>     stubs, .docs/, build and support files
        grading.git/                     bare repo: base commit + its child, the test
                                         commit (branches `base`, `test`; HEAD = test)
      references/<instance_id>/<path>    the reference solution (oracle agent), at the
                                         repo paths it replaces, e.g. `src/lib.rs`,
                                         plus reference-only manifests (`Cargo.toml`)

instance_id is `<language>__<slug>`. The test commit adds the hidden files (tests,
test-case files); `.meta/`, `.approaches/`, `.articles/` and the reference solution are in no
repository. Because the
agent repo never received an object of the test commit, copying `agent/` cannot leak
the tests: grading takes the test commit's tree from `grading.git`
(`utils/records/instance_repo.py checkout_commit`).

The metadata keys (HyperAgents' plus ours) are the fields of `MetadataEntry`, which both
the writer and this reader use. Paths in the metadata are relative to the dataset directory.
"""

from __future__ import annotations

import hashlib

import json
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ..languages import LANGUAGES, LanguageSpec, get_language
from ..judging.variants import Variant
from ..checkout import DEFAULT_DATASET_DIR, SUBSETS_DIR
from ..outcomes import GradingMode

FULL_SUBSET = "full"

METADATA_FILENAME = "polyglot_benchmark_metadata.json"
REPOS_DIRNAME = "repos"
REFERENCES_DIRNAME = "references"
AGENT_REPO_DIRNAME = "agent"
GRADING_REPO_DIRNAME = "grading.git"

_PREPARE_HINT = "run `python prepare_polyglot_dataset.py` first"


class DatasetError(Exception):
    """The dataset is missing, not prepared, or inconsistent."""


class SelectionError(DatasetError):
    """A subset, instance id or language filter cannot be satisfied."""


class MetadataEntryError(DatasetError):
    """A metadata entry lacks a required key or holds a value the reader does not know."""


def instance_id_for(language: str, slug: str) -> str:
    return f"{language}__{slug}"


def language_of(instance_id: str) -> str:
    return instance_id.split("__", 1)[0]


def slug_of(instance_id: str) -> str:
    return instance_id.split("__", 1)[-1]


def instance_repos_relpath(instance_id: str) -> str:
    return f"{REPOS_DIRNAME}/{instance_id}"


def reference_relpath(instance_id: str) -> str:
    return f"{REFERENCES_DIRNAME}/{instance_id}"


@dataclass(frozen=True, kw_only=True)
class MetadataEntry:
    """One instance's entry in the metadata file; the fields are its keys, in file order.

    `to_json`/`from_json` give the JSON object (tuples as lists). Keys a reader may miss in
    files prepared by older versions have defaults; the others are required.
    """
    instance_id: str
    language: str
    task_name: str
    files: Mapping[str, tuple[str, ...]]  # .meta/config.json "files" (solution, test, example, ...)
    authors: tuple[str, ...] = ()
    contributors: tuple[str, ...] = ()
    blurb: str = ""
    source: str = ""
    source_url: str | None = None  # only written when the exercise has one
    problem_statement: str
    base_commit: str
    test_commit: str
    reference_tests: Mapping[str, str] = field(default_factory=dict)    # {path: content} of hidden files
    reference_answers: Mapping[str, str] = field(default_factory=dict)  # {repo path: content} of references/
    test_patch: str = ""  # git diff base..test
    repo: str  # "repos/<instance_id>"
    hidden_paths: tuple[str, ...]
    solution_paths: tuple[str, ...]
    reference_dir: str  # "references/<instance_id>"
    # Test names of the reference run; null until a reference run records them.
    expected_tests: tuple[str, ...] | None = None
    # Tests the reference run left skipped (the pristine suite skips them even after
    # un-skipping); null until recorded.
    expected_skips: tuple[str, ...] | None = None
    # "tests", or "build_only" for test-writing exercises marked `.meta/.skip_tests`: nothing
    # to run, the build decides (utils/judging/verdict.py).
    grading_mode: GradingMode = GradingMode.TESTS
    # The untouched stub already resolves (e.g. refactoring exercises); null until graded.
    stub_passes: bool | None = None
    # Tests whose planted canary behaved on the reference run (grading plants a random few
    # of them, utils/judging/canaries.py); null until recorded.
    canary_sources: tuple[str, ...] | None = None
    # Fresh variants of the hidden tests (utils/judging/variants.py: {"test", "edits"}) and, per
    # reason, how many tests gave one or not; null until recorded.
    variants: tuple[Mapping[str, Any], ...] | None = None
    variant_counts: Mapping[str, int] | None = None

    # The answer key (docs/answer-key.md): converted assertion id -> the reference's renderings of
    # the solution's side, compared on the host; never copied into a sandbox. Null: none.
    observation_key: dict[str, tuple[str, ...]] | None = None

    def to_json(self) -> dict[str, Any]:
        return {item.name: _jsonable(getattr(self, item.name)) for item in fields(self)
                if not (item.name in _OMITTED_WHEN_NULL and getattr(self, item.name) is None)}

    @classmethod
    def from_json(cls, entry: Mapping[str, Any]) -> "MetadataEntry":
        """The entry of a JSON object; MetadataEntryError names the instance and what is wrong."""
        label = entry.get("instance_id", "<entry without instance_id>")
        missing = [key for key in _REQUIRED_KEYS if key not in entry]
        if missing:
            raise MetadataEntryError(f"{label} lacks {', '.join(missing)}")
        grading_mode = entry.get("grading_mode", GradingMode.TESTS)
        if grading_mode not in tuple(GradingMode):
            raise MetadataEntryError(f"{label} has grading_mode {grading_mode!r} (known: {', '.join(GradingMode)})")
        return cls(**{key: _FROM_JSON.get(key, _same)(value) for key, value in entry.items() if key in _KEYS})


# Written only when set: a dataset prepared without variants or an answer key reads (and hashes) as before.
_OMITTED_WHEN_NULL = ("source_url", "variants", "variant_counts", "observation_key")


def _jsonable(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_jsonable(item) for item in value]
    if isinstance(value, Mapping):
        return {key: _jsonable(item) for key, item in value.items()}
    return value


def _same(value: Any) -> Any:
    return value


def _tuple_or_none(value: Sequence[Any] | None) -> tuple[Any, ...] | None:
    return None if value is None else tuple(value)


_KEYS = frozenset(item.name for item in fields(MetadataEntry))
_REQUIRED_KEYS = tuple(item.name for item in fields(MetadataEntry)
                       if item.default is MISSING and item.default_factory is MISSING)
# How a JSON value becomes a field's value (lists to tuples); other keys are taken as they are.
_FROM_JSON: dict[str, Callable[[Any], Any]] = {
    "files": lambda files: {role: tuple(paths) for role, paths in files.items()},
    "authors": tuple, "contributors": tuple, "hidden_paths": tuple, "solution_paths": tuple,
    "reference_tests": dict, "reference_answers": dict,
    "expected_tests": _tuple_or_none, "expected_skips": _tuple_or_none, "canary_sources": _tuple_or_none,
    "variants": _tuple_or_none, "grading_mode": GradingMode,
    "observation_key": lambda key: None if key is None else {name: tuple(values) for name, values in key.items()},
}


@dataclass(kw_only=True, frozen=True)
class Instance:
    """A metadata entry as the harness uses it: paths resolved, answers left out."""
    instance_id: str
    language: str
    task_name: str
    base_commit: str
    test_commit: str
    problem_statement: str
    # files.solution of .meta/config.json: what the agent is asked to edit.
    solution_paths: tuple[str, ...]
    # Paths the test commit adds (tests, test-case files): absent from the agent repo.
    hidden_paths: tuple[str, ...]
    agent_repo_dir: Path
    grading_repo_dir: Path
    reference_dir: Path
    # The `files` mapping of .meta/config.json (solution, test, example, ...).
    files: Mapping[str, tuple[str, ...]] = field(hash=False)
    # Test names of the reference run; None until grading records them.
    expected_tests: tuple[str, ...] | None = None
    # Tests the reference run left skipped (allowed to stay skipped); None until recorded.
    expected_skips: tuple[str, ...] | None = None
    grading_mode: GradingMode = GradingMode.TESTS  # or BUILD_ONLY (utils/judging/verdict.py)
    # The untouched stub resolves (refactoring exercises, build-only ones); None: not graded.
    stub_passes: bool | None = None
    # Tests that may be planted as canaries at grading (utils/judging/canaries.py); None: not recorded.
    canary_sources: tuple[str, ...] | None = None
    # Fresh variants of the hidden tests, planted when grading asks for them; () when none.
    variants: tuple[Variant, ...] = ()
    # Whether preparation recorded variants for this instance (a --fast one records none).
    variants_recorded: bool = False
    # The answer key (MetadataEntry.observation_key): host-side only.
    observation_key: dict[str, tuple[str, ...]] | None = None

    @staticmethod
    def from_entry(dataset_dir: Path, entry: MetadataEntry) -> "Instance":
        """The instance of a metadata entry, its paths resolved against `dataset_dir`."""
        repos_dir = dataset_dir / entry.repo
        return Instance(
            instance_id=entry.instance_id, language=entry.language, task_name=entry.task_name,
            base_commit=entry.base_commit, test_commit=entry.test_commit,
            problem_statement=entry.problem_statement, solution_paths=entry.solution_paths,
            hidden_paths=entry.hidden_paths, agent_repo_dir=repos_dir / AGENT_REPO_DIRNAME,
            grading_repo_dir=repos_dir / GRADING_REPO_DIRNAME, reference_dir=dataset_dir / entry.reference_dir,
            files=entry.files, expected_tests=entry.expected_tests, expected_skips=_skips(entry),
            grading_mode=entry.grading_mode, stub_passes=entry.stub_passes, canary_sources=entry.canary_sources,
            # An error test's variant (its input changed, no expected value) from a dataset
            # prepared before error tests kept none is not planted: it states only the
            # reference's domain (variants.ERROR_TEST), and preparation no longer records one.
            variants=tuple(variant for variant in map(Variant.from_json, entry.variants or ()) if variant.states_a_value),
            variants_recorded=entry.variants is not None,
            observation_key=entry.observation_key,
        )

    @property
    def language_spec(self) -> LanguageSpec:
        return get_language(self.language)

    @property
    def checks_off(self) -> tuple[str, ...]:
        """The checks grading cannot make on this instance because preparation did not record
        what they need (CHECKS; a fast preparation records nothing): () when all are on."""
        if self.grading_mode == GradingMode.BUILD_ONLY:
            return ()  # nothing runs: neither check applies
        recorded = {CHECK_EXPECTED_TESTS: self.expected_tests, CHECK_CANARIES: self.canary_sources}
        return tuple(check for check in CHECKS if recorded[check] is None)

    @property
    def variants_missing(self) -> bool:
        """Grading with --variants would plant none here because preparation recorded none
        (a language with a deriver, tests graded, no recording): the run says so."""
        return (self.grading_mode != GradingMode.BUILD_ONLY and self.language_spec.variants is not None
                and not self.variants_recorded)


def _skips(entry: MetadataEntry) -> tuple[str, ...]:
    """The tests that may stay skipped: the reference run's, else what the hidden tests say
    statically (jest's `test.skip`), so a dataset prepared without reference runs knows them."""
    if entry.expected_skips is not None:
        return entry.expected_skips
    return get_language(entry.language).skipped_by_source(entry.reference_tests)


# The checks that need a reference run at preparation (what `checks_off` names):
CHECK_EXPECTED_TESTS = "expected_tests"  # every test the reference ran must run and pass
CHECK_CANARIES = "canaries"              # mutated copies of real tests planted, each must fail
CHECKS = (CHECK_EXPECTED_TESTS, CHECK_CANARIES)


@dataclass(frozen=True)
class Selection:
    instances: tuple[Instance, ...]
    # Ids named more than once by the subsets and --instance_ids, each dropped once.
    duplicate_ids: tuple[str, ...] = ()


def dataset_hash(dataset_dir: Path) -> str:
    """The first 16 hex digits of the metadata file's SHA-256: which dataset a run graded
    (run_settings.json); "" when there is no metadata file."""
    metadata = dataset_dir / METADATA_FILENAME
    return hashlib.sha256(metadata.read_bytes()).hexdigest()[:16] if metadata.is_file() else ""


def load_dataset(dataset_dir: Path = DEFAULT_DATASET_DIR) -> list[Instance]:
    """Every instance of a prepared dataset, sorted by instance_id."""
    dataset_dir = Path(dataset_dir).resolve()
    entries = _read_metadata(dataset_dir)
    instances = [_instance_from_entry(dataset_dir, entry) for entry in entries]
    for instance in instances:
        _check_instance_dirs(instance)
    return sorted(instances, key=lambda instance: instance.instance_id)


def _read_metadata(dataset_dir: Path) -> list[dict[str, Any]]:
    metadata_path = dataset_dir / METADATA_FILENAME
    if not dataset_dir.is_dir():
        raise DatasetError(f"dataset directory {dataset_dir} does not exist; {_PREPARE_HINT}")
    if not metadata_path.is_file():
        raise DatasetError(f"{dataset_dir} is not a prepared dataset (no {METADATA_FILENAME}); {_PREPARE_HINT}")
    return _read_json_list(metadata_path, dict, DatasetError,
                           f"cannot read {metadata_path}: {{error}}; {_PREPARE_HINT} again",
                           f"{metadata_path} is not a JSON list of objects; {_PREPARE_HINT} again")


def _read_json_list(path: Path, item_type: type, error_type: type[DatasetError], unreadable: str,
                    wrong_shape: str) -> list:
    """A JSON file holding a list of `item_type`; `unreadable` may use {error}."""
    try:
        items = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise error_type(unreadable.format(error=error)) from error
    if not isinstance(items, list) or not all(isinstance(item, item_type) for item in items):
        raise error_type(wrong_shape)
    return items


def _instance_from_entry(dataset_dir: Path, entry: Mapping[str, Any]) -> Instance:
    try:
        return Instance.from_entry(dataset_dir, MetadataEntry.from_json(entry))
    except MetadataEntryError as error:
        raise DatasetError(f"{dataset_dir / METADATA_FILENAME}: {error}; {_PREPARE_HINT} again") from None


def _check_instance_dirs(instance: Instance) -> None:
    for directory in (instance.agent_repo_dir, instance.grading_repo_dir, instance.reference_dir):
        if not directory.is_dir():
            raise DatasetError(f"{instance.instance_id}: {directory} is missing; {_PREPARE_HINT} again")


def available_subsets(subsets_dir: Path = SUBSETS_DIR) -> list[str]:
    return sorted([path.stem for path in Path(subsets_dir).glob("*.json")] + [FULL_SUBSET])


def read_subset(name: str, subsets_dir: Path = SUBSETS_DIR) -> list[str]:
    """The instance ids a subset file lists (not `full`, which depends on the dataset)."""
    path = Path(subsets_dir) / f"{name}.json"
    if not path.is_file():
        raise SelectionError(f"unknown subset {name!r}; available: {', '.join(available_subsets(subsets_dir))}")
    return _read_json_list(path, str, SelectionError, f"cannot read subset {path}: {{error}}",
                           f"subset {path} must be a JSON list of instance ids")


def select_instances(
    instances: Sequence[Instance],
    subsets: Sequence[str] | None = None,
    instance_ids: Sequence[str] | None = None,
    languages: Sequence[str] | None = None,
    num_samples: int = -1,
    subsets_dir: Path = SUBSETS_DIR,
) -> Selection:
    """The instances to run, in a deterministic order.

    Without subsets and ids every instance is selected (dataset order). Otherwise the
    ids of each subset in the order given (`full` = every instance), then
    `instance_ids`, first occurrence wins; repeats are recorded in `duplicate_ids`.
    `languages` keeps only ids of those languages (before checking that they exist, so a
    dataset prepared for some languages serves subsets filtered to them). An id the
    dataset lacks is an error naming the ids. num_samples -1 = all, else the first N.
    """
    if num_samples < -1:
        raise SelectionError(f"num_samples must be -1 (all) or >= 0, got {num_samples}")
    by_id = {instance.instance_id: instance for instance in instances}
    requested = _requested_ids(list(by_id), subsets, instance_ids, subsets_dir)
    unique, duplicates = _deduplicate(requested)
    if languages:
        wanted = _checked_languages(languages)
        unique = [instance_id for instance_id in unique if language_of(instance_id) in wanted]
    missing = [instance_id for instance_id in unique if instance_id not in by_id]
    if missing:
        raise SelectionError(
            f"{len(missing)} requested instance(s) not in the dataset: {', '.join(missing)}"
        )
    selected = [by_id[instance_id] for instance_id in unique]
    if num_samples != -1:
        selected = selected[:num_samples]
    return Selection(tuple(selected), tuple(duplicates))


def _requested_ids(
    dataset_ids: list[str],
    subsets: Sequence[str] | None,
    instance_ids: Sequence[str] | None,
    subsets_dir: Path,
) -> list[str]:
    if not subsets and not instance_ids:
        return dataset_ids
    requested: list[str] = []
    for name in subsets or ():
        requested += dataset_ids if name == FULL_SUBSET else read_subset(name, subsets_dir)
    requested += list(instance_ids or ())
    return requested


def _deduplicate(ids: list[str]) -> tuple[list[str], list[str]]:
    seen: set[str] = set()
    unique: list[str] = []
    duplicates: list[str] = []
    for instance_id in ids:
        if instance_id in seen:
            duplicates.append(instance_id)
        else:
            seen.add(instance_id)
            unique.append(instance_id)
    return unique, duplicates


def _checked_languages(languages: Sequence[str]) -> set[str]:
    unknown = [language for language in languages if language not in LANGUAGES]
    if unknown:
        raise SelectionError(
            f"unknown language(s) {', '.join(unknown)}; known: {', '.join(sorted(LANGUAGES))}"
        )
    return set(languages)
