"""Fresh variants for JavaScript (issue 35; utils/languages/javascript_variants.py): the deriver
and the reader on small jest tests written here, the probe's rendering run by node on values the
trusted test process can see; then, on real JavaScript exercises of ../shared/data prepared
with variants and graded through the harness with --variants, the memorizing attacker
(tests/fixtures/variants/js_memorizer.py, its table built from the hidden spec at test time)
resolved upstream and NOT on variants, and the references resolved both ways.

The Docker tests use the gate's dataset (tests/conftest.py real_dataset: variants are recorded
by default); POLYGLOT_JS_VARIANTS_DATASET may name another prepared with variants (javascript,
the instances below).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from polyglot_harness.utils.judging.canaries import apply_edits
from polyglot_harness.utils.judging.runner_results import TestCase as Case, TestResults as Results
from polyglot_harness.utils.judging.syntax import Source
from polyglot_harness.utils.judging.variants import OBSERVED, is_plain_literal, observed_literal, split_variants
from polyglot_harness.utils.languages.javascript import find_units, leaf
from polyglot_harness.utils.languages.javascript_variants import _RENDER, derive, read

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "variants"
sys.path.insert(0, str(FIXTURES))
from js_memorizer import memorizer_source  # noqa: E402

from .test_variants import _grade, _hidden_test, _patches, _reference, assert_honest  # noqa: E402  (harness runs with --variants, one language)

SPEC = """import { f, g, Thing } from './thing';

describe('thing', () => {
  test('value', () => {
    expect(f('GATTACA', 42)).toEqual(17);
  });

  test('local', () => {
    const thing = new Thing([1, 2, 3, 4]);
    expect(thing.total()).toBe(10);
  });

  test('expected in a local', () => {
    const expected = ['A', 'B'];
    expect(f('AB', 12)).toEqual(expected);
  });

  test('hexadecimal', () => {
    expect(g([0x40, 0x7f])).toEqual([0x40, 0]);
  });

  test('error', () => {
    expect(() => f('ACGT', -5)).toThrow(new Error('negative'));
  });

  test('index is no input', () => {
    expect(g()[3]).toEqual(5);
  });

  test('two assertions', () => {
    expect(f('AC', 1)).toEqual(1);
    expect(f('CA', 1)).toEqual(2);
  });

  test('a callback is logic', () => {
    expect(g((x) => x + 10)).toEqual(20);
  });

  test('a float is never expected', () => {
    expect(f('AC', 1)).toEqual(1.5);
  });

  test('not', () => {
    expect(f('AC', 1)).not.toEqual(2);
  });

  test('any error', () => {
    expect(() => f('ACGT', -5)).toThrow();
  });

  test('template', () => {
    expect(f(`GATTACA`)).toEqual(1);
  });
});
"""


def _units() -> dict[str, str]:
    return {unit.name: SPEC[unit.start:unit.end] for unit in find_units(SPEC)}


def _parses(text: str) -> bool:
    return not Source("javascript", text).has_errors


def test_deriver_changes_one_input_and_probes_the_actual_side():
    text = _units()["value"]
    candidates = derive(text, "value", random.Random(3))
    assert candidates and all(candidate.original == 17 for candidate in candidates)
    for candidate in candidates:
        variant = apply_edits(text, list(candidate.variant("99").edits))
        assert variant.count(".toEqual(99)") == 1 and "f('GATTACA', 42)" not in variant and _parses(variant)
        probe = apply_edits(text, list(candidate.probe("k").edits))
        assert "throw new Error(" in probe and "expect(" not in probe and _parses(probe)
        assert OBSERVED not in probe  # never whole in the source a stack trace may quote


def test_deriver_reads_locals_hexadecimal_and_errors():
    units = _units()
    local = derive(units["local"], "local", random.Random(0))
    assert local and all(c.input_edit[0] < units["local"].index("expect(") for c in local)
    bound = derive(units["expected in a local"], "x", random.Random(2))
    assert bound and all(c.original == ["A", "B"] for c in bound)
    variant = apply_edits(units["expected in a local"], list(bound[0].variant('["Z"]').edits))
    assert 'const expected = ["Z"];' in variant and "f('AB', 12)" not in variant
    hexadecimal = derive(units["hexadecimal"], "x", random.Random(1))
    assert hexadecimal and all(c.original == [64, 0] for c in hexadecimal)
    assert all(c.input_edit[2].startswith("0x") and len(c.input_edit[2]) == 4 for c in hexadecimal
               if c.input_edit[2].startswith("0"))
    error = derive(units["error"], "error", random.Random(0))
    assert error and all(c.expected is None and c.statement is None for c in error)
    assert all("toThrow(new Error('negative'))" in apply_edits(units["error"], list(c.variant(None).edits)) for c in error)


def test_integer_inputs_keep_zero_and_the_order_of_a_calls_arguments():
    """twelve-days `recite(1)` became `recite(0)`; beer-song `recite(1, 1)` became `recite(1, 3)`."""
    def test(call: str) -> str:
        return f"test('t', () => {{\n  expect({call}).toEqual('x');\n}});"

    for seed in range(40):
        assert all(c.input_edit[2] != "0" for c in derive(test("recite(1)"), "t", random.Random(seed)))
        assert derive(test("recite(1, 1)"), "t", random.Random(seed)) == []
        for candidate in derive(test("recite(7, 2)"), "t", random.Random(seed)):
            changed = apply_edits(test("recite(7, 2)"), [candidate.input_edit])
            at = changed.index("recite(") + 7
            start, count = map(int, changed[at:changed.index(")", at)].split(","))
            assert start > count


@pytest.mark.parametrize("name", ["index is no input", "two assertions", "a callback is logic",
                                  "a float is never expected", "not", "any error", "template"])
def test_deriver_skips_what_it_cannot_rewrite_exactly(name):
    assert derive(_units()[name], name, random.Random(0)) == []


def test_reader_takes_json_of_plain_data_only():
    assert read('[1,"a",true,null,{"k":[2]}]') == ([1, "a", True, None, {"k": [2]}], '[1,"a",true,null,{"k":[2]}]')
    assert is_plain_literal(read('{"k":[2]}')[0])
    for text in ("<not plain data>", "1.5", "[1e3]", "NaN", '{"__proto__":1}', '[{"a":{"__proto__":[]}}]', "",
                 '"On the undefined day"', '["On the null day"]', '{"x":"NaN"}', '"[object Object]"'):
        assert read(text) is None, text


def test_probe_value_is_read_from_the_thrown_message():
    message = f"Error: {OBSERVED}[1,\"a\\nb\"]\n    at Object.<anonymous> (thing.spec.js:5:13)"
    literal, _ = observed_literal(Case("t", "failed", message))
    assert read(literal) == ([1, "a\nb"], '[1,"a\\nb"]')


VALUES = """
class Thing { constructor() { this.a = 1; } }
const handle = new Proxy(Object.create(null), {});
const getter = { get a() { return 1; } };
const sparse = [1, , 3];
const proto = JSON.parse('{"__proto__": 1}');
module.exports = [
  ['plain', [1, 'a', true, null, { k: [2, 'x'] }, -7]],
  ['string', 'a\\nb"c'],
  ['float', 1.5], ['minus zero', -0], ['unsafe', 2 ** 60], ['undefined', undefined],
  ['undefined inside', [undefined]], ['map', new Map()], ['set', new Set([1])], ['date', new Date(2001, 2, 3, 4, 5, 6, 7)],
  ['invalid date', new Date(NaN)], ['date subclass', new (class extends Date {})(2001, 2, 3)], ['dates', [new Date(0)]],
  ['instance', new Thing()], ['handle', handle], ['getter', getter], ['sparse', sparse],
  ['bigint', 5n], ['symbol key', { [Symbol('s')]: 1 }], ['proto key', proto], ['function', () => 1],
];
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_probe_renders_plain_data_as_json_and_anything_else_as_no_literal(tmp_path):
    (tmp_path / "values.js").write_text(VALUES)
    script = (f"const render = {_RENDER};\n"
              f"for (const [name, value] of require('./values.js')) console.log(JSON.stringify([name, render(value)]));\n")
    (tmp_path / "run.js").write_text(script)
    lines = subprocess.run(["node", "run.js"], cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    rendered = dict(json.loads(line) for line in lines.splitlines())
    assert read(rendered.pop("plain"))[0] == [1, "a", True, None, {"k": [2, "x"]}, -7]
    assert read(rendered.pop("string"))[0] == 'a\nb"c'
    # A Date of Date.prototype (meetup's expected values), by its local-time fields.
    assert read(rendered.pop("date")) == (("Date", 2001, 2, 3, 4, 5, 6, 7), "new Date(2001, 2, 3, 4, 5, 6, 7)")
    assert all(read(text) is None for text in rendered.values()), rendered


def test_candidates_are_read_from_the_unskipped_spec(tmp_path):
    """Upstream skips all tests but the first (`xtest(`): grading plants variants in the
    un-skipped spec, so the candidates are derived from it too."""
    from polyglot_harness.utils.languages import get_language
    from polyglot_harness.utils.pipeline.variant_recording import candidates_of

    (tmp_path / "thing.spec.js").write_text(SPEC.replace("  test('", "  xtest('").replace("xtest('value'", "test('value'"))
    instance = SimpleNamespace(instance_id="javascript__thing", language="javascript",
                               language_spec=get_language("javascript"))
    found = candidates_of(instance, tmp_path, "a secret")
    assert found["value"] and found["local"] and found["error"]


def test_jest_cases_of_variants_are_set_apart_by_their_title():
    """jest's names end with the test's title (leaf_start), not with a name `leaf` parses."""
    cases = tuple(Case(f"thing.spec.js::thing {title}", "passed", leaf_start=len("thing.spec.js::thing "))
                  for title in ("value", "planted name"))
    real, own = split_variants(Results(cases), {"planted name": "value"}, leaf)
    assert [case.name for case in real.cases] == ["thing.spec.js::thing value"] and own["value"].outcome == "passed"


def test_jest_variant_cases_renamed_by_the_canaries_are_still_set_apart():
    """With canaries, every test of the file runs under a drawn name that `separate` maps back;
    the variant's case must keep its title's offset for split_variants to find it."""
    from polyglot_harness.utils.judging.canaries import Canary, separate

    prefix = "thing.spec.js::thing "
    canary = Canary(source="value", hidden_name="sad owl", expected=1, actual=2, name="value",
                    renames=(("red fox", "planted name"),))
    cases = tuple(Case(prefix + title, "passed", leaf_start=len(prefix)) for title in ("sad owl", "red fox", "value"))
    real, own = separate(Results(cases), [canary], leaf)
    real, variants = split_variants(real, {"planted name": "value"}, leaf)
    assert [case.name for case in real.cases] == [prefix + "value"] and list(own) == ["value"]
    assert variants["value"].outcome == "passed"


def test_memorizer_answers_the_spec_and_nothing_else():
    source = memorizer_source(SPEC)
    assert '"[\\"GATTACA\\",42]": ["value", 17]' in source and "export const f = " in source
    assert '["throw", "negative"]' in source


# --- real Docker, real exercises --------------------------------------------------------------

# Exercises whose every test the memorizer answers from its table (a function of literals).
MEMORIZED = ["javascript__affine-cipher", "javascript__meetup", "javascript__phone-number",
             "javascript__variable-length-quantity", "javascript__wordy"]


@pytest.fixture(scope="module")
def js_variants_dataset(real_dataset) -> Path:
    given = os.environ.get("POLYGLOT_JS_VARIANTS_DATASET")
    return Path(given) if given else real_dataset


@pytest.mark.docker
def test_js_memorizer_resolves_upstream_but_not_on_variants(js_variants_dataset, tmp_path):
    def memorizer(instance):
        if instance.instance_id not in MEMORIZED:
            return None
        return {instance.solution_paths[0]: memorizer_source(_hidden_test(instance, ".spec.js")).encode()}

    results, data = _grade(js_variants_dataset, tmp_path, "memorizer", _patches(js_variants_dataset, memorizer),
                           "javascript")
    assert sorted(results) == MEMORIZED
    for instance_id, result in results.items():
        assert result["eval_result"] == "resolved", (instance_id, result["reason"], result["detail"])
        assert result["resolved_on_variants"] is False and result["variants_failed"] > 0, instance_id
        assert result["variants_passed"] == 0, (instance_id, result["variants_passed"])
    assert data["memorization_gap"]["ids"] == MEMORIZED
    assert data["accuracy_score"] == 1.0 and data["accuracy_score_on_variants"] == 0.0


@pytest.mark.docker
def test_js_references_pass_their_variants(js_variants_dataset, tmp_path):
    """The control: the references resolve both ways (the trusted process's report carries
    every variant's case)."""
    results, data = _grade(js_variants_dataset, tmp_path, "reference", _patches(js_variants_dataset, _reference, MEMORIZED),
                           "javascript")
    assert sorted(results) == MEMORIZED
    for instance_id, result in results.items():
        assert result["variants_passed"] and result["variants_failed"] == 0, (instance_id, result["failed_variants"])
        assert result["eval_result"] == "resolved" and result["resolved_on_variants"] is True, instance_id
    assert data["memorization_gap"]["instances"] == 0


HONEST = ["javascript__affine-cipher", "javascript__pig-latin", "javascript__poker", "javascript__say",
          "javascript__variable-length-quantity"]


@pytest.mark.docker
def test_js_honest_solutions_pass_their_variants(js_variants_dataset, tmp_path):
    """Solutions written from the instructions (tests/fixtures/variants/honest/javascript; the
    references not read; signatures and error messages from the stub and the spec's calls)
    resolve, and fail at most HONEST_TOLERANCE of their variants (each false failure is a
    defect of the variants: test_variants.assert_honest)."""
    def honest(instance):
        folder = FIXTURES / "honest" / "javascript" / instance.instance_id.split("__", 1)[1]
        if instance.instance_id not in HONEST:
            return None
        return {path: (folder / Path(path).name).read_bytes() for path in instance.solution_paths}

    results, _ = _grade(js_variants_dataset, tmp_path, "honest", _patches(js_variants_dataset, honest), "javascript")
    assert_honest(results, HONEST)


def test_a_date_built_of_integer_literals_is_an_expected_value():
    """meetup's shape: `new Date(y, m, d)` is read as its seven local-time fields, so the variant
    keeps the test's comparison and the reference's answer is written back as a Date."""
    test = ("test('monteenth', () => {\n"
            "  expect(meetup(2013, 5, 'teenth', 'Monday')).toEqual(new Date(2013, 4, 13));\n});")
    found = derive(test, "monteenth", random.Random(7))
    assert found and all(candidate.original == ("Date", 2013, 4, 13, 0, 0, 0, 0) for candidate in found)
    assert not derive(test.replace("new Date(2013, 4, 13)", "new Date(ms)"), "m", random.Random(7))
    assert not derive(test.replace("new Date(2013, 4, 13)", "new Date(2013)"), "m", random.Random(7))
    assert read("new Date(2013, 4, 13)") is None  # the probe always writes all seven fields
