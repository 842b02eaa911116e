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
import json
import sys
from pathlib import Path

from utils.verdict import GRADING_BUILD_ONLY
from utils.results import BUCKETS, EMPTY_PATCH, ERROR, INCOMPLETE, RESOLVED, UNRESOLVED, InstanceResult, write_json


class ReportError(RuntimeError):
    pass


def collect_results(output_dir: Path) -> tuple[dict[str, InstanceResult], list[str]]:
    """Latest result per instance, and the ids found in more than one file."""
    if not output_dir.is_dir():
        raise ReportError(f"output directory {output_dir} does not exist")
    latest: dict[str, tuple[float, InstanceResult]] = {}
    seen_more_than_once: set[str] = set()
    for path in sorted(output_dir.glob("*/*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not (isinstance(data, dict) and "instance_id" in data and "eval_result" in data):
            continue
        result = InstanceResult.from_dict(data)
        mtime = path.stat().st_mtime
        if result.instance_id in latest:
            seen_more_than_once.add(result.instance_id)
            if latest[result.instance_id][0] > mtime:
                continue
        latest[result.instance_id] = (mtime, result)
    return {instance_id: entry[1] for instance_id, entry in sorted(latest.items())}, sorted(seen_more_than_once)


def report(output_dir: str | Path, expected_num_tasks: int | None = None) -> dict:
    output_dir = Path(output_dir)
    results, duplicates = collect_results(output_dir)
    if expected_num_tasks is not None and expected_num_tasks <= 0:
        raise ReportError("--expected_num_tasks must be positive")

    def ids(bucket: str) -> list[str]:
        return [instance_id for instance_id, result in results.items() if result.eval_result == bucket]

    resolved = ids(RESOLVED)
    denominator = expected_num_tasks if expected_num_tasks is not None else len(results)
    per_language: dict[str, dict[str, int]] = {}
    reasons: dict[str, int] = {}
    usage = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "calls": 0}
    for result in results.values():
        row = per_language.setdefault(result.language or "?", {bucket: 0 for bucket in BUCKETS} | {"total": 0})
        row[result.eval_result] = row.get(result.eval_result, 0) + 1
        row["total"] += 1
        reasons[result.reason] = reasons.get(result.reason, 0) + 1
        for key in usage:
            value = result.agent_usage.get(key) if isinstance(result.agent_usage, dict) else None
            if isinstance(value, (int, float)):
                usage[key] += int(value)
    data = {
        "accuracy_score": round(len(resolved) / denominator, 6) if denominator else 0.0,
        "total_resolved_instances": len(resolved),
        "total_submitted_instances": len(results),
        "total_instances": expected_num_tasks if expected_num_tasks is not None else len(results),
        "total_resolved_ids": resolved,
        "total_unresolved_ids": ids(UNRESOLVED),
        "total_emptypatch_ids": ids(EMPTY_PATCH),
        "total_incomplete_ids": ids(INCOMPLETE),
        "total_error_ids": ids(ERROR),
        "per_language": dict(sorted(per_language.items())),
        "reasons": dict(sorted(reasons.items(), key=lambda item: (-item[1], item[0]))),
        "agent_usage": usage,
        "instances_in_several_result_files": duplicates,
        # Resolved instances whose kept patch has lines that look like verdict forging.
        "resolved_with_suspicious_lines": [instance_id for instance_id in resolved if results[instance_id].suspicious],
    } | _grading_kinds(results, resolved, denominator)
    write_json(output_dir / "report.json", data)
    return data


def _grading_kinds(results: dict[str, InstanceResult], resolved: list[str], denominator: int) -> dict:
    """Which instances were graded how, and the score without the ones a no-op resolves."""
    build_only = [instance_id for instance_id, result in results.items() if result.grading_mode == GRADING_BUILD_ONLY]
    stub_passes = [instance_id for instance_id, result in results.items() if result.stub_passes]
    rest = denominator - len(stub_passes)
    resolved_rest = len(set(resolved) - set(stub_passes))
    return {
        "graded_by": {"tests": len(results) - len(build_only), "build_only": len(build_only),
                      "build_only_ids": build_only},
        "stub_passes_ids": stub_passes,
        "resolved_stub_passes": len(set(resolved) & set(stub_passes)),
        "accuracy_score_excluding_stub_passes": round(resolved_rest / rest, 6) if rest > 0 else 0.0,
    }


def format_table(data: dict) -> str:
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
