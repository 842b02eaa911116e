"""Expected test names per instance, recorded by grading each reference solution for real,
and whether the untouched stub already passes, recorded by grading it with no patch.

`prepare_polyglot_dataset.py` (by default; not with --fast) calls `record_expected_tests` on the
staged dataset before moving it into place. Grading then requires every recorded name to
appear as passed, so a solution that ends the run early (or a runner that silently collects
fewer tests) cannot resolve. Only tests defined in the instance's hidden test files are
recorded (LanguageSpec.hidden_tests): a reference's own unit tests (rust__fizzy's and
rust__decimal's `#[cfg(test)]` modules in src/lib.rs) ran and had to pass, but a correct
solution written from the stub has none, so requiring them would leave it unresolved. Tests
the reference run leaves skipped (the pristine suite skips
them even after un-skipping, e.g. jest's `test.skip`) are recorded as expected skips: only
those may stay skipped. A reference that does not resolve gets no record (null) and is
reported: that is the task-health gate for the dataset. A stub that resolves marks the
instance `stub_passes` (refactoring exercises ship working code; build-only exercises have
no test): any agent that changes something harmless resolves it, and reports say so.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

from ..records.dataset import Instance, load_dataset
from .grading import GradingRequest, grade
from ..seam.image_settings import ImageSettings
from ..records.instance_repo import checkout_commit
from ..languages import LANGUAGES
from ..judging.runner_results import ERROR, FAILED, SKIPPED
from . import variant_recording
from .pools import Sandboxes
from ..seam.errors import SandboxError
from ..seam.protocol import SandboxProvider
from ..seam.registry import open_provider
from ..judging.verdict import decide_separated
from ..outcomes import GradingMode


@dataclass(kw_only=True, frozen=True)
class ReferenceRun:
    instance_id: str
    test_names: tuple[str, ...] | None  # None when the reference did not resolve
    reason: str
    seconds: float
    skipped_names: tuple[str, ...] = ()  # tests the reference run left skipped
    stub_passes: bool | None = None      # the untouched stub resolves (None: not graded)
    canary_sources: tuple[str, ...] = ()  # tests whose canary behaved on the reference
    # The answer key (docs/answer-key.md): converted assertion id -> the reference's renderings.
    observation_key: dict[str, tuple[str, ...]] | None = None
    # Fresh variants (utils/pipeline/variant_recording.py) as JSON, and why tests gave none;
    # None where the language derives none.
    variants: tuple[dict, ...] | None = None
    variant_counts: dict[str, int] | None = None


def reference_patch(instance: Instance) -> str:
    """The diff an agent would produce by writing the reference files over the base repo."""
    return patch_writing(instance, {path.relative_to(instance.reference_dir).as_posix(): path.read_bytes()
                                    for path in instance.reference_dir.rglob("*") if path.is_file()})


def patch_writing(instance: Instance, files: dict[str, bytes]) -> str:
    """The diff (against the base commit, new files included) of writing `files` over the
    instance's base repo; the repo itself is not touched."""
    with tempfile.TemporaryDirectory(prefix="polyglot-reference-") as workdir:
        clone = Path(workdir) / "repo"
        shutil.copytree(instance.agent_repo_dir, clone)
        for path, content in files.items():
            (clone / path).parent.mkdir(parents=True, exist_ok=True)
            (clone / path).write_bytes(content)
        git = ["git", "-c", "core.autocrlf=false", "-c", "core.safecrlf=false"]
        env = {"PATH": "/usr/bin:/bin", "GIT_INDEX_FILE": str(Path(workdir) / "index"), "HOME": workdir,
               "GIT_CEILING_DIRECTORIES": workdir}
        subprocess.run(git + ["read-tree", instance.base_commit], cwd=clone, check=True, env=env)
        subprocess.run(git + ["add", "-A"], cwd=clone, check=True, env=env)
        return subprocess.run(git + ["diff", "--cached", "--binary", "--no-color", instance.base_commit],
                              cwd=clone, check=True, env=env, capture_output=True, text=True).stdout


def run_reference(sandboxes: Sandboxes, image: str, instance: Instance, test_timeout: int = 300,
                  log: Callable[[str], None] = lambda message: None) -> ReferenceRun:
    """Observe the answer key (where the language has one) and draw the variants (where the
    language derives them), grade the reference solution with the key's assertions converted
    (their second observation), a canary planted for every eligible test and the chosen
    variants (their second run), then the untouched stub the way any agent's patch is graded."""
    started = time.monotonic()
    key = first_observations(sandboxes, image, instance, test_timeout, log)
    patch = reference_patch(instance)
    drawn = _draw_variants(sandboxes, image, instance, patch, test_timeout, log, key)
    chosen = tuple(drawn.chosen.values()) if isinstance(drawn, variant_recording.Drawn) else ()
    reference = _grade_patch(sandboxes, image, instance, patch, test_timeout, plant_all=True,
                             observation_key=key, variants=chosen)
    verdict = _reference_verdict(reference, instance)
    confirming = reference if chosen else None
    if not verdict.resolved and chosen:
        # A variant may have disturbed the run: recorded as without variants, confirmed apart.
        log(f"{instance.instance_id}: the reference with its variants ended {verdict.reason}: recorded without them")
        reference = _grade_patch(sandboxes, image, instance, patch, test_timeout, plant_all=True, observation_key=key)
        verdict, confirming = _reference_verdict(reference, instance), None
    if not verdict.resolved and reference.canaries:
        # Once more with canaries (a test that failed on a busy machine is not the canaries'
        # doing, and recording without them costs the instance all of them), then, for a canary
        # that disturbed its neighbours, record from a run without canaries.
        log(f"{instance.instance_id}: the reference with its canaries ended {verdict.reason}: graded again")
        reference = _grade_patch(sandboxes, image, instance, patch, test_timeout, plant_all=True, observation_key=key)
        verdict = _reference_verdict(reference, instance)
    if not verdict.resolved and reference.canaries:
        log(f"{instance.instance_id}: the reference with its canaries ended {verdict.reason} twice: recorded without them")
        reference = _grade_patch(sandboxes, image, instance, patch, test_timeout, observation_key=key)
        verdict = _reference_verdict(reference, instance)
    if not verdict.resolved:
        return ReferenceRun(instance_id=instance.instance_id, test_names=None, reason=verdict.reason,
                            seconds=time.monotonic() - started)
    key = stable_key(instance, key, reference.observations, log)
    variants = _confirmed_variants(sandboxes, image, instance, patch, drawn, confirming, test_timeout)
    if variants is not None:
        variants = variant_recording.within_key(variants, key)
    results = instance.language_spec.hidden_tests(reference.real_results, instance.hidden_paths)
    sources = _behaving_canaries(reference.canaries, reference.canary_cases)
    stub = _grade_patch(sandboxes, image, instance, "", test_timeout, results.names(), results.names(SKIPPED), sources,
                        observation_key=key)
    return ReferenceRun(instance_id=instance.instance_id, test_names=results.names(), reason=verdict.reason,
                        seconds=time.monotonic() - started,
                        skipped_names=results.names(SKIPPED), stub_passes=stub.verdict.resolved,
                        canary_sources=sources, observation_key=key,
                        variants=None if variants is None else tuple(variant.to_json() for variant in variants.variants),
                        variant_counts=None if variants is None else dict(variants.counts))


def _draw_variants(sandboxes: Sandboxes, image: str, instance: Instance, patch: str, test_timeout: int,
                   log: Callable[[str], None], key: dict[str, tuple[str, ...]] | None = None):
    """The instance's chosen variants (variant_recording.draw; `key`: the answer key's first
    observations, whose assertions a keyed language's variants copy); None where the language
    derives none; a failed VariantRecord where drawing raised (one exercise's failure costs its
    variants, not its recording; an engine's failure is retried with the whole run)."""
    if not variant_recording.eligible(instance):
        return None
    try:
        return variant_recording.draw(sandboxes, image, instance, patch, test_timeout, key)
    except SandboxError:
        raise
    except Exception as error:  # noqa: BLE001 - a deriver's bug on some test text
        log(f"{instance.instance_id}: variants not recorded: {type(error).__name__}: {error}")
        return variant_recording.failed(instance)


def _confirmed_variants(sandboxes: Sandboxes, image: str, instance: Instance, patch: str, drawn, confirming,
                        test_timeout: int):
    """The VariantRecord of a resolved reference: the chosen variants it passed in the
    recorded run (`confirming`), or in a run of their own when that run planted none."""
    if not isinstance(drawn, variant_recording.Drawn):
        return drawn  # None (no variants here) or the failed record
    if confirming is not None:
        return variant_recording.confirmed(drawn, confirming.variant_cases)
    return variant_recording.confirm_apart(sandboxes, image, instance, patch, drawn, test_timeout)


KEY_PROBES = 4  # builds that may each refuse some conversions (a type the observer cannot render)


def first_observations(sandboxes: Sandboxes, image: str, instance: Instance, test_timeout: int,
                           log: Callable[[str], None] = lambda message: None) -> dict[str, tuple[str, ...]] | None:
    """The reference's observations, in a first observing run, of every assertion that converts
    and builds (None: the language has no key; {}: nothing converted). The reference run
    observes them a second time (`stable_key`)."""
    answer_key = instance.language_spec.answer_key
    if answer_key is None or instance.grading_mode != GradingMode.TESTS:
        return None
    patch, ids = reference_patch(instance), frozenset()  # empty: every candidate
    for _ in range(KEY_PROBES):
        first = _grade_patch(sandboxes, image, instance, patch, test_timeout, observe_only=ids)
        output = first.exec_result.output if first.exec_result else ""
        refused = answer_key.error_ids(output, instance.hidden_paths, first.converted)
        if not refused:
            break
        ids = first.converted - refused
        if not ids:
            log(f"{instance.instance_id}: answer key: the compiler refused every conversion")
            return {}
    else:
        log(f"{instance.instance_id}: answer key: still refused after {KEY_PROBES} builds")
        return {}
    if not first.converted or not first.verdict.resolved:
        log(f"{instance.instance_id}: answer key: none ({len(first.converted)} converted, the observing run "
            f"ended {first.verdict.reason}: {first.verdict.detail[:300]})")
        return {}
    return {assertion: values for assertion, values in first.observations.items() if assertion in first.converted}


def stable_key(instance: Instance, key: dict[str, tuple[str, ...]] | None, observations: Mapping[str, tuple[str, ...]],
               log: Callable[[str], None]) -> dict[str, tuple[str, ...]] | None:
    """The answer key: the first observing run's observations that the reference run (graded
    with them converted) observed alike; an assertion whose observations differ between the
    two runs stays in-process."""
    if not key:
        return key
    stable = {assertion: values for assertion, values in key.items() if observations.get(assertion) == values}
    unstable = sorted(set(key) - set(stable))
    log(f"{instance.instance_id}: answer key of {len(stable)} assertion(s) ({len(key)} observed"
        + (f"; differing between two runs, left out: {', '.join(unstable)}" if unstable else "") + ")")
    return stable


def _reference_verdict(outcome, instance: Instance):
    """The reference is trusted: what it leaves skipped, the pristine suite itself skips. With
    canaries planted its exit status says nothing (they fail), and the canaries are judged
    apart (_behaving_canaries)."""
    exec_result = outcome.exec_result
    exit_code = 0 if outcome.canaries else (exec_result.exit_code if exec_result else None)
    results = outcome.real_results
    return decide_separated(exit_code, bool(exec_result and exec_result.timed_out), results, {},
                            expected_skips=results.names(SKIPPED), grading_mode=instance.grading_mode)


def _behaving_canaries(canaries, own: dict) -> tuple[str, ...]:
    """Tests whose canary failed with its numbers (the resolved reference passed every real test)."""
    return tuple(sorted(canary.source for canary in canaries
                        if canary.source in own and own[canary.source].outcome in (FAILED, ERROR)
                        and canary.carries_secret(own[canary.source].message)))


def _grade_patch(sandboxes, image: str, instance: Instance, patch: str, test_timeout: int,
                 expected_tests: tuple[str, ...] | None = None, expected_skips: tuple[str, ...] = (),
                 canary_sources: tuple[str, ...] | None = None, plant_all: bool = False,
                 observation_key: dict[str, tuple[str, ...]] | None = None,
                 observe_only: frozenset[str] | None = None, variants: tuple = ()):
    language = instance.language_spec
    with tempfile.TemporaryDirectory(prefix="polyglot-reference-tests-") as workdir:
        test_tree = Path(workdir) / "tree"
        checkout_commit(instance.grading_repo_dir, instance.test_commit, test_tree)
        request = GradingRequest(language=language, instance_id=instance.instance_id, test_tree=test_tree, patch_text=patch, solution_paths=instance.solution_paths,
                                 hidden_paths=instance.hidden_paths, expected_tests=expected_tests, test_timeout=test_timeout,
                                 expected_skips=expected_skips, grading_mode=instance.grading_mode,
                                 canary_sources=canary_sources, plant_all_canaries=plant_all,
                                 reference_dir=instance.reference_dir, observation_key=observation_key,
                                 observe_only=observe_only, variants=variants)
        return grade(sandboxes, image, request)


def record_expected_tests(dataset_dir: Path, workers: int = 2, ca_bundle: str | None = None,
                          log: Callable[[str], None] = print,
                          provider: SandboxProvider | None = None,
                          earlier: Mapping[str, ReferenceRun] | None = None,
                          on_done: Callable[[ReferenceRun], None] = lambda run: None) -> dict[str, ReferenceRun]:
    """Every instance's ReferenceRun: `earlier` ones (a resumed preparation's) are taken as they
    are, the others graded `workers` at a time, each passed to `on_done` as it finishes (so an
    interrupted preparation keeps what it did)."""
    instances = load_dataset(dataset_dir)
    earlier = earlier or {}
    todo = [instance for instance in instances if instance.instance_id not in earlier]
    runs = {instance.instance_id: earlier[instance.instance_id] for instance in instances
            if instance.instance_id in earlier}
    if todo:
        runs.update(_record(todo, workers, ca_bundle, log, provider or open_provider(), on_done))
    return runs


def _record(instances: list[Instance], workers: int, ca_bundle: str | None, log: Callable[[str], None],
            provider: SandboxProvider, on_done: Callable[[ReferenceRun], None]) -> dict[str, ReferenceRun]:
    provider.prepare(log)
    settings = ImageSettings.from_env(ca_bundle=ca_bundle)
    languages = sorted({instance.language for instance in instances})
    with tempfile.TemporaryDirectory(prefix="polyglot-images-") as workdir:
        images = provider.ensure_images([LANGUAGES[language] for language in languages], None, settings,
                                        Path(workdir), log)
    sandboxes = Sandboxes(provider, "record-expected")

    def one(instance: Instance) -> ReferenceRun:
        run = with_retries(lambda: run_reference(sandboxes, images.grading[instance.language], instance, log=log), log)
        on_done(run)
        return run

    pool = ThreadPoolExecutor(max_workers=max(1, workers))
    try:
        runs = list(pool.map(one, instances))
    finally:  # interrupted: the queued instances never start (what finished was passed to on_done)
        pool.shutdown(wait=True, cancel_futures=True)
        sandboxes.close()
    return {run.instance_id: run for run in runs}


INFRA_RETRIES = 2  # an engine that times out on a busy machine is asked again, as grading does


def with_retries(attempt: Callable[[], ReferenceRun], log: Callable[[str], None]) -> ReferenceRun:
    for number in range(1, INFRA_RETRIES + 2):
        try:
            return attempt()
        except SandboxError as error:
            if number > INFRA_RETRIES:
                raise
            log(f"infrastructure failure while recording (attempt {number}, retried): {error}")
            time.sleep(2.0 * number)
    raise AssertionError("unreachable")
