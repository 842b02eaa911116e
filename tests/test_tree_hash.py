"""utils/tree_hash.py: the one tree hash behind image tags, the agent's hash and build-cache keys. No Docker."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from polyglot_harness.utils.pipeline.build_cache import warm_key
from polyglot_harness.utils.backends.docker.images import recipe_hash
from polyglot_harness.utils.languages import LANGUAGES
from polyglot_harness.utils.seam.tree_hash import tree_hash

CPP = LANGUAGES["cpp"]


def write_recipe(root: Path) -> Path:
    (root / "sub").mkdir(parents=True)
    (root / "Dockerfile").write_bytes(b"ARG BASE\nFROM ${BASE}\nCOPY run.sh /\n")
    (root / "run.sh").write_bytes(b"#!/bin/sh\necho hi\n")
    os.chmod(root / "run.sh", 0o755)
    (root / "sub" / "b.txt").write_bytes(b"b\n")
    return root


def test_image_tags_keep_the_hash_they_had_before_the_shared_helper(tmp_path):
    # Pinned from the recipe_hash that predates utils/tree_hash.py: a change here rebuilds
    # every image of every user once.
    recipe = write_recipe(tmp_path / "recipe")
    assert recipe_hash(recipe, "sha256:parent", {"ca-bundle.pem": b"PEM\n"}) == "73fc1313aa51c2e6"


def test_tree_hash_depends_on_content_paths_and_executable_bits_not_location(tmp_path):
    first = write_recipe(tmp_path / "a")
    second = shutil.copytree(first, tmp_path / "elsewhere" / "b")
    assert tree_hash(first) == tree_hash(second)
    (second / "sub" / "b.txt").write_bytes(b"B\n")
    assert tree_hash(first) != tree_hash(second)
    (second / "sub" / "b.txt").write_bytes(b"b\n")
    os.chmod(second / "run.sh", 0o644)
    assert tree_hash(first) != tree_hash(second)
    os.chmod(second / "run.sh", 0o755)
    (second / "sub" / "b.txt").rename(second / "b.txt")
    assert tree_hash(first) != tree_hash(second)


def test_tree_hash_ignores_excluded_files_and_empty_directories(tmp_path):
    tree = write_recipe(tmp_path / "tree")
    before = tree_hash(tree, include=lambda relative: not relative.startswith("sub/"))
    (tree / "sub" / "c.txt").write_bytes(b"c\n")
    (tree / "empty").mkdir()
    assert tree_hash(tree, include=lambda relative: not relative.startswith("sub/")) == before
    assert tree_hash(tree) != tree_hash(tree, include=lambda relative: not relative.startswith("sub/"))


def test_tree_hash_hashes_the_content_as_rewritten(tmp_path):
    tree = write_recipe(tmp_path / "tree")
    shouting = tree_hash(tree, content=lambda relative, content: content.upper())
    assert shouting != tree_hash(tree)
    (tree / "sub" / "b.txt").write_bytes(b"B\n")
    assert tree_hash(tree, content=lambda relative, content: content.upper()) == shouting


def write_cpp_test_tree(root: Path, slug: str, catch_main: str = "#define CATCH_CONFIG_MAIN\n") -> Path:
    (root / "test").mkdir(parents=True)
    (root / "test" / "tests-main.cpp").write_text(catch_main)
    (root / "CMakeLists.txt").write_text(f"set(exercise {slug})\nadd_executable(x y)\n")
    (root / f"{slug.replace('-', '_')}.cpp").write_text(f"// {slug}\n")
    return root


def test_warm_key_ignores_the_exercise_name_and_solution_but_not_the_test_support(tmp_path):
    first = write_cpp_test_tree(tmp_path / "a", "two-fer")
    second = write_cpp_test_tree(tmp_path / "b", "leap")
    assert warm_key(CPP, first) == warm_key(CPP, second)
    (second / "test" / "tests-main.cpp").write_text("#define CATCH_CONFIG_RUNNER\n")
    assert warm_key(CPP, first) != warm_key(CPP, second)
