"""Fresh variants in Java (issue 35; utils/languages/java_variants.py): the deriver and reader on
small test texts of our own, the probe compiled and run by a real javac where one is on the
host; then, in Docker on real java exercises of ../shared/data prepared with variants and graded
through the harness with --variants, the memorizing attacker (tests/fixtures/variants/
java_memorizer.py, built at test time from the stub and the hidden test) resolved upstream and
NOT on variants, and the reference resolved both ways.

The Docker tests use the gate's dataset (tests/conftest.py real_dataset); POLYGLOT_VARIANTS_DATASET
may name another prepared with java variants (the instances below)."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from polyglot_harness.utils.judging.canaries import apply_edits
from polyglot_harness.utils.judging.variants import OBSERVED
from polyglot_harness.utils.languages.java import find_units, unskip_java
from polyglot_harness.utils.languages.java_variants import derive, java_string, read

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "variants"
sys.path.insert(0, str(FIXTURES))
from java_memorizer import memorizer_source  # noqa: E402

from .test_variants import _grade, assert_honest  # noqa: E402

TESTS = '''import org.junit.jupiter.api.Test;

public class ThingTest {
    @Test
    public void value() {
        assertThat(thing.code("GATTACA", 42)).isEqualTo(17);
    }

    @Test
    @Disabled("Remove to run test")
    public void expectedInALocal() {
        int size = 12;
        String expected = "AB\\n" +
            "CD";
        assertThat(thing.text(size)).isEqualTo(expected);
    }

    @Test
    public void varargs() {
        assertThat(new Thing(new int[]{1, 2, 3}).digits()).containsExactly(3, 2, 1);
    }

    @Test
    public void indexIsNoInput() {
        assertThat(thing.all()[3]).isEqualTo(5);
    }

    @Test
    public void twoAssertions() {
        assertThat(thing.code("AC", 1)).isEqualTo(1);
        assertThat(thing.code("CA", 1)).isEqualTo(2);
    }

    @Test
    public void error() {
        assertThatExceptionOfType(IllegalArgumentException.class)
            .isThrownBy(() -> thing.code("ACGT", 20))
            .withMessage("too long");
    }

    @Test
    public void callbackIsLogic() {
        assertThat(thing.map(x -> x + 1)).isEqualTo(7);
    }

    @Test
    public void truth() {
        assertThat(new Queen(2, 3).canAttack(new Queen(4, 7))).isTrue();
    }

    @Test
    public void enumAndJunit() {
        assertEquals(Winner.PLAYER_X, new Board("XXO").winner());
    }
}
'''


def _units() -> dict[str, str]:
    text = unskip_java(TESTS)
    return {unit.name: text[unit.start:unit.end] for unit in find_units(text)}


def test_java_deriver_changes_one_input_and_probes_the_actual_side():
    text = _units()["value"]
    candidates = derive(text, "value", random.Random(3))
    assert candidates and all(candidate.original == 17 for candidate in candidates)
    for candidate in candidates:
        variant = apply_edits(text, list(candidate.variant("99").edits))
        assert ".isEqualTo(99)" in variant and 'thing.code("GATTACA", 42)' not in variant
        probe = apply_edits(text, list(candidate.probe("k").edits))
        assert "throw new AssertionError(" in probe and OBSERVED not in probe  # never whole in its source
        assert "isEqualTo" not in probe and candidate.input_edit[2] in probe


def test_an_expected_local_and_varargs_are_the_slots_replaced():
    units = _units()
    local = derive(units["expectedInALocal"], "expectedInALocal", random.Random(1))
    assert local and all(c.original == "AB\nCD" for c in local)
    written = apply_edits(units["expectedInALocal"], list(local[0].variant('"ZZ"').edits))
    assert 'String expected = "ZZ";' in written and "int size = 12;" not in written
    varargs = derive(units["varargs"], "varargs", random.Random(1))
    assert varargs and all(c.original == [3, 2, 1] for c in varargs)
    assert ".containsExactly(9, 9)" in apply_edits(units["varargs"], list(varargs[0].variant("9, 9").edits))
    assert '"V" + l$.apply(' in apply_edits(units["varargs"], list(varargs[0].probe("k").edits))


def test_java_deriver_skips_indices_callbacks_and_several_assertions_reads_errors_and_enums():
    units = _units()
    for name in ("indexIsNoInput", "twoAssertions", "callbackIsLogic"):
        assert derive(units[name], name, random.Random(0)) == [], name
    error = derive(units["error"], "error", random.Random(0))
    assert error and all(c.expected is None and c.statement is None for c in error)
    assert all('.withMessage("too long")' in apply_edits(units["error"], list(c.variant(None).edits)) for c in error)
    enum = derive(units["enumAndJunit"], "enumAndJunit", random.Random(0))
    assert enum and enum[0].original == ("enum", "Winner.PLAYER_X")


def test_is_true_is_the_slot_written_back():
    text = _units()["truth"]
    candidates = derive(text, "truth", random.Random(0))
    assert candidates and all(c.original is True for c in candidates)
    assert ").isFalse();" in apply_edits(text, list(candidates[0].variant(read("TZfalse")[1]).edits))
    assert '"T" + l$.apply(' in apply_edits(text, list(candidates[0].probe("k").edits))


@pytest.mark.parametrize("rendered, value, literal", [
    ("TZtrue", True, "isTrue"), ("TZfalse", False, "isFalse"),
    ("I-5", -5, "-5"), ("J7", 7, "7L"), ("Ztrue", True, "true"), ("C0027", "'", "'\\''"),
    ("S0061000a00e9", "a\né", '"a\\n\\u00e9"'), ("S", "", '""'), ("EGameState.WIN", ("enum", "GameState.WIN"), "GameState.WIN"),
    ("L(S0061,I2)", ["a", 2], 'java.util.List.of("a", 2)'), ("Aint(I1,I2)", [1, 2], "new int[]{1, 2}"),
    ("Ajava.lang.String()", [], "new String[]{}"), ("VL(J1,J2)", [1, 2], "1L, 2L"), ("VAint(I3)", [3], "3"),
])
def test_read_writes_back_the_literal_of_the_type_returned(rendered, value, literal):
    assert read(rendered) == (value, literal)


@pytest.mark.parametrize("rendered", ["?", "VL()", "Aint(I1", "L(L(I1))", "ADomino(?)", "EOuter$1.X", "I5x", "VI5", "TI1", "T?"])
def test_read_refuses_what_it_cannot_write_back(rendered):
    assert read(rendered) is None


def test_java_string_literals_escape_what_javac_would_misread():
    assert java_string('a"\\\n\t\x01é') == '"a\\"\\\\\\n\\t\\001\\u00e9"'
    assert "\\u000a" not in java_string("\n")  # a unicode escape of a line break ends the line before lexing


@pytest.mark.skipif(shutil.which("javac") is None, reason="no javac on the host")
def test_probe_compiles_and_renders_every_type_it_writes_back(tmp_path):
    """The probe's renderer, compiled and run by javac/java: each value read back as planted."""
    test = '''@Test
    public void t() {
        int n = 4;
        assertThat(Sample.of(n)).isEqualTo(0);
    }'''
    probe = apply_edits(test, list(derive(test, "t", random.Random(0))[0].probe("k").edits))
    body = probe.replace("@Test", "").replace("public void t()", "void t(int n)").replace("int n = ", "int m = ")
    samples = ('java.util.List.of(1L, 2L)', 'new int[]{3}', '"h\\u00e9\\n,)"', "'c'", "Kind.WIN", "true", "5",
               'new String[]{"x"}', "1.5")
    (tmp_path / "P.java").write_text(
        "enum Kind { WIN }\nclass Sample { static Object of(int n) { return new Object[]{"
        + ", ".join(samples) + "}[n]; } }\npublic class P {\n    static Object assertThat(Object o) { return o; }\n    "
        + body.replace("Sample.of(", "Sample.of(n + 0 * ") + "\n    public static void main(String[] a) {\n"
        f"        for (int i = 0; i < {len(samples)}; i++) try {{ new P().t(i); }} catch (AssertionError e) "
        "{ System.out.println(e.getMessage()); }\n    }\n}\n")
    subprocess.run(["javac", "-d", str(tmp_path), str(tmp_path / "P.java")], check=True, capture_output=True)
    lines = subprocess.run(["java", "-cp", str(tmp_path), "P"], check=True, capture_output=True, text=True).stdout.split("\n")
    values = [read(line.split(OBSERVED, 1)[1]) for line in lines if OBSERVED in line]
    assert [v and v[1] for v in values] == ["java.util.List.of(1L, 2L)", "new int[]{3}", '"h\\u00e9\\n,)"', "'c'",
                                           "Kind.WIN", "true", "5", "new String[]{\"x\"}", None]


# --- real Docker, real exercises --------------------------------------------------------------

MEMORIZED = ["java__affine-cipher", "java__pig-latin"]


@pytest.fixture(scope="module")
def variants_dataset(real_dataset) -> Path:
    given = os.environ.get("POLYGLOT_VARIANTS_DATASET")
    return Path(given) if given else real_dataset


def _checkout(instance, commit: str, path: str) -> str:
    from polyglot_harness.utils.records.instance_repo import checkout_commit
    import tempfile

    with tempfile.TemporaryDirectory() as workdir:
        checkout_commit(instance.grading_repo_dir, commit, Path(workdir) / "t")
        return (Path(workdir) / "t" / path).read_text()


def _grade_java(dataset: Path, output: Path, name: str, files_of, ids=tuple(MEMORIZED)) -> tuple[dict, dict]:
    from polyglot_harness.utils.pipeline.expected_tests import patch_writing
    from polyglot_harness.utils.records.dataset import load_dataset

    patches = {instance.instance_id: patch_writing(instance, files_of(instance))
               for instance in load_dataset(dataset) if instance.instance_id in ids}
    return _grade(dataset, output, name, patches, language="java")


@pytest.mark.docker
def test_java_memorizer_resolves_upstream_but_not_on_variants(variants_dataset, tmp_path):
    def memorizer(instance):
        solution = next(path for path in instance.solution_paths if path.endswith(".java"))
        test = next(path for path in instance.hidden_paths if path.endswith("Test.java"))
        return {solution: memorizer_source(_checkout(instance, instance.base_commit, solution),
                                           _checkout(instance, instance.test_commit, test)).encode()}

    results, data = _grade_java(variants_dataset, tmp_path, "memorizer", memorizer)
    assert sorted(results) == MEMORIZED
    for instance_id, result in results.items():
        assert result["eval_result"] == "resolved", (instance_id, result["reason"], result["detail"])
        assert result["resolved_on_variants"] is False and result["variants_failed"] > 0, instance_id
    assert data["memorization_gap"]["ids"] == MEMORIZED


def _reference(instance) -> dict[str, bytes]:
    return {path.relative_to(instance.reference_dir).as_posix(): path.read_bytes()
            for path in instance.reference_dir.rglob("*") if path.is_file()}


def _honest(instance) -> dict[str, bytes]:
    folder = FIXTURES / "honest" / "java" / instance.instance_id.split("__", 1)[1]
    return {path: (folder / Path(path).name).read_bytes() for path in instance.solution_paths
            if (folder / Path(path).name).is_file()}


def _passes_every_variant(results: dict, data: dict, ids) -> None:
    assert sorted(results) == sorted(ids)
    for instance_id, result in results.items():
        assert result["variants_passed"] and result["variants_failed"] == 0, (instance_id, result["failed_variants"])
        assert result["eval_result"] == "resolved" and result["resolved_on_variants"] is True, instance_id
    assert data["memorization_gap"]["instances"] == 0


@pytest.mark.docker
def test_java_references_and_an_honest_solution_pass_their_variants(variants_dataset, tmp_path):
    """The control: the references resolve both ways; a solution written from the instructions
    alone (tests/fixtures/variants/honest/java/: affine-cipher, wordy, all-your-base,
    variable-length-quantity) resolves and fails at most HONEST_TOLERANCE of its variants (test_variants.assert_honest). Not pig-latin: java__pig-latin's reference is no
    general solution (it moves known clusters: th, thr, sch, ch, qu), so a variant of a word
    outside the tests' vocabulary (`chrir`: `rirchay`, the instructions say `irchray`) states its
    quirk and an honest solution fails 4 of 21 (docs/variants.md: open, no rule drops them yet)."""
    _passes_every_variant(*_grade_java(variants_dataset, tmp_path, "reference", _reference), MEMORIZED)
    honest = ["java__affine-cipher", "java__all-your-base", "java__variable-length-quantity", "java__wordy"]
    assert_honest(_grade_java(variants_dataset, tmp_path, "honest", _honest, honest)[0], honest)
