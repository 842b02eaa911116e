"""Forged verdicts lose: attackers that change ONLY solution files, against real exercises.

Each forger under tests/fixtures/forgers/<language>/<name>/ is a solution that does not solve
its exercise (its description says how it fails without the forging part) plus code that
forges the verdict from inside the test process: flipping the runner's results, disabling
assertions, rewriting or fabricating the report, forcing exit 0, or sparing only the failures
of tests whose upstream names it embeds (so that planted-looking tests stay failing). Each
one was checked to resolve against the pipeline before canaries (tests/fixtures/forgers/
check.py). Graded by the project's own pipeline, every one must end unresolved, with a reason
that names the forgery (or, for a forger the runner report already exposes, the failure).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .fixtures.forgers.check import grade_forger, graded_ahead, selected
from polyglot_harness.utils.languages import LANGUAGES
from polyglot_harness.utils.outcomes import Isolation, Reason

pytestmark = pytest.mark.docker

FORGERS_DIR = Path(__file__).resolve().parent / "fixtures" / "forgers"
FORGERS = sorted(path.parent for path in FORGERS_DIR.glob("*/*/forger.json"))
FORGERY_REASONS = {Reason.CANARY_PASSED, Reason.CANARY_MISSING, Reason.CANARY_WITHOUT_SECRET, Reason.EXIT_ZERO_WITH_CANARIES}
# Forgers the runner's own report already exposed before canaries (negative controls).
ALREADY_CAUGHT = {"rust/panic_hook_exit": {"tests_failed"}}
# Forgers that now lose before any canary is needed (issue 25, tests/test_hidden_gone.py): the
# child process they start is refused by polyglot-noexec (go, rust), or their shutdown hook
# never runs (the Java runner halts once the launcher returned), so the tests run for real.
STOPPED_BEFORE_CANARIES = {
    "go/reexec_rewrite": {"tests_failed"}, "go/spare_unknown_names": {"tests_failed"},
    "rust/init_array_logfile": {"tests_failed"}, "rust/spare_unknown_names": {"tests_failed"},
    "java/shutdown_hook_xml": {"tests_failed"}, "java/spare_unknown_names": {"tests_failed"},
    # Issue 31's Java runner: the launcher's XML goes to a directory no argument names and the
    # report is written only after the JVM ended; a static initializer that writes its own XML
    # and halts the JVM before any test ends leaves no report at all.
    "java/fabricate_report": {"no_test_results"},
}
# Every test of a file with a canary is renamed (issue 25): the upstream names such a forger
# spares match nothing, so the real failures it meant to flip stay in the report.
ALREADY_CAUGHT.update({f"{language}/spare_unknown_names": {"tests_failed"} for language in LANGUAGES})
# cpp__gigasecond's assertions all go to the C++ answer key since its boost dates are observed
# (2026-11-29): Catch's report holds no failing real test for the forger to spare, its failing
# canaries stay, and its exit 0 is what is caught (the key's mismatch stands behind it).
ALREADY_CAUGHT["cpp/spare_unknown_names"] = {"tests_failed", Reason.EXIT_ZERO_WITH_CANARIES,
                                             Reason.OBSERVATION_MISMATCH}
# A mutated value appears in the instructions as often as its original (issue 32): betting that
# a canary's value is one the instructions never show fails real assertions too (or spares a
# canary).
# With the answer key (docs/answer-key.md), yacht's 29 assertions are all observations: the listener
# flips no verdict of theirs, and the host finds the solution's values wrong.
ALREADY_CAUGHT["cpp/unseen_expected_values"] = {"tests_failed", "canary_passed", "observation_mismatch"}
# Each Go test function runs in a process of its own whose events count for its own test only
# (session 10, red team 14): a binary that prints a whole fabricated stream and exits 0 before
# any test ran leaves no event of any test.
ALREADY_CAUGHT["go/fabricate_output"] = {"no_test_results", "canary_missing"}
# The reference plus a panic hook printing every 5-digit number in place of the message: only
# the canaries fail, without their framework's format.
ALREADY_CAUGHT["rust/de_bruijn_panic_message"] = {"canary_without_secret"}


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_every_language_has_forgers_of_each_class(language: str):
    names = {path.name for path in FORGERS if path.parent.name == language}
    assert "spare_unknown_names" in names, language
    assert len(names) >= 3, (language, names)


@pytest.fixture(scope="module")
def ahead(request, provider, real_dataset):
    with graded_ahead(provider, real_dataset, selected(request, {
            "test_forged_verdict_is_unresolved_with_a_forgery_reason": lambda p: [(p["forger"], {})]})):
        yield


@pytest.mark.parametrize("forger", FORGERS, ids=[f"{p.parent.name}/{p.name}" for p in FORGERS])
def test_forged_verdict_is_unresolved_with_a_forgery_reason(forger: Path, provider, real_dataset, ahead):
    meta = json.loads((forger / "forger.json").read_text())
    outcome = grade_forger(provider, real_dataset, forger)
    key = f"{forger.parent.name}/{forger.name}"
    assert not outcome.verdict.resolved, f"{key} ({meta['description']}) was graded resolved"
    assert outcome.canaries, f"{key}: no canary was planted into {meta['instance_id']}"
    allowed = ALREADY_CAUGHT.get(key) or STOPPED_BEFORE_CANARIES.get(key) or FORGERY_REASONS
    if outcome.isolation == Isolation.TRUSTED_PROCESS:
        # The forging code runs in the solution process, where no runner exists: the forger
        # simply fails the tests it does not solve (tests/test_trusted_python.py, tests/test_js_trusted_grading.py).
        allowed = allowed | {Reason.TESTS_FAILED}
    assert outcome.verdict.reason in allowed, (key, outcome.verdict)


@pytest.mark.parametrize("forger", FORGERS, ids=[f"{p.parent.name}/{p.name}" for p in FORGERS])
def test_forgers_leave_an_audit_trail(forger: Path, real_dataset):
    """The `suspicious` listing is never the defence, but every forger shows up in it."""
    from .fixtures.forgers.check import forger_files
    from polyglot_harness.utils.records.dataset import load_dataset
    from polyglot_harness.utils.pipeline.expected_tests import patch_writing
    from polyglot_harness.utils.judging.patches import audit_patch, filter_patch
    from polyglot_harness.utils.languages import suspicious_patterns

    meta = json.loads((forger / "forger.json").read_text())
    instance = {i.instance_id: i for i in load_dataset(real_dataset)}[meta["instance_id"]]
    patch = patch_writing(instance, forger_files(forger))
    filtered = filter_patch(patch, instance.language_spec, instance.solution_paths, instance.hidden_paths)
    assert filtered.kept_paths and audit_patch(filtered.text, suspicious_patterns()), forger
