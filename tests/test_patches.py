"""utils/judging/patches.py: filter a model patch to what grading may take, apply it with fallbacks.

Patches are made the way the harness makes them (`git diff --cached --binary` of a repo
holding a sample exercise) and applied to a fresh copy of that exercise. Needs git and
GNU patch, no Docker.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from polyglot_harness.utils.languages import LANGUAGES, get_language, suspicious_patterns
from polyglot_harness.utils.judging.patches import (FilteredPatch, PatchError, TamperRecord, apply_patch, audit_patch, filter_patch,
                           guard_applied_files)

SAMPLES_DIR = Path(__file__).resolve().parents[1] / "samples"
GIT_ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent",
           "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}

# language: (exercise slug, reference solution, the solution file it replaces, a test file)
SAMPLES = {
    "python": ("running-total", ".meta/example.py", "running_total.py", "running_total_test.py"),
    "go": ("word-tally", ".meta/example.go", "word_tally.go", "word_tally_test.go"),
    "rust": ("checked-sum", ".meta/example.rs", "src/lib.rs", "tests/checked_sum.rs"),
    "javascript": ("clamp-list", ".meta/proof.ci.js", "clamp-list.js", "clamp-list.spec.js"),
    "java": ("vowel-count", ".meta/src/reference/java/VowelCount.java", "src/main/java/VowelCount.java",
             "src/test/java/VowelCountTest.java"),
    "cpp": ("digit-sum", ".meta/example.cpp", "digit_sum.cpp", "digit_sum_test.cpp"),
}
BUILD_FILES = {"go": "go.mod", "rust": "Cargo.toml", "javascript": "package.json", "java": "build.gradle",
               "cpp": "CMakeLists.txt"}


def exercise_dir(language: str) -> Path:
    return SAMPLES_DIR / language / "exercises" / "practice" / SAMPLES[language][0]


def solution_paths(language: str) -> tuple[str, ...]:
    config = json.loads((exercise_dir(language) / ".meta" / "config.json").read_text())
    return tuple(config["files"]["solution"])


def reference_solution(language: str) -> str:
    return (exercise_dir(language) / SAMPLES[language][1]).read_text()


def fresh_tree(language: str, destination: Path) -> Path:
    """The exercise as the agent and grading see it: no .meta/, no .docs/."""
    shutil.copytree(exercise_dir(language), destination, ignore=shutil.ignore_patterns(".meta", ".docs"))
    return destination


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, env=GIT_ENV, check=True, capture_output=True,
                          text=True).stdout


def make_patch(language: str, workdir: Path, edits: dict[str, str | bytes | None]) -> str:
    """`git diff --cached --binary` of the exercise after `edits` (path -> new content, None deletes)."""
    repo = fresh_tree(language, workdir / "agent-repo")
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "base")
    for path, content in edits.items():
        target = repo / path
        if content is None:
            target.unlink()
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)
    _git(repo, "add", "-A", "-f")
    return _git(repo, "diff", "--cached", "--binary", "--no-color", "HEAD")


def filtered(language: str, patch_text: str) -> FilteredPatch:
    return filter_patch(patch_text, get_language(language), solution_paths(language))


def snapshot(tree: Path) -> dict[str, bytes]:
    return {path.relative_to(tree).as_posix(): path.read_bytes() for path in sorted(tree.rglob("*")) if path.is_file()}


# --- solution edits ----------------------------------------------------------------------

@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_solution_edit_is_kept_and_applies(language: str, tmp_path: Path):
    solution = SAMPLES[language][2]
    patch_text = make_patch(language, tmp_path, {solution: reference_solution(language)})
    result = filtered(language, patch_text)
    assert result.kept_paths == (solution,)
    assert result.tamper == () and result.artifact_paths == ()
    tree = fresh_tree(language, tmp_path / "grading")
    assert apply_patch(tree, result.text) == "git apply"
    assert (tree / solution).read_text() == reference_solution(language)


# --- tamper: test and build files --------------------------------------------------------

@pytest.mark.parametrize("language", sorted(SAMPLES))
def test_test_file_edit_is_dropped_as_tamper_and_the_solution_still_applies(language: str, tmp_path: Path):
    _, _, solution, test_file = SAMPLES[language]
    pristine_test = (exercise_dir(language) / test_file).read_bytes()
    patch_text = make_patch(language, tmp_path, {
        solution: reference_solution(language),
        test_file: "// every test removed by the agent\n",
    })
    result = filtered(language, patch_text)
    assert result.kept_paths == (solution,)
    assert result.tamper == (TamperRecord(test_file, "test_file"),)
    assert test_file not in result.text
    tree = fresh_tree(language, tmp_path / "grading")
    apply_patch(tree, result.text)
    assert (tree / test_file).read_bytes() == pristine_test
    assert (tree / solution).read_text() == reference_solution(language)


@pytest.mark.parametrize("language", sorted(BUILD_FILES))
def test_build_file_edit_is_dropped_as_tamper_and_the_solution_still_applies(language: str, tmp_path: Path):
    solution, build_file = SAMPLES[language][2], BUILD_FILES[language]
    pristine_build = (exercise_dir(language) / build_file).read_bytes()
    patch_text = make_patch(language, tmp_path, {
        solution: reference_solution(language),
        build_file: pristine_build.decode() + "\n# changed by the agent\n",
    })
    only_the_source = tuple(path for path in solution_paths(language) if path != build_file)
    result = filter_patch(patch_text, get_language(language), only_the_source)
    assert result.kept_paths == (solution,)
    assert result.tamper == (TamperRecord(build_file, "build_or_config_file"),)
    tree = fresh_tree(language, tmp_path / "grading")
    apply_patch(tree, result.text)
    assert (tree / build_file).read_bytes() == pristine_build


def test_cargo_toml_listed_as_a_solution_file_is_kept(tmp_path: Path):
    # The sample's .meta/config.json lists Cargo.toml under files.solution, as upstream does.
    assert "Cargo.toml" in solution_paths("rust")
    manifest = (exercise_dir("rust") / ".meta" / "Cargo-example.toml").read_text()
    result = filtered("rust", make_patch("rust", tmp_path, {"Cargo.toml": manifest}))
    assert result.kept_paths == ("Cargo.toml",)


def test_cargo_toml_edit_that_retargets_the_tests_is_tamper(tmp_path: Path):
    manifest = (exercise_dir("rust") / "Cargo.toml").read_text()
    patch_text = make_patch("rust", tmp_path, {
        "Cargo.toml": manifest + '\n[[test]]\nname = "checked_sum"\npath = "src/fake_tests.rs"\n',
        "src/fake_tests.rs": "#[test]\nfn empty_slice_sums_to_zero() {}\n",
    })
    result = filtered("rust", patch_text)
    # Cargo.toml stays a solution file (agents may add crates); the language guard, run on the
    # applied tree, restores a manifest that declares targets and records it as tamper.
    tree = fresh_tree("rust", tmp_path / "grading")
    pristine = fresh_tree("rust", tmp_path / "pristine")
    apply_patch(tree, result.text)
    records = guard_applied_files(tree, pristine, get_language("rust"), result.kept_paths)
    assert [(record.path, record.why) for record in records] == [("Cargo.toml", "manifest_table:test")]
    assert (tree / "Cargo.toml").read_bytes() == (pristine / "Cargo.toml").read_bytes()


@pytest.mark.parametrize("manifest_tail, why", [
    ('\n[lib]\npath = "src/other.rs"\n', "manifest_table:lib"),
    ('\n[patch.crates-io]\nanyhow = { path = "vendor/anyhow" }\n', "manifest_table:patch"),
    ('\n[dev-dependencies]\nhelper = { path = "helper" }\n', "manifest_source:helper"),
])
def test_cargo_toml_that_could_swap_code_under_test_is_restored(manifest_tail: str, why: str, tmp_path: Path):
    manifest = (exercise_dir("rust") / "Cargo.toml").read_text() + manifest_tail
    assert get_language("rust").guard("Cargo.toml", manifest.encode()) == why


def test_cargo_toml_adding_a_dependency_passes_the_guard():
    manifest = (exercise_dir("rust") / ".meta" / "Cargo-example.toml").read_bytes()
    assert get_language("rust").guard("Cargo.toml", manifest) is None


def test_java_solution_declaring_a_package_is_restored_by_the_guard():
    assert get_language("java").guard("src/main/java/VowelCount.java",
                                      b"package org.assertj.core.api;\npublic class VowelCount {}\n") \
        == "declares_a_package"
    assert get_language("java").guard("src/main/java/VowelCount.java", b"public class VowelCount {}\n") is None


@pytest.mark.parametrize("language, new_file, why", [
    ("python", "conftest.py", "test_file"),
    ("python", "tests/conftest.py", "test_file"),
    ("python", "test_extra.py", "test_file"),
    ("python", "sitecustomize.py", "new_file"),
    ("python", "pytest.ini", "new_file"),
    ("python", "__init__.py", "new_file"),
    ("javascript", "jest.config.js", "new_file"),
    ("javascript", "babel.config.cjs", "new_file"),
    ("javascript", ".babelrc", "new_file"),
    ("javascript", "extra.spec.js", "test_file"),
    ("javascript", "__tests__/extra.js", "test_file"),
    ("rust", "build.rs", "new_file"),
    ("rust", "src/main.rs", "new_file"),
    ("rust", "src/bin/tool.rs", "new_file"),
    ("rust", "tests/extra.rs", "test_file"),
    ("go", "extra_test.go", "test_file"),
    ("go", "sub/helper.go", "new_file"),
    ("java", "src/test/java/ExtraTest.java", "test_file"),
    ("java", "src/main/resources/junit-platform.properties", "new_file"),
    ("cpp", "extra_test.cpp", "test_file"),
    ("cpp", "test/catch.hpp.new", "new_file"),
])
def test_new_file_that_could_change_test_collection_is_dropped_as_tamper(language: str, new_file: str, why: str,
                                                                         tmp_path: Path):
    solution = SAMPLES[language][2]
    patch_text = make_patch(language, tmp_path, {solution: reference_solution(language), new_file: "x = 1\n"})
    result = filtered(language, patch_text)
    assert result.kept_paths == (solution,)
    assert result.tamper == (TamperRecord(new_file, why),)
    tree = fresh_tree(language, tmp_path / "grading")
    apply_patch(tree, result.text)
    assert not (tree / new_file).exists()


@pytest.mark.parametrize("language, helper", [
    ("python", "helpers.py"),
    ("go", "helpers.go"),
    ("rust", "src/helpers.rs"),
    ("rust", "src/parsing/mod.rs"),
    ("javascript", "helpers.js"),
    ("javascript", "lib/helpers.js"),
    ("java", "src/main/java/Helpers.java"),
    ("cpp", "helpers.h"),
    ("cpp", "helpers.cpp"),
])
def test_new_helper_source_file_is_kept_and_created(language: str, helper: str, tmp_path: Path):
    solution = SAMPLES[language][2]
    patch_text = make_patch(language, tmp_path, {solution: reference_solution(language), helper: "// helper\n"})
    result = filtered(language, patch_text)
    assert set(result.kept_paths) == {solution, helper}
    assert result.tamper == ()
    tree = fresh_tree(language, tmp_path / "grading")
    apply_patch(tree, result.text)
    assert (tree / helper).read_text() == "// helper\n"


def test_java_new_file_shadowing_a_test_library_class_is_tamper(tmp_path: Path):
    fake = "package org.assertj.core.api;\n\npublic class Assertions {\n}\n"
    patch_text = make_patch("java", tmp_path, {"src/main/java/org/assertj/core/api/Assertions.java": fake})
    result = filtered("java", patch_text)
    assert result.kept_paths == ()


def test_hidden_paths_from_the_metadata_are_test_files_even_without_a_matching_glob(tmp_path: Path):
    patch_text = make_patch("go", tmp_path, {"go.mod": "module wordtally\n\ngo 1.22\n",
                                             "word_tally.go": reference_solution("go")})
    result = filter_patch(patch_text, get_language("go"), solution_paths("go"), hidden_paths=("go.mod",))
    assert result.tamper == (TamperRecord("go.mod", "test_file"),)


@pytest.mark.parametrize("change, why", [
    ("delete", "deleted_file"),
    ("rename", "copied_or_renamed_file"),  # git writes a rename header
    ("binary", "binary_file"),
])
def test_deleting_renaming_or_binary_editing_the_solution_is_tamper(change: str, why: str, tmp_path: Path):
    solution = "running_total.py"
    edits: dict[str, str | bytes | None] = {
        "delete": {solution: None},
        "rename": {solution: None, "running_total_v2.py": (exercise_dir("python") / solution).read_text()},
        "binary": {solution: b"\x00\x01\x02 not text \xff"},
    }[change]
    result = filtered("python", make_patch("python", tmp_path, edits))
    assert result.kept_paths == ()
    assert result.tamper[0].why == why


# --- artifacts -------------------------------------------------------------------------

@pytest.mark.parametrize("language, artifact, content", [
    ("python", "__pycache__/running_total.cpython-311.pyc", b"\xa7\r\r\n\x00\x00\x00\x00binary"),
    ("python", ".pytest_cache/v/cache/lastfailed", "{}\n"),
    ("rust", "target/debug/checked_sum", b"\x7fELF\x02\x01\x01\x00"),
    ("rust", "Cargo.lock", "version = 3\n"),
    ("javascript", "node_modules/a/b.js", "module.exports = 1;\n"),
    ("javascript", "package-lock.json", "{}\n"),
    ("java", "build/classes/VowelCount.class", b"\xca\xfe\xba\xbe\x00"),
    ("java", ".gradle/8.0/fileHashes.lock", b"\x00"),
    ("cpp", "build/digit_sum.o", b"\x7fELF\x00"),
    ("go", "wordtally.test", b"\x7fELF\x00"),
    ("go", ".DS_Store", b"\x00\x00\x00\x01Bud1"),
])
def test_build_artifacts_are_dropped_silently(language: str, artifact: str, content, tmp_path: Path):
    solution = SAMPLES[language][2]
    patch_text = make_patch(language, tmp_path, {solution: reference_solution(language), artifact: content})
    result = filtered(language, patch_text)
    assert result.kept_paths == (solution,)
    assert result.artifact_paths == (artifact,)
    assert result.tamper == ()
    tree = fresh_tree(language, tmp_path / "grading")
    assert apply_patch(tree, result.text) == "git apply"
    assert not (tree / artifact).exists()


# --- application fallbacks ------------------------------------------------------------------

STUB = "def running_total(numbers):\n    pass\n\n\ndef first_over(numbers, threshold):\n    pass\n"
SOLVED = STUB.replace("    pass\n", "    return list(numbers)\n", 1)


def python_tree(workdir: Path, stub: str) -> Path:
    tree = workdir / "grading"
    tree.mkdir()
    (tree / "running_total.py").write_bytes(stub.encode())
    return tree


def solved_patch() -> str:
    return ("diff --git a/running_total.py b/running_total.py\n"
            "--- a/running_total.py\n"
            "+++ b/running_total.py\n"
            "@@ -1,5 +1,5 @@\n"
            " def running_total(numbers):\n"
            "-    pass\n"
            "+    return list(numbers)\n"
            " \n"
            " \n"
            " def first_over(numbers, threshold):\n")


def test_clean_patch_applies_with_plain_git_apply(tmp_path: Path):
    tree = python_tree(tmp_path, STUB)
    assert apply_patch(tree, solved_patch()) == "git apply"
    assert (tree / "running_total.py").read_text() == SOLVED


def test_crlf_tree_with_lf_patch_applies_ignoring_whitespace(tmp_path: Path):
    tree = python_tree(tmp_path, STUB.replace("\n", "\r\n"))
    result = filter_patch(solved_patch(), get_language("python"), ("running_total.py",))
    assert apply_patch(tree, result.text) == "git apply --recount --ignore-whitespace"
    assert b"    return list(numbers)" in (tree / "running_total.py").read_bytes()


def test_tab_indented_tree_applies_ignoring_whitespace(tmp_path: Path):
    tree = python_tree(tmp_path, STUB.replace("    pass", "\tpass"))
    assert apply_patch(tree, solved_patch()) == "git apply --recount --ignore-whitespace"
    assert "    return list(numbers)\n" in (tree / "running_total.py").read_text()


@pytest.mark.parametrize("drifted_stub", [
    "# a header line the patch did not know about\n" + STUB,
    STUB.replace("def first_over(numbers, threshold):", "def first_over(numbers, limit):"),
    STUB.replace("def running_total(numbers):", "def running_total(numbers):  "),
], ids=["shifted", "changed_context", "trailing_whitespace"])
def test_drifted_context_applies_with_patch_fuzz(drifted_stub: str, tmp_path: Path):
    tree = python_tree(tmp_path, drifted_stub)
    assert apply_patch(tree, solved_patch()) == "patch --fuzz=3"
    assert "    return list(numbers)\n" in (tree / "running_total.py").read_text()
    assert not list(tree.glob("*.orig")) and not list(tree.glob("*.rej"))


def test_crlf_patch_editing_the_solution_is_kept_and_applies(tmp_path: Path):
    tree = python_tree(tmp_path, STUB)
    result = filter_patch(solved_patch().replace("\n", "\r\n"), get_language("python"), ("running_total.py",))
    assert result.kept_paths == ("running_total.py",)
    apply_patch(tree, result.text)
    assert "return list(numbers)" in (tree / "running_total.py").read_text()


def test_patch_that_cannot_apply_raises_patch_error_naming_every_method(tmp_path: Path):
    tree = python_tree(tmp_path, "x = 1\n")
    with pytest.raises(PatchError) as raised:
        apply_patch(tree, solved_patch())
    message = str(raised.value)
    for method in ("git apply:", "git apply --recount --ignore-whitespace:", "patch --fuzz=3:"):
        assert method in message
    assert snapshot(tree) == {"running_total.py": b"x = 1\n"}


def test_patch_for_a_missing_file_raises_patch_error(tmp_path: Path):
    tree = tmp_path / "grading"
    tree.mkdir()
    with pytest.raises(PatchError):
        apply_patch(tree, solved_patch())


def test_apply_inside_an_enclosing_git_repo_still_patches_the_tree(tmp_path: Path):
    # git apply run inside a repo's subdirectory would take paths from the repo root and skip ours.
    _git(tmp_path, "init", "-q")
    (tmp_path / "work").mkdir()
    tree = python_tree(tmp_path / "work", STUB)
    assert apply_patch(tree, solved_patch()) == "git apply"
    assert (tree / "running_total.py").read_text() == SOLVED


def test_failed_attempt_leaves_the_trees_own_orig_files_alone(tmp_path: Path):
    tree = python_tree(tmp_path, "# shifted\n" + STUB)  # plain git apply fails, patch --fuzz applies
    (tree / "expected_output.orig").write_text("data the tests read\n")
    apply_patch(tree, solved_patch())
    assert (tree / "expected_output.orig").exists()


# --- the caller's files, empty patches, unparseable patches -----------------------------------

def test_patch_file_on_disk_and_source_tree_are_never_modified(tmp_path: Path, monkeypatch):
    patch_text = make_patch("python", tmp_path, {
        "running_total.py": reference_solution("python"),
        "running_total_test.py": "# gone\n",
        "__pycache__/x.pyc": b"\x00",
    })
    patch_file = tmp_path / "model_patch.diff"
    patch_file.write_text(patch_text)
    patch_bytes, source_before = patch_file.read_bytes(), snapshot(exercise_dir("python"))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()

    result = filtered("python", patch_file.read_text())
    apply_patch(fresh_tree("python", tmp_path / "grading"), result.text)

    assert patch_file.read_bytes() == patch_bytes
    assert snapshot(exercise_dir("python")) == source_before
    assert list((tmp_path / "tmp").iterdir()) == []  # the temporary copy of the patch is gone


@pytest.mark.parametrize("patch_text", ["", "\n", "   \n\n"])
def test_empty_patch_is_empty_and_applies_as_nothing(patch_text: str, tmp_path: Path):
    result = filtered("python", patch_text)
    assert result == FilteredPatch("", (), (), ())
    assert result.is_empty
    tree = fresh_tree("python", tmp_path / "grading")
    before = snapshot(tree)
    assert apply_patch(tree, result.text) == "empty"
    assert snapshot(tree) == before


def test_patch_of_only_tamper_and_artifacts_is_empty(tmp_path: Path):
    patch_text = make_patch("python", tmp_path, {"running_total_test.py": "# gone\n", "__pycache__/x.pyc": b"\x00"})
    result = filtered("python", patch_text)
    assert result.is_empty and result.text == ""
    assert result.tamper == (TamperRecord("running_total_test.py", "test_file"),)
    assert result.artifact_paths == ("__pycache__/x.pyc",)


def test_text_that_is_not_a_diff_is_an_empty_patch():
    # Current behaviour: unidiff finds no file in prose, so nothing is kept and nothing recorded.
    assert filtered("python", "I could not solve this task.\n").is_empty


def test_patch_with_wrong_hunk_counts_is_rejected_by_the_filter():
    # Current behaviour: unidiff refuses the hunk, so `git apply --recount` never sees such a patch.
    bad_counts = solved_patch().replace("@@ -1,5 +1,5 @@", "@@ -1,9 +1,9 @@")
    with pytest.raises(PatchError, match="not a unified diff"):
        filtered("python", bad_counts)


def test_unparseable_patch_is_a_patch_apply_failed_verdict(tmp_path: Path):
    from polyglot_harness.utils.pipeline.grading import GradingRequest, grade
    from polyglot_harness.utils.outcomes import Reason

    request = GradingRequest(language=get_language("python"), instance_id="python__running-total",
                             test_tree=fresh_tree("python", tmp_path / "tree"),
                             patch_text=solved_patch().replace("@@ -1,5 +1,5 @@", "@@ -1,9 +1,9 @@"),
                             solution_paths=("running_total.py",))
    outcome = grade(None, "unused-image", request)  # fails before any sandbox is started
    assert outcome.verdict.reason == Reason.PATCH_APPLY_FAILED


def test_grading_uses_the_patch_the_caller_filtered_and_does_not_filter_again(tmp_path: Path, monkeypatch):
    from polyglot_harness.utils.pipeline import grading
    from polyglot_harness.utils.pipeline.grading import GradingRequest, grade
    from polyglot_harness.utils.outcomes import Reason

    spec = get_language("python")
    already = filter_patch(solved_patch(), spec, ("running_total.py",), ())
    monkeypatch.setattr(grading, "filter_patch", lambda *args: pytest.fail("the patch was filtered twice"))
    tree = fresh_tree("python", tmp_path / "tree")
    (tree / "running_total.py").write_text("something else entirely\n")  # the filtered patch cannot apply
    request = GradingRequest(language=spec, instance_id="python__running-total",
                             test_tree=tree, patch_text="ignored: already filtered",
                             solution_paths=("running_total.py",), filtered=already)
    outcome = grade(None, "unused-image", request)
    assert outcome.filtered is already and outcome.verdict.reason == Reason.PATCH_APPLY_FAILED



# --- audit of kept lines ------------------------------------------------------------------------

EARLY_EXIT_FIXTURES = Path(__file__).resolve().parent / "fixtures" / "early_exit"


def _new_files_patch(root: Path) -> str:
    text = ""
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        lines = path.read_text().splitlines()
        relative = path.relative_to(root).as_posix()
        text += (f"diff --git a/{relative} b/{relative}\nnew file mode 100644\n--- /dev/null\n+++ b/{relative}\n"
                 f"@@ -0,0 +1,{len(lines)} @@\n" + "".join(f"+{line}\n" for line in lines))
    return text


@pytest.mark.parametrize("fixture", sorted(p.relative_to(EARLY_EXIT_FIXTURES).as_posix()
                                           for p in EARLY_EXIT_FIXTURES.glob("*/*")))
def test_every_early_exit_cheat_is_flagged_as_suspicious(fixture: str):
    kinds = {line.kind for line in audit_patch(_new_files_patch(EARLY_EXIT_FIXTURES / fixture), suspicious_patterns())}
    assert "early_exit" in kinds


def test_every_registered_language_has_a_sample_here():
    assert set(SAMPLES) == set(LANGUAGES)


@pytest.mark.parametrize("language", list(LANGUAGES))
def test_reference_solutions_are_not_flagged(language: str):
    example_files = exercise_dir(language) / ".meta"
    sources = [p for p in example_files.rglob("*") if p.is_file() and p.suffix not in (".json", ".toml")]
    patch_text = ""
    for source in sources:
        lines = source.read_text().splitlines()
        patch_text += (f"diff --git a/{source.name} b/{source.name}\nnew file mode 100644\n--- /dev/null\n"
                       f"+++ b/{source.name}\n@@ -0,0 +1,{len(lines)} @@\n" + "".join(f"+{line}\n" for line in lines))
    assert audit_patch(patch_text, suspicious_patterns()) == ()


def test_binary_garbage_is_unparseable_not_empty():
    garbage = bytes(range(256)).decode("utf-8", errors="replace") * 4
    with pytest.raises(PatchError, match="binary"):
        filtered("python", garbage)
