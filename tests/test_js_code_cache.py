"""The JavaScript image's code cache (docker/javascript/code-cache, docs/ci-time.md): built by
the image's own code at image build, read-only at grading, never written by a grading, and
only ever used for the image's own modules (never an exercise's or a solution's file).

What could go wrong, as tests: the hook gains a way to write (a grading could then leave
compiled code for the next one, or for the other process); the cache directory stays writable
by the grading uids; the hook caches a file outside the image's own modules; a runner script
stops preloading it (a silent loss of the saving, not of safety: pinned so it is noticed).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from polyglot_harness.utils.pipeline.grading import grading_sandbox_spec
from polyglot_harness.utils.languages import LANGUAGES
from polyglot_harness.utils.seam.protocol import SOLUTION_UID, Limits

RECIPE = Path(__file__).resolve().parents[1] / "docker" / "javascript"
CACHE = "/opt/polyglot-js/code-cache"


def test_the_hook_never_writes_and_caches_only_the_images_own_modules():
    hook = (RECIPE / "code-cache" / "hook.js").read_text()
    assert re.findall(r"\bfs\.\w+", hook) == ["fs.readFileSync", "fs.readFileSync"]  # reads, nothing else
    assert "createCachedData" not in hook and "child_process" not in hook
    roots = re.search(r"const ROOTS = \[(.*?)\];", hook).group(1)
    assert re.findall(r"'([^']*)'", roots) == ["/opt/polyglot-js/node_modules/", "/opt/polyglot-js/polyglot-bridge/"]
    # The recording half is a separate file only the image build preloads.
    assert "createCachedData" in (RECIPE / "code-cache" / "build.js").read_text()


def test_both_grading_processes_preload_the_hook_and_the_build_leaves_the_cache_read_only():
    hook = f"--require={CACHE}/hook.js"
    assert hook in (RECIPE / "polyglot-js-test").read_text()
    solver = (RECIPE / "polyglot-js-solver").read_text()
    assert "exec polyglot-noexec node " in solver and f" {hook} " in solver
    dockerfile = (RECIPE / "Dockerfile").read_text()
    step = dockerfile[dockerfile.index("sh code-cache/fill.sh"):]
    assert "chown -R root:root code-cache && chmod -R a-w,a+rX code-cache" in step.split("\n\n")[0]


@pytest.mark.docker
def test_in_the_image_no_grading_uid_can_write_the_cache(sandboxes, language_images, no_leftover_containers):
    box = sandboxes.start(grading_sandbox_spec(language_images["javascript"], Limits(), LANGUAGES["javascript"]),
                          "js-code-cache")
    with box:
        listing = box.exec(f"find {CACHE} ! -user root -o -perm /222 | head -5; ls {CACHE}/v8 | wc -l", 60, workdir="/")
        assert listing.exit_code == 0, listing.output
        lines = listing.output.split()
        assert lines and int(lines[-1]) > 500 and len(lines) == 1, listing.output  # nothing writable, a cache
        for uid in (None, SOLUTION_UID):
            probe = box.exec(f"touch {CACHE}/v8/x || touch {CACHE}/x || mkdir {CACHE}/v8/d; echo $?", 60, uid=uid,
                             workdir="/")
            assert probe.output.strip().splitlines()[-1] == "1", (uid, probe.output)  # all three refused
