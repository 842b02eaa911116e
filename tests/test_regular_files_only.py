"""A patch carries regular files only, and nothing on the host follows a link (issue 31).

The attack that won before: a patch adds `leak_ref.py` (or `.js`, or a C++ header) as a
symlink (git mode 120000) to the dataset's reference solution or to any host file; `git apply`
made it, and the host code that copied the solution files for the solution process copied
through it, so the reference (or the host file's secret line) reached the solution process and
the grading log. Now: any such entry makes the instance `not_a_regular_file` before anything is
applied, read or run; every host reader of a patched tree refuses a link; the sandbox is checked
to hold regular files and directories only. Each attack has a control: the same files with the
link replaced by a regular file behave as before.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from polyglot_harness.utils.judging.canaries import test_files as canary_test_files
from polyglot_harness.utils.judging.patches import filter_patch, guard_applied_files
from polyglot_harness.utils.judging.regular_files import (NotARegularFile, irregular_entries, irregular_patch_entries,
                                                          read_regular, regular_files)
from polyglot_harness.utils.languages import LANGUAGES, matches_any
from polyglot_harness.utils.pipeline.grading import unskip_tree
from polyglot_harness.utils.pipeline.source_check import refused_constructs
from polyglot_harness.utils.records.dataset import load_dataset
from polyglot_harness.utils.agents.prepare import prepare_agent
from polyglot_harness.utils.seam.transfer import tar_directory

from .conftest import PROJECT_ROOT

SECRET = "HOST_SECRET_" + secrets.token_hex(8)


def _git(cwd: Path, *args: str) -> str:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "GIT_CEILING_DIRECTORIES": str(cwd.parent),
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", *args], cwd=cwd, check=True, env=env, capture_output=True, text=True).stdout


def diff_with_links(base: Path, files: dict[str, str], links: dict[str, str]) -> str:
    """The git diff of writing `files` and making `links` (path -> target) over a copy of `base`."""
    with tempfile.TemporaryDirectory() as workdir:
        tree = Path(workdir) / "tree"
        shutil.copytree(base, tree, ignore=shutil.ignore_patterns(".git"))
        _git(tree, "init", "-q")
        _git(tree, "add", "-A")
        _git(tree, "commit", "-qm", "base")
        for path, text in files.items():
            (tree / path).write_text(text)
        for path, target in links.items():
            (tree / path).unlink(missing_ok=True)
            os.symlink(target, tree / path)
        _git(tree, "add", "-A")
        return _git(tree, "diff", "--cached", "--binary")


# --- the patch's own headers ------------------------------------------------------------------

SYMLINK_DIFF = """diff --git a/leak.py b/leak.py
new file mode 120000
index 0000000..3594e94
--- /dev/null
+++ b/leak.py
@@ -0,0 +1 @@
+/etc/passwd
\\ No newline at end of file
"""
SUBMODULE_DIFF = """diff --git a/vendor b/vendor
new file mode 160000
index 0000000..1234567
--- /dev/null
+++ b/vendor
@@ -0,0 +1 @@
+Subproject commit 1234567890123456789012345678901234567890
"""
TYPE_CHANGE_DIFF = """diff --git a/two_fer.py b/two_fer.py
old mode 100644
new mode 120000
"""
REGULAR_DIFF = """diff --git a/helper.py b/helper.py
new file mode 100755
index 0000000..3594e94
--- /dev/null
+++ b/helper.py
@@ -0,0 +3 @@
+new file mode 120000
+ new mode 120000
+x = 1
"""


@pytest.mark.parametrize("diff, expected", [
    (SYMLINK_DIFF, ("leak.py (symlink, git mode 120000)",)),
    (SUBMODULE_DIFF, ("vendor (submodule, git mode 160000)",)),
    (TYPE_CHANGE_DIFF, ("two_fer.py (symlink, git mode 120000)",)),
    (REGULAR_DIFF, ()),
    (SYMLINK_DIFF.replace("\n", "\r\n"), ("leak.py (symlink, git mode 120000)",)),
], ids=["symlink", "submodule", "type_change", "regular_with_lookalike_lines", "crlf"])
def test_every_entry_that_is_not_a_regular_file_is_named(diff: str, expected: tuple[str, ...]):
    assert irregular_patch_entries(diff) == expected


def test_a_link_makes_the_filtered_patch_not_regular_whatever_its_name():
    python = LANGUAGES["python"]
    for path in ("two_fer.py", "helper.py", "two_fer_test.py"):  # a solution file, a new source, a test
        diff = SYMLINK_DIFF.replace("leak.py", path)
        filtered = filter_patch(diff, python, ("two_fer.py",), ("two_fer_test.py",))
        assert filtered.not_regular == (f"{path} (symlink, git mode 120000)",), path


# --- every host reader of a patched tree, each with a link to a file outside it ---------------

@pytest.fixture
def linked_tree(tmp_path: Path) -> Path:
    """A python exercise tree whose solution file and a test file are links to a secret outside it."""
    secret = tmp_path / "secret.txt"
    secret.write_text(f"{SECRET} = 1\n")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "two_fer_test.py").symlink_to(secret)
    (tree / "two_fer.py").symlink_to(secret)
    (tree / "pkg").symlink_to(tmp_path, target_is_directory=True)
    (tree / "ok.py").write_text("x = 1\n")
    return tree


def test_the_tree_walk_names_links_and_never_enters_them(linked_tree: Path):
    assert irregular_entries(linked_tree) == ("pkg (symlink)", "two_fer.py (symlink)", "two_fer_test.py (symlink)")
    with pytest.raises(NotARegularFile):
        regular_files(linked_tree)


def test_read_regular_refuses_a_link_and_a_path_through_one(linked_tree: Path):
    with pytest.raises(NotARegularFile):
        read_regular(linked_tree, "two_fer.py")
    with pytest.raises(NotARegularFile):
        read_regular(linked_tree, "pkg/secret.txt")
    assert read_regular(linked_tree, "ok.py") == b"x = 1\n"


def test_the_guard_reads_no_link(linked_tree: Path, tmp_path: Path):
    seen: list[bytes] = []

    class Rules:
        def guard(self, path: str, content: bytes):
            seen.append(content)
            return None

    guard_applied_files(linked_tree, tmp_path, Rules(), ("two_fer.py", "pkg/secret.txt", "ok.py"))
    assert seen == [b"x = 1\n"]


def test_the_source_policy_reads_no_link(linked_tree: Path, tmp_path: Path):
    python = LANGUAGES["python"]
    # A link the policy would resolve to a refused construct (os.system) is not read at all.
    (tmp_path / "secret.txt").write_text("import os\nos.system('id')\n")
    assert refused_constructs(python, linked_tree, linked_tree, None, ("two_fer.py",), ("two_fer.py",), ()) == ()


def test_the_canary_planter_and_unskip_refuse_a_link(linked_tree: Path):
    with pytest.raises(NotARegularFile):
        canary_test_files(linked_tree, LANGUAGES["python"].canaries, matches_any)
    with pytest.raises(NotARegularFile):
        unskip_tree(linked_tree, LANGUAGES["javascript"])


def test_nothing_but_regular_files_and_directories_is_tarred_into_a_sandbox(linked_tree: Path):
    with pytest.raises(NotARegularFile):
        tar_directory(linked_tree, "testbed")


# --- lineage patches and agent copies ----------------------------------------------------------

def test_a_lineage_patch_link_never_puts_a_host_file_into_the_agent(tmp_path: Path):
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    agent = tmp_path / "agent"
    shutil.copytree(PROJECT_ROOT / "agent", agent, ignore=shutil.ignore_patterns("__pycache__"))
    (agent / "linked_notes.txt").symlink_to(secret)  # a link already in the agent directory
    patch = tmp_path / "gen_1.diff"
    patch.write_text(diff_with_links(PROJECT_ROOT / "agent", {"llm.py": (PROJECT_ROOT / "agent" / "llm.py").read_text()
                                                             + "\n# generation 1\n"}, {"notes.md": str(secret)}))
    before = hashlib.sha256(patch.read_bytes()).hexdigest()
    prepared = prepare_agent(str(agent), [patch], tmp_path / "work")
    assert prepared.tree is not None and irregular_entries(prepared.tree) == ()
    assert "# generation 1" in (prepared.tree / "llm.py").read_text(), "the regular part of the patch applies"
    assert not (prepared.tree / "notes.md").exists() and not (prepared.tree / "linked_notes.txt").exists()
    assert not any(SECRET.encode() in path.read_bytes() for path in prepared.tree.rglob("*") if path.is_file())
    assert any("notes.md (symlink" in warning for warning in prepared.warnings), prepared.warnings
    assert any("linked_notes.txt" in warning for warning in prepared.warnings), prepared.warnings
    assert hashlib.sha256(patch.read_bytes()).hexdigest() == before, "the input patch is only read"


# --- through the real harness, on real instances -------------------------------------------------

ATTACKS = {
    # instance: (solution path, its text re-exporting the link, the link's name)
    "python__bowling": ("bowling.py", "from leak_ref import *  # noqa\n", "leak_ref.py"),
    "javascript__bowling": ("bowling.js", "export * from './leak_ref.js';\n", "leak_ref.js"),
}


def _reference_path(dataset: Path, instance_id: str, solution: str) -> Path:
    return dataset / "references" / instance_id / solution


def _predictions(tmp_path: Path, dataset: Path, name: str, as_link: bool) -> Path:
    instances = {instance.instance_id: instance for instance in load_dataset(dataset)}
    lines = []
    for instance_id, (solution, stub, link_name) in ATTACKS.items():
        reference = _reference_path(dataset, instance_id, solution)
        if as_link:
            diff = diff_with_links(instances[instance_id].agent_repo_dir, {solution: stub}, {link_name: str(reference)})
        else:  # the control: the same files, the link's content as a regular file
            diff = diff_with_links(instances[instance_id].agent_repo_dir,
                                   {solution: stub, link_name: reference.read_text()}, {})
        lines.append(json.dumps({"instance_id": instance_id, "model_name_or_path": name, "model_patch": diff}))
    secret_diff = diff_with_links(instances["python__bowling"].agent_repo_dir,
                                  {"bowling.py": "from host_secret import *  # noqa\n"},
                                  {"host_secret.py": str(tmp_path / "secret.py")})
    if as_link:
        lines.append(json.dumps({"instance_id": "python__bowling", "model_name_or_path": name,
                                 "model_patch": secret_diff}))
    path = tmp_path / f"{name}.jsonl"
    path.write_text("\n".join(lines[:2]) + "\n")
    if as_link:
        (tmp_path / f"{name}-secret.jsonl").write_text(lines[2] + "\n")
    return path


@pytest.mark.docker
def test_a_linked_reference_or_host_file_is_not_a_regular_file_and_never_leaves_the_host(
        tmp_path: Path, real_dataset: Path, language_images, no_leftover_containers):
    from polyglot_harness.utils.run import harness

    (tmp_path / "secret.py").write_text(f"{SECRET}\n")
    predictions = _predictions(tmp_path, real_dataset, "linked", as_link=True)
    inputs = {path: path.read_bytes() for path in tmp_path.glob("*.jsonl")}
    for name, path in (("linked", predictions), ("secret", tmp_path / "linked-secret.jsonl")):
        outcome = harness(dataset=real_dataset, predictions=path, output_dir=tmp_path / "runs",
                          model_name_or_path=name, progress=False, max_workers=2)
        for instance_id, result in outcome.results.items():
            assert (str(result.eval_result), str(result.reason)) == ("unresolved", "not_a_regular_file"), instance_id
            assert "symlink, git mode 120000" in result.detail
    leaked = [str(path) for path in (tmp_path / "runs").rglob("*")
              if path.is_file() and SECRET.encode() in path.read_bytes()]
    assert leaked == [], f"the host secret reached {leaked}"
    logs = "".join(path.read_text(errors="replace") for path in (tmp_path / "runs").rglob("*_docker.log"))
    assert "grading " not in logs, "no grading sandbox is started for a patch holding a link"
    assert {path: path.read_bytes() for path in tmp_path.glob("*.jsonl")} == inputs, "inputs are only read"


@pytest.mark.docker
def test_control_the_same_files_as_regular_files_resolve(tmp_path: Path, real_dataset: Path, language_images,
                                                         no_leftover_containers):
    from polyglot_harness.utils.run import harness

    predictions = _predictions(tmp_path, real_dataset, "copied", as_link=False)
    outcome = harness(dataset=real_dataset, predictions=predictions, output_dir=tmp_path / "runs",
                      model_name_or_path="copied", progress=False, max_workers=2)
    assert {instance_id: str(result.reason) for instance_id, result in outcome.results.items()} == {
        instance_id: "tests_passed" for instance_id in ATTACKS}


@pytest.mark.docker
def test_the_sandbox_is_checked_to_hold_regular_files_only(sandboxes, language_images, tmp_path: Path):
    from polyglot_harness.utils.pipeline.grading import TESTBED, irregular_in_sandbox
    from polyglot_harness.utils.seam.protocol import Limits, SandboxSpec

    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "a.py").write_text("x = 1\n")
    with sandboxes.start(SandboxSpec(image=language_images["python"], role="grading", network="none",
                                     limits=Limits()), "python__probe") as box:
        box.put_directory(tmp_path / "tree", TESTBED)
        assert irregular_in_sandbox(box) == ()
        box.exec(f"ln -s /etc/passwd {TESTBED}/b.py && mkfifo {TESTBED}/pipe", 30)
        assert sorted(irregular_in_sandbox(box)) == [f"{TESTBED}/b.py (in the sandbox)",
                                                     f"{TESTBED}/pipe (in the sandbox)"]
