"""No channel from the hidden C++ test to the solution at build time (issue 31).

docker/cpp/polyglot-cpp-test compiles the solution's translation unit before the hidden test is
anywhere the compiler could be told to look (solo build), then compiles the test translation
unit from a private directory after polyglot-cpp-includes read the compiler's own record of it:
nothing a solution file includes may be a test-side file or the test itself, and no macro of the
solution's may be spelled by the test or Catch's header. Each trick below is written into the
instance's real reference (read from the dataset; no benchmark code is kept here), on real
exercises, with the source policy off (it refuses most of these on sight): each must end
`solution_needs_tests` with the line that names what caught it; the control (the reference
without the trick) resolves. Every trick is spelled with digraphs (`%:`, `%:%:`), which the
compiler reads and the old policy reader did not.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .fixtures.forgers.check import grade_forger, graded_ahead, once, selected
from polyglot_harness.utils.outcomes import Reason
from polyglot_harness.utils.records.dataset import load_dataset

pytestmark = pytest.mark.docker

TRICKS = Path(__file__).resolve().parent / "fixtures" / "cpp_channels"
INSTANCES = ("cpp__all-your-base", "cpp__sublist")
# name: ({solution file suffix: (trick file or text, "before"/"after" the reference)}, evidence)
ATTACKS = {
    # The solution TU includes the test by name: the test is nowhere near the solo build.
    "include_by_name": ({".cpp": ("include_by_name.cpp", "before")}, "No such file or directory"),
    # A stringized, computed include with a comment inside the directive: the same.
    "computed_include": ({".cpp": ("computed_include.cpp", "before")}, "No such file or directory"),
    # The header re-reads the test TU through __BASE_FILE__: the test TU is compiled with
    # -fmacro-prefix-map, so __BASE_FILE__ names the test's old path, where it no longer is; the
    # macro tables show the macros the header defined to read it with. (A re-inclusion the
    # record shows, "includes the test file itself", is pinned in tests/test_cpp_reader.py.)
    "include_base_file": ({".h": ("include_base_file.h", "after"), ".cpp": ("%:define POLY_SOLUTION\n", "before")},
                          "which the hidden test or its framework spells"),
    # The header defines Catch's guard and the test's macros: the macro tables show it.
    "rewrite_test_macros": ({".h": ("rewrite_test_macros.h", "after")}, "which the hidden test or its framework spells"),
    # The header includes Catch's header from test/ (to wrap its macros): the include record shows it.
    "include_catch_header": ({".h": ("include_catch_header.h", "after"), ".cpp": ("%:define POLY_SOLUTION\n", "before")},
                             "neither a solution file nor a system header"),
}


def _trick_text(spec: str, stem: str) -> str:
    path = TRICKS / spec
    text = path.read_text() if path.suffix and path.is_file() else spec
    return text.replace("TESTFILE", f"{stem}_test.cpp").replace("TESTSTEM", f"{stem}_test")


def _write_forger(directory: Path, dataset: Path, instance_id: str, tricks: dict[str, tuple[str, str]]) -> Path:
    instance = {i.instance_id: i for i in load_dataset(dataset)}[instance_id]
    stem = instance_id.split("__", 1)[1].replace("-", "_")
    files = directory / "files"
    reference = dataset / instance.reference_dir
    for source in sorted(path for path in reference.rglob("*") if path.is_file()):
        relative, content = source.relative_to(reference).as_posix(), source.read_text()
        target = files / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        trick = tricks.get(Path(relative).suffix)
        if trick:
            text = _trick_text(trick[0], stem)
            content = text + "\n" + content if trick[1] == "before" else content + "\n" + text
        target.write_text(content)
    (directory / "forger.json").write_text(json.dumps({"instance_id": instance_id, "description": str(tricks)}))
    return directory


# The channel on its own, as every grading here runs: no canaries, no answer key.
CHANNEL_ONLY = {"canaries": False, "key": False}


def _forger(made: Path, dataset: Path, instance_id: str, attack: str | None) -> Path:
    """The forger of `attack` (None: the reference without a trick) on `instance_id`, made once
    in the module-scoped directory: the module's `ahead` may be grading it already."""
    tricks = ATTACKS[attack][0] if attack else {}
    return once(made / f"{attack or 'reference'}-{instance_id}",
                lambda d: _write_forger(d, dataset, instance_id, tricks))


@pytest.fixture(scope="module")
def ahead(request, provider, real_dataset, made):
    with graded_ahead(provider, real_dataset, selected(request, {
        "test_reference_without_trick_resolves": lambda p: [
            (_forger(made, real_dataset, p["instance_id"], None), CHANNEL_ONLY)],
        "test_solution_cannot_reach_the_hidden_test_at_build_time": lambda p: [
            (_forger(made, real_dataset, p["instance_id"], p["attack"]), CHANNEL_ONLY)],
    })):
        yield


@pytest.mark.parametrize("instance_id", INSTANCES)
def test_reference_without_trick_resolves(instance_id: str, provider, real_dataset, made, ahead):
    forger = _forger(made, real_dataset, instance_id, None)
    outcome = grade_forger(provider, real_dataset, forger, canaries=False, key=False)  # as the attacks run
    assert outcome.verdict.resolved, (instance_id, outcome.verdict)


@pytest.mark.parametrize("instance_id", INSTANCES)
@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_solution_cannot_reach_the_hidden_test_at_build_time(attack: str, instance_id: str, provider, real_dataset,
                                                             made, ahead):
    tricks, evidence = ATTACKS[attack]
    forger = _forger(made, real_dataset, instance_id, attack)
    # The channel on its own: no canaries, and no answer key (its rewrite of the hidden test
    # changes the text these attacks compile into the solution; an attack written for the
    # rewritten text meets the same solo build).
    outcome = grade_forger(provider, real_dataset, forger, canaries=False, key=False)
    assert not outcome.verdict.resolved, (attack, instance_id)
    assert outcome.verdict.reason == Reason.SOLUTION_NEEDS_TESTS, (attack, instance_id, outcome.verdict)
    assert evidence in outcome.verdict.detail, (attack, outcome.verdict.detail)
