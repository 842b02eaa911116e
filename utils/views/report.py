"""Score a harness output directory: accuracy, buckets, per-language table, reasons, cost;
or compare two runs.

    python report.py --output_dir runs/ [--expected_num_tasks 225] [--prices prices.json]
    python report.py --output_dir runs/ --model_name_or_path gen_3    (only the runs named like gen_3)
    python report.py --compare runs/gen_1_0 runs/gen_2_0 [--prices prices.json] [--json FILE|-]
    python report.py --output_dir runs/ --html [FILE]    (or --compare A B --html FILE)
    python report.py --output_dir runs/ --view NAME      (a view of utils/views/, e.g. json, html)

Reads every instance result JSON under the output directory (each `<name>_0/` run dir; with
`--model_name_or_path NAME`, those whose name holds NAME), writes `<output_dir>/report.json`
and prints a short table; a folder with no results is one error line and exit 2. An instance found in several
result files counts once (the most recently written file wins), and the report says so.
accuracy_score = resolved / expected_num_tasks when given, else / submitted instances
(comparable with upstream: build-only and stub-passing instances count like any other);
with --attempts K > 1 each instance counts its successes / K (the mean over attempts), and
report.json adds per-instance successes, pass@k, pass^k and the 95 % interval
(utils/records/results.py RunReport.attempts_json), printed under the table.
`graded_by` says which instances were graded by their tests and which by the build alone
(test-writing exercises); `stub_passes_ids` lists instances the untouched stub already
resolves (refactoring exercises and build-only ones), and
`accuracy_score_excluding_stub_passes` scores only the instances a no-op cannot resolve.
`checks_off` maps each grading check that was not made (its dataset was prepared with --fast:
"expected_tests", "canaries") to the instances graded without it; {} when every check ran. The
table then says so in a warning line.
`cost` (added after every other key) is utils/views/pricing.py RunCost.to_json with a price table
(`--prices`, utils/views/pricing.py), else null: agent_usage then holds the tokens only.

`--view NAME` (repeatable) also writes a registered view (utils/views/__init__.py: one module
per view) to `<output_dir>/<its file name>`. Every output renders the same loaded run
(utils/records/loaded_run.py): each result file is read once and the run scored once.

`--compare RUN_A RUN_B` (utils/views/compare.py, which states how instance sets, datasets and
incomplete instances are treated) prints B against A as a table, or with `--json FILE` writes
the comparison's JSON to FILE too (`--json -`: prints the JSON instead of the table). It writes
nothing else. `--html` also writes one self-contained page (utils/views/html.py) to FILE,
by default `<output_dir>/report.html`. Bad input (a missing run, runs of different datasets, a bad price table): one line
on stderr, exit 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from . import RunView, registered_views, shown_k
from .compare import CompareError, compare_runs, format_comparison, load_run
from .html import HtmlReportError, check_output_path, compare_page, run_page, write_page
from ..outcomes import BUCKETS
from .pricing import PriceTable, PriceTableError, load_price_table, run_cost
from ..records.loaded_run import LoadedRun, LoadError, load_output_dir
from ..records.run_dir import REPORT_JSON_FILE, OutputDirectory, write_atomic, write_json


class ReportError(RuntimeError):
    pass


def load(output_dir: str | Path, expected_num_tasks: int | None = None, run_keyword: str | None = None) -> LoadedRun:
    """Every run directory's results under `output_dir` (with `run_keyword`: the runs whose
    name holds it), the latest file per instance, scored once over expected_num_tasks when
    given; ReportError when it cannot be (no results among them included)."""
    try:
        return load_output_dir(output_dir, expected_num_tasks, run_keyword)
    except LoadError as error:
        raise ReportError(str(error)) from None


def report_json(loaded: LoadedRun, prices: PriceTable | None) -> dict[str, Any]:
    """report.json's object: utils/records/results.py RunReport.score_json, then `cost`."""
    cost = run_cost(loaded.results.values(), prices).to_json() if prices is not None else None
    return loaded.report.score_json() | {"cost": cost}


def render_report_json(loaded: LoadedRun, prices: PriceTable | None) -> str:
    return json.dumps(report_json(loaded, prices), indent=2) + "\n"


VIEW = RunView("json", REPORT_JSON_FILE, render_report_json)


def report(output_dir: str | Path, run_keyword: str | None = None, expected_num_tasks: int | None = None,
           prices: PriceTable | None = None) -> dict[str, Any]:
    """Write `<output_dir>/report.json` (report_json) and return it: HyperAgents' and DGM's
    `report(output_dir, run_keyword, expected_num_tasks)` (run_keyword: score the runs whose
    name holds it, e.g. the model_name_or_path; none: every run below output_dir)."""
    if run_keyword is not None and not isinstance(run_keyword, str):
        raise ReportError(f"run_keyword must be a run's name, got {run_keyword!r} (the denominator is "
                          f"expected_num_tasks=N)")
    return write_report(load(output_dir, expected_num_tasks, run_keyword), prices)


def write_report(loaded: LoadedRun, prices: PriceTable | None) -> dict[str, Any]:
    data = report_json(loaded, prices)
    write_json(OutputDirectory(loaded.source).report_json, data)
    return data


def format_table(data: dict[str, Any]) -> str:
    columns = ("total",) + BUCKETS
    lines = [f"{'language':<12}" + "".join(f"{column:>12}" for column in columns)]
    for language, row in data["per_language"].items():
        lines.append(f"{language:<12}" + "".join(f"{row.get(column, 0):>12}" for column in columns))
    lines.append(f"accuracy_score {data['accuracy_score']:.4f} "
                 f"({data['total_resolved_instances']}/{data['total_instances']})")
    lines.append(_pass_rate_line(data))
    lines.extend(attempt_lines(data))
    if "accuracy_score_on_variants" in data:
        lines.append(variants_line(data))
    if data["stub_passes_ids"]:
        lines.append(f"note: {len(data['stub_passes_ids'])} instance(s) resolve with the untouched stub "
                     f"({data['resolved_stub_passes']} of them resolved here); without them: "
                     f"{data['accuracy_score_excluding_stub_passes']:.4f}")
    if data.get("checks_off"):
        lines.append(checks_off_line(data["checks_off"]))
    if data["resolved_with_suspicious_lines"]:
        lines.append(f"audit: {len(data['resolved_with_suspicious_lines'])} resolved instance(s) have kept lines that "
                     f"look like verdict forging (see `suspicious` in their result): "
                     f"{', '.join(data['resolved_with_suspicious_lines'][:10])}")
    if data["cost"] is not None:
        lines.append(_cost_line(data["cost"]))
    if data["instances_in_several_result_files"]:
        lines.append(f"note: {len(data['instances_in_several_result_files'])} instance(s) found in several result "
                     f"files were counted once (latest file): {', '.join(data['instances_in_several_result_files'][:10])}")
    return "\n".join(lines)


def variants_line(data: dict[str, Any]) -> str:
    gap = data["memorization_gap"]
    low, high = gap["interval_95"]
    return (f"accuracy_score_on_variants {data['accuracy_score_on_variants']:.4f}; memorization gap: "
            f"{gap['instances']} of {gap['resolved']} resolved instance(s) graded with variants fail a variant "
            f"({gap['of_resolved']:.1%}, 95% interval {low:.1%}-{high:.1%})"
            + (f": {', '.join(gap['ids'][:10])}" if gap["ids"] else ""))


def checks_off_line(checks_off: dict[str, list[str]]) -> str:
    counts = ", ".join(f"{check} ({len(ids)} instance(s))" for check, ids in checks_off.items())
    return (f"warning: graded without {counts}: the dataset was prepared with --fast; prepare it again without "
            f"--fast for every check")


def _pass_rate_line(data: dict[str, Any]) -> str:
    """Aider's pass rates (--tries 2), overall and per language as pass_rate_1/pass_rate_2."""
    per_language = ", ".join(f"{language} {rates['pass_rate_1']:.2f}/{rates['pass_rate_2']:.2f}"
                             for language, rates in data["pass_rates_per_language"].items())
    return f"pass_rate_1 {data['pass_rate_1']:.4f}, pass_rate_2 {data['pass_rate_2']:.4f} ({per_language})"


def attempt_lines(data: dict[str, Any]) -> list[str]:
    """--attempts K > 1 (report.json's attempts_json keys): pass@k and pass^k with the 95 %
    interval of the mean, overall and per language, and how many instances succeeded how often."""
    if "attempts_per_instance" not in data:
        return []
    attempts = data["attempts_per_instance"]
    lines = [f"attempts {attempts} per instance: {_estimates_text(data)}"]
    lines += [f"  {language:<11} {_estimates_text(scores)}"
              for language, scores in data["attempt_scores_per_language"].items()]
    histogram: dict[str, int] = {}
    for successes, runs in data["successes_out_of_attempts"].values():
        histogram[f"{successes}/{runs}"] = histogram.get(f"{successes}/{runs}", 0) + 1
    lines.append("instances by successes: " + ", ".join(f"{count} at {key}" for key, count in
                                                         sorted(histogram.items(), key=lambda item: item[0])))
    return lines


def _estimates_text(scores: dict[str, Any]) -> str:
    interval = scores["score_interval_95"]
    text = f"pass@1 {interval['estimate']:.4f} (95% {interval['low']:.4f}-{interval['high']:.4f})"
    shown = shown_k(max(map(int, scores["pass_at_k"])))
    text += "".join(f", pass@{k} {scores['pass_at_k'][k]:.4f}" for k in shown)
    return text + "".join(f", pass^{k} {scores['pass_hat_k'][k]:.4f}" for k in shown)


def _cost_line(cost: dict[str, Any]) -> str:
    per_language = ", ".join(f"{language} {usd:.4f}" for language, usd in cost["per_language_usd"].items())
    line = f"cost_usd {cost['total_usd']:.4f} ({per_language})"
    if cost["unpriced_ids"]:
        line += (f"; {len(cost['unpriced_ids'])} instance(s) unpriced, left out (models not in the price table: "
                 f"{', '.join(cost['unpriced_models']) or '(none named)'})")
    return line


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--output_dir", help="score every run directory under it; writes report.json there")
    mode.add_argument("--compare", nargs=2, metavar=("RUN_A", "RUN_B"), help="compare run directory B with A")
    parser.add_argument("--expected_num_tasks", type=int, default=None, help="with --output_dir: the denominator")
    parser.add_argument("--model_name_or_path", "--run_keyword", dest="run_keyword", default=None, metavar="NAME",
                        help="with --output_dir: score only the runs whose name holds NAME (HyperAgents' report "
                             "command; default: every run below the output directory)")
    parser.add_argument("--prices", metavar="FILE",
                        help='JSON {model: {"input": USD, "output": USD}} per million tokens')
    parser.add_argument("--html", nargs="?", const="", metavar="FILE", dest="html_path",
                        help="also write a self-contained HTML page (utils/views/html.py) to FILE; with "
                             "--output_dir FILE defaults to <output_dir>/report.html, with --compare it is required")
    parser.add_argument("--view", action="append", default=[], metavar="NAME", dest="views",
                        help="with --output_dir: also write this registered view (utils/views/; one of "
                             "%(choices)s) to <output_dir>/<its file name>; repeatable",
                        choices=sorted(registered_views()))
    parser.add_argument("--json", metavar="FILE", dest="json_path",
                        help="with --compare: also write the comparison as JSON to FILE (-: print it instead)")
    return parser.parse_args(argv)


def _check_mode(args: argparse.Namespace) -> None:
    if args.compare and args.expected_num_tasks is not None:
        raise ReportError("--expected_num_tasks applies to --output_dir, not --compare")
    if args.compare and args.run_keyword is not None:
        raise ReportError("--model_name_or_path applies to --output_dir (--compare names its two runs)")
    if args.output_dir and args.json_path is not None:
        raise ReportError("--json applies to --compare (--output_dir writes report.json)")
    if args.compare and args.views:
        raise ReportError("--view applies to --output_dir (a view renders the runs of an output directory)")


def _run_compare(args: argparse.Namespace, prices: PriceTable | None, html_path: Path | None) -> None:
    """Each run loaded once; the table (or JSON) and the page render the same comparison."""
    comparison = compare_runs(load_run(args.compare[0]), load_run(args.compare[1]), prices)
    if args.json_path == "-":
        print(json.dumps(comparison.to_json(), indent=2))
    else:
        if args.json_path is not None:
            try:
                write_json(Path(args.json_path), comparison.to_json())
            except OSError as error:
                raise ReportError(f"cannot write {args.json_path}: {error.strerror or error}") from None
        print(format_comparison(comparison))
        if args.json_path is not None:
            print(f"comparison: {args.json_path}")
    if html_path is not None:
        write_page(html_path, compare_page(comparison, prices))
        print(f"html: {html_path}")


def _run_report(args: argparse.Namespace, prices: PriceTable | None, html_path: Path | None) -> dict[str, Any]:
    """report.json, then the page and the views asked for, all from one loaded run."""
    loaded = load(args.output_dir, args.expected_num_tasks, args.run_keyword)
    data = write_report(loaded, prices)
    if html_path is not None:
        write_page(html_path, run_page(loaded, prices))
        print(f"html: {html_path}")
    views = registered_views()
    for name in args.views:
        path = write_view(views[name], loaded, prices)
        print(f"{name}: {path}")
    return data


def write_view(view: RunView, loaded: LoadedRun, prices: PriceTable | None) -> Path:
    """`view` of `loaded` at <output_dir>/<its file name>."""
    path = OutputDirectory(loaded.source).path / view.file_name
    try:
        write_atomic(path, view.render(loaded, prices))
    except OSError as error:
        raise ReportError(f"cannot write {path}: {error.strerror or error}") from None
    return path


def html_output_path(args: argparse.Namespace) -> Path | None:
    """--html's file (None without --html), checked before anything is written."""
    if args.html_path is None:
        return None
    if args.compare and not args.html_path:
        raise ReportError("--html with --compare needs a FILE (the run directories are inputs, not written)")
    path = Path(args.html_path or OutputDirectory(args.output_dir).report_html)
    check_output_path(path)
    return path


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        _check_mode(args)
        prices = load_price_table(args.prices) if args.prices is not None else None
        html_path = html_output_path(args)
        if args.compare:
            _run_compare(args, prices, html_path)
            return 0
        data = _run_report(args, prices, html_path)
    except (ReportError, CompareError, PriceTableError, HtmlReportError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(format_table(data))
    print(f"report: {OutputDirectory(args.output_dir).report_json}")
    return 0
