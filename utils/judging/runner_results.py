"""Per-test results read from each runner's machine-readable report files.

Grading points every runner at a report directory whose name the code under test does not
know (pytest --junitxml, `go test -json` redirected to a file, jest --outputFile, the JUnit
console launcher's --reports-dir, Catch's --out, libtest's --logfile). Text a solution
prints to stdout never reaches these parsers.

Every parser takes {file name: content} of that directory and returns `TestResults`. They
are pure functions, unit-tested on captured reports.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass, field, replace

PASSED = "passed"
FAILED = "failed"
ERROR = "error"
SKIPPED = "skipped"


@dataclass(frozen=True)
class TestCase:
    name: str
    outcome: str  # PASSED | FAILED | ERROR | SKIPPED
    message: str = ""  # failure text as the report gives it (canaries' numbers are read from it)
    # Where the test's own title sits in `name`, when the runner says so (jest's title);
    # otherwise the language's canary planter finds it from the name's shape.
    leaf_start: int = -1
    # Where the runner says the test came from, in the runner's own terms: the test target's
    # source file (libtest), the JUnit classname, the go package, the jest test file. The
    # language reads a file path from it (LanguageSpec.test_file): preparation records as
    # expected only the tests of the hidden test files, never a solution's own.
    origin: str = ""


@dataclass(frozen=True)
class TestResults:
    cases: tuple[TestCase, ...] = ()
    report_files: tuple[str, ...] = ()  # which report files were read
    problems: tuple[str, ...] = field(default_factory=tuple)  # unreadable reports etc.
    # What a trusted test process refused (utils.outcomes.Reason values, most telling first).
    caught: tuple[str, ...] = ()

    def count(self, outcome: str) -> int:
        return sum(1 for case in self.cases if case.outcome == outcome)

    @property
    def passed(self) -> int:
        return self.count(PASSED)

    @property
    def failed(self) -> int:
        return self.count(FAILED)

    @property
    def errored(self) -> int:
        return self.count(ERROR)

    @property
    def skipped(self) -> int:
        return self.count(SKIPPED)

    @property
    def total(self) -> int:
        return len(self.cases)

    def names(self, outcome: str | None = None) -> tuple[str, ...]:
        return tuple(case.name for case in self.cases if outcome is None or case.outcome == outcome)

    def summary(self) -> dict[str, int]:
        return {"total": self.total, "passed": self.passed, "failed": self.failed,
                "errored": self.errored, "skipped": self.skipped}


# --- JUnit XML: pytest, the JUnit Platform console launcher, Catch2 ---------------------

def parse_junit_reports(files: dict[str, str]) -> TestResults:
    cases: list[TestCase] = []
    read: list[str] = []
    problems: list[str] = []
    for file_name in sorted(name for name in files if name.endswith(".xml")):
        try:
            root = ElementTree.fromstring(files[file_name])
        except ElementTree.ParseError as error:
            problems.append(f"{file_name}: unreadable XML ({error})")
            continue
        read.append(file_name)
        for testcase in root.iter("testcase"):
            cases.append(TestCase(_junit_name(testcase), _junit_outcome(testcase), _junit_message(testcase),
                                  origin=testcase.get("classname", "")))
        # A suite-level error with no test cases (e.g. a collection error) is still an error.
        for suite in root.iter("testsuite"):
            if not suite.findall("testcase") and _nonzero(suite.get("errors")):
                cases.append(TestCase(f"{suite.get('name', file_name)} (suite)", ERROR, origin=suite.get("name", "")))
    return TestResults(tuple(cases), tuple(read), tuple(problems))


def _nonzero(count: str | None) -> bool:
    """A JUnit count attribute; anything unreadable counts as non-zero (suspicious)."""
    try:
        return int(count or 0) != 0
    except ValueError:
        return True


def _junit_name(testcase: ElementTree.Element) -> str:
    classname = testcase.get("classname", "")
    name = testcase.get("name", "")
    return f"{classname}::{name}" if classname else name


def _junit_message(testcase: ElementTree.Element) -> str:
    parts = []
    for tag in ("failure", "error"):
        for element in testcase.findall(tag)[:_MESSAGE_PARTS]:
            parts += [element.get("message", ""), element.text or ""]
    return capped_message(parts)


# Every failure message, whatever the report format and its type there, is capped before
# anything reads it: a canary is matched against the framework's format in at most this much
# text, so a message holding every possible value (a de Bruijn string) matches nothing.
_MESSAGE_CAP = 4000
_MESSAGE_PARTS = 16


def capped_message(parts) -> str:
    """One message from a report's failure entries of any JSON type: at most _MESSAGE_PARTS
    entries, each and the whole at most _MESSAGE_CAP characters (non-strings as capped JSON)."""
    if not isinstance(parts, (list, tuple)):
        parts = [parts]
    texts = [_message_text(part)[:_MESSAGE_CAP] for part in parts[:_MESSAGE_PARTS]]
    return "\n".join(text for text in texts if text)[:_MESSAGE_CAP]


def _message_text(part) -> str:
    if part is None:
        return ""
    if isinstance(part, str):
        return part
    try:
        return json.dumps(part)[:_MESSAGE_CAP]
    except (TypeError, ValueError):
        return ""


def _junit_outcome(testcase: ElementTree.Element) -> str:
    if testcase.find("error") is not None:
        return ERROR
    if testcase.find("failure") is not None:
        return FAILED
    if testcase.find("skipped") is not None:
        return SKIPPED
    return PASSED


# --- go test -json -------------------------------------------------------------------

_GO_FINAL = {"pass": PASSED, "fail": FAILED, "skip": SKIPPED}


def parse_go_test_json(files: dict[str, str]) -> TestResults:
    """Final pass/fail/skip per test. A test that started but never ended, or a package that
    started but never reported its own pass/fail (the test binary died mid-run, e.g. an
    exit(0) from the code under test), is an error: a partial stream is never a pass."""
    outcomes: dict[str, str] = {}
    packages: dict[str, str] = {}  # test name -> its package
    outputs: dict[str, list[str]] = {}
    started: dict[str, None] = {}
    packages_started: dict[str, None] = {}
    packages_finished: dict[str, str] = {}
    read: list[str] = []
    problems: list[str] = []
    for file_name in sorted(name for name in files if name.endswith(".json")):
        read.append(file_name)
        for line_number, line in enumerate(files[file_name].splitlines(), 1):
            if not line.strip():
                continue
            try:
                event = json.loads(line)
            except ValueError:
                event = None
            if not isinstance(event, dict):
                problems.append(f"{file_name}:{line_number}: not a go test -json event")
                continue
            action, test = event.get("Action"), event.get("Test")
            package = str(event.get("Package") or event.get("ImportPath") or "?")
            if test:
                name = f"{package}::{test}"
                packages[name] = package
                if action == "run":
                    started[name] = None
                elif action == "output":
                    _keep_tail(outputs.setdefault(name, []), str(event.get("Output", "")))
                elif action in _GO_FINAL:
                    outcomes[name] = _GO_FINAL[action]
            elif action == "start":
                packages_started[package] = None
            elif action in ("pass", "fail", "skip", "build-fail"):
                packages_finished[package] = action
    cases = [TestCase(name, outcome, capped_message("".join(outputs.get(name, ()))[-_MESSAGE_CAP:]) if outcome != PASSED else "",
                      origin=packages[name])
             for name, outcome in outcomes.items()]
    cases += [TestCase(name, ERROR, origin=packages[name]) for name in started if name not in outcomes]  # never finished
    for package in packages_started:
        if package not in packages_finished:
            cases.append(TestCase(f"{package} (package did not finish)", ERROR, origin=package))
    for package, action in packages_finished.items():
        package_failed_by_a_test = any(name.startswith(f"{package}::") and outcome == FAILED
                                       for name, outcome in outcomes.items())
        if action in ("fail", "build-fail") and not package_failed_by_a_test:
            cases.append(TestCase(f"{package} (package)", ERROR, origin=package))
    return TestResults(tuple(cases), tuple(read), tuple(problems))


def _keep_tail(chunks: list[str], chunk: str) -> None:
    """Append, keeping about the last _MESSAGE_CAP characters: a failure's last lines matter."""
    chunks.append(chunk)
    if len(chunks) > 64:
        chunks[:] = ["".join(chunks)[-_MESSAGE_CAP:]]


# --- jest --json --outputFile ---------------------------------------------------------

_JEST_OUTCOMES = {"passed": PASSED, "failed": FAILED, "pending": SKIPPED, "skipped": SKIPPED,
                  "todo": SKIPPED, "disabled": SKIPPED, "focused": PASSED}


def parse_jest_json(files: dict[str, str]) -> TestResults:
    cases: list[TestCase] = []
    read: list[str] = []
    problems: list[str] = []
    for file_name in sorted(name for name in files if name.endswith(".json")):
        try:
            report = json.loads(files[file_name])
        except ValueError as error:
            problems.append(f"{file_name}: unreadable JSON ({error})")
            continue
        if not isinstance(report, dict) or not isinstance(report.get("testResults", []), list):
            problems.append(f"{file_name}: not a jest JSON report")
            continue
        read.append(file_name)
        for suite in report.get("testResults", []):
            if not isinstance(suite, dict):
                problems.append(f"{file_name}: a test suite entry is not an object")
                continue
            suite_path = str(suite.get("name", ""))
            suite_name = suite_path.rsplit("/", 1)[-1]
            assertions = suite.get("assertionResults") or []
            for assertion in assertions:
                if not isinstance(assertion, dict):
                    problems.append(f"{file_name}: an assertion entry is not an object")
                    continue
                cases.append(_jest_case(suite_name, assertion, suite_path))
            if not assertions and suite.get("status") == "failed":
                cases.append(TestCase(f"{suite_name} (suite)", ERROR, origin=suite_path))
    return TestResults(tuple(cases), tuple(read), tuple(problems))


def _jest_case(suite_name: str, assertion: dict, suite_path: str) -> TestCase:
    title = str(assertion.get("title", ""))
    name = f"{suite_name}::{assertion.get('fullName') or title}"
    message = capped_message(assertion.get("failureMessages"))
    leaf_start = len(name) - len(title) if title and name.endswith(title) else -1
    return TestCase(name, _JEST_OUTCOMES.get(assertion.get("status"), ERROR), message, leaf_start, suite_path)


# --- libtest --logfile (Rust) -----------------------------------------------------------

_LIBTEST_OUTCOMES = {"ok": PASSED, "failed": FAILED, "ignored": SKIPPED}


def parse_libtest_logfiles(files: dict[str, str]) -> TestResults:
    """`libtest-N.log` (--logfile: one `ok|failed|ignored NAME` line per finished test) and,
    when present, `libtest-N.list` (the binary's `--list --format terse` output, written
    before any test ran). A listed test with no logfile line did not finish: the binary died
    mid-run, e.g. an exit(0) from the code under test. Logfiles have no summary line, so
    the listing is what makes a partial run visible. `libtest-N.source` names the test
    binary's target source (`src/lib.rs` for the crate's own unit tests, `tests/NAME.rs` for
    an integration test): every test of the binary has it as its origin."""
    cases: list[TestCase] = []
    read: list[str] = []
    problems: list[str] = []
    for file_name in sorted(name for name in files if name.endswith(".log")):
        read.append(file_name)
        stem = file_name[: -len(".log")]
        origin = files.get(stem + ".source", "").strip()
        logged: set[str] = set()
        failures = _libtest_failure_output(files.get(stem + ".out", ""))
        for line in files[file_name].splitlines():
            status, _, name = line.partition(" ")
            if status in _LIBTEST_OUTCOMES and name:
                cases.append(TestCase(name, _LIBTEST_OUTCOMES[status], failures.get(name, "") if status == "failed" else "",
                                      origin=origin))
                logged.add(name)
            elif line.strip():
                problems.append(f"{file_name}: unexpected line {line[:80]!r}")
        for name in _listed_tests(files.get(stem + ".list") or ""):
            if name not in logged:
                cases.append(TestCase(name, ERROR, origin=origin))  # listed before the run, never finished
    for file_name in sorted(name for name in files if name.endswith(".list")):
        stem = file_name[: -len(".list")]
        if stem + ".log" not in files and _listed_tests(files[file_name]):
            cases.append(TestCase(f"{file_name} (tests listed, none ran)", ERROR,
                                  origin=files.get(stem + ".source", "").strip()))
    return TestResults(tuple(cases), tuple(read), tuple(problems))


_LIBTEST_SECTION = re.compile(r"^---- (?P<name>\S+) stdout ----$", re.M)


def _libtest_failure_output(console: str) -> dict[str, str]:
    """The `---- NAME stdout ----` sections of a test binary's console output (`libtest-N.out`):
    what each failed test printed, its panic message included."""
    sections: dict[str, str] = {}
    matches = list(_LIBTEST_SECTION.finditer(console))
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(console)
        body = console[match.end():end]
        body = body.split("\nfailures:\n", 1)[0]
        # The tail: what the test printed comes first, the panic message last.
        sections[match["name"]] = capped_message(body.strip()[-_MESSAGE_CAP:])
    return sections


def _listed_tests(listing: str) -> list[str]:
    return [line[: -len(": test")] for line in listing.splitlines() if line.endswith(": test")]


BRIDGE_EVENTS = "bridge.json"


def with_caught(results: TestResults, files: dict[str, str], order: tuple[str, ...]) -> TestResults:
    """`results` plus what a trusted test process caught: BRIDGE_EVENTS in the report directory
    ({name: count}, written only by that process: the directory is 0700 to it), the names of
    `order` that it counts, in that order (most telling first)."""
    try:
        counts = json.loads(files.get(BRIDGE_EVENTS, "{}"))
    except ValueError:
        counts = {}
    if not isinstance(counts, dict):
        return results
    return replace(results, caught=tuple(name for name in order if counts.get(name)))


# The solo build (every compiled language's runner, docker/<lang>/polyglot-*-test): before the
# hidden tests are added, the solution is compiled on its own. When that fails, the runner
# writes the compiler's output to SOLO_BUILD_LOG in the report directory and runs no solution
# code; it then tries the build WITH the tests (never running it) and, when that succeeds,
# also writes SOLUTION_NEEDS_TESTS (empty): the solution reached into the tests at build time.
SOLO_BUILD_LOG = "solo_build.log"
SOLUTION_NEEDS_TESTS = "solution_needs_tests"


@dataclass(frozen=True)
class SoloBuildFailure:
    needs_tests: bool  # it built with the tests, not without them
    log_tail: str      # the end of the solo build's compiler output


def solo_build_failure(files: dict[str, str], tail_lines: int = 12) -> SoloBuildFailure | None:
    """What the runner's solo build said, when it failed (None: it passed or did not run)."""
    if SOLO_BUILD_LOG not in files:
        return None
    tail = "\n".join(files[SOLO_BUILD_LOG].strip().splitlines()[-tail_lines:])
    return SoloBuildFailure(SOLUTION_NEEDS_TESTS in files, tail)
