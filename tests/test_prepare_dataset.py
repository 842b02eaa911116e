"""prepare_polyglot_dataset.py: instance repos, metadata, determinism, leaks, bad input."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[1]

from bench.prepare_speed import UPSTREAM_COUNTS, write_synthetic_checkout, write_synthetic_exercise  # noqa: E402
from polyglot_harness.utils.prepare.dataset import prepare_dataset  # noqa: E402
from polyglot_harness.utils.prepare.exercises import closing_paragraph  # noqa: E402
from polyglot_harness.utils.records.dataset import METADATA_FILENAME, load_dataset  # noqa: E402
from polyglot_harness.utils.records.instance_repo import checkout_commit, read_commit_files  # noqa: E402

pytestmark = pytest.mark.beside_gate  # the benchmark's checkout only, nothing recorded: beside the gate's preparation

SAMPLES_DIR = PROJECT_ROOT / "samples"
SCRIPT = PROJECT_ROOT / "prepare_polyglot_dataset.py"
HA_KEYS = (
    "instance_id", "language", "task_name", "files", "authors", "contributors", "blurb", "source",
    "problem_statement", "base_commit", "test_commit", "reference_tests", "reference_answers",
    "test_patch", "repo",
)
OUR_KEYS = ("hidden_paths", "solution_paths", "reference_dir", "expected_tests")


# --- helpers ------------------------------------------------------------------------------


def sample_exercise_dirs() -> list[Path]:
    return sorted(SAMPLES_DIR.glob("*/exercises/practice/*/"))


def isolated_git_env(home: Path) -> dict[str, str]:
    """git that reads no user or system config."""
    home.mkdir(parents=True, exist_ok=True)
    return {**os.environ, "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
            "XDG_CONFIG_HOME": str(home / ".config")}


def git(repo: Path, *args: str, env: dict[str, str] | None = None, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True, check=check)


def git_blob_id(content: bytes) -> str:
    import hashlib

    return hashlib.sha1(f"blob {len(content)}\0".encode() + content).hexdigest()


def snapshot(root: Path) -> dict[str, tuple[int, bytes]]:
    """Every file under root with its mode and bytes (directories by mode only)."""
    result: dict[str, tuple[int, bytes]] = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        mode = path.lstat().st_mode
        result[relative] = (mode, path.read_bytes() if path.is_file() else b"")
    return result


def run_cli(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=cwd, env=env, capture_output=True, text=True)


def metadata(dataset_dir: Path) -> list[dict]:
    return json.loads((dataset_dir / METADATA_FILENAME).read_text(encoding="utf-8"))


def entry_for(dataset_dir: Path, instance_id: str) -> dict:
    return next(entry for entry in metadata(dataset_dir) if entry["instance_id"] == instance_id)


@pytest.fixture(scope="module")
def samples_dataset(tmp_path_factory) -> Path:
    if not sample_exercise_dirs():
        pytest.skip("no bundled samples yet")
    output = tmp_path_factory.mktemp("samples") / "dataset"
    prepare_dataset(SAMPLES_DIR, output, record_expected=False)
    return output


def one_exercise_checkout(root: Path, language: str = "python", slug: str = "two-fer") -> Path:
    write_synthetic_exercise(root, language, slug)
    return root / language / "exercises" / "practice" / slug


# --- the bundled samples ------------------------------------------------------------------


def test_every_sample_exercise_becomes_an_instance(samples_dataset):
    expected = sorted(f"{d.parts[-4]}__{d.name}" for d in sample_exercise_dirs())
    ids = [entry["instance_id"] for entry in metadata(samples_dataset)]
    assert ids == expected
    for instance in load_dataset(samples_dataset):
        assert (instance.agent_repo_dir / ".git").is_dir()
        assert instance.grading_repo_dir.is_dir()
        assert instance.reference_dir.is_dir()


def test_metadata_has_hyperagents_keys_and_ours(samples_dataset):
    for entry in metadata(samples_dataset):
        for key in HA_KEYS + OUR_KEYS:
            assert key in entry, (entry["instance_id"], key)
        assert entry["repo"] == f"repos/{entry['instance_id']}"
        assert entry["reference_dir"] == f"references/{entry['instance_id']}"
        assert entry["expected_tests"] is None
        assert set(entry["reference_tests"]) == set(entry["hidden_paths"])


def test_two_runs_in_different_directories_are_identical(samples_dataset, tmp_path):
    other = tmp_path / "elsewhere" / "second"
    prepare_dataset(SAMPLES_DIR, other, workers=1, record_expected=False)
    assert (other / METADATA_FILENAME).read_bytes() == (samples_dataset / METADATA_FILENAME).read_bytes()
    first = {(e["base_commit"], e["test_commit"]) for e in metadata(samples_dataset)}
    second = {(e["base_commit"], e["test_commit"]) for e in metadata(other)}
    assert first == second


def test_recorded_test_names_do_not_depend_on_the_order_the_runner_reported_them(samples_dataset):
    """The reference run's canaries get random names, which reorder a runner's report
    (unittest runs methods by name): recorded names are sorted, so two preparations of one
    benchmark give one metadata file and one dataset_hash (the resume key)."""
    from polyglot_harness.utils.pipeline.expected_tests import ReferenceRun
    from polyglot_harness.utils.prepare.recording import with_reference_run
    from polyglot_harness.utils.records.dataset import MetadataEntry

    entry = MetadataEntry.from_json(metadata(samples_dataset)[0])
    recorded = [with_reference_run(entry, ReferenceRun(instance_id=entry.instance_id, test_names=names, reason="tests_passed", seconds=1.0,
                                                        skipped_names=skipped, stub_passes=False))
                for names, skipped in ((("t.b", "t.a", "t.c"), ("s.z", "s.y")), (("t.c", "t.a", "t.b"), ("s.y", "s.z")))]
    assert recorded[0] == recorded[1]
    assert recorded[0].expected_tests == ("t.a", "t.b", "t.c") and recorded[0].expected_skips == ("s.y", "s.z")


def test_rerun_replaces_output_with_identical_bytes(tmp_path):
    output = tmp_path / "dataset"
    prepare_dataset(SAMPLES_DIR, output, record_expected=False)
    before = snapshot(output)
    prepare_dataset(SAMPLES_DIR, output, record_expected=False)
    assert snapshot(output) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dataset"]  # no staging left over


def test_user_git_config_cannot_change_the_result(samples_dataset, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / ".gitconfig").write_text(
        "[commit]\n\tgpgsign = true\n[core]\n\tautocrlf = true\n\tfileMode = false\n"
        "[init]\n\tdefaultBranch = trunk\n[user]\n\tname = Someone Else\n\temail = else@example.com\n"
    )
    env = {**os.environ, "HOME": str(home), "GIT_CONFIG_GLOBAL": str(home / ".gitconfig"),
           "GIT_AUTHOR_DATE": "2020-02-02T02:02:02Z", "GIT_COMMITTER_NAME": "Other", "TZ": "Asia/Tokyo"}
    result = run_cli("--benchmark_dir", str(SAMPLES_DIR), "--output_dir", str(tmp_path / "out"), "--fast", cwd=tmp_path,
                     env=env)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / METADATA_FILENAME).read_bytes() == (samples_dataset / METADATA_FILENAME).read_bytes()


def test_agent_cannot_see_tests(samples_dataset, tmp_path):
    env = isolated_git_env(tmp_path / "home")
    for entry in metadata(samples_dataset):
        agent = samples_dataset / entry["repo"] / "agent"
        # A reference file equal to its stub (a C++ header, say) gives nothing away.
        stubs = {git_blob_id((agent / path).read_bytes()) for path in entry["reference_answers"] if (agent / path).exists()}
        forbidden = {entry["test_commit"]}
        forbidden |= {git_blob_id(text.encode()) for text in entry["reference_tests"].values()}
        forbidden |= {git_blob_id(text.encode()) for text in entry["reference_answers"].values()} - stubs
        objects = git(agent, "cat-file", "--batch-all-objects", "--batch-check", env=env).stdout.split("\n")
        object_ids = {line.split()[0] for line in objects if line}
        assert not object_ids & forbidden, entry["instance_id"]
        assert git(agent, "log", "--all", "--reflog", "--format=%H", env=env).stdout.split() == [entry["base_commit"]]
        refs = git(agent, "for-each-ref", "--format=%(objectname) %(refname)", env=env).stdout.splitlines()
        assert refs == [f"{entry['base_commit']} refs/heads/main"]
        assert not (agent / ".git" / "packed-refs").exists()
        assert not (agent / ".git" / "logs").exists()
        assert git(agent, "cat-file", "-e", entry["test_commit"], env=env, check=False).returncode != 0
        for hidden in entry["hidden_paths"]:
            assert not (agent / hidden).exists()
        assert not (agent / ".meta").exists()


def test_agent_repo_is_a_clean_checkout_of_the_base_commit(samples_dataset, tmp_path):
    env = isolated_git_env(tmp_path / "home")
    for entry in metadata(samples_dataset):
        copy = tmp_path / entry["instance_id"]
        shutil.copytree(samples_dataset / entry["repo"] / "agent", copy)  # as it arrives in a container
        assert git(copy, "fsck", "--strict", "--no-dangling", env=env).returncode == 0
        assert git(copy, "status", "--porcelain", env=env).stdout == ""
        assert git(copy, "rev-parse", "HEAD", env=env).stdout.strip() == entry["base_commit"]
        for solution in entry["solution_paths"]:
            assert (copy / solution).is_file()


def test_grading_repo_has_the_test_files_on_top_of_the_base(samples_dataset, tmp_path):
    env = isolated_git_env(tmp_path / "home")
    for entry in metadata(samples_dataset):
        grading = samples_dataset / entry["repo"] / "grading.git"
        assert git(grading, "fsck", "--strict", env=env).returncode == 0
        parent = git(grading, "rev-parse", f"{entry['test_commit']}^", env=env).stdout.strip()
        assert parent == entry["base_commit"]
        tree = checkout_commit(grading, entry["test_commit"], tmp_path / entry["instance_id"])
        paths = {repo_file.path for repo_file in tree}
        base_paths = {f.path for f in read_commit_files(grading, entry["base_commit"])}
        assert paths - base_paths == set(entry["hidden_paths"])
        exercise = SAMPLES_DIR / entry["language"] / "exercises" / "practice" / entry["task_name"]
        for hidden in entry["hidden_paths"]:
            assert (tmp_path / entry["instance_id"] / hidden).read_bytes() == (exercise / hidden).read_bytes()
        assert not any(path.startswith(".meta/") for path in paths)


def test_test_patch_is_what_git_diff_prints(samples_dataset, tmp_path):
    env = isolated_git_env(tmp_path / "home")
    for entry in metadata(samples_dataset):
        grading = samples_dataset / entry["repo"] / "grading.git"
        diff = git(grading, "diff", "--no-color", entry["base_commit"], entry["test_commit"], env=env).stdout
        assert entry["test_patch"] == diff, entry["instance_id"]


def test_reference_solutions_live_outside_the_repos_at_solution_paths(samples_dataset):
    for entry in metadata(samples_dataset):
        reference_dir = samples_dataset / entry["reference_dir"]
        files = {p.relative_to(reference_dir).as_posix() for p in reference_dir.rglob("*") if p.is_file()}
        assert files == set(entry["reference_answers"])
        assert set(entry["solution_paths"]) & files, entry["instance_id"]
        differs_from_stub = False
        for path, content in entry["reference_answers"].items():
            assert (reference_dir / path).read_text(encoding="utf-8") == content
            stub = samples_dataset / entry["repo"] / "agent" / path
            differs_from_stub |= not stub.exists() or stub.read_text(encoding="utf-8") != content
        assert differs_from_stub, entry["instance_id"]


def test_rust_reference_uses_cargo_example_manifest(samples_dataset):
    for entry in metadata(samples_dataset):
        exercise = SAMPLES_DIR / entry["language"] / "exercises" / "practice" / entry["task_name"]
        if (exercise / ".meta" / "Cargo-example.toml").exists():
            expected = (exercise / ".meta" / "Cargo-example.toml").read_text(encoding="utf-8")
            assert entry["reference_answers"]["Cargo.toml"] == expected


def test_cpp_exercise_name_is_explicit(samples_dataset):
    cpp_entries = [e for e in metadata(samples_dataset) if e["language"] == "cpp"]
    assert cpp_entries, "the samples have a C++ exercise"
    for entry in cpp_entries:
        cmake = (samples_dataset / entry["repo"] / "agent" / "CMakeLists.txt").read_text()
        assert f"set(exercise {entry['task_name']})" in cmake
        assert "get_filename_component(exercise" not in cmake


# --- behaviour pinned on small synthetic checkouts ---------------------------------------


def test_problem_statement_orders_docs_and_leaves_out_hints(tmp_path):
    exercise = one_exercise_checkout(tmp_path / "checkout")
    docs = exercise / ".docs"
    (docs / "instructions.md").write_text("# Instructions\n\nDo the thing.\n")
    (docs / "introduction.md").write_text("# Introduction\n\nOnce upon a time.\n")
    (docs / "instructions.append.md").write_text("# Appendix\n\nPython specifics.\n")
    (docs / "hints.md").write_text("SECRET HINT\n")
    prepare_dataset(tmp_path / "checkout", tmp_path / "out", record_expected=False)
    statement = entry_for(tmp_path / "out", "python__two-fer")["problem_statement"]
    assert statement == (
        "# Introduction\n\nOnce upon a time.\n\n# Instructions\n\nDo the thing.\n\n"
        "# Appendix\n\nPython specifics.\n\n" + closing_paragraph(["two_fer.py"]) + "\n"
    )
    assert "SECRET HINT" not in statement
    closing = closing_paragraph(["two_fer.py"])
    assert "two_fer.py" in closing and "hidden" in closing and "standard library" in closing
    assert "names of existing functions or classes" in closing


def test_executable_bit_is_kept(tmp_path):
    one_exercise_checkout(tmp_path / "checkout", "java", "two-fer")
    prepare_dataset(tmp_path / "checkout", tmp_path / "out", record_expected=False)
    agent = tmp_path / "out" / "repos" / "java__two-fer" / "agent"
    tree = git(agent, "ls-tree", "-r", "HEAD", env=isolated_git_env(tmp_path / "home")).stdout
    assert "100755 blob" in next(line for line in tree.splitlines() if line.endswith("\tgradlew"))
    assert "100644 blob" in next(line for line in tree.splitlines() if line.endswith("\tbuild.gradle"))
    assert (agent / "gradlew").stat().st_mode & stat.S_IXUSR


def test_exercisms_solution_write_ups_are_in_no_repository(tmp_path):
    """`.approaches/` and `.articles/` hold Exercism's write-ups of solutions (whole algorithms
    in snippet.txt: red team 13 found 13 of the benchmark's agent repos holding them): like
    `.meta/`, in no repository; a file merely named like them stays."""
    exercise = one_exercise_checkout(tmp_path / "checkout", "python", "two-fer")
    for relative in (".approaches/config.json", ".approaches/one-liner/snippet.txt", ".articles/speed/content.md"):
        (exercise / relative).parent.mkdir(parents=True, exist_ok=True)
        (exercise / relative).write_text("def two_fer(name='you'): return f'One for {name}, one for me.'\n")
    (exercise / "approaches-notes.md").write_text("not a write-up folder\n")
    prepare_dataset(tmp_path / "checkout", tmp_path / "out", record_expected=False)
    env = isolated_git_env(tmp_path / "home")
    repos = tmp_path / "out" / "repos" / "python__two-fer"
    for repo, ref in ((repos / "agent", "HEAD"), (repos / "grading.git", "test")):
        tree = git(repo, "ls-tree", "-r", "--name-only", ref, env=env).stdout.split()
        assert "approaches-notes.md" in tree
        assert not [path for path in tree if path.startswith((".approaches/", ".articles/", ".meta/"))], tree


def test_large_and_binary_files_round_trip_through_the_repos(tmp_path):
    env = isolated_git_env(tmp_path / "home")
    cpp = one_exercise_checkout(tmp_path / "checkout", "cpp", "big-header")  # 650 kB catch.hpp
    java = one_exercise_checkout(tmp_path / "checkout", "java", "jar-file")  # binary gradle-wrapper.jar
    prepare_dataset(tmp_path / "checkout", tmp_path / "out", record_expected=False)
    for exercise, instance_id in ((cpp, "cpp__big-header"), (java, "java__jar-file")):
        repos = tmp_path / "out" / "repos" / instance_id
        assert git(repos / "agent", "fsck", "--strict", "--full", env=env).returncode == 0
        assert git(repos / "grading.git", "fsck", "--strict", "--full", env=env).returncode == 0
        entry = entry_for(tmp_path / "out", instance_id)
        tree = checkout_commit(repos / "grading.git", entry["test_commit"], tmp_path / "tree" / instance_id)
        for repo_file in tree:
            if repo_file.path != "CMakeLists.txt":
                assert repo_file.content == (exercise / repo_file.path).read_bytes(), repo_file.path


def test_input_checkout_is_not_modified(tmp_path):
    checkout = tmp_path / "checkout"
    shutil.copytree(SAMPLES_DIR, checkout)
    before = snapshot(checkout)
    prepare_dataset(checkout, tmp_path / "out", record_expected=False)
    assert snapshot(checkout) == before


def test_hashes_do_not_depend_on_the_checkout_location(tmp_path):
    one_exercise_checkout(tmp_path / "a" / "checkout")
    one_exercise_checkout(tmp_path / "b" / "elsewhere")
    prepare_dataset(tmp_path / "a" / "checkout", tmp_path / "a" / "out", record_expected=False)
    prepare_dataset(tmp_path / "b" / "elsewhere", tmp_path / "b" / "out", record_expected=False)
    first = (tmp_path / "a" / "out" / METADATA_FILENAME).read_bytes()
    assert first == (tmp_path / "b" / "out" / METADATA_FILENAME).read_bytes()


def test_full_size_synthetic_benchmark_prepares_quickly(tmp_path):
    write_synthetic_checkout(tmp_path / "checkout")
    started = time.monotonic()
    summary = prepare_dataset(tmp_path / "checkout", tmp_path / "out", workers=2, record_expected=False)
    elapsed = time.monotonic() - started
    print(f"\n225 synthetic exercises prepared in {elapsed:.2f}s")
    assert summary.instances_by_language == dict(sorted(UPSTREAM_COUNTS.items()))
    assert len(metadata(tmp_path / "out")) == 225
    assert elapsed < 60


def test_benchmark_url_is_cloned_into_the_cache_and_gives_the_same_hashes(samples_dataset, tmp_path):
    env = isolated_git_env(tmp_path / "home")
    source = tmp_path / "upstream"
    shutil.copytree(SAMPLES_DIR, source)
    git(source, "init", "-q", env=env)
    git(source, "add", "-A", env=env)
    git(source, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "snapshot", env=env)
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    result = run_cli("--benchmark_url", source.as_uri(), "--output_dir", str(tmp_path / "out"), "--fast", cwd=tmp_path,
                     env=env)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "out" / METADATA_FILENAME).read_bytes() == (samples_dataset / METADATA_FILENAME).read_bytes()
    assert list((tmp_path / "cache" / "polyglot-harness" / "benchmarks").glob("*/.git"))


# --- bad input: one line, non-zero exit, nothing written, input untouched ---------------


def _previous_output(tmp_path: Path) -> Path:
    output = tmp_path / "out"
    checkout = tmp_path / "previous-checkout"
    one_exercise_checkout(checkout, "go", "earlier")
    prepare_dataset(checkout, output, record_expected=False)
    return output


def _assert_clean_failure(tmp_path: Path, checkout: Path, *needles: str, extra_args: tuple[str, ...] = ()) -> None:
    output = _previous_output(tmp_path)
    before_output = snapshot(output)
    before_input = snapshot(checkout) if checkout.exists() else None
    result = run_cli("--benchmark_dir", str(checkout), "--output_dir", str(output), "--fast", *extra_args, cwd=tmp_path)
    assert result.returncode != 0
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert snapshot(output) == before_output
    if before_input is not None:
        assert snapshot(checkout) == before_input
    leftovers = [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]
    assert leftovers == []


def test_directory_that_is_not_a_checkout_fails_cleanly(tmp_path):
    not_a_checkout = tmp_path / "random"
    (not_a_checkout / "stuff").mkdir(parents=True)
    (not_a_checkout / "README.md").write_text("hello\n")
    _assert_clean_failure(tmp_path, not_a_checkout, "not a polyglot benchmark checkout", str(not_a_checkout))


def test_missing_benchmark_dir_fails_cleanly(tmp_path):
    _assert_clean_failure(tmp_path, tmp_path / "nowhere", "does not exist")


def test_exercise_without_config_json_fails_cleanly(tmp_path):
    exercise = one_exercise_checkout(tmp_path / "checkout")
    one_exercise_checkout(tmp_path / "checkout", "python", "fine-one")
    (exercise / ".meta" / "config.json").unlink()
    _assert_clean_failure(tmp_path, tmp_path / "checkout", "python/exercises/practice/two-fer", ".meta/config.json is missing")


@pytest.mark.parametrize("role, path", [("solution", "two_fer.py"), ("test", "two_fer_test.py"), ("example", ".meta/example.py")])
def test_listed_file_that_does_not_exist_fails_cleanly(tmp_path, role, path):
    exercise = one_exercise_checkout(tmp_path / "checkout")
    (exercise / path).unlink()
    _assert_clean_failure(tmp_path, tmp_path / "checkout", "python/exercises/practice/two-fer", f"{role} file {path}", "does not exist")


def test_unknown_language_directory_fails_cleanly(tmp_path):
    one_exercise_checkout(tmp_path / "checkout")
    (tmp_path / "checkout" / "kotlin" / "exercises" / "practice" / "hello").mkdir(parents=True)
    _assert_clean_failure(tmp_path, tmp_path / "checkout", "unknown language 'kotlin'")


def test_unknown_language_option_fails_cleanly(tmp_path):
    one_exercise_checkout(tmp_path / "checkout")
    _assert_clean_failure(tmp_path, tmp_path / "checkout", "unknown language 'kotlin'", extra_args=("--languages", "python,kotlin"))


def test_cpp_cmakelists_without_name_line_fails_cleanly(tmp_path):
    exercise = one_exercise_checkout(tmp_path / "checkout", "cpp", "two-fer")
    (exercise / "CMakeLists.txt").write_text("project(two-fer CXX)\n")
    _assert_clean_failure(tmp_path, tmp_path / "checkout", "cpp/exercises/practice/two-fer", "CMakeLists.txt", "get_filename_component")


def test_first_bad_exercise_is_named_and_others_counted(tmp_path):
    for slug in ("alpha", "beta", "gamma"):
        exercise = one_exercise_checkout(tmp_path / "checkout", "python", slug)
        if slug != "alpha":
            (exercise / ".meta" / "config.json").unlink()
    _assert_clean_failure(tmp_path, tmp_path / "checkout", "python/exercises/practice/beta", "and 1 more")


def test_foreign_output_directory_is_not_replaced(tmp_path):
    one_exercise_checkout(tmp_path / "checkout")
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work\n")
    result = run_cli("--benchmark_dir", str(tmp_path / "checkout"), "--output_dir", str(precious), "--fast", cwd=tmp_path)
    assert result.returncode != 0
    assert "refusing to replace" in result.stderr and len(result.stderr.splitlines()) == 1
    assert (precious / "thesis.tex").read_text() == "years of work\n"


def test_unreachable_benchmark_url_is_one_clear_line(tmp_path):
    env = {**isolated_git_env(tmp_path / "home"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    url = (tmp_path / "no-such-repo").as_uri()
    result = run_cli("--benchmark_url", url, "--output_dir", str(tmp_path / "out"), "--fast", cwd=tmp_path, env=env)
    assert result.returncode != 0
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and f"cannot clone {url}" in lines[0] and "--benchmark_dir" in lines[0]
    assert not (tmp_path / "out").exists()
    assert [p for p in (tmp_path / "cache" / "polyglot-harness" / "benchmarks").iterdir()] == []


def test_instance_ids_prepare_only_those_instances(tmp_path):
    prepare_dataset(SAMPLES_DIR, tmp_path / "out", instance_ids=["rust__checked-sum", "java__vowel-count"], record_expected=False)
    assert sorted(instance.instance_id for instance in load_dataset(tmp_path / "out")) == [
        "java__vowel-count", "rust__checked-sum"]


def test_unknown_instance_id_fails_cleanly(tmp_path):
    one_exercise_checkout(tmp_path / "checkout")
    _assert_clean_failure(tmp_path, tmp_path / "checkout", "no exercise for python__nope",
                          extra_args=("--instance_ids", "python__two-fer,python__nope"))


# --- what grading needs, recorded by default (issue 33) ------------------------------------

SPEC = """import { Robot } from './robot';

describe('Robot', () => {
  test('has a name', () => {});
  xtest('is un-skipped by grading', () => {});
  // test.skip('a comment is no test', () => {});
  test.skip('all the names can be generated', () => {}, 20 * 1000);
  describe.skip('slow', () => {
    it('every name', () => {});
  });
});
test.skip(`top level`, () => {});
"""


def test_jest_skips_upstream_intends_are_known_from_the_spec_alone():
    from polyglot_harness.utils.languages import get_language

    skipped = get_language("javascript").skipped_by_source({"robot.spec.js": SPEC, "robot.js": "test.skip('x', f)"})
    assert skipped == ("robot.spec.js::Robot all the names can be generated", "robot.spec.js::Robot slow every name",
                       "robot.spec.js::top level")


def test_a_fast_dataset_knows_robot_names_intended_skip_and_names_the_checks_off(benchmark_checkout, tmp_path, capsys):
    from polyglot_harness.utils.run.plan import HarnessError, check_recorded

    prepare_dataset(benchmark_checkout, tmp_path / "out", instance_ids=["javascript__robot-name", "go__counter"],
                    record_expected=False)
    robot, counter = sorted(load_dataset(tmp_path / "out"), key=lambda instance: instance.language, reverse=True)
    # The name the reference run records (a recorded dataset holds exactly this one).
    assert robot.expected_skips == ("robot-name.spec.js::Robot all the names can be generated",)
    assert robot.checks_off == ("expected_tests", "canaries") and counter.checks_off == (), "build-only: none apply"
    capsys.readouterr()
    check_recorded([robot, counter], tmp_path / "out", strict=False)
    warning = capsys.readouterr().err.strip().splitlines()
    assert len(warning) == 1 and "expected_tests (1 of 2 instances), canaries (1 of 2 instances)" in warning[0]
    assert "without --fast" in warning[0]
    with pytest.raises(HarnessError, match="^--strict: the dataset .* without reference runs"):
        check_recorded([robot], tmp_path / "out", strict=True)


def test_asking_variants_of_a_fast_dataset_names_them_among_the_checks_off(benchmark_checkout, tmp_path, capsys):
    """--variants on a dataset prepared with --fast: no variant was recorded, so the one warning
    line names them (the results' variants fields stay null), and --strict refuses."""
    from polyglot_harness.utils.run.plan import HarnessError, check_recorded

    prepare_dataset(benchmark_checkout, tmp_path / "out", instance_ids=["python__wordy", "go__counter"],
                    record_expected=False)
    wordy, counter = sorted(load_dataset(tmp_path / "out"), key=lambda instance: instance.language, reverse=True)
    assert wordy.variants_missing and not counter.variants_missing, "go__counter is build-only: it needs none"
    capsys.readouterr()
    check_recorded([wordy, counter], tmp_path / "out", strict=False)
    assert "variants (" not in capsys.readouterr().err, "a run that does not ask for variants does not miss them"
    check_recorded([wordy, counter], tmp_path / "out", strict=False, variants=True)
    warning = capsys.readouterr().err.strip().splitlines()
    assert len(warning) == 1 and "canaries (1 of 2 instances), variants (1 of 2 instances)" in warning[0]
    with pytest.raises(HarnessError, match="^--strict: .*variants"):
        check_recorded([wordy], tmp_path / "out", strict=True, variants=True)


def test_strict_refuses_a_fast_dataset_with_one_line_before_anything_starts(tmp_path):
    output = tmp_path / "out"
    assert run_cli("--benchmark_dir", str(SAMPLES_DIR), "--output_dir", str(output), "--fast",
                   "--instance_ids", "python__running-total", cwd=tmp_path).returncode == 0
    completed = subprocess.run([sys.executable, str(PROJECT_ROOT / "harness.py"), "--dataset", str(output), "--strict",
                                "--agent", "oracle", "--instance_ids", "python__running-total", "--output_dir",
                                str(tmp_path / "runs"), "--no_progress"], cwd=tmp_path, capture_output=True, text=True)
    assert completed.returncode == 2 and len(completed.stderr.strip().splitlines()) == 1, completed.stderr
    assert completed.stderr.startswith("error: --strict:") and "canaries" in completed.stderr


def test_the_fast_option_says_what_it_costs_and_the_old_flag_says_it_is_the_default(tmp_path):
    help_text = " ".join(run_cli("--help", cwd=tmp_path).stdout.split())
    assert "--fast, --no_record" in help_text and "expected_tests" in help_text and "canaries" in help_text
    completed = run_cli("--benchmark_dir", str(SAMPLES_DIR), "--output_dir", str(tmp_path / "out"), "--fast",
                        "--record_expected_tests", cwd=tmp_path)
    assert completed.returncode == 1 and "contradict" in completed.stderr
    assert "--record_expected_tests is the default now" in completed.stderr


@pytest.mark.docker
def test_an_interrupted_preparation_resumes_where_it_stopped(docker_client, language_images, tmp_path):
    """Killed after its first reference run, the same command takes that run from the recordings
    and grades only the other; it says how long it will take and how far it is."""
    import signal

    home = tmp_path / "home"
    env = {**os.environ, "POLYGLOT_HARNESS_HOME": str(home)}
    command = [sys.executable, str(SCRIPT), "--benchmark_dir", str(SAMPLES_DIR), "--output_dir", str(tmp_path / "out"),
               "--instance_ids", "python__running-total,javascript__clamp-list", "--workers", "1"]
    process = subprocess.Popen(command, cwd=tmp_path, env=env, start_new_session=True, stdout=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 600
    while not list(home.glob("recordings/*/*.json")) and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGKILL)
    first = process.communicate()[0]
    assert "reference runs in Docker, 1 at a time, about" in first and len(list(home.glob("recordings/*/*.json"))) == 1
    assert not (tmp_path / "out").exists(), "nothing is moved into place before the end"
    resumed = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert "1 reference runs in Docker" in resumed.stdout and "1 taken from earlier recordings" in resumed.stdout
    assert "recorded 1/1 reference runs" in resumed.stdout
    assert all(entry["expected_tests"] and entry["canary_sources"] for entry in metadata(tmp_path / "out"))
    again = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert "all 2 taken from earlier recordings" in again.stdout, "a rerun with the same inputs grades nothing"
