"""What a second try is told about the first: the test run's output, trimmed and scrubbed.

Aider's two-try protocol gives the model the test runner's output after a failed first try.
Here that output comes from try 1's grading, which ran with canaries planted (canaries.py)
and with code the agent wrote, so before an agent sees it:

- canaries are scrubbed: lines of the canaries' planted code are left out, each real test's
  hidden name is mapped back to its upstream name, and every line holding one of a canary's
  two numbers is left out (the numbers are fresh in
  every grading anyway, so an old one forges nothing); the random report directory is masked;
- the hidden test files stay hidden beyond what a runner prints on failure: a line of the
  output that reproduces a line of a hidden test file (MIN_VERBATIM_CHARS or longer) is left
  out unless that line lies in a test reported failing (pytest shows a failing test's source,
  jest its code frame). So solution code that prints the test files into the output gets only
  the failing tests' lines through, which the runner would have shown anyway. What a
  solution prints after encoding it (base64, reversed) is not recognised: the size cap is all
  that bounds it, as in Aider (where the tests even sit in the agent's directory);
- the result is capped at FEEDBACK_MAX_CHARS (head and tail kept, the cut marked).

The file starts with a header from the verdict (reason, detail, the failing tests by their
upstream names, which the canaries never pollute); an instance decided without a test run
(empty patch, patch too large or unparseable, patch did not apply) gets the header alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

from .canaries import Canary, CanaryError, FailureSections, Planter, TestUnit, matching_brace, plant_text

FEEDBACK_MAX_CHARS = 12_000      # the whole feedback file
MIN_VERBATIM_CHARS = 12          # shorter test lines (`});`, `}`, `def`) say nothing about the tests
MAX_FAILED_NAMES = 30
REPORT_DIR = re.compile(r"/tmp/report-[0-9a-f]+")


@dataclass(frozen=True)
class TryVerdict:
    """What the header says about the try: its verdict and the failing tests' upstream names."""
    try_number: int
    bucket: str
    reason: str
    detail: str
    failed_tests: tuple[str, ...] = ()
    tests_total: int = 0


def try_feedback(verdict: TryVerdict, output: str | None, canaries: Sequence[Canary],
                  hidden_texts: Mapping[str, str], planter: Planter | None,
                  limit: int = FEEDBACK_MAX_CHARS) -> str:
    """The feedback file's text (markdown): header, then the scrubbed, trimmed test output."""
    header = _header(verdict)
    if output is None:
        return header
    find_units = planter.find_units if planter else None
    planted, _ = drop_lines_containing(output, canary_code_lines(hidden_texts, canaries, planter))
    planted = drop_copy_sections(planted, canaries, planter.failure_sections if planter else None)
    scrubbed = scrub_canaries(planted, canaries)
    forbidden = hidden_lines_not_shown(hidden_texts, verdict.failed_tests, find_units)
    kept, dropped = drop_lines_containing(scrubbed, forbidden)
    note = (f"\n[{dropped} line(s) reproducing the hidden test files outside a failing test were left out]"
            if dropped else "")
    budget = max(0, limit - len(header) - len(note) - 40)
    return f"{header}\n## Test output (trimmed)\n\n```\n{trim_middle(kept, budget)}\n```{note}\n"


def _header(verdict: TryVerdict) -> str:
    lines = [f"# Try {verdict.try_number}: {verdict.bucket} ({verdict.reason})", "", verdict.detail.strip(), ""]
    if verdict.failed_tests:
        shown = verdict.failed_tests[:MAX_FAILED_NAMES]
        more = len(verdict.failed_tests) - len(shown)
        lines += [f"Tests that did not pass ({len(verdict.failed_tests)}"
                  + (f" of {verdict.tests_total}" if verdict.tests_total else "") + "); this list is authoritative, "
                  "the output below may repeat a test:", ""]
        lines += [f"- {name}" for name in shown] + ([f"- ... and {more} more"] if more else []) + [""]
    return "\n".join(lines)


def scrub_canaries(output: str, canaries: Sequence[Canary]) -> str:
    """Hidden and canary names mapped back to upstream names; lines with a fallback canary's
    numbers or a mutated canary's failure line, and the report directory's random name, removed."""
    secrets = {str(number) for canary in canaries if canary.mutation is None for number in (canary.expected, canary.actual)}
    failures = [re.compile(line) for canary in canaries if canary.mutation for line in _value_lines(canary.mutation.failure)]
    lines = [line for line in output.splitlines() if not any(secret in line for secret in secrets)
             and not any(failure.search(line) for failure in failures)]
    text = "\n".join(lines)
    names = [(canary.hidden_name, canary.source) for canary in canaries]
    names += [(canary.name, canary.source) for canary in canaries if canary.name]
    names += [rename for canary in canaries for rename in canary.renames]
    for hidden, source in sorted(names, key=lambda pair: -len(pair[0])):
        text = text.replace(hidden, source)
    return REPORT_DIR.sub("<report-dir>", text)


def drop_copy_sections(output: str, canaries: Sequence[Canary], sections: FailureSections | None) -> str:
    """The output without the failure sections (and one-line mentions) of the mutated copies:
    a copy's failure shows values that are not upstream's (unittest's `Lists differ` and its
    diff, jest's `- Expected / + Received` lines), which no single line's pattern catches, and
    once names are mapped back they would read as the real test's failure."""
    copies = {canary.name for canary in canaries if canary.mutation is not None and canary.name}
    if sections is None or not copies:
        return output
    header, boundary = re.compile(sections.header), re.compile(sections.boundary)
    mention = re.compile(sections.mention) if sections.mention else None

    def is_copy(reported: str) -> bool:
        return any(reported == name or reported.endswith(sections.separator + name) for name in copies)

    kept, dropping = [], False
    for line in output.splitlines():
        found = header.search(line)
        if found:
            dropping = is_copy(found["name"])
        elif boundary.search(line):
            dropping = False
        named = mention.search(line) if mention and not dropping else None
        if not dropping and not (named and is_copy(named["name"])):
            kept.append(line)
    return "\n".join(kept)


def _value_lines(failure: str) -> list[str]:
    """The lines of a canary's failure regex that show its value (not the matcher's fixed
    words, which real failures share)."""
    lines = [line.lstrip("^").rstrip("$") for line in _top_level_lines(failure)]
    return [line for line in lines if re.search(r"[0-9\"']|True|False|true|false", line.replace(".*", ""))]


def _top_level_lines(regex: str) -> list[str]:
    """The regex split at each `\\n` outside any group or class: each part is a regex itself
    (jest's `(?:.*\\n)*?` between a diff's header and its value line stays whole)."""
    parts, start, depth, in_class, index = [], 0, 0, False, 0
    while index < len(regex):
        char = regex[index]
        if char == "\\":
            if regex.startswith("\\n", index) and depth == 0 and not in_class:
                parts.append(regex[start:index])
                start = index + 2
            index += 2
            continue
        if in_class:
            in_class = char != "]"
        elif char == "[":
            in_class = True
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        index += 1
    return parts + [regex[start:]]


def canary_code_lines(hidden_texts: Mapping[str, str], canaries: Sequence[Canary],
                      planter: Planter | None) -> frozenset[str]:
    """The lines grading planted for the canaries (planting is a pure function of the pristine
    file, so it is redone here): solution code printing the test file, or a runner showing a
    canary's source, would otherwise show the agent tests that do not exist upstream. The real
    tests' renamed lines are not among them (they map back to upstream lines)."""
    if planter is None or not canaries:
        return frozenset()
    by_source = {canary.source: canary for canary in canaries}
    lines: set[str] = set()
    for text in hidden_texts.values():
        try:
            chosen = [(unit, by_source[unit.name]) for unit in planter.find_units(text) if unit.name in by_source]
            planted = plant_text(planter, text, chosen) if chosen else text
        except CanaryError:
            continue
        pristine = set(_lines(text))
        lines.update(line for line in _lines(planted)
                     if line not in pristine and scrub_canaries(line, canaries) not in pristine)
    return frozenset(lines)


def hidden_lines_not_shown(hidden_texts: Mapping[str, str], failed_tests: Sequence[str],
                           find_units: Callable[[str], list[TestUnit]] | None) -> frozenset[str]:
    """The stripped lines of the hidden test files a runner would not print on failure: every
    line (MIN_VERBATIM_CHARS or longer) outside the tests reported failing."""
    shown: set[str] = set()
    every: set[str] = set()
    for text in hidden_texts.values():
        every.update(_lines(text))
        for start, end in _failing_spans(text, failed_tests, find_units):
            shown.update(_lines(text[start:end]))
    return frozenset(every - shown)


def _lines(text: str) -> Iterable[str]:
    return (line.strip() for line in text.splitlines() if len(line.strip()) >= MIN_VERBATIM_CHARS)


def _failing_spans(text: str, failed_tests: Sequence[str],
                   find_units: Callable[[str], list[TestUnit]] | None) -> list[tuple[int, int]]:
    if find_units is None or not failed_tests:
        return []
    try:
        units = find_units(text)
    except CanaryError:
        return []
    return [_span(text, unit) for unit in units if any(unit.name in name for name in failed_tests)]


def _span(text: str, unit: TestUnit) -> tuple[int, int]:
    """A unit's whole text: units that end at their header (jest's `test('...', () =>`) run on
    to the brace closing their body."""
    rest = text[unit.end:]
    if rest.lstrip().startswith("{"):
        try:
            return unit.start, matching_brace(text, unit.end + len(rest) - len(rest.lstrip()), backtick=True)
        except CanaryError:
            pass
    return unit.start, unit.end


def drop_lines_containing(output: str, forbidden: frozenset[str]) -> tuple[str, int]:
    """(output without the lines that contain a forbidden line, how many were dropped)."""
    kept, dropped = [], 0
    for line in output.splitlines():
        if len(line.strip()) >= MIN_VERBATIM_CHARS and any(hidden in line for hidden in forbidden):
            dropped += 1
        else:
            kept.append(line)
    return "\n".join(kept), dropped


def trim_middle(text: str, limit: int) -> str:
    """`text` when it fits in `limit` characters; else its first third and last two thirds with
    the cut marked (compiler errors lead, runner summaries close)."""
    if len(text) <= limit:
        return text
    marker = "\n[... {} characters trimmed ...]\n"
    room = max(0, limit - len(marker.format(len(text))))
    head, tail = room // 3, room - room // 3
    return text[:head] + marker.format(len(text) - head - tail) + (text[len(text) - tail:] if tail else "")
