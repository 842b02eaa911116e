"""The C++ answer key on real instances, in real Docker (issue 32, docs/answer-key.md).

Converted assertions carry no verdict in the test binary: it reports the solution's values and
the host compares them with the key the reference's run recorded at preparation. Attacks are
written after the defence: a wrong solution whose report is rewritten to say every test passed
(fork_rewrite's forging code, tests/fixtures/cpp_key/rewrite_report.inc), and an always-equal
operator== on perfect-numbers' enum. Canaries are off in these gradings, so what catches them
is the key alone. Controls: the references, and a correct solution with an odd operator<<.
Solution files are written here (ours); the reference's header is read from the dataset.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .fixtures.forgers.check import grade_forger, graded_ahead, once, reference_forger, selected
from polyglot_harness.utils.outcomes import Reason
from polyglot_harness.utils.records.dataset import load_dataset

pytestmark = pytest.mark.docker

REWRITE_REPORT = (Path(__file__).resolve().parent / "fixtures" / "cpp_key" / "rewrite_report.inc").read_text()
KEY_REASONS = {Reason.OBSERVATION_MISMATCH, Reason.OBSERVATION_MISSING}

WRONG_ALL_YOUR_BASE = """#include "all_your_base.h"
namespace all_your_base {
std::vector<unsigned int> convert(unsigned int, const std::vector<unsigned int>& digits, unsigned int) {
    return digits;  // wrong: the input unchanged
}
}
"""
# One second short of a gigasecond: boost's ptime is observed by its fields (docs/answer-key.md).
WRONG_GIGASECOND = """#include "gigasecond.h"
namespace gigasecond {
boost::posix_time::ptime advance(const boost::posix_time::ptime& start) {
    return start + boost::posix_time::seconds(999999999);
}
}
"""
WRONG_ALLERGIES = """#include "allergies.h"
namespace allergies {
allergy_test::allergy_test(unsigned int score) : result(score) {}
bool allergy_test::is_allergic_to(std::string const&) const { return result != 0; }  // wrong
std::unordered_set<std::string> allergy_test::get_allergies() const { return {}; }  // wrong
}
"""
# Every classification "equals" every other; classify always answers deficient.
ALWAYS_EQUAL_HEADER = """#pragma once
namespace perfect_numbers {
enum class classification { deficient, perfect, abundant };
inline bool operator==(classification, classification) { return true; }
inline bool operator!=(classification, classification) { return false; }
classification classify(int n);
}
"""
ALWAYS_EQUAL_SOURCE = """#include "perfect_numbers.h"
#include <stdexcept>
namespace perfect_numbers {
classification classify(int n) {
    if (n < 1) throw std::domain_error("not a natural number");
    return classification::deficient;
}
}
"""
# A correct perfect-numbers with its enumerators in another order and an operator<< that
# prints every value the same: the observer reads neither.
ODD_PRINTER_HEADER = """#pragma once
#include <ostream>
namespace perfect_numbers {
enum class classification { abundant = 7, deficient = 3, perfect = 11 };
inline std::ostream& operator<<(std::ostream& out, classification) { return out << "some class"; }
classification classify(int n);
}
"""
ODD_PRINTER_SOURCE = """#include "perfect_numbers.h"
#include <stdexcept>
namespace perfect_numbers {
classification classify(int n) {
    if (n < 1) throw std::domain_error("not a natural number");
    long long sum = 0;
    for (long long d = 1; d * d <= n; ++d) {
        if (n % d == 0) { sum += d; if (d * d != n) sum += n / d; }
    }
    sum -= n;
    return sum == n ? classification::perfect : sum > n ? classification::abundant : classification::deficient;
}
}
"""


def _write(directory: Path, dataset: Path, instance_id: str, files: dict[str, str]) -> Path:
    """The reference's files, those of `files` (by suffix) replacing them."""
    return reference_forger(directory, dataset, instance_id,
                            lambda relative, text: files.get(Path(relative).suffix, text), "cpp key")


# Forgers are made once in a module-scoped directory, one deterministic name per case: the
# module's `ahead` grades them two at a time while the tests run, and each test takes its own.
KEY_ONLY = {"canaries": False}
REPORT_REWRITER = Path(__file__).resolve().parent / "fixtures" / "forgers_policy_only" / "cpp" / "report_rewriter"


def _reference(made: Path, dataset: Path, instance_id: str) -> Path:
    return once(made / f"reference-{instance_id}", lambda d: _write(d, dataset, instance_id, {}))


def _rewritten(made: Path, dataset: Path, instance_id: str, wrong: str) -> Path:
    return once(made / f"rewritten-{instance_id}",
                lambda d: _write(d, dataset, instance_id, {".cpp": wrong + "\n" + REWRITE_REPORT}))


def _always_equal(made: Path, dataset: Path) -> Path:
    return once(made / "always-equal", lambda d: _write(d, dataset, "cpp__perfect-numbers",
                                                        {".h": ALWAYS_EQUAL_HEADER, ".cpp": ALWAYS_EQUAL_SOURCE}))


def _odd_printer(made: Path, dataset: Path) -> Path:
    return once(made / "odd-printer", lambda d: _write(d, dataset, "cpp__perfect-numbers",
                                                       {".h": ODD_PRINTER_HEADER, ".cpp": ODD_PRINTER_SOURCE}))


@pytest.fixture(scope="module")
def ahead(request, provider, real_dataset, made):
    with graded_ahead(provider, real_dataset, selected(request, {
        "test_reference_resolves_with_its_key": lambda p: [(_reference(made, real_dataset, p["instance_id"]), KEY_ONLY)],
        "test_rewritten_report_is_unresolved_by_the_key": lambda p: [
            (_rewritten(made, real_dataset, p["instance_id"], p["wrong"]), KEY_ONLY)],
        "test_always_equal_operator_on_an_enum_is_unresolved": lambda p: [(_always_equal(made, real_dataset), KEY_ONLY)],
        "test_correct_solution_with_odd_printer_and_enum_order_resolves": lambda p: [
            (_odd_printer(made, real_dataset), KEY_ONLY)],
        "test_a_solution_reading_the_test_binarys_memory_is_unresolved_by_the_key": lambda p: [(REPORT_REWRITER, KEY_ONLY)],
    })):
        yield


@pytest.mark.parametrize("instance_id", ("cpp__all-your-base", "cpp__allergies", "cpp__perfect-numbers",
                                         "cpp__gigasecond", "cpp__meetup"))
def test_reference_resolves_with_its_key(instance_id: str, provider, real_dataset, made, ahead):
    instance = {i.instance_id: i for i in load_dataset(real_dataset)}[instance_id]
    assert instance.observation_key, f"{instance_id}: preparation recorded no answer key"
    outcome = grade_forger(provider, real_dataset, _reference(made, real_dataset, instance_id), canaries=False)
    assert outcome.verdict.resolved, (instance_id, outcome.verdict)
    assert outcome.converted == frozenset(instance.observation_key)


@pytest.mark.parametrize("instance_id, wrong", (("cpp__all-your-base", WRONG_ALL_YOUR_BASE),
                                                ("cpp__allergies", WRONG_ALLERGIES),
                                                ("cpp__gigasecond", WRONG_GIGASECOND)))
def test_rewritten_report_is_unresolved_by_the_key(instance_id: str, wrong: str, provider, real_dataset, made, ahead):
    forger = _rewritten(made, real_dataset, instance_id, wrong)
    outcome = grade_forger(provider, real_dataset, forger, canaries=False)
    assert not outcome.verdict.resolved
    assert outcome.verdict.reason in KEY_REASONS, (instance_id, outcome.verdict)
    assert "assertion" in outcome.verdict.detail and ".cpp:L" in outcome.verdict.detail


def test_always_equal_operator_on_an_enum_is_unresolved(provider, real_dataset, made, ahead):
    forger = _always_equal(made, real_dataset)
    outcome = grade_forger(provider, real_dataset, forger, canaries=False)
    assert outcome.verdict.reason == Reason.OBSERVATION_MISMATCH, outcome.verdict


def test_correct_solution_with_odd_printer_and_enum_order_resolves(provider, real_dataset, made, ahead):
    control = _odd_printer(made, real_dataset)
    outcome = grade_forger(provider, real_dataset, control, canaries=False)
    assert outcome.verdict.resolved, outcome.verdict


def test_a_solution_reading_the_test_binarys_memory_is_unresolved_by_the_key(provider, real_dataset, ahead):
    """Red team 2's winner (tests/fixtures/forgers_policy_only/cpp/report_rewriter): allergic to
    nothing, it reads the test binary (/proc/self/exe) for the expected values and rewrites
    Catch's report. The source policy refuses its file API; with the policy off, the key is what
    catches it: allergies' assertions hold no expected value in the binary any more."""
    forger = REPORT_REWRITER
    outcome = grade_forger(provider, real_dataset, forger, canaries=False)
    assert not outcome.verdict.resolved
    assert outcome.verdict.reason in KEY_REASONS, outcome.verdict
