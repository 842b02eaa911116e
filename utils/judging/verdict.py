"""The grading verdict: a pure function of (exit code, timed out, runner results, expected
tests, planted canaries).

Resolved only when ALL hold:
- the test command finished in time; it exited 0 when no canary was planted, and NON-zero when
  canaries were (they fail in every honest run, so exit 0 means a forged status);
- every planted canary (utils/judging/canaries.py) is reported failed with the framework's own
  failure message for its assertion, this grading's value in it (matched against the exact
  format in a capped message): a canary reported passed, missing, or failed otherwise is
  forgery evidence;
- the runner's own report (not stdout) shows at least one test, every test passed, none
  skipped and none errored;
- when the instance's expected test names are known (from its reference solution's run),
  each of them appears among the passed tests;
- a skipped test is allowed only when the reference run skipped it too (`expected_skips`):
  a test the pristine suite itself still skips after un-skipping (e.g. jest's `test.skip`
  on a deliberately slow case) is not a failure of the solution; any other skip is.

Build-only instances (test-writing exercises, `.meta/.skip_tests`: there is no test to run)
resolve when the test command builds and exits 0 with no failed test, reason
`build_only_passed`; upstream harnesses count them the same way. Reports list them.

An early `exit(0)` from the code under test leaves no report (or a partial one) and so can
never resolve, whatever it printed first.
"""

from __future__ import annotations

from dataclasses import dataclass

from typing import Mapping, Sequence

from .canaries import Canary
from ..outcomes import GradingMode, Reason
from .runner_results import PASSED, SKIPPED, TestCase, TestResults

@dataclass(frozen=True)
class Verdict:
    resolved: bool
    reason: Reason
    detail: str = ""


def decide_separated(
    exit_code: int | None,
    timed_out: bool,
    results: TestResults,
    own: Mapping[str, TestCase],
    canaries: Sequence[Canary] = (),
    expected_tests: tuple[str, ...] | None = None,
    expected_skips: tuple[str, ...] = (),
    grading_mode: GradingMode = GradingMode.TESTS,
) -> Verdict:
    """The verdict once canaries.separate has set the canaries' own cases (`own`, by
    source) apart from the real tests (`results`, names mapped back): grading reads the
    runner's report, separates, and decides here."""
    if timed_out:
        return Verdict(False, Reason.TEST_TIMEOUT, "the test command did not finish in time")
    if grading_mode == GradingMode.BUILD_ONLY:
        return _decide_build_only(exit_code, results)
    passed = sorted(source for source, case in own.items() if case.outcome == PASSED)
    if passed:
        return Verdict(False, Reason.CANARY_PASSED, f"{len(passed)} of {len(canaries)} planted canary test(s) that a correct "
                                                    f"solution fails were reported passed: {', '.join(passed)}")
    if results.problems and not results.cases:
        return Verdict(False, Reason.UNREADABLE_TEST_RESULTS, "; ".join(results.problems[:3]))
    if results.total == 0:
        if exit_code != 0:
            return Verdict(False, Reason.BUILD_OR_RUN_FAILED, f"exit code {exit_code} and no test results")
        return Verdict(False, Reason.NO_TEST_RESULTS, "exit code 0 but the runner reported no test")
    if results.failed or results.errored:
        # A trusted test process may say what it caught; the counts stay in the detail.
        reason = Reason(results.caught[0]) if results.caught else Reason.TESTS_FAILED
        return Verdict(False, reason, f"{results.failed} failed, {results.errored} errored of {results.total}")
    if exit_code != 0 and not canaries:
        return Verdict(False, Reason.NONZERO_EXIT, f"all {results.total} reported tests passed but exit code was {exit_code}")
    if exit_code == 0 and canaries:
        return Verdict(False, Reason.EXIT_ZERO_WITH_CANARIES, "the test command exited 0 although planted canary tests must fail")
    unexpected_skips = sorted(set(results.names(SKIPPED)) - set(expected_skips))
    if unexpected_skips:
        return Verdict(False, Reason.TESTS_SKIPPED, f"{len(unexpected_skips)} of {results.total} tests skipped: "
                                                    f"{', '.join(unexpected_skips[:5])}")
    if results.problems:
        return Verdict(False, Reason.UNREADABLE_TEST_RESULTS, "; ".join(results.problems[:3]))
    canary_verdict = _check_canaries(canaries, own)
    if canary_verdict is not None:
        return canary_verdict
    if expected_tests:
        missing = sorted(set(expected_tests) - set(results.names()))
        if missing:
            return Verdict(False, Reason.EXPECTED_TESTS_MISSING,
                           f"{len(missing)} of {len(set(expected_tests))} expected tests did not run: {', '.join(missing[:5])}")
    skipped = f" ({results.skipped} skipped by the pristine suite too)" if results.skipped else ""
    return Verdict(True, Reason.TESTS_PASSED, f"{results.passed} tests passed{skipped}")


def _check_canaries(canaries: Sequence[Canary], own: Mapping[str, TestCase]) -> Verdict | None:
    missing = sorted(canary.source for canary in canaries if canary.source not in own)
    if missing:
        return Verdict(False, Reason.CANARY_MISSING, f"{len(missing)} planted canary test(s) missing from the report: "
                                                     f"{', '.join(missing)}")
    wrong = sorted(canary.source for canary in canaries if not canary.carries_secret(own[canary.source].message))
    if wrong:
        return Verdict(False, Reason.CANARY_WITHOUT_SECRET, f"{len(wrong)} planted canary test(s) failed without the "
                                                            f"framework's message for their assertion: {', '.join(wrong)}")
    return None


def _decide_build_only(exit_code: int | None, results: TestResults) -> Verdict:
    if results.failed or results.errored:
        return Verdict(False, Reason.TESTS_FAILED, f"{results.failed} failed, {results.errored} errored of {results.total}")
    if exit_code != 0:
        return Verdict(False, Reason.BUILD_OR_RUN_FAILED, f"build-only instance: exit code {exit_code}")
    return Verdict(True, Reason.BUILD_ONLY_PASSED, "build-only instance (no tests to run): built and exited 0")
