"""Where the real-benchmark gate's preparation spends its time, per language and per phase.

    python bench/citime.py [--ids a,b,...] [--workers 2] [--save FILE] [--against FILE]

Prepares a sample of the real benchmark (default: two ordinary exercises per language) with
recording, as tests/conftest.py's `real_dataset` does for all 225, into a temporary directory,
with a fresh recordings cache. Every grading of the preparation is attributed to its phase:
`reference` (every canary planted), `reference_retry` (the reference again without canaries,
when a canary disturbed it) and `stub` (the untouched stub, with the behaving canaries);
within a phase every sandbox operation is counted and timed: container starts (by role:
grading, cache-warm), the sandbox probe exec (`find`), the solution-process start, the test
command exec (the language's runner script: solo build, C++ preprocessing, compile, tests),
copies in and out, removal. Host CPU seconds (user+system of the whole machine, /proc/stat)
are printed for the run: the machine is shared, so wall times are noisy; counts are not.

`--save` writes the figures as JSON; `--against` prints a saved run's figures beside this
one's (paired: run both on the same sample, back to back). Figures, not assertions.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_ROOT))
# A fresh data home: no recording of an earlier preparation is reused.
os.environ["POLYGLOT_HARNESS_HOME"] = tempfile.mkdtemp(prefix="citime-home-")

import _standalone  # noqa: F401,E402 - the checkout as the package polyglot_harness
from polyglot_harness.utils.prepare import dataset as prepare  # noqa: E402
from polyglot_harness.utils.pipeline import expected_tests, pools, variant_recording  # noqa: E402

BENCHMARK = Path("/work/data/polyglot-benchmark")
SAMPLE = ("cpp__clock", "cpp__all-your-base", "go__wordy", "go__book-store", "java__pig-latin",
          "java__bank-account", "javascript__grep", "javascript__bowling", "python__bowling",
          "python__list-ops", "rust__wordy", "rust__macros")

CPUACCT = Path("/sys/fs/cgroup/cpuacct/docker")
_context = threading.local()
_lock = threading.Lock()
STAGES: dict[str, float] = {}
# (language, phase) -> operation -> [count, seconds]
FIGURES: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(lambda: [0, 0.0]))


def _add(operation: str, seconds: float) -> None:
    key = (getattr(_context, "language", "?"), getattr(_context, "phase", "?"))
    with _lock:
        FIGURES[key][operation][0] += 1
        FIGURES[key][operation][1] += seconds


def _add_cpu(seconds: float | None) -> None:
    if seconds is None:
        return
    key = (getattr(_context, "language", "?"), getattr(_context, "phase", "?"))
    with _lock:
        FIGURES[key]["container_cpu"][0] += 1
        FIGURES[key]["container_cpu"][1] += seconds


def _container_cpu_seconds(box) -> float | None:
    """CPU seconds the grading container used (cgroup v1 cpuacct, Docker backend), else None."""
    container = getattr(box, "container", None)
    if container is None:
        return None
    usage = CPUACCT / container.id / "cpuacct.usage"
    return int(usage.read_text()) / 1e9 if usage.is_file() else None


def _timed(operation: str, call, *args, **kwargs):
    started = time.monotonic()
    try:
        return call(*args, **kwargs)
    finally:
        _add(operation, time.monotonic() - started)


def _exec_kind(role: str, command: str) -> str:
    if command.startswith("find "):
        return "exec_probe"
    if "nohup setsid" in command:
        return "exec_solver_start"
    return "exec_test" if role == "grading" else f"exec_{role}"


class _TimedBox:
    def __init__(self, box, role: str) -> None:
        self._box, self._role = box, role

    def __enter__(self):
        self._box.__enter__()
        return self

    def __exit__(self, *exc):
        return _timed("remove", self._box.__exit__, *exc)

    def exec(self, command: str, *args, **kwargs):
        kind = _exec_kind(self._role, command)
        result = _timed(kind, self._box.exec, command, *args, **kwargs)
        if kind == "exec_test":  # the container's CPU so far: load-independent, unlike seconds
            _add_cpu(_container_cpu_seconds(self._box))
        return result

    def put_directory(self, *args, **kwargs):
        return _timed("put", self._box.put_directory, *args, **kwargs)

    def get_files(self, *args, **kwargs):
        return _timed("get", self._box.get_files, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._box, name)


def _instrument() -> None:
    start, grade_patch = pools.Sandboxes.start, expected_tests._grade_patch
    variant_grade = variant_recording._grade

    def timed_start(self, spec, instance_id):
        return _TimedBox(_timed(f"start_{spec.role}", start, self, spec, instance_id), spec.role)

    def timed_grade_patch(sandboxes, image, instance, patch, *args, **kwargs):
        _context.language = instance.language
        _context.phase = ("key" if kwargs.get("observe_only") is not None else "reference" if kwargs.get("plant_all")
                          else "stub" if patch == "" else "reference_retry")
        outcome = _timed("grading", grade_patch, sandboxes, image, instance, patch, *args, **kwargs)
        with _lock:
            FIGURES[(instance.language, _context.phase)]["canaries_planted"][0] += len(outcome.canaries)
        return outcome

    def timed_variant_grade(sandboxes, image, instance, tree, patch, variants, *args, **kwargs):
        _context.language = instance.language
        _context.phase = "variants_confirm" if getattr(_context, "probed", None) == instance.instance_id else "variants_probe"
        _context.probed = instance.instance_id
        return _timed("grading", variant_grade, sandboxes, image, instance, tree, patch, variants, *args, **kwargs)

    def timed_stage(name, call):
        def timed(*args, **kwargs):
            started = time.monotonic()
            try:
                return call(*args, **kwargs)
            finally:
                STAGES[name] = round(time.monotonic() - started, 1)
        return timed

    pools.Sandboxes.start = timed_start
    expected_tests._grade_patch = timed_grade_patch
    variant_recording._grade = timed_variant_grade
    prepare.record_references = timed_stage("recording", prepare.record_references)


def _cpu_seconds() -> float:
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    user, nice, system = (int(value) for value in fields[:3])
    return (user + nice + system) / os.sysconf("SC_CLK_TCK")


def measure(ids: list[str], workers: int) -> dict[str, Any]:
    _instrument()
    output = Path(tempfile.mkdtemp(prefix="citime-ds-")) / "polyglot"
    cpu, started = _cpu_seconds(), time.monotonic()
    summary = prepare.prepare_dataset(BENCHMARK, output, workers=workers, record_expected=True,
                                      instance_ids=ids, log=lambda message: None)
    metadata = json.loads((output / "polyglot_benchmark_metadata.json").read_text())
    return {"wall_s": round(time.monotonic() - started, 1), "host_cpu_s": round(_cpu_seconds() - cpu, 1),
            "instances": summary.instance_count, "dataset": str(output), "stages_s": dict(STAGES),
            "figures": {f"{language}/{phase}": {op: [int(n), round(s, 2)] for op, (n, s) in sorted(ops.items())}
                        for (language, phase), ops in sorted(FIGURES.items())},
            "metadata": metadata}


def _rows(run: dict[str, Any]) -> dict[str, str]:
    rows = {"wall seconds": str(run["wall_s"]), "host CPU seconds": str(run["host_cpu_s"])}
    rows.update({f"stage {name} seconds": str(seconds) for name, seconds in run.get("stages_s", {}).items()})
    for group, operations in run["figures"].items():
        for operation, (count, seconds) in operations.items():
            shown = str(count) if operation == "canaries_planted" else f"{seconds:.1f} CPU s" if operation == "container_cpu" else f"{count} x {seconds / max(count, 1):.2f}s = {seconds:.1f}s"
            rows[f"{group} {operation}"] = shown
    return rows


def print_side_by_side(current: dict[str, Any], earlier: dict[str, Any] | None) -> None:
    now, before = _rows(current), _rows(earlier) if earlier else {}
    width = max(map(len, now | before))
    print(f"{'':{width}}  {'earlier':>26}  {'this run':>26}")
    for key in list(before) + [key for key in now if key not in before]:
        print(f"{key:{width}}  {before.get(key, '-'):>26}  {now.get(key, '-'):>26}")
    if earlier:
        same = earlier["metadata"] == current["metadata"]
        print(f"recorded metadata identical to the earlier run's: {same}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ids", default=",".join(SAMPLE))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--save", type=Path)
    parser.add_argument("--against", type=Path)
    args = parser.parse_args()
    current = measure(args.ids.split(","), args.workers)
    if args.save:
        args.save.write_text(json.dumps(current, indent=1))
    print_side_by_side(current, json.loads(args.against.read_text()) if args.against else None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
