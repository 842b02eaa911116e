"""Score a harness output directory: accuracy, buckets, per-language table, reasons.

    python report.py --output_dir runs/ [--expected_num_tasks 225]

Reads every instance result JSON under the output directory (each `<name>_0/` run dir),
writes `<output_dir>/report.json` and prints a short table. An instance found in several
result files counts once (the most recently written file wins), and the report says so.
accuracy_score = resolved / expected_num_tasks when given, else / submitted instances
(comparable with upstream: build-only and stub-passing instances count like any other).
`graded_by` says which instances were graded by their tests and which by the build alone
(test-writing exercises); `stub_passes_ids` lists instances the untouched stub already
resolves (refactoring exercises and build-only ones), and
`accuracy_score_excluding_stub_passes` scores only the instances a no-op cannot resolve.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from utils.outcomes import BUCKETS
from utils.results import LoadedResults, build_run_report, load_results, write_json


class ReportError(RuntimeError):
    pass


def collect_results(output_dir: Path) -> LoadedResults:
    """Every run directory's results under `output_dir`, the latest file per instance."""
    if not output_dir.is_dir():
        raise ReportError(f"output directory {output_dir} does not exist")
    return load_results(sorted(output_dir.glob("*/*.json")))


def report(output_dir: str | Path, expected_num_tasks: int | None = None) -> dict[str, Any]:
    """Write `<output_dir>/report.json` (utils.results.RunReport.score_json) and return it."""
    output_dir = Path(output_dir)
    loaded = collect_results(output_dir)
    if expected_num_tasks is not None and expected_num_tasks <= 0:
        raise ReportError("--expected_num_tasks must be positive")
    run_report = build_run_report("", list(loaded.results), loaded.results, expected_num_tasks,
                                  loaded.in_several_files)
    data = run_report.score_json()
    write_json(output_dir / "report.json", data)
    return data


def format_table(data: dict[str, Any]) -> str:
    columns = ("total",) + BUCKETS
    lines = [f"{'language':<12}" + "".join(f"{column:>12}" for column in columns)]
    for language, row in data["per_language"].items():
        lines.append(f"{language:<12}" + "".join(f"{row.get(column, 0):>12}" for column in columns))
    lines.append(f"accuracy_score {data['accuracy_score']:.4f} "
                 f"({data['total_resolved_instances']}/{data['total_instances']})")
    if data["stub_passes_ids"]:
        lines.append(f"note: {len(data['stub_passes_ids'])} instance(s) resolve with the untouched stub "
                     f"({data['resolved_stub_passes']} of them resolved here); without them: "
                     f"{data['accuracy_score_excluding_stub_passes']:.4f}")
    if data["resolved_with_suspicious_lines"]:
        lines.append(f"audit: {len(data['resolved_with_suspicious_lines'])} resolved instance(s) have kept lines that "
                     f"look like verdict forging (see `suspicious` in their result): "
                     f"{', '.join(data['resolved_with_suspicious_lines'][:10])}")
    if data["instances_in_several_result_files"]:
        lines.append(f"note: {len(data['instances_in_several_result_files'])} instance(s) found in several result "
                     f"files were counted once (latest file): {', '.join(data['instances_in_several_result_files'][:10])}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--output_dir", required=True)
    parser.add_argument("--expected_num_tasks", type=int, default=None)
    args = parser.parse_args(argv)
    try:
        data = report(args.output_dir, args.expected_num_tasks)
    except ReportError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(format_table(data))
    print(f"report: {Path(args.output_dir) / 'report.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
