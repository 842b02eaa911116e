"""Canary tests planted at grading time: evidence that a forged report cannot produce.

The code under test shares a process with the test runner, so it can rewrite whatever the
runner reports (results, exit code, console summary). A canary is a test that a CORRECT
solution must fail, with a failure message carrying numbers drawn fresh for each grading.
For each chosen test T of the exercise:

- the real T keeps its place (tests that share state still see it in order) but runs under a
  new name drawn from its neighbours' words (`hidden_name`);
- a canary, right after it, takes T's own, upstream name: it runs T's body again and, only
  when that passed, fails with the framework's own assertion on two fresh numbers
  (`expected`, `actual`), whose failure message shows both.

Resolved then requires every canary reported failed with both numbers in its message, every
real test passed (names mapped back), and every expected test present. So a report that flips
failures to passes shows a canary passed; disabled assertions let a canary pass; a report
fabricated from the expected names lacks the canaries or their numbers; and a forger that
spares the failures of tests whose names it does not know (the "planted-looking" ones) spares
the real, renamed tests instead, because the canaries carry the upstream names. Telling the
canaries apart needs reading and parsing the hidden test source at run time.

Planters are pure text functions, one per language (its module in utils/languages/ builds a
`Planter` from this module's generic parts: scanning, renaming, planting into a tree, reading
the results back), unit-tested without Docker. Preparation plants every eligible test at once on the reference solution and
records the tests whose canary behaved (`canary_sources`); grading plants a random few of
those with numbers from the OS's random source.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

if TYPE_CHECKING:
    from .runner_results import TestCase

CANARIES_PER_GRADING = 3


class CanaryError(ValueError):
    """A test file does not have the shape a planter expects."""


@dataclass(frozen=True)
class Canary:
    source: str       # the test's upstream name: the canary runs under it
    hidden_name: str  # the name the real test runs under in this grading
    expected: int     # the canary's final assertion compares these two different numbers
    actual: int

    def carries_secret(self, message: str) -> bool:
        return str(self.expected) in message and str(self.actual) in message


@dataclass(frozen=True)
class TestUnit:
    """One test in a test file: its name and the text span of its whole definition."""
    name: str
    start: int
    end: int
    body_start: int = -1  # offset just after the opening brace, where the language needs it


@dataclass(frozen=True)
class Leaf:
    """Where a test's own name sits inside a name the runner reported."""
    name: str
    start: int
    is_child: bool = False  # a subtest / nested case under that test (Go's TestX/sub)


# --- names -----------------------------------------------------------------------------------

def _words(name: str, style: str) -> list[str]:
    if style == "words":
        return name.split()
    if style == "snake":
        return [word for word in name.split("_") if word]
    return re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+|[A-Z]", name)


def _join(words: list[str], style: str) -> str:
    if style == "words":
        return " ".join(words)
    if style == "snake":
        return "_".join(words)
    camel = "".join(word[:1].upper() + word[1:] for word in words)
    return camel[:1].lower() + camel[1:] if style == "lower_camel" else camel


def neighbour_name(names: Sequence[str], taken: set[str], style: str, text: str,
                   rng: secrets.SystemRandom) -> str:
    """A new test name made of the first half of one neighbour's words and the second half of
    another's: shaped like the file's own names, not derived from the test it hides."""
    word_lists = [_words(name, style) for name in names if _words(name, style)]
    vocabulary = [word for words in word_lists for word in words[1:]] or ["case"]
    for attempt in range(200):
        first, second = rng.choice(word_lists), rng.choice(word_lists)
        words = first[: max(1, len(first) // 2)] + second[len(second) // 2:]
        if attempt >= 20:
            words = words + [rng.choice(vocabulary)]
        candidate = _join(words, style)
        if candidate not in taken and candidate not in text:
            return candidate
    raise CanaryError("no fresh test name found")


# --- scanning --------------------------------------------------------------------------------

def brace_positions(text: str, start: int = 0, quotes: str = "\"'", backtick: bool = False):
    """(offset, brace) of every { and } from `start` on, skipping strings, character literals
    and comments (C-family syntax; Go's backtick strings when `backtick`)."""
    index = start
    length = len(text)
    while index < length:
        char = text[index]
        if text.startswith("//", index):
            index = line_end(text, index)
            continue
        if text.startswith("/*", index):
            end = text.find("*/", index + 2)
            index = length if end < 0 else end + 2
            continue
        if char in quotes or (backtick and char == "`"):
            index = _string_end(text, index, char)
            continue
        if char in "{}":
            yield index, char
        index += 1


def matching_brace(text: str, open_at: int, quotes: str = "\"'", backtick: bool = False) -> int:
    """Offset just after the brace closing the one at `open_at`."""
    depth = 0
    for index, brace in brace_positions(text, open_at, quotes, backtick):
        depth += 1 if brace == "{" else -1
        if depth == 0:
            return index + 1
    raise CanaryError("unbalanced braces")


def _string_end(text: str, start: int, quote: str) -> int:
    index = start + 1
    while index < len(text):
        if text[index] == "\\" and quote != "`":
            index += 2
            continue
        if text[index] == quote:
            return index + 1
        if text[index] == "\n" and quote in "\"'":
            return index + 1  # an apostrophe in a comment-like position (e.g. Rust lifetimes)
        index += 1
    return index


def line_end(text: str, offset: int) -> int:
    end = text.find("\n", offset)
    return len(text) if end < 0 else end + 1


def apply_edits(text: str, edits: list[tuple[int, int, str]]) -> str:
    """Replace spans (start, end, new) that do not overlap; insertions have start == end."""
    for start, end, new in sorted(edits, key=lambda edit: (edit[0], edit[1]), reverse=True):
        text = text[:start] + new + text[end:]
    return text


# --- the planter: what a language module provides -------------------------------------------

@dataclass(frozen=True)
class Planter:
    """How canaries are planted into one language's test files."""
    file_globs: tuple[str, ...]
    name_style: str
    find_units: Callable[[str], list[TestUnit]]
    plant_file: Callable[[str, list[tuple[TestUnit, Canary]]], str]
    leaf: Callable[[str], Leaf | None]  # a reported test name -> the test's own name in it


def plant_after(text: str, chosen: list[tuple[TestUnit, Canary]], declaration: str,
                canary_text: Callable[[str, Canary], str]) -> str:
    """Each chosen test renamed in place (`declaration` is how its name is introduced, e.g.
    "def {}("), with its canary right after it: order-dependent suites still run in order."""
    edits = []
    for unit, canary in chosen:
        block = text[unit.start:unit.end].rstrip("\n") + "\n"
        indent = block[: len(block) - len(block.lstrip())]
        renamed = block.replace(declaration.format(canary.source), declaration.format(canary.hidden_name), 1)
        edits.append((unit.start, unit.end, renamed + "\n" + canary_text(indent, canary)))
    return apply_edits(text, edits)


def brace_depths(text: str) -> Callable[[int], int]:
    """Brace depth at an offset (strings and comments skipped), for top-level checks."""
    braces = list(brace_positions(text))
    return lambda offset: sum(1 if brace == "{" else -1 for index, brace in braces if index < offset)


# --- planting into a tree --------------------------------------------------------------------

def test_files(tree: Path, planter: Planter, matches: Callable[[str, tuple[str, ...]], bool]) -> list[Path]:
    return sorted(path for path in tree.rglob("*")
                  if path.is_file() and matches(path.relative_to(tree).as_posix(), planter.file_globs))


def plant(tree: Path, planter: Planter, matches: Callable[[str, tuple[str, ...]], bool],
          sources: Sequence[str] | None, count: int | None,
          rng: secrets.SystemRandom | None = None) -> tuple[Canary, ...]:
    """Plant canaries into the test files under `tree` (rewritten in place).

    `sources`: the tests that may become canaries (None: every eligible test); `count`: how
    many to plant (None: all of them). Returns the planted canaries."""
    rng = rng or secrets.SystemRandom()
    files = {path: path.read_text(encoding="utf-8", errors="surrogateescape")
             for path in test_files(tree, planter, matches)}
    units = {path: planter.find_units(text) for path, text in files.items()}
    all_names = {unit.name for file_units in units.values() for unit in file_units}
    eligible = [(path, unit) for path, file_units in units.items() for unit in file_units
                if sources is None or unit.name in sources]
    eligible = _unique_names(eligible)
    chosen = eligible if count is None else rng.sample(eligible, min(count, len(eligible)))
    taken = set(all_names)
    canaries: list[Canary] = []
    per_file: dict[Path, list[tuple[TestUnit, Canary]]] = {}
    every_text = "\n".join(files.values())
    for path, unit in chosen:
        hidden = neighbour_name(sorted(all_names), taken, planter.name_style, every_text, rng)
        taken.add(hidden)
        expected, actual = rng.sample(range(10_000, 99_999), 2)
        canary = Canary(unit.name, hidden, expected, actual)
        canaries.append(canary)
        per_file.setdefault(path, []).append((unit, canary))
    for path, planted in per_file.items():
        path.write_text(planter.plant_file(files[path], planted), encoding="utf-8", errors="surrogateescape")
    return tuple(canaries)


def _unique_names(eligible: list[tuple[Path, TestUnit]]) -> list[tuple[Path, TestUnit]]:
    counts: dict[str, int] = {}
    for _, unit in eligible:
        counts[unit.name] = counts.get(unit.name, 0) + 1
    return [(path, unit) for path, unit in eligible if counts[unit.name] == 1]


# --- reading the results back ----------------------------------------------------------------

def case_leaf(case, leaf_of: Callable[[str], Leaf | None]) -> Leaf | None:
    if case.leaf_start >= 0:
        return Leaf(case.name[case.leaf_start:], case.leaf_start)
    return leaf_of(case.name)


def _section_parent(leaf: Leaf | None, *names: dict) -> Leaf | None:
    """Catch reports a SECTION as `case/section`: such a leaf belongs to the planted case."""
    if leaf is None or any(leaf.name in known for known in names):
        return leaf
    for known in names:
        for name in known:
            if leaf.name.startswith(name + "/"):
                return Leaf(name, leaf.start, True)
    return leaf


def separate(results, canaries: Sequence[Canary], leaf_of: Callable[[str], Leaf | None],
             in_test_files: Callable[[TestCase], bool] = lambda case: True):
    """Split runner results into (the real tests, names mapped back to upstream; each
    canary's own case by source). Cases under a canary (Go subtests it ran) are dropped:
    the real test reports the same subtests under its hidden name. Only cases
    `in_test_files` (where canaries are planted) can be a canary or a renamed test: a
    solution's own test that shares a canary's leaf name (Rust's `tests::add` beside a
    hidden `add`) stays a real test. Narrowing can only hide a canary, never forge one."""
    from .runner_results import TestResults

    by_source = {canary.source: canary for canary in canaries}
    by_hidden = {canary.hidden_name: canary for canary in canaries}
    real = []
    own = {}
    for case in results.cases:
        if not in_test_files(case):
            real.append(case)
            continue
        leaf = _section_parent(case_leaf(case, leaf_of), by_source, by_hidden)
        if leaf is not None and leaf.name in by_source:
            if not leaf.is_child:
                own[leaf.name] = case
            continue
        if leaf is not None and leaf.name in by_hidden:
            source = by_hidden[leaf.name].source
            name = case.name[:leaf.start] + source + case.name[leaf.start + len(leaf.name):]
            case = replace(case, name=name, leaf_start=-1)
        real.append(case)
    return TestResults(tuple(real), results.report_files, results.problems, results.caught), own
