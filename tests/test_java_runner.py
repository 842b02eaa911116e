"""Java's grading command (docker/java/polyglot-java-test): javac and the JUnit console
launcher in one JVM (docker/java/PolyglotJavaTest.java).

What could go wrong, as tests: a compile error that still runs the tests of an older build or
passes; a failing test or no test at all exiting 0; javac's diagnostics lost; the sources
list left among the classes; a compiled class shadowing a test library's.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from polyglot_harness.utils.pipeline.grading import TESTBED, grading_sandbox_spec
from polyglot_harness.utils.languages import LANGUAGES
from polyglot_harness.utils.seam.protocol import Limits
from polyglot_harness.utils.pipeline.pools import Sandboxes

pytestmark = pytest.mark.docker
JAVA = LANGUAGES["java"]
ADDER = "public class Adder {\n    public int add(int a, int b) { return a + b; }\n}\n"


# What the code under test sees while it runs: the classes directory (the compiled classes, no
# sources list) and the working tree (no src/test: the hidden sources are gone).
SEEN = ('    @Test\n    public void seen() throws Exception {\n'
        '        java.io.File classes = new java.io.File(Adder.class.getProtectionDomain().getCodeSource()'
        '.getLocation().toURI());\n'
        '        System.out.println("classes: " + String.join(",", new java.util.TreeSet<>(java.util.Arrays.asList('
        'classes.list()))));\n'
        '        System.out.println("src/test exists: " + new java.io.File("src/test").exists());\n'
        '    }\n')


def exercise(root: Path, main: str = ADDER, expected: int = 5, extra_main: dict[str, str] | None = None,
             extra_test: str = "") -> Path:
    (root / "src" / "main" / "java").mkdir(parents=True)
    (root / "src" / "test" / "java").mkdir(parents=True)
    (root / "src" / "main" / "java" / "Adder.java").write_text(main)
    for name, text in (extra_main or {}).items():
        (root / "src" / "main" / "java" / name).write_text(text)
    (root / "src" / "test" / "java" / "AdderTest.java").write_text(
        "import org.junit.jupiter.api.Test;\nimport static org.assertj.core.api.Assertions.assertThat;\n\n"
        "public class AdderTest {\n"
        f"    @Test\n    public void adds() {{ assertThat(new Adder().add(2, 3)).isEqualTo({expected}); }}\n"
        + extra_test + "}\n")
    return root


def run(provider, image: str, tree: Path, cds: bool = True):
    spec = grading_sandbox_spec(image, Limits(), JAVA)
    command = JAVA.test_command.format(report_dir="/tmp/report")
    if not cds:
        command = f"unset POLYGLOT_JAVA_CDS; {command}"
    with Sandboxes(provider, "java-runner").start(spec, "java-runner") as box:
        box.put_directory(tree, TESTBED)
        result = box.exec(f"mkdir -p /tmp/report && {command}; code=$?; "
                          "ls -d /tmp/tmp.* 2>/dev/null | sed 's/^/left: /'; exit $code", 120, workdir=TESTBED)
        reports = box.get_files("/tmp/report")
    return result, reports


@pytest.mark.parametrize("cds", [True, False], ids=["cds", "no-cds"])
def test_passing_tests_pass_with_reports_and_no_sources_list_left(cds, provider, language_images, tmp_path,
                                                                  no_leftover_containers):
    result, reports = run(provider, language_images["java"], exercise(tmp_path / "ex", extra_test=SEEN), cds)
    assert result.exit_code == 0, result.output
    assert any('tests="2"' in content.decode() for content in reports.values()), reports.keys()
    seen = re.search(r"^classes: (.*)$", result.output, re.M)
    assert seen and "Adder.class" in seen[1].split(",") and "sources.txt" not in seen[1], result.output
    assert re.search(r"^src/test exists: false$", result.output, re.M), result.output
    assert "left: " not in result.output, result.output  # the runner's private directories are gone


def test_a_failing_test_fails(provider, language_images, tmp_path, no_leftover_containers):
    result, reports = run(provider, language_images["java"], exercise(tmp_path / "ex", expected=6))
    assert result.exit_code == 1, result.output
    assert any("<failure" in content.decode() for content in reports.values())


def test_a_compile_error_fails_with_javacs_diagnostic_and_runs_nothing(provider, language_images, tmp_path,
                                                                       no_leftover_containers):
    broken = "public class Adder {\n    public int add(int a, int b) { return a + ; }\n}\n"
    result, reports = run(provider, language_images["java"], exercise(tmp_path / "ex", main=broken))
    assert result.exit_code == 1, result.output
    assert "Adder.java:2: error" in result.output
    assert reports == {}


def test_no_tests_fails(provider, language_images, tmp_path, no_leftover_containers):
    tree = exercise(tmp_path / "ex")
    (tree / "src" / "test" / "java" / "AdderTest.java").write_text("public class AdderTest {}\n")
    result, _ = run(provider, language_images["java"], tree)
    assert result.exit_code != 0, result.output


def test_a_compiled_class_cannot_shadow_a_test_library(provider, language_images, tmp_path, no_leftover_containers):
    """A solution declaring AssertJ's Assertions in the default package is not picked up by
    the test's import of org.assertj.core.api.Assertions (the package guard in
    utils/languages.py drops packaged solution files; this is the class path's own order)."""
    forged = "public class Assertions { public static Object assertThat(Object o) { return null; } }\n"
    result, _ = run(provider, language_images["java"],
                    exercise(tmp_path / "ex", expected=6, extra_main={"Assertions.java": forged}))
    assert result.exit_code == 1, "the forged class was used: the failing test passed"
