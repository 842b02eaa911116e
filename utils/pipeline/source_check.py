"""The source policy at grading: the kept files read against the exercise's own allowances.

Runs on the host, after the patch is applied and the language guard ran, before any
container: a refusal is the verdict (`forbidden_construct`) and nothing of the patch runs.
The allowances come from the exercise itself (utils/judging/source_policy.py): the stub and
the hidden tests as the test-commit tree holds them, and the reference solution from the
dataset's references/ directory when the instance has one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from ..judging.regular_files import is_regular, read_regular, regular_files
from ..judging.source_policy import ExerciseSources, Violation, refusals
from ..languages import LanguageSpec


def refused_constructs(language: LanguageSpec, tree: Path, test_tree: Path, reference_dir: Path | None,
                       kept_paths: Iterable[str], solution_paths: Iterable[str],
                       hidden_paths: Iterable[str]) -> tuple[Violation, ...]:
    """What the language's policy refuses in the kept files of `tree` (the patched tree)."""
    policy = language.source_policy
    if policy is None:
        return ()
    kept = _texts(tree, (path for path in kept_paths if policy.reads(path)))
    if not kept:
        return ()
    reference = {} if reference_dir is None or not reference_dir.is_dir() else _texts(
        reference_dir, regular_files(reference_dir))
    sources = ExerciseSources(_texts(test_tree, solution_paths), _texts(test_tree, hidden_paths), reference)
    return refusals(policy, kept, sources)


def _texts(root: Path, paths: Iterable[str]) -> dict[str, str]:
    """The regular files among `paths` under `root`, read through no link."""
    return {path: read_regular(root, path).decode("utf-8", errors="replace")
            for path in paths if is_regular(root, path)}
