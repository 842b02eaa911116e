"""Un-skipping tests before grading: unskip_java, unskip_javascript (utils/languages/java.py,
javascript.py) and unskip_tree (utils/pipeline/grading.py), which rewrites a grading tree in
place. No Docker.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from polyglot_harness.utils.pipeline.grading import unskip_tree
from polyglot_harness.utils.languages import LANGUAGES, get_language
from polyglot_harness.utils.languages.java import LANGUAGE as JAVA, unskip_java
from polyglot_harness.utils.languages.javascript import LANGUAGE as JAVASCRIPT, unskip_javascript

SAMPLES_DIR = Path(__file__).resolve().parents[1] / "samples"
REPORTS_DIR = Path(__file__).resolve().parent / "fixtures" / "reports"
VOWEL_COUNT = SAMPLES_DIR / "java" / "exercises" / "practice" / "vowel-count"
CLAMP_LIST = SAMPLES_DIR / "javascript" / "exercises" / "practice" / "clamp-list"


def snapshot(tree: Path) -> dict[str, bytes]:
    return {path.relative_to(tree).as_posix(): path.read_bytes() for path in sorted(tree.rglob("*")) if path.is_file()}


def grading_copy(exercise: Path, destination: Path) -> Path:
    shutil.copytree(exercise, destination, ignore=shutil.ignore_patterns(".meta", ".docs"))
    return destination


# --- Java @Disabled -------------------------------------------------------------------------

def test_java_disabled_on_its_own_line_is_removed_and_the_test_kept():
    source = ('    @Disabled("Remove to run test")\n'
              "    @Test\n"
              "    public void mixedCase() {\n"
              "    }\n")
    assert unskip_java(source) == "    @Test\n    public void mixedCase() {\n    }\n"


def test_java_disabled_inline_before_test_is_removed_and_the_test_kept():
    source = '    @Disabled("Remove to run test") @Test\n    public void notVowels() {\n    }\n'
    result = unskip_java(source)
    assert "@Disabled" not in result
    assert result.strip().startswith("@Test\n    public void notVowels()")


@pytest.mark.parametrize("annotation", [
    "@Disabled",
    "@Disabled()",
    '@Disabled ( "Remove to run test" )',
    '@Disabled("Remove (to) run test")',
    '@Disabled(value = "a ) in the reason")',
    '@Disabled(\n        "Remove to run test")',
])
def test_java_disabled_in_any_form_is_removed(annotation: str):
    result = unskip_java(f"    {annotation}\n    @Test\n    public void a() {{}}\n")
    assert result == "    @Test\n    public void a() {}\n"


def test_java_disabled_import_is_left_in_place():
    source = "import org.junit.jupiter.api.Disabled;\nimport org.junit.jupiter.api.Test;\n"
    assert unskip_java(source) == source


def test_java_crlf_test_file_keeps_its_line_endings():
    source = '    @Disabled("Remove to run test")\r\n    @Test\r\n    public void a() {}\r\n'
    assert unskip_java(source) == "    @Test\r\n    public void a() {}\r\n"


def test_java_sample_test_file_runs_every_test_after_unskip():
    source = (VOWEL_COUNT / "src/test/java/VowelCountTest.java").read_text()
    result = unskip_java(source)
    assert "@Disabled(" not in result
    assert "import org.junit.jupiter.api.Disabled;" in result
    assert result.count("@Test") == source.count("@Test") == 6
    assert re.findall(r"public void (\w+)\(", result) == re.findall(r"public void (\w+)\(", source)


def test_java_unskipped_sample_equals_the_file_that_ran_in_the_captured_report():
    # capture_reports.py un-skipped with its own regex; that file compiled and ran 6 of 6
    # (tests/fixtures/reports/java/all_passed). The library's result differs only in indentation.
    source = (VOWEL_COUNT / "src/test/java/VowelCountTest.java").read_text()
    captured_unskip = re.sub(r'@Disabled\("Remove to run test"\)\s*', "", source)
    assert [line.strip() for line in unskip_java(source).splitlines()] == \
        [line.strip() for line in captured_unskip.splitlines()]
    assert "tests=\"6\" skipped=\"0\" failures=\"0\" errors=\"0\"" in \
        (REPORTS_DIR / "java/all_passed/report/TEST-junit-jupiter.xml").read_text()


JUNIT_STUBS = {
    "org/junit/jupiter/api/Test.java": "package org.junit.jupiter.api;\npublic @interface Test {}\n",
    "org/junit/jupiter/api/Disabled.java":
        'package org.junit.jupiter.api;\npublic @interface Disabled { String value() default ""; }\n',
    "org/junit/jupiter/api/DisplayName.java":
        "package org.junit.jupiter.api;\npublic @interface DisplayName { String value(); }\n",
    "org/assertj/core/api/Assertions.java":
        "package org.assertj.core.api;\npublic class Assertions {\n"
        "    public static That assertThat(Object actual) { return new That(); }\n"
        "    public static class That { public That isEqualTo(Object expected) { return this; } }\n}\n",
}


@pytest.mark.skipif(shutil.which("javac") is None, reason="needs javac")
def test_java_unskipped_sample_compiles_with_the_unused_disabled_import(tmp_path: Path):
    sources = tmp_path / "src"
    for relative, text in JUNIT_STUBS.items():
        (sources / relative).parent.mkdir(parents=True, exist_ok=True)
        (sources / relative).write_text(text)
    (sources / "VowelCount.java").write_text((VOWEL_COUNT / "src/main/java/VowelCount.java").read_text())
    (sources / "VowelCountTest.java").write_text(
        unskip_java((VOWEL_COUNT / "src/test/java/VowelCountTest.java").read_text()))
    compiled = subprocess.run(["javac", "-proc:none", "-d", str(tmp_path / "classes"),
                               *map(str, sorted(sources.rglob("*.java")))], capture_output=True, text=True)
    assert compiled.returncode == 0, compiled.stderr


def test_java_disabled_inside_a_string_literal_is_removed_too():
    # Current behaviour: the rewrite is textual, so a string that mentions @Disabled changes.
    source = '    String note = "see @Disabled(\\"x\\") and @Disabled here";\n'
    assert unskip_java(source) == '    String note = "see (\\"x\\") and here";\n'


@pytest.mark.parametrize("annotation", [
    "@DisabledOnOs(OS.WINDOWS)",
    '@DisabledIfEnvironmentVariable(named = "CI", matches = "true")',
])
def test_java_other_disabled_annotations_are_left_intact(annotation: str):
    source = f"    {annotation}\n    @Test\n    public void a() {{}}\n"
    assert unskip_java(source) == source


def test_java_commented_out_disabled_does_not_swallow_the_next_line():
    source = '    // @Disabled("Remove to run test")\n    @Test\n    public void a() {}\n'
    result = unskip_java(source)
    assert "\n    @Test\n" in result


# --- JavaScript xtest / xit / xdescribe -------------------------------------------------------

@pytest.mark.parametrize("skipped, unskipped", [
    ("xtest('a', () => {});", "test('a', () => {});"),
    ("xit('a', () => {});", "it('a', () => {});"),
    ("xdescribe('a', () => {});", "describe('a', () => {});"),
    ("  xtest ('a', () => {});", "  test ('a', () => {});"),
    ("xtest.each([1, 2])('a %i', (n) => {});", "test.each([1, 2])('a %i', (n) => {});"),
    ("xit.each`\n  a | b\n`('a', () => {});", "it.each`\n  a | b\n`('a', () => {});"),
])
def test_javascript_x_prefixed_tests_are_unskipped(skipped: str, unskipped: str):
    assert unskip_javascript(skipped) == unskipped


@pytest.mark.parametrize("source", [
    "test.skip('a', () => {});",
    "it.skip('a', () => {});",
    "describe.skip('a', () => {});",
    "maxtest('a', () => {});",
    "fixit('a');",
    "xtests('a');",
    "const xtestCount = 3;",
])
def test_javascript_other_skips_and_identifiers_are_untouched(source: str):
    assert unskip_javascript(source) == source


def test_javascript_sample_spec_runs_every_test_after_unskip():
    source = (CLAMP_LIST / "clamp-list.spec.js").read_text()
    result = unskip_javascript(source)
    assert not re.search(r"\bx(test|it|describe)\(", result)
    assert len(re.findall(r"^\s*(?:test|it)\(", result, re.M)) == 6


# --- unskip_tree -------------------------------------------------------------------------

def test_unskip_tree_rewrites_only_spec_files_of_a_copy(tmp_path: Path):
    source_before = snapshot(CLAMP_LIST)
    tree = grading_copy(CLAMP_LIST, tmp_path / "testbed")
    (tree / "clamp-list.js").write_text("// xtest('not a test file')\nexport const clampList = () => [];\n")
    (tree / "nested").mkdir()
    (tree / "nested" / "more.test.js").write_text("xit('nested', () => {});\n")
    (tree / "notes.md").write_text("xtest('docs')\n")
    untouched = {path: content for path, content in snapshot(tree).items()
                 if path not in ("clamp-list.spec.js", "nested/more.test.js")}

    changed = unskip_tree(tree, JAVASCRIPT)

    assert changed == ["clamp-list.spec.js", "nested/more.test.js"]
    after = snapshot(tree)
    assert {path: after[path] for path in untouched} == untouched
    assert (tree / "nested" / "more.test.js").read_text() == "it('nested', () => {});\n"
    assert "xtest(" not in (tree / "clamp-list.spec.js").read_text()
    assert snapshot(CLAMP_LIST) == source_before


def test_unskip_tree_java_rewrites_test_sources_not_main_sources(tmp_path: Path):
    tree = grading_copy(VOWEL_COUNT, tmp_path / "testbed")
    main_source = '// @Disabled("kept")\nclass VowelCount {}\n'
    (tree / "src/main/java/VowelCount.java").write_text(main_source)
    changed = unskip_tree(tree, JAVA)
    assert changed == ["src/test/java/VowelCountTest.java"]
    assert (tree / "src/main/java/VowelCount.java").read_text() == main_source
    assert "@Disabled(" not in (tree / "src/test/java/VowelCountTest.java").read_text()


def test_unskip_tree_is_idempotent(tmp_path: Path):
    tree = grading_copy(CLAMP_LIST, tmp_path / "testbed")
    assert unskip_tree(tree, JAVASCRIPT) == ["clamp-list.spec.js"]
    after_first = snapshot(tree)
    assert unskip_tree(tree, JAVASCRIPT) == []
    assert snapshot(tree) == after_first


def test_unskip_tree_keeps_bytes_that_are_not_utf8(tmp_path: Path):
    tree = tmp_path / "testbed"
    tree.mkdir()
    (tree / "a.spec.js").write_bytes(b"// caf\xe9 in latin-1\nxtest('a', () => {});\n")
    assert unskip_tree(tree, JAVASCRIPT) == ["a.spec.js"]
    assert (tree / "a.spec.js").read_bytes() == b"// caf\xe9 in latin-1\ntest('a', () => {});\n"


@pytest.mark.parametrize("language", sorted(name for name, lang_spec in LANGUAGES.items() if not lang_spec.unskip_globs))
def test_unskip_tree_changes_nothing_for_languages_that_unskip_by_flag(language: str, tmp_path: Path):
    exercise = next((SAMPLES_DIR / language / "exercises" / "practice").iterdir())
    tree = grading_copy(exercise, tmp_path / "testbed")
    (tree / "skipped.spec.js").write_text("xtest('a');\n")
    (tree / "Skipped.java").write_text('@Disabled("x")\n')
    before = snapshot(tree)
    assert unskip_tree(tree, get_language(language)) == []
    assert snapshot(tree) == before


def test_unskip_text_applies_only_to_paths_matching_the_unskip_globs():
    assert JAVASCRIPT.unskip_text("clamp-list.spec.js", "xtest(") == "test("
    assert JAVASCRIPT.unskip_text("clamp-list.js", "xtest(") == "xtest("
    assert JAVA.unskip_text("src/test/java/ATest.java", "@Disabled\n@Test") == "@Test"
    assert JAVA.unskip_text("src/main/java/A.java", "@Disabled\n@Test") == "@Disabled\n@Test"
