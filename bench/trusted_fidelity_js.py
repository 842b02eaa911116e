"""Trusted grading of JavaScript (issue 24) against in-process grading, on the real benchmark.

    python3 bench/trusted_fidelity_js.py --dataset DIR [--workers 2] [--slugs a,b] [--output FILE]

Every javascript instance of DIR (prepared from ../shared/data/ into DIR, expected tests recorded,
as the harness grades them, when DIR has no
metadata yet) is graded four times through the project's own `grade` (real Docker, a canary
planted for every eligible test, as preparation's reference runs do): its reference solution
and its untouched stub, each in process (the language with `trusted=None`) and in the trusted
process. A grading the engine fails is printed as such, not fatal.
Printed per exercise: whether the per-test outcomes of the two modes are the same (they must
be: fidelity), the verdicts, and the grading seconds; then median / p90 of the seconds per mode
on the references (the goal: trusted at most +0.3 s at the median). Exercises the language
keeps in process are graded both ways too, and say so.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import tarfile
import tempfile
from concurrent.futures import ThreadPoolExecutor
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
from polyglot_harness.utils.records.dataset import Instance, load_dataset  # noqa: E402
from polyglot_harness.utils.records.instance_repo import checkout_commit  # noqa: E402
from polyglot_harness.utils.seam.errors import SandboxError  # noqa: E402
from polyglot_harness.utils.seam.image_settings import ImageSettings  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BENCHMARK = ROOT.parent / "shared" / "data" / "polyglot-benchmark-7e0611e.tar.gz"
JS = LANGUAGES["javascript"]
IN_PROCESS = dataclasses.replace(JS, trusted=None)


@dataclass(frozen=True)
class Graded:
    outcomes: dict[str, str]  # test name -> PASSED / FAILED / ...
    resolved: bool
    reason: str
    isolation: str
    seconds: float  # the test command's own seconds (exec), as the harness reports `tests`


def grade_once(provider, image: str, instance: Instance, language: LanguageSpec, patch: str) -> Graded:
    with tempfile.TemporaryDirectory() as workdir:
        tree = Path(workdir) / "tree"
        checkout_commit(instance.grading_repo_dir, instance.test_commit, tree)
        request = GradingRequest(language=language, instance_id=instance.instance_id, test_tree=tree, patch_text=patch, solution_paths=instance.solution_paths,
                                 hidden_paths=instance.hidden_paths, expected_tests=instance.expected_tests,
                                 expected_skips=instance.expected_skips or (), grading_mode=instance.grading_mode,
                                 plant_all_canaries=True, reference_dir=instance.reference_dir)
        sandboxes = Sandboxes(provider, "trusted-fidelity-js")
        try:
            outcome: GradingOutcome = grade(sandboxes, image, request)
        except SandboxError as error:
            return Graded({}, False, f"engine error: {error}", language.trusted and "trusted_process" or "in_process",
                          float("nan"))
        finally:
            sandboxes.close()
    outcomes = {case.name: case.outcome for case in outcome.real_results.cases}
    seconds = outcome.exec_result.seconds if outcome.exec_result else float("nan")
    return Graded(outcomes, outcome.verdict.resolved, str(outcome.verdict.reason), outcome.isolation, seconds)


def compare(provider, image: str, instance: Instance) -> dict:
    reference = reference_patch(instance)
    row = {"instance": instance.instance_id}
    for solution, patch in (("reference", reference), ("stub", "")):
        before = grade_once(provider, image, instance, IN_PROCESS, patch)
        after = grade_once(provider, image, instance, JS, patch)
        differing = sorted(name for name in set(before.outcomes) | set(after.outcomes)
                           if before.outcomes.get(name) != after.outcomes.get(name))
        row[solution] = {"same_outcomes": not differing, "differing": differing[:5], "tests": len(after.outcomes),
                         "in_process": dataclasses.asdict(before) | {"outcomes": None},
                         "trusted": dataclasses.asdict(after) | {"outcomes": None}}
    return row


def print_row(row: dict) -> None:
    parts = [f"{row['instance']:40}"]
    for solution in ("reference", "stub"):
        item = row[solution]
        before, after = item["in_process"], item["trusted"]
        parts.append(f"{solution[:3]} {'same' if item['same_outcomes'] else 'DIFF'} {item['tests']:3d} tests "
                     f"{'R' if before['resolved'] else '-'}/{'R' if after['resolved'] else '-'} "
                     f"{before['seconds']:5.2f}s/{after['seconds']:5.2f}s ({after['isolation']})")
        if item["trusted"]["reason"].startswith("engine error") or item["in_process"]["reason"].startswith("engine error"):
            parts.append(f"ENGINE ERROR {item['in_process']['reason'][:60]} | {item['trusted']['reason'][:60]}")
        if item["differing"]:
            parts.append(f"differing: {item['differing']}")
    print("  ".join(parts), flush=True)


def summary(rows: list[dict]) -> None:
    def stats(values: list[float]) -> str:
        ordered = sorted(value for value in values if value == value)  # NaN: an engine error
        return f"median {statistics.median(ordered):.2f}s p90 {ordered[max(0, round(0.9 * len(ordered)) - 1)]:.2f}s"

    trusted_rows = [row for row in rows if row["reference"]["trusted"]["isolation"] == "trusted_process"]
    before = [row["reference"]["in_process"]["seconds"] for row in trusted_rows]
    after = [row["reference"]["trusted"]["seconds"] for row in trusted_rows]
    same = sum(row[s]["same_outcomes"] for row in rows for s in ("reference", "stub"))
    resolved = sum(row["reference"]["trusted"]["resolved"] for row in rows)
    print(f"\nsame per-test outcomes: {same}/{2 * len(rows)} gradings; references resolved (trusted): {resolved}/{len(rows)}")
    print(f"references graded in the trusted process: {len(trusted_rows)}")
    print(f"test seconds, references, in process: {stats(before)}")
    print(f"test seconds, references, trusted:    {stats(after)}")
    print(f"difference per instance: {stats([b - a for a, b in zip(before, after)])}")


def ensure_dataset(dataset: Path) -> None:
    if (dataset / "polyglot_benchmark_metadata.json").is_file():
        return
    from polyglot_harness.utils.prepare.dataset import prepare_dataset

    with tempfile.TemporaryDirectory() as workdir:
        with tarfile.open(BENCHMARK) as archive:
            archive.extractall(workdir, filter="data")
        prepare_dataset(Path(workdir) / "polyglot-benchmark", dataset, languages=["javascript"], workers=2,
                        record_expected=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dataset", required=True, type=Path)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--slugs", default="", help="comma-separated exercise slugs (default: all)")
    parser.add_argument("--output", type=Path, help="write the rows as JSON here")
    args = parser.parse_args()
    ensure_dataset(args.dataset)
    provider = DockerProvider()
    image = ensure_language_image(provider.client, JS, ImageSettings.from_env(), log=print).tag
    slugs = {slug for slug in args.slugs.split(",") if slug}
    instances = [instance for instance in load_dataset(args.dataset) if instance.language == "javascript"
                 and (not slugs or instance.instance_id.split("__", 1)[1] in slugs)]
    with ThreadPoolExecutor(args.workers) as pool:
        rows = []
        for row in pool.map(lambda instance: compare(provider, image, instance), instances):
            print_row(row)
            rows.append(row)
    summary(rows)
    if args.output:
        args.output.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
