"""The outcome vocabulary, defined once: the bucket every instance lands in and the reason why.

Both are `StrEnum`s: a member IS its string (`Bucket.RESOLVED == "resolved"`, and JSON writes
it as that string), so result files, report.json and the run report keep exactly the strings
they always held (so do the other vocabularies here: grading modes, isolation, policy
categories). A bucket says where an instance counts; a reason says why, in one word:

    Bucket.RESOLVED    ◀ Reason.TESTS_PASSED, Reason.BUILD_ONLY_PASSED (the verdict resolved)
    Bucket.UNRESOLVED  ◀ any other verdict reason, PATCH_APPLY_FAILED, DISK_LIMIT,
                         FORBIDDEN_CONSTRUCT, PATCH_TOO_LARGE, PATCH_UNPARSEABLE
    Bucket.EMPTY_PATCH ◀ Reason.EMPTY_PATCH (nothing left to grade after filtering)
    Bucket.INCOMPLETE  ◀ INFRASTRUCTURE_FAILED, AGENT_INTERRUPTED, GRADING_INFRASTRUCTURE_FAILED
    Bucket.ERROR       ◀ Reason.UNEXPECTED_ERROR

Every member's name is its string in upper case, so a name never stands for two strings.
"""

from __future__ import annotations

from enum import StrEnum


class Bucket(StrEnum):
    """Where an instance counts (`eval_result`): every instance lands in exactly one."""

    RESOLVED = "resolved"        # tests ran and the verdict is resolved
    UNRESOLVED = "unresolved"    # graded, not resolved (failed, timed out, no results, patch did not apply)
    EMPTY_PATCH = "empty_patch"  # nothing left to grade after filtering the patch
    INCOMPLETE = "incomplete"    # the infrastructure failed (image, container, copy, the engine going
                                 # away); a resume runs these again
    ERROR = "error"              # an unexpected exception


BUCKETS: tuple[Bucket, ...] = tuple(Bucket)
FINISHED_BUCKETS: tuple[Bucket, ...] = (Bucket.RESOLVED, Bucket.UNRESOLVED, Bucket.EMPTY_PATCH)  # reused on resume


class GradingMode(StrEnum):
    """What decides an instance's verdict (`grading_mode`, prepared into the metadata)."""

    TESTS = "tests"            # the runner's results decide (every instance but ...)
    BUILD_ONLY = "build_only"  # ... test-writing exercises (`.meta/.skip_tests`): nothing to run, the build decides


class Isolation(StrEnum):
    """How the solution ran beside the hidden tests (`grading_isolation`)."""

    TRUSTED_PROCESS = "trusted_process"  # the tests in their own process, which never loads solution code
    IN_PROCESS = "in_process"            # the tests and the solution in one process (compiled languages)


class PolicyCategory(StrEnum):
    """The source policy's categories (a refusal's rule belongs to one)."""

    TEST_FRAMEWORK = "test_framework"    # the runner's own names: a solution is called by tests, never calls them
    INTROSPECTION = "introspection"      # frames, reflection, unsafe memory, code built from strings, patching
    PROCESS_CONTROL = "process_control"  # exits, exit hooks, child processes, re-exec, the runner's arguments
    TEST_SOURCES = "test_sources"        # reading files: the hidden tests, the report directory


class Reason(StrEnum):
    """Why an instance landed in its bucket (`reason`): machine-readable, exactly one each."""

    # --- the verdict (utils/verdict.py) ------------------------------------------------------
    TESTS_PASSED = "tests_passed"
    BUILD_ONLY_PASSED = "build_only_passed"        # test-writing exercise: built and exited 0
    TEST_TIMEOUT = "test_timeout"
    UNREADABLE_TEST_RESULTS = "unreadable_test_results"
    BUILD_OR_RUN_FAILED = "build_or_run_failed"
    NO_TEST_RESULTS = "no_test_results"
    TESTS_FAILED = "tests_failed"
    TESTS_SKIPPED = "tests_skipped"
    NONZERO_EXIT = "nonzero_exit"
    EXPECTED_TESTS_MISSING = "expected_tests_missing"
    SIGNATURE_CHANGED = "signature_changed"        # a function the stub declares changed type: the tests do not build
    # Forgery evidence (utils/canaries.py): a planted canary, which a correct solution fails with
    # this grading's numbers in its message, was reported passed / not reported / failed without them.
    CANARY_PASSED = "canary_passed"
    CANARY_MISSING = "canary_missing"
    CANARY_WITHOUT_SECRET = "canary_without_secret"
    # Planted canaries fail in every honest run, and every runner then exits non-zero: exit 0 with
    # canaries planted means the exit status was forged.
    EXIT_ZERO_WITH_CANARIES = "exit_zero_with_canaries"
    # Tests failed and the trusted test process (LanguageSpec.trusted) says what it refused, most
    # telling first: the channel to the solution process broke (a flood, a protocol violation,
    # the process died); a solution's __exit__ tried to swallow a failed assertion; a solution
    # dunder answered with the wrong type (an __eq__ that is not a bool); the solution asked for
    # what the test process does not give out (a callback's private attributes); an operator
    # between a solution object and a plain value (handle - 5.0); a solution object compared with
    # a plain value (never equal). Only ever replaces tests_failed.
    BRIDGE_BROKEN = "bridge_broken"
    SOLUTION_SWALLOWED_ASSERTION = "solution_swallowed_assertion"
    DUNDER_RESULT_NOT_PLAIN = "dunder_result_not_plain"
    TEST_OBJECT_REFUSED = "test_object_refused"
    HANDLE_OPERATOR_WITH_VALUE = "handle_operator_with_value"
    HANDLE_COMPARED_WITH_VALUE = "handle_compared_with_value"
    # Two solution objects compared of which the runtime shows no state at all (no property,
    # private field, WeakMap entry or captured variable): never equal for want of data (issue 32).
    HANDLES_WITHOUT_DATA = "handles_without_data"
    # The answer key (docs/answer-key.md): a converted assertion's observation, compared on the host
    # with the reference's, was absent (or came fewer times) / differed, came more often, or
    # named an assertion the key does not hold. Only ever replaces a resolved verdict.
    OBSERVATION_MISSING = "observation_missing"
    OBSERVATION_MISMATCH = "observation_mismatch"
    # --- grading (utils/grading.py) ----------------------------------------------------------
    PATCH_APPLY_FAILED = "patch_apply_failed"
    # The patch holds an entry that is not a regular file (a symlink, a submodule, a type or
    # mode change to one): nothing of the patch is read, copied or run.
    NOT_A_REGULAR_FILE = "not_a_regular_file"
    # The solution does not build on its own, without the hidden tests, but builds with them:
    # it reaches into the tests at build time (docker/<lang>/ runners' solo build).
    SOLUTION_NEEDS_TESTS = "solution_needs_tests"
    DISK_LIMIT = "disk_limit"                      # the test run outgrew the disk cap
    # The source policy (utils/judging/source_policy.py) refused a kept file: nothing ran.
    FORBIDDEN_CONSTRUCT = "forbidden_construct"
    # --- one instance end to end (utils/run_instance.py) -------------------------------------
    PATCH_TOO_LARGE = "patch_too_large"
    PATCH_UNPARSEABLE = "patch_unparseable"
    EMPTY_PATCH = "empty_patch"
    INFRASTRUCTURE_FAILED = "infrastructure_failed"  # before the agent ran, after retries
    AGENT_INTERRUPTED = "agent_interrupted"          # while it ran: not retried (model money)
    GRADING_INFRASTRUCTURE_FAILED = "grading_infrastructure_failed"
    UNEXPECTED_ERROR = "unexpected_error"
