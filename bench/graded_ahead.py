"""The modules after the gate, one grading at a time against two at a time (issue 34).

    python bench/graded_ahead.py --dataset DIR [MODULE ...]

Runs the given test modules (default: those that ask for their gradings ahead,
`tests/fixtures/forgers/check.py: graded_ahead`) twice on an already prepared gate dataset
(POLYGLOT_GATE_DATASET, never in CI): with POLYGLOT_TESTS_AHEAD=1 (each grading asked for when
its test runs, as before) and with the default (two at a time). Prints each module's wall
seconds from the suite's own timeline and the machine's busy share (/proc/stat) per run, side
by side. Figures, not assertions; run it on a machine doing nothing else.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
MODULE_LINE = re.compile(r"^\s+([0-9.]+)s\s+from\s+\d+s\s+(tests/\S+\.py)$")


def default_modules() -> list[str]:
    return sorted(str(path.relative_to(PROJECT_ROOT)) for path in (PROJECT_ROOT / "tests").glob("test_*.py")
                  if "graded_ahead(" in path.read_text())


def _cpu() -> tuple[int, int]:
    fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def run(modules: list[str], dataset: str, ahead: str) -> tuple[dict[str, float], float, float, int]:
    env = {**os.environ, "POLYGLOT_GATE_DATASET": dataset, "POLYGLOT_TESTS_AHEAD": ahead}
    env.pop("CI", None)
    busy_before, total_before = _cpu()
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:warnings", "-p", "no:cacheprovider", *modules],
                          cwd=PROJECT_ROOT, env=env, capture_output=True, text=True)
    seconds = time.monotonic() - started
    busy_after, total_after = _cpu()
    per_module = {m.group(2): float(m.group(1)) for m in map(MODULE_LINE.match, done.stdout.splitlines()) if m}
    busy = 100.0 * (busy_after - busy_before) / max(1, total_after - total_before)
    return per_module, seconds, busy, done.returncode


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", required=True, help="an already prepared gate dataset (all 225)")
    parser.add_argument("modules", nargs="*")
    args = parser.parse_args()
    modules = args.modules or default_modules()
    one, one_s, one_busy, one_rc = run(modules, args.dataset, "1")
    two, two_s, two_busy, two_rc = run(modules, args.dataset, "2")
    print(f"{'module':<42} {'one at a time':>14} {'two at a time':>14}")
    for module in modules:
        print(f"{module:<42} {one.get(module, float('nan')):>13.1f}s {two.get(module, float('nan')):>13.1f}s")
    print(f"{'pytest, whole run':<42} {one_s:>13.1f}s {two_s:>13.1f}s")
    print(f"{'machine busy':<42} {one_busy:>13.0f}% {two_busy:>13.0f}%")
    print(f"{'pytest exit code':<42} {one_rc:>14} {two_rc:>14}")
    return 0 if one_rc == two_rc == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
