"""Two solution objects compared where the test process cannot see their state (issue 32).

Python and JavaScript tests run in a trusted process, but where a test compares two of the
solution's own objects the solution still had a say: a JavaScript class keeping its state in a
module-level WeakMap (or `#private` fields) showed jest no data, so any two instances compared
equal (red team 2 resolved javascript__rational-numbers without solving it); in Python the
class's own `__eq__` decides. Now:
- the JavaScript solution process reports what the runtime sees of an object's hidden state
  (V8's inspector: `#private` fields, what a WeakMap or Map its methods close over keeps for
  it, what its own methods capture), the test process compares that too, and two objects that
  show no state at all are never equal (`handles_without_data`);
- an expected value built of constants (`new Rational(7, 6)`, `SgfTree(properties=...)`) is
  mutable: its canary asserts two different values of the solution's type equal, so a type
  whose equality always holds passes the copy (`canary_passed`).
Each attacker under tests/fixtures/opaque_state/<language>/<name>/ (real exercises, solution
files only, written knowing the defence) ends unresolved with the reason named in its
forger.json; the honest private-state solutions (made, written for this test) resolve.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .fixtures.forgers.check import grade_forger, graded_ahead, once, selected
from polyglot_harness.utils.judging.canaries import Planter
from polyglot_harness.utils.languages import javascript, python

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "opaque_state"
CASES = sorted(path.parent for path in FIXTURES.glob("*/*/forger.json"))
SPECS = {"javascript": ("rational-numbers", "complex-numbers"), "python": ("sgf-parsing",)}


def meta(case: Path) -> dict:
    return json.loads((case / "forger.json").read_text())


def constructed_tests(planter: Planter, text: str) -> set[str]:
    """The tests whose first mutable assertion compares a value built of constants."""
    names = set()
    for unit in planter.find_units(text):
        found = planter.mutator.assertions(text[unit.start:unit.end])
        if found and found[0].failure(0) in (javascript._object_failure("toEqual"), python._object_failure(0)):
            names.add(unit.name)
    return names


def spec_text(benchmark: Path, instance_id: str) -> tuple[Planter, str]:
    language, slug = instance_id.split("__")
    folder = benchmark / language / "exercises" / "practice" / slug
    if language == "javascript":
        return javascript.PLANTER, javascript.unskip_javascript(next(folder.glob("*.spec.js")).read_text())
    return python.PLANTER, next(folder.glob("*_test.py")).read_text()


class EndsWithAny:
    """A canary filter keeping the names that end with one of `tests`: equal for equal tests
    (a lambda never is), so a test finds the grading its module asked for ahead."""

    def __init__(self, tests) -> None:
        self.tests = frozenset(tests)

    def __call__(self, name: str) -> bool:
        return any(name.endswith(t) for t in self.tests)

    def __eq__(self, other) -> bool:
        return isinstance(other, EndsWithAny) and other.tests == self.tests

    def __hash__(self) -> int:
        return hash(self.tests)


def constructed_filter(benchmark: Path, instance_id: str) -> dict:
    """grade_forger's options: canaries restricted to the tests comparing constructed values."""
    planter, text = spec_text(benchmark, instance_id)
    return {"canary_filter": EndsWithAny(constructed_tests(planter, text))}


def python_reference(directory: Path, benchmark: Path) -> Path:
    """The benchmark's sgf-parsing reference as a forger directory, made once under `directory`."""
    def make(control: Path) -> None:
        reference = benchmark / "python" / "exercises" / "practice" / "sgf-parsing" / ".meta" / "example.py"
        (control / "files").mkdir(parents=True)
        shutil.copy(reference, control / "files" / "sgf_parsing.py")
        (control / "forger.json").write_text(json.dumps({"instance_id": "python__sgf-parsing"}))
    return once(directory / "reference", make)


@pytest.fixture(scope="module")
def ahead(request, provider, real_dataset, benchmark_checkout, made):
    with graded_ahead(provider, real_dataset, selected(request, {
        "test_opaque_state_attack_is_caught_and_honest_private_state_resolves":
            lambda p: [(p["case"], constructed_filter(benchmark_checkout, meta(p["case"])["instance_id"]))],
        "test_the_python_reference_resolves_with_equality_canaries":
            lambda p: [(python_reference(made, benchmark_checkout),
                        constructed_filter(benchmark_checkout, "python__sgf-parsing"))],
    })):
        yield


def test_an_expected_value_built_of_constants_is_mutable(benchmark_checkout):
    planter, text = spec_text(benchmark_checkout, "javascript__rational-numbers")
    assert len(constructed_tests(planter, text)) == 33  # of 36: the 3 expreal tests compare numbers
    planter, text = spec_text(benchmark_checkout, "javascript__complex-numbers")
    assert len(constructed_tests(planter, text)) == 15  # the others read .real/.imag/.abs as numbers
    planter, text = spec_text(benchmark_checkout, "python__sgf-parsing")
    assert len(constructed_tests(planter, text)) == 9  # trees bound on one line; the rest raise


def test_only_the_solutions_own_types_count_as_constructed():
    assert javascript._constructed("new Rational(-7, 6)")
    assert javascript._constructed("new ComplexNumber(0.5, 'x')")
    assert not javascript._constructed("new Date(2013, 4, 13)")  # a builtin crosses as data
    assert not javascript._constructed("new Rational(a, 6)")  # a variable: not a constant
    assert python._constructed('SgfTree(properties={"A": ["B"]}, children=[SgfTree({"B": ["C"]})])')
    assert not python._constructed("SgfTree(properties=props)")
    assert not python._constructed("parse('(;)')")


@pytest.mark.docker
@pytest.mark.parametrize("case", CASES, ids=[f"{p.parent.name}/{p.name}" for p in CASES])
def test_opaque_state_attack_is_caught_and_honest_private_state_resolves(case: Path, provider, real_dataset,
                                                                        benchmark_checkout, ahead):
    """Canaries restricted to the tests comparing constructed values: the attacks are about
    those (a grading that drew only the other tests would catch them by chance or not)."""
    expected = meta(case)["expect"]
    outcome = grade_forger(provider, real_dataset, case, **constructed_filter(benchmark_checkout, meta(case)["instance_id"]))
    assert outcome.isolation == "trusted_process", outcome.isolation
    verdict = outcome.verdict
    if expected == "resolved":
        assert verdict.resolved, (case.name, verdict.reason, verdict.detail)
    else:
        assert not verdict.resolved and str(verdict.reason) == expected, (case.name, verdict.reason, verdict.detail)


@pytest.mark.docker
def test_the_python_reference_resolves_with_equality_canaries(provider, real_dataset, benchmark_checkout, made,
                                                              ahead):
    """The control of sgf_always_equal: the benchmark's reference (read from the checkout, not
    kept here) passes the real tree tests and fails their copies with another literal."""
    control = python_reference(made, benchmark_checkout)
    outcome = grade_forger(provider, real_dataset, control, **constructed_filter(benchmark_checkout, "python__sgf-parsing"))
    assert outcome.verdict.resolved, (outcome.verdict.reason, outcome.verdict.detail)
