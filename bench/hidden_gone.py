#!/usr/bin/env python3
"""Hidden tests gone before solution code runs: same results, and what it costs.

    python3 bench/hidden_gone.py --dataset DIR --before go=TAG,rust=TAG,... [--languages go,rust]
                                 [--instance_ids a,b] [--workers 2] [--output FILE]

Grades every instance's reference solution (a canary planted for every eligible test, as
preparation does) and its untouched stub (with the canaries that behaved), through the
project's own grading code and real Docker, twice: with the language images and test commands
of before (`--before`: the image tags main built; go's command as main had it, `go test -json`)
and with this checkout's. The two variants alternate per instance (which goes first too), so a
machine whose load drifts charges both alike. Prints, per language, instances whose per-test
outcomes, verdicts or behaving canaries differ (must be none) and the grading seconds (sum,
median) before and after; writes every figure as JSON.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _standalone  # noqa: F401,E402 - the checkout as the package polyglot_harness
from polyglot_harness.utils.backends.docker.images import docker_client, ensure_language_image  # noqa: E402
from polyglot_harness.utils.backends.docker.provider import DockerProvider  # noqa: E402
from polyglot_harness.utils.languages import LANGUAGES, LanguageSpec  # noqa: E402
from polyglot_harness.utils.pipeline.expected_tests import (_behaving_canaries, _reference_verdict,  # noqa: E402
                                                            reference_patch)
from polyglot_harness.utils.pipeline.grading import GradingRequest, grade  # noqa: E402
from polyglot_harness.utils.pipeline.pools import Sandboxes  # noqa: E402
from polyglot_harness.utils.records.dataset import Instance, load_dataset  # noqa: E402
from polyglot_harness.utils.records.instance_repo import checkout_commit  # noqa: E402
from polyglot_harness.utils.seam.image_settings import ImageSettings  # noqa: E402

# What main's go spec ran (the other languages' commands name their image's runner script).
BEFORE_COMMANDS = {"go": "go test -json ./... > {report_dir}/go-test.json"}


@dataclasses.dataclass(frozen=True)
class Variant:
    name: str
    images: dict[str, str]
    commands: dict[str, str]

    def language(self, name: str) -> LanguageSpec:
        spec = LANGUAGES[name]
        command = self.commands.get(name)
        # The command runs the tests itself: no run command after it (Go's polyglot-go-run).
        return dataclasses.replace(spec, test_command=command, run_command="") if command else spec


def grade_patch(sandboxes: Sandboxes, image: str, language: LanguageSpec, instance: Instance, patch: str,
                plant_all: bool = False, expected: tuple[str, ...] | None = None,
                skips: tuple[str, ...] = (), sources: tuple[str, ...] | None = None):
    with tempfile.TemporaryDirectory(prefix="hidden-gone-") as workdir:
        tree = Path(workdir) / "tree"
        checkout_commit(instance.grading_repo_dir, instance.test_commit, tree)
        request = GradingRequest(language=language, instance_id=instance.instance_id, test_tree=tree, patch_text=patch, solution_paths=instance.solution_paths,
                                 hidden_paths=instance.hidden_paths, expected_tests=expected, test_timeout=300, expected_skips=skips,
                                 grading_mode=instance.grading_mode, canary_sources=sources,
                                 plant_all_canaries=plant_all)
        return grade(sandboxes, image, request)


def outcomes(outcome) -> dict[str, str]:
    return {case.name: case.outcome for case in outcome.real_results.cases}


def measure(sandboxes: Sandboxes, variant: Variant, instance: Instance) -> dict:
    """Preparation's two gradings (reference with every canary, then the stub) in one variant."""
    language, image = variant.language(instance.language), variant.images[instance.language]
    reference = grade_patch(sandboxes, image, language, instance, reference_patch(instance), plant_all=True)
    verdict = _reference_verdict(reference, instance)
    hidden = language.hidden_tests(reference.real_results, instance.hidden_paths)
    sources = _behaving_canaries(reference.canaries, reference.canary_cases)
    stub = grade_patch(sandboxes, image, language, instance, "", expected=hidden.names(),
                       skips=hidden.names("skipped"), sources=sources)
    return {
        "reference": {"resolved": verdict.resolved, "reason": str(verdict.reason), "tests": outcomes(reference),
                      "exec_seconds": reference.exec_result.seconds if reference.exec_result else None,
                      "grading_seconds": reference.seconds},
        "canary_sources": list(sources),
        "stub": {"resolved": stub.verdict.resolved, "reason": str(stub.verdict.reason), "tests": outcomes(stub),
                 "exec_seconds": stub.exec_result.seconds if stub.exec_result else None,
                 "grading_seconds": stub.seconds},
    }


def differences(before: dict, after: dict) -> list[str]:
    found = []
    for run in ("reference", "stub"):
        for key in ("resolved", "reason", "tests"):
            if before[run][key] != after[run][key]:
                found.append(f"{run} {key}: {_short(before[run][key])} -> {_short(after[run][key])}")
    if before["canary_sources"] != after["canary_sources"]:
        found.append(f"canary sources: {len(before['canary_sources'])} -> {len(after['canary_sources'])}")
    return found


def _short(value) -> str:
    return (json.dumps(value, sort_keys=True) if isinstance(value, dict) else str(value))[:300]


def run_instance(sandboxes: Sandboxes, variants: tuple[Variant, Variant], index: int, instance: Instance,
                 journal: Path) -> dict | None:
    order = variants if index % 2 == 0 else variants[::-1]
    measured = {}
    for variant in order:
        for attempt in (1, 2):  # an engine that times out under load: once more, then give up
            started = time.monotonic()
            try:
                measured[variant.name] = measure(sandboxes, variant, instance)
                break
            except Exception as error:  # noqa: BLE001 - reported, the other instances go on
                print(f"{instance.instance_id}: {variant.name} attempt {attempt} failed: {error}", flush=True)
        else:
            return None
        measured[variant.name]["seconds"] = time.monotonic() - started
    found = differences(measured["before"], measured["after"])
    print(f"{instance.instance_id}: before {measured['before']['seconds']:.1f}s after {measured['after']['seconds']:.1f}s"
          f"{' DIFFERS: ' + '; '.join(found) if found else ''}", flush=True)
    row = {"instance_id": instance.instance_id, "language": instance.language, "differences": found, **measured}
    with journal.open("a") as handle:  # one line per instance as it ends: a cut run keeps its rows
        handle.write(json.dumps(row) + "\n")
    return row


def summary(rows: list[dict]) -> None:
    if not rows:
        return
    print(f"\n{'language':10} {'n':>3} {'differ':>6} {'before s':>9} {'after s':>9} {'ratio':>6} "
          f"{'median before':>14} {'median after':>13}")
    for language in sorted({row["language"] for row in rows}):
        mine = [row for row in rows if row["language"] == language]
        before = [row["before"]["reference"]["grading_seconds"] + row["before"]["stub"]["grading_seconds"] for row in mine]
        after = [row["after"]["reference"]["grading_seconds"] + row["after"]["stub"]["grading_seconds"] for row in mine]
        differ = sum(1 for row in mine if row["differences"])
        print(f"{language:10} {len(mine):>3} {differ:>6} {sum(before):>9.1f} {sum(after):>9.1f} "
              f"{sum(after) / sum(before):>6.2f} {statistics.median(before):>14.2f} {statistics.median(after):>13.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, required=True)
    parser.add_argument("--before", required=True, help="language=image tag,... (main's images)")
    parser.add_argument("--languages", default="go,rust,java,cpp")
    parser.add_argument("--instance_ids", default="")
    parser.add_argument("--skip", default="", help="instance ids not to measure (e.g. measured by a cut run)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--output", type=Path, default=None)
    parser.add_argument("--runners_in_images", action="store_true",
                        help="before runs the test command its image's runner script names (go too)")
    args = parser.parse_args()
    languages = args.languages.split(",")
    wanted = set(filter(None, args.instance_ids.split(",")))
    skipped = set(filter(None, args.skip.split(",")))
    instances = [i for i in load_dataset(args.dataset)
                 if i.language in languages and (not wanted or i.instance_id in wanted) and i.instance_id not in skipped]
    instances.sort(key=lambda i: languages.index(i.language))  # in the order --languages names them
    client = docker_client()
    after_images = {name: ensure_language_image(client, LANGUAGES[name], ImageSettings.from_env(), log=print).tag
                    for name in languages}
    before_images = dict(pair.split("=", 1) for pair in args.before.split(","))
    variants = (Variant("before", before_images, {} if args.runners_in_images else BEFORE_COMMANDS), Variant("after", after_images, {}))
    output = args.output or Path(__file__).parent / "results" / f"hidden_gone-{time.strftime('%Y%m%dT%H%M%S')}.json"
    output.parent.mkdir(parents=True, exist_ok=True)
    journal = output.with_suffix(".jsonl")
    sandboxes = Sandboxes(DockerProvider(client), "bench-hidden-gone")
    try:
        with ThreadPoolExecutor(max_workers=args.workers) as pool:
            rows = [row for row in pool.map(lambda pair: run_instance(sandboxes, variants, *pair, journal),
                                            enumerate(instances)) if row]
    finally:
        sandboxes.close()
    summary(rows)
    output.write_text(json.dumps({"images": {"before": before_images, "after": after_images}, "rows": rows}, indent=1))
    print(f"written {output}")
    return 1 if any(row["differences"] for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
