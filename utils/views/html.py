"""report.py --html: one self-contained static page per run (or per comparison of two runs).

    write_page(Path("runs/report.html"), run_page(load_output_dir("runs"), prices=None))
    write_page(Path("cmp.html"), compare_page(compare_runs("runs/a_0", "runs/b_0"), prices=None))

The page needs no network: CSS and JS are inline, the data is embedded as JSON. It renders the
same loaded run as report.json (utils/records/loaded_run.py: loaded and scored once), and the
same comparison as the compare table (utils/views/compare.py).

Security contract: patches, transcripts, test names and test output are written by the agent
under test. They only ever reach the page as JSON inside `<script type="application/json">`
blocks, with `<`, `>` and `&` escaped as \\u003c, \\u003e, \\u0026 (so `</script>` in a transcript
cannot end the block), and the page's script renders every string with `textContent`, never as
HTML. tests/test_html_report.py plays the attacker in a real browser.

Speed: the first render builds the summary and one table row per instance only. Each instance's
heavy detail (patch, transcript, test output) sits in its own JSON block and is parsed and built
when the row is opened. A text longer than MAX_TEXT_CHARS is cut, and the page says where the
full file is.

Two tries (--tries 2): the summary adds Aider's pass_rate_1 and pass_rate_2 (overall and per
language) and the table a tries column, when a counted run allowed two tries (run_settings.json)
or an instance had them; a one-try run's page is unchanged. An instance with two tries opens to
its tries in order: each earlier try's verdict, tests, patch, usage, seconds, transcript and test
output (its .try1 files), the feedback the next try was given, then the final try (the top-level
result) as for a one-try instance.

State lives in the URL hash, so a view can be linked and opened headless:
    #bucket=unresolved&lang=go&reason=tests_failed&sort=time&open=go__bob,go__leap
With two tries also #try=1|2 (resolved at that try) or #try=retried (had a second try).
(compare pages: #flip=regressed|newly_resolved|changed|excluded&lang=..&sort=time&open=..).
After each render the page sets `data-rendered-ms` on <html> (performance.now(), i.e. since
navigation start): bench/html_load.py reads it.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from . import RunView, shown_k
from .compare import RunComparison
from ..outcomes import BUCKETS, Bucket
from .pricing import PriceTable, instance_cost, run_cost
from ..records.loaded_run import LoadedRun
from ..records.results import InstanceResult, TryRecord
from ..records.run_dir import REPORT_HTML_FILE, InstanceFiles, is_plain_file_name

MAX_TEXT_CHARS = 200_000  # per transcript / test output / patch: a runaway agent must not make a 1 GB page
ASSETS_DIR = Path(__file__).resolve().parent / "assets"  # page.html, page.css, page.js
NOT_PASSED_LIST_CAP = 50  # InstanceResult.failed_tests holds at most the first 50 names


class HtmlReportError(ValueError):
    """The page cannot be written where asked; one line."""


# --- pure data shaping -------------------------------------------------------------------------

def diff_line_class(line: str) -> str:
    """The highlighting class of one unified-diff line: file header, hunk header, added,
    removed, or context (which also covers the "\\ No newline" marker)."""
    if line.startswith(("diff --git ", "index ", "--- ", "+++ ", "new file mode", "deleted file mode",
                        "old mode", "new mode", "similarity index", "rename from", "rename to", "Binary files")):
        return "meta"
    if line.startswith("@@"):
        return "hunk"
    if line.startswith("+"):
        return "add"
    if line.startswith("-"):
        return "del"
    return "ctx"


@dataclass(frozen=True)
class PatchFile:
    path: str
    status: str                            # "kept" (graded) | "dropped: <why>" | "not graded" | "unparsed"
    lines: tuple[tuple[str, str], ...]     # (diff_line_class, line)

    def to_json(self) -> dict[str, Any]:
        return {"path": self.path, "status": self.status, "lines": [list(line) for line in self.lines]}


def _clean_path(path: str) -> str:
    path = path.rstrip("\r")
    return path[2:] if path.startswith(("a/", "b/")) else path


def _highlighted(text: str) -> tuple[tuple[str, str], ...]:
    return tuple((diff_line_class(line), line) for line in text.splitlines())


def patch_files(result: InstanceResult) -> list[PatchFile]:
    """The final patch split per file (split_patch)."""
    return split_patch(result.model_patch, result.kept_paths, {record.path: record.why for record in result.tamper})


def split_patch(model_patch: str, kept_paths: list[str], tamper: Mapping[str, str]) -> list[PatchFile]:
    """A patch split per file, each marked kept (what grading applied) or dropped (tamper: path ->
    why; artifacts and the rest: not graded). A patch unidiff cannot parse is one 'unparsed'
    block, still shown."""
    text = clipped(model_patch)
    if not text.strip():
        return []
    try:
        parsed = PatchSet(text)
    except UnidiffParseError:
        return [PatchFile("(whole patch)", "unparsed", _highlighted(text))]
    if not len(parsed):
        return [PatchFile("(whole patch)", "unparsed", _highlighted(text))]
    return [PatchFile(path, _file_status(path, kept_paths, tamper), _highlighted(str(patched)))
            for patched in parsed
            for path in [_clean_path(patched.source_file if patched.is_removed_file else patched.target_file)]]


def _file_status(path: str, kept_paths: list[str], tamper: Mapping[str, str]) -> str:
    if path in kept_paths:
        return "kept"
    return f"dropped: {tamper[path]}" if path in tamper else "not graded"


def ordered_test_rows(result: InstanceResult) -> list[tuple[str, str]]:
    """(status, test name), not-passing tests first. A reported test is "passed" only when the
    not-passing list is complete; when it was capped at 50, the others are "not listed"."""
    not_passing = list(dict.fromkeys(result.failed_tests))
    counts = result.tests if isinstance(result.tests, dict) else {}
    not_passing_count = sum(int(counts.get(key, 0) or 0) for key in ("failed", "errored", "skipped"))
    complete = len(not_passing) >= not_passing_count or len(not_passing) < NOT_PASSED_LIST_CAP
    listed = set(not_passing)
    others = [name for name in dict.fromkeys(result.test_names) if name not in listed]
    return [("not passed", name) for name in not_passing] + [("passed" if complete else "not listed", name)
                                                             for name in others]


def clipped(text: str, limit: int = MAX_TEXT_CHARS, where: str = "") -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... cut: {len(text) - limit} more characters{f'; full text in {where}' if where else ''}]"


def _read_text(path: Path) -> str | None:
    try:
        return clipped(path.read_text(encoding="utf-8", errors="replace"), where=str(path))
    except OSError:
        return None


def instance_row(result: InstanceResult, prices: PriceTable | None) -> dict[str, Any]:
    """What the table row and the filters need: small, for every instance."""
    tests = result.tests if isinstance(result.tests, dict) else {}
    cost = instance_cost(result, prices) if prices is not None else None
    return {"id": result.instance_id, "language": result.language or "?", "bucket": str(result.eval_result),
            "reason": str(result.reason), "passed": tests.get("passed"), "total": tests.get("total"),
            "seconds": result.seconds.total, "usd": None if cost is None or cost.usd is None else round(cost.usd, 6),
            "flagged": bool(result.tamper or result.suspicious),
            "tries": max(1, len(result.tries)), "resolved_at_try": result.resolved_within,
            "successes": [result.attempt_count.successes, result.attempt_count.attempts]}


def instance_detail(result: InstanceResult, files: InstanceFiles | None, prices: PriceTable | None) -> dict[str, Any]:
    """Everything shown when the instance is opened; the agent-written parts as plain strings."""
    cost = instance_cost(result, prices).to_json() if prices is not None else None
    return {
        "id": result.instance_id, "run_dir": str(files.run_dir) if files else "", "bucket": str(result.eval_result),
        "reason": str(result.reason), "detail": result.detail, "error": clipped(result.error),
        "facts": {"agent": result.agent, "agent_exit_code": result.agent_exit_code,
                  "agent_timed_out": result.agent_timed_out, "agent_stopped": result.agent_stopped,
                  "patch_source": result.patch_source, "patch_apply_method": result.patch_apply_method,
                  "grading_mode": result.grading_mode, "stub_passes": result.stub_passes,
                  "test_exit_code": result.test_exit_code, "test_timed_out": result.test_timed_out,
                  "attempts": result.attempts},
        "tests": result.tests, "test_rows": [list(row) for row in ordered_test_rows(result)], "canaries": result.canaries,
        "patch": [patch_file.to_json() for patch_file in patch_files(result)],
        "tamper": [{"path": r.path, "why": r.why} for r in result.tamper],
        "suspicious": [{"path": s.path, "kind": s.kind, "line": s.line} for s in result.suspicious],
        "usage": result.agent_usage if isinstance(result.agent_usage, dict) else {}, "cost": cost,
        "seconds": result.seconds.to_dict(),
        "transcript": _read_text(files.transcript) if files else None,
        "test_output": _read_text(files.eval_output) if files else None,
        "resolved_at_try": result.resolved_within, "tries": try_details(result, files),
        "attempts": attempt_details(result),
    }


def attempt_details(result: InstanceResult) -> list[dict[str, Any]]:
    """Each attempt of an instance run more than once (--attempts): its verdict, tests, usage,
    seconds and patch (attempt 1's is the detail's own); none for a single attempt."""
    return [{"number": record.attempt, "bucket": str(record.eval_result), "reason": str(record.reason),
             "detail": record.detail, "tests": record.tests if isinstance(record.tests, dict) else {},
             "tries": record.tries, "usage": record.agent_usage if isinstance(record.agent_usage, dict) else {},
             "seconds": record.seconds if isinstance(record.seconds, dict) else {},
             "patch": [] if record.attempt == 1 else [f.to_json() for f in split_patch(record.model_patch, [], {})]}
            for record in result.attempt_results]


def try_details(result: InstanceResult, files: InstanceFiles | None) -> list[dict[str, Any]]:
    """Each try of an instance that had more than one (none otherwise: its only try is the final
    verdict). The last try's patch, transcript and test output are the final ones, shown once
    (`final`); every try carries its verdict, tests, usage, seconds, file names and the feedback
    it was given."""
    if len(result.tries) < 2:
        return []
    last = result.tries[-1].try_number
    return [_try_detail(record, record.try_number == last, files) for record in result.tries]


def _try_detail(record: TryRecord, final: bool, files: InstanceFiles | None) -> dict[str, Any]:
    tamper = {str(entry.get("path", "")): str(entry.get("why", "")) for entry in record.tamper if isinstance(entry, dict)}
    names = {"transcript": _plain_name(record.transcript), "test_output": _plain_name(record.eval_output),
             "feedback": _plain_name(record.feedback_file)}
    texts = {key: _read_named(files, name) for key, name in names.items() if not final or key == "feedback"}
    return {"number": record.try_number, "final": final, "bucket": str(record.eval_result), "reason": str(record.reason),
            "detail": record.detail, "resolved": record.eval_result == Bucket.RESOLVED,
            "tests": record.tests if isinstance(record.tests, dict) else {},
            "failed_tests": list(dict.fromkeys(record.failed_tests)), "canaries": record.canaries,
            "usage": record.agent_usage if isinstance(record.agent_usage, dict) else {},
            "seconds": record.seconds if isinstance(record.seconds, dict) else {},
            "facts": {"agent_exit_code": record.agent_exit_code, "agent_timed_out": record.agent_timed_out,
                      "patch_source": record.patch_source},
            "patch": [] if final else [f.to_json() for f in split_patch(record.model_patch, record.kept_paths, tamper)],
            "files": names, "transcript": texts.get("transcript"), "test_output": texts.get("test_output"),
            "feedback": texts["feedback"]}


def _plain_name(name: str) -> str:
    """A try's file name as the result file records it, only when it names a file in the run
    directory itself (a result file must not point the page elsewhere)."""
    return name if is_plain_file_name(name) else ""


def _read_named(files: InstanceFiles | None, name: str) -> str | None:
    path = files.named(name) if files is not None else None
    return _read_text(path) if path is not None else None


def run_tries(loaded: LoadedRun) -> int:
    """The most tries any counted run allowed (run_settings.json `tries`) or any instance had:
    2 when pass_rate_1 and pass_rate_2 differ in meaning."""
    return max([loaded.allowed_tries, *(len(result.tries) for result in loaded.results.values())])


def embed_json(data: Any) -> str:
    """JSON safe inside a <script> block: no `<`, `>`, `&` or JS line separators survive literally
    (`</script>` and `<!--` cannot occur), and JSON.parse gives back the same value."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                         ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return text


# --- the two pages -----------------------------------------------------------------------------

def run_page(loaded: LoadedRun, prices: PriceTable | None) -> str:
    """The page of a loaded output directory (the instances report.json counts)."""
    results = loaded.results
    summary = loaded.report.score_json() | {"cost": _run_cost_summary(results.values(), prices)}
    page = {"kind": "run", "title": f"Run report: {loaded.source}", "buckets": list(BUCKETS),
            "run_dirs": sorted({str(run_dir.path) for run_dir in loaded.run_dirs.values()}), "summary": summary,
            "tries": run_tries(loaded), "attempts": loaded.report.attempts_per_instance,
            "shown_k": shown_k(loaded.report.attempts_per_instance),
            "rows": [instance_row(result, prices) for result in results.values()]}
    details = [instance_detail(result, loaded.files(result.instance_id), prices) for result in results.values()]
    return render_page(page, details)


VIEW = RunView("html", REPORT_HTML_FILE, run_page)


def _run_cost_summary(results: Iterable[InstanceResult], prices: PriceTable | None) -> dict[str, Any] | None:
    """report.json's `cost` without per_instance: each row carries its own instance's cost."""
    if prices is None:
        return None
    cost = run_cost(results, prices).to_json()
    del cost["per_instance"]
    return cost


def compare_page(comparison: RunComparison, prices: PriceTable | None) -> str:
    """Two runs side by side (utils/views/compare.py's numbers); each common instance opens to A's and B's detail."""
    loaded_a, loaded_b = comparison.a.loaded, comparison.b.loaded
    flips = {i: "newly_resolved" for i in comparison.newly_resolved} | {i: "regressed" for i in comparison.regressed}
    flips |= {excluded.instance_id: "excluded" for excluded in comparison.excluded}
    rows, details = [], []
    for instance_id in comparison.common_ids:
        result_a, result_b = loaded_a.results[instance_id], loaded_b.results[instance_id]
        row_a, row_b = instance_row(result_a, prices), instance_row(result_b, prices)
        rows.append({"id": instance_id, "language": row_a["language"], "flip": flips.get(instance_id, ""),
                     "changed": row_a["bucket"] != row_b["bucket"], "a": row_a, "b": row_b})
        details.append({"a": instance_detail(result_a, loaded_a.files(instance_id), prices),
                        "b": instance_detail(result_b, loaded_b.files(instance_id), prices)})
    page = {"kind": "compare", "title": f"Compare: {comparison.a.run_dir} vs {comparison.b.run_dir}",
            "buckets": list(BUCKETS), "comparison": comparison.to_json(), "rows": rows}
    return render_page(page, details)


def render_page(page: Mapping[str, Any], details: list[Mapping[str, Any]]) -> str:
    """The HTML document: the page data, one JSON block per instance detail, CSS and script inline
    (from assets/)."""
    detail_blocks = "\n".join(f'<script type="application/json" id="detail-{index}">{embed_json(detail)}</script>'
                              for index, detail in enumerate(details))
    return (asset("page.html").replace("%TITLE%", html.escape(str(page.get("title", "report"))))
            .replace("%PAGE%", embed_json(page)).replace("%DETAILS%", detail_blocks)
            .replace("%CSS%", asset("page.css")).replace("%SCRIPT%", asset("page.js")))


def asset(name: str) -> str:
    """One of the page's files beside this module (assets/: the document, its style, its script),
    read as it is each time a page is rendered."""
    with open(ASSETS_DIR / name, encoding="utf-8", newline="") as file:
        return file.read()


def check_output_path(path: Path) -> None:
    """Refuse what is not a new or existing .html file in an existing directory (a typo must not
    overwrite a result file or a transcript)."""
    if path.is_dir():
        raise HtmlReportError(f"--html {path} is a directory; give a file name ending in .html")
    if path.suffix.lower() not in (".html", ".htm"):
        raise HtmlReportError(f"--html {path} must end in .html (refusing to overwrite other files)")
    if not path.parent.is_dir():
        raise HtmlReportError(f"--html {path}: directory {path.parent} does not exist")


def write_page(path: Path, page_html: str) -> None:
    check_output_path(path)
    try:
        path.write_text(page_html, encoding="utf-8")
    except OSError as error:
        raise HtmlReportError(f"cannot write {path}: {error.strerror or error}") from None

