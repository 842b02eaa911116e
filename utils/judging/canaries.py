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

Planters are pure text functions, one per language (`LanguageSpec.canaries`), unit-tested
without Docker. Preparation plants every eligible test at once on the reference solution and
records the tests whose canary behaved (`canary_sources`); grading plants a random few of
those with numbers from the OS's random source.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

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

def _braces(text: str, start: int = 0, quotes: str = "\"'", backtick: bool = False):
    """(offset, brace) of every { and } from `start` on, skipping strings, character literals
    and comments (C-family syntax; Go's backtick strings when `backtick`)."""
    index = start
    length = len(text)
    while index < length:
        char = text[index]
        if text.startswith("//", index):
            index = _line_end(text, index)
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
    for index, brace in _braces(text, open_at, quotes, backtick):
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


def _line_end(text: str, offset: int) -> int:
    end = text.find("\n", offset)
    return len(text) if end < 0 else end + 1


def _apply(text: str, edits: list[tuple[int, int, str]]) -> str:
    """Replace spans (start, end, new) that do not overlap; insertions have start == end."""
    for start, end, new in sorted(edits, key=lambda edit: (edit[0], edit[1]), reverse=True):
        text = text[:start] + new + text[end:]
    return text


# --- the planters ----------------------------------------------------------------------------

@dataclass(frozen=True)
class Planter:
    """How canaries are planted into one language's test files."""
    file_globs: tuple[str, ...]
    name_style: str
    find_units: Callable[[str], list[TestUnit]]
    plant_file: Callable[[str, list[tuple[TestUnit, Canary]]], str]
    leaf: Callable[[str], Leaf | None]  # a reported test name -> the test's own name in it


# Extra parameters come from class-level mock.patch decorators, which patch the renamed
# test too: the canary calls it without arguments.
_PY_METHOD = re.compile(r"^(?P<indent>[ \t]+)def (?P<name>test\w*)\(self(?:,[^)]*)?\):[ \t]*(?:#.*)?$", re.M)


def python_units(text: str) -> list[TestUnit]:
    units = []
    for match in _PY_METHOD.finditer(text):
        previous = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        if previous.strip().startswith("@"):
            continue  # decorated (skip markers, parametrisation): left alone
        units.append(TestUnit(match["name"], match.start(), _python_block_end(text, match.end(), len(match["indent"]))))
    return units


def _python_block_end(text: str, after: int, indent: int) -> int:
    """Offset of the first non-blank, non-comment line indented at most `indent` after `after`."""
    offset = _line_end(text, after)
    while offset < len(text):
        line_end = _line_end(text, offset)
        line = text[offset:line_end]
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and len(line) - len(line.lstrip()) <= indent:
            return offset
        offset = line_end
    return len(text)


def _plant_after(text: str, chosen: list[tuple[TestUnit, Canary]], declaration: str,
                 canary_text: Callable[[str, Canary], str]) -> str:
    """Each chosen test renamed in place (`declaration` is how its name is introduced, e.g.
    "def {}("), with its canary right after it: order-dependent suites still run in order."""
    edits = []
    for unit, canary in chosen:
        block = text[unit.start:unit.end].rstrip("\n") + "\n"
        indent = block[: len(block) - len(block.lstrip())]
        renamed = block.replace(declaration.format(canary.source), declaration.format(canary.hidden_name), 1)
        edits.append((unit.start, unit.end, renamed + "\n" + canary_text(indent, canary)))
    return _apply(text, edits)


def plant_python(text: str, chosen: list[tuple[TestUnit, Canary]]) -> str:
    return _plant_after(text, chosen, "def {}(", lambda indent, canary: (
        f"{indent}def {canary.source}(self, *args):\n"
        f"{indent}    self.{canary.hidden_name}()\n"
        f"{indent}    self.assertEqual({canary.expected}, {canary.actual})\n\n"))


def python_leaf(reported: str) -> Leaf | None:
    head, separator, name = reported.rpartition("::")
    return Leaf(name, len(head) + 2) if separator and name else None


_GO_TEST = re.compile(r"^func (?P<name>Test\w*)\(\w+ \*testing\.T\) \{", re.M)


def go_units(text: str) -> list[TestUnit]:
    units = []
    for match in _GO_TEST.finditer(text):
        end = matching_brace(text, match.end() - 1, backtick=True)
        units.append(TestUnit(match["name"], match.start(), _line_end(text, end - 1)))
    return units


def plant_go(text: str, chosen: list[tuple[TestUnit, Canary]]) -> str:
    return _plant_after(text, chosen, "func {}(", lambda indent, canary: (
        f"func {canary.source}(t *testing.T) {{\n"
        f"\t{canary.hidden_name}(t)\n"
        f"\tif !t.Failed() {{\n"
        f"\t\tt.Fatalf(\"got %d, want %d\", {canary.actual}, {canary.expected})\n"
        f"\t}}\n}}\n"))


def go_leaf(reported: str) -> Leaf | None:
    head, separator, path = reported.partition("::")
    if not separator or not path:
        return None
    name, slash, _ = path.partition("/")
    return Leaf(name, len(head) + 2, bool(slash))


_RUST_TEST = re.compile(
    r"^#\[test\][ \t]*\n(?P<attributes>(?:[ \t]*(?:#\[[^\n]*\]|///[^\n]*)[ \t]*\n)*)[ \t]*fn (?P<name>\w+)\(\)[ \t]*\{",
    re.M)


def rust_units(text: str) -> list[TestUnit]:
    units = []
    for match in _RUST_TEST.finditer(text):
        attributes = match["attributes"] + _attributes_before(text, match.start())
        if "should_panic" in attributes or "cfg" in attributes:
            continue  # expected panics, and tests compiled only with a feature on
        end = matching_brace(text, match.end() - 1, quotes="\"")
        units.append(TestUnit(match["name"], match.start(), end))
    return units


def _attributes_before(text: str, offset: int) -> str:
    """The attribute and doc-comment lines right above `offset` (e.g. a #[cfg] before #[test])."""
    lines = text[:offset].split("\n")[:-1]
    above = []
    for line in reversed(lines):
        if not line.strip().startswith(("#[", "///")):
            break
        above.append(line)
    return "\n".join(above)


def plant_rust(text: str, chosen: list[tuple[TestUnit, Canary]]) -> str:
    edits = []
    for unit, canary in chosen:
        block = text[unit.start:unit.end]
        renamed = re.sub(rf"\bfn {re.escape(canary.source)}\(", f"fn {canary.hidden_name}(", block, count=1)
        edits.append((unit.start, unit.end, renamed))
        edits.append((len(text), len(text), (
            f"\n#[test]\nfn {canary.source}() {{\n    {canary.hidden_name}();\n"
            f"    assert_eq!({canary.expected}, {canary.actual});\n}}\n")))
    return _apply(text, edits)


def rust_leaf(reported: str) -> Leaf | None:
    head, separator, name = reported.rpartition("::")
    return Leaf(name, len(head) + 2 if separator else 0) if name else None


_JAVA_TEST = re.compile(
    r"@Test\b(?!\w)(?P<between>(?:\s*@\w+(?:\([^()]*\))?)*)\s*(?:public\s+)?void\s+(?P<name>\w+)\s*\(\s*\)"
    r"(?:\s*throws\s+[\w.,\s]+?)?\s*\{")


def java_units(text: str) -> list[TestUnit]:
    depths = _brace_depths(text)
    units = []
    for match in _JAVA_TEST.finditer(text):
        before = text[max(text.rfind(";", 0, match.start()), text.rfind("}", 0, match.start()),
                          text.rfind("{", 0, match.start())) + 1:match.start()]
        annotations = before + match["between"]
        if depths(match.start()) != 1 or "Parameterized" in annotations or "Repeated" in annotations:
            continue
        end = matching_brace(text, match.end() - 1)
        units.append(TestUnit(match["name"], match.start(), end))
    return units


def _brace_depths(text: str) -> Callable[[int], int]:
    """Brace depth at an offset (strings and comments skipped), for top-level checks."""
    braces = list(_braces(text))
    return lambda offset: sum(1 if brace == "{" else -1 for index, brace in braces if index < offset)


def plant_java(text: str, chosen: list[tuple[TestUnit, Canary]]) -> str:
    class_end = text.rstrip().rfind("}")
    if class_end < 0:
        raise CanaryError("no class body")
    edits = []
    for unit, canary in chosen:
        block = text[unit.start:unit.end]
        renamed = re.sub(rf"\bvoid\s+{re.escape(canary.source)}\s*\(", f"void {canary.hidden_name}(", block, count=1)
        edits.append((unit.start, unit.end, renamed))
        edits.append((class_end, class_end, (
            f"\n    @Test\n    public void {canary.source}() throws Throwable {{\n"
            f"        {canary.hidden_name}();\n"
            f"        org.junit.jupiter.api.Assertions.assertEquals({canary.expected}, {canary.actual});\n    }}\n")))
    return _apply(text, edits)


def java_leaf(reported: str) -> Leaf | None:
    head, separator, method = reported.partition("::")
    if not separator or not method.endswith("()"):
        return None
    return Leaf(method[:-2], len(head) + 2)


_JS_TEST = re.compile(
    r"(?<![\w.$])(?:test|it)\(\s*(?P<quote>['\"])(?P<title>[^'\"\\\n]+)(?P=quote)\s*,\s*"
    r"(?:async\s+)?(?:\(\s*\)\s*=>|function\s*\(\s*\))")

# Registered in front of the spec: a `test`/`it` call for a planned title registers the real
# test under its hidden title and, right after it, the canary under the upstream title.
_JS_PRELUDE = """\
;(() => {
  const plan = %s;
  const own = (title) => Object.prototype.hasOwnProperty.call(plan, title);
  const wrapTest = (register) => Object.assign(function (title, fn, timeout) {
    if (!own(title) || typeof fn !== 'function' || fn.length > 0) return register.apply(this, arguments);
    const [hidden, expected, actual] = plan[title];
    register(hidden, fn, timeout);
    register(title, async () => { await fn(); expect(actual).toBe(expected); }, timeout);
  }, register);
  globalThis.test = wrapTest(globalThis.test);
  globalThis.it = wrapTest(globalThis.it);
})();
"""


def javascript_units(text: str) -> list[TestUnit]:
    matches = list(_JS_TEST.finditer(text))
    counts: dict[str, int] = {}
    for match in re.finditer(r"(?<![\w.$])(?:test|it)\(\s*(['\"`])(.*?)\1", text):
        counts[match.group(2)] = counts.get(match.group(2), 0) + 1
    return [TestUnit(match["title"], match.start(), match.end()) for match in matches if counts.get(match["title"]) == 1]


def plant_javascript(text: str, chosen: list[tuple[TestUnit, Canary]]) -> str:
    plan = {canary.source: [canary.hidden_name, canary.expected, canary.actual] for _, canary in chosen}
    return _JS_PRELUDE % json.dumps(plan) + text


def javascript_leaf(reported: str) -> Leaf | None:
    return None  # jest names carry the title at their end; see parse_jest_json's `leaf`


_CPP_TEST = re.compile(r'^TEST_CASE\(\s*"(?P<name>[^"\\\n]+)"(?P<tags>\s*,\s*"[^"\n]*")?\s*\)\s*\{', re.M)


_CPP_CONDITIONAL = re.compile(r"^[ \t]*#[ \t]*(?P<kind>if|ifdef|ifndef|endif)\b(?P<rest>.*)$", re.M)


def _cpp_foreign_conditional(text: str, offset: int) -> bool:
    """Whether `offset` sits inside an #if other than the run-all-tests switch (e.g. benchmarks)."""
    open_conditions: list[str] = []
    for match in _CPP_CONDITIONAL.finditer(text, 0, offset):
        if match["kind"] == "endif":
            if open_conditions:
                open_conditions.pop()
        else:
            open_conditions.append(match["rest"])
    return any("EXERCISM_RUN_ALL_TESTS" not in condition for condition in open_conditions)


def cpp_units(text: str) -> list[TestUnit]:
    units = []
    for match in _CPP_TEST.finditer(text):
        end = matching_brace(text, match.end() - 1)
        if 'R"' in text[match.end():end] or _cpp_foreign_conditional(text, match.start()):
            continue  # raw strings: not scanned; benchmark-only cases: not compiled
        units.append(TestUnit(match["name"], match.start(), end, body_start=match.end()))
    return units


def plant_cpp(text: str, chosen: list[tuple[TestUnit, Canary]]) -> str:
    edits = []
    for unit, canary in chosen:
        header = text[unit.start:unit.body_start]
        body = text[unit.body_start:unit.end - 1]
        renamed = header.replace(f'"{canary.source}"', f'"{canary.hidden_name}"', 1)
        edits.append((unit.start, unit.end, (
            f"{renamed}{body}}}\n\n{header}{body}    REQUIRE({canary.expected} == {canary.actual});\n}}")))
    return _apply(text, edits)


def cpp_leaf(reported: str) -> Leaf | None:
    head, separator, name = reported.partition("::")
    return Leaf(name, len(head) + 2) if separator and name else None


PYTHON = Planter(("**/*_test.py", "**/test_*.py"), "snake", python_units, plant_python, python_leaf)
GO = Planter(("**/*_test.go",), "camel", go_units, plant_go, go_leaf)
RUST = Planter(("tests/**.rs",), "snake", rust_units, plant_rust, rust_leaf)
JAVA = Planter(("src/test/**.java",), "lower_camel", java_units, plant_java, java_leaf)
JAVASCRIPT = Planter(("**/*.spec.js", "**/*.test.js"), "words", javascript_units, plant_javascript, javascript_leaf)
CPP = Planter(("**/*_test.cpp",), "snake", cpp_units, plant_cpp, cpp_leaf)


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


def separate(results, canaries: Sequence[Canary], leaf_of: Callable[[str], Leaf | None]):
    """Split runner results into (the real tests, names mapped back to upstream; each
    canary's own case by source). Cases under a canary (Go subtests it ran) are dropped:
    the real test reports the same subtests under its hidden name."""
    from .runner_results import TestResults

    by_source = {canary.source: canary for canary in canaries}
    by_hidden = {canary.hidden_name: canary for canary in canaries}
    real = []
    own = {}
    for case in results.cases:
        leaf = _section_parent(case_leaf(case, leaf_of), by_source, by_hidden)
        if leaf is not None and leaf.name in by_source:
            if not leaf.is_child:
                own[leaf.name] = case
            continue
        if leaf is not None and leaf.name in by_hidden:
            source = by_hidden[leaf.name].source
            name = case.name[:leaf.start] + source + case.name[leaf.start + len(leaf.name):]
            case = type(case)(name, case.outcome, case.message)
        real.append(case)
    return TestResults(tuple(real), results.report_files, results.problems), own
