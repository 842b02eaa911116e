"""Fresh variants (issue 35): the pure input mutations and the Python deriver without Docker;
then, on real Python exercises of ../shared/data prepared with variants and graded through the
harness with --variants, the memorizing attacker (tests/fixtures/variants/memorizer.py) resolved
upstream and NOT on variants, the reference resolved both ways, and the honest corpus
(tests/fixtures/variants/honest/, written from the instructions alone) failing no variant.

The Docker tests use the gate's dataset (tests/conftest.py real_dataset: variants are recorded by
default); POLYGLOT_VARIANTS_DATASET may name another prepared with variants (python, the instances
below).
"""

from __future__ import annotations

import ast
import json
import os
import random
import sys
from pathlib import Path

import pytest

from polyglot_harness.utils.judging.canaries import apply_edits
from polyglot_harness.utils.judging.runner_results import TestCase as Case, TestResults as Results
from polyglot_harness.utils.judging.variants import (OBSERVED, REFERENCE_RAISED, Variant, is_plain_literal,
                                                     mutate_int, mutate_str, observed_literal, plant_variants,
                                                     reorder, split_variants)
from polyglot_harness.utils.languages import matches_any
from polyglot_harness.utils.languages.python import PLANTER, find_units, leaf, rename
from polyglot_harness.utils.languages.python_variants import derive

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "variants"
sys.path.insert(0, str(FIXTURES))
from memorizer import memorizer_source  # noqa: E402

# --- the pure mutations ----------------------------------------------------------------------


@pytest.mark.parametrize("value", [0, 7, -3, 42, -950, 2024, 10**12])
def test_mutated_int_keeps_sign_and_digit_count(value):
    rng = random.Random(value)
    for _ in range(50):
        new = mutate_int(value, rng)
        assert new != value and (new < 0) == (value < 0) and len(str(abs(new))) == len(str(abs(value)))


@pytest.mark.parametrize("value", ["GATTACA", "listen", "Hello,World!", "x-ray"])
def test_mutated_string_keeps_length_alphabet_and_punctuation(value):
    rng = random.Random(value)
    for _ in range(50):
        new = mutate_str(value, rng)
        assert new is not None and new != value and len(new) == len(value)
        assert set(new) <= set(value)
        assert [c for c in new if not c.isalnum()] == [c for c in value if not c.isalnum()]


def test_a_lower_case_word_keeps_its_vowels_where_they_were():
    """javascript__pig-latin's `thrush` had become `hhrhsh` (no vowel: an input pig-latin's
    instructions leave open, so an honest solution failed the variant)."""
    for seed in range(200):
        for word in ("thrush", "rhythm", "square", "yttria"):
            new = mutate_str(word, random.Random(seed))
            if new is None:
                continue
            assert [c in "aeiou" for c in new] == [c in "aeiou" for c in word], (word, new)
            assert [c == "y" for c in new] == [c == "y" for c in word], (word, new)
    assert {mutate_str("XOX", random.Random(seed)) for seed in range(20)} - {None}, "a board of symbols still changes"


def test_a_string_of_words_and_numbers_changes_a_number_only():
    rng = random.Random(1)
    for _ in range(50):
        new = mutate_str("What is 5 plus 13?", rng)
        assert new.startswith("What is ") and " plus " in new and new != "What is 5 plus 13?"


def test_a_number_written_against_a_letter_is_part_of_a_token_and_stays():
    """javascript__poker (red team 4): `10D` became `30D`, a card that does not exist, which
    the reference read and an honest solution refused. Cards, squares and codes keep their
    numbers; a number standing alone in the same string still changes."""
    for seed in range(50):
        rng = random.Random(seed)
        assert mutate_str("4S 5H 6C 10D KD", rng) is None
        assert mutate_str("A1", rng) is None
        new = mutate_str("2S at 12 o'clock", rng)
        assert new is not None and new.startswith("2S at ") and new != "2S at 12 o'clock"


def test_divisibility_with_the_tests_other_numbers_is_kept():
    """wordy's `33 divided by -3` became `50 divided by -3`: -16 or -17, left open."""
    rng = random.Random(4)
    for _ in range(50):
        new = mutate_int(33, rng, [33, 3])
        assert new % 3 == 0 and mutate_int(3, rng, [33, 3]) in (None, 1, 11)
        assert new is not None and "divided by -3" in mutate_str("What is 33 divided by -3?", rng, [33, 3])
    assert all(mutate_int(7, rng, [26]) % 2 for _ in range(50))  # coprime stays coprime


def test_words_of_a_sentence_are_vocabulary_not_input():
    """wordy's `What is?` became `What as?`: a syntax error or an unknown operation, left open."""
    rng = random.Random(0)
    assert mutate_str("What is?", rng) is None and mutate_str("The quick brown fox", rng) is None


def test_nothing_to_vary_gives_none():
    rng = random.Random(0)
    assert mutate_str("AAAA", rng) is None and mutate_str("  ", rng) is None
    assert reorder(["1", "1", "1"], rng) is None
    assert reorder(["1", "2"], rng) is None and reorder(["1", "2", "3"], rng) is None, "a number sequence's ends stay"
    assert reorder(["1", "2", "3", "4"], rng) == (1, 2)
    assert reorder(['"a"', '"b"'], rng) == (0, 1), "a collection of strings: any two swap"


def test_a_reordered_sequence_keeps_its_ends():
    """java__variable-length-quantity: `0x81, 0x80, 0x80, 0x0` reordered to end in a
    continuation byte is an incomplete sequence whose answer is left open."""
    rng = random.Random(1)
    for _ in range(200):
        pair = reorder(["0x81", "0x80", "0x7f", "0x80", "0x0"], rng)
        assert pair is not None and 0 not in pair and 4 not in pair


def test_plain_literals_exclude_floats_and_objects():
    assert is_plain_literal([1, "a", (True, None), {"k": {2}}])
    assert not is_plain_literal([1.5]) and not is_plain_literal(object())


# --- the Python deriver -----------------------------------------------------------------------

TESTS = '''import unittest
from thing import f, g, Thing


class ThingTest(unittest.TestCase):
    def test_value(self):
        self.assertEqual(f("GATTACA", 42), 17)

    def test_local(self):
        thing = Thing([1, 2, 3, 4])
        self.assertEqual(thing.total(), 10)

    def test_index_is_no_input(self):
        self.assertEqual(g()[3], 5)

    def test_two_assertions(self):
        self.assertEqual(f("AC", 1), 1)
        self.assertEqual(f("CA", 1), 2)

    def test_expected_in_a_local(self):
        expected = ["A", "B"]
        self.assertEqual(f("AB", 12), expected)

    def test_error(self):
        with self.assertRaises(ValueError) as err:
            f("ACGT", -5)
        self.assertEqual(err.exception.args[0], "negative")
'''


def _units():
    return {unit.name: TESTS[unit.start:unit.end] for unit in find_units(TESTS)}


def test_python_deriver_changes_one_input_and_probes_the_actual_side():
    units = _units()
    candidates = derive(units["test_value"], "test_value", random.Random(3))
    assert candidates
    for candidate in candidates:
        variant = apply_edits(units["test_value"], list(candidate.variant("99").edits))
        call = ast.parse(variant.strip()).body[0].body[0].value
        assert ast.unparse(call.args[1]) == "99" and ast.unparse(call.args[0]) != 'f("GATTACA", 42)'
        probe = apply_edits(units["test_value"], list(candidate.probe("k").edits))
        assert "raise AssertionError(" in probe and OBSERVED not in probe  # never whole in its source
        assert candidate.original == 17


def test_python_deriver_reads_locals_errors_and_skips_indices_and_many_assertions():
    units = _units()
    local = derive(units["test_local"], "test_local", random.Random(0))
    assert local and all(c.input_edit[0] < units["test_local"].index("self.assert") for c in local)
    assert derive(units["test_index_is_no_input"], "x", random.Random(0)) == []
    assert derive(units["test_two_assertions"], "x", random.Random(0)) == []
    error = derive(units["test_error"], "test_error", random.Random(0))
    assert error and all(c.expected is None for c in error)
    assert all('"negative"' in apply_edits(units["test_error"], list(c.variant(None).edits)) for c in error)


def test_an_expected_value_bound_to_a_local_is_the_slot_replaced():
    units = _units()
    text = units["test_expected_in_a_local"]
    candidates = derive(text, "test_expected_in_a_local", random.Random(2))
    assert candidates and all(c.original == ["A", "B"] for c in candidates)
    variant = apply_edits(text, list(candidates[0].variant("['Z']").edits))
    assert "expected = ['Z']" in variant and 'f("AB", 12)' not in variant


def test_probe_value_is_read_from_the_raise_not_from_the_quoted_source():
    source_line = f"raise AssertionError('{OBSERVED[:10]}' + '{OBSERVED[10:]}' + repr(f(1)))"
    assert observed_literal(Case("t", "failed", f"{source_line}\nE   AssertionError: {OBSERVED}[1, 'a']"))[0] \
        == "[1, 'a']"
    assert observed_literal(Case("t", "failed", f"{source_line}\nE ValueError: bad"))[1] == REFERENCE_RAISED


def test_variants_are_planted_under_drawn_names_and_set_apart(tmp_path):
    (tmp_path / "thing_test.py").write_text(TESTS)
    units = _units()
    candidate = derive(units["test_value"], "test_value", random.Random(3))[0]
    planted = plant_variants(tmp_path, PLANTER, matches_any, [candidate.variant("99")], rename, random.Random(5))
    text = (tmp_path / "thing_test.py").read_text()
    ast.parse(text)
    (name,) = planted
    assert planted[name] == "test_value" and f"def {name}(self):" in text and "def test_value(self):" in text
    cases = tuple(Case(f"thing_test.py::ThingTest::{n}", "passed") for n in ("test_value", name))
    real, own = split_variants(Results(cases), planted, leaf)
    assert [case.name for case in real.cases] == ["thing_test.py::ThingTest::test_value"]
    assert own["test_value"].outcome == "passed"


def test_variant_round_trips_through_json():
    variant = Variant("test_x", ((1, 2, "'a'"), (5, 9, "[1, 2]")))
    assert Variant.from_json(json.loads(json.dumps(variant.to_json()))) == variant


# --- real Docker, real exercises --------------------------------------------------------------

# Exercises whose every test the memorizer answers from its table (each called with literals).
MEMORIZED = ["python__affine-cipher", "python__pig-latin", "python__variable-length-quantity", "python__wordy"]
HONEST = {"python__affine-cipher": "affine-cipher", "python__pig-latin": "pig-latin", "python__wordy": "wordy",
          "python__variable-length-quantity": "variable-length-quantity", "python__list-ops": "list-ops"}


@pytest.fixture(scope="module")
def variants_dataset(real_dataset) -> Path:
    """The gate's dataset (prepared once per session, variants recorded by default) unless a
    developer names one prepared with variants."""
    given = os.environ.get("POLYGLOT_VARIANTS_DATASET")
    return Path(given) if given else real_dataset


def _grade(dataset: Path, output: Path, name: str, patches: dict[str, str], language: str = "python") -> tuple[dict, dict]:
    """Each patch graded through the harness with --variants: (results by instance, report.json)."""
    from polyglot_harness.utils.run import harness

    predictions = output / f"{name}.jsonl"
    predictions.write_text("".join(json.dumps({"instance_id": i, "model_name_or_path": name, "model_patch": p}) + "\n"
                                   for i, p in patches.items()))
    harness(dataset=dataset, output_dir=output, predictions=predictions, model_name_or_path=name, variants=True,
            instance_ids=sorted(patches), progress=False, max_workers=2)
    results = {json.loads(path.read_text())["instance_id"]: json.loads(path.read_text())
               for path in (output / f"{name}_0").glob(f"{language}__*.json")}
    from polyglot_harness.utils.views.report import report
    return results, report(output, run_keyword=name)


# Honest solutions' failed variants allowed over a corpus (share of its variants). Measured on
# three fresh draws (2026-11-28): 0, 1 and 3 false failures over about 300 variants of 18
# honest solutions, each an input the instructions leave open (a 32-bit exercise given 10
# digits, `yttria` become `yrttia`): the goal is 0 and is not met (docs/variants.md); each draw
# is new, so a test demanding 0 fails at random. This bound fails on a systematic defect.
HONEST_TOLERANCE = 0.05


def assert_honest(results: dict, ids) -> None:
    """Every honest solution resolved upstream, its variants planted and passed except for at
    most HONEST_TOLERANCE of the corpus's variants (printed)."""
    assert sorted(results) == sorted(ids)
    passed = sum(result["variants_passed"] or 0 for result in results.values())
    failed = {instance_id: result["failed_variants"] for instance_id, result in results.items()
              if result["variants_failed"]}
    for instance_id, result in results.items():
        assert result["eval_result"] == "resolved", (instance_id, result["reason"], result["detail"])
    total = passed + sum(result["variants_failed"] or 0 for result in results.values())
    print(f"honest: {total - passed} of {total} variants failed: {failed}")
    assert total and (total - passed) <= HONEST_TOLERANCE * total, failed


def _patches(dataset: Path, files_of, ids=None) -> dict[str, str]:
    """Each instance's patch writing `files_of(instance)` (None: no patch), of `ids` only
    where given (the other languages' variant modules use these helpers too)."""
    from polyglot_harness.utils.pipeline.expected_tests import patch_writing
    from polyglot_harness.utils.records.dataset import load_dataset

    return {instance.instance_id: patch_writing(instance, files) for instance in load_dataset(dataset)
            if (ids is None or instance.instance_id in ids) and (files := files_of(instance)) is not None}


def _files_at(instance, commit: str, paths) -> dict[str, str]:
    """The texts of `paths` at `commit` of the instance's grading repository."""
    from polyglot_harness.utils.records.instance_repo import checkout_commit
    import tempfile

    with tempfile.TemporaryDirectory() as workdir:
        checkout_commit(instance.grading_repo_dir, commit, Path(workdir) / "t")
        return {path: (Path(workdir) / "t" / path).read_text() for path in paths}


def assert_memorized(results: dict, data: dict, ids) -> None:
    """A memorizer's run: exactly `ids` graded, each resolved upstream and not on variants
    (some variant failed), and report.json's memorization gap lists them all."""
    assert sorted(results) == sorted(ids)
    for instance_id, result in results.items():
        print(instance_id, result["eval_result"], result["variants_passed"], result["variants_failed"])
        assert result["eval_result"] == "resolved", (instance_id, result["reason"], result["detail"])
        assert result["resolved_on_variants"] is False and result["variants_failed"] > 0, instance_id
    assert data["memorization_gap"]["ids"] == sorted(ids)


def _corpus_files(corpus: Path):
    """files_of for a corpus of solutions in folders named after the exercise."""
    def files(instance) -> dict[str, bytes]:
        folder = corpus / instance.task_name
        return {path.relative_to(folder).as_posix(): path.read_bytes() for path in folder.rglob("*") if path.is_file()}
    return files


def _reference(instance) -> dict[str, bytes]:
    """The reference solution's files."""
    return {path.relative_to(instance.reference_dir).as_posix(): path.read_bytes()
            for path in instance.reference_dir.rglob("*") if path.is_file()}


def _hidden_test(instance, suffix: str = "_test.py") -> str:
    from polyglot_harness.utils.records.instance_repo import checkout_commit
    import tempfile

    with tempfile.TemporaryDirectory() as workdir:
        checkout_commit(instance.grading_repo_dir, instance.test_commit, Path(workdir) / "t")
        return next((Path(workdir) / "t" / path).read_text() for path in instance.hidden_paths if path.endswith(suffix))


@pytest.mark.docker
def test_memorizer_resolves_upstream_but_not_on_variants(variants_dataset, tmp_path):
    def files(instance):
        if instance.instance_id not in MEMORIZED:
            return None
        return {instance.solution_paths[0]: memorizer_source(_hidden_test(instance)).encode()}

    results, data = _grade(variants_dataset, tmp_path, "memorizer", _patches(variants_dataset, files))
    assert sorted(results) == MEMORIZED
    for instance_id, result in results.items():
        assert result["eval_result"] == "resolved", (instance_id, result["reason"], result["detail"])
        assert result["resolved_on_variants"] is False and result["variants_failed"] > 0, instance_id
    assert data["memorization_gap"]["ids"] == MEMORIZED
    assert data["accuracy_score"] == 1.0 and data["accuracy_score_on_variants"] == 0.0


@pytest.mark.docker
def test_reference_and_honest_solutions_pass_their_variants(variants_dataset, tmp_path):
    """The control: the references resolve both ways; solutions written from the instructions
    alone fail no variant (every false failure would be a defect of the variants)."""
    def honest(instance):
        slug = HONEST.get(instance.instance_id)
        if slug is None:
            return None
        return {instance.solution_paths[0]: (FIXTURES / "honest" / slug / Path(instance.solution_paths[0]).name).read_bytes()}

    results, data = _grade(variants_dataset, tmp_path, "reference", _patches(variants_dataset, _reference, HONEST))
    assert sorted(results) == sorted(HONEST)
    for instance_id, result in results.items():
        assert result["variants_passed"] and result["variants_failed"] == 0, (instance_id, result["failed_variants"])
        assert result["eval_result"] == "resolved" and result["resolved_on_variants"] is True, instance_id
    assert data["memorization_gap"]["instances"] == 0
    assert_honest(_grade(variants_dataset, tmp_path, "honest", _patches(variants_dataset, honest))[0], HONEST)


def test_report_counts_the_memorization_gap_with_an_exact_interval():
    from polyglot_harness.utils.outcomes import Bucket
    from polyglot_harness.utils.records.results import InstanceResult, build_run_report

    def result(instance_id, resolved, on_variants):
        return InstanceResult(instance_id=instance_id, model_name_or_path="run", eval_result=Bucket.RESOLVED if resolved else Bucket.UNRESOLVED,
                              language="python", resolved_on_variants=on_variants)

    results = {r.instance_id: r for r in (result("python__a", True, False), result("python__b", True, True),
                                          result("python__c", False, False), result("python__d", True, None))}
    data = build_run_report("run", sorted(results), results).score_json()
    assert data["accuracy_score"] == 0.75 and data["accuracy_score_on_variants"] == 0.5
    gap = data["memorization_gap"]
    assert (gap["instances"], gap["ids"], gap["resolved"], gap["of_resolved"]) == (1, ["python__a"], 2, 0.5)
    assert gap["interval_95"][0] < 0.05 and gap["interval_95"][1] > 0.95  # 1 of 2: an exact interval is wide
    assert "accuracy_score_on_variants" not in build_run_report("run", ["python__d"], {"python__d": results["python__d"]}).score_json()


def test_variant_inputs_cannot_be_derived_from_the_public_tests_without_the_recordings_secret(tmp_path):
    """Red team 3 ran the product's own deriver on the public test file and answered every
    variant from a table: the inputs must depend on a secret drawn per recording."""
    from types import SimpleNamespace

    from polyglot_harness.utils.languages import get_language
    from polyglot_harness.utils.pipeline.variant_recording import candidates_of

    body = "".join(f"    def test_case_{i}(self):\n        self.assertEqual(scale({1000 + 37 * i}), {i})\n\n"
                   for i in range(12))
    (tmp_path / "scale_test.py").write_text(f"import unittest\n\n\nclass ScaleTest(unittest.TestCase):\n{body}")
    instance = SimpleNamespace(instance_id="python__scale", language="python", language_spec=get_language("python"))

    def inputs(secret: str | None) -> list[str]:
        return [candidate.input_edit[2] for options in candidates_of(instance, tmp_path, secret).values()
                for candidate in options]

    assert inputs("a fixed secret") == inputs("a fixed secret")  # one recording is reproducible
    assert inputs("a fixed secret") != inputs("another secret")
    assert inputs(None) != inputs(None)  # drawn afresh by every recording


@pytest.mark.docker
def test_an_instance_whose_variant_drawing_raises_loses_its_variants_not_its_recording(variants_dataset, monkeypatch,
                                                                                       tmp_path):
    """One exercise's drawing failure (a deriver's bug on some test text) is logged and counted
    (`recording_failed`), the reference run is still recorded (expected tests, canaries), the
    recording is not cached (a rerun retries), and the other instance records its variants: a
    preparation of 225 never dies for one exercise's variants."""
    from polyglot_harness.utils.prepare.recording import RecordingCache
    from polyglot_harness.utils.judging.variants import KEPT, RECORDING_FAILED
    from polyglot_harness.utils.pipeline import expected_tests, variant_recording
    from polyglot_harness.utils.records.dataset import load_dataset

    instances = {i.instance_id: i for i in load_dataset(variants_dataset) if i.instance_id in MEMORIZED[:2]}
    broken, fine = sorted(instances)
    real = variant_recording.candidates_of

    def candidates_of(instance, tree, secret=None, observation_key=None):
        if instance.instance_id == broken:
            raise ValueError("a deriver bug")
        return real(instance, tree, secret, observation_key)

    monkeypatch.setattr(expected_tests, "load_dataset", lambda _: list(instances.values()))
    monkeypatch.setattr(variant_recording, "candidates_of", candidates_of)
    lines: list[str] = []
    runs = expected_tests.record_expected_tests(variants_dataset, workers=2, log=lines.append)
    assert runs[broken].variants == () and runs[broken].variant_counts == {RECORDING_FAILED: 1}
    assert any(line.startswith(f"{broken}: variants not recorded: ValueError: a deriver bug") for line in lines)
    assert sorted(runs[broken].test_names) == sorted(instances[broken].expected_tests), "its reference still records"
    assert runs[broken].canary_sources, "and its canaries"
    assert runs[fine].variants and runs[fine].variant_counts[KEPT] == len(runs[fine].variants)
    cache = RecordingCache(tmp_path, {broken: "key", fine: "key"})
    cache.store(runs[broken])
    cache.store(runs[fine])
    assert set(cache.load()) == {fine}, "only the complete recording is cached"


@pytest.mark.docker
def test_a_variant_that_breaks_the_reference_run_costs_only_itself(variants_dataset, monkeypatch):
    """The chosen variants get their second run among every canary, in the run that records the
    expected tests (one grading fewer per instance). A variant that breaks that run (here one
    whose test ends the test process) must not cost the instance its recording: the reference is
    recorded again without variants (canaries and all), and the variants are confirmed in a run of
    their own, which the breaking one breaks too: the instance loses its variants, as when the
    confirming run was always one of its own, and keeps everything else."""
    from polyglot_harness.utils.judging.variants import KEPT, NOT_DETERMINISTIC
    from polyglot_harness.utils.pipeline import expected_tests, variant_recording
    from polyglot_harness.utils.records.dataset import load_dataset

    instance = next(i for i in load_dataset(variants_dataset) if i.instance_id == "python__wordy")
    real_draw = variant_recording.draw
    broke: list[str] = []

    def draw(sandboxes, image, instance, patch, test_timeout=300, observation_key=None):
        drawn = real_draw(sandboxes, image, instance, patch, test_timeout, observation_key)
        chosen = dict(drawn.chosen)
        victim = next(test for test in sorted(chosen) if "self.assert" in _unit_text(instance, test))
        offset = _unit_text(instance, victim).index("self.assert")
        chosen[victim] = Variant(victim, ((offset, offset, "__import__('os')._exit(3) or "),))
        broke.append(victim)
        return variant_recording.Drawn(drawn.instance_id, chosen, drawn.reasons, drawn.seconds)

    monkeypatch.setattr(variant_recording, "draw", draw)
    monkeypatch.setattr(expected_tests, "load_dataset", lambda _: [instance])
    lines: list[str] = []
    run = expected_tests.record_expected_tests(variants_dataset, workers=1, log=lines.append)[instance.instance_id]
    assert run.test_names is not None and sorted(run.test_names) == sorted(instance.expected_tests)
    assert any("the reference with its variants ended" in line for line in lines), lines
    assert not run.variants, "its run of their own breaks alike: none is confirmed"
    assert run.variant_counts[NOT_DETERMINISTIC] >= 1 and KEPT not in run.variant_counts
    assert run.canary_sources, "the canaries are recorded from the run without variants"


def _unit_text(instance, test: str) -> str:
    """The text of hidden test `test` of a prepared instance, as the planter finds it."""
    import tempfile

    from polyglot_harness.utils.pipeline.variant_recording import test_texts
    from polyglot_harness.utils.records.instance_repo import checkout_commit

    with tempfile.TemporaryDirectory() as workdir:
        checkout_commit(instance.grading_repo_dir, instance.test_commit, Path(workdir) / "tree")
        texts = test_texts(instance, Path(workdir) / "tree")
    for text in texts.values():
        for unit in PLANTER.find_units(text):
            if unit.name == test:
                return text[unit.start:unit.end]
    raise AssertionError(f"{test} not found")


def test_an_error_tests_variant_is_never_kept():
    """A variant expecting an error states only where the reference draws its domain
    (python__affine-cipher's reference refused `decode("Test", 79, 5)`, an honest solution
    decoded it: CI, 2026-11-28), and a memorizer refusing every unknown input passes it."""
    from polyglot_harness.utils.judging.variants import ERROR_TEST, KEPT, Candidate
    from polyglot_harness.utils.pipeline.variant_recording import choose

    error = Candidate("test_error", (10, 12, "79"), None, None)
    value = Candidate("test_value", (10, 12, "79"), (20, 22), (0, 30, "probe"), 5)
    passed = Case(name="test_value#0", outcome="failed", message=OBSERVED + "7")
    chosen, reasons = choose({"test_error": [error], "test_value": [value]},
                             {"test_error#0": Case(name="test_error#0", outcome="passed"), "test_value#0": passed},
                             lambda text: (int(text), text), bound=100)
    assert list(chosen) == ["test_value"] and reasons == {ERROR_TEST: 1}
    assert KEPT not in reasons, "choose counts only the tests it did not keep"


def test_integers_stated_in_any_language_are_read_and_names_are_not():
    from polyglot_harness.utils.judging.variants import stated_integers

    text = ("encode([0xffffffff]) == [0x8F, 0xff]; u32 test_2 int64 1.5 4294967296L 255u8 1_000 -7 x[3] "
            "'What is 53 plus 2?' 10n")
    assert stated_integers(text) == [4294967295, 143, 255, 4294967296, 255, 1000, 7, 3, 53, 2, 10]


@pytest.mark.parametrize("texts, bound, kept", [
    (("6059251860", "[150, 201, 163, 177, 20]"), 0xFFFFFFFF, False),  # vlq: a 33-bit input past the tests' 32
    (("974", "[21206401023]"), 0xFFFFFFFF, False),                     # vlq: five bytes decoded past 32 bits
    (("'What is 123 plus 90147?'", "90270"), 45801, True),             # wordy: past the stated numbers, same word
    (('"4 4 *"', "16"), 13, True),                                     # forth: the answer above the tests' 13
    (("3018825499433",), 1000000000000, True),                         # say: both need 64 bits
    (("18446744073709551616",), 18446744073709551615, False),          # grains: past 64 bits
])
def test_a_variant_stays_within_the_word_the_tests_compute_in(texts, bound, kept):
    from polyglot_harness.utils.judging.variants import within_stated_range

    assert within_stated_range(texts, bound) is kept


def test_a_variant_beyond_the_stated_word_is_not_kept_and_says_why():
    """python__variable-length-quantity: a 33-bit variant of a 32-bit exercise states how the
    reference overflows, which the instructions leave open (2 honest false failures of 3 draws)."""
    from polyglot_harness.utils.judging.variants import BEYOND_STATED, Candidate
    from polyglot_harness.utils.pipeline.variant_recording import choose

    wide = Candidate("test_wide", (10, 20, "6059251860"), (30, 40), (0, 50, "probe"), [143, 255, 255, 255, 127])
    narrow = Candidate("test_narrow", (10, 20, "3059251860"), (30, 40), (0, 50, "probe"), [143, 255, 255, 255, 127])
    cases = {f"{name}#0": Case(name=f"{name}#0", outcome="failed", message=OBSERVED + "[139, 178, 222, 137, 20]")
             for name in ("test_wide", "test_narrow")}
    chosen, reasons = choose({"test_wide": [wide], "test_narrow": [narrow]}, cases,
                             lambda text: (json.loads(text), text), bound=0xFFFFFFFF)
    assert list(chosen) == ["test_narrow"] and reasons == {BEYOND_STATED: 1}


@pytest.mark.parametrize("name, clusters", [
    ("testYtTreatedLikeAVowelAtTheBeginningOfAWord", {"yt", "a", "at", "the", "of"}),  # java
    ("word beginning with sch", {"sch"}),                                             # javascript
    ("word_beginning_with_xr", {"xr"}),                                               # rust, python
])
def test_the_clusters_a_test_name_names_are_read_in_every_naming_style(name, clusters):
    from polyglot_harness.utils.judging.variants import named_clusters

    assert named_clusters(name) == clusters


def test_a_candidate_that_changed_a_named_cluster_is_drawn_again(tmp_path):
    """rust__pig-latin: `yttria` became `yrtria` in the test named for `yt` (an honest false
    failure); every candidate of that test keeps `yt`, over many secrets, and still changes
    the input."""
    from types import SimpleNamespace

    from polyglot_harness.utils.languages import get_language
    from polyglot_harness.utils.pipeline.variant_recording import candidates_of

    (tmp_path / "pig_latin_test.py").write_text("import unittest\n\nfrom pig_latin import translate\n\n\nclass PigLatinTest(unittest.TestCase):\n"
                    "    def test_word_beginning_with_yt(self):\n"
                    "        self.assertEqual(translate(\"yttria\"), \"yttriaay\")\n")
    instance = SimpleNamespace(instance_id="python__pig-latin", language="python", language_spec=get_language("python"))
    inputs = [candidate.input_edit[2] for secret in range(40)
              for candidate in candidates_of(instance, tmp_path, str(secret))["test_word_beginning_with_yt"]]
    assert len(inputs) == 40 and all("yt" in text and text != '"yttria"' for text in inputs), inputs


def test_a_variant_answering_as_its_source_is_kept_so_its_answer_is_not_implied():
    """An independent red team (2026-11-28) resolved queen-attack, triangle, tic-tac-toe and
    connect on variants without solving: when only changed answers were kept, a yes/no
    variant's answer was the negation of its source's, read off the memorized table."""
    from polyglot_harness.utils.judging.variants import Candidate
    from polyglot_harness.utils.pipeline.variant_recording import choose

    same = Candidate("test_same", (10, 12, "48"), (20, 24), (0, 30, "probe"), True)
    changed = Candidate("test_changed", (10, 12, "48"), (20, 24), (0, 30, "probe"), True)
    cases = {"test_same#0": Case(name="test_same#0", outcome="failed", message=OBSERVED + "True"),
             "test_changed#0": Case(name="test_changed#0", outcome="failed", message=OBSERVED + "False")}
    chosen, reasons = choose({"test_same": [same], "test_changed": [changed]}, cases,
                             lambda text: (text == "True", text), bound=100)
    assert sorted(chosen) == ["test_changed", "test_same"] and not reasons
    assert chosen["test_same"].edits[-1] == (20, 24, "True")


YES_NO = FIXTURES / "yes_no"  # our own yes/no exercise (parity), in the upstream layout


@pytest.mark.docker
def test_a_memorizer_negating_its_nearest_yes_no_answer_is_not_resolved_on_variants(
        language_images, tmp_path):
    """The independent red team's winner (2026-11-28: javascript/java queen-attack and
    state-of-tic-tac-toe, javascript connect and triangle resolved on variants without
    solving): when only variants whose answer differed from their source's were kept, a yes/no
    variant answered the negation of its nearest memorized input. Variants answering as their
    source are kept too now, so neither copying nor negating the nearest answer passes."""
    from polyglot_harness.utils.prepare.dataset import prepare_dataset
    from polyglot_harness.utils.records.dataset import load_dataset

    dataset = tmp_path / "dataset"
    prepare_dataset(YES_NO, dataset, workers=1, record_expected=True, log=lambda message: None)
    (instance,) = load_dataset(dataset)
    test_text = _hidden_test(instance)
    memorizer = {instance.solution_paths[0]: memorizer_source(test_text, unknown="complement").encode()}
    reference = {path.relative_to(instance.reference_dir).as_posix(): path.read_bytes()
                 for path in instance.reference_dir.rglob("*") if path.is_file()}
    runs = tmp_path / "runs"
    runs.mkdir()
    attacked, _ = _grade(dataset, runs, "memorizer", _patches(dataset, lambda _: memorizer))
    honest, _ = _grade(dataset, runs, "reference", _patches(dataset, lambda _: reference))
    (attack,), (control,) = attacked.values(), honest.values()
    assert attack["eval_result"] == "resolved" and attack["resolved_on_variants"] is False, attack["failed_variants"]
    assert control["eval_result"] == "resolved" and control["resolved_on_variants"] is True
    answers = [variant.edits[-1][2] for variant in instance.variants]
    unchanged = sum(_source_answer(test_text, variant.test) == variant.edits[-1][2] for variant in instance.variants)
    assert len(answers) >= 10 and 0 < unchanged < len(answers), (answers, unchanged)


def _source_answer(test_text: str, test: str) -> str:
    """The expected literal of `test`'s one assertion in the parity fixture."""
    body = test_text[test_text.index(f"def {test}(self):"):]
    return body[body.index("), ") + 3:body.index(")\n")]


def test_a_word_of_the_exercise_s_vocabulary_changes_only_into_another_word_of_it():
    """javascript__meetup's `'teenth'` became `'teentn'`, which its reference answered (as
    `first`) where an honest solution refuses it: a one-word string the tests write three times
    or more is a word of a closed set."""
    from polyglot_harness.utils.judging.variants import keeps_vocabulary

    tests = "f(5, 'teenth', 'Monday'); f(6, 'teenth', 'Friday'); f(7, \"teenth\", 'Monday'); f(8, 'first', 'x');"
    assert not keeps_vocabulary(tests, "'teenth'", "'teentn'")
    assert keeps_vocabulary(tests, "'teenth'", "'first'")          # another word the tests write
    assert keeps_vocabulary(tests, "'Monday'", "'Mondax'")         # written twice: data, not vocabulary
    assert keeps_vocabulary(tests, "5", "7")                       # not a string
    assert keeps_vocabulary(tests + " g('a b'); g('a b'); g('a b');", "'a b'", "'a c'")  # not one word


def test_an_integer_argument_stays_within_what_the_tests_write_there():
    """javascript__meetup's month 12 became 86: where the tests write an argument of a call
    three times or more, a changed integer stays between the smallest and the largest."""
    from polyglot_harness.utils.judging.variants import keeps_argument_range

    tests = "meetup(2013, 5, 'x'); meetup(2013, 12, 'y'); meetup(2014, 1, 'z'); other(7, 99);"
    source = "expect(meetup(2013, 12, 'teenth')).toEqual(d(1));"
    month = source.index("12")
    assert not keeps_argument_range(tests, source, (month, month + 2, "86"))
    assert keeps_argument_range(tests, source, (month, month + 2, "10"))
    assert not keeps_argument_range(tests, source, (source.index("2013"), source.index("2013") + 4, "9117"))
    assert keeps_argument_range(tests, source, (source.index("2013"), source.index("2013") + 4, "2014"))
    inner = "f(g(12) + 3)"  # an argument of g (written nowhere else): no range; 3 is inside one
    assert keeps_argument_range(tests, inner, (4, 6, "86"))
    assert keeps_argument_range(tests, inner, (10, 11, "9"))


def test_a_changed_call_that_another_test_makes_is_no_fresh_input():
    """A month changed into another test's month asks what that test asks: a memorizer of the
    tests answers it (javascript__meetup's passed 2 of its variants)."""
    from polyglot_harness.utils.judging.variants import keeps_fresh

    tests = 'meetup(2013, 5, "teenth", "Monday"); meetup(2013, 8, "teenth", "Monday");'
    source = "expect(meetup(2013, 5, 'teenth', 'Monday')).toEqual(x);"
    month = source.index("5,")
    assert not keeps_fresh(tests, source, (month, month + 1, "8"))
    assert keeps_fresh(tests, source, (month, month + 1, "9"))
    assert keeps_fresh(tests, "x = 5 + 1", (4, 5, "8"))  # not an argument of a call


def test_a_reordered_input_keeps_its_selection():
    """javascript__poker's reference changed the winner when the hands were reordered: an
    answer that picks strings of the input picks the same ones after a reorder."""
    from polyglot_harness.utils.judging.variants import keeps_selection

    hands = "['4S 5S 7H 8D JC', '2S 4H 6S 4D JH', '3S 4S 5D 6H JH']"
    assert not keeps_selection(hands, ["4S 5S 7H 8D JC"], ["3S 4S 5D 6H JH"])
    assert keeps_selection(hands, ["4S 5S 7H 8D JC", "2S 4H 6S 4D JH"], ["2S 4H 6S 4D JH", "4S 5S 7H 8D JC"])
    assert keeps_selection("['ab', 'cd']", ["ab"], ["xy"])  # the answer is not a selection of the input
    assert keeps_selection("[1, 2]", 1, 2)
