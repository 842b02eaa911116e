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
    """The HTML document: the page data, one JSON block per instance detail, CSS and script inline."""
    detail_blocks = "\n".join(f'<script type="application/json" id="detail-{index}">{embed_json(detail)}</script>'
                              for index, detail in enumerate(details))
    return (_TEMPLATE.replace("%TITLE%", html.escape(str(page.get("title", "report"))))
            .replace("%PAGE%", embed_json(page)).replace("%DETAILS%", detail_blocks)
            .replace("%CSS%", _CSS).replace("%SCRIPT%", _SCRIPT))


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


_TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>%TITLE%</title>
<style>%CSS%</style></head>
<body>
<header><h1 id="title"></h1><div id="meta"></div></header>
<section id="summary"></section>
<section id="languages"></section>
<section id="controls"></section>
<section id="instances"></section>
<script type="application/json" id="page-data">%PAGE%</script>
%DETAILS%
<script>%SCRIPT%</script>
</body></html>
"""

_CSS = """
body{font:14px/1.4 system-ui,-apple-system,"DejaVu Sans",sans-serif;margin:16px;color:#1d2328;background:#fff}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:18px 0 6px}h3{font-size:14px;margin:12px 0 4px}
#meta,.muted{color:#5b6670}
table{border-collapse:collapse}th,td{padding:3px 8px;border-bottom:1px solid #e3e7eb;text-align:left;vertical-align:top}
th{background:#f4f6f8;font-weight:600}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}
.cards{display:flex;flex-wrap:wrap;gap:8px}.card{border:1px solid #d8dee4;border-radius:6px;padding:6px 12px;min-width:110px}
.card b{display:block;font-size:18px}
.b-resolved{color:#116329}.b-unresolved{color:#a40e26}.b-empty_patch{color:#7d4e00}.b-incomplete,.b-error{color:#6639ba}
tr.inst{cursor:pointer}tr.inst:hover{background:#f6f8fa}tr.open{background:#eef4ff}
tr.flip-newly_resolved td{background:#dafbe1}tr.flip-regressed td{background:#ffebe9}tr.flip-excluded td{background:#f6f0ff}
.flag{color:#a40e26;font-weight:600}
#controls{margin:12px 0;display:flex;gap:12px;align-items:center;flex-wrap:wrap}
.detail>td{background:#fbfcfd;padding:8px 12px}.sides{display:grid;grid-template-columns:1fr 1fr;gap:12px}
.sides>div{min-width:0}
pre{background:#f6f8fa;border:1px solid #e3e7eb;padding:6px;overflow:auto;max-height:480px;white-space:pre-wrap;word-break:break-word;margin:4px 0}
pre.diff span{display:block}.d-add{background:#e6ffec}.d-del{background:#ffebe9}.d-hunk{color:#0550ae;background:#ddf4ff}.d-meta{color:#57606a;font-weight:600}
ul.tests{columns:2;margin:4px 0;padding-left:18px}.t-notpassed{color:#a40e26}.t-passed{color:#116329}.t-notlisted{color:#5b6670}
.kv td:first-child{color:#5b6670}
.try{border-left:3px solid #d8dee4;padding-left:10px;margin:8px 0}h3.try-head{border-top:1px solid #d8dee4;padding-top:8px}
td.late{font-weight:600}
"""

_SCRIPT = r"""
'use strict';
const PAGE = JSON.parse(document.getElementById('page-data').textContent);
const detailCache = new Map();
// Every string from the data becomes a text node: nothing the agent wrote is parsed as HTML.
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === 'class') node.className = value; else node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
  return node;
}
function fmt(value, digits) {
  if (value === null || value === undefined) return '–';
  return typeof value === 'number' && digits !== undefined ? value.toFixed(digits) : String(value);
}
function percent(rate) { return typeof rate === 'number' ? (100 * rate).toFixed(1) + '%' : '–'; }
function cls(text) { return String(text).replace(/[^a-z0-9_-]/gi, ''); }
function readHash() {
  const state = {};
  for (const part of location.hash.replace(/^#/, '').split('&')) {
    if (!part) continue;
    const at = part.indexOf('=');
    const key = decodeURIComponent(at < 0 ? part : part.slice(0, at));
    state[key] = at < 0 ? '' : decodeURIComponent(part.slice(at + 1));
  }
  state.open = new Set((state.open || '').split(',').filter(Boolean));
  return state;
}
function writeHash(state) {
  const parts = [];
  for (const [key, value] of Object.entries(state)) {
    const text = value instanceof Set ? [...value].join(',') : value;
    if (text) parts.push(encodeURIComponent(key) + '=' + encodeURIComponent(text).replace(/%2C/g, ','));
  }
  history.replaceState(null, '', '#' + parts.join('&'));
  render();
}
function detail(index) {
  if (!detailCache.has(index)) {
    detailCache.set(index, JSON.parse(document.getElementById('detail-' + index).textContent));
  }
  return detailCache.get(index);
}
function kvTable(entries) {
  return el('table', {class: 'kv'}, entries.map(([key, value]) => el('tr', {}, el('td', {}, key), el('td', {}, fmt(value)))));
}
function table(head, rows, numeric) {
  return el('table', {}, el('tr', {}, head.map((h, i) => el('th', {class: numeric(i) ? 'num' : ''}, h))),
    rows.map(row => el('tr', {}, row.map((cell, i) => el('td', {class: numeric(i) ? 'num' : ''}, cell)))));
}
function card(label, value, className) { return el('div', {class: 'card ' + (className || '')}, el('b', {}, value), label); }

// --- one instance's detail, built when it is opened ---
function countsText(tests) { return Object.entries(tests || {}).map(([k, v]) => k + ' ' + v).join(', ') || 'no test counts'; }
function patchBlocks(files) {
  if (!files.length) return [el('div', {class: 'muted'}, 'no patch')];
  return files.flatMap(file => [
    el('div', {}, el('b', {}, file.path), ' — ', el('span', {class: file.status === 'kept' ? 'b-resolved' : 'flag'}, file.status)),
    el('pre', {class: 'diff'}, file.lines.map(([kind, line]) => el('span', {class: 'd-' + cls(kind)}, line || ' ')))]);
}
function textBlock(title, fileName, text, className, missing) {
  return [el('h3', {}, title, fileName ? el('span', {class: 'muted'}, ' (' + fileName + ')') : null),
    text === null || text === undefined ? el('div', {class: 'muted'}, missing) : el('pre', {class: className}, text || '(empty)')];
}
function usageRows(usage) {
  return Object.entries(usage || {}).map(([k, v]) => ['usage ' + k, typeof v === 'object' ? JSON.stringify(v) : v]);
}
function secondsRows(seconds) { return Object.entries(seconds || {}).map(([k, v]) => ['seconds ' + k, fmt(v, 2)]); }
function triesText(tries, resolvedAt) {
  return tries + (tries === 1 ? ' try' : ' tries') + (resolvedAt ? ' · resolved at try ' + resolvedAt : '');
}
// An earlier try: its own verdict, tests (counts and not-passing names; passing names are kept for the last try only), patch, usage, files.
function renderTry(t) {
  const name = 'Try ' + t.number;
  const box = el('div', {class: 'try', 'data-try': t.number});
  box.append(el('h3', {class: 'try-head'}, name + ': ', el('span', {class: 'b-' + cls(t.bucket)}, t.bucket), ' · ', t.reason));
  if (t.detail) box.append(el('div', {}, t.detail));
  box.append(el('h3', {}, name + ' tests'), el('div', {}, countsText(t.tests)));
  if (t.failed_tests.length) {
    box.append(el('ul', {class: 'tests'}, t.failed_tests.map(test => el('li', {class: 't-notpassed'}, '✘ ', test, ' — not passed'))));
  }
  if (t.canaries.length) box.append(el('div', {class: 'muted'}, 'canaries planted: ' + t.canaries.join(', ')));
  box.append(el('h3', {}, name + ' patch'), ...patchBlocks(t.patch));
  box.append(el('h3', {}, name + ' usage, timings'),
    kvTable([...usageRows(t.usage), ...secondsRows(t.seconds), ...Object.entries(t.facts)]));
  box.append(...textBlock(name + ' agent transcript', t.files.transcript, t.transcript, 'transcript', 'no transcript file'),
    ...textBlock(name + ' test output', t.files.test_output, t.test_output, 'test-output', 'no test output file'));
  return box;
}
function renderTries(d) {
  const out = [el('h3', {}, 'Tries'), table(['try', 'bucket', 'reason', 'tests passed', 'tokens', 'seconds'],
    d.tries.map(t => [t.number + (t.final ? ' (final)' : ''), el('span', {class: 'b-' + cls(t.bucket)}, t.bucket), t.reason,
      t.tests.total === undefined ? '–' : fmt(t.tests.passed) + '/' + t.tests.total, fmt(t.usage.total_tokens), fmt(t.seconds.total, 1)]),
    i => i >= 3)];
  for (const t of d.tries) {
    if (t.files.feedback) {
      out.push(...textBlock('Feedback given to try ' + t.number, t.files.feedback, t.feedback, 'feedback', 'no feedback file'));
    }
    out.push(t.final ? el('h3', {class: 'try-head'}, 'Try ' + t.number + ' (final): ', el('span', {class: 'b-' + cls(t.bucket)}, t.bucket), ' · ', t.reason)
      : renderTry(t));
  }
  return out;
}
function renderDetail(d) {
  const box = el('div', {class: 'inst-detail'});
  const tries = d.tries.length;
  box.append(el('h3', {}, d.id, ' ', el('span', {class: 'b-' + cls(d.bucket)}, d.bucket), ' · ', d.reason,
    tries ? ' · ' + triesText(tries, d.resolved_at_try) : null));
  box.append(...renderAttempts(d));
  if (tries) box.append(...renderTries(d));
  if (d.detail) box.append(el('div', {}, d.detail));
  if (d.error) box.append(el('pre', {class: 'error'}, d.error));
  box.append(el('h3', {}, 'Tests'), el('div', {}, countsText(d.tests)));
  if (d.test_rows.length) {
    box.append(el('ul', {class: 'tests'}, d.test_rows.map(([status, name]) =>
      el('li', {class: 't-' + cls(status.replace(' ', ''))}, status === 'passed' ? '✔ ' : status === 'not passed' ? '✘ ' : '? ', name, ' — ', status))));
  }
  if (d.canaries.length) box.append(el('div', {class: 'muted'}, 'canaries planted: ' + d.canaries.join(', ')));
  box.append(el('h3', {}, 'Patch'), ...patchBlocks(d.patch));
  if (d.tamper.length) {
    box.append(el('h3', {class: 'flag'}, 'Tamper (dropped, graded on pristine copies)'),
      table(['path', 'why'], d.tamper.map(t => [t.path, t.why]), () => false));
  }
  if (d.suspicious.length) {
    box.append(el('h3', {class: 'flag'}, 'Suspicious kept lines'),
      table(['path', 'kind', 'line'], d.suspicious.map(s => [s.path, s.kind, el('code', {}, s.line)]), () => false));
  }
  box.append(el('h3', {}, 'Usage, cost, timings' + (tries ? ' (usage and agent/grading/tests seconds summed over the tries)' : '')));
  const cost = d.cost ? [['cost USD', d.cost.usd === null ? 'unpriced (' + d.cost.model + ')' : d.cost.usd]] : [['cost USD', 'no price table']];
  box.append(kvTable([...usageRows(d.usage), ...cost, ...secondsRows(d.seconds), ...Object.entries(d.facts)]));
  box.append(...textBlock('Agent transcript', null, d.transcript, 'transcript', 'no transcript file'),
    ...textBlock('Test output', null, d.test_output, 'test-output', 'no test output file'));
  return box;
}

// --- the run page ---
function bucketCounts(summary) {
  return {resolved: summary.total_resolved_ids.length, unresolved: summary.total_unresolved_ids.length,
    empty_patch: summary.total_emptypatch_ids.length, incomplete: summary.total_incomplete_ids.length,
    error: summary.total_error_ids.length};
}
function renderRunSummary() {
  const s = PAGE.summary, counts = bucketCounts(s);
  const box = document.getElementById('summary');
  box.replaceChildren(el('h2', {}, 'Summary'), el('div', {class: 'cards'},
    card('accuracy', (100 * s.accuracy_score).toFixed(1) + '%'),
    PAGE.tries > 1 ? [card('pass_rate_1', percent(s.pass_rate_1)), card('pass_rate_2', percent(s.pass_rate_2))] : null,
    PAGE.attempts > 1 ? attemptCards(s) : null,
    s.accuracy_score_on_variants !== undefined ? card('accuracy on variants', (100 * s.accuracy_score_on_variants).toFixed(1) + '%') : null,
    card('resolved', s.total_resolved_instances + ' / ' + s.total_instances),
    PAGE.buckets.filter(b => b !== 'resolved').map(b => card(b, counts[b], 'b-' + b)),
    card('tokens', fmt(s.agent_usage.total_tokens)),
    card('cost USD', s.cost ? s.cost.total_usd.toFixed(4) : 'no prices')));
  const notes = [];
  if (PAGE.tries > 1) {
    const late = PAGE.rows.filter(r => r.resolved_at_try === 2).map(r => r.id);
    notes.push('two tries (Aider\'s protocol): pass_rate_1 counts instances resolved at try 1, pass_rate_2 at try 1 or 2; resolved at try 2: ' + (late.join(', ') || 'none'));
  }
  if (PAGE.attempts > 1) notes.push(PAGE.attempts + ' independent attempts per instance: accuracy is the mean success rate over attempts (pass@1), with its 95% interval (exact, over the effective number of trials); the bucket counts are attempt 1\'s; instances by successes: ' + successHistogram(s));
  if (s.memorization_gap) notes.push('memorization gap (fresh variants: real tests with one input changed): ' + s.memorization_gap.instances + ' of ' + s.memorization_gap.resolved + ' resolved instance(s) graded with variants fail a variant (' + percent(s.memorization_gap.of_resolved) + ', 95% interval ' + percent(s.memorization_gap.interval_95[0]) + '–' + percent(s.memorization_gap.interval_95[1]) + ')' + (s.memorization_gap.ids.length ? ': ' + s.memorization_gap.ids.join(', ') : ''));
  if (s.stub_passes_ids.length) notes.push(s.stub_passes_ids.length + ' instance(s) resolve with the untouched stub; accuracy without them ' + (100 * s.accuracy_score_excluding_stub_passes).toFixed(1) + '%');
  if (s.resolved_with_suspicious_lines.length) notes.push('audit: resolved with suspicious kept lines: ' + s.resolved_with_suspicious_lines.join(', '));
  if (s.instances_in_several_result_files.length) notes.push('counted once (latest file): ' + s.instances_in_several_result_files.join(', '));
  if (s.cost && s.cost.unpriced_ids.length) notes.push('unpriced, left out of the cost: ' + s.cost.unpriced_ids.join(', '));
  notes.push('graded by tests ' + s.graded_by.tests + ', by the build only ' + s.graded_by.build_only);
  notes.push('reasons: ' + Object.entries(s.reasons).map(([r, n]) => r + ' ' + n).join(', '));
  box.append(el('ul', {}, notes.map(n => el('li', {}, n))));
  const langs = Object.entries(s.per_language);
  const costs = s.cost ? s.cost.per_language_usd : null;
  const rates = PAGE.tries > 1 ? s.pass_rates_per_language : null;
  const scores = PAGE.attempts > 1 ? s.attempt_scores_per_language : null;
  document.getElementById('languages').replaceChildren(el('h2', {}, 'Per language'),
    table(['language', 'total', ...PAGE.buckets, 'accuracy', ...(rates ? ['pass_rate_1', 'pass_rate_2'] : []),
           ...(scores ? ['pass@1 (95% interval)', 'pass@' + PAGE.attempts, 'pass^' + PAGE.attempts] : []), ...(costs ? ['cost USD'] : [])],
      langs.map(([lang, row]) => [lang, row.total, ...PAGE.buckets.map(b => row[b] || 0),
        (100 * (row.resolved || 0) / (row.total || 1)).toFixed(1) + '%',
        ...(rates ? [percent((rates[lang] || {}).pass_rate_1), percent((rates[lang] || {}).pass_rate_2)] : []),
        ...(scores ? scoreCells(scores[lang] || {}) : []),
        ...(costs ? [fmt(costs[lang], 4)] : [])]),
      i => i > 0));
}
function intervalText(i) { return i ? percent(i.estimate) + ' (' + percent(i.low) + '–' + percent(i.high) + ')' : '–'; }
function attemptCards(s) {
  const ks = PAGE.shown_k;  // as the console shows them (views.shown_k); report.json keeps every k
  return [card('pass@1 (95% interval)', intervalText(s.score_interval_95)),
    ...ks.map(k => card('pass@' + k, percent(s.pass_at_k[k]))), ...ks.map(k => card('pass^' + k, percent(s.pass_hat_k[k])))];
}
function scoreCells(scores) {
  const k = String(PAGE.attempts);
  return [intervalText(scores.score_interval_95), percent((scores.pass_at_k || {})[k]), percent((scores.pass_hat_k || {})[k])];
}
function successHistogram(s) {
  const counts = {};
  for (const [c, n] of Object.values(s.successes_out_of_attempts)) counts[c + '/' + n] = (counts[c + '/' + n] || 0) + 1;
  return Object.entries(counts).sort().map(([key, n]) => n + ' at ' + key).join(', ');
}
function renderAttempts(d) {
  if (!d.attempts || !d.attempts.length) return [];
  const parts = [el('h3', {}, 'Attempts (' + d.attempts.filter(a => a.bucket === 'resolved').length + ' of ' + d.attempts.length + ' resolved; the sections below are attempt 1\'s)'),
    table(['attempt', 'bucket', 'reason', 'tests', 'tries', 'tokens', 'seconds'], d.attempts.map(a => [a.number,
      el('span', {class: 'b-' + cls(a.bucket)}, a.bucket), a.reason, countsText(a.tests), a.tries,
      fmt((a.usage || {}).total_tokens), fmt((a.seconds || {}).total, 1)]), i => i >= 4)];
  for (const a of d.attempts.filter(a => a.patch.length)) parts.push(el('details', {}, el('summary', {}, 'attempt ' + a.number + ': patch'), ...patchBlocks(a.patch)));
  return parts;
}
function select(name, label, options, state, defaultText) {
  const node = el('select', {name}, el('option', {value: ''}, defaultText || 'all'),
    options.map(([value, text]) => el('option', {value}, text)));
  node.value = state[name] || '';
  node.addEventListener('change', () => { state[name] = node.value; writeHash(state); });
  return el('label', {}, label + ' ', node);
}
function uniqueSorted(values) { return [...new Set(values)].sort(); }
function toggle(state, id) {
  if (state.open.has(id)) state.open.delete(id); else state.open.add(id);
  writeHash(state);
}
function runTable(state) {
  const rows = PAGE.rows.map((row, index) => ({row, index})).filter(({row}) =>
    (!state.bucket || row.bucket === state.bucket) && (!state.lang || row.language === state.lang) &&
    (!state.reason || row.reason === state.reason) && triesFilter(state['try'], row));
  const tries = PAGE.tries > 1, attempts = PAGE.attempts > 1;
  if (state.sort === 'time') rows.sort((x, y) => (y.row.seconds ?? -1) - (x.row.seconds ?? -1));
  const body = el('tbody');
  for (const {row, index} of rows) {
    const open = state.open.has(row.id);
    const tr = el('tr', {class: 'inst' + (open ? ' open' : ''), 'data-id': row.id, 'data-bucket': row.bucket,
        'data-tries': row.tries, 'data-resolved-at-try': row.resolved_at_try ?? ''},
      el('td', {}, row.id, row.flagged ? el('span', {class: 'flag', title: 'tamper or suspicious lines'}, ' ⚑') : null),
      el('td', {}, row.language), el('td', {class: 'b-' + cls(row.bucket)}, row.bucket), el('td', {}, row.reason),
      el('td', {class: 'num'}, row.total === null || row.total === undefined ? '–' : row.passed + '/' + row.total),
      tries ? el('td', {class: row.resolved_at_try === 2 ? 'b-resolved late' : ''}, triesText(row.tries, row.resolved_at_try)) : null,
      attempts ? el('td', {class: 'num successes'}, row.successes[0] + '/' + row.successes[1]) : null,
      el('td', {class: 'num'}, fmt(row.seconds, 1)), el('td', {class: 'num'}, fmt(row.usd, 4)));
    tr.addEventListener('click', () => toggle(state, row.id));
    body.append(tr);
    if (open) body.append(el('tr', {class: 'detail'}, el('td', {colspan: 7 + tries + attempts}, renderDetail(detail(index)))));
  }
  const head = ['instance', 'language', 'bucket', 'reason', 'tests passed', ...(tries ? ['tries'] : []),
    ...(attempts ? ['successes'] : []), 'seconds', 'cost USD'];
  return [el('div', {id: 'count'}, 'showing ' + rows.length + ' of ' + PAGE.rows.length + ' instances'),
    el('table', {id: 'instance-table'}, el('thead', {}, el('tr', {}, head
      .map(h => el('th', {class: ['tests passed', 'seconds', 'cost USD'].includes(h) ? 'num' : ''}, h)))), body)];
}
// #try=1 / 2: resolved at that try; #try=retried: had a second try.
function triesFilter(wanted, row) {
  if (!wanted || PAGE.tries < 2) return true;
  return wanted === 'retried' ? row.tries > 1 : String(row.resolved_at_try) === wanted;
}
function renderRun(state) {
  document.getElementById('controls').replaceChildren(
    select('bucket', 'bucket', PAGE.buckets.map(b => [b, b]), state),
    select('lang', 'language', uniqueSorted(PAGE.rows.map(r => r.language)).map(l => [l, l]), state),
    select('reason', 'reason', uniqueSorted(PAGE.rows.map(r => r.reason)).map(r => [r, r]), state),
    ...(PAGE.tries > 1 ? [select('try', 'tries', [['1', 'resolved at try 1'], ['2', 'resolved at try 2'], ['retried', 'had a second try']], state)] : []),
    select('sort', 'sort', [['time', 'time (slowest first)']], state, 'instance id'));
  document.getElementById('instances').replaceChildren(el('h2', {}, 'Instances'), ...runTable(state));
}

// --- the compare page ---
function renderCompareSummary() {
  const c = PAGE.comparison;
  const box = document.getElementById('summary');
  box.replaceChildren(el('h2', {}, 'Summary'),
    el('div', {}, 'A: ', el('code', {}, c.run_a.run_dir)), el('div', {}, 'B: ', el('code', {}, c.run_b.run_dir)),
    el('div', {class: 'cards'},
      card('accuracy A', (100 * c.run_a.accuracy).toFixed(1) + '% (' + c.run_a.resolved + ')'),
      card('accuracy B', (100 * c.run_b.accuracy).toFixed(1) + '% (' + c.run_b.resolved + ')'),
      card('newly resolved', c.newly_resolved.length, 'b-resolved'), card('regressed', c.regressed.length, 'b-unresolved'),
      card('McNemar p', c.mcnemar.p_value.toPrecision(4)), card('common instances', c.common_instances),
      c.paired ? [card('paired p (success rates)', c.paired.p_value.toPrecision(4)),
        card('mean rate difference', (c.paired.mean_difference >= 0 ? '+' : '') + (100 * c.paired.mean_difference).toFixed(1) + ' pts'),
        card('instances needed', c.paired.instances_needed === null ? '–' : c.paired.instances_needed)] : null),
    el('ul', {}, c.notes.map(n => el('li', {}, n)),
      c.newly_resolved.length ? el('li', {class: 'b-resolved'}, 'newly resolved: ' + c.newly_resolved.join(', ')) : null,
      c.regressed.length ? el('li', {class: 'b-unresolved'}, 'regressed: ' + c.regressed.join(', ')) : null,
      c.excluded.length ? el('li', {}, 'excluded (incomplete/error in either run): ' + c.excluded.map(e => e.instance_id + ' (' + e.bucket_a + ' → ' + e.bucket_b + ')').join(', ')) : null,
      c.only_in_a.length ? el('li', {}, 'only in A: ' + c.only_in_a.join(', ')) : null,
      c.only_in_b.length ? el('li', {}, 'only in B: ' + c.only_in_b.join(', ')) : null));
  const cols = ['instances', 'resolved_a', 'resolved_b', 'delta', 'newly_resolved', 'regressed'];
  const usageRows = Object.entries(c.usage).map(([k, r]) => [k, r.a, r.b, r.delta]);
  if (c.cost) usageRows.push(['cost USD', c.cost.a.toFixed(4), c.cost.b.toFixed(4), c.cost.delta.toFixed(4)]);
  document.getElementById('languages').replaceChildren(el('h2', {}, 'Per language'),
    table(['language', ...cols], Object.entries(c.per_language).map(([lang, row]) => [lang, ...cols.map(k => row[k])]), i => i > 0),
    el('h2', {}, 'Reasons'), table(['reason', 'A', 'B', 'delta'], Object.entries(c.reasons).map(([r, row]) => [r, row.a, row.b, row.delta]), i => i > 0),
    el('h2', {}, 'Usage and cost'), table(['', 'A', 'B', 'delta'], usageRows, i => i > 0));
}
function compareTable(state) {
  const rows = PAGE.rows.map((row, index) => ({row, index})).filter(({row}) =>
    (!state.lang || row.language === state.lang) &&
    (!state.flip || (state.flip === 'changed' ? row.changed : row.flip === state.flip)));
  if (state.sort === 'time') rows.sort((x, y) => Math.max(y.row.a.seconds ?? -1, y.row.b.seconds ?? -1) - Math.max(x.row.a.seconds ?? -1, x.row.b.seconds ?? -1));
  const body = el('tbody');
  for (const {row, index} of rows) {
    const open = state.open.has(row.id);
    const tr = el('tr', {class: 'inst' + (row.flip ? ' flip-' + row.flip : '') + (open ? ' open' : ''), 'data-id': row.id, 'data-flip': row.flip},
      el('td', {}, row.id), el('td', {}, row.language),
      el('td', {class: 'b-' + cls(row.a.bucket)}, row.a.bucket), el('td', {class: 'b-' + cls(row.b.bucket)}, row.b.bucket),
      el('td', {}, row.flip ? row.flip.replace('_', ' ') : ''), el('td', {}, row.a.reason + ' → ' + row.b.reason),
      el('td', {class: 'num'}, fmt(row.a.seconds, 1)), el('td', {class: 'num'}, fmt(row.b.seconds, 1)));
    tr.addEventListener('click', () => toggle(state, row.id));
    body.append(tr);
    if (open) {
      const d = detail(index);
      body.append(el('tr', {class: 'detail'}, el('td', {colspan: 8}, el('div', {class: 'sides'},
        el('div', {}, el('h3', {}, 'A'), renderDetail(d.a)), el('div', {}, el('h3', {}, 'B'), renderDetail(d.b))))));
    }
  }
  return [el('div', {id: 'count'}, 'showing ' + rows.length + ' of ' + PAGE.rows.length + ' instances'),
    el('table', {id: 'instance-table'}, el('thead', {}, el('tr', {}, ['instance', 'language', 'bucket A', 'bucket B', 'flip', 'reason A → B', 'seconds A', 'seconds B']
      .map((h, i) => el('th', {class: i >= 6 ? 'num' : ''}, h)))), body)];
}
function renderCompare(state) {
  document.getElementById('controls').replaceChildren(
    select('flip', 'flip', [['newly_resolved', 'newly resolved'], ['regressed', 'regressed'], ['changed', 'bucket changed'], ['excluded', 'excluded']], state),
    select('lang', 'language', uniqueSorted(PAGE.rows.map(r => r.language)).map(l => [l, l]), state),
    select('sort', 'sort', [['time', 'time (slowest first)']], state, 'instance id'));
  document.getElementById('instances').replaceChildren(el('h2', {}, 'Instances'), ...compareTable(state));
}

function render() {
  const state = readHash();
  if (PAGE.kind === 'compare') renderCompare(state); else renderRun(state);
  document.documentElement.setAttribute('data-rendered-ms', performance.now().toFixed(1));
}
document.title = PAGE.title;
document.getElementById('title').textContent = PAGE.title;
document.getElementById('meta').textContent = PAGE.kind === 'run' ? 'run directories: ' + PAGE.run_dirs.join(', ') : 'B against A';
if (PAGE.kind === 'compare') renderCompareSummary(); else renderRunSummary();
window.addEventListener('hashchange', render);
render();
"""
