"""The run directory has one owner (utils/records/run_dir.py): every file name of a run comes
from it, the names are HyperAgents' and never change, and run_settings.json written by older
versions is still read as before. Pure, no Docker."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

from polyglot_harness.utils.records.run_dir import (InstanceFiles, OutputDirectory, RunDirectory, RunSettings,
                                                    is_plain_file_name, transcript_name, try_files)

PROJECT_ROOT = Path(__file__).resolve().parent.parent
OWNER = PROJECT_ROOT / "utils" / "records" / "run_dir.py"

# A run's file names in string literals: `{}` stands for any f-string field.
PLAIN_NAMES = re.compile(r"run_settings\.json|^report\.(json|html)$|_docker\.log|_eval\.(md|sh)|\.0\.json|^_0$|\*\.json")
TEMPLATE_NAMES = re.compile(r"\{\}(\.json|\.md|_docker\.log|_eval\.(md|sh)|\.try\{\}|_0|_0\.0\.json)")


# Literals that spell the same shapes for files that are not a run's: (module, literal).
NOT_RUN_FILES = {("utils/records/dataset.py", "'*.json'"),      # subsets/<name>.json
                 ("utils/records/dataset.py", "f'{}.json'")}


def _template(node: ast.JoinedStr) -> str:
    return "".join(part.value if isinstance(part, ast.Constant) else "{}" for part in node.values)


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring nodes (their text documents the layout; it builds no path)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def run_file_names_built(path: Path) -> list[str]:
    """Each string literal of `path` (as `line: literal`) that spells a run-directory file name."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings, hits = _docstrings(tree), []  # (line, literal)
    inside_fstrings = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values}
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr) and TEMPLATE_NAMES.search(_template(node)):
            hits.append((node.lineno, f"f{_template(node)!r}"))
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
              and id(node) not in inside_fstrings and PLAIN_NAMES.search(node.value)):
            hits.append((node.lineno, repr(node.value[:60])))
    module = str(path.relative_to(PROJECT_ROOT))
    return [f"{line}: {literal}" for line, literal in sorted(hits) if (module, literal) not in NOT_RUN_FILES]


def test_no_module_but_the_run_directory_owner_builds_a_run_file_name():
    offenders = {str(path.relative_to(PROJECT_ROOT)): hits for path in sorted((PROJECT_ROOT / "utils").rglob("*.py"))
                 if path != OWNER and (hits := run_file_names_built(path))}
    assert offenders == {}


def test_the_owner_itself_is_found_by_the_check():
    """The check above can fail: the owner spells every name it looks for."""
    hits = "\n".join(run_file_names_built(OWNER))
    for name in ("run_settings.json", "_docker.log", "_eval.md", "_eval.sh", ".try", ".json", ".md"):
        assert name in hits, name


def test_file_names_are_the_ones_hyperagents_reads(tmp_path: Path):
    run = RunDirectory.of(tmp_path, "gen_3")
    files = run.instance("go__bob")
    assert run.path == tmp_path / "gen_3_0"
    assert run.report_path == tmp_path / "gen_3_0.0.json"
    assert run.settings_path == tmp_path / "gen_3_0" / "run_settings.json"
    assert [path.name for path in (files.result, files.transcript, files.log, files.eval_script, files.eval_output)] == [
        "go__bob.json", "go__bob.md", "go__bob_docker.log", "go__bob_eval.sh", "go__bob_eval.md"]
    assert files.feedback(2).name == "go__bob.try2_feedback.md"
    assert try_files("go__bob", 1, last=False) == try_files("go__bob", 1, last=False).__class__(
        "go__bob.try1.md", "go__bob.try1_eval.md", "go__bob.try1_eval.sh", "go__bob.try1_feedback.md")
    assert transcript_name("go__bob") == "go__bob.md"
    output = OutputDirectory(tmp_path)
    assert (output.report_json, output.report_html, output.run("gen_3")) == (
        tmp_path / "report.json", tmp_path / "report.html", run)


def test_keeping_a_try_moves_its_plain_files_to_try_names_and_skips_missing_ones(tmp_path: Path):
    files = InstanceFiles(tmp_path, "go__bob")
    files.transcript.write_text("chat 1")
    files.eval_script.write_text("script 1")
    files.keep_try(1)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["go__bob.try1.md", "go__bob.try1_eval.sh"]
    assert (tmp_path / "go__bob.try1.md").read_text() == "chat 1"


@pytest.mark.parametrize("name, plain", [("go__bob.try1.md", True), ("../secret.md", False), ("/etc/hostname", False),
                                         ("..", False), ("", False), ("a/b.md", False)])
def test_only_plain_names_inside_the_run_directory_are_followed(name: str, plain: bool):
    assert is_plain_file_name(name) is plain
    assert (InstanceFiles(Path("run_0"), "x").named(name) is not None) is plain


# --- run_settings.json ---------------------------------------------------------------------------

KEY = RunSettings("oracle", "oracle", "fb9641f0267f61c7", {"test_timeout": 120, "agent_timeout": 600, "model": None,
                                                          "tries": 1, "attempts": 1})


def write_settings(tmp_path: Path, text: str) -> RunDirectory:
    run = RunDirectory(tmp_path / "run_0")
    run.path.mkdir(exist_ok=True)
    run.settings_path.write_text(text)
    return run


def test_settings_written_by_this_version_read_back_equal(tmp_path: Path):
    run = RunDirectory(tmp_path / "run_0")
    run.write_settings(KEY)
    assert json.loads(run.settings_path.read_text()) == {
        "agent": "oracle", "agent_hash": "oracle", "dataset_hash": "fb9641f0267f61c7", "test_timeout": 120,
        "agent_timeout": 600, "model": None, "tries": 1, "attempts": 1}
    assert run.read_settings() == KEY and KEY.differing(run.read_settings()) == []


def test_settings_from_before_tries_existed_read_as_one_try(tmp_path: Path):
    older = {key: value for key, value in KEY.to_json().items() if key != "tries"}
    saved = write_settings(tmp_path, json.dumps(older)).read_settings()
    assert saved.tries == 1 and KEY.differing(saved) == []
    assert RunSettings.from_json(older | {"tries": 2}).differing(saved) == ["tries"]


def test_a_settings_file_lacking_a_field_differs_in_that_field_and_has_no_dataset_hash(tmp_path: Path):
    saved = write_settings(tmp_path, '{"agent": "oracle"}').read_settings()
    assert saved.known_dataset_hash is None
    assert KEY.differing(saved) == ["agent_hash", "agent_timeout", "dataset_hash", "test_timeout"]


@pytest.mark.parametrize("text", ["[not an object]", "[1, 2]", '"a string"'])
def test_an_unreadable_settings_file_differs_in_every_field(tmp_path: Path, text: str):
    saved = write_settings(tmp_path, text).read_settings()
    assert saved is not None and not saved.readable and saved.tries == 1 and saved.known_dataset_hash is None
    assert len(KEY.differing(saved)) == len(KEY.to_json())


def test_a_field_of_the_wrong_type_differs_even_from_its_default(tmp_path: Path):
    saved = write_settings(tmp_path, json.dumps(KEY.to_json() | {"tries": "1"})).read_settings()
    assert (saved.tries, KEY.differing(saved)) == (1, ["tries"])


def test_no_settings_file_reads_as_none(tmp_path: Path):
    assert RunDirectory(tmp_path / "missing_0").read_settings() is None


def test_attempt_files_are_the_plain_names_for_attempt_1_and_the_same_names_in_attempt_k(tmp_path: Path):
    run = RunDirectory(tmp_path / "run_0")
    assert run.attempt("go__a", 1) == run.instance("go__a")
    assert run.attempt("go__a", 3).result == tmp_path / "run_0" / "attempt3" / "go__a.json"
    assert run.attempt("go__a", 3).transcript == tmp_path / "run_0" / "attempt3" / "go__a.md"
    (tmp_path / "run_0" / "attempt3").mkdir(parents=True)
    run.attempt("go__a", 3).result.write_text("{}")
    assert run.result_paths() == [] and OutputDirectory(tmp_path).result_paths() == [], \
        "readers of the run's results never count an attempt's own file as the instance's"


def test_raising_attempts_resumes_and_any_other_change_of_them_does_not(tmp_path: Path):
    saved = RunSettings.from_json(KEY.to_json() | {"attempts": 2})
    more = RunSettings(KEY.agent, KEY.agent_hash, KEY.dataset_hash, {**KEY.settings, "attempts": 3})
    fewer = RunSettings(KEY.agent, KEY.agent_hash, KEY.dataset_hash, {**KEY.settings, "attempts": 1})
    assert more.differing(saved) == ["attempts"] and more.resume_conflicts(saved) == []
    assert fewer.resume_conflicts(saved) == ["attempts"]
    older = RunSettings.from_json({key: value for key, value in KEY.to_json().items() if key != "attempts"})
    assert older.attempts == 1 and more.resume_conflicts(older) == [] and KEY.differing(older) == []
