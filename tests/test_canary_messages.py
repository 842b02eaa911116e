"""Canary failure messages end to end (issue 25, layer 4): real exercise, real grading, Docker.

Messages are capped before the canaries are matched, and matched against the framework's exact
format. A correct solution that prints a lot still resolves (libtest keeps the tail of a
test's output, where its panic message is); the forger that replaces every panic message by a
string holding every 5-digit number is in tests/test_forgery.py (rust/de_bruijn_panic_message).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .fixtures.forgers.check import grade_forger, graded_ahead, selected

pytestmark = pytest.mark.docker

NOISY_REFERENCE = Path(__file__).resolve().parent / "fixtures" / "canary_fidelity" / "rust" / "noisy_reference"


@pytest.fixture(scope="module")
def ahead(request, provider, real_dataset):
    with graded_ahead(provider, real_dataset, selected(request, {
        "test_a_correct_solution_printing_every_five_digit_number_still_resolves":
            lambda p: [(NOISY_REFERENCE, {"key": False}), (NOISY_REFERENCE, {})],
    })):
        yield


def test_a_correct_solution_printing_every_five_digit_number_still_resolves(provider, real_dataset, ahead):
    # The canaries' messages on their own: rust__acronym's assertions all go to Rust's answer key
    # (session 10), which leaves only fallback canaries; without the key they are mutated copies.
    outcome = grade_forger(provider, real_dataset, NOISY_REFERENCE, key=False)
    assert outcome.canaries and all(canary.mutation for canary in outcome.canaries)
    assert outcome.verdict.resolved, outcome.verdict
    keyed = grade_forger(provider, real_dataset, NOISY_REFERENCE)
    assert keyed.converted and keyed.verdict.resolved, keyed.verdict
