"""The Rust answer key on real instances, in real Docker (issue 32, docs/answer-key.md "Rust").

Converted assertions carry no verdict in the test binary: it reports the solution's values and
the host compares them with the key the reference's run recorded at preparation. Canaries are
off in these gradings, so what catches an attack is the key alone. Attacks: a wrong luhn-from
that reads its own process's memory in safe Rust and answers what the calling assertion wants
(red team 11's technique, tests/fixtures/memory_readers/luhn_from.rs.txt); an always-equal
PartialEq on forth's Error enum over a wrong error. Controls: the references, the reader
resolving when the key is off (it does read the assertion's polarity), and a correct forth with
renumbered variants and a Debug printing every error the same. The solutions' other files come
from the dataset's references.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .fixtures.forgers.check import grade_forger, graded_ahead, once, reference_forger, selected
from polyglot_harness.utils.outcomes import Reason
from polyglot_harness.utils.records.dataset import load_dataset

pytestmark = pytest.mark.docker

KEY_REASONS = {Reason.OBSERVATION_MISMATCH, Reason.OBSERVATION_MISSING}
# Red team 11's reader, in our words (tests/test_truth_canaries.py uses it against the truth canaries).
READER = (Path(__file__).resolve().parent / "fixtures" / "memory_readers" / "luhn_from.rs.txt").read_text()
DERIVED_ERROR = "#[derive(Debug, PartialEq, Eq)]\npub enum Error {\n    DivisionByZero,\n    StackUnderflow,\n    UnknownWord,\n    InvalidWord,\n}\n"
# Every error "equals" every other, and a division by zero is reported as a stack underflow.
ALWAYS_EQUAL_ERROR = """#[derive(Debug)]
pub enum Error {
    DivisionByZero,
    StackUnderflow,
    UnknownWord,
    InvalidWord,
}
impl PartialEq for Error {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}
impl Eq for Error {}
"""
# The same errors in another order, other discriminants, and a Debug that says nothing.
RENUMBERED_ERROR = """pub enum Error {
    InvalidWord = 40,
    UnknownWord = 30,
    StackUnderflow = 20,
    DivisionByZero = 10,
}
impl std::fmt::Debug for Error {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(out, "an error")
    }
}
impl PartialEq for Error {
    fn eq(&self, other: &Self) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }
}
impl Eq for Error {}
"""


def _write(directory: Path, dataset: Path, instance_id: str, edit=lambda path, text: text) -> Path:
    """The reference's files, each passed through `edit(relative path, text)`."""
    return reference_forger(directory, dataset, instance_id, edit, "rust key")


def _forth(error_block: str, wrong: bool):
    def edit(relative: str, text: str) -> str:
        if relative != "src/lib.rs":
            return text
        assert DERIVED_ERROR in text, "the reference's Error changed: update this fixture"
        text = text.replace(DERIVED_ERROR, error_block)
        return text.replace("ok_or(Error::DivisionByZero)", "ok_or(Error::StackUnderflow)") if wrong else text
    return edit


# Forgers are made once in a module-scoped directory, one deterministic name per case: the
# module's `ahead` grades them two at a time while the tests run, and each test takes its own.
KEY_ONLY = {"canaries": False}
NO_KEY = {"canaries": False, "key": False}


def _reference(made: Path, dataset: Path, instance_id: str) -> Path:
    return once(made / f"reference-{instance_id}", lambda d: _write(d, dataset, instance_id))


def _forth_forger(made: Path, dataset: Path, name: str, error_block: str, wrong: bool) -> Path:
    return once(made / name, lambda d: _write(d, dataset, "rust__forth", _forth(error_block, wrong=wrong)))


def _always_equal(made: Path, dataset: Path) -> Path:
    return _forth_forger(made, dataset, "forth-always-equal", ALWAYS_EQUAL_ERROR, True)


def _renumbered(made: Path, dataset: Path) -> Path:
    return _forth_forger(made, dataset, "forth-renumbered", RENUMBERED_ERROR, False)


@pytest.fixture(scope="module")
def ahead(request, provider, real_dataset, made):
    with graded_ahead(provider, real_dataset, selected(request, {
        "test_reference_resolves_with_its_key": lambda p: [(_reference(made, real_dataset, p["instance_id"]), KEY_ONLY)],
        "test_a_solution_reading_its_callers_assertion_is_unresolved_by_the_key": lambda p: [
            (_reader(made, real_dataset), KEY_ONLY)],
        "test_the_reader_does_read_the_assertion_without_the_key": lambda p: [(_reader(made, real_dataset), NO_KEY)],
        "test_always_equal_partial_eq_on_an_enum_is_unresolved": lambda p: [(_always_equal(made, real_dataset), KEY_ONLY)],
        "test_correct_solution_with_renumbered_enum_and_odd_debug_resolves": lambda p: [
            (_renumbered(made, real_dataset), KEY_ONLY)],
    })):
        yield


@pytest.mark.parametrize("instance_id", ("rust__luhn-from", "rust__forth", "rust__acronym"))
def test_reference_resolves_with_its_key(instance_id: str, provider, real_dataset, made, ahead):
    instance = {i.instance_id: i for i in load_dataset(real_dataset)}[instance_id]
    assert instance.observation_key, f"{instance_id}: preparation recorded no answer key"
    outcome = grade_forger(provider, real_dataset, _reference(made, real_dataset, instance_id), canaries=False)
    assert outcome.verdict.resolved, (instance_id, outcome.verdict)
    assert outcome.converted == frozenset(instance.observation_key)


def _reader(made: Path, dataset: Path) -> Path:
    return once(made / "luhn-from-reader",
                lambda d: _write(d, dataset, "rust__luhn-from", lambda relative, text: READER if relative == "src/lib.rs" else text))


def test_a_solution_reading_its_callers_assertion_is_unresolved_by_the_key(provider, real_dataset, made, ahead):
    outcome = grade_forger(provider, real_dataset, _reader(made, real_dataset), canaries=False)
    assert not outcome.verdict.resolved
    assert outcome.verdict.reason in KEY_REASONS, outcome.verdict
    assert "tests/luhn-from.rs:L" in outcome.verdict.detail


def test_the_reader_does_read_the_assertion_without_the_key(provider, real_dataset, made, ahead):
    """Control of the attack: with the key off (upstream's `assert!`s in the binary) and no
    canary, the reader resolves without computing anything."""
    outcome = grade_forger(provider, real_dataset, _reader(made, real_dataset), canaries=False, key=False)
    assert outcome.verdict.resolved, outcome.verdict


def test_always_equal_partial_eq_on_an_enum_is_unresolved(provider, real_dataset, made, ahead):
    forger = _always_equal(made, real_dataset)
    outcome = grade_forger(provider, real_dataset, forger, canaries=False)
    assert outcome.verdict.reason == Reason.OBSERVATION_MISMATCH, outcome.verdict
    assert "enum:StackUnderflow" in outcome.verdict.detail


def test_correct_solution_with_renumbered_enum_and_odd_debug_resolves(provider, real_dataset, made, ahead):
    control = _renumbered(made, real_dataset)
    outcome = grade_forger(provider, real_dataset, control, canaries=False)
    assert outcome.verdict.resolved, outcome.verdict
