"""The solution builds without the tests (issue 31, "the solution builds, and loads, without the
tests"): go and rust.

Before the hidden tests are compiled, the grading runner (docker/<lang>/polyglot-*-test) builds
the solution on its own: go, `go build .` with every *_test.go moved out of the package
directory; rust, the library and its cfg(test) unit-test target (`cargo build --lib --tests`) with tests/
parked in a private directory. A solution that needs a hidden test to build fails that build,
nothing of it runs, and the verdict is `unresolved`, reason `solution_needs_tests`.

The attackers under tests/fixtures/solo_build/<language>/<name>/ change solution files only,
on real exercises: go, a solution that names the tests' case table (a package variable of its
own package) or embeds the test files with a `//go:embed *` glob; rust, a solution that
includes the hidden test file at compile time through a local `macro_rules!` (issue 31's
rust__wordy). Each has a control, `<name>/control/`: the same files without the trick, which
build alone, run, and fail the tests as before. `source_policy` in forger.json says whether
the source policy is on: off where it would refuse the trick, so that this layer is tested
on its own.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .fixtures.forgers.check import grade_forger, graded_ahead, selected

pytestmark = pytest.mark.docker

ATTACKERS_DIR = Path(__file__).resolve().parent / "fixtures" / "solo_build"
ATTACKERS = sorted(path.parent for path in ATTACKERS_DIR.glob("*/*/forger.json"))
IDS = [f"{path.parent.name}/{path.name}" for path in ATTACKERS]


def options(forger_dir: Path) -> dict:
    """The layer on its own: without Rust's answer key (session 10), whose rewritten test file
    no longer compiles inside the library an attacker includes it into (still unresolved, as
    build_or_run_failed) and whose observations, not libtest, fail a control's wrong answers."""
    meta = json.loads((forger_dir / "forger.json").read_text())
    return {"source_policy": meta["source_policy"], "key": False}


def grade(provider, dataset: Path, forger_dir: Path):
    meta = json.loads((forger_dir / "forger.json").read_text())
    return meta, grade_forger(provider, dataset, forger_dir, **options(forger_dir))


@pytest.fixture(scope="module")
def ahead(request, provider, real_dataset):
    with graded_ahead(provider, real_dataset, selected(request, {
        "test_solution_that_builds_only_with_the_hidden_tests_is_refused":
            lambda p: [(p["attacker"], options(p["attacker"]))],
        "test_the_same_files_without_the_trick_build_alone_and_run":
            lambda p: [(p["attacker"] / "control", options(p["attacker"] / "control"))],
    })):
        yield


@pytest.mark.parametrize("attacker", ATTACKERS, ids=IDS)
def test_solution_that_builds_only_with_the_hidden_tests_is_refused(attacker: Path, provider, real_dataset, ahead):
    meta, outcome = grade(provider, real_dataset, attacker)
    assert not outcome.verdict.resolved, (attacker.name, outcome.verdict)
    assert str(outcome.verdict.reason) in meta["reasons"], (attacker.name, outcome.verdict)
    assert not outcome.results.cases, "no test may have run"
    for evidence in meta["evidence"]:
        assert evidence in outcome.verdict.detail, (attacker.name, evidence, outcome.verdict.detail)


@pytest.mark.parametrize("attacker", ATTACKERS, ids=IDS)
def test_the_same_files_without_the_trick_build_alone_and_run(attacker: Path, provider, real_dataset, ahead):
    meta, outcome = grade(provider, real_dataset, attacker / "control")
    assert not outcome.verdict.resolved, (attacker.name, outcome.verdict)
    assert str(outcome.verdict.reason) in meta["reasons"], (attacker.name, outcome.verdict)
    assert outcome.results.cases, "the tests ran"
