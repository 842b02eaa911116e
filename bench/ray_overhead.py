"""The Ray backend's per-instance overhead against the Docker backend's, same instances, same
parallelism, same machine.

    python bench/ray_overhead.py [--dataset DIR] [--languages python] [--max_workers 2] [--nodes 1|2]

Runs harness(agent="oracle", force=True) with --backend docker, then with --backend ray on a
local Ray cluster (`--nodes 1`: one node on this machine's engine; `--nodes 2`: a second node
on a second dockerd, tests/second_engine.py), and prints per backend: wall seconds, and per
instance the median / p90 of total - tests seconds (everything but the test run itself), and
the Ray backend's extra seconds per instance. Without --dataset the bundled samples are
prepared into a temporary directory. Figures, not assertions.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT_ROOT))

import _standalone  # noqa: F401,E402 - the checkout as the package polyglot_harness
from polyglot_harness.utils.run import harness  # noqa: E402
from polyglot_harness.utils.backends.ray.provider import RESOURCE  # noqa: E402


def overhead(outcome) -> list[float]:
    return [result.seconds.total - (result.seconds.tests or 0.0) for result in outcome.results.values()
            if result.seconds.total is not None]


def quantiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", type=Path, default=None)
    parser.add_argument("--languages", default=None, help="comma list (default: all of the dataset)")
    parser.add_argument("--max_workers", type=int, default=2)
    parser.add_argument("--nodes", type=int, choices=(1, 2), default=1)
    args = parser.parse_args()
    from ray.cluster_utils import Cluster
    import ray

    with tempfile.TemporaryDirectory(prefix="polyglot-bench-ray-") as workdir:
        dataset = args.dataset
        if dataset is None:
            from polyglot_harness.utils.prepare.cli import main as prepare_main

            dataset = Path(workdir) / "samples"
            prepare_main(["--benchmark_dir", str(PROJECT_ROOT / "samples"), "--output_dir", str(dataset)])
        common = dict(dataset=dataset, subset="full", agent="oracle", force=True, progress=False,
                      max_workers=args.max_workers, output_dir=Path(workdir) / "runs",
                      languages=args.languages.split(",") if args.languages else None)
        rows = {}
        started = time.monotonic()
        local = harness(model_name_or_path="docker", **common)
        rows["docker"] = (time.monotonic() - started, overhead(local), local.report["resolved_instances"])
        second = None
        cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "include_dashboard": False,
                                                                "resources": {RESOURCE: 2 * args.max_workers}})
        try:
            if args.nodes == 2:
                from polyglot_harness.tests import second_engine

                second = second_engine.start()
                cluster.add_node(num_cpus=1, resources={RESOURCE: 2 * args.max_workers},
                                 env_vars={"DOCKER_HOST": second_engine.HOST})
            harness(model_name_or_path="ray-warm-up", backend="ray", ray_address=cluster.address,
                    **common)  # images and Ray workers ready on every node, outside the clock
            started = time.monotonic()
            remote = harness(model_name_or_path="ray", backend="ray", ray_address=cluster.address, **common)
            rows["ray"] = (time.monotonic() - started, overhead(remote), remote.report["resolved_instances"])
        finally:
            ray.shutdown()
            cluster.shutdown()
            if second is not None:
                second_engine.stop(second)
    count = len(rows["docker"][1])
    print(f"\n{count} instances, max_workers {args.max_workers}, ray nodes {args.nodes}")
    print(f"{'backend':<8} {'wall s':>8} {'resolved':>9} {'overhead median':>16} {'p90':>7}")
    for name, (wall, values, resolved) in rows.items():
        median, p90 = quantiles(values)
        print(f"{name:<8} {wall:>8.1f} {resolved:>9} {median:>15.2f}s {p90:>6.2f}s")
    extra = quantiles(rows["ray"][1])[0] - quantiles(rows["docker"][1])[0]
    print(f"ray extra per instance (median): {extra:+.2f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
