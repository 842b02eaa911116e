"""How fast the HTML report opens for a full run: 225 instances with realistic transcripts.

    python bench/html_load.py --source_run runs/oracle_0 [--transcript_kb 40] [--repeats 5]
                              [--unresolved_share 0.45] [--screenshot bench/results/html_report.png]
                              [--two_tries]

A copy of a real run directory (the oracle on the whole benchmark: its real patches, test
names, test output and timings) gets what an LLM agent run would add: a transcript of
`--transcript_kb` KB per instance, token usage, and a seeded `--unresolved_share` of instances
marked unresolved with half their tests failing (so the test lists and filters have work to
do). With --two_tries the run becomes a --tries 2 run: every unresolved instance and a seeded
third of the others get a failed try 1 (its own transcript, test output and a feedback file of
utils/feedback.py's maximum size), combined by utils/results.combine_tries. The source run is
only read. Then, in headless Chromium (tests/headless_chromium.py):

- page bytes, and the seconds Python takes to build the page (utils/html_report.run_page);
- `rendered ms`: the page's own `data-rendered-ms`, performance.now() at the end of its first
  render, i.e. from navigation start through parsing the file and building the summary and
  225 rows; median of --repeats runs (each a fresh browser);
- the same with the largest instance opened (#open=ID: its detail parsed and built);
- `browser wall s`: the whole chromium process (start-up dominates), for scale.

No assertion: it prints the numbers, and writes them as JSON next to the screenshot.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import _standalone  # noqa: F401,E402 - the checkout as the package polyglot_harness
from polyglot_harness.tests.headless_chromium import chromium_path, dump_dom, screenshot  # noqa: E402
from polyglot_harness.utils.views.html import run_page, write_page  # noqa: E402
from polyglot_harness.utils.outcomes import Bucket, Reason  # noqa: E402
from polyglot_harness.utils.judging.feedback import FEEDBACK_MAX_CHARS  # noqa: E402
from polyglot_harness.utils.records.loaded_run import load_output_dir  # noqa: E402
from polyglot_harness.utils.records.results import InstanceResult, combine_tries, load_instance_results  # noqa: E402
from polyglot_harness.utils.records.run_dir import try_files  # noqa: E402

RENDERED_MS = re.compile(r'data-rendered-ms="([0-9.]+)"')


def agent_like_transcript(result: InstanceResult, size_bytes: int, rng: random.Random) -> str:
    """Markdown shaped like an aider chat: user turns, assistant turns with the patch's code."""
    turns: list[str] = []
    patch = result.model_patch or "(no changes)"
    while sum(len(turn) for turn in turns) < size_bytes:
        turns.append(f"#### user\nThe tests for {result.instance_id} fail; fix {', '.join(result.kept_paths) or 'it'}.\n")
        turns.append(f"#### assistant (call {len(turns) // 2 + 1}, {rng.randint(800, 4000)} tokens)\n"
                     f"I will change the solution.\n\n```diff\n{patch}\n```\n")
    return "".join(turns)[:size_bytes]


def failed_first_try(result: InstanceResult) -> InstanceResult:
    """Try 1 of `result`: the same work, half its tests failing."""
    first = InstanceResult.from_dict(result.to_dict())
    failing = max(1, len(first.test_names) // 2)
    first.eval_result, first.success, first.reason = Bucket.UNRESOLVED, False, Reason.TESTS_FAILED
    first.failed_tests = first.test_names[:failing][:50]
    first.tests = first.tests | {"passed": len(first.test_names) - failing, "failed": failing}
    return first


def add_first_try(result: InstanceResult, target_run: Path, transcript_bytes: int, rng: random.Random) -> InstanceResult:
    """`result` as try 2 after a failed try 1, with try 1's files and the feedback written."""
    first = failed_first_try(result)
    instance_id = result.instance_id
    names = try_files(instance_id, 1, last=False)
    (target_run / names.transcript).write_text(agent_like_transcript(first, transcript_bytes, rng), encoding="utf-8")
    eval_output = target_run / f"{instance_id}_eval.md"
    if eval_output.is_file():
        shutil.copyfile(eval_output, target_run / names.eval_output)
        feedback = eval_output.read_text(encoding="utf-8", errors="replace")
    else:
        feedback = ""
    feedback = (feedback * (1 + FEEDBACK_MAX_CHARS // max(1, len(feedback))))[:FEEDBACK_MAX_CHARS]
    (target_run / try_files(instance_id, 2, last=True).feedback).write_text(feedback, encoding="utf-8")
    combined = combine_tries([first, result])
    combined.seconds.total = round(2 * (result.seconds.total or 0), 3)  # run_instance sets the end-to-end total
    return combined


def build_run(source_run: Path, target_run: Path, transcript_bytes: int, unresolved_share: float,
              two_tries: bool = False) -> int:
    """The source run's results, usage, transcripts and some failures, written into target_run."""
    rng = random.Random(225)
    target_run.mkdir(parents=True)
    results = load_instance_results(source_run)
    for instance_id, result in results.items():
        for suffix in ("_eval.md", "_docker.log"):
            if (source_run / f"{instance_id}{suffix}").is_file():
                shutil.copyfile(source_run / f"{instance_id}{suffix}", target_run / f"{instance_id}{suffix}")
        prompt, completion = rng.randint(20_000, 120_000), rng.randint(2_000, 12_000)
        result.agent_usage = {"model": "model-a", "prompt_tokens": prompt, "completion_tokens": completion,
                              "total_tokens": prompt + completion, "calls": rng.randint(2, 8)}
        if rng.random() < unresolved_share and result.test_names:
            result.eval_result, result.success, result.reason = Bucket.UNRESOLVED, False, Reason.TESTS_FAILED
            result.failed_tests = result.test_names[: max(1, len(result.test_names) // 2)][:50]
            failing = max(1, len(result.test_names) // 2)
            result.tests = result.tests | {"passed": len(result.test_names) - failing, "failed": failing}
        if two_tries and result.test_names and (result.eval_result == Bucket.UNRESOLVED or rng.random() < 1 / 3):
            result = add_first_try(result, target_run, transcript_bytes, rng)
        (target_run / f"{instance_id}.json").write_text(result.to_json(), encoding="utf-8")
        (target_run / f"{instance_id}.md").write_text(agent_like_transcript(result, transcript_bytes, rng),
                                                      encoding="utf-8")
    return len(results)


def slowest_unresolved(output_dir: Path) -> str:
    """The first row of the screenshot's view (unresolved, slowest first): opened, it shows a detail."""
    unresolved = [r for r in load_instance_results(output_dir / "bench_0").values() if r.eval_result == Bucket.UNRESOLVED]
    return max(unresolved, key=lambda r: r.seconds.total or 0).instance_id


def rendered_ms(page: Path, fragment: str) -> tuple[float, float]:
    started = time.perf_counter()
    dom = dump_dom(page, fragment)
    wall = time.perf_counter() - started
    match = RENDERED_MS.search(dom)
    if match is None:
        raise SystemExit(f"error: the page did not finish rendering ({page}#{fragment})")
    return float(match.group(1)), wall


def measure(page: Path, fragment: str, repeats: int) -> dict[str, float]:
    samples = [rendered_ms(page, fragment) for _ in range(repeats)]
    return {"rendered_ms_median": statistics.median(ms for ms, _ in samples),
            "rendered_ms_max": max(ms for ms, _ in samples),
            "browser_wall_s_median": round(statistics.median(wall for _, wall in samples), 2)}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--source_run", required=True, type=Path, help="a real run directory (read only)")
    parser.add_argument("--transcript_kb", type=int, default=40)
    parser.add_argument("--unresolved_share", type=float, default=0.45)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--screenshot", type=Path, default=Path("bench/results/html_report.png"))
    parser.add_argument("--two_tries", action="store_true", help="a --tries 2 run: failed first tries added")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if chromium_path() is None:
        print("error: chromium is not installed (tests/ensure_chromium.sh)", file=sys.stderr)
        return 2
    if not args.source_run.is_dir() or not load_instance_results(args.source_run):
        print(f"error: {args.source_run} is not a run directory with results", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="html-load-") as scratch:
        output_dir = Path(scratch) / "runs"
        count = build_run(args.source_run, output_dir / "bench_0", args.transcript_kb * 1024, args.unresolved_share,
                          args.two_tries)
        started = time.perf_counter()
        page_html = run_page(load_output_dir(output_dir), prices=None)
        build_s = time.perf_counter() - started
        page = Path(scratch) / "report.html"
        write_page(page, page_html)
        largest = max(load_instance_results(output_dir / "bench_0").values(),
                      key=lambda r: (len(r.tries), len(r.model_patch)))
        figures = {"instances": count, "transcript_kb": args.transcript_kb, "two_tries": args.two_tries,
                   "page_bytes": page.stat().st_size,
                   "python_build_s": round(build_s, 2), "first_render": measure(page, "", args.repeats),
                   "largest_opened": measure(page, f"open={largest.instance_id}", args.repeats),
                   "largest_instance": largest.instance_id}
        args.screenshot.parent.mkdir(parents=True, exist_ok=True)
        screenshot(page, args.screenshot, "bucket=unresolved&sort=time&open=" + slowest_unresolved(output_dir), 1280, 2400)
    args.screenshot.with_suffix(".json").write_text(json.dumps(figures, indent=2) + "\n")
    print(f"{count} instances, transcripts {args.transcript_kb} KB: page {figures['page_bytes']:,} bytes, "
          f"built in {build_s:.2f} s")
    for label in ("first_render", "largest_opened"):
        row = figures[label]
        print(f"{label:<16} rendered ms median {row['rendered_ms_median']:.1f} (max {row['rendered_ms_max']:.1f}), "
              f"browser wall s median {row['browser_wall_s_median']}")
    print(f"screenshot: {args.screenshot} (figures: {args.screenshot.with_suffix('.json')})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
