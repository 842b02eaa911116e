"""No header of a patch is obeyed on the host: only content is applied (issue 31, red team 1).

The red team's winning channel after links were refused: git's `copy from`/`rename from`
headers. The filter decided by the `diff --git a/X b/X` names, the parser kept the copy lines
as opaque header text and wrote them back out, and `git apply` then copied ANY host file (git
does not check a copy's source: `../../..`, an absolute path, a C-quoted octal path, CRLF) over
a kept solution file: the dataset's reference (resolved in python, go, javascript, rust), a
host secret (into the grading log), the hidden test file into a solution module (python, the
trusted process notwithstanding), the hidden Go case table renamed into the package, a host
file into an agent image (lineage patches), or into a later try's starting tree. Now every
patch applied on the host is re-rendered by `patches.plain_diff` (each file's own ---/+++ and
hunks, nothing else) and the filter names copy/rename entries `copied_or_renamed_file`.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import shutil
from pathlib import Path

import pytest

from polyglot_harness.utils.judging.patches import apply_patch, copied_or_renamed_entries, filter_patch, plain_diff
from polyglot_harness.utils.judging.regular_files import irregular_patch_entries
from polyglot_harness.utils.languages import LANGUAGES
from polyglot_harness.utils.pipeline.agent_phase import TryStart, _starting_tree
from polyglot_harness.utils.pipeline.expected_tests import patch_writing
from polyglot_harness.utils.records.dataset import load_dataset
from polyglot_harness.utils.agents.prepare import prepare_agent

from .conftest import PROJECT_ROOT

MARKER = "HOST_SECRET_" + secrets.token_hex(8)


def _octal(path: str) -> str:
    return '"' + "".join(f"\\{ord(char):03o}" if char in "./" else char for char in path) + '"'


def copy_over(solution: str, source: str, spelling: str = "relative") -> str:
    """The red team's patch: a solution file's entry whose headers copy `source` over it."""
    named = {"relative": "../" * 12 + source.lstrip("/"), "absolute": source, "octal": _octal("../" * 12 + source.lstrip("/"))}[spelling]
    return (f"diff --git a/{solution} b/{solution}\nrename from {solution}\nrename to old_stub.txt\n"
            f"diff --git a/{solution} b/{solution}\ncopy from {named}\ncopy to {solution}\n")


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text(f"{MARKER}\n")
    return path


def _holding(root: Path, marker: str) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and marker.encode() in p.read_bytes())


@pytest.mark.parametrize("spelling", ["relative", "absolute", "octal", "crlf"])
def test_a_copy_header_copies_nothing_from_the_host(spelling: str, secret: Path, tmp_path: Path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "two_fer.py").write_text("def two_fer(name='you'):\n    pass\n")
    patch = copy_over("two_fer.py", str(secret), "relative" if spelling == "crlf" else spelling)
    if spelling == "crlf":
        patch = patch.replace("\n", "\r\n")
    filtered = filter_patch(patch, LANGUAGES["python"], ("two_fer.py",))
    assert filtered.kept_paths == () and "copy" not in filtered.text
    assert {record.why for record in filtered.tamper} == {"copied_or_renamed_file"}
    assert apply_patch(tree, patch) == "empty"  # the raw patch, as a later try's start applies it
    assert _holding(tree, MARKER) == [] and sorted(p.name for p in tree.iterdir()) == ["two_fer.py"]


def test_headers_are_named_with_tabs_too():
    assert copied_or_renamed_entries("diff --git a/x.py b/x.py\ncopy\tfrom\t/etc/passwd\ncopy to x.py\n") == ("x.py",)
    assert irregular_patch_entries("diff --git a/x.py b/x.py\nnew file mode\t120000\n") == ("x.py (symlink, git mode 120000)",)


def test_plain_diff_keeps_content_and_nothing_else():
    from unidiff import PatchSet

    patch = ("diff --git a/a.py b/a.py\nold mode 100644\nnew mode 100755\nindex 1..2 100755\n--- a/a.py\n+++ b/a.py\n"
             "@@ -1 +1 @@\n-x = 1\n+x = 2\n"
             "diff --git a/new.py b/new.py\nnew file mode 100644\n--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+y = 1\n"
             "\\ No newline at end of file\n"
             "diff --git a/c.py b/d.py\ncopy from c.py\ncopy to d.py\n--- a/c.py\n+++ b/d.py\n@@ -1 +1 @@\n-c\n+d\n")
    text = plain_diff(PatchSet(patch))
    assert text == ("--- a/a.py\n+++ b/a.py\n@@ -1,1 +1,1 @@\n-x = 1\n+x = 2\n"
                    "--- /dev/null\n+++ b/new.py\n@@ -0,0 +1,1 @@\n+y = 1\n\\ No newline at end of file\n")


def test_a_later_try_starts_from_content_only(secret: Path, tmp_path: Path):
    """Red team a8: the previous try's patch (empty_patch after filtering) still copied the
    reference and a host file into the next try's /testbed."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "two_fer.py").write_text("def two_fer(name='you'):\n    pass\n")
    instance = type("BaseRepoOnly", (), {"agent_repo_dir": repo})()  # all _starting_tree reads
    start = TryStart(2, copy_over("notes.txt", str(secret)) + copy_over("two_fer.py", str(secret), "absolute"), "fb")
    with _starting_tree(instance, start, log=lambda message: None) as tree:  # type: ignore[arg-type]
        assert _holding(tree.repo, MARKER) == [] and sorted(p.name for p in tree.repo.iterdir()) == ["two_fer.py"]


def test_a_lineage_copy_header_never_puts_a_host_file_into_the_agent(secret: Path, tmp_path: Path):
    agent = tmp_path / "agent"
    shutil.copytree(PROJECT_ROOT / "agent", agent, ignore=shutil.ignore_patterns("__pycache__"))
    patch = tmp_path / "gen_1.diff"
    patch.write_text(f"diff --git a/agent/stolen.txt b/agent/stolen.txt\ncopy from agent/{'../' * 12}{str(secret).lstrip('/')}\n"
                     "copy to agent/stolen.txt\n"
                     "diff --git a/agent/llm.py b/agent/llm.py\n--- a/agent/llm.py\n+++ b/agent/llm.py\n"
                     + _append_line_hunk(agent / "llm.py", "# generation 1"))
    before = hashlib.sha256(patch.read_bytes()).hexdigest()
    prepared = prepare_agent(str(agent), [patch], tmp_path / "work")
    assert prepared.tree is not None and _holding(prepared.tree, MARKER) == []
    assert not (prepared.tree / "stolen.txt").exists() and "# generation 1" in (prepared.tree / "llm.py").read_text()
    assert any("copy/rename header" in warning for warning in prepared.warnings), prepared.warnings
    assert hashlib.sha256(patch.read_bytes()).hexdigest() == before


def _append_line_hunk(path: Path, line: str) -> str:
    lines = path.read_text().splitlines()
    count = len(lines)
    return f"@@ -{count},1 +{count},2 @@\n {lines[-1]}\n+{line}\n"


# --- through the real harness, on real instances -------------------------------------------------

@pytest.mark.docker
def test_copying_the_reference_or_the_tests_by_header_resolves_nothing(tmp_path: Path, real_dataset: Path,
                                                                       secret: Path, language_images,
                                                                       no_leftover_containers):
    """Red team a2 (python, go, javascript, rust __bowling: the reference copied over the
    solution, resolved), a5 (python: the hidden test file copied into a solution module),
    a7 (go: the hidden case table renamed into the package) and a1 (a host secret into the
    grading log). Control: the same solution files written as content resolve."""
    from polyglot_harness.utils.run import harness

    instances = {instance.instance_id: instance for instance in load_dataset(real_dataset)}
    solution = {"python__bowling": "bowling.py", "go__bowling": "bowling.go", "javascript__bowling": "bowling.js",
                "rust__bowling": "src/lib.rs"}
    lines = []
    for instance_id, path in solution.items():
        reference = real_dataset / "references" / instance_id / path
        lines.append({"instance_id": instance_id, "model_patch": copy_over(path, str(reference))})
    lines.append({"instance_id": "python__bowling", "model_patch": copy_over("bowling.py", str(secret))})
    lines.append({"instance_id": "python__bowling", "model_patch": (
        "diff --git a/bowling.py b/bowling.py\ncopy from bowling_test.py\ncopy to bowling_cases.py\n"
        "diff --git a/bowling.py b/bowling.py\n--- a/bowling.py\n+++ b/bowling.py\n"
        + _append_line_hunk(instances["python__bowling"].agent_repo_dir / "bowling.py", "from bowling_cases import *"))})
    lines.append({"instance_id": "go__bowling", "model_patch": (
        "diff --git a/bowling.go b/bowling.go\nrename from cases_test.go\nrename to cases_table.go\n")})
    for number, line in enumerate(lines):
        predictions = tmp_path / f"p{number}.jsonl"
        predictions.write_text(json.dumps({**line, "model_name_or_path": f"h{number}"}) + "\n")
        outcome = harness(dataset=real_dataset, predictions=predictions, output_dir=tmp_path / "runs",
                          model_name_or_path=f"h{number}", progress=False)
        result = outcome.results[line["instance_id"]]
        assert result.eval_result != "resolved", (number, line["instance_id"], result.reason)
        assert any(record.why == "copied_or_renamed_file" for record in result.tamper), (number, result.tamper)
    assert _holding(tmp_path / "runs", MARKER) == [], "the host secret reached the run's files"
    control = tmp_path / "control.jsonl"
    reference = (real_dataset / "references" / "python__bowling" / "bowling.py").read_bytes()
    control.write_text(json.dumps({"instance_id": "python__bowling", "model_name_or_path": "control",
                                   "model_patch": patch_writing(instances["python__bowling"],
                                                                {"bowling.py": reference})}) + "\n")
    outcome = harness(dataset=real_dataset, predictions=control, output_dir=tmp_path / "runs",
                      model_name_or_path="control", progress=False)
    assert str(outcome.results["python__bowling"].reason) == "tests_passed"


# --- fidelity: content only loses nothing a reference needs ----------------------------------------

def test_every_reference_applies_as_content_only_byte_for_byte(benchmark_checkout: Path, tmp_path: Path):
    """Every one of the 225 reference solutions, as the diff an agent would produce, filtered
    and applied the way grading applies it (plain_diff): the kept files hold exactly the
    reference's bytes. (No Docker: the grading of the same trees is the real-benchmark gate.)"""
    from polyglot_harness.utils.pipeline.expected_tests import reference_patch
    from polyglot_harness.utils.prepare.dataset import prepare_dataset
    from polyglot_harness.utils.records.instance_repo import checkout_commit

    dataset = tmp_path / "dataset"
    prepare_dataset(benchmark_checkout, dataset, log=lambda message: None, record_expected=False)
    differing = {}
    instances = load_dataset(dataset)
    for instance in instances:
        patch = reference_patch(instance)
        filtered = filter_patch(patch, instance.language_spec, instance.solution_paths, instance.hidden_paths)
        tree = tmp_path / "trees" / instance.instance_id
        checkout_commit(instance.grading_repo_dir, instance.test_commit, tree)
        apply_patch(tree, filtered.text)
        wrong = [path for path in filtered.kept_paths
                 if (tree / path).read_bytes() != (instance.reference_dir / path).read_bytes()]
        if wrong or not filtered.kept_paths:
            differing[instance.instance_id] = wrong or "nothing kept"
    assert len(instances) == 225 and differing == {}
