#!/usr/bin/env python3
"""Trusted-process grading vs in-process grading, on the real benchmark's python exercises.

    python3 bench/trusted_fidelity.py [--dataset DIR] [--only SLUG ...]

Every python instance's reference solution and untouched stub are graded through the
project's grading code (utils/pipeline/grading.py, real Docker) twice: with the language's
TrustedProcess and with it removed (in-process, as before issue 24). References are graded
the way preparation records them (a canary planted for every eligible test). Printed per
exercise: the verdicts, whether the per-test outcomes (canaries separated) are identical,
and the grading seconds; then the median and p90 of each mode, and of the seconds trusted
grading added to the same patch graded in-process right before it. Exit status 1 when a
reference does not resolve under trusted grading or any per-test outcome differs.

Without --dataset, the python exercises of ../shared/data's pinned benchmark are prepared
into a temporary directory (no expected tests recorded: the verdicts then rest on the
reports and canaries alone).
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _standalone  # noqa: F401,E402 - the checkout as the package polyglot_harness
from polyglot_harness.utils.backends.docker.images import ensure_language_image  # noqa: E402
from polyglot_harness.utils.backends.docker.provider import DockerProvider  # noqa: E402
from polyglot_harness.utils.languages import LANGUAGES, LanguageSpec  # noqa: E402
from polyglot_harness.utils.pipeline.expected_tests import reference_patch  # noqa: E402
from polyglot_harness.utils.pipeline.grading import GradingOutcome, GradingRequest, grade  # noqa: E402
from polyglot_harness.utils.pipeline.pools import Sandboxes  # noqa: E402
from polyglot_harness.utils.prepare.dataset import prepare_dataset  # noqa: E402
from polyglot_harness.utils.records.dataset import Instance, load_dataset  # noqa: E402
from polyglot_harness.utils.records.instance_repo import checkout_commit  # noqa: E402
from polyglot_harness.utils.seam.image_settings import ImageSettings  # noqa: E402

BENCHMARK = Path(__file__).resolve().parents[2] / "shared" / "data" / "polyglot-benchmark-7e0611e.tar.gz"


@dataclass(frozen=True)
class Graded:
    resolved: bool
    reason: str
    outcomes: dict[str, str]  # real test name -> outcome
    seconds: float
    isolation: str


def graded(outcome: GradingOutcome) -> Graded:
    return Graded(outcome.verdict.resolved, str(outcome.verdict.reason),
                  {case.name: case.outcome for case in outcome.real_results.cases}, outcome.seconds,
                  outcome.isolation)


def grade_once(sandboxes: Sandboxes, image: str, instance: Instance, language: LanguageSpec, patch: str,
               plant_all: bool) -> Graded:
    with tempfile.TemporaryDirectory(prefix="trusted-fidelity-") as workdir:
        tree = Path(workdir) / "tree"
        checkout_commit(instance.grading_repo_dir, instance.test_commit, tree)
        request = GradingRequest(language=language, instance_id=instance.instance_id, test_tree=tree, patch_text=patch, solution_paths=instance.solution_paths,
                                 hidden_paths=instance.hidden_paths, expected_tests=instance.expected_tests,
                                 expected_skips=instance.expected_skips or (), plant_all_canaries=plant_all,
                                 reference_dir=instance.reference_dir)
        return graded(grade(sandboxes, image, request))


def python_dataset(workdir: Path) -> Path:
    with tarfile.open(BENCHMARK) as archive:
        archive.extractall(workdir, filter="data")
    output = workdir / "dataset" / "polyglot"
    prepare_dataset(workdir / "polyglot-benchmark", output, languages=["python"], log=lambda message: None,
                    record_expected=False)
    return output


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def compare(sandboxes: Sandboxes, image: str, instance: Instance, seconds: dict[str, list[float]]) -> bool:
    trusted_language = instance.language_spec
    in_process_language = dataclasses.replace(trusted_language, trusted=None)
    line, ok = [instance.instance_id.removeprefix("python__")], True
    for kind, patch, plant_all in (("reference", reference_patch(instance), True), ("stub", "", False)):
        before = grade_once(sandboxes, image, instance, in_process_language, patch, plant_all)
        after = grade_once(sandboxes, image, instance, trusted_language, patch, plant_all)
        differing = sorted(name for name in before.outcomes.keys() | after.outcomes.keys()
                           if before.outcomes.get(name) != after.outcomes.get(name))
        seconds["in_process"].append(before.seconds)
        seconds[after.isolation].append(after.seconds)
        if after.isolation == "trusted_process":
            seconds["added"].append(after.seconds - before.seconds)
        ok &= not differing and (kind == "stub" or after.resolved)
        line.append(f"{kind}: {'resolved' if before.resolved else before.reason} -> "
                    f"{'resolved' if after.resolved else after.reason} ({after.isolation}), "
                    f"{len(after.outcomes)} tests, {len(differing)} differ{' ' + str(differing[:3]) if differing else ''}, "
                    f"{before.seconds:.2f}s -> {after.seconds:.2f}s")
    print(" | ".join(line), flush=True)
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, help="a prepared dataset (default: prepare python now)")
    parser.add_argument("--only", nargs="*", default=(), help="exercise slugs")
    args = parser.parse_args()
    provider = DockerProvider()
    image = ensure_language_image(provider.client, LANGUAGES["python"], ImageSettings.from_env(),
                                  log=lambda message: None).tag
    with tempfile.TemporaryDirectory(prefix="trusted-fidelity-data-") as workdir:
        dataset = args.dataset or python_dataset(Path(workdir))
        instances = [instance for instance in load_dataset(dataset) if instance.language == "python"
                     and (not args.only or instance.instance_id.removeprefix("python__") in args.only)]
        seconds: dict[str, list[float]] = {"in_process": [], "trusted_process": [], "added": []}
        sandboxes = Sandboxes(provider, "trusted-fidelity")
        try:
            failures = [instance.instance_id for instance in instances
                        if not compare(sandboxes, image, instance, seconds)]
        finally:
            sandboxes.close()
    for mode, values in seconds.items():
        if values:
            what = "trusted minus in-process, per pair" if mode == "added" else "gradings"
            print(f"{mode}: {len(values)} {what}, median {statistics.median(values):.2f}s, "
                  f"p90 {percentile(values, 0.9):.2f}s")
    print(f"{len(instances) - len(failures)}/{len(instances)} exercises identical"
          + (f"; differing or unresolved: {', '.join(failures)}" if failures else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
