"""The shared C++ compiler cache: warmed by trusted code only, read-only to code under test."""

from __future__ import annotations

import pytest

from polyglot_harness.utils.pipeline.build_cache import cache_volume, ensure_warm, warm_key
from polyglot_harness.utils.pipeline.grading import grading_sandbox_spec
from polyglot_harness.utils.records.instance_repo import checkout_commit
from polyglot_harness.utils.languages import LANGUAGES
from polyglot_harness.utils.seam.protocol import Limits
from polyglot_harness.utils.pipeline.pools import Sandboxes

pytestmark = pytest.mark.docker
CPP = LANGUAGES["cpp"]


def test_warm_key_ignores_the_exercise_name_but_not_the_test_support(tmp_path):
    for name in ("a", "b"):
        (tmp_path / name / "test").mkdir(parents=True)
        (tmp_path / name / "test" / "tests-main.cpp").write_text("#define CATCH_CONFIG_MAIN\n")
        (tmp_path / name / "CMakeLists.txt").write_text(f"set(exercise {name})\nadd_executable(x y)\n")
    assert warm_key(CPP, tmp_path / "a") == warm_key(CPP, tmp_path / "b")
    (tmp_path / "b" / "test" / "tests-main.cpp").write_text("#define CATCH_CONFIG_RUNNER\n")
    assert warm_key(CPP, tmp_path / "a") != warm_key(CPP, tmp_path / "b")


def test_code_under_test_cannot_write_the_shared_cache(provider, language_images, sample_instances, tmp_path,
                                                      no_leftover_containers):
    instance = sample_instances["cpp__digit-sum"]
    tree = tmp_path / "tree"
    checkout_commit(instance.grading_repo_dir, instance.test_commit, tree)
    image = language_images["cpp"]
    sandboxes = Sandboxes(provider, "pytest-cache")
    ensure_warm(sandboxes, CPP, image, tree, instance.instance_id, Limits(), log=lambda m: None)
    with sandboxes.start(grading_sandbox_spec(image, Limits(), CPP), instance.instance_id) as box:
        marker = box.exec(f"ls {CPP.build_cache.mount_path}/polyglot-warmed/{warm_key(CPP, tree)}", 30, workdir="/")
        write = box.exec(f"touch {CPP.build_cache.mount_path}/planted", 30, workdir="/")
        environment = box.exec("echo $CCACHE_READONLY", 30, workdir="/")
    assert marker.exit_code == 0, "the warm-up on the pristine tree left its marker"
    assert write.exit_code != 0 and "Read-only file system" in write.output
    assert environment.output.strip() == "1"
    assert cache_volume(CPP, image).startswith("polyglot-harness-cache-cpp-")
