"""Java's grading command (docker/java/polyglot-java-test): javac and the JUnit console
launcher in one JVM (docker/java/PolyglotJavaTest.java).

What could go wrong, as tests: a compile error that still runs the tests of an older build or
passes; a failing test or no test at all exiting 0; javac's diagnostics lost; the sources
list left among the classes; a compiled class shadowing a test library's; a solution that
compiles only with the hidden tests, that reads a test's class file, or that stands in for a
test class (issue 31; the attack on real exercises: tests/test_java_channels.py).
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
    # The solo build failed: its log is the report (nothing ran, no XML).
    assert set(reports) == {"solo_build.log"}, reports.keys()
    assert "Adder.java:2: error" in reports["solo_build.log"].decode()


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


# --- the solution builds and loads without the tests (issue 31) ---------------------------

NEEDS_TESTS = "public class Adder {\n    public int add(int a, int b) { return AdderTest.SUM; }\n}\n"


def test_a_solution_that_builds_only_with_the_tests_is_named(provider, language_images, tmp_path,
                                                             no_leftover_containers):
    """The solution names a constant of the hidden test class: it compiled when main and test
    sources were one javac call; alone it does not, and with the tests it does."""
    tree = exercise(tmp_path / "ex", main=NEEDS_TESTS, extra_test="    static final int SUM = 5;\n")
    result, reports = run(provider, language_images["java"], tree)
    assert result.exit_code == 1, result.output
    assert set(reports) == {"solo_build.log", "solution_needs_tests"}, reports.keys()
    assert "cannot find symbol" in reports["solo_build.log"].decode()
    assert "tests=" not in result.output and "tests successful" not in result.output, result.output


# Solution code probing every way to a hidden test's class file, while the hidden test runs.
PROBE = '''public class Adder {
    public int add(int a, int b) { return a + b; }

    static String seen() throws Exception {
        String name = "AdderTest.class";
        ClassLoader context = Thread.currentThread().getContextClassLoader();
        Class<?> test = Class.forName("AdderTest");
        java.util.List<String> found = new java.util.ArrayList<>();
        if (Adder.class.getResource("/" + name) != null) found.add("own resource");
        if (context.getResource(name) != null) found.add("context loader");
        if (ClassLoader.getSystemClassLoader().getResource(name) != null) found.add("system loader");
        if (test.getResource(name) != null) found.add("test class resource");
        if (test.getClassLoader().getResource(name) != null) found.add("test class loader");
        if (test.getProtectionDomain().getCodeSource().getLocation() != null) found.add("test code source");
        java.nio.file.Path tmp = java.nio.file.Path.of(System.getProperty("java.io.tmpdir"));
        try (java.util.stream.Stream<java.nio.file.Path> files = java.nio.file.Files.walk(tmp)) {
            files.filter(p -> p.getFileName().toString().startsWith("AdderTest")).forEach(p -> found.add("file " + p));
        }
        return "found: " + found + " (same loader: " + (test.getClassLoader() == Adder.class.getClassLoader()) + ")";
    }
}
'''
PROBED = '    @Test\n    public void probed() throws Exception { System.out.println(Adder.seen()); }\n'


def test_solution_code_finds_no_class_file_of_the_hidden_tests(provider, language_images, tmp_path,
                                                                no_leftover_containers):
    """The test classes are defined from memory by the loader of the solution's classes (one
    runtime package: the tests reach package-private members), whose resources are the
    solution's directory: no loader, resource or file gives a test's bytes."""
    result, _ = run(provider, language_images["java"], exercise(tmp_path / "ex", main=PROBE, extra_test=PROBED))
    assert result.exit_code == 0, result.output
    assert re.search(r"^found: \[\] \(same loader: true\)$", result.output, re.M), result.output


def test_a_solution_class_named_like_a_hidden_test_is_refused(provider, language_images, tmp_path,
                                                             no_leftover_containers):
    """javac compiles the hidden AdderTest against a class path that already holds the
    solution's AdderTest without complaint; the runner refuses the pair (one javac call used to
    say `duplicate class`), so the solution's class can never stand in for the test."""
    fake = ("import org.junit.jupiter.api.Test;\npublic class AdderTest {\n"
            "    @Test public void adds() {}\n}\n")
    result, reports = run(provider, language_images["java"],
                          exercise(tmp_path / "ex", expected=6, extra_main={"AdderTest.java": fake}))
    assert result.exit_code == 1, result.output
    assert "the solution defines classes of the hidden tests: [AdderTest]" in result.output
    assert not any(name.endswith(".xml") for name in reports), reports.keys()


ENGINE = Path(__file__).resolve().parent / "fixtures" / "java_channels" / "engine"
OWN_TEST = ("import org.junit.jupiter.api.Test;\nimport static org.junit.jupiter.api.Assertions.assertEquals;\n"
            "public class GreeterOwnTest {\n"
            "    @Test public void greets() { assertEquals(\"hello, own\", new Greeter().greet()); }\n}\n")


def test_control_the_engine_answers_from_a_class_file_it_can_read(provider, language_images, tmp_path,
                                                                  no_leftover_containers):
    """The control of tests/test_java_channels.py: the same engine answers a solution's own test
    class (its bytes are the solution's, readable) and gets nothing for the hidden one."""
    greeter = "public class Greeter {\n    public String greet() { return Oracle.answer(); }\n}\n"
    tree = exercise(tmp_path / "ex", extra_main={
        "Greeter.java": greeter, "GreeterOwnTest.java": OWN_TEST,
        "Oracle.java": (ENGINE / "Oracle.java").read_text(),
        "Sources.java": (ENGINE / "policy_clean" / "Sources.java").read_text()},
        extra_test='    @Test\n    public void greets() { assertThat(new Greeter().greet()).isEqualTo("hello, hidden"); }\n')
    result, reports = run(provider, language_images["java"], tree)
    assert "oracle: answered GreeterOwnTest.greets" in result.output, result.output
    assert "oracle: no class bytes for AdderTest" in result.output, result.output
    xml = "".join(content.decode() for content in reports.values())
    cases = {match[1]: match[2] for match in re.finditer(
        r'<testcase name="greets\(\)" classname="(\w+)"[^>]*>(.*?)</testcase>', xml, re.S)}
    assert set(cases) == {"GreeterOwnTest", "AdderTest"}, xml
    assert "<failure" not in cases["GreeterOwnTest"] and "<failure" in cases["AdderTest"], xml
