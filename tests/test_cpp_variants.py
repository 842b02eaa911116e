"""C++'s fresh variants (issue 35; utils/languages/cpp_variants.py, docs/variants-cpp.md): the
copy of a test all of whose assertions the answer key holds, one input changed, every assertion
converted into an observation, judged on the host by the reference's observations of the copy.

Pure, on a small test file and stub written here: which tests qualify, which literals are inputs,
what the copy's text holds (no expected value), the reading of a probe's observations, the
grading side's judgement of a copy's observations and the planting of a copy from the pristine
text beside a converted file. Then Docker, on real C++ exercises of ../shared/data prepared with
variants (the gate's dataset, or POLYGLOT_CPP_VARIANTS_DATASET): every reference passes its
variants; the memorizer (tests/fixtures/variants/cpp_memorizer.py: a table built from the hidden
tests at test time) is resolved upstream and NOT on variants; honest solutions written from the
instructions (tests/fixtures/variants/honest/cpp/) fail no variant.
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
from pathlib import Path

import pytest

from polyglot_harness.utils.judging.answer_key import parse_observations
from polyglot_harness.utils.judging.canaries import apply_edits
from polyglot_harness.utils.judging.runner_results import FAILED, PASSED
from polyglot_harness.utils.judging.runner_results import TestCase as Case
from polyglot_harness.utils.judging.variants import KeyedCandidate, Variant, observed_key, plant_variants
from polyglot_harness.utils.languages import cpp_key
from polyglot_harness.utils.languages.cpp import PLANTER
from polyglot_harness.utils.languages.cpp_variants import for_instance, read
from polyglot_harness.utils.pipeline.grading import keyed_variant_cases, variant_names
from polyglot_harness.utils.pipeline.variant_recording import choose

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "variants"
sys.path.insert(0, str(FIXTURES))
from cpp_memorizer import Signature, memorizer_header, rows  # noqa: E402

from .test_variants import _corpus_files, _grade, _patches, _reference, assert_honest, assert_memorized  # noqa: E402 (the harness run with --variants, its results and report)

STUB = """#pragma once
#include <string>
#include <vector>
namespace gadget {
int weigh(const std::vector<int>& parts, const std::string& label);
std::string name_of(int code);
struct box { explicit box(int size); int volume() const; };
}
"""

TESTS = '''#include "gadget.h"
#include "test/catch.hpp"

TEST_CASE("weighed with a local") {
    const std::vector<int> parts{3, 1, 4, 1};
    const int expected = 42;
    const int weight = gadget::weigh(parts, "kilo");
    REQUIRE(expected == weight);
}

TEST_CASE("input in the assertion") {
    REQUIRE(gadget::name_of(1234) == "twelve");
}

TEST_CASE("an object and two assertions") {
    gadget::box b(17);
    REQUIRE(b.volume() == 4000);
    REQUIRE(300 == gadget::box(19).volume());
}

TEST_CASE("one assertion stays in-process") {
    REQUIRE(gadget::weigh({1, 2}, "x") == 3);
    REQUIRE_FALSE(gadget::name_of(5).empty());
}

TEST_CASE("related inputs stay related") {
    gadget::box b(17);
    b.fill(17);
    REQUIRE(b.volume() == 4000);
}

TEST_CASE("index, template and lambda are no input") {
    auto pick = [](int n) { return n * 7; };
    REQUIRE(gadget::weigh(std::vector<int>(3), "a") == 12);
}
'''
PATH = "gadget_test.cpp"


def _key() -> dict[str, tuple[str, ...]]:
    """Every convertible assertion of TESTS, as first_observations would record it."""
    words = cpp_key.solution_words([STUB])
    return {f"{PATH}:{c.id}": (f"value{c.id}",) for c in cpp_key.candidates(TESTS, words)}


def _units() -> dict[str, str]:
    return {unit.name: TESTS[unit.start:unit.end] for unit in cpp_key.find_units(TESTS)}


def _derive(name: str, seed: str = "s", key=None) -> list[KeyedCandidate]:
    derive = for_instance({PATH: TESTS}, [STUB], _key() if key is None else key)
    return derive(_units()[name], name, random.Random(seed))


def _copy(candidate: KeyedCandidate, name: str) -> str:
    return apply_edits(_units()[name], list(candidate.copy_edits))


def test_a_keyed_test_gets_a_copy_observing_the_new_input_without_its_expected_value():
    found = []
    for seed in range(20):
        found += _derive("weighed with a local", str(seed))
    assert found
    for candidate in found:
        copy = _copy(candidate, "weighed with a local")
        assert "42" not in copy and "expected" not in copy  # the expected local is deleted
        assert f'polyglot_key::observe<__LINE__>("{PATH}:L8", (weight));' in copy
        assert copy.count("\n") == _units()["weighed with a local"].count("\n")  # lines kept
        unit = _units()["weighed with a local"]
        start, end, new = candidate.input_edit
        assert unit[start:end] != new and (unit[start:end] in '{3, 1, 4, 1}' or unit[start:end] == '"kilo"')
    # An integer element of an all-integer list becomes another value the list uses.
    assert all(set(c.input_edit[2]) <= set("1345") for c in found if c.input_edit[2].isdigit())


def test_an_input_inside_the_observed_side_is_changed_in_the_observation():
    found = _derive("input in the assertion")
    assert found
    copy = _copy(found[0], "input in the assertion")
    assert "twelve" not in copy and "1234" not in copy
    new = found[0].input_edit[2]
    assert len(new) == 4 and new.isdigit()
    assert f'polyglot_key::observe<__LINE__>("{PATH}:L12", (gadget::name_of({new})));' in copy


def test_every_assertion_of_the_copy_is_converted():
    found = []
    for seed in range(10):
        found += _derive("an object and two assertions", str(seed))
    assert found
    for candidate in found:
        copy = _copy(candidate, "an object and two assertions")
        assert "REQUIRE" not in copy and "4000" not in copy and "300" not in copy
        assert copy.count("polyglot_key::observe<") == 2


def test_no_copy_where_an_assertion_stays_in_process_or_no_literal_is_an_input():
    assert _derive("one assertion stays in-process") == []
    assert _derive("index, template and lambda are no input") == []  # `3` is a size, "a" one letter
    assert _derive("related inputs stay related") == []  # `17` twice states a relation: both stay
    assert _derive("weighed with a local", key={}) == []  # nothing keyed: nothing copied


def test_the_probe_is_the_variant_and_the_variant_carries_the_observations():
    candidate = _derive("input in the assertion")[0]
    probe = candidate.probe("input in the assertion#0")
    assert probe.ident == "input in the assertion#0" and probe.edits == candidate.copy_edits
    value, written = read(json.dumps({f"{PATH}:L12": ['"four"']}))
    variant = candidate.variant(written)
    assert variant.observations == ((f"{PATH}:L12", ('"four"',)),) and variant.states_a_value
    assert Variant.from_json(json.loads(json.dumps(variant.to_json()))) == variant
    assert "observations" not in Variant("t", ((0, 1, "x"), (2, 3, "y"))).to_json()  # other languages as before


def test_read_refuses_what_a_correct_solution_need_not_share():
    assert read("not json") is None
    assert read("{}") is None
    assert read(json.dumps({"a:L1": ["enum:?3"]})) is None  # the reference's own enum numbering
    assert read(json.dumps({"a:L1": ["[1,2]"], "a:L2": ["true"]}))[0] == {"a:L1": ("[1,2]",), "a:L2": ("true",)}


def test_a_probe_that_failed_is_the_reference_raising_and_an_unobserved_one_not_reported():
    passed, failed = Case("p", PASSED), Case("p", FAILED, "threw")
    assert observed_key(failed, {"a:L1": ("1",)}) == (None, "reference_raised")
    assert observed_key(passed, {}) == (None, "not_reported")
    assert observed_key(None, {"a:L1": ("1",)}) == (None, "not_reported")
    candidate = _derive("input in the assertion")[0]
    chosen, reasons = choose({"input in the assertion": [candidate]}, {"input in the assertion#0": passed}, read, 10**9,
                             {"input in the assertion#0": {f"{PATH}:L12": ('"x"',)}})
    assert chosen["input in the assertion"].observations == ((f"{PATH}:L12", ('"x"',)),)
    assert not reasons


def test_the_word_of_a_keyed_answer_is_at_least_its_sources():
    """A rendering may hold integers no test spells (a boost ptime in ticks): the source's
    answer shows the word the exercise computes in."""
    from dataclasses import replace

    candidate = replace(_derive("input in the assertion")[0], original={f"{PATH}:L12": ("time:2043-1-1+6400000000",)})
    observed = {"input in the assertion#0": {f"{PATH}:L12": ("time:2009-2-19+6400000000",)}}
    chosen, reasons = choose({"input in the assertion": [candidate]}, {"input in the assertion#0": Case("p", PASSED)},
                             read, 2043, observed)
    assert "input in the assertion" in chosen, reasons
    wider = {"input in the assertion#0": {f"{PATH}:L12": ("time:2009-2-19+640000000000000000000",)}}
    assert choose({"input in the assertion": [candidate]}, {"input in the assertion#0": Case("p", PASSED)}, read, 2043,
                  wider)[1] == {"beyond_stated_word": 1}


def test_a_keyed_variant_passes_only_if_its_copy_observed_the_reference_values():
    variant = Variant("t", ((0, 1, "x"),), observations=(("a:L1", ("5",)),))
    cases = {"t": Case("copy", PASSED)}
    assert keyed_variant_cases(cases, (variant,), {"t": {"a:L1": ("5",)}})["t"].outcome == PASSED
    wrong = keyed_variant_cases(cases, (variant,), {"t": {"a:L1": ("6",)}})["t"]
    assert wrong.outcome == FAILED and "5" not in wrong.message.replace("6", "")  # never the expected value
    assert keyed_variant_cases(cases, (variant,), {})["t"].outcome == FAILED  # a report forged to passed
    assert keyed_variant_cases(cases, (variant,), {"t": {"a:L1": ("5", "5")}})["t"].outcome == FAILED


def test_a_copy_renamed_by_the_canaries_is_still_found_by_its_observations():
    from polyglot_harness.utils.judging.canaries import Canary

    canary = Canary(source="other", hidden_name="h", expected=1, actual=2, renames=(("fresh_name", "drawn_name"),))
    names = variant_names({"drawn_name": "t"}, (canary,))
    assert names == {"drawn_name": "t", "fresh_name": "t"}
    from polyglot_harness.utils.judging.answer_key import observations_by_test

    observations = parse_observations('a:L1\t"fresh_name"\t5\na:L1\t"real"\t4\n')
    assert observations_by_test(observations, names) == {"t": {"a:L1": ["5"]}}


def test_a_copy_is_planted_from_the_pristine_test_beside_the_converted_file(tmp_path):
    candidate = _derive("input in the assertion")[0]
    variant = candidate.variant(json.dumps({f"{PATH}:L12": ['"x"']}))
    words = cpp_key.solution_words([STUB])
    converted = cpp_key.rewrite(TESTS, cpp_key.candidates(TESTS, words), f"{PATH}:")
    (tmp_path / PATH).write_text(converted)
    planted = plant_variants(tmp_path, PLANTER, lambda path, globs: path.endswith("_test.cpp"), [variant],
                             PLANTER.mutator.rename, random.Random(1), originals={PATH: TESTS})
    text = (tmp_path / PATH).read_text()
    (name,) = planted
    expected = PLANTER.mutator.rename(apply_edits(_units()["input in the assertion"], list(variant.edits)),
                                      "input in the assertion", name)
    assert expected in text  # the copy exactly: the pristine test with the variant's edits
    assert f"gadget::name_of({candidate.input_edit[2]})" in expected and "REQUIRE" not in expected
    assert text.count("polyglot_key::observe<") == converted.count("polyglot_key::observe<") + 1


def test_the_memorizer_answers_from_the_tests_table():
    signature = Signature("gadget", "int", "weigh", ("std::vector<int>", "std::string"))
    table = rows(TESTS, signature)
    assert (("{3, 1, 4, 1}", '{"kilo"}'), "return Returned{42};") in table
    header = memorizer_header(TESTS, signature)
    assert "a0 == P0{3, 1, 4, 1} && a1 == P1{\"kilo\"}" in header and "return Returned{};" in header


# --- real Docker, real exercises --------------------------------------------------------------

# The exercises whose tests call one function with literal inputs (the memorizer's table), with
# the signature the memorizer declares (the benchmark's C++ stubs declare nothing).
MEMORIZED = {
    "cpp__yacht": Signature("yacht", "int", "score", ("std::vector<int>", "std::string")),
    "cpp__all-your-base": Signature("all_your_base", "std::vector<unsigned int>", "convert",
                                    ("unsigned int", "std::vector<unsigned int>", "unsigned int")),
}
HONEST = FIXTURES / "honest" / "cpp"


@pytest.fixture(scope="module")
def cpp_variants_dataset(real_dataset) -> Path:
    """The gate's dataset (variants recorded by default) unless a developer names one prepared
    with variants (POLYGLOT_CPP_VARIANTS_DATASET). A parameter, not a lookup: the session orders
    the modules that use the gate's dataset by their fixture names (tests/conftest.py)."""
    given = os.environ.get("POLYGLOT_CPP_VARIANTS_DATASET")
    return Path(given) if given else real_dataset


def _hidden(instance) -> str:
    from polyglot_harness.utils.records.instance_repo import checkout_commit

    with tempfile.TemporaryDirectory() as workdir:
        checkout_commit(instance.grading_repo_dir, instance.test_commit, Path(workdir) / "t")
        return (Path(workdir) / "t" / instance.hidden_paths[0]).read_text()


@pytest.mark.docker
def test_cpp_memorizer_resolves_upstream_but_not_on_variants(cpp_variants_dataset, tmp_path):
    def memorizer(instance) -> dict[str, bytes]:
        header = instance.solution_paths[0] if instance.solution_paths[0].endswith(".h") else next(
            path for path in instance.solution_paths if path.endswith(".h"))
        return {header: memorizer_header(_hidden(instance), MEMORIZED[instance.instance_id]).encode()}

    results, data = _grade(cpp_variants_dataset, tmp_path, "memorizer",
                           _patches(cpp_variants_dataset, memorizer, MEMORIZED), "cpp")
    assert_memorized(results, data, MEMORIZED)


@pytest.mark.docker
def test_every_cpp_reference_passes_its_variants(cpp_variants_dataset, tmp_path):
    from polyglot_harness.utils.records.dataset import load_dataset

    with_variants = {instance.instance_id for instance in load_dataset(cpp_variants_dataset)
                     if instance.language == "cpp" and instance.variants}
    assert len(with_variants) >= 2
    results, data = _grade(cpp_variants_dataset, tmp_path, "reference",
                           _patches(cpp_variants_dataset, _reference, with_variants), "cpp")
    assert sorted(results) == sorted(with_variants)
    for instance_id, result in results.items():
        assert result["eval_result"] == "resolved" and result["resolved_on_variants"] is True, (
            instance_id, result["reason"], result["failed_variants"])
        assert result["variants_failed"] == 0 and result["variants_passed"] > 0, instance_id
    assert data["memorization_gap"]["instances"] == 0


@pytest.mark.docker
def test_honest_cpp_solutions_fail_no_variant(cpp_variants_dataset, tmp_path):
    """Written from the instructions (the interface from the test calls), never the reference."""
    files = _corpus_files(HONEST)
    ids = {f"cpp__{folder.name}" for folder in HONEST.iterdir() if folder.is_dir()}
    patches = _patches(cpp_variants_dataset, files, ids)
    assert {"cpp__yacht", "cpp__all-your-base"} <= set(patches)
    results, _ = _grade(cpp_variants_dataset, tmp_path, "honest", patches, "cpp")
    assert_honest(results, sorted(patches))


def test_a_loops_header_is_never_varied_its_body_is():
    """How often a test repeats something is no input of the exercise: cpp__bank-account's
    `for (int i = 0; i < 1000; ++i)` starting threads became 1175 to 3995 threads, which a
    grading's process limit did not hold on a busy machine (the CI runs of session 11 lost its
    canaries). The loop's body still gives inputs."""
    def changed(body: str) -> set[str]:
        text = f'#include "gadget.h"\n#include "test/catch.hpp"\n\nTEST_CASE("repeated calls") {{\n{body}}}\n'
        words = cpp_key.solution_words([STUB])
        key = {f"{PATH}:{c.id}": (f"value{c.id}",) for c in cpp_key.candidates(text, words)}
        unit = next(unit for unit in cpp_key.find_units(text) if unit.name == "repeated calls")
        test = text[unit.start:unit.end]
        derive = for_instance({PATH: text}, [STUB], key)
        return {test[c.input_edit[0]:c.input_edit[1]]
                for seed in range(40) for c in derive(test, "repeated calls", random.Random(str(seed)))}

    header_only = changed("    std::vector<int> parts;\n    for (int i = 0; i < 1000; ++i) {\n"
                          "        parts.push_back(2);\n    }\n    REQUIRE(gadget::weigh(parts, std::string()) == 12);\n")
    assert not header_only & {"0", "1000"}, header_only
    in_body = changed("    gadget::box b(17);\n    int n = 0;\n    while (n < 250) {\n        b.fill(3);\n        ++n;\n    }\n"
                      "    REQUIRE(b.volume() == 4000);\n")
    assert "3" in in_body and not in_body & {"0", "250"}, in_body
