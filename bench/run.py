"""Where the harness stands against the floor: the test commands themselves.

    python bench/run.py [--dataset DIR] [--subset NAME | --instance_ids ID,...] --max_workers N
                        [--cold_images] [--output bench/results/<timestamp>.json]

One run, one machine, the same instances and the same parallelism throughout:

1. bare      the language spec's test command on each reference solution, run back to back
             in ONE long-lived container per language (all trees copied in up front, outside
             the clock), at most N execs at once: the floor.
2. harness   harness(agent="oracle", force=True) into a temporary output dir; its wall
             seconds, its per-language seconds, and harness / bare.
3. overhead  per instance, with the null agent (container, copy, diff, removal) and with
             grade() on a no-op test command (`true`): median and p90 seconds per phase.
4. images    warm checks; cold builds only with --cold_images (REMOVES the images first);
             the agent layer built from a copy of agent/, then rebuilt after a one-line code
             change and after a requirements.txt change.
5. slowest   the five slowest instances of the harness run and what dominated them.

Prints a table (targets next to the numbers: goals, not assertions) and writes the same
figures as JSON. Without --dataset the bundled samples are prepared into a temporary
directory; without --subset / --instance_ids every instance of the dataset is measured.
Every container it creates is labelled and removed, also on Ctrl-C. See bench/README.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import docker
import docker.errors

import _standalone  # noqa: F401,E402 - the checkout as the package polyglot_harness
from polyglot_harness import prepare_polyglot_dataset
from bench.bare import BareRun, run_bare
from bench.concurrency import SLOW_START_S, TARGET_SLEEP_RATIO, concurrency_figures
from bench.image_timings import (agent_layer_timings, cold_builds, cold_image_tags, remove_images, warm_checks,
                                 warn_cold)
from bench.overhead import PHASES, InstanceOverhead, PhaseRecorder, run_noop_grading
from bench.table import render, spread
from polyglot_harness.utils.run import HarnessError, harness
from polyglot_harness.utils.run.provision import default_limits
from polyglot_harness.utils.run.settings import DEFAULT_DISK
from polyglot_harness.utils.agents.prepare import AgentPatchError
from polyglot_harness.utils.records.dataset import DatasetError, Instance, load_dataset, select_instances
from polyglot_harness.utils.backends.docker.engine import EngineError, ensure_engine
from polyglot_harness.utils.backends.docker.images import docker_client, ensure_language_image
from polyglot_harness.utils.seam.errors import ImageError
from polyglot_harness.utils.seam.image_settings import ImageSettings
from polyglot_harness.utils.languages import LANGUAGES
from polyglot_harness.utils.outcomes import Bucket
from polyglot_harness.utils.records.results import InstanceResult
from polyglot_harness.utils.backends.docker.provider import LABEL_HOST, LABEL_PID
from polyglot_harness.utils.seam.errors import SandboxError

PROJECT_ROOT = Path(__file__).resolve().parent.parent
SAMPLES_DIR = PROJECT_ROOT / "samples"
RESULTS_DIR = PROJECT_ROOT / "bench" / "results"
SCHEMA_VERSION = 1

TARGET_RATIO = 1.25
TARGET_OVERHEAD_MEDIAN_S = 1.5
# Issue 16: every language's harness seconds within 1.25 x its bare test seconds, and the whole
# run within 0.7 x the bare run's wall.
TARGET_LANGUAGE_RATIO = 1.25
TARGET_WHOLE_RATIO = 0.7
TARGET_AGENT_REBUILD_S = 5.0
JAVA_NEAR_TIMEOUT_FRACTION = 0.5  # "near the timeout" = more than half of it
SLOWEST = 5
COLD_WARNING_PAUSE_S = 10


def log(message: str) -> None:
    print(f"[bench {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --- the steps -------------------------------------------------------------------------------

def select(dataset: Path, subsets: list[str], instance_ids: list[str] | None) -> list[Instance]:
    selection = select_instances(load_dataset(dataset), subsets or None, instance_ids or None)
    if not selection.instances:
        raise DatasetError(f"the selection from {dataset} is empty")
    return list(selection.instances)


def run_harness(instances: list[Instance], dataset: Path, agent: str, workers: int, test_timeout: int,
                output_dir: Path) -> tuple[float, dict[str, InstanceResult]]:
    started = time.monotonic()
    outcome = harness(subset=None, instance_ids=[instance.instance_id for instance in instances], dataset=dataset,
                      agent=agent, max_workers=workers, test_timeout=test_timeout, output_dir=output_dir,
                      model_name_or_path=f"bench_{agent}", force=True, progress=False)
    wall = time.monotonic() - started
    if outcome.interrupted:
        raise KeyboardInterrupt
    missing = [instance.instance_id for instance in instances if instance.instance_id not in outcome.results]
    if missing:
        raise HarnessError(f"the {agent} run left {len(missing)} instance(s) without a result: {', '.join(missing)}")
    return wall, outcome.results


def measure_overhead(client, instances: list[Instance], images: dict[str, str], oracle: dict[str, InstanceResult],
                     dataset: Path, workers: int, test_timeout: int, run_id: str,
                     workdir: Path) -> list[InstanceOverhead]:
    recorder = PhaseRecorder()
    with recorder.installed():
        log(f"overhead: null agent over {len(instances)} instance(s)")
        _, null_results = run_harness(instances, dataset, "null", workers, test_timeout, workdir / "null")
        log(f"overhead: no-op grading over {len(instances)} instance(s)")
        patches = {instance_id: result.model_patch for instance_id, result in oracle.items()}
        grading_seconds = run_noop_grading(client, instances, patches, images, workers,
                                           default_limits(workers, None, None, 2048, DEFAULT_DISK), run_id, recorder)
    return [InstanceOverhead(instance.instance_id, instance.language,
                             recorder.phases_of("agent", instance.instance_id,
                                                null_results[instance.instance_id].seconds.total or 0.0),
                             recorder.phases_of("grading", instance.instance_id,
                                                grading_seconds[instance.instance_id]))
            for instance in instances]


# --- figures -----------------------------------------------------------------------------------

def bare_figures(bare: BareRun) -> dict[str, Any]:
    per_language: dict[str, dict[str, float]] = {}
    for row in bare.instances:
        entry = per_language.setdefault(row.language, {"n": 0, "seconds": 0.0})
        entry["n"] += 1
        entry["seconds"] = round(entry["seconds"] + row.seconds, 3)
    return {"wall_seconds": round(bare.wall_seconds, 3), "setup_seconds": round(bare.setup_seconds, 3),
            "n": len(bare.instances), "resolved": sum(row.resolved for row in bare.instances),
            "per_language": dict(sorted(per_language.items())), "instances": [asdict(row) for row in bare.instances]}


def harness_figures(wall: float, results: dict[str, InstanceResult], bare: dict[str, Any]) -> dict[str, Any]:
    per_language: dict[str, dict[str, Any]] = {}
    for result in results.values():
        entry = per_language.setdefault(result.language, {"n": 0, "seconds": 0.0, "grading_seconds": 0.0,
                                                          "tests_seconds": 0.0})
        entry["n"] += 1
        for key, field in (("seconds", "total"), ("grading_seconds", "grading"), ("tests_seconds", "tests")):
            entry[key] = round(entry[key] + result.seconds.to_dict().get(field, 0.0), 3)
    for language, entry in per_language.items():
        floor = bare["per_language"].get(language, {}).get("seconds")
        entry["ratio"] = round(entry["seconds"] / floor, 3) if floor else None
    instances = [{"instance_id": result.instance_id, "language": result.language, "eval_result": result.eval_result,
                  "reason": result.reason, "seconds": result.seconds.to_dict()} for result in results.values()]
    return {"wall_seconds": round(wall, 3), "n": len(results),
            "resolved": sum(result.eval_result == Bucket.RESOLVED for result in results.values()),
            "ratio": round(wall / bare["wall_seconds"], 3) if bare["wall_seconds"] else None,
            "per_language": dict(sorted(per_language.items())), "instances": instances}


def overhead_figures(rows: list[InstanceOverhead], oracle: dict[str, InstanceResult]) -> dict[str, Any]:
    keys = PHASES + ("total",)
    return {
        "n": len(rows),
        "agent": {phase: spread(row.agent[phase] for row in rows) for phase in keys},
        "grading": {phase: spread(row.grading[phase] for row in rows) for phase in keys},
        "combined": spread(row.total for row in rows),
        "oracle_total_minus_tests": spread((result.seconds.total or 0.0) - (result.seconds.tests or 0.0)
                                           for result in oracle.values()),
        "instances": [asdict(row) for row in rows],
    }


def slowest_figures(results: dict[str, InstanceResult]) -> list[dict[str, Any]]:
    rows = []
    for result in sorted(results.values(), key=lambda result: -(result.seconds.total or 0.0))[:SLOWEST]:
        total, grading, tests = (result.seconds.to_dict().get(key, 0.0) for key in ("total", "grading", "tests"))
        parts = {"agent": total - grading, "grading": grading - tests, "tests": tests}
        rows.append({"instance_id": result.instance_id, "total": round(total, 3),
                     "agent_phase": round(parts["agent"], 3), "grading_overhead": round(parts["grading"], 3),
                     "tests": round(tests, 3), "dominated_by": max(parts, key=parts.get)})
    return rows


def target(name: str, value: float | None, text: str, goal: str, met: bool | None) -> dict[str, Any]:
    return {"name": name, "value": text if value is not None else "-", "goal": goal,
            "met": None if value is None else met}


def concurrency_targets(concurrency: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for run in concurrency["runs"]:
        name = f"{run['instances']} x {run['agent_seconds']:g} s agents @ {run['workers']}"
        rows.append(target(f"{name}: wall / ideal", run["ratio"], f"{run['ratio']}",
                           f"<= {TARGET_SLEEP_RATIO}", run["ratio"] <= TARGET_SLEEP_RATIO))
        starts = run["engine_starts"]
        rows.append(target(f"{name}: failed / slow starts", starts["n"], f"{starts['failed']} / {starts['slow']}",
                           f"0 / 0 (slow: > {SLOW_START_S:g} s)", starts["failed"] == 0 and starts["slow"] == 0))
    return rows


def targets(data: dict[str, Any], test_timeout: int) -> list[dict[str, Any]]:
    rows = concurrency_targets(data["concurrency"]) if data.get("concurrency") else []
    if "harness" not in data:
        return rows
    ratio = data["harness"]["ratio"]
    median = data["overhead"]["combined"]["median"]
    rebuild = data["images"]["agent_layer"].get("code_change", {})
    java_harness = [row["seconds"].get("tests", 0.0) for row in data["harness"]["instances"]
                    if row["language"] == "java"]
    java_bare = [row["seconds"] for row in data["bare"]["instances"] if row["language"] == "java"]
    java_max = max(java_harness + java_bare) if java_harness or java_bare else None
    java_limit = test_timeout * JAVA_NEAR_TIMEOUT_FRACTION

    return [
        target("harness / bare, wall", ratio, f"{ratio}", f"<= {TARGET_RATIO}",
               ratio is not None and ratio <= TARGET_RATIO),
        target("per-instance overhead, median", median, f"{median} s",
               f"<= {TARGET_OVERHEAD_MEDIAN_S} s", median is not None and median <= TARGET_OVERHEAD_MEDIAN_S),
        target("agent layer rebuild, code change", rebuild.get("seconds"), f"{rebuild.get('seconds')} s",
               f"<= {TARGET_AGENT_REBUILD_S} s",
               rebuild.get("seconds") is not None and rebuild["seconds"] <= TARGET_AGENT_REBUILD_S),
        target("max Java test seconds (harness/bare)", java_max,
               f"{max(java_harness, default=0):.1f} / {max(java_bare, default=0):.1f} s",
               f"<= {java_limit:g} of {test_timeout} s", java_max is not None and java_max <= java_limit),
        target("harness / bare, wall (whole run)", ratio, f"{ratio}", f"<= {TARGET_WHOLE_RATIO}",
               ratio is not None and ratio <= TARGET_WHOLE_RATIO),
    ] + language_targets(data) + rows


def language_targets(data: dict[str, Any]) -> list[dict[str, Any]]:
    """Per language: harness / bare seconds, and the floor the measured per-instance overhead
    (null agent + no-op grading, median) sets on it: (bare + n x overhead) / bare."""
    overhead = data["overhead"]["combined"]["median"] or 0.0
    rows = []
    for language, entry in data["harness"]["per_language"].items():
        bare = data["bare"]["per_language"].get(language, {}).get("seconds")
        ratio = entry.get("ratio")
        floor = round((bare + entry["n"] * overhead) / bare, 2) if bare else None
        rows.append(target(f"{language}: harness / bare", ratio, f"{ratio} (floor {floor})",
                           f"<= {TARGET_LANGUAGE_RATIO}", ratio is not None and ratio <= TARGET_LANGUAGE_RATIO))
    return rows


def machine_facts(client) -> dict[str, Any]:
    def git(*arguments: str) -> str:
        completed = subprocess.run(["git", *arguments], cwd=PROJECT_ROOT, capture_output=True, text=True)
        return completed.stdout.strip() if completed.returncode == 0 else ""

    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    return {"cpus": os.cpu_count(), "hostname": socket.gethostname(),
            "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / (1 << 30), 1),
            "docker_version": client.version().get("Version", "?"),
            "git_commit": commit + ("+dirty" if git("status", "--porcelain", "--untracked-files=no") else "")}


# --- the whole run ---------------------------------------------------------------------------

def benchmark(args: argparse.Namespace, dataset: Path, workdir: Path) -> dict[str, Any]:
    instances = select(dataset, args.subset, args.instance_ids)
    languages = sorted({instance.language for instance in instances})
    ensure_engine(log=log)
    client = docker_client()
    settings = ImageSettings.from_env()
    run_id = f"bench{time.strftime('%m%d%H%M%S')}{secrets.token_hex(2)}"
    data: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION, "started_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "machine": machine_facts(client),
        "settings": {"dataset": str(dataset), "instance_ids": [instance.instance_id for instance in instances],
                     "languages": dict(sorted(Counter(instance.language for instance in instances).items())),
                     "max_workers": args.max_workers, "test_timeout": args.test_timeout,
                     "cold_images": args.cold_images, "bench_run_id": run_id,
                     "sleep_agent": args.sleep_agent, "sleep_only": args.sleep_only},
    }
    if args.sleep_agent is not None:
        data["concurrency"] = concurrency_figures(dataset, sleep_instance_ids(instances, args.sleep_instances),
                                                  args.sleep_agent, args.sleep_workers, workdir, log)
    if args.sleep_only:
        data["targets"] = targets(data, args.test_timeout)
        return data
    images: dict[str, Any] = {"cold": None}
    if args.cold_images:
        tags = cold_image_tags(client, settings)
        warn_cold(tags, COLD_WARNING_PAUSE_S)
        remove_images(client, tags, log)
        cold = cold_builds(client, languages, settings, log)
        images["cold"] = {name: asdict(timing) for name, timing in cold.items()}
    log(f"images: warm checks for {', '.join(languages)}")
    warm = warm_checks(client, languages, settings, log)
    images["warm"] = {name: asdict(timing) for name, timing in warm.items()}
    language_images = {language: timing.tag for language, timing in warm.items()}

    log(f"bare: {len(instances)} instance(s), {args.max_workers} at once")
    bare = bare_figures(run_bare(client, instances, language_images, args.max_workers, args.test_timeout, run_id, log))
    log(f"bare: {bare['wall_seconds']:.1f}s wall, {bare['resolved']}/{bare['n']} passed")
    log(f"harness: oracle agent over {len(instances)} instance(s), max_workers {args.max_workers}")
    wall, oracle = run_harness(instances, dataset, "oracle", args.max_workers, args.test_timeout, workdir / "oracle")
    data["bare"], data["harness"] = bare, harness_figures(wall, oracle, bare)
    log(f"harness: {wall:.1f}s wall, {data['harness']['resolved']}/{len(oracle)} resolved")
    bare_verdicts = {row["instance_id"]: row["resolved"] for row in bare["instances"]}
    data["verdict_mismatches"] = sorted(instance_id for instance_id, result in oracle.items()
                                        if (result.eval_result == Bucket.RESOLVED) != bare_verdicts.get(instance_id))

    data["warnings"] = [f"{result.instance_id}: the harness graded in {result.grading_image}, the bare run used "
                        f"{language_images[result.language]} (an image recipe changed during the run?)"
                        for result in oracle.values() if result.grading_image != language_images[result.language]]
    rows = measure_overhead(client, instances, language_images, oracle, dataset, args.max_workers,
                            args.test_timeout, run_id, workdir)
    data["overhead"] = overhead_figures(rows, oracle)

    log("images: agent layer (python) from a copy of agent/")
    python_image = (language_images.get("python")
                    or ensure_language_image(client, LANGUAGES["python"], settings, log).tag)
    images["agent_layer"] = {name: asdict(timing)
                             for name, timing in agent_layer_timings(client, python_image, log).items()}
    data["images"] = images
    data["slowest"] = slowest_figures(oracle)
    data["targets"] = targets(data, args.test_timeout)
    return data


def sleep_instance_ids(instances: list[Instance], count: int) -> list[str]:
    if len(instances) < count:
        raise DatasetError(f"--sleep_instances {count} needs that many instances, the selection has "
                           f"{len(instances)} (the real benchmark has 225: --dataset datasets/polyglot)")
    return [instance.instance_id for instance in instances[:count]]


def remove_own_containers() -> int:
    """Every container this process created (the harness's and ours carry its pid)."""
    try:
        client = docker.from_env(timeout=60)
        containers = client.containers.list(all=True, filters={"label": [f"{LABEL_PID}={os.getpid()}",
                                                                         f"{LABEL_HOST}={socket.gethostname()}"]},
                                            ignore_removed=True)
        for container in containers:
            with contextlib.suppress(docker.errors.NotFound):
                container.remove(force=True, v=True)
        return len(containers)
    except docker.errors.DockerException:
        return 0


def prepare_samples(destination: Path) -> Path:
    log(f"no --dataset: preparing the bundled samples into {destination}")
    with contextlib.redirect_stdout(sys.stderr):
        status = prepare_polyglot_dataset.main(["--benchmark_dir", str(SAMPLES_DIR), "--output_dir", str(destination),
                                                 "--fast"])
    if status != 0:
        raise DatasetError(f"preparing the bundled samples from {SAMPLES_DIR} failed (exit {status})")
    return destination


def _comma_list(value: str) -> list[str]:
    return [item.strip() for item in value.split(",") if item.strip()]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python bench/run.py", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", type=Path, default=None, metavar="DIR",
                        help="prepared dataset directory (default: the bundled samples, prepared into a temp dir)")
    parser.add_argument("--subset", action="append", type=_comma_list, default=None, metavar="NAME",
                        help="subset name(s) as for harness.py (repeatable or comma list; default: every instance)")
    parser.add_argument("--instance_ids", type=_comma_list, default=None, metavar="ID,...",
                        help="comma list of instance ids")
    parser.add_argument("--max_workers", type=int, required=True, metavar="N",
                        help="instances (bare: test execs) at once, the same for every step")
    parser.add_argument("--test_timeout", type=int, default=120, metavar="S",
                        help="seconds per test command (as harness.py)")
    parser.add_argument("--cold_images", action="store_true",
                        help="DESTRUCTIVE: remove every polyglot-harness/* image and the base image, then time "
                             "rebuilding them (needs the package mirrors; other runs on this engine are affected)")
    parser.add_argument("--sleep_agent", type=float, default=None, metavar="SECONDS",
                        help="also measure LLM-bound agents at high concurrency: --sleep_instances agents that only "
                             "sleep SECONDS, at each of --sleep_workers (see bench/concurrency.py)")
    parser.add_argument("--sleep_instances", type=int, default=64, metavar="N",
                        help="how many sleeping agents (the first N of the selection; default 64)")
    parser.add_argument("--sleep_workers", type=_comma_list, default=["32", "64", "128"], metavar="W,...",
                        help="the --max_workers values of the sleep runs (default 32,64,128)")
    parser.add_argument("--sleep_only", action="store_true",
                        help="with --sleep_agent: measure only that (skip bare, oracle, overhead and images)")
    parser.add_argument("--output", type=Path, default=None, metavar="FILE",
                        help="JSON file to write (default: bench/results/<timestamp>.json)")
    args = parser.parse_args(argv)
    args.subset = [name for names in (args.subset or []) for name in names]
    if args.max_workers < 1:
        parser.error("--max_workers must be at least 1")
    if args.test_timeout < 1:
        parser.error("--test_timeout must be at least 1")
    try:
        args.sleep_workers = [int(value) for value in args.sleep_workers]
    except ValueError:
        parser.error(f"--sleep_workers must be whole numbers, got {','.join(args.sleep_workers)}")
    if any(value < 1 for value in args.sleep_workers) or not args.sleep_workers:
        parser.error("--sleep_workers must be whole numbers >= 1")
    if args.sleep_agent is not None and not 0 < args.sleep_agent <= 540:
        parser.error("--sleep_agent must be between 0 and 540 seconds (the agent timeout is 600)")
    if args.sleep_instances < 1:
        parser.error("--sleep_instances must be at least 1")
    if args.sleep_only and args.sleep_agent is None:
        parser.error("--sleep_only needs --sleep_agent SECONDS")
    return args


def _raise_interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    output = args.output or RESULTS_DIR / f"{time.strftime('%Y%m%dT%H%M%S')}.json"
    if args.dataset is not None and not args.dataset.is_dir():
        print(f"error: --dataset {args.dataset} does not exist; prepare one with "
              f"`python prepare_polyglot_dataset.py --output_dir {args.dataset}`, or omit --dataset "
              f"to use the bundled samples", file=sys.stderr)
        return 2
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        with tempfile.TemporaryDirectory(prefix="polyglot-bench-") as workdir:
            dataset = args.dataset.resolve() if args.dataset else prepare_samples(Path(workdir) / "dataset")
            data = benchmark(args, dataset, Path(workdir))
    except (DatasetError, HarnessError, ImageError, EngineError, AgentPatchError, SandboxError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except docker.errors.DockerException as error:
        print(f"error: Docker: {str(error).strip().splitlines()[0] if str(error).strip() else error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted: removing this run's containers; no results written", file=sys.stderr)
        return 130
    finally:
        left = remove_own_containers()
        if left:
            print(f"warning: removed {left} container(s) this run had left behind", file=sys.stderr)
        signal.signal(signal.SIGTERM, previous)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    print(render(data))
    print(f"\nresults: {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
