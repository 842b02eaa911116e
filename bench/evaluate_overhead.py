"""What one evaluate() call costs beyond its grading, and what the first call pays for set-up.

    python bench/evaluate_overhead.py --dataset datasets/polyglot --instance_ids python__beer-song,go__book-store

Each instance's reference solution (as a diff against its base commit) is graded `--repeat`
times through one Evaluator. Per call: the wall time of evaluate(), the grading's own seconds
(Verdict.result["seconds"]["grading"]: container start, copy in, tests, copy out, removal), the
tests' own seconds, and the difference between wall and grading, which is evaluate()'s overhead (the patch filter, the test tree's checkout, the
result). The first call of a language also opens the engine and finds its image: printed apart.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
import _standalone  # noqa: F401,E402 - the checkout as the package polyglot_harness
from polyglot_harness.utils.run.evaluate import Evaluator, Task  # noqa: E402
from polyglot_harness.utils.records.dataset import load_dataset  # noqa: E402


def reference_diff(task: Task, reference_dir: Path, workdir: Path) -> str:
    tree = workdir / task.id
    shutil.copytree(task.repo, tree, symlinks=True)
    for path in reference_dir.rglob("*"):
        if path.is_file():
            (tree / path.relative_to(reference_dir)).write_bytes(path.read_bytes())
    return subprocess.run(["git", "-C", str(tree), "diff", task.base_commit], capture_output=True, text=True,
                          check=True).stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--instance_ids", required=True, help="comma-separated")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    ids = args.instance_ids.split(",")
    references = {i.instance_id: i.reference_dir for i in load_dataset(Path(args.dataset))}
    print(f"{'instance':<28} {'call':>4} {'wall s':>8} {'grading s':>10} {'tests s':>8} {'overhead s':>11} verdict")
    overheads: list[float] = []
    with Evaluator(args.dataset) as evaluator, tempfile.TemporaryDirectory() as workdir:
        started = time.monotonic()
        listed = evaluator.tasks(instance_ids=ids)
        print(f"tasks(): {time.monotonic() - started:.3f}s for {len(listed)} task(s)")
        for task in listed:
            patch = reference_diff(task, references[task.id], Path(workdir))
            for call in range(1, args.repeat + 1):
                started = time.monotonic()
                verdict = evaluator.evaluate(task, patch)
                wall = time.monotonic() - started
                grading = float(verdict.result["seconds"].get("grading") or 0.0)
                tests = float(verdict.result["seconds"].get("tests") or 0.0)
                if call > 1:
                    overheads.append(wall - grading)
                print(f"{task.id:<28} {call:>4} {wall:>8.2f} {grading:>10.2f} {tests:>8.2f} {wall - grading:>11.2f} "
                      f"{verdict.bucket} ({verdict.reason})" + ("  <- first call: opens the engine, finds the image"
                                                                if call == 1 else ""))
    if overheads:
        print(f"overhead per call after the first (median of {len(overheads)}): {statistics.median(overheads):.3f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
