"""Caches baked into the language images (a spec's `image_cache_env`): Rust's prebuilt
dependency target directory and Java's class-data-sharing archives.

Trust model, played by attackers: the caches are built at image build from no exercise;
grading containers see them through their own copy-on-write layer (Rust) or read-only
files (Java), so what code under test writes there no other grading sees; and a verdict
never depends on them (the same results with the cache and without).
"""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from polyglot_harness.utils.pipeline.grading import TESTBED, grading_sandbox_spec
from polyglot_harness.utils.languages import LANGUAGES, LanguageSpec
from polyglot_harness.utils.judging import runner_results
from polyglot_harness.utils.seam.protocol import Limits, SandboxSpec
from polyglot_harness.utils.pipeline.pools import Sandboxes

pytestmark = pytest.mark.docker
RUST, JAVA = LANGUAGES["rust"], LANGUAGES["java"]
PROBE = "polyglot-cache-probe"  # the file an attacker plants in the cache


def rust_crate(root: Path, test_body: str) -> Path:
    """A crate with the same dependency table as a seed (pig-latin's `regex = "0.2"`)."""
    (root / "src").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "Cargo.toml").write_text('[package]\nname = "word-match"\nversion = "0.1.0"\nedition = "2021"\n\n'
                                     '[dependencies]\nregex = "0.2"\n')
    (root / "src" / "lib.rs").write_text('pub fn is_word(text: &str) -> bool {\n'
                                         '    regex::Regex::new(r"^[a-z]+$").unwrap().is_match(text)\n}\n')
    (root / "tests" / "word_match.rs").write_text(f"use word_match::is_word;\n\n{test_body}\n")
    return root


HONEST_RUST_TESTS = ('#[test]\nfn accepts_a_word() { assert!(is_word("apple")); }\n\n'
                     '#[test]\nfn rejects_digits() { assert!(!is_word("a1")); }\n')
FAILING_RUST_TESTS = HONEST_RUST_TESTS + '\n#[test]\nfn wrong_on_purpose() { assert!(is_word("A")); }\n'
# Code under test that overwrites every prebuilt regex artifact it can reach and plants a file.
POISONING_RUST_TESTS = HONEST_RUST_TESTS + f'''
#[test]
fn poisons_the_shared_target_directory() {{
    let target = std::env::var("CARGO_TARGET_DIR").expect("grading sets CARGO_TARGET_DIR");
    let deps = std::path::Path::new(&target).join("debug").join("deps");
    for entry in std::fs::read_dir(&deps).unwrap() {{
        let path = entry.unwrap().path();
        if path.file_name().unwrap().to_string_lossy().starts_with("libregex-") {{
            std::fs::write(&path, b"poisoned").unwrap();
        }}
    }}
    std::fs::write(std::path::Path::new(&target).join("{PROBE}"), b"planted").unwrap();
}}
'''


def run_test_command(sandboxes: Sandboxes, sandbox_spec: SandboxSpec, spec: LanguageSpec, tree: Path,
                     after: str = "true") -> tuple[int | None, runner_results.TestResults, str]:
    """The spec's test command on `tree` as grading runs it; then `after` in the same container."""
    report_dir = f"/tmp/report-{secrets.token_hex(4)}"
    with sandboxes.start(sandbox_spec, "cache-test") as box:
        box.put_directory(tree, TESTBED)
        result = box.exec(f"mkdir -p {report_dir} && {spec.test_command.format(report_dir=report_dir)}", 600,
                          workdir=TESTBED)
        followup = box.exec(after, 300, workdir=TESTBED)
        report = {name: content.decode() for name, content in box.get_files(report_dir).items()}
    return result.exit_code, spec.parse_results(report), followup.output


def without_image_cache(image: str, spec: LanguageSpec) -> SandboxSpec:
    return SandboxSpec(image=image, role="grading", network="none", limits=Limits())


def outcomes(results: runner_results.TestResults) -> dict[str, str]:
    return {case.name: case.outcome for case in results.cases}


def test_rust_grading_finds_the_dependencies_prebuilt(provider, language_images, tmp_path, no_leftover_containers):
    image = language_images["rust"]
    tree = rust_crate(tmp_path / "crate", HONEST_RUST_TESTS)
    verbose = "CARGO_TARGET_DIR=$POLYGLOT_CARGO_TARGET cargo test --offline --tests --no-run -v 2>&1"
    code, results, build_log = run_test_command(Sandboxes(provider, "pytest-image-cache"),
                                                grading_sandbox_spec(image, Limits(), RUST), RUST, tree, verbose)
    assert code == 0 and results.passed == 2
    assert "Fresh regex v0.2" in build_log and "Compiling regex" not in build_log


def test_rust_code_under_test_cannot_poison_the_next_grading(provider, language_images, tmp_path,
                                                             no_leftover_containers):
    image = language_images["rust"]
    sandboxes = Sandboxes(provider, "pytest-image-cache")
    spec = grading_sandbox_spec(image, Limits(), RUST)
    attacker = rust_crate(tmp_path / "attacker", POISONING_RUST_TESTS)
    code, results, seen_by_attacker = run_test_command(
        sandboxes, spec, RUST, attacker, f"cat $POLYGLOT_CARGO_TARGET/{PROBE}; head -c 8 $POLYGLOT_CARGO_TARGET/debug/deps/libregex-*.rlib")
    assert code == 0 and results.passed == 3, "the attack itself ran (its writes succeed in its own layer)"
    assert "planted" in seen_by_attacker and "poisoned" in seen_by_attacker
    victim = rust_crate(tmp_path / "victim", HONEST_RUST_TESTS)
    code, results, seen_by_victim = run_test_command(
        sandboxes, spec, RUST, victim, f"ls $POLYGLOT_CARGO_TARGET/{PROBE} 2>&1; head -c 8 $POLYGLOT_CARGO_TARGET/debug/deps/libregex-*.rlib")
    assert code == 0 and results.passed == 2
    assert "No such file" in seen_by_victim and "poisoned" not in seen_by_victim


def with_and_without_cache(provider, image: str, spec, tree):
    """The test command's results on `tree` in a grading container, then without the image cache."""
    sandboxes = Sandboxes(provider, "pytest-image-cache")
    return (run_test_command(sandboxes, grading_sandbox_spec(image, Limits(), spec), spec, tree),
            run_test_command(sandboxes, without_image_cache(image, spec), spec, tree))


@pytest.mark.parametrize("tests", [HONEST_RUST_TESTS, FAILING_RUST_TESTS], ids=["passing", "failing"])
def test_rust_verdict_is_the_same_without_the_prebuilt_dependencies(provider, language_images, tmp_path, tests,
                                                                    no_leftover_containers):
    with_cache, without = with_and_without_cache(provider, language_images["rust"], RUST,
                                                 rust_crate(tmp_path / "crate", tests))
    assert (with_cache[0] == 0) == (without[0] == 0)
    assert outcomes(with_cache[1]) == outcomes(without[1]) and outcomes(without[1])


def java_exercise(root: Path, expected_sum: int) -> Path:
    (root / "src" / "main" / "java").mkdir(parents=True)
    (root / "src" / "test" / "java").mkdir(parents=True)
    (root / "src" / "main" / "java" / "Adder.java").write_text(
        "public class Adder {\n    public int add(int a, int b) { return a + b; }\n}\n")
    (root / "src" / "test" / "java" / "AdderTest.java").write_text(
        "import org.junit.jupiter.api.Test;\nimport static org.assertj.core.api.Assertions.assertThat;\n\n"
        "public class AdderTest {\n"
        "    @Test\n    public void addsSmallNumbers() { assertThat(new Adder().add(2, 3)).isEqualTo(5); }\n"
        f"    @Test\n    public void addsLargerNumbers() {{ assertThat(new Adder().add(20, 30)).isEqualTo({expected_sum}); }}\n"
        "}\n")
    return root


def test_java_cds_archives_are_used_and_read_only_to_code_under_test(provider, language_images, tmp_path,
                                                                      no_leftover_containers):
    image = language_images["java"]
    tree = java_exercise(tmp_path / "exercise", 50)
    probe = (
             "java -XX:SharedArchiveFile=$POLYGLOT_JAVA_CDS/runner.jsa -Xshare:on -version 2>&1 | tail -1; "
             "echo poisoned > $POLYGLOT_JAVA_CDS/runner.jsa; echo write=$?; "
             "touch $POLYGLOT_JAVA_CDS/planted; echo plant=$?")
    code, results, output = run_test_command(Sandboxes(provider, "pytest-image-cache"),
                                             grading_sandbox_spec(image, Limits(), JAVA), JAVA, tree, probe)
    assert code == 0 and results.passed == 2
    assert "write=0" not in output and "plant=0" not in output
    assert "Permission denied" in output


@pytest.mark.parametrize("expected_sum", [50, 51], ids=["passing", "failing"])
def test_java_verdict_is_the_same_without_the_cds_archives(provider, language_images, tmp_path, expected_sum,
                                                           no_leftover_containers):
    with_cache, without = with_and_without_cache(provider, language_images["java"], JAVA,
                                                 java_exercise(tmp_path / "exercise", expected_sum))
    assert (with_cache[0] == 0) == (without[0] == 0) == (expected_sum == 50)
    assert outcomes(with_cache[1]) == outcomes(without[1]) and len(outcomes(without[1])) == 2


def test_only_grading_containers_turn_the_image_caches_on():
    """The bench's bare floor and agent containers run without them (documented in bench/README.md)."""
    assert dict(grading_sandbox_spec("img", Limits(), RUST).environment)["POLYGLOT_CARGO_TARGET"] == "/opt/cargo-target"
    assert dict(grading_sandbox_spec("img", Limits(), JAVA).environment)["POLYGLOT_JAVA_CDS"] == "/opt/java-cds"
    assert "POLYGLOT_CARGO_TARGET" not in dict(grading_sandbox_spec("img", Limits(), LANGUAGES["go"]).environment)
